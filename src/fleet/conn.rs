//! One connection type for a single Redis and for a Redis Cluster, both made lazily: building
//! the handle never waits for Redis, and each reconnects by itself.

use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::{ClusterClientBuilder, ClusterConfig};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};

use super::FleetError;
use crate::config::redis::{RedisTarget, redact};

/// A multiplexed connection to the fleet's Redis; cheap to clone.
#[derive(Clone)]
pub(crate) enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl Conn {
    /// Builds the connection without touching the network. Must run inside a Tokio runtime.
    /// `roots` (PEM) are the only roots a `rediss://` server's certificate is checked against;
    /// `None`: the system's.
    pub fn lazy(
        target: &RedisTarget,
        timeout: Duration,
        roots: Option<&[u8]>,
    ) -> Result<Self, FleetError> {
        let certs = || redis::TlsCertificates {
            client_tls: None,
            root_cert: roots.map(<[u8]>::to_vec),
        };
        match target {
            RedisTarget::Single(url) => {
                let client = if roots.is_some() && tls(url) {
                    redis::Client::build_with_tls(url.as_str(), certs())
                } else {
                    redis::Client::open(url.as_str())
                }
                .map_err(|e| FleetError::Config(format!("redis.url {:?}: {e}", redact(url))))?;
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(timeout))
                    .set_response_timeout(Some(timeout))
                    .set_number_of_retries(2)
                    .set_min_delay(Duration::from_millis(20))
                    .set_max_delay(Duration::from_millis(250));
                let manager = ConnectionManager::new_lazy_with_config(client, config)
                    .map_err(|e| FleetError::Config(format!("redis connection: {e}")))?;
                Ok(Self::Single(manager))
            }
            RedisTarget::Cluster(nodes) => {
                let mut builder =
                    ClusterClientBuilder::new(nodes.iter().map(String::as_str)).retries(1);
                if roots.is_some() && nodes.iter().any(|n| tls(n)) {
                    builder = builder.certs(certs());
                }
                let client = builder
                    .build()
                    .map_err(|e| FleetError::Config(format!("redis cluster: {e}")))?;
                let config = ClusterConfig::new()
                    .set_connection_timeout(timeout)
                    .set_response_timeout(timeout);
                Ok(Self::Cluster(
                    client.get_pending_async_connection_with_config(config),
                ))
            }
        }
    }
}

/// Whether `url` speaks TLS (`rediss://`): the only URLs that take roots.
fn tls(url: &str) -> bool {
    url.get(..9)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("rediss://"))
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Single(_) => "Conn::Single",
            Self::Cluster(_) => "Conn::Cluster",
        })
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Single(c) => c.req_packed_command(cmd),
            Self::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Self::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Single(c) => c.get_db(),
            Self::Cluster(c) => c.get_db(),
        }
    }
}
