//! The platforms' stand-ins (the `stand-in` crate) started on loopback, one per registered
//! platform, each found by the platform's label.

use std::net::SocketAddr;

use stand_in::StandIn;
use stand_in::drift::DriftSwitch;

use crate::platform::Platform;

/// Every platform's stand-in, running, by [`Platform::index`].
#[derive(Clone, Debug)]
pub struct StandIns(Vec<Running>);

/// One platform's stand-in, running.
#[derive(Clone, Debug)]
struct Running {
    plays: &'static StandIn,
    addr: SocketAddr,
    drift: DriftSwitch,
}

impl StandIns {
    /// Where `platform`'s stand-in listens.
    pub fn addr(&self, platform: Platform) -> SocketAddr {
        self.0[platform.index()].addr
    }

    /// `platform`'s stand-in's drift switch.
    pub fn drift(&self, platform: Platform) -> &DriftSwitch {
        &self.0[platform.index()].drift
    }

    /// The stand-in playing `platform`: its demo calls, canary accounts and drifted source.
    pub fn plays(&self, platform: Platform) -> &'static StandIn {
        self.0[platform.index()].plays
    }
}

/// Starts every platform's stand-in (with its drift switch, off) on a free loopback port; an
/// error names a platform the `stand-in` crate does not play.
pub async fn spawn_stand_ins() -> std::io::Result<StandIns> {
    let mut running = Vec::with_capacity(Platform::ALL.len());
    for &platform in Platform::ALL {
        let plays = stand_in::platform(platform.as_str()).ok_or_else(|| {
            std::io::Error::other(format!(
                "no stand-in plays {platform}: register one in stand-in/src/lib.rs"
            ))
        })?;
        let drift = DriftSwitch::default();
        let addr = stand_in::spawn(plays.switchable(drift.clone())).await?;
        running.push(Running { plays, addr, drift });
    }
    Ok(StandIns(running))
}
