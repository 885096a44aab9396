//! The binary cargo built for these tests, run as a process: a command run to its end, or
//! `demo` and `serve` started and asked over HTTP, then stopped with SIGTERM for what they
//! wrote. The suites of the CLI, start-up, logs and proxies' credentials share it.

use std::ffi::OsStr;
use std::io::BufRead;
use std::net::SocketAddr;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use profile_lookup::platform::Platform;

use super::answer::Answer;
use super::app::profile_path;

/// The `profile-lookup` binary.
pub const BIN: &str = env!("CARGO_BIN_EXE_profile-lookup");

/// How long a started process may take to say where it listens, or to answer there.
const START: Duration = Duration::from_secs(20);

/// `profile-lookup` with its arguments and environment, about to run.
pub struct Binary {
    command: Command,
    logs: bool,
    close_stdout_at_address: bool,
}

impl Binary {
    /// `profile-lookup ARGS`.
    pub fn new(args: &[&str]) -> Self {
        let mut command = Command::new(BIN);
        command.args(args);
        Self {
            command,
            logs: false,
            close_stdout_at_address: false,
        }
    }

    /// `profile-lookup demo --listen 127.0.0.1:0`.
    pub fn demo() -> Self {
        Self::new(&["demo", "--listen", "127.0.0.1:0"])
    }

    /// `profile-lookup serve --config FILE`.
    pub fn serve_with(config: &std::path::Path) -> Self {
        Self::new(&["serve", "--config"])
            .arg(config)
            .env_remove("RUST_LOG")
    }

    /// One more argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    /// Sets the environment variable `key`.
    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    /// Removes the environment variable `key`.
    pub fn env_remove(mut self, key: &str) -> Self {
        self.command.env_remove(key);
        self
    }

    /// Keeps what the process writes (its log on stderr, and stdout unless it is the demo's
    /// banner), for [`Running::stop`].
    pub fn logs(mut self) -> Self {
        self.logs = true;
        self
    }

    /// Closes the demo's stdout as soon as it printed its address, mid-banner.
    pub fn closing_stdout_at_address(mut self) -> Self {
        self.close_stdout_at_address = true;
        self
    }

    /// Runs the command to its end.
    pub fn output(mut self) -> Output {
        self.command.output().expect("the binary runs")
    }

    /// Runs the command, expecting it to end by itself within `limit`: what it wrote and how
    /// it exited, or `None` when it was still running then (it is killed).
    pub fn output_within(mut self, limit: Duration) -> Option<Output> {
        let mut child = self
            .command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let started = Instant::now();
        while child.try_wait().expect("the child's state").is_none() {
            if started.elapsed() >= limit {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(child.wait_with_output().expect("the child's output"))
    }

    fn spawn(mut self, banner: bool) -> Child {
        let piped = |yes| if yes { Stdio::piped() } else { Stdio::null() };
        self.command
            .stdout(piped(banner || self.logs))
            .stderr(piped(self.logs))
            .spawn()
            .expect("the binary starts")
    }

    /// Starts `demo` and reads its banner to its last line (`Ctrl-C …`); its stdout is read
    /// on in the background, so it stays open for the demo's whole life.
    #[track_caller]
    pub fn start_demo(self) -> Running {
        let close_early = self.close_stdout_at_address;
        let mut child = self.spawn(true);
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                let address = line.starts_with("Listening on ");
                let _ = tx.send(line);
                if address && close_early {
                    return; // the pipe closes with the reader
                }
            }
        });
        let mut banner = Vec::new();
        while let Ok(line) = rx.recv_timeout(START) {
            let last = line.starts_with("Ctrl-C") || (close_early && line.starts_with("Listening"));
            banner.push(line);
            if last {
                break;
            }
        }
        let text = banner.join("\n");
        let address = banner
            .iter()
            .find_map(|l| l.strip_prefix("Listening on "))
            .unwrap_or_else(|| panic!("the demo printed no address: {text}"));
        let base = address.split_whitespace().next().unwrap().to_owned();
        let key = address.rsplit(' ').next().unwrap().to_owned();
        Running::new(child, base, key, banner)
    }

    /// Starts `serve`, told to listen on `listen` and to accept `key`, and waits until its
    /// `/healthz` answers.
    #[track_caller]
    pub fn start_serving(self, listen: SocketAddr, key: &str) -> Running {
        let mut child = self.spawn(false);
        let started = Instant::now();
        while !healthz(listen) {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("serve exited with {status} before it answered");
            }
            assert!(started.elapsed() < START, "serve did not come up");
            std::thread::sleep(Duration::from_millis(50));
        }
        Running::new(
            child,
            format!("http://{listen}"),
            key.to_owned(),
            Vec::new(),
        )
    }
}

/// A `demo` or `serve` process the test started; killed on drop unless stopped.
pub struct Running {
    child: Option<Child>,
    /// Where it listens: `http://127.0.0.1:PORT`.
    pub base: String,
    /// The key it accepts.
    pub key: String,
    /// What the demo printed up to its banner's last line.
    pub banner: Vec<String>,
    client: reqwest::Client,
}

impl Running {
    fn new(child: Child, base: String, key: String, banner: Vec<String>) -> Self {
        Self {
            child: Some(child),
            base,
            key,
            banner,
            client: reqwest::Client::new(),
        }
    }

    /// `GET path` with the key it accepts, read whole.
    pub async fn get(&self, path: &str) -> Answer {
        self.get_as(path, Some(&self.key.clone()), &[]).await
    }

    /// Looks `name` up on `platform` with the key it accepts.
    pub async fn lookup(&self, platform: Platform, name: &str) -> Answer {
        self.get(&profile_path(platform, name)).await
    }

    /// `GET path` with no key, read whole.
    pub async fn get_anonymous(&self, path: &str) -> Answer {
        self.get_as(path, None, &[]).await
    }

    /// `GET path` with `key` (none when `None`) and `headers`, read whole.
    pub async fn get_as(&self, path: &str, key: Option<&str>, headers: &[(&str, &str)]) -> Answer {
        let mut request = self.client.get(format!("{}{path}", self.base));
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        Answer::read(request.send().await.expect("the process answers")).await
    }

    /// Whether the process still runs.
    pub fn is_running(&mut self) -> bool {
        let child = self.child.as_mut().expect("running");
        child.try_wait().expect("the child's state").is_none()
    }

    /// SIGTERM, then waits for the process: what it wrote, and how it exited. Off the test's
    /// runtime, so that upstreams it serves keep answering the process while it drains.
    pub async fn stop(mut self) -> Output {
        let child = self.child.take().expect("running");
        tokio::task::spawn_blocking(move || super::terminate(child))
            .await
            .expect("no panic")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Whether `GET /healthz` on `addr` answers 200 (a plain blocking exchange: no runtime needed).
pub fn healthz(addr: SocketAddr) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let mut head = [0u8; 16];
    s.write_all(request.as_bytes()).is_ok()
        && s.read(&mut head)
            .is_ok_and(|n| head[..n].starts_with(b"HTTP/1.1 200"))
}
