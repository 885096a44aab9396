//! One lookup's hold on a route: every request of the lookup goes through it, and it moves
//! on (resting the route it leaves, unless it is a probe's) when the route blocks or fails.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use url::Url;

use super::exit::{Exit, Identity};
use super::gateway::{AfterBlock, POOL_REFUSED, Retirement};
use super::route::Route;
use super::{Egress, PROXY_FAILURES, REGION_LOCKED, Switch, lock};
use crate::upstream::{Form, Response, UpstreamError, is_navigation, junk_headers};

/// One lookup's hold on a route and a profile: every request of the lookup goes through it,
/// and it moves to another proxy only when the current one is rested, to another profile only
/// after a block.
pub struct RouteLease<'a> {
    pub(super) routes: &'a Egress,
    pub(super) current: AtomicUsize,
    /// The current route's exit: a fixed proxy's, or the gateway session this lookup holds.
    pub(super) exit: Mutex<Arc<Exit>>,
    /// How many gateway sessions this lookup retired (at most `gateway_block_threshold` on
    /// its gateways before it leaves them, so a lookup ends).
    pub(super) retired: AtomicU32,
    /// Whether this lookup already retired a session for its silence (the next silence leaves
    /// the gateway, as it leaves a fixed proxy).
    pub(super) silent_retired: AtomicBool,
    /// The profile presented, an index into [`Egress::profiles`].
    pub(super) profile: AtomicUsize,
    /// How many profiles this lookup has presented (the direct route's bound).
    pub(super) presented: AtomicUsize,
    pub(super) rested: Mutex<Vec<usize>>,
    /// The routes this lookup left unrested after a refusal blame could not place yet
    /// ([`RouteLease::leave_unrested`]), with the source that refused: each rests once that
    /// source reads the name on another route ([`RouteLease::rest_suspects`]).
    pub(super) suspects: Mutex<Vec<(usize, &'static str)>>,
    pub(super) exhausted: Mutex<Option<Duration>>,
    pub(super) sent: AtomicU32,
    /// How many of them the platform answered (any status but a proxy's 407).
    pub(super) answered: AtomicU32,
    /// Whether a route this lease leaves rests (for every lookup); a probe's only moves on.
    pub(super) rests: bool,
}

impl std::fmt::Debug for RouteLease<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RouteLease")
            .field("route", &self.label())
            .field("profile", &self.profile())
            .finish_non_exhaustive()
    }
}

impl RouteLease<'_> {
    pub(super) fn route(&self) -> &Route {
        &self.routes.routes[self.current.load(Ordering::Relaxed)]
    }

    /// The current exit (it holds the current route's identities).
    pub(super) fn exit(&self) -> Arc<Exit> {
        lock(&self.exit).clone()
    }

    /// Runs `f` on the current route's identity for the current profile.
    fn with_identity<R>(&self, f: impl FnOnce(&Identity) -> R) -> R {
        let exit = self.exit();
        f(&exit.identities[self.profile.load(Ordering::Relaxed)])
    }

    /// Moves the lease to route `index`, taking its exit (a gateway's session).
    pub(super) fn go_to(&self, index: usize) {
        self.current.store(index, Ordering::Relaxed);
        *lock(&self.exit) = self.routes.routes[index].exit();
    }

    /// The route the platform sees this lease as now: a fixed proxy, the gateway session it
    /// holds, or the direct route as the profile it presents (what blame records against).
    pub fn route_id(&self) -> crate::blame::RouteId {
        use crate::blame::RouteId;
        if !self.routes.proxied {
            return RouteId::direct(self.profile.load(Ordering::Relaxed));
        }
        let index = self.current.load(Ordering::Relaxed);
        match &self.exit().session {
            Some(session) => RouteId::session(index, &session.serial.to_string()),
            None => RouteId::fixed(index),
        }
    }

    /// Leaves the current route without resting it, for another route (a new session of a
    /// gateway, the next profile on the direct route), after `source` refused there and blame
    /// could not yet say whose the refusal is. The route rests only if `source` then reads the
    /// name on another route ([`RouteLease::rest_suspects`]): that comparison is the route's
    /// blame. A gateway's refused session is retired for the block all the same (a session is
    /// cheap, and kept it would be every next lookup's first request, refused again), without
    /// counting toward the gateway's rest. [`Switch::AllResting`] or [`Switch::Direct`] when
    /// there is nowhere to go.
    pub async fn leave_unrested(&self, source: &'static str) -> Switch {
        let index = self.current.load(Ordering::Relaxed);
        if !self.routes.proxied {
            if !self.moves_on_block() {
                return Switch::Direct;
            }
            lock(&self.suspects).push((index, source));
            self.next_profile("unplaced");
            return Switch::Moved;
        }
        lock(&self.suspects).push((index, source));
        if let Some(gateway) = self.route().gateway()
            && self.keeps_retiring()
        {
            self.retired.fetch_add(1, Ordering::Relaxed);
            gateway.retire(&self.exit(), Retirement::Blocked);
            self.go_to(index);
            self.next_profile("unplaced");
            return Switch::Moved;
        }
        match self.leave(index).await {
            Ok(next) => {
                self.go_to(next);
                self.next_profile("unplaced");
                Switch::Moved
            }
            Err(wait) => Switch::AllResting(wait),
        }
    }

    /// `source` read the name on the current route: the routes this lookup left unrested after
    /// `source` refused there rest now (the same source, the same name, another route: the
    /// refusal was the route's). A gateway's left session was retired already by leaving it.
    pub async fn rest_suspects(&self, source: &'static str) {
        let current = self.current.load(Ordering::Relaxed);
        let suspects: Vec<usize> = {
            let mut all = lock(&self.suspects);
            let (theirs, others): (Vec<_>, Vec<_>) = all.drain(..).partition(|(_, s)| *s == source);
            *all = others;
            theirs.into_iter().map(|(i, _)| i).collect()
        };
        if !self.rests || !self.routes.proxied {
            return;
        }
        for index in suspects {
            if index != current && self.routes.routes[index].gateway().is_none() {
                self.routes.routes[index].blocks.increment(1);
                self.routes.rest(index, "refused_where_another_read").await;
            }
        }
    }

    /// Blame found the platform refusing everything: the routes this lookup left unrested
    /// rest now (politeness, not blame: they are as refused as every other).
    pub async fn rest_every_suspect(&self) {
        let suspects: Vec<usize> = lock(&self.suspects).drain(..).map(|(i, _)| i).collect();
        if !self.rests || !self.routes.proxied {
            return;
        }
        for index in suspects {
            if self.routes.routes[index].gateway().is_none() {
                self.routes.rest(index, "platform").await;
            }
        }
    }

    /// The current route's metric label: its position (`"0"`, `"1"`, …) or `"direct"`.
    pub fn label(&self) -> &str {
        &self.route().label
    }

    /// The current route's kind, as `profile_lookup_proxy_info` names it: `fixed`, `gateway`
    /// or `direct`.
    pub fn kind(&self) -> &'static str {
        if !self.is_proxied() {
            "direct"
        } else if self.route().gateway().is_some() {
            "gateway"
        } else {
            "fixed"
        }
    }

    /// Whether the lease goes through a proxy (else straight out).
    pub fn is_proxied(&self) -> bool {
        self.routes.proxied
    }

    /// Whether no request of this lease reached the platform: every one it sent failed at its
    /// proxy (what `sent` counts includes them).
    pub fn sent_through_none(&self) -> bool {
        self.answered.load(Ordering::Relaxed) == 0
    }

    /// How many requests went out on this lease.
    pub fn sent(&self) -> u32 {
        self.sent.load(Ordering::Relaxed)
    }

    /// `Some(wait)` once the lease ran out of proxies: every one rests, the first is back
    /// after `wait`. Nothing more is sent on it.
    pub fn exhausted(&self) -> Option<Duration> {
        *self
            .exhausted
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sends `GET url` through the current route as the current profile, with that identity's
    /// cookies (and, for a page request with `<section>.junk_headers` on, a fresh draw of junk
    /// headers), and keeps the cookies the response sets in that identity's jar.
    pub async fn get(&self, url: Url, headers: HeaderMap) -> Result<Response, UpstreamError> {
        self.send(url, headers, None).await
    }

    /// Sends `url` as [`RouteLease::get`] does, a POST of `form` when one is given.
    pub async fn send(
        &self,
        url: Url,
        mut headers: HeaderMap,
        form: Option<&Form>,
    ) -> Result<Response, UpstreamError> {
        let route = self.route();
        let exit = self.exit();
        let identity = &exit.identities[self.profile.load(Ordering::Relaxed)];
        identity.cookies.add_to(&url, &mut headers);
        if let Some(form) = form {
            for (name, value) in form.headers() {
                headers.insert(name.clone(), value.clone());
            }
        }
        if self.routes.junk_headers && is_navigation(&headers) {
            junk_headers::add_to(&mut headers);
        }
        self.sent.fetch_add(1, Ordering::Relaxed);
        route.requests.increment(1);
        let result = identity.upstream.send(url, headers, form).await;
        if let Ok(response) = &result {
            if response.status.as_u16() != 407 {
                self.answered.fetch_add(1, Ordering::Relaxed);
            }
            identity.cookies.keep_from(&response.url, &response.headers);
            {
                let names = lock(&self.routes.session_names);
                identity.session.keep_from(&names, &response.headers);
            }
            let answered = response.status.is_success() || response.status.as_u16() == 404;
            if answered && exit.session.as_ref().is_some_and(|s| s.first_answer()) {
                // A session of this gateway answered: its pool is not refused as a whole.
                let index = self.current.load(Ordering::Relaxed);
                self.routes.refusals.cleared(index).await;
            }
        }
        result
    }

    /// The current route gave no response head in time: the lookup leaves it for a route it
    /// has not left that is not resting (a fresh session on a gateway). It rests only when
    /// blame says the silence is the route's (`rest`: silent twice while other routes answered
    /// in time); one slow answer, or a platform slow everywhere, rests nothing. `false` when
    /// there is nowhere to go (or on the direct route): the lookup then ends on the time-out.
    pub async fn leave_silent(&self, rest: bool) -> bool {
        if !self.routes.proxied {
            return false;
        }
        let index = self.current.load(Ordering::Relaxed);
        if let Some(gateway) = self.route().gateway()
            && !self.silent_retired.swap(true, Ordering::Relaxed)
        {
            // Its exit, not the gateway, may be at fault: another session is another exit.
            if rest {
                gateway.retire(&self.exit(), Retirement::Silent);
                self.go_to(index);
                return true;
            }
            return self.fresh_session();
        }
        if rest && self.rests {
            self.routes.routes[index].blocks.increment(1);
            self.routes.rest(index, "silent").await;
        }
        match self.leave(index).await {
            Ok(next) => {
                tracing::info!(
                    platform = self.routes.scope,
                    proxy = %self.route().label,
                    rested = rest,
                    "no answer through this proxy in time: the lookup tries another"
                );
                self.go_to(next);
                true
            }
            Err(_) => false,
        }
    }

    /// Moves the lease to a fresh session of its gateway, without retiring the one it held
    /// (a document failed on it, the route did nothing wrong); false on a fixed proxy or the
    /// direct route, which have no sessions.
    pub fn fresh_session(&self) -> bool {
        let index = self.current.load(Ordering::Relaxed);
        let Some(exit) = self.routes.routes[index].gateway().and_then(|g| g.fresh()) else {
            return false;
        };
        *lock(&self.exit) = exit;
        true
    }

    /// The last value the platform handed the current route and profile in response header
    /// `name` (a session claim the client repeats, e.g. `x-ig-set-www-claim`), if it handed one.
    /// Kept per route and profile like their cookies, so a value never goes out through another
    /// proxy or from another browser. Asking for a
    /// name is what starts keeping it, on every route of the platform: a site asks for the
    /// values it repeats when it builds a request, and nothing else is kept. `name` is a
    /// lowercase header name.
    pub fn handed(&self, name: &'static str) -> Option<HeaderValue> {
        let name = HeaderName::from_static(name);
        {
            let mut names = lock(&self.routes.session_names);
            if !names.contains(&name) {
                names.push(name.clone());
            }
        }
        self.with_identity(|identity| identity.session.value(&name))
    }

    /// Keeps `value` for `name` on the current route and profile, a session value the platform
    /// handed in a document rather than a header (a page's form token): read back by
    /// [`RouteLease::kept`], never sent through another route. `name` is lowercase.
    pub fn keep(&self, name: &'static str, value: &str) {
        let name = HeaderName::from_static(name);
        self.with_identity(|identity| identity.session.keep(name, value));
    }

    /// The value kept for `name` on the current route and profile ([`RouteLease::keep`], or
    /// handed in a header the site asked for).
    pub fn kept(&self, name: &'static str) -> Option<HeaderValue> {
        let name = HeaderName::from_static(name);
        self.with_identity(|identity| identity.session.value(&name))
    }

    /// The value of cookie `name` the current route and profile would send to `url`, if it
    /// holds one (e.g. `csrftoken`, which the photo-share JSON endpoint wants echoed in
    /// `X-CSRFToken`).
    pub fn cookie(&self, url: &Url, name: &str) -> Option<String> {
        self.with_identity(|identity| identity.cookies.value(url, name))
    }

    /// Keeps cookies obtained other than by `Set-Cookie` (the WAF answer the short-video
    /// challenge solver computes) in the current route and profile's jar, for `url`'s host.
    pub fn remember_cookies(&self, url: &Url, cookies: &[(String, String)]) {
        self.with_identity(|identity| {
            for (name, value) in cookies {
                identity.cookies.remember(url, name, value);
            }
        });
    }

    /// Whether a block would move the lease elsewhere now: through a proxy, to another proxy
    /// this lookup has not rested, other than the current one, that is not resting as far as
    /// this replica knows (on a gateway, a new session while this lookup may still retire
    /// one); on the direct route, to a browser profile the lookup has not
    /// presented yet. A lookup that has another source to ask keeps its last route for it
    /// instead of resting it (a rest only another replica knows of can still leave it with
    /// none).
    pub fn can_move(&self) -> bool {
        if !self.routes.proxied {
            return self.moves_on_block();
        }
        if self.keeps_retiring() {
            return true;
        }
        let current = self.current.load(Ordering::Relaxed);
        let rested = self
            .rested
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = Instant::now();
        (0..self.routes.routes.len()).any(|i| {
            i != current && !rested.contains(&i) && self.routes.rests.resting_for(i, now).is_none()
        })
    }

    /// The current route met a block signal or failed (`reason`, for logs): on a proxy, rest
    /// it for the cool-down (fleet-wide with Redis; not for a lease that rests nothing) and
    /// move to the next proxy not resting that this lookup has not left yet, presenting the
    /// next profile. This is the one way
    /// for a source to say "rest this proxy and try another" (a region lock, say); the
    /// sources' HTTP block signals and proxy failures already come here through the fetch
    /// fetcher.
    ///
    /// On the direct route nothing rests; the block is counted. The lease moves to the next
    /// profile while the lookup has not presented them all ([`Switch::Moved`]), else (and
    /// for a region lock) there is nowhere to go ([`Switch::Direct`]).
    pub async fn rest_and_switch(&self, reason: &'static str) -> Switch {
        let index = self.current.load(Ordering::Relaxed);
        let route = &self.routes.routes[index];
        route.blocks.increment(1);
        if !self.routes.proxied {
            if reason == REGION_LOCKED || !self.moves_on_block() {
                return Switch::Direct;
            }
            self.next_profile(reason);
            return Switch::Moved;
        }
        let mut rest = self.rests.then_some(reason);
        if let Some(gateway) = route.gateway()
            && !PROXY_FAILURES.contains(&reason)
        {
            match self.retire_session(index, gateway).await {
                AfterBlock::NewSession => {
                    self.next_profile(reason);
                    return Switch::Moved;
                }
                AfterBlock::PoolRefused => rest = Some(POOL_REFUSED),
                AfterBlock::Leave => rest = None,
            }
        }
        if let Some(reason) = rest {
            self.routes.rest(index, reason).await;
        }
        match self.leave(index).await {
            Ok(next) => {
                self.go_to(next);
                self.next_profile(reason);
                Switch::Moved
            }
            Err(wait) => {
                *lock(&self.exhausted) = Some(wait);
                Switch::AllResting(wait)
            }
        }
    }

    /// Marks route `index` as left by this lookup and picks the next route it has not left
    /// that is not resting (the wait until one is free when there is none).
    async fn leave(&self, index: usize) -> Result<usize, Duration> {
        let left = {
            let mut left = lock(&self.rested);
            if !left.contains(&index) {
                left.push(index);
            }
            left.clone()
        };
        self.routes.pick(&left).await
    }
}
