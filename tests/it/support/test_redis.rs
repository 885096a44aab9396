//! A real `redis-server` (or a cluster of them) for the fleet tests, on free loopback ports,
//! stopped on drop.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One `redis-server` process the test owns.
pub struct TestRedis {
    port: u16,
    child: Option<Child>,
    paused: bool,
    /// Arguments added to every start of this server (`--maxmemory` and the like).
    extra: Vec<String>,
}

/// `None` (after saying why) when `redis-server` is not installed; under `CI=true` that fails.
pub fn start() -> Option<TestRedis> {
    start_with(&[])
}

/// Runs `test` with the URL of a Redis of its own, stopped after; skipped as [`start`] says.
pub async fn on_a_redis<T: Future<Output = ()>>(test: impl FnOnce(String) -> T) {
    if let Some(redis) = start() {
        test(redis.url()).await;
    }
}

/// Runs `test` with the seed list of a cluster of its own, stopped after; skipped as
/// [`start_cluster`] says.
pub async fn on_a_cluster<T: Future<Output = ()>>(test: impl FnOnce(String) -> T) {
    if let Some(cluster) = start_cluster() {
        test(cluster.url()).await;
    }
}

/// [`start`] with `extra` arguments for `redis-server` (kept for restarts).
pub fn start_with(extra: &[&str]) -> Option<TestRedis> {
    if !installed("redis-server", "redis-server", "the fleet tests") {
        return None;
    }
    for _ in 0..10 {
        let port = free_port();
        let mut redis = TestRedis {
            port,
            child: None,
            paused: false,
            extra: extra.iter().map(|a| (*a).to_owned()).collect(),
        };
        if redis.spawn() {
            return Some(redis);
        }
    }
    panic!("could not start redis-server on a free port");
}

/// Whether `tool` runs; when it does not, says so (naming the Debian `packages`) and, under
/// `CI=true`, fails: CI must run `tests`.
pub fn installed(tool: &str, packages: &str, tests: &str) -> bool {
    if Command::new(tool).arg("--version").output().is_ok() {
        return true;
    }
    let why = format!("{tool} is not installed (Debian packages {packages})");
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{why}; CI must run {tests}");
    }
    eprintln!("skipped: {why}");
    false
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

    /// The port this server listens on (127.0.0.1).
    #[allow(dead_code)] // the integration tests put a relay in front of it
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A plain connection for the test's own inspection.
    pub async fn raw(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.url())
            .expect("client")
            .get_multiplexed_async_connection()
            .await
            .expect("raw connection")
    }

    /// The keys matching `pattern` (`KEYS`).
    pub async fn keys(&self, pattern: &str) -> Vec<String> {
        redis::cmd("KEYS")
            .arg(pattern)
            .query_async(&mut self.raw().await)
            .await
            .expect("KEYS")
    }

    /// Every key matching `pattern`: its name, its remaining life in ms (`PTTL`: -1 without
    /// an expiry, -2 when it went meanwhile) and its value as `DUMP` gives it.
    pub async fn every_key(&self, pattern: &str) -> Vec<(String, i64, Vec<u8>)> {
        let mut conn = self.raw().await;
        let mut out = Vec::new();
        for key in self.keys(pattern).await {
            let ttl: i64 = redis::cmd("PTTL")
                .arg(&key)
                .query_async(&mut conn)
                .await
                .expect("PTTL");
            let value: Vec<u8> = redis::cmd("DUMP")
                .arg(&key)
                .query_async(&mut conn)
                .await
                .unwrap_or_default();
            out.push((key, ttl, value));
        }
        out
    }

    fn spawn(&mut self) -> bool {
        self.child = start_server(self.port, &self.extra);
        self.child.is_some()
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

/// A `redis-server` on 127.0.0.1:`port` that keeps nothing on disk, with `extra` arguments,
/// once it answers (see [`answering`]).
fn start_server(port: u16, extra: &[impl AsRef<std::ffi::OsStr>]) -> Option<Child> {
    let child = Command::new("redis-server")
        .args(["--port", &port.to_string()])
        .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn redis-server");
    answering(child, port)
}

/// `child` once it answers PING on `port` (within 5 s), or `None` when it exited first (a
/// port was taken after all: the caller tries others) or never answered (then it is killed).
fn answering(mut child: Child, port: u16) -> Option<Child> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        if let Ok(Some(_)) = child.try_wait() {
            return None;
        }
        if ping(port) {
            return Some(child);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn ping(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
    let mut buf = [0u8; 16];
    // A server started with `--requirepass` answers, refusing: it is up all the same.
    s.write_all(b"PING\r\n").is_ok()
        && s.read(&mut buf)
            .is_ok_and(|n| buf[..n].starts_with(b"+PONG") || buf[..n].starts_with(b"-NOAUTH"))
}

/// A 3-node Redis Cluster (three masters, no replicas) on free loopback ports, in its own
/// temporary directory; every node is stopped and the directory removed on drop.
pub struct TestCluster {
    dir: std::path::PathBuf,
    nodes: Vec<ClusterNode>,
}

struct ClusterNode {
    port: u16,
    /// The cluster bus port, also chosen by the OS (not the default `port + 10000`).
    bus_port: u16,
    child: Option<Child>,
}

/// How many nodes [`start_cluster`] starts.
pub const CLUSTER_NODES: usize = 3;

/// A running, joined cluster, or `None` (after saying why) without `redis-server` and
/// `redis-cli`; under `CI=true` that fails.
pub fn start_cluster() -> Option<TestCluster> {
    for tool in ["redis-server", "redis-cli"] {
        if !installed(tool, "redis-server, redis-tools", "the fleet cluster tests") {
            return None;
        }
    }
    let mut cluster = TestCluster {
        dir: temp_dir(),
        nodes: Vec::new(),
    };
    for _ in 0..CLUSTER_NODES {
        let node = (0..10)
            .find_map(|_| {
                let mut node = ClusterNode {
                    port: free_port(),
                    bus_port: free_port(),
                    child: None,
                };
                (node.port != node.bus_port && node.spawn(&cluster.dir)).then_some(node)
            })
            .expect("could not start a cluster node on free ports");
        cluster.nodes.push(node);
    }
    let out = Command::new("redis-cli")
        .arg("--cluster")
        .arg("create")
        .args(
            cluster
                .nodes
                .iter()
                .map(|n| format!("127.0.0.1:{}", n.port)),
        )
        .args(["--cluster-replicas", "0", "--cluster-yes"])
        .stdin(Stdio::null())
        .output()
        .expect("run redis-cli --cluster create");
    assert!(
        out.status.success(),
        "redis-cli --cluster create failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    cluster.wait_ok();
    Some(cluster)
}

impl TestCluster {
    /// Runs `change` (a restart, a resumption: they wait for the cluster, blocking) off the
    /// test's runtime, so that what runs on it (replicas, their load) keeps running; then
    /// hands the cluster back.
    pub async fn off_runtime(mut self, change: impl FnOnce(&mut Self) + Send + 'static) -> Self {
        tokio::task::spawn_blocking(move || {
            change(&mut self);
            self
        })
        .await
        .expect("no panic")
    }

    /// The seed list, as `redis.url` takes it: every node, comma-separated.
    pub fn url(&self) -> String {
        self.nodes
            .iter()
            .map(|n| format!("redis://127.0.0.1:{}/", n.port))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Every key matching `pattern` on each node (index = node), with its remaining life in
    /// ms (`PTTL`), asked of the node that holds it; a node that is down holds nothing.
    pub fn keys_on_nodes(&self, pattern: &str) -> Vec<Vec<(String, i64)>> {
        self.nodes
            .iter()
            .map(|n| {
                let Some(mut conn) = node_conn(n.port) else {
                    return Vec::new();
                };
                let keys: Vec<String> = redis::cmd("KEYS")
                    .arg(pattern)
                    .query(&mut conn)
                    .unwrap_or_default();
                keys.into_iter()
                    .map(|k| {
                        let ttl = redis::cmd("PTTL").arg(&k).query(&mut conn).unwrap_or(-3);
                        (k, ttl)
                    })
                    .collect()
            })
            .collect()
    }

    /// The hash slot of `key`, as the cluster computes it (`CLUSTER KEYSLOT`).
    pub fn keyslot(&self, key: &str) -> u16 {
        self.nodes
            .iter()
            .find_map(|n| {
                redis::cmd("CLUSTER")
                    .arg("KEYSLOT")
                    .arg(key)
                    .query(&mut node_conn(n.port)?)
                    .ok()
            })
            .expect("a node answers CLUSTER KEYSLOT")
    }

    /// Kills node `i` (SIGKILL), as a crash would; its slots are unreachable until
    /// [`TestCluster::restart_node`].
    pub fn kill_node(&mut self, i: usize) {
        self.nodes[i].kill();
    }

    /// Starts node `i` again, empty (no persistence), on its ports and with its cluster config
    /// file, so it rejoins as the same node with the same slots; returns once every node says
    /// `cluster_state:ok`.
    pub fn restart_node(&mut self, i: usize) {
        self.respawn(i);
        self.wait_ok();
    }

    /// SIGSTOP node `i`: it keeps its sockets but answers nothing, as a hung host would.
    pub fn pause_node(&mut self, i: usize) {
        if let Some(child) = &self.nodes[i].child {
            signal(child, "-STOP");
        }
    }

    /// SIGCONT after [`TestCluster::pause_node`]; returns once every node says
    /// `cluster_state:ok` again.
    pub fn resume_node(&mut self, i: usize) {
        if let Some(child) = &self.nodes[i].child {
            signal(child, "-CONT");
        }
        self.wait_ok();
    }

    /// Kills every node: the whole cluster is down.
    pub fn kill_all(&mut self) {
        for node in &mut self.nodes {
            node.kill();
        }
    }

    /// Starts every node again (empty, same ports and cluster config files) and waits until
    /// every node says `cluster_state:ok`.
    pub fn restart_all(&mut self) {
        for i in 0..self.nodes.len() {
            self.respawn(i);
        }
        self.wait_ok();
    }

    fn respawn(&mut self, i: usize) {
        self.nodes[i].kill();
        let started = Instant::now();
        while !self.nodes[i].spawn(&self.dir) {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "could not restart cluster node on port {}",
                self.nodes[i].port
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits (at most 20 s) until every node reports `cluster_state:ok` and knows all nodes.
    fn wait_ok(&self) {
        let started = Instant::now();
        loop {
            let ok = self.nodes.iter().all(|n| {
                cluster_info(n.port).is_some_and(|info| {
                    info.contains("cluster_state:ok")
                        && info.contains(&format!("cluster_known_nodes:{}", self.nodes.len()))
                })
            });
            if ok {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the cluster did not reach cluster_state:ok: {:?}",
                self.nodes
                    .iter()
                    .map(|n| cluster_info(n.port))
                    .collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.kill();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl ClusterNode {
    fn spawn(&mut self, dir: &std::path::Path) -> bool {
        let config = dir.join(format!("nodes-{}.conf", self.port));
        let (config, dir) = (config.display().to_string(), dir.display().to_string());
        let bus_port = self.bus_port.to_string();
        let cluster = [
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            &config,
            "--cluster-port",
            &bus_port,
            "--cluster-node-timeout",
            "1000",
            "--dir",
            &dir,
        ];
        self.child = start_server(self.port, &cluster);
        self.child.is_some()
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `CLUSTER INFO` of the node on `port`, or `None` if it does not answer.
fn cluster_info(port: u16) -> Option<String> {
    redis::cmd("CLUSTER")
        .arg("INFO")
        .query(&mut node_conn(port)?)
        .ok()
}

/// A plain connection to the one node on `port` (no redirections), or `None` if it is down.
fn node_conn(port: u16) -> Option<redis::Connection> {
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).ok()?;
    let conn = client
        .get_connection_with_timeout(Duration::from_millis(500))
        .ok()?;
    conn.set_read_timeout(Some(Duration::from_millis(500)))
        .ok()?;
    Some(conn)
}

/// A new, empty directory of this process's own under the system's temporary directory.
fn temp_dir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    loop {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "profile-lookup-cluster-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => return dir,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => panic!("create {}: {e}", dir.display()),
        }
    }
}
