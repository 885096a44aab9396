//! The rules of blame: who an attempt that did not read belongs to, by comparison over the
//! window. Pure functions; the table of cases at the end is what holds them.
//!
//! In order (the first that holds decides):
//!
//! 1. the route failed as a proxy → **proxy** (the route's, and nothing else learns from it);
//! 2. a silence: the route missed the head deadline twice in a row, and it is an outlier
//!    (half of its recent outcomes silences, the other routes' one in 20 at most, over five
//!    outcomes or more) → **route**;
//!    otherwise **nobody** (one slow answer, or a platform slow everywhere, rests nothing);
//! 3. a refusal of name N by source S: N refused by S at `name_routes` places (a fixed proxy;
//!    a gateway's sessions together), at each of which S read another name since N's first
//!    refusal there; or N refused by every source of the plan, each of which read another name
//!    since → **name**;
//! 4. route R refused or failing for `route_names` names since it last read, while another
//!    route's last answer from S read, after R's streak began → **route**;
//! 5. source S refused, failing or unreadable for `source_names` names at `source_routes`
//!    places (or every place there is) since it last read, while another source read since
//!    (*now*, not "lately") → **source**;
//! 6. a refusal while every source of the plan last answered with a refusal, nothing read
//!    anywhere since the first of those, and the refusals since anything read span two
//!    routes (every route, when there is one) and two names → **platform**;
//! 7. otherwise → **unknown** (too little evidence): the lookup moves on without a rest (a
//!    route left so rests once the same source reads the name elsewhere).

use std::time::Instant;

use super::outcome::{Kind, Record, RouteId};
use super::window::{Window, distinct};
use crate::config::BlameConfig;

/// Who an outcome belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Party {
    /// The requested name: nothing rests, no source learns, the breaker does not count; the
    /// caller is answered for this name alone.
    Name,
    /// The route: it rests (a gateway session is retired).
    Route,
    /// The route failed as a proxy: it rests, and the platform was not asked.
    Proxy,
    /// The source: demoted, and the lookup asks the next source at once.
    Source,
    /// The platform: backoff, routes rest, the breaker counts.
    Platform,
    /// Nobody (a silence not worth a rest): the lookup moves on.
    Nobody,
    /// Too little evidence to compare: the lookup moves on and rests at most one route.
    Unknown,
}

impl Party {
    /// Its label in `Cache-Status`, the access log and `profile_lookup_blame_total`.
    pub fn label(self) -> &'static str {
        match self {
            Party::Name => "name",
            Party::Route => "route",
            Party::Proxy => "proxy",
            Party::Source => "source",
            Party::Platform => "platform",
            Party::Nobody => "nobody",
            Party::Unknown => "unknown",
        }
    }
}

/// The attempt to blame: already in the window, as its newest record for this name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The name's digest.
    pub name: u64,
    /// The route it went through.
    pub route: RouteId,
    /// The source asked.
    pub source: u8,
    /// What it came to (never [`Kind::Read`]).
    pub kind: Kind,
}

/// What the rules know of the platform beyond the window.
#[derive(Clone, Copy, Debug)]
pub struct Scope<'a> {
    /// The sources the plan asks (by index).
    pub sources: &'a [u8],
    /// How many routes there are (a gateway counts as many).
    pub routes: usize,
}

/// Who `attempt` belongs to, by the evidence in `window` (the attempt included).
pub fn decide(attempt: &Attempt, window: &Window, rules: &BlameConfig, scope: Scope<'_>) -> Party {
    match attempt.kind {
        Kind::Read => Party::Nobody,
        Kind::ProxyFailed => Party::Proxy,
        Kind::Silent => silence(attempt, window),
        Kind::Refused | Kind::Failed | Kind::Unreadable => {
            if attempt.kind == Kind::Refused && names(attempt, window, rules, scope) {
                Party::Name
            } else if routes_rule(attempt, window, rules) {
                Party::Route
            } else if sources_rule(attempt, window, rules, scope) {
                Party::Source
            } else if attempt.kind == Kind::Refused && platform(window, scope) {
                Party::Platform
            } else {
                Party::Unknown
            }
        }
    }
}

/// How many of a route's latest outcomes its silence share is measured over.
const RECENT: usize = 10;

/// How many of the other routes' latest outcomes it is compared with, and the least that
/// makes a comparison (a few answers vouch for nothing).
const OTHERS: usize = 30;
const MIN_OTHERS: usize = 5;

/// A route's silences and answers among its [`RECENT`] latest outcomes (a proxy's own
/// failures aside).
fn silence_share(window: &Window, pick: impl Fn(&Record) -> bool, n: usize) -> (usize, usize) {
    let recent: Vec<&Record> = window
        .records()
        .rev()
        .filter(|r| pick(r) && r.kind != Kind::ProxyFailed)
        .take(n)
        .collect();
    let silent = recent.iter().filter(|r| r.kind == Kind::Silent).count();
    (silent, recent.len())
}

/// Rule 2: silent twice in a row, an outlier among the routes (at least half of its recent
/// outcomes silences, while the other routes answered in time 19 times in 20 at least, over
/// five outcomes or more): Envoy's outlier detection. A platform slow now and then is slow on
/// every route, and rests nothing.
fn silence(a: &Attempt, window: &Window) -> Party {
    let in_a_row = window
        .records()
        .rev()
        .filter(|r| r.route == a.route && r.kind != Kind::ProxyFailed)
        .take_while(|r| r.kind == Kind::Silent)
        .count();
    let (silent, outcomes) = silence_share(window, |r| r.route == a.route, RECENT);
    let (others_silent, others) = silence_share(window, |r| r.route != a.route, OTHERS);
    let outlier = 2 * silent >= outcomes && others >= MIN_OTHERS && 20 * others_silent <= others;
    if in_a_row >= 2 && outlier {
        Party::Route
    } else {
        Party::Nobody
    }
}

/// Whether `source` read a name other than `name` at `position` (a fixed proxy, a gateway's
/// sessions together, the direct route's profiles together) since `since`, and its last
/// answer for other names there read: a read from before the refusals began vouches for
/// nothing (the platform may have turned on everyone since).
fn reads_others_since(
    window: &Window,
    source: u8,
    name: u64,
    position: Option<u16>,
    since: Instant,
) -> bool {
    window
        .latest(|r| {
            r.source == source
                && r.name != name
                && r.kind != Kind::ProxyFailed
                && position.is_none_or(|p| r.route.position == p)
        })
        .is_some_and(|r| r.kind == Kind::Read && r.at > since)
}

/// Rule 3: the name's. A gateway's sessions are one place here: two refused sessions of one
/// gateway are one refusal of the name, as the gateway's other sessions vouch for them all.
fn names(a: &Attempt, window: &Window, rules: &BlameConfig, scope: Scope<'_>) -> bool {
    let refused =
        |r: &Record, source: u8| r.name == a.name && r.source == source && r.kind == Kind::Refused;
    let first_refusal = |source: u8, position: Option<u16>| {
        window
            .records()
            .find(|r| refused(r, source) && position.is_none_or(|p| r.route.position == p))
            .map(|r| r.at)
    };
    // Refused by this source at several places, each of which read other names since.
    let mut positions: Vec<u16> = window
        .records()
        .filter(|r| refused(r, a.source))
        .map(|r| r.route.position)
        .collect();
    positions.sort_unstable();
    positions.dedup();
    let vouched = positions
        .iter()
        .filter(|&&p| {
            first_refusal(a.source, Some(p))
                .is_some_and(|t| reads_others_since(window, a.source, a.name, Some(p), t))
        })
        .count();
    if vouched >= rules.name_routes as usize {
        return true;
    }
    // Refused by every source of the plan, each of which read other names since.
    scope.sources.len() >= 2
        && scope.sources.iter().all(|&source| {
            first_refusal(source, None)
                .is_some_and(|t| reads_others_since(window, source, a.name, None, t))
        })
}

/// Rule 4: the route's. Refusals and failures count (an unreadable document is its source's);
/// the other route must have read *since* this route's streak began.
fn routes_rule(a: &Attempt, window: &Window, rules: &BlameConfig) -> bool {
    let streak: Vec<&Record> = window
        .since_read(
            |r| r.route == a.route && matches!(r.kind, Kind::Refused | Kind::Failed),
            |r| r.route == a.route,
        )
        .collect();
    let Some(began) = streak.first().map(|r| r.at) else {
        return false;
    };
    let bad_names = distinct(streak.iter().map(|r| r.name));
    bad_names >= rules.route_names as usize
        && window
            .records()
            .filter(|r| r.route != a.route && r.source == a.source)
            .map(|r| r.route)
            .any(|route| {
                window
                    .latest(|r| {
                        r.route == route && r.source == a.source && r.kind != Kind::ProxyFailed
                    })
                    .is_some_and(|r| r.kind == Kind::Read && r.at > began)
            })
}

/// Rule 5: the source's. Places, not sessions, count as routes here (a gateway is one place:
/// its sessions refused are not "every route"); another source must have read since this
/// source's streak began (*now*, not "lately").
fn sources_rule(a: &Attempt, window: &Window, rules: &BlameConfig, scope: Scope<'_>) -> bool {
    let streak: Vec<&Record> = window
        .since_read(
            |r| r.source == a.source && r.kind.is_bad(),
            |r| r.source == a.source,
        )
        .collect();
    let Some(began) = streak.first().map(|r| r.at) else {
        return false;
    };
    let bad_names = distinct(streak.iter().map(|r| r.name));
    let places = distinct(streak.iter().map(|r| r.route.position));
    let places_needed = (rules.source_routes as usize).min(scope.routes.max(1));
    let another_reads_now = scope.sources.iter().any(|&other| {
        other != a.source
            && window
                .latest(|r| r.source == other && r.kind != Kind::ProxyFailed)
                .is_some_and(|r| r.kind == Kind::Read && r.at > began)
    });
    bad_names >= rules.source_names as usize && places >= places_needed && another_reads_now
}

/// Rule 6: the platform's. Every source of the plan last answered with a refusal, and nothing
/// read anywhere since the first of those refusals (routes no longer asked, a retired session,
/// vouch for nothing).
fn platform(window: &Window, scope: Scope<'_>) -> bool {
    let mut since: Option<Instant> = None;
    for &source in scope.sources {
        let Some(last) = window.latest(|r| r.source == source && r.kind != Kind::ProxyFailed)
        else {
            return false;
        };
        if last.kind != Kind::Refused {
            return false;
        }
        since = Some(since.map_or(last.at, |t| t.min(last.at)));
    }
    let Some(since) = since else {
        return false;
    };
    if window
        .records()
        .any(|r| r.kind == Kind::Read && r.at > since)
    {
        return false;
    }
    // Refused on more than one route since anything last read (on every route there is, when
    // there is one): one route's refusals may still be that route's.
    let last_read = window.latest(|r| r.kind == Kind::Read).map(|r| r.at);
    let mut refused_on: Vec<RouteId> = window
        .records()
        .filter(|r| r.kind == Kind::Refused && last_read.is_none_or(|t| r.at > t))
        .map(|r| r.route)
        .collect();
    refused_on.sort_unstable();
    refused_on.dedup();
    // And for more than one name: one name refused everywhere may be that name's.
    let names = distinct(
        window
            .records()
            .filter(|r| r.kind == Kind::Refused && last_read.is_none_or(|t| r.at > t))
            .map(|r| r.name),
    );
    refused_on.len() >= scope.routes.clamp(1, 2) && names >= 2
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::blame::outcome::name_digest;

    const PAGE: u8 = 0;
    const EMBED: u8 = 1;

    fn rules() -> BlameConfig {
        crate::config::Settings::default().blame
    }

    /// A window built from `(name, route, source, kind)` rows, a millisecond apart; the first
    /// `older` rows a minute and a half before the others.
    fn window(rows: &[(&str, RouteId, u8, Kind)], older: usize) -> Window {
        let start = Instant::now() - Duration::from_secs(200);
        let mut w = Window::default();
        for (i, (name, route, source, kind)) in rows.iter().enumerate() {
            let later = if i < older { 0 } else { 90_000 };
            w.push(Record {
                at: start + Duration::from_millis(i as u64 + later),
                name: name_digest(name),
                route: *route,
                source: *source,
                kind: *kind,
            });
        }
        w
    }

    fn p(i: usize) -> RouteId {
        RouteId::fixed(i)
    }

    use Kind::{Failed, ProxyFailed, Read, Refused, Silent, Unreadable};

    /// The table of cases (after ../shared/BLAME.md): the evidence, then the attempt (the last
    /// row), then the party. Each rule has its positive case and a negative one beside it.
    #[test]
    fn the_table_of_cases() {
        let both = [PAGE, EMBED];
        let page_only = [PAGE];
        #[allow(clippy::type_complexity)]
        let cases: Vec<(&str, Vec<(&str, RouteId, u8, Kind)>, &[u8], usize, Party)> = vec![
            (
                "age-gated name, 3 healthy proxies: refused at two, others read there since",
                vec![
                    ("gated", p(0), PAGE, Refused),
                    ("a", p(0), PAGE, Read),
                    ("gated", p(1), PAGE, Refused),
                    ("b", p(1), PAGE, Read),
                    ("gated", p(2), PAGE, Refused),
                ],
                &page_only,
                3,
                Party::Name,
            ),
            (
                "age-gated name, refused once only: too little evidence",
                vec![
                    ("a", p(0), PAGE, Read),
                    ("b", p(1), PAGE, Read),
                    ("gated", p(0), PAGE, Refused),
                ],
                &page_only,
                3,
                Party::Unknown,
            ),
            (
                "age-gated name on the direct route: every source refuses it, reads others since",
                vec![
                    ("gated", RouteId::direct(0), PAGE, Refused),
                    ("gated", RouteId::direct(0), EMBED, Refused),
                    ("a", RouteId::direct(0), PAGE, Read),
                    ("b", RouteId::direct(0), EMBED, Read),
                    ("gated", RouteId::direct(0), PAGE, Refused),
                ],
                &both,
                1,
                Party::Name,
            ),
            (
                "age-gated name, others' reads only from before its refusals: not yet the name's",
                vec![
                    ("a", p(0), PAGE, Read),
                    ("b", p(1), PAGE, Read),
                    ("c", p(2), PAGE, Read),
                    ("gated", p(0), PAGE, Refused),
                    ("gated", p(1), PAGE, Refused),
                ],
                &page_only,
                3,
                Party::Unknown,
            ),
            (
                "two sessions of one gateway refuse a name, other sessions read: one place, not two",
                vec![
                    ("gated", RouteId::session(0, "s1"), PAGE, Refused),
                    ("a", RouteId::session(0, "s2"), PAGE, Read),
                    ("gated", RouteId::session(0, "s3"), PAGE, Refused),
                ],
                &page_only,
                usize::MAX,
                Party::Unknown,
            ),
            (
                "one name refused on two routes that read nobody else: not yet anybody's",
                vec![
                    ("gated", p(0), PAGE, Refused),
                    ("gated", p(1), PAGE, Refused),
                ],
                &page_only,
                3,
                Party::Unknown,
            ),
            (
                "one burnt proxy: refused for two names while others read",
                vec![
                    ("a", p(1), PAGE, Read),
                    ("c", p(0), PAGE, Refused),
                    ("b", p(2), PAGE, Read),
                    ("d", p(0), PAGE, Refused),
                ],
                &page_only,
                3,
                Party::Route,
            ),
            (
                "refused for two names, the others' reads all from before: not the route's",
                vec![
                    ("a", p(1), PAGE, Read),
                    ("b", p(2), PAGE, Read),
                    ("c", p(0), PAGE, Refused),
                    ("d", p(0), PAGE, Refused),
                ],
                &page_only,
                3,
                Party::Unknown,
            ),
            (
                "a route refused for one name only: not the route's",
                vec![
                    ("a", p(1), PAGE, Read),
                    ("c", p(0), PAGE, Refused),
                    ("c", p(0), PAGE, Refused),
                ],
                &page_only,
                3,
                Party::Unknown,
            ),
            (
                "a gateway's bad exit: one session refused for two names, fresh ones read",
                vec![
                    ("c", RouteId::session(0, "s1"), PAGE, Refused),
                    ("a", RouteId::session(0, "s2"), PAGE, Read),
                    ("b", RouteId::session(0, "s3"), PAGE, Read),
                    ("d", RouteId::session(0, "s1"), PAGE, Refused),
                ],
                &page_only,
                usize::MAX,
                Party::Route,
            ),
            (
                "the JSON retired: refused for three names on two routes, the page reads",
                vec![
                    ("a", p(0), EMBED, Refused),
                    ("a", p(0), PAGE, Read),
                    ("b", p(1), EMBED, Refused),
                    ("b", p(1), PAGE, Read),
                    ("c", p(0), EMBED, Refused),
                ],
                &both,
                3,
                Party::Source,
            ),
            (
                "refused for two names only: not yet the source's",
                vec![
                    ("a", p(0), EMBED, Refused),
                    ("a", p(0), PAGE, Read),
                    ("b", p(1), EMBED, Refused),
                ],
                &both,
                3,
                Party::Unknown,
            ),
            (
                "the page changed shape: unreadable for three names, the embed reads",
                vec![
                    ("a", RouteId::direct(0), PAGE, Unreadable),
                    ("a", RouteId::direct(0), EMBED, Read),
                    ("b", RouteId::direct(0), PAGE, Unreadable),
                    ("b", RouteId::direct(0), EMBED, Read),
                    ("c", RouteId::direct(0), PAGE, Unreadable),
                ],
                &both,
                1,
                Party::Source,
            ),
            (
                "a 503 endpoint: failing for three names on two routes, the other reads",
                vec![
                    ("a", p(0), PAGE, Failed),
                    ("a", p(0), EMBED, Read),
                    ("b", p(1), PAGE, Failed),
                    ("b", p(1), EMBED, Read),
                    ("c", p(0), PAGE, Failed),
                ],
                &both,
                3,
                Party::Source,
            ),
            (
                "throttle of everything: every source refused on every route",
                vec![
                    ("a", p(0), PAGE, Read),
                    ("a", p(1), EMBED, Read),
                    ("b", p(0), PAGE, Refused),
                    ("b", p(0), EMBED, Refused),
                    ("c", p(1), PAGE, Refused),
                    ("c", p(1), EMBED, Refused),
                ],
                &both,
                2,
                Party::Platform,
            ),
            (
                "both read a minute ago, now everything refused: a read then vouches for nothing",
                vec![
                    ("a", p(0), PAGE, Read),
                    ("b", p(0), EMBED, Read),
                    ("c", p(0), PAGE, Refused),
                    ("c", p(0), EMBED, Refused),
                    ("d", p(0), PAGE, Refused),
                    ("d", p(0), EMBED, Refused),
                ],
                &both,
                1,
                Party::Platform,
            ),
            (
                "a refusal while the other source reads now: not the platform's",
                vec![("a", p(0), EMBED, Read), ("c", p(0), PAGE, Refused)],
                &both,
                1,
                Party::Unknown,
            ),
            (
                "one slow answer: other heads in time, the route silent once",
                vec![("a", p(1), PAGE, Read), ("b", p(0), PAGE, Silent)],
                &page_only,
                3,
                Party::Nobody,
            ),
            (
                "a silent route: twice in a row, while the others answer in time",
                vec![
                    ("a", p(1), PAGE, Read),
                    ("a", p(2), PAGE, Read),
                    ("b", p(1), PAGE, Read),
                    ("b", p(2), PAGE, Read),
                    ("c", p(1), PAGE, Read),
                    ("f", p(0), PAGE, Silent),
                    ("g", p(0), PAGE, Silent),
                ],
                &page_only,
                3,
                Party::Route,
            ),
            (
                "slow one request in three everywhere: silent twice in a row here, but the others as often",
                vec![
                    ("a", p(1), PAGE, Read),
                    ("b", p(1), PAGE, Silent),
                    ("c", p(2), PAGE, Read),
                    ("d", p(2), PAGE, Silent),
                    ("e", p(1), PAGE, Read),
                    ("f", p(0), PAGE, Read),
                    ("g", p(0), PAGE, Silent),
                    ("h", p(0), PAGE, Silent),
                ],
                &page_only,
                3,
                Party::Nobody,
            ),
            (
                "silent twice with too few answers elsewhere to compare: nobody yet",
                vec![
                    ("a", p(1), PAGE, Read),
                    ("b", p(0), PAGE, Silent),
                    ("c", p(0), PAGE, Silent),
                ],
                &page_only,
                3,
                Party::Nobody,
            ),
            (
                "slow everywhere: silent twice, the others silent too",
                vec![
                    ("b", p(1), PAGE, Silent),
                    ("b", p(0), PAGE, Silent),
                    ("c", p(0), PAGE, Silent),
                ],
                &page_only,
                3,
                Party::Nobody,
            ),
            (
                "every proxy refuses the connection: the proxies' own, never a block",
                vec![("a", p(0), PAGE, ProxyFailed)],
                &page_only,
                3,
                Party::Proxy,
            ),
            (
                "Redis emptied: no evidence, a refusal is unknown, nothing demoted",
                vec![("a", p(0), EMBED, Refused)],
                &both,
                3,
                Party::Unknown,
            ),
        ];
        let mut wrong = Vec::new();
        for (case, rows, sources, routes, expected) in cases {
            // A case that says "a minute ago" has its reads that long before the rest.
            let older = if case.contains("a minute ago") {
                rows.iter().take_while(|r| r.3 == Read).count()
            } else {
                0
            };
            let w = window(&rows, older);
            let (name, route, source, kind) = *rows.last().unwrap();
            let attempt = Attempt {
                name: name_digest(name),
                route,
                source,
                kind,
            };
            let scope = Scope { sources, routes };
            let got = decide(&attempt, &w, &rules(), scope);
            if got != expected {
                wrong.push(format!("{case}: {got:?}, expected {expected:?}"));
            }
        }
        assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
    }
}
