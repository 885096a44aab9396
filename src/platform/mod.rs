//! The platform layer: what a lookup can come to, and the exact bodies the API returns.
//!
//! Everything below this module knows page formats; nothing above it does. A platform source
//! turns a [`Username`] into a [`Lookup`], and the HTTP edge maps that outcome to a status code.

pub(crate) mod fields;
pub mod offline;
pub mod photo_share;
pub mod short_video;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::upstream::gate::Verdict;
use crate::username::Username;

pub use crate::username::Platform;

/// What a lookup came to: the platform layer's whole vocabulary.
#[derive(Clone, Debug, PartialEq)]
pub enum Lookup {
    /// The profile was read; private accounts are `Found` with their private flag set.
    Found(Box<Profile>),
    /// The platform says the user does not exist (or is banned).
    NotFound,
    /// The platform refused us (throttle, login wall, captcha) and retries did not help.
    Blocked {
        /// Why we think it is a block, for logs and metrics.
        reason: &'static str,
        /// How long the caller should wait, when we know.
        retry_after: Option<Duration>,
    },
    /// The platform withholds the profile from the network region we asked from.
    RegionLocked,
    /// We chose not to send the request: the outbound budget for the platform is spent.
    Overloaded {
        /// When the budget will have room again.
        retry_after: Duration,
    },
    /// The page was fetched but held no readable profile.
    ExtractionFailed(String),
    /// The platform could not be reached, timed out, or sent something we would not read.
    Unavailable(String),
}

impl Lookup {
    /// A short, stable label of the outcome for metrics and the access log.
    pub fn label(&self) -> &'static str {
        match self {
            Lookup::Found(profile) if profile.is_private() => "private",
            Lookup::Found(_) => "ok",
            Lookup::NotFound => "not_found",
            Lookup::Blocked { .. } => "blocked",
            Lookup::Overloaded { .. } => "overloaded",
            Lookup::RegionLocked => "region_locked",
            Lookup::ExtractionFailed(_) => "extraction_failed",
            Lookup::Unavailable(_) => "unavailable",
        }
    }
}

/// What one platform source reports for one lookup: the outcome and what it cost upstream.
#[derive(Clone, Debug)]
pub struct Report {
    /// The outcome.
    pub lookup: Lookup,
    /// How many HTTP requests were sent to the platform for it.
    pub upstream_requests: u32,
}

/// What a single page or JSON document says about the requested user, before any
/// retry or fallback decision: the extractors' return type.
#[derive(Clone, Debug, PartialEq)]
pub enum PageVerdict<P> {
    /// The document holds the requested user's profile.
    Profile(P),
    /// The document says the user does not exist.
    NotFound,
    /// The document is a refusal (captcha, login wall, app shell without data).
    Blocked(&'static str),
    /// The document says the profile is withheld from the region the request came from.
    RegionLocked,
    /// The document holds no profile we can read; the text says why (for the log only).
    Unreadable(String),
}

/// A profile of either platform, as the cache and the edge carry it.
#[derive(Clone, Debug, PartialEq)]
pub enum Profile {
    /// A short-video profile.
    ShortVideo(ShortVideoProfile),
    /// A photo-share profile.
    PhotoShare(PhotoShareProfile),
}

impl Profile {
    /// Whether the platform flags the account as private.
    pub fn is_private(&self) -> bool {
        match self {
            Profile::ShortVideo(p) => p.user_info.user.private_account,
            Profile::PhotoShare(p) => p.is_private,
        }
    }

    /// The exact response body, serialised once so that cache hits cost a copy of bytes.
    pub fn to_json(&self) -> Vec<u8> {
        let bytes = match self {
            Profile::ShortVideo(p) => serde_json::to_vec(p),
            Profile::PhotoShare(p) => serde_json::to_vec(p),
        };
        // Serialising plain structs of strings, bools and integers cannot fail.
        bytes.unwrap_or_default()
    }
}

/// The short-video success body: `{"userInfo":{"user":{…},"stats":{…}}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ShortVideoProfile {
    /// The profile and its counts.
    #[serde(rename = "userInfo")]
    pub user_info: ShortVideoUserInfo,
}

/// The `userInfo` object of the short-video body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ShortVideoUserInfo {
    /// Who the user is.
    pub user: ShortVideoUser,
    /// The user's counts.
    pub stats: ShortVideoStats,
}

/// The `user` object of the short-video body; strings as the platform's JSON holds them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShortVideoUser {
    /// The platform's numeric user id, as a string.
    pub id: String,
    /// The handle (what the URL carries), in the platform's spelling.
    pub unique_id: String,
    /// The display name.
    pub nickname: String,
    /// The bio.
    pub signature: String,
    /// Whether the platform verified the account.
    pub verified: bool,
    /// Whether the account is private (its counts may then be limited).
    pub private_account: bool,
    /// Small avatar URL.
    pub avatar_thumb: String,
    /// Medium avatar URL.
    pub avatar_medium: String,
    /// Large avatar URL.
    pub avatar_larger: String,
    /// The platform's stable secondary user id.
    pub sec_uid: String,
    /// The viewer's relation to the user (always 0 for an anonymous viewer).
    pub relation: i64,
    /// Whether the user's liked videos are public.
    pub open_favorite: bool,
}

/// The `stats` object of the short-video body; `null` where the platform gives no count.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShortVideoStats {
    /// Followers (exact when the page carries exact counts).
    #[schema(format = "uint64")]
    pub follower_count: Option<u64>,
    /// Accounts followed.
    #[schema(format = "uint64")]
    pub following_count: Option<u64>,
    /// Likes received.
    #[schema(format = "uint64")]
    pub heart: Option<u64>,
    /// Likes received (the platform's second spelling of the same count).
    #[schema(format = "uint64")]
    pub heart_count: Option<u64>,
    /// Videos posted.
    #[schema(format = "uint64")]
    pub video_count: Option<u64>,
    /// Videos liked.
    #[schema(format = "uint64")]
    pub digg_count: Option<u64>,
}

/// The photo-share success body: a flat object in the platform's web field names.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PhotoShareProfile {
    /// The platform's numeric user id, as a string.
    pub id: String,
    /// The handle.
    pub username: String,
    /// The display name.
    pub full_name: String,
    /// The bio.
    pub biography: String,
    /// Profile picture URL.
    pub profile_pic_url: String,
    /// High-resolution profile picture URL (the plain one when no HD one is given).
    pub profile_pic_url_hd: String,
    /// Whether the platform verified the account.
    pub is_verified: bool,
    /// Whether the account is private.
    pub is_private: bool,
    /// Followers.
    pub edge_followed_by: Count,
    /// Accounts followed.
    pub edge_follow: Count,
    /// Posts.
    pub edge_owner_to_timeline_media: Count,
}

/// A `{"count": n}` object; `null` where the platform gives no count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Count {
    /// The exact count, or `null` when the platform does not give it.
    #[schema(format = "uint64")]
    pub count: Option<u64>,
}

impl Count {
    /// A count the platform gave.
    pub fn of(n: u64) -> Self {
        Self { count: Some(n) }
    }
}

/// The state a lookup needs, by platform: lets the edge call one source without knowing which.
pub struct Sources {
    /// The short-video source.
    pub short_video: short_video::ShortVideoSource,
    /// The photo-share source.
    pub photo_share: photo_share::PhotoShareSource,
}

impl Sources {
    /// Looks `name` up on the platform it was validated for.
    pub async fn lookup(&self, name: &Username) -> Report {
        match name.platform() {
            Platform::ShortVideo => self.short_video.lookup(name).await,
            Platform::PhotoShare => self.photo_share.lookup(name).await,
        }
    }
}

impl From<crate::upstream::gate::Refusal> for Lookup {
    /// What a lookup the gate refused answers: an open breaker is the platform's refusal
    /// (`upstream_blocked`), a spent outbound budget is ours (`overloaded`).
    fn from(refusal: crate::upstream::gate::Refusal) -> Self {
        use crate::upstream::gate::Refusal;
        match refusal {
            Refusal::BreakerOpen(wait) => Lookup::Blocked {
                reason: "breaker_open",
                retry_after: Some(wait),
            },
            Refusal::Busy(retry_after) => Lookup::Overloaded { retry_after },
        }
    }
}

/// Sends one request through the platform's gate and the lookup's route, counting it; the
/// piece both sources share.
///
/// A refusal of the gate (budget spent, breaker open) comes back as the `Lookup` to answer.
/// On a proxy route, a failure of the proxy itself (connect, reset, time-out, or a 407 from an
/// HTTP proxy) rests that proxy and the request goes again at once through another one; when
/// none is left, the answer is 429 `upstream_blocked` until the first proxy is back.
pub(crate) async fn send(
    route: &crate::upstream::routes::RouteLease<'_>,
    gate: &crate::upstream::gate::Gate,
    platform: Platform,
    url: url::Url,
    headers: reqwest::header::HeaderMap,
) -> Sent {
    use crate::upstream::routes::{Switch, is_proxy_failure};
    loop {
        if let Some(wait) = route.exhausted() {
            return Sent::Refused(proxies_resting(wait));
        }
        let _pass = match gate.pass().await {
            Ok(pass) => pass,
            Err(refused) => return Sent::Refused(Lookup::from(refused)),
        };
        crate::telemetry::upstream_request(platform.as_str());
        let result = route.get(url.clone(), headers.clone()).await;
        let failure = match &result {
            Err(err) if is_proxy_failure(err) => "proxy_failed",
            Ok(r) if r.status == reqwest::StatusCode::PROXY_AUTHENTICATION_REQUIRED => "proxy_auth",
            _ => return Sent::from(result),
        };
        if !route.is_proxied() {
            return Sent::from(result);
        }
        match route.rest_and_switch(failure).await {
            Switch::Moved => continue,
            Switch::AllResting(wait) => return Sent::Refused(proxies_resting(wait)),
            Switch::Direct => return Sent::from(result),
        }
    }
}

/// What became of one request [`send`] was asked to make: one flat outcome, so a source
/// matches three cases instead of unpacking a result inside a result.
pub(crate) enum Sent {
    /// The platform answered (any status).
    Answered(crate::upstream::Response),
    /// The request went out and no readable answer came back.
    Failed(crate::upstream::UpstreamError),
    /// The request was not sent: the gate refused it, or every proxy rests. The lookup's
    /// answer is this.
    Refused(Lookup),
}

impl From<Result<crate::upstream::Response, crate::upstream::UpstreamError>> for Sent {
    fn from(result: Result<crate::upstream::Response, crate::upstream::UpstreamError>) -> Self {
        match result {
            Ok(response) => Sent::Answered(response),
            Err(err) => Sent::Failed(err),
        }
    }
}

/// The answer when every proxy of a platform rests: 429 until the first is back.
fn proxies_resting(wait: Duration) -> Lookup {
    Lookup::Blocked {
        reason: "proxies_resting",
        retry_after: Some(wait),
    }
}

/// Runs one lookup behind the platform's breaker on one route and reports it to metrics; both
/// sources' `lookup` is this around their own steps.
///
/// The steps run on a [`RouteLease`](crate::upstream::routes::RouteLease) taken in turn. When
/// they end blocked on a proxy (any block the source recognised: 429, a login wall, a
/// captcha, …, or a region lock), that proxy rests and the steps run again at once, from the start, through
/// another proxy; a lookup rests each proxy at most once, so this ends. When every proxy
/// rests, the lookup answers 429 `upstream_blocked` with the time until the first is back.
pub(crate) async fn guarded<F>(
    gate: &crate::upstream::gate::Gate,
    routes: &crate::upstream::routes::Routes,
    platform: Platform,
    steps: F,
) -> Report
where
    F: AsyncFnOnce(&crate::upstream::routes::RouteLease<'_>) -> Lookup + Clone,
{
    let mut sent = 0;
    let lookup = match gate.admit().await {
        Err(refusal) => Lookup::from(refusal),
        Ok(ticket) => match routes.lease().await {
            // Nothing was sent, so the breaker learns nothing.
            Err(wait) => {
                gate.record(ticket, Verdict::Inconclusive).await;
                proxies_resting(wait)
            }
            Ok(route) => {
                let lookup = through_routes(&route, steps).await;
                sent = route.sent();
                let verdict = match lookup {
                    Lookup::Blocked { .. } => Verdict::Blocked,
                    Lookup::Overloaded { .. } => Verdict::Inconclusive,
                    _ => Verdict::Answered,
                };
                gate.record(ticket, verdict).await;
                lookup
            }
        },
    };
    match &lookup {
        Lookup::ExtractionFailed(why) | Lookup::Unavailable(why) => {
            tracing::warn!(platform = platform.as_str(), outcome = lookup.label(), why = %why, "lookup failed");
        }
        Lookup::Blocked { reason, .. } => {
            tracing::info!(
                platform = platform.as_str(),
                reason,
                "platform refused the lookup"
            );
        }
        _ => {}
    }
    crate::telemetry::lookup_outcome(platform.as_str(), lookup.label());
    Report {
        lookup,
        upstream_requests: sent,
    }
}

/// Runs `steps` on `route`, and again on another proxy each time they end blocked on one.
///
/// `steps` is run once per route, a fresh copy each time (the sources' steps borrow only).
async fn through_routes<F>(route: &crate::upstream::routes::RouteLease<'_>, steps: F) -> Lookup
where
    F: AsyncFnOnce(&crate::upstream::routes::RouteLease<'_>) -> Lookup + Clone,
{
    use crate::upstream::routes::Switch;
    loop {
        let lookup = steps.clone()(route).await;
        if let Some(wait) = route.exhausted() {
            return proxies_resting(wait);
        }
        let reason = match &lookup {
            Lookup::Blocked { reason, .. } => *reason,
            // SPEC: a region lock is tried on another proxy, then answered 451.
            Lookup::RegionLocked => "region_locked",
            _ => return lookup,
        };
        match route.rest_and_switch(reason).await {
            Switch::Moved => {
                tracing::debug!(
                    reason,
                    proxy = route.label(),
                    "trying the lookup on another proxy"
                );
            }
            Switch::AllResting(_) if lookup == Lookup::RegionLocked => return lookup,
            Switch::AllResting(wait) => return proxies_resting(wait),
            Switch::Direct => return lookup,
        }
    }
}

/// An upstream error as an attempt: transport faults may be retried once, the rest are final.
pub(crate) fn transport_failure<T: From<Lookup>>(
    err: crate::upstream::UpstreamError,
) -> crate::upstream::retry::Attempt<T> {
    use crate::upstream::retry::Attempt;
    let lookup = Lookup::Unavailable(err.to_string());
    if err.is_transient() {
        Attempt::Transient {
            reason: "transport",
            last: T::from(lookup),
        }
    } else {
        Attempt::Done(T::from(lookup))
    }
}

impl<P> PageVerdict<P> {
    /// Maps the profile of a verdict, keeping every other verdict as it is.
    pub fn map<Q>(self, f: impl FnOnce(P) -> Q) -> PageVerdict<Q> {
        match self {
            PageVerdict::Profile(p) => PageVerdict::Profile(f(p)),
            PageVerdict::NotFound => PageVerdict::NotFound,
            PageVerdict::Blocked(reason) => PageVerdict::Blocked(reason),
            PageVerdict::RegionLocked => PageVerdict::RegionLocked,
            PageVerdict::Unreadable(why) => PageVerdict::Unreadable(why),
        }
    }
}
