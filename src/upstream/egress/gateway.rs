//! A provider's gateway: one host and port whose exit address is chosen by a session id in
//! the credentials (`{session}` in the proxy URL's user name or password). Each session is an
//! [`Exit`] of its own (its clients, cookie jars and handed values, nothing reused across
//! sessions), shared by the lookups that take it until it is retired (a block, or silence) or
//! worn out (`upstream.session_max_lookups`, `upstream.session_max_age_seconds`).
//!
//! A session id is 8 random lowercase letters and digits: what every provider documented in
//! `docs/proxies.md` accepts (IPRoyal wants exactly 8 alphanumerics, Bright Data alphanumerics
//! only). It lives in the clients' proxy settings and nowhere else: never logged, exported,
//! kept as text, or sent to Redis.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::exit::{Exit, Identity, Session};
use super::lock;
use crate::config::proxies::with_session;
use crate::config::{BrowserProfile, Settings};
use crate::telemetry;
use crate::upstream::Upstream;
use crate::upstream::cookies::RouteCookies;
use crate::upstream::roots::ClientBuildError;

/// How many characters a session id has.
const SESSION_ID_LEN: usize = 8;

/// Why a session was left for a new one (the `reason` label of its metric).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Retirement {
    /// The platform refused the session's exit address.
    Blocked,
    /// The session took a request and never answered it.
    Silent,
    /// It served `upstream.session_max_lookups` lookups.
    UsedUp,
    /// It is `upstream.session_max_age_seconds` old.
    Aged,
}

impl Retirement {
    /// Every reason, in the order of [`GatewayMetrics::retired`].
    pub(super) const ALL: [Self; 4] = [Self::Blocked, Self::Silent, Self::UsedUp, Self::Aged];

    /// Its metric label.
    pub(super) fn label(self) -> &'static str {
        match self {
            Self::Blocked => "blocked",
            Self::Silent => "silent",
            Self::UsedUp => "used_up",
            Self::Aged => "aged",
        }
    }
}

/// The reason a gateway rests when its pool is refused (logs, the rests metric).
pub(super) const POOL_REFUSED: &str = "pool_refused";

/// Where a lookup goes after a block on a gateway session.
pub(super) enum AfterBlock {
    /// A new session of the same gateway.
    NewSession,
    /// The gateway rests (its pool is refused): another route, as after any rest.
    PoolRefused,
    /// This lookup has retired enough sessions here: another route, the gateway not rested.
    Leave,
}

/// A gateway's counters, by position (never by session).
struct GatewayMetrics {
    started: metrics::Counter,
    retired: [metrics::Counter; 4],
}

/// A provider's gateway: its URL template and the session lookups take now.
pub(super) struct Gateway {
    /// The proxy URL with `{session}` in its credentials: a secret, never shown.
    template: String,
    settings: Settings,
    profiles: Vec<Option<BrowserProfile>>,
    max_lookups: u32,
    max_age: Duration,
    current: Mutex<Arc<Exit>>,
    metrics: GatewayMetrics,
}

impl Gateway {
    /// Gateway `template` (validated) at `label`, with its first session built, so that a URL
    /// the clients refuse stops the start.
    pub(super) fn new(
        scope: &'static str,
        label: &str,
        template: &str,
        settings: &Settings,
        profiles: &[Option<BrowserProfile>],
    ) -> Result<Self, ClientBuildError> {
        let metrics = GatewayMetrics {
            started: telemetry::gateway_sessions_started(scope, label),
            retired: Retirement::ALL
                .map(|why| telemetry::gateway_sessions_retired(scope, label, why.label())),
        };
        for why in [super::PROXY_FAILED, POOL_REFUSED, "silent"] {
            telemetry::gateway_rests(scope, label, why, 0);
        }
        let first = session_exit(template, settings, profiles)?;
        metrics.started.increment(1);
        Ok(Self {
            template: template.to_owned(),
            settings: settings.clone(),
            profiles: profiles.to_vec(),
            max_lookups: settings.upstream.session_max_lookups,
            max_age: settings.upstream.session_max_age(),
            current: Mutex::new(Arc::new(first)),
            metrics,
        })
    }

    /// A new session for one lookup's next request alone (another exit address), leaving the
    /// gateway's current session as it is: for a document the platform fails now and then
    /// (a 500), which another session may answer; `None` when one could not be built.
    pub(super) fn fresh(&self) -> Option<Arc<Exit>> {
        let exit = session_exit(&self.template, &self.settings, &self.profiles).ok()?;
        self.metrics.started.increment(1);
        Some(Arc::new(exit))
    }

    /// The session a lookup takes now: the current one while it is neither retired nor worn
    /// out, else a new one (the worn one is counted as retired).
    pub(super) fn take(&self) -> Arc<Exit> {
        let mut current = lock(&self.current);
        let worn = match current.session.as_ref() {
            Some(s) if s.retired.load(Ordering::Relaxed) => None,
            Some(s) if s.lookups.load(Ordering::Relaxed) >= self.max_lookups => {
                Some(Retirement::UsedUp)
            }
            Some(s) if s.started.elapsed() >= self.max_age => Some(Retirement::Aged),
            _ => {
                if let Some(s) = &current.session {
                    s.lookups.fetch_add(1, Ordering::Relaxed);
                }
                return current.clone();
            }
        };
        if let Some(why) = worn {
            self.retire_exit(&current, why);
        }
        match session_exit(&self.template, &self.settings, &self.profiles) {
            Ok(exit) => {
                self.metrics.started.increment(1);
                if let Some(s) = &exit.session {
                    s.lookups.store(1, Ordering::Relaxed);
                }
                *current = Arc::new(exit);
            }
            // The same template built the first session: this cannot fail but for resources
            // (the old session is used once more, and the next lookup tries again).
            Err(err) => tracing::error!(error = %err, "a new gateway session could not be built"),
        }
        current.clone()
    }

    /// Retires `exit` (a session of this gateway) for `why`: no lookup takes it again. `false`
    /// when it already was retired.
    pub(super) fn retire(&self, exit: &Exit, why: Retirement) -> bool {
        let _current = lock(&self.current);
        self.retire_exit(exit, why)
    }

    fn retire_exit(&self, exit: &Exit, why: Retirement) -> bool {
        let Some(session) = &exit.session else {
            return false;
        };
        if session.retired.swap(true, Ordering::Relaxed) {
            return false;
        }
        let at = Retirement::ALL.iter().position(|&r| r == why).unwrap_or(0);
        self.metrics.retired[at].increment(1);
        true
    }
}

/// A new session of gateway `template`: a fresh id, and for each profile a client whose
/// proxy credentials carry it, an empty cookie jar and no handed values.
fn session_exit(
    template: &str,
    settings: &Settings,
    profiles: &[Option<BrowserProfile>],
) -> Result<Exit, ClientBuildError> {
    let url = with_session(template, &session_id()).map_err(|_| ClientBuildError::Proxy)?;
    let mut identities = Vec::with_capacity(profiles.len());
    for &profile in profiles {
        identities.push(Identity {
            upstream: Upstream::build(settings, Some(&url), profile)?,
            cookies: RouteCookies::default(),
            session: Default::default(),
        });
    }
    Ok(Exit {
        identities,
        session: Some(Session::new()),
    })
}

/// A new session id: [`SESSION_ID_LEN`] random lowercase letters and digits.
fn session_id() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..SESSION_ID_LEN)
        .map(|_| char::from(ALPHABET[fastrand::usize(..ALPHABET.len())]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_eight_lowercase_letters_or_digits_and_differ() {
        let ids: std::collections::HashSet<String> = (0..100).map(|_| session_id()).collect();
        assert_eq!(ids.len(), 100);
        for id in ids {
            assert_eq!(id.len(), SESSION_ID_LEN);
            assert!(
                id.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            );
        }
    }
}

#[cfg(test)]
mod lease_tests {
    use std::sync::Arc;

    use crate::config::Settings;
    use crate::fleet::Fleet;
    use crate::registry::Platform;
    use crate::upstream::egress::{Egress, Switch};

    fn one_gateway(scope: &'static str, threshold: u32) -> Egress {
        let mut settings = Settings::default();
        settings.upstream.proxies = vec!["http://u-{session}:p@127.0.0.1:1".into()];
        settings.upstream.gateway_block_threshold = threshold;
        let platform = settings.platform(Platform::ShortVideo);
        Egress::new(scope, &settings, platform, &Fleet::local()).unwrap()
    }

    #[tokio::test]
    async fn a_probe_retires_its_session_but_never_rests_the_gateway() {
        let routes = one_gateway("test-gw-probe", 2);
        for _ in 0..3 {
            let probe = routes.lease(false).await.unwrap();
            let first = probe.exit();
            assert_eq!(probe.rest_and_switch("http_429").await, Switch::Moved);
            assert!(!Arc::ptr_eq(&first, &probe.exit()), "a new session");
            assert!(matches!(
                probe.rest_and_switch("http_429").await,
                Switch::AllResting(_)
            ));
        }
        assert!(
            routes.lease(true).await.is_ok(),
            "the gateway does not rest"
        );
    }

    #[tokio::test]
    async fn fresh_sessions_refused_in_a_row_rest_the_gateway() {
        let routes = one_gateway("test-gw-refused", 2);
        let lease = routes.lease(true).await.unwrap();
        assert_eq!(lease.rest_and_switch("http_429").await, Switch::Moved);
        assert!(matches!(
            lease.rest_and_switch("http_429").await,
            Switch::AllResting(_)
        ));
        assert!(routes.lease(true).await.is_err(), "the gateway rests");
    }

    #[tokio::test]
    async fn a_session_left_unrested_is_retired_and_the_gateway_does_not_rest() {
        let routes = one_gateway("test-gw-unplaced", 2);
        let lease = routes.lease(true).await.unwrap();
        let held = lease.exit();
        // Blame could not place the refusal: the lookup goes on with a new session...
        assert_eq!(lease.leave_unrested("page").await, Switch::Moved);
        assert!(!Arc::ptr_eq(&held, &lease.exit()), "a new session");
        // ...and the refused one is retired, so no lookup takes it again.
        let retired = |exit: &crate::upstream::egress::exit::Exit| {
            exit.session
                .as_ref()
                .unwrap()
                .retired
                .load(std::sync::atomic::Ordering::Relaxed)
        };
        assert!(retired(&held));
        let next = routes.lease(true).await.unwrap();
        assert!(!Arc::ptr_eq(&held, &next.exit()));
        // Nothing placed the refusal on the gateway: however many sessions lookups leave
        // so, it does not rest.
        for _ in 0..2 {
            let lease = routes.lease(true).await.unwrap();
            assert_eq!(lease.leave_unrested("page").await, Switch::Moved);
        }
        assert!(
            routes.lease(true).await.is_ok(),
            "the gateway does not rest"
        );
    }

    #[tokio::test]
    async fn a_silent_session_is_left_once_then_the_gateway_is_left() {
        let routes = one_gateway("test-gw-silent", 3);
        let lease = routes.lease(true).await.unwrap();
        let first = lease.exit();
        // Blame did not place the silence: another session, nothing retired or rested.
        assert!(
            lease.leave_silent(false).await,
            "a new session of the same gateway"
        );
        assert!(!Arc::ptr_eq(&first, &lease.exit()));
        assert!(!lease.leave_silent(false).await, "no other route");
        assert!(
            routes.lease(true).await.is_ok(),
            "nothing placed the silence: nothing rests"
        );
        // Blame placed it on the route: the session is retired.
        let lease = routes.lease(true).await.unwrap();
        let held = lease.exit();
        assert!(lease.leave_silent(true).await);
        assert!(
            held.session
                .as_ref()
                .unwrap()
                .retired
                .load(std::sync::atomic::Ordering::Relaxed)
        );
    }
}
