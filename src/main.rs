//! The `profile-lookup` binary: parses the command line and hands each subcommand to
//! [`profile_lookup::commands`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use profile_lookup::commands;
use profile_lookup::platform::Platform;

/// Public profiles of one user per request, from a short-video and a photo-share platform.
#[derive(Parser)]
#[command(name = "profile-lookup", version = profile_lookup::build_info::LONG_VERSION, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the service.
    ///
    /// Needs an API key: `auth.api_keys` or `auth.api_key_sha256` in the config file, or
    /// PROFILE_LOOKUP__AUTH__API_KEYS; every other setting has a default (config/default.toml).
    /// With `[redis] url` the replicas share their state; `redis.required` makes it a must.
    Serve {
        /// A TOML config file (else $PROFILE_LOOKUP_CONFIG, else built-in defaults).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Check a configuration as `serve` would (Redis included, unless --offline) and print
    /// it, secrets masked, with where each value that is not a default was set. Exit 0 when
    /// `serve` would start, 2 when it would refuse the settings, 1 when Redis cannot be
    /// reached.
    Check {
        /// A TOML config file (else $PROFILE_LOOKUP_CONFIG, else built-in defaults).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Do not ask Redis (no network at all).
        #[arg(long)]
        offline: bool,
    },
    /// Run the service on loopback against a built-in sample upstream, with a printed demo key.
    ///
    /// Needs nothing: no config file, no key, no network (the platforms are played by
    /// built-in stand-ins on loopback).
    Demo {
        /// Where the demo service listens (default: `server.listen`, 127.0.0.1:8080 unless
        /// PROFILE_LOOKUP__SERVER__LISTEN says otherwise). When another process holds that
        /// address, the demo takes a free port on the same host and says so.
        #[arg(long)]
        listen: Option<SocketAddr>,
        /// After this long (`30s`, `2m`, `500ms`), every sample upstream serves one of its
        /// sources in a moved shape, for as long again: watch `/status` turn it `changed`.
        #[arg(long, value_name = "DURATION", value_parser = commands::parse_duration)]
        drift_after: Option<Duration>,
    },
    /// Print the body the service would return for a saved upstream page or JSON response; for
    /// a folder (drift captures, saved pages), one line per file and a summary.
    ///
    /// Needs the platform and the document (`-`: standard input), nothing else: no config, no
    /// network. Whose document it is comes from --username, else its sidecar, else the
    /// document itself (its canonical link or og:url, or its state's own user); one that names
    /// nobody and holds several accounts is refused, never guessed. Exit 0: the body on stdout;
    /// 1: the problem document on stderr, its detail saying why; 2: a file cannot be read; 3:
    /// whose document it is cannot be told (give --username).
    Extract {
        /// Which platform the document comes from.
        platform: Platform,
        /// The saved page or JSON (`-`: read it from standard input), or a folder of them; each is read as its `NAME.meta.json`
        /// sidecar says, when it has one (its platform's and its user's; a folder's documents
        /// of other platforms are skipped and counted).
        file: PathBuf,
        /// The username the document is for (default: its sidecar's, else the one the document
        /// names as its own).
        #[arg(long)]
        username: Option<String>,
    },
    /// Run one canary round now: each `[canary]` account through each source of its platform.
    ///
    /// Needs `[canary]` accounts (short_video, photo_share lists, or
    /// PROFILE_LOOKUP__CANARY__SHORT_VIDEO=name,…) and the platforms reachable as `serve`
    /// reaches them (its proxies and Redis included). Exit 0 when every source is ok, 1 when
    /// any is changed, 2 when only blocks, unreachable or missing sources are left, 3 when the
    /// settings or the command line cannot be used.
    Canary {
        /// A TOML config file (else $PROFILE_LOOKUP_CONFIG, else built-in defaults).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Only this platform's accounts.
        #[arg(long)]
        platform: Option<Platform>,
        /// One JSON document on stdout instead of the table, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Probe a local instance's `GET /healthz` (for container HEALTHCHECKs).
    ///
    /// Needs a running instance (`serve` or `demo`) where the settings say it listens, or at
    /// --addr. Exit 0 when it answers 200; 1 otherwise, saying why on stderr (nothing listens,
    /// no answer in time, another status); 2 when the settings cannot be loaded.
    Healthcheck {
        /// Where the instance listens (default: `server.listen` from the same config layers as
        /// `serve`; an unspecified address is probed on loopback).
        #[arg(long)]
        addr: Option<SocketAddr>,
        /// A TOML config file to read `server.listen` from (else $PROFILE_LOOKUP_CONFIG, else
        /// built-in defaults), as `serve` reads it.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
}

/// mimalloc instead of the system allocator: a request allocates many small, short-lived
/// objects across threads, where glibc's malloc showed as the largest user-space cost under
/// load (see docs/performance.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return clap_said(&err),
    };
    match cli.command {
        Command::Serve { config } => commands::serve(config.as_deref()),
        Command::Check { config, offline } => commands::check(config.as_deref(), offline),
        Command::Demo {
            listen,
            drift_after,
        } => commands::demo(listen, drift_after),
        Command::Extract {
            platform,
            file,
            username,
        } => commands::extract(platform, &file, username.as_deref()),
        Command::Canary {
            config,
            platform,
            json,
        } => commands::canary(config.as_deref(), platform, json),
        Command::Healthcheck { addr, config } => commands::healthcheck(addr, config.as_deref()),
    }
}

/// clap's text, where clap would print it: `--help` and `--version` on stdout with exit 0, a
/// mistake on stderr with [`commands::USAGE_MISTAKE`] instead of clap's 2, which `canary` and
/// `extract` use for verdicts.
fn clap_said(err: &clap::Error) -> ExitCode {
    // Printed as clap's own `Error::exit` prints it; a closed pipe is no reason to panic.
    let _ = err.print();
    if err.use_stderr() {
        ExitCode::from(commands::USAGE_MISTAKE)
    } else {
        ExitCode::SUCCESS
    }
}
