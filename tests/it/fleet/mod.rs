//! The fleet (`src/fleet`): replicas sharing state through a real Redis or Redis Cluster.

mod budget;
mod calls;
mod cluster;
mod credentials;
mod freshness;
mod gone;
mod known_ids;
mod memory;
mod quota_lease;
mod shared;
mod standing;
mod takeover;
mod tls;
mod upgrade;
