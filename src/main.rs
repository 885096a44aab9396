//! The `profile-lookup` binary: `serve`, `demo` and `extract`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use profile_lookup::config::Settings;
use profile_lookup::{AppState, demo, platform, telemetry};

/// Public profiles of one user per request, from a short-video and a photo-share platform.
#[derive(Parser)]
#[command(name = "profile-lookup", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the service.
    Serve {
        /// A TOML config file (else $PROFILE_LOOKUP_CONFIG, else built-in defaults).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Run the service on loopback against a built-in sample upstream, with a printed demo key.
    Demo {
        /// Where the demo service listens (default: `server.listen`, 127.0.0.1:8080 unless
        /// PROFILE_LOOKUP__SERVER__LISTEN says otherwise). When another process holds that
        /// address, the demo takes a free port on the same host and says so.
        #[arg(long)]
        listen: Option<std::net::SocketAddr>,
    },
    /// Print the body the service would return for a saved upstream page or JSON response; for
    /// a folder (drift captures, saved pages), one line per file and a summary.
    Extract {
        /// Which platform the document comes from.
        platform: PlatformArg,
        /// The saved page or JSON, or a folder of them (`*.meta.json` sidecars are skipped).
        file: PathBuf,
        /// The username the document is for (default: taken from the document itself).
        #[arg(long)]
        username: Option<String>,
    },
    /// Exit 0 if a local instance answers `GET /healthz` with 200 (for container HEALTHCHECKs).
    Healthcheck {
        /// Where the instance listens (default: `server.listen` from the same config layers as
        /// `serve`; an unspecified address is probed on loopback).
        #[arg(long)]
        addr: Option<std::net::SocketAddr>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum PlatformArg {
    ShortVideo,
    PhotoShare,
}

/// mimalloc instead of the system allocator: a request allocates many small, short-lived
/// objects across threads, where glibc's malloc showed as the largest user-space cost under
/// load (see the README's performance notes).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve { config } => serve(config),
        Command::Demo { listen } => run_demo(listen),
        Command::Extract {
            platform,
            file,
            username,
        } => extract(platform, &file, username.as_deref()),
        Command::Healthcheck { addr } => healthcheck(addr),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("the tokio runtime starts")
}

fn serve(config: Option<PathBuf>) -> ExitCode {
    let settings =
        match Settings::load(config.as_deref()).and_then(|s| s.validate_for_serve().map(|()| s)) {
            Ok(settings) => settings,
            Err(err) => {
                eprintln!("profile-lookup: {err}");
                return ExitCode::from(2);
            }
        };
    telemetry::init_logging(&settings.log);
    runtime().block_on(async move {
        let listener = match tokio::net::TcpListener::bind(settings.server.listen).await {
            Ok(listener) => listener,
            Err(err) => {
                eprintln!(
                    "profile-lookup: {}",
                    cannot_listen(settings.server.listen, &err)
                );
                return ExitCode::from(2);
            }
        };
        let state = match AppState::new(settings) {
            Ok(state) => state,
            Err(err) => {
                eprintln!("profile-lookup: {err}");
                return ExitCode::from(2);
            }
        };
        tracing::info!(listen = %state.settings().server.listen, "serving");
        match profile_lookup::run(listener, state, profile_lookup::server::shutdown_signal()).await
        {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("profile-lookup: {err}");
                ExitCode::FAILURE
            }
        }
    })
}

/// What went wrong binding `addr`, and what the operator can do about it.
fn cannot_listen(addr: std::net::SocketAddr, err: &std::io::Error) -> String {
    use std::io::ErrorKind;
    const SETTING: &str = "server.listen / PROFILE_LOOKUP__SERVER__LISTEN";
    let (what, hint) = match err.kind() {
        ErrorKind::AddrInUse => (
            "address already in use".to_owned(),
            format!("another process holds it — stop it or set {SETTING}"),
        ),
        ErrorKind::PermissionDenied => (
            err.to_string(),
            format!("ports below 1024 need privileges — use a higher port in {SETTING}"),
        ),
        ErrorKind::AddrNotAvailable => (
            err.to_string(),
            format!("this machine has no such address — set {SETTING} to one of its own"),
        ),
        _ => (err.to_string(), format!("check {SETTING}")),
    };
    format!("cannot listen on {addr}: {what}; {hint}")
}

fn run_demo(listen: Option<std::net::SocketAddr>) -> ExitCode {
    let base = match Settings::load(None) {
        Ok(settings) => settings,
        Err(err) => {
            eprintln!("profile-lookup demo: {err}");
            return ExitCode::from(2);
        }
    };
    let listen = listen.unwrap_or(base.server.listen);
    runtime().block_on(async move {
        match demo::run(base, listen, profile_lookup::server::shutdown_signal()).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("profile-lookup demo: {err}");
                ExitCode::FAILURE
            }
        }
    })
}

fn extract(platform: PlatformArg, file: &std::path::Path, username: Option<&str>) -> ExitCode {
    if file.is_dir() {
        return extract_folder(platform.into(), file);
    }
    let bytes = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(err) => {
            eprintln!("profile-lookup: cannot read {}: {err}", file.display());
            return ExitCode::from(2);
        }
    };
    match profile_lookup::saved::extract(platform.into(), &bytes, username) {
        // Written with `writeln!` so a closed pipe (`| head`) is an exit, not a panic.
        Ok(body) => {
            use std::io::Write;
            let _ = writeln!(std::io::stdout().lock(), "{body}");
            ExitCode::SUCCESS
        }
        Err(problem) => {
            use std::io::Write;
            let _ = writeln!(std::io::stderr().lock(), "{problem}");
            ExitCode::FAILURE
        }
    }
}

/// A dependency-free probe: the runtime image has no curl. Without `--addr` it asks where
/// `serve` listens (config file, `PROFILE_LOOKUP__SERVER__LISTEN`), so an operator who moves
/// the port does not get an unhealthy container.
fn healthcheck(addr: Option<std::net::SocketAddr>) -> ExitCode {
    use std::io::{Read, Write};
    use std::time::Duration;
    let addr = match addr {
        Some(addr) => addr,
        None => match Settings::load(None) {
            Ok(settings) => settings.server.listen,
            Err(err) => {
                eprintln!("profile-lookup healthcheck: {err}");
                return ExitCode::from(2);
            }
        },
    };
    // `0.0.0.0` / `::` mean "every interface": probe the loopback one.
    let addr = match addr.ip() {
        std::net::IpAddr::V4(ip) if ip.is_unspecified() => {
            std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, addr.port()))
        }
        std::net::IpAddr::V6(ip) if ip.is_unspecified() => {
            std::net::SocketAddr::from((std::net::Ipv6Addr::LOCALHOST, addr.port()))
        }
        _ => addr,
    };
    let probe = || -> std::io::Result<bool> {
        let mut stream = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
        stream.set_read_timeout(Some(Duration::from_secs(2)))?;
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
        let mut head = [0u8; 12];
        stream.read_exact(&mut head)?;
        Ok(&head == b"HTTP/1.1 200")
    };
    match probe() {
        Ok(true) => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}

impl From<PlatformArg> for platform::Platform {
    fn from(arg: PlatformArg) -> Self {
        match arg {
            PlatformArg::ShortVideo => platform::Platform::ShortVideo,
            PlatformArg::PhotoShare => platform::Platform::PhotoShare,
        }
    }
}

/// Files in a folder that `extract` reads more than this many of get a progress bar, when
/// standard error is a terminal.
const PROGRESS_BAR_FROM: usize = 20;

/// `extract PLATFORM DIR`: every saved document in `dir` (sorted by name, sidecars skipped),
/// one line each, then a summary; exit 1 when any file gave no profile, 2 when the folder or a
/// file could not be read.
fn extract_folder(platform: platform::Platform, dir: &std::path::Path) -> ExitCode {
    use std::io::{IsTerminal, Write};
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_file() && !p.to_string_lossy().ends_with(".meta.json"))
            .collect(),
        Err(err) => {
            eprintln!(
                "profile-lookup: cannot read the folder {}: {err}",
                dir.display()
            );
            return ExitCode::from(2);
        }
    };
    files.sort();
    let bar = (files.len() > PROGRESS_BAR_FROM && std::io::stderr().is_terminal()).then(|| {
        indicatif::ProgressBar::new(files.len() as u64).with_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        )
    });
    let (mut readable, mut failed, mut unreadable) = (0usize, 0usize, 0usize);
    let mut out = std::io::stdout().lock();
    for path in &files {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let line = match std::fs::read(path) {
            Ok(bytes) => {
                let (ok, text) = profile_lookup::saved::summary(platform, &bytes);
                if ok {
                    readable += 1;
                } else {
                    failed += 1;
                }
                format!("{}\t{text}", name.escape_debug())
            }
            Err(err) => {
                unreadable += 1;
                format!("{}\tcannot read: {err}", name.escape_debug())
            }
        };
        match &bar {
            Some(bar) => {
                bar.suspend(|| writeln!(out, "{line}")).ok();
                bar.inc(1);
            }
            None => {
                if writeln!(out, "{line}").is_err() {
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let _ = writeln!(
        out,
        "{} files: {readable} with a profile, {failed} without, {unreadable} unreadable",
        files.len()
    );
    if unreadable > 0 {
        ExitCode::from(2)
    } else if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
