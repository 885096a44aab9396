//! A real `redis-server` for the fleet tests, on a free loopback port, stopped on drop.
//!
//! Self-contained (std and the `redis` crate only) so that the integration tests include this
//! same file (`#[path]`) instead of keeping a second copy.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One `redis-server` process the test owns.
pub struct TestRedis {
    port: u16,
    child: Option<Child>,
    paused: bool,
}

/// `None` (after saying why) when `redis-server` is not installed; under `CI=true` that fails.
pub fn start() -> Option<TestRedis> {
    if Command::new("redis-server")
        .arg("--version")
        .output()
        .is_err()
    {
        let why = "redis-server is not installed (Debian package redis-server)";
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{why}; CI must run the fleet tests");
        }
        eprintln!("skipped: {why}");
        return None;
    }
    for _ in 0..10 {
        let port = free_port();
        let mut redis = TestRedis {
            port,
            child: None,
            paused: false,
        };
        if redis.spawn() {
            return Some(redis);
        }
    }
    panic!("could not start redis-server on a free port");
}

/// A port that was free a moment ago (another process may take it: callers retry).
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local addr").port()
}

impl TestRedis {
    /// The URL of this server.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// A plain connection for the test's own inspection.
    pub async fn raw(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.url())
            .expect("client")
            .get_multiplexed_async_connection()
            .await
            .expect("raw connection")
    }

    fn spawn(&mut self) -> bool {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server");
        self.child = Some(child);
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(5) {
            if let Some(Ok(Some(_))) = self.child.as_mut().map(Child::try_wait) {
                self.child = None;
                return false; // the port was taken after all
            }
            if ping(self.port) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        self.kill();
        false
    }

    /// Kills the process (SIGKILL), as a crash would.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            if self.paused {
                signal(&child, "-CONT");
                self.paused = false;
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts a new, empty server on the same port.
    pub fn restart(&mut self) {
        self.kill();
        let started = Instant::now();
        while !self.spawn() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "could not restart redis-server on port {}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// SIGSTOP: the server keeps its sockets but answers nothing.
    pub fn pause(&mut self) {
        if let Some(child) = &self.child {
            signal(child, "-STOP");
            self.paused = true;
        }
    }

    /// SIGCONT after [`TestRedis::pause`].
    pub fn resume(&mut self) {
        if let Some(child) = &self.child {
            signal(child, "-CONT");
            self.paused = false;
        }
    }
}

impl Drop for TestRedis {
    fn drop(&mut self) {
        self.kill();
    }
}

fn signal(child: &Child, sig: &str) {
    let status = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .expect("kill(1)");
    assert!(status.success(), "kill {sig} failed");
}

fn ping(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
    let mut buf = [0u8; 16];
    s.write_all(b"PING\r\n").is_ok()
        && s.read(&mut buf)
            .is_ok_and(|n| buf[..n].starts_with(b"+PONG"))
}
