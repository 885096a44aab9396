//! The platform contract: what one platform supplies, so that the shared fetcher
//! ([`fetcher`](super::fetcher)) can look a name up there.
//!
//! A platform says which documents to ask for and in what order, how to request each, and
//! what an answer means ([`Reading`]); it never sends, retries, rests a proxy or captures a
//! page itself. Both platforms implement it in the same shape, each in its folder's `site.rs`.

use std::convert::Infallible;
use std::time::Duration;

use reqwest::header::HeaderMap;
use url::Url;

use super::{Body, Platform, Profile};
use crate::config::Settings;
use crate::fleet::Fleet;
use crate::fleet::query_ids::QueryIds;
use crate::upstream::egress::RouteLease;
use crate::upstream::{Form, Response};
use crate::username::{Subject, Username};

/// One platform, as the fetcher drives it and the API documents it.
pub trait Site: Send + Sync + Sized + 'static {
    /// Which platform this is: the metrics label, the username rule, the settings section.
    const PLATFORM: Platform;
    /// How the API documents the platform's lookup route.
    const API: Api;
    /// The platform's success body, exactly as the API answers it.
    type Body: Body;
    /// Whether a block is waited out with backoff and asked again (on a direct route), or is
    /// final at once and left to the breaker (a captcha only gets worse when repeated).
    const RETRIES_BLOCKS: bool;
    /// One kind of document the platform serves a profile in (a page, a JSON endpoint): one
    /// of its sources.
    type Doc: Document;
    /// A hurdle an answer can put before the real page (a proof-of-work challenge); use
    /// [`std::convert::Infallible`] when the platform has none.
    type Hurdle: Send + 'static;
    /// Every source, in the order of the platform's registry line (a test holds the labels
    /// equal). A lookup asks those `<section>.sources` names, in that order, the next only
    /// when one had nothing usable.
    const DOCUMENTS: &'static [Self::Doc];
    /// The block reasons whose document drift capture keeps (as it keeps every unreadable
    /// one): blocks that are a page of their own, worth seeing when the platform changes.
    const CAPTURED_BLOCKS: &'static [&'static str] = &[];

    /// Builds the platform's own state from the settings (its section is
    /// `settings.platform(Self::PLATFORM)`); what it learns for the fleet goes through `fleet`.
    fn new(settings: &Settings, fleet: &Fleet) -> Self;

    /// The URL of `doc` for `name`.
    fn url(&self, doc: Self::Doc, name: &Username) -> Url;

    /// The request headers of `doc`; `route` holds the cookies this route was given.
    fn headers(&self, doc: Self::Doc, name: &Username, route: &RouteLease<'_>) -> HeaderMap;

    /// The form `doc`'s request posts for `name`: `None` (the default) for a document that is
    /// a GET of its URL. `id` is the user's platform id, given only for a document asked by id
    /// ([`Document::by_id`]) once one was learned for the name. Async: a query's id may be one
    /// the fleet learned.
    fn form(
        &self,
        doc: Self::Doc,
        name: &Username,
        id: Option<&str>,
        route: &RouteLease<'_>,
    ) -> impl Future<Output = Option<Form>> + Send {
        let _ = (doc, name, id, route);
        async { None }
    }

    /// What an answer to `doc` (posted with `form`, if any) on `route` teaches the site
    /// beyond its reading: the query ids a page preloads, a query id the platform retired, a
    /// token the route's next requests repeat. Nothing by default.
    fn learn(
        &self,
        doc: Self::Doc,
        form: Option<&Form>,
        response: &Response,
        route: &RouteLease<'_>,
    ) -> impl Future<Output = ()> + Send {
        let _ = (doc, form, response, route);
        async {}
    }

    /// The documents to read to learn again what the site learns from answers (a query's
    /// id, after the query answered "changed"), when the fleet's turn to look is this
    /// replica's: URLs to GET in order, each read by [`Site::learn_from`], whose links
    /// ([`Site::linked`]) may add more. Empty (the default) when nothing is due. Asked after
    /// each lookup; the fetcher reads them in the background, as a probe.
    fn rediscovery(&self) -> impl Future<Output = Vec<Url>> + Send {
        async { Vec::new() }
    }

    /// The headers a rediscovery's reads go with (a browser's navigation).
    fn discovery_headers(&self) -> HeaderMap {
        HeaderMap::new()
    }

    /// What a document read for a rediscovery teaches: true when the site learned all it
    /// looked for (nothing more is read).
    fn learn_from(&self, response: &Response) -> impl Future<Output = bool> + Send {
        let _ = response;
        async { false }
    }

    /// The documents a rediscovery reads next after `response` (a page's JS bundles).
    fn linked(&self, response: &Response) -> impl Future<Output = Vec<Url>> + Send {
        let _ = response;
        async { Vec::new() }
    }

    /// The query ids the site posts and learns, when it has any (`/status` shows them).
    fn query_ids(&self) -> Option<&QueryIds> {
        None
    }

    /// A document that completes `found`: a field the source that read it could not give
    /// (the photo-share post count, which only its embed page still gives a guest). Asked on
    /// the same route right after the source, counted as any request; `None` (the default)
    /// when the profile is complete or the platform has no such document.
    fn complement(&self, found: &Profile) -> Option<Self::Doc> {
        let _ = found;
        None
    }

    /// How many times the complement is asked while it answers a server error, each on a
    /// fresh session where the route has sessions.
    fn complement_attempts(&self) -> u32 {
        1
    }

    /// `found` completed by an answer of its complement `doc`.
    fn completed(
        &self,
        doc: Self::Doc,
        response: &Response,
        found: &Profile,
        name: &Username,
    ) -> Completion {
        let _ = (doc, response, found, name);
        Completion::Withheld
    }

    /// What one answer to a request for `doc` means: the platform's block signals and its
    /// extractor, applied to a response whatever its status.
    fn read(&self, doc: Self::Doc, response: &Response, name: &Username) -> SiteReading<Self>;

    /// Clears a hurdle so that `url` can be asked again on `route` (e.g. by solving the
    /// challenge and putting its cookie in the route's jar); false when it could not be.
    fn clear(
        &self,
        hurdle: Self::Hurdle,
        url: &Url,
        route: &RouteLease<'_>,
    ) -> impl Future<Output = bool> + Send;

    /// What the lookup comes to when no document of the plan answered and none was blocked
    /// (a plan a document was blocked in ends blocked, with the longest wait); `misses` holds
    /// what each document asked said that was of no use (inconclusive, unreadable, a block it
    /// handed over), one per document, in the order asked.
    fn conclude(&self, misses: &[(Self::Doc, SiteReading<Self>)]) -> SiteReading<Self> {
        let why = misses
            .iter()
            .map(|(doc, miss)| format!("{}: {}", doc.label(), miss.why()))
            .collect::<Vec<_>>()
            .join("; ");
        Reading::Unreadable(why)
    }

    /// The platform's extractor on one document of any of its kinds: what it says about
    /// `requested` (a lookup's name, or whoever a saved document is about).
    fn extract(document: &[u8], requested: Subject<'_>) -> Reading;

    /// What an answer of `doc` that said nothing usable ([`Reading::Inconclusive`], reason
    /// `why`) says about the document itself, when the document is asked on its own (the
    /// canary's probe of one source, and drift capture). By default nothing: the document
    /// withholds that account by design.
    fn alone(doc: Self::Doc, why: &str) -> Alone {
        let _ = (doc, why);
        Alone::Withheld
    }
}

/// What an answer of a complementing document ([`Site::complement`]) gave.
#[derive(Clone, Debug, PartialEq)]
pub enum Completion {
    /// The profile with the missing field filled in.
    Done(Box<Profile>),
    /// A server error: worth asking again, on a fresh session.
    Again,
    /// The document could not give it (refused, not there): the field stays withheld.
    Withheld,
}

/// What a document's inconclusive answer means for the document itself, asked on its own
/// ([`Site::alone`]): whether the source is at fault, refused us, or withholds that account.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alone {
    /// The source does not serve this kind of account (a private one on the short-video
    /// embed, a business one on the photo-share JSON): nothing is learned about the source.
    Withheld,
    /// The document should have been readable and was not: the source's shape moved (it is
    /// kept by drift capture).
    Unreadable,
    /// The answer is how the platform refuses us (an absence it also claims when throttling).
    Refused,
}

/// Why a document asked by id was skipped: no answer about the name gave its id yet.
pub const NO_KNOWN_ID: &str = "no_known_id";

/// One of a platform's sources: a kind of document it serves a profile in.
pub trait Document: Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// Its name in the registry line, `<section>.sources`, `x-source`, logs and metrics.
    fn label(self) -> &'static str;

    /// Whether the document gives a public account's post count, so that the canary holds
    /// it to one (every document gives followers, for every kind of account). False where
    /// the document leaves it out for some public accounts (the short-video embed always, the
    /// photo-share page for business accounts).
    fn gives_posts(self) -> bool {
        true
    }

    /// The documented nullable fields the document never gives (dotted paths of the body, as
    /// [`Body::unset`] names them): when the profile came from it, each of them that is `null`
    /// is one the platform withheld, and `Profile-Withheld` names it. None by default.
    fn withholds(self) -> &'static [&'static str] {
        &[]
    }

    /// Whether the document is asked by the user's platform id rather than by name: the id
    /// is learned from an earlier answer about the name (kept by the fleet's
    /// [`KnownIds`](crate::fleet::ids::KnownIds)), and a name without one skips the document
    /// as inconclusive ([`NO_KNOWN_ID`]). Must agree with the platform's registry line
    /// (`by_id`, [`Platform::sources_by_id`](crate::registry::Platform::sources_by_id)), from
    /// which the configuration checks that a source asked by name comes first (a test checks
    /// both say the same).
    fn by_id(self) -> bool {
        false
    }
}

/// What the OpenAPI document says of one platform's lookup route that only the platform knows;
/// the rest (the statuses, the problem bodies, the username rule) is the same for every
/// platform.
#[derive(Clone, Copy, Debug)]
pub struct Api {
    /// The example username (one its stand-in serves).
    pub example_username: &'static str,
    /// The description of the 200 answer.
    pub found: &'static str,
    /// Whether the platform withholds profiles by region, so that 451 `region_locked` is an
    /// answer of the route.
    pub region_locks: bool,
    /// Whether the platform shows some profiles only to logged-in viewers, so that 403
    /// `profile_restricted` is an answer of the route.
    pub restricts: bool,
}

/// A site's reading of one answer: the boxed profile and the site's own hurdle.
pub type SiteReading<S> = Reading<Box<Profile>, <S as Site>::Hurdle>;

/// What one document says about the requested user, in the platform's own terms: the one
/// vocabulary of a document, from the extractor up to the fetcher, which decides what to do
/// with it (answer, retry, follow, clear the hurdle, ask the next document).
///
/// An extractor reads a document's bytes into a `Reading<P>` of its platform's own body `P`,
/// and never puts a hurdle up (the default `H`, [`Infallible`]); a site reads a whole answer
/// (its status, redirects and hurdles too) into a `Reading<Box<Profile>, S::Hurdle>` ([`SiteReading`]). The
/// variants an extractor gives are the first six; the others come from a site's reading of an
/// answer, or from a site concluding a plan.
#[derive(Clone, Debug, PartialEq)]
pub enum Reading<P = Box<Profile>, H = Infallible> {
    /// The requested user's profile.
    Found(P),
    /// The platform says the user does not exist.
    NotFound,
    /// The platform withholds the profile from the region we asked from.
    RegionLocked,
    /// The platform shows the profile only to logged-in viewers.
    Restricted,
    /// The platform refused us (captcha, login wall, app shell without data, a status);
    /// `retry_after` is its own `Retry-After`, when it sent one.
    Blocked {
        /// The signal seen, for logs and metrics.
        reason: &'static str,
        /// The platform's `Retry-After`.
        retry_after: Option<Duration>,
    },
    /// The document holds no profile we can read, though it should have: it is kept by drift
    /// capture, then the next document is asked. The text says why (for the log only).
    Unreadable(String),
    /// No source said anything about the user and none refused us (a source that answers
    /// "private or missing" alike): 429 `upstream_blocked` like a block, since the platform
    /// keeps the answer from us, but the route is not to blame, so no proxy rests for it and
    /// the breaker does not count it. The text is the reason, for logs and metrics.
    Withheld(&'static str),
    /// A server error or a transport failure (with its category): worth one more try, then
    /// the platform is unavailable.
    ServerError(String, Option<crate::upstream::Cause>),
    /// Nothing we will read (an unexpected status, a redirect off the platform): final.
    Unavailable(String),
    /// A redirect to follow on the platform's own host.
    Follow(Url),
    /// A hurdle to clear before asking again.
    Hurdle(H),
    /// Nothing usable in this document, without it being wrong: ask the next one.
    Inconclusive(&'static str),
}

impl<P, H> Reading<P, H> {
    /// A block the platform named no wait for (the fetcher then tells the caller its own).
    pub fn blocked(reason: &'static str) -> Self {
        Reading::Blocked {
            reason,
            retry_after: None,
        }
    }

    /// A word for what it is, for metrics and blame's signal: a block's reason, `http_5xx`,
    /// `unreadable`, or the variant's name.
    pub fn why_static(&self) -> &'static str {
        match self {
            Reading::Blocked { reason, .. } => reason,
            Reading::Withheld(why) | Reading::Inconclusive(why) => why,
            Reading::ServerError(..) => "failed",
            Reading::Unreadable(_) => "unreadable",
            Reading::Unavailable(_) => "unavailable",
            Reading::Found(_) => "found",
            Reading::NotFound => "not_found",
            Reading::RegionLocked => "region_locked",
            Reading::Restricted => "restricted",
            Reading::Follow(_) => "redirect",
            Reading::Hurdle(_) => "hurdle",
        }
    }

    /// What it says, in its own text or a word, for the log (a block's reason, why a document
    /// was of no use).
    pub fn why(&self) -> &str {
        match self {
            Reading::Found(_) => "found",
            Reading::NotFound => "not_found",
            Reading::RegionLocked => "region_locked",
            Reading::Restricted => "restricted",
            Reading::Blocked { reason, .. } => reason,
            Reading::Withheld(why) | Reading::Inconclusive(why) => why,
            Reading::Unreadable(why) | Reading::ServerError(why, _) | Reading::Unavailable(why) => {
                why
            }
            Reading::Follow(_) => "redirect",
            Reading::Hurdle(_) => "hurdle",
        }
    }
}

impl<P> Reading<P> {
    /// An extractor's reading with its profile mapped by `f` (to the erased [`Profile`]), as
    /// the reading of a site with any hurdle: an extractor never puts one up.
    pub fn map<Q, H>(self, f: impl FnOnce(P) -> Q) -> Reading<Q, H> {
        match self {
            Reading::Found(p) => Reading::Found(f(p)),
            Reading::NotFound => Reading::NotFound,
            Reading::RegionLocked => Reading::RegionLocked,
            Reading::Restricted => Reading::Restricted,
            Reading::Blocked {
                reason,
                retry_after,
            } => Reading::Blocked {
                reason,
                retry_after,
            },
            Reading::Unreadable(why) => Reading::Unreadable(why),
            Reading::Withheld(why) => Reading::Withheld(why),
            Reading::ServerError(why, cause) => Reading::ServerError(why, cause),
            Reading::Unavailable(why) => Reading::Unavailable(why),
            Reading::Follow(url) => Reading::Follow(url),
            Reading::Hurdle(never) => match never {},
            Reading::Inconclusive(why) => Reading::Inconclusive(why),
        }
    }
}
