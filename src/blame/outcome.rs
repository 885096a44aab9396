//! What one attempt came to, and against whom it is recorded: the evidence's vocabulary.

use std::time::Instant;

use sha2::{Digest, Sha256};

/// What one attempt on one route for one name from one source came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The source said something about the user (a profile, an absence, a restriction).
    Read,
    /// The platform refused the request (a block signal: 429, a login wall, a captcha).
    Refused,
    /// The platform failed it: a 5xx, a connection reset, no response.
    Failed,
    /// No response head within the head deadline.
    Silent,
    /// The document came but could not be read (it moved).
    Unreadable,
    /// The route failed as a proxy (refused, reset, 407, CONNECT unanswered): the platform was
    /// never asked, so this is evidence about that route alone.
    ProxyFailed,
}

impl Kind {
    /// Its label in the fleet's records and in logs.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Refused => "refused",
            Kind::Failed => "failed",
            Kind::Silent => "silent",
            Kind::Unreadable => "unreadable",
            Kind::ProxyFailed => "proxy_failed",
        }
    }

    /// The kind a label names.
    pub fn from_label(label: &str) -> Option<Self> {
        [
            Kind::Read,
            Kind::Refused,
            Kind::Failed,
            Kind::Silent,
            Kind::Unreadable,
            Kind::ProxyFailed,
        ]
        .into_iter()
        .find(|k| k.label() == label)
    }

    /// Whether it counts against a route or a source (anything but a read, and a proxy's own
    /// failure, which is the route's alone).
    pub fn is_bad(self) -> bool {
        !matches!(self, Kind::Read | Kind::ProxyFailed)
    }
}

/// What the platform sees as one client: a fixed proxy (its position), one session of a
/// gateway (the gateway's position and a digest of the session id), or the direct route as
/// one browser profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RouteId {
    /// The proxy's position in its list; [`RouteId::DIRECT`] for the direct route.
    pub position: u16,
    /// 0 for a fixed proxy; a digest of the session id for a gateway's session; the browser
    /// profile's index plus one on the direct route.
    pub session: u32,
}

impl RouteId {
    /// The position the direct route is given.
    pub const DIRECT: u16 = u16::MAX;

    /// A fixed proxy at `position`.
    pub fn fixed(position: usize) -> Self {
        Self {
            position: u16::try_from(position).unwrap_or(u16::MAX - 1),
            session: 0,
        }
    }

    /// Session `id` of the gateway at `position` (the id is kept as a digest only).
    pub fn session(position: usize, id: &str) -> Self {
        let hash = Sha256::digest(id.as_bytes());
        let digest = u32::from_be_bytes([hash[0], hash[1], hash[2], hash[3]]).max(1);
        Self {
            position: u16::try_from(position).unwrap_or(u16::MAX - 1),
            session: digest,
        }
    }

    /// The direct route, presenting browser profile `profile`.
    pub fn direct(profile: usize) -> Self {
        Self {
            position: Self::DIRECT,
            session: u32::try_from(profile).unwrap_or(u32::MAX - 1) + 1,
        }
    }

    /// Whether it is one session of a gateway.
    pub fn is_session(self) -> bool {
        self.position != Self::DIRECT && self.session != 0
    }
}

/// A name as the evidence keeps it: the first 8 bytes of its SHA-256, never the name.
pub fn name_digest(name: &str) -> u64 {
    let hash = Sha256::digest(name.as_bytes());
    u64::from_be_bytes([
        hash[0], hash[1], hash[2], hash[3], hash[4], hash[5], hash[6], hash[7],
    ])
}

/// One outcome as evidence: when, for which name (a digest), on which route, from which
/// source (its index in the platform's registry line), and what it came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// When it was recorded (on this replica's clock; the fleet's records are placed by age).
    pub at: Instant,
    /// The name's digest ([`name_digest`]).
    pub name: u64,
    /// The route.
    pub route: RouteId,
    /// The source's index.
    pub source: u8,
    /// What it came to.
    pub kind: Kind,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_round_trip_and_routes_tell_sessions_apart() {
        for kind in [
            Kind::Read,
            Kind::Refused,
            Kind::Failed,
            Kind::Silent,
            Kind::Unreadable,
            Kind::ProxyFailed,
        ] {
            assert_eq!(Kind::from_label(kind.label()), Some(kind));
        }
        assert_ne!(RouteId::session(0, "a"), RouteId::session(0, "b"));
        assert_ne!(RouteId::session(0, "a"), RouteId::fixed(0));
        assert!(RouteId::session(3, "x").is_session());
        assert!(!RouteId::direct(0).is_session());
        assert_ne!(name_digest("a"), name_digest("b"));
    }
}
