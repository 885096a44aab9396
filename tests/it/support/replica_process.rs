//! A replica that is a real process: `profile-lookup serve`, the binary cargo built for these
//! tests, on a free loopback port, configured through the environment. Killing it with SIGKILL
//! is a real crash (nothing runs after it), and SIGTERM runs the real drain: what a flight lock
//! must survive when its holder dies.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::KEY;
use super::binary::{BIN, healthz};
use super::test_redis::free_port;

/// One `serve` process the test owns; killed on drop.
pub struct ReplicaProcess {
    /// Where it listens.
    pub addr: SocketAddr,
    child: Option<Child>,
}

/// Starts `serve` with the test key, every platform at `upstream`, quick retries, no breaker
/// (as `support::settings`), the fleet's Redis at `redis_url` under the tests' prefix, then
/// `extra` (`PROFILE_LOOKUP__…` variables); returns once `/healthz` answers.
pub fn start(upstream: SocketAddr, redis_url: &str, extra: &[(&str, &str)]) -> ReplicaProcess {
    for _ in 0..10 {
        let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
        let base = format!("http://{upstream}");
        let mut command = Command::new(BIN);
        command
            .arg("serve")
            .env_remove("PROFILE_LOOKUP_CONFIG")
            .env("PROFILE_LOOKUP__SERVER__LISTEN", addr.to_string())
            .env("PROFILE_LOOKUP__AUTH__API_KEYS", KEY)
            .env("PROFILE_LOOKUP__LOG__LEVEL", "off")
            .env("PROFILE_LOOKUP__REDIS__URL", redis_url)
            .env("PROFILE_LOOKUP__REDIS__KEY_PREFIX", "it:")
            .env("PROFILE_LOOKUP__SHORT_VIDEO__BASE_URL", &base)
            .env("PROFILE_LOOKUP__PHOTO_SHARE__BASE_URL", &base)
            .env("PROFILE_LOOKUP__RATE_LIMIT__PER_KEY_PER_MINUTE", "10000")
            .env("PROFILE_LOOKUP__RATE_LIMIT__BURST", "10000")
            .env("PROFILE_LOOKUP__RETRY__BASE_DELAY_MS", "10")
            .env("PROFILE_LOOKUP__RETRY__MAX_DELAY_MS", "50")
            .env("PROFILE_LOOKUP__RETRY__MAX_TOTAL_MS", "2000")
            .env("PROFILE_LOOKUP__UPSTREAM__TIMEOUT_MS", "2000")
            .env("PROFILE_LOOKUP__BREAKER__FAILURE_THRESHOLD", "0")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (key, value) in extra {
            command.env(key, value);
        }
        let child = command.spawn().expect("spawn profile-lookup serve");
        let mut replica = ReplicaProcess {
            addr,
            child: Some(child),
        };
        if replica.answers_within(Duration::from_secs(10)) {
            return replica;
        }
        // The port was taken between the check and the bind: another one.
    }
    panic!("profile-lookup serve did not start on a free port");
}

impl ReplicaProcess {
    /// The URL of `path` on this replica.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// SIGKILL, as a crash or an OOM kill would: nothing of the process runs after it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGTERM: the process drains (`server.shutdown_grace_ms` at most) and exits.
    pub fn terminate(&self) {
        let child = self.child.as_ref().expect("running");
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("kill(1)");
        assert!(status.success(), "kill -TERM failed");
    }

    /// Waits (at most `limit`) for the process to exit; whether it did.
    pub fn exited_within(&mut self, limit: Duration) -> bool {
        let started = Instant::now();
        while started.elapsed() < limit {
            match self.child.as_mut().map(Child::try_wait) {
                Some(Ok(Some(_))) | None => {
                    self.child = None;
                    return true;
                }
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        false
    }

    fn answers_within(&mut self, limit: Duration) -> bool {
        let started = Instant::now();
        while started.elapsed() < limit {
            if let Some(Ok(Some(_))) = self.child.as_mut().map(Child::try_wait) {
                self.child = None;
                return false;
            }
            if healthz(self.addr) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(30));
        }
        self.kill();
        false
    }
}

impl Drop for ReplicaProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
