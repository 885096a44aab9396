//! The short-video platform's stand-in: invented people and numbers, written in each shape
//! the platform has used, for the demo, the service's integration tests and its benchmarks.
//!
//! Nothing here comes from a real capture. The pages are built to be hard in the ways real
//! pages are: the state is most of the page, strings carry the platform's `\u002F` escapes,
//! other users' data sits elsewhere on the page, inline scripts mention the state script's id,
//! attributes come in varied order and quoting. Generation is deterministic and cheap (a few
//! string pushes per kilobyte), so tests can build pages freely.
//!
//! `json` writes the platform's JSON (its escapes, the `user` object, video items), `state` the
//! state object of each era around them, `pages` the page around the state, `embed` the embed
//! page, `stateless` the pages without state, `moved` the platform's page in shapes no reader
//! knows, and `waf` the WAF challenge page (and the check
//! of its answer); `router` serves them, and `expected` says what the service must answer.

mod embed;
mod expected;
mod json;
mod moved;
mod pages;
mod router;
mod state;
mod stateless;
mod waf;

pub use embed::{embed_coded_error_page, embed_error_page, embed_page};
pub use expected::{expected_body, expected_embed_body, expected_private_embed_body};
pub use moved::{MOVED_STATE_ID, moved_state_page, unknown_counts_page};
pub use router::{STAND_IN, drifted_router, router};
pub use stateless::{captcha_config_page, captcha_page, maintenance_page, stateless_shell_page};
pub use waf::{waf_challenge_page, waf_cookie_is_valid};

/// The size of an ordinary profile page (what the uncached-lookup benchmark serves).
pub const DEFAULT_PAGE_SIZE: usize = 365 * 1024;

/// The size of the page the extraction benchmark reads.
pub const BENCH_PAGE_SIZE: usize = 1024 * 1024;

/// An invented account: what a sample page says about it, exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleUser {
    /// The handle, in the platform's spelling.
    pub unique_id: &'static str,
    /// The numeric user id.
    pub id: &'static str,
    /// The secondary user id.
    pub sec_uid: &'static str,
    /// The display name.
    pub nickname: &'static str,
    /// The bio, as the body returns it (JSON-decoded, never entity-decoded).
    pub signature: &'static str,
    /// Whether the account is verified.
    pub verified: bool,
    /// Whether the account is private (its page has status 10222 and limited counts).
    pub private: bool,
    /// Whether the user's liked videos are public.
    pub open_favorite: bool,
    /// Exact followers; `None` where the page leaves the count out.
    pub follower_count: Option<u64>,
    /// Exact accounts followed.
    pub following_count: Option<u64>,
    /// Exact likes received (both `heart` and `heartCount` in the body).
    pub heart_count: Option<u64>,
    /// Exact videos posted.
    pub video_count: Option<u64>,
    /// Exact videos liked.
    pub digg_count: Option<u64>,
    /// The link in the bio (`bioLink.link`); `None`: the page has no `bioLink`.
    pub bio_link: Option<&'static str>,
    /// When the account was created (unix seconds); `None`: the page says `0`.
    pub create_time: Option<u64>,
    /// The account's language; `None`: the page has no `language`.
    pub language: Option<&'static str>,
    /// Whether the account is an organization's (`isOrganization`: `1`/`0` in the current
    /// era, `true`/`false` in the older ones).
    pub is_organization: bool,
}

/// A big verified account: rounded `stats` beside exact `statsV2`, a like count past
/// `i32::MAX` (so `stats.heartCount` is negative), and a bio with `&amp;`, a quote, an emoji
/// and a URL (which the page writes with `\u002F`).
pub const PUBLIC_USER: SampleUser = SampleUser {
    unique_id: "sunny.kitchen.lab",
    id: "7000000000000000001",
    sec_uid: "MS4wLjABAAAAinventedSecUidSunnyKitchenLab0001",
    nickname: "Sunny Kitchen Lab \u{1F34B}",
    signature: "Kitchen experiments &amp; food science \u{1F34B}\n\"Taste first, measure later\"\nhttps://sunny-kitchen.example/links",
    verified: true,
    private: false,
    open_favorite: false,
    follower_count: Some(12_345_678),
    following_count: Some(321),
    heart_count: Some(2_987_654_321),
    video_count: Some(1_042),
    digg_count: Some(8_765),
    bio_link: Some("https://sunny-kitchen.example/links"),
    create_time: Some(1_500_000_000),
    language: Some("en"),
    is_organization: false,
};

/// A private account (status 10222): the page gives some counts and leaves others out.
pub const PRIVATE_USER: SampleUser = SampleUser {
    unique_id: "quiet.fox_22",
    id: "7000000000000000002",
    sec_uid: "MS4wLjABAAAAinventedSecUidQuietFox00000000002",
    nickname: "Quiet Fox",
    signature: "Friends only.",
    verified: false,
    private: true,
    open_favorite: false,
    follower_count: Some(87),
    following_count: Some(112),
    heart_count: Some(1_234),
    video_count: None,
    digg_count: None,
    bio_link: None,
    create_time: None,
    language: Some("de"),
    is_organization: false,
};

/// A small public account whose counts need no rounding.
pub const SMALL_USER: SampleUser = SampleUser {
    unique_id: "tiny.baker_7",
    id: "7000000000000000003",
    sec_uid: "MS4wLjABAAAAinventedSecUidTinyBaker0000000003",
    nickname: "Tiny Baker",
    signature: "Sourdough every Sunday.\nDMs open <3",
    verified: false,
    private: false,
    open_favorite: true,
    follower_count: Some(4_321),
    following_count: Some(210),
    heart_count: Some(56_789),
    video_count: Some(64),
    digg_count: Some(1_200),
    bio_link: Some("tiny-baker.example/bread"),
    create_time: Some(1_650_000_000),
    language: None,
    is_organization: false,
};

/// A public account whose profile page the stand-in answers with the stateless shell: only
/// the embed page gives the profile (`x-source: embed`).
pub const SHELL_PAGE_USER: SampleUser = SampleUser {
    unique_id: "late.night.loops",
    id: "7000000000000000004",
    sec_uid: "MS4wLjABAAAAinventedSecUidLateNightLoops00004",
    nickname: "Late Night Loops",
    signature: "Synth loops after midnight \u{1F3B9}\nnew one every Friday",
    verified: false,
    private: false,
    open_favorite: false,
    follower_count: Some(48_213),
    following_count: Some(97),
    heart_count: Some(1_204_577),
    video_count: Some(212),
    digg_count: Some(3_004),
    bio_link: Some("https://late-night-loops.example"),
    create_time: Some(1_600_000_000),
    language: Some("en"),
    is_organization: false,
};

/// A big account whose profile page the stand-in always answers with the "Security Check"
/// captcha page: only the embed gives it, and its like count past `i32::MAX` arrives there
/// negative.
pub const EMBED_ONLY_USER: SampleUser = SampleUser {
    unique_id: "harbor.lights.crafts",
    id: "7000000000000000005",
    sec_uid: "MS4wLjABAAAAinventedSecUidHarborLightsCraft005",
    nickname: "Harbor Lights Crafts",
    signature: "Paper lanterns & other small lights.\nhttps://harbor-lights.example",
    verified: true,
    private: false,
    open_favorite: false,
    follower_count: Some(3_456_789),
    following_count: Some(12),
    heart_count: Some(3_100_000_123),
    video_count: Some(877),
    digg_count: Some(45),
    bio_link: Some("https://harbor-lights.example"),
    create_time: Some(1_550_000_000),
    language: Some("en"),
    is_organization: true,
};

/// A public account whose profile page the stand-in serves with its state under an id no era
/// used ([`moved_state_page`]): the readers' anchored search still reads it.
pub const MOVED_PAGE_USER: SampleUser = SampleUser {
    unique_id: "paper.boat.studio",
    id: "7000000000000000006",
    sec_uid: "MS4wLjABAAAAinventedSecUidPaperBoatStudio0006",
    nickname: "Paper Boat Studio",
    signature: "Folded things that float.\nhttps://paper-boat.example",
    verified: false,
    private: false,
    open_favorite: true,
    follower_count: Some(76_543),
    following_count: Some(44),
    heart_count: Some(987_654),
    video_count: Some(130),
    digg_count: Some(2_222),
    bio_link: Some("https://paper-boat.example"),
    create_time: Some(1_700_000_000),
    language: Some("ja"),
    is_organization: true,
};

/// A big account whose profile page carries no `statsV2` and signed 32-bit counts
/// ([`wrapped_counts_page`]): its like count arrives as `-1625611536`.
pub const WRAPPED_COUNTS_USER: SampleUser = SampleUser {
    unique_id: "night.market.eats",
    id: "7000000000000000007",
    sec_uid: "MS4wLjABAAAAinventedSecUidNightMarketEats0007",
    nickname: "Night Market Eats",
    signature: "Street food after dark \u{1F362}",
    verified: true,
    private: false,
    open_favorite: false,
    follower_count: Some(1_876_543),
    following_count: Some(88),
    heart_count: Some(2_669_355_760),
    video_count: Some(2_048),
    digg_count: Some(17),
    bio_link: None,
    create_time: Some(1_620_000_000),
    language: Some("th"),
    is_organization: false,
};

/// The sample accounts only the embed page answers for, for the stand-in and the demo.
pub fn embed_users() -> [SampleUser; 2] {
    [SHELL_PAGE_USER, EMBED_ONLY_USER]
}

/// Names whose profile page the stand-in answers with one of the stateless kinds, and whose
/// embed says "private or missing": (name, the block's reason).
pub const STATELESS_BLOCK_NAMES: [(&str, &str); 4] = [
    ("shell.block.sample", "stateless_shell"),
    ("maintenance.block.sample", "maintenance"),
    ("empty.block.sample", "empty_body"),
    ("captcha.block.sample", "captcha_page"),
];

/// A name the sample upstream answers with a not-found page (status 10221).
pub const NOT_FOUND_USER: &str = "no_such_user_404";

/// A name whose profile page says status 209002 (the platform shows the account only to
/// logged-in viewers: audience controls, age gates) and whose embed says "private or
/// missing".
pub const RESTRICTED_NAME: &str = "grown.ups.only";

/// A name whose profile page is the "Security Check" captcha page with its configuration in a
/// JSON script element ([`captcha_config_page`]); its embed says "private or missing".
pub const CAPTCHA_CONFIG_NAME: &str = "captcha.config.sample";

/// The embed's error code for a private account (`"errorCode": 10222` in its error payload).
pub const EMBED_PRIVATE_CODE: i64 = 10_222;

/// The embed's error code for a missing or banned account (`"errorCode": 10221`).
pub const EMBED_MISSING_CODE: i64 = 10_221;

/// A private account whose profile page the stand-in answers with the stateless shell and
/// whose embed answers 400 with [`EMBED_PRIVATE_CODE`]: the embed alone says it is private,
/// its counts withheld ([`expected_private_embed_body`]).
pub const PRIVATE_EMBED_NAME: &str = "fern.hollow.private";

/// A name whose profile page the stand-in answers with the stateless shell and whose embed
/// answers 400 with [`EMBED_MISSING_CODE`]: the embed alone says there is no such user.
pub const MISSING_EMBED_NAME: &str = "gone.from.embed";

/// The status code of a profile the platform shows only to logged-in viewers.
pub const RESTRICTED_STATUS: i64 = 209_002;

/// Every sample account that has a profile, for tests that loop over them.
pub fn sample_users() -> Vec<SampleUser> {
    vec![PUBLIC_USER, PRIVATE_USER, SMALL_USER]
}

/// The sample account called `name` (case-insensitively), for a demo upstream's routing.
pub fn sample_user(name: &str) -> Option<SampleUser> {
    sample_users()
        .into_iter()
        .find(|u| u.unique_id.eq_ignore_ascii_case(name))
}

/// The three ways the platform has embedded its state in a profile page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Era {
    /// `<script id="__UNIVERSAL_DATA_FOR_REHYDRATION__">` (2023 on), with exact `statsV2`.
    Universal,
    /// `<script id="SIGI_STATE">` (about late 2021 to early 2024).
    Sigi,
    /// `<script id="__NEXT_DATA__">` (to late 2021).
    NextData,
}

impl Era {
    /// All eras, for tests that loop over them.
    pub const ALL: [Era; 3] = [Era::Universal, Era::Sigi, Era::NextData];
}

/// A full profile page for `user` in `era`, padded with realistic noise to about
/// `target_size` bytes (the state JSON is about three quarters of it, as on real pages).
///
/// Universal pages carry rounded `stats` plus exact `statsV2`; the older eras had no exact
/// spelling, so their `stats` hold the exact numbers (with `heartCount` overflowed to a
/// negative int32 where the count is that big). Every era yields [`expected_body`].
pub fn profile_page(era: Era, user: &SampleUser, target_size: usize) -> String {
    let status = if user.private { 10222 } else { 0 };
    pages::page(era, Subject::User(user), status, target_size)
}

/// A current-era profile page of `user` without `statsV2`, whose every count is a signed
/// 32-bit integer: a total past `i32::MAX` arrives negative (`"heartCount": -1625611536`),
/// in `heart` and `heartCount` alike, and the body must still give the real count.
pub fn wrapped_counts_page(user: &SampleUser, target_size: usize) -> String {
    pages::page(Era::Universal, Subject::Wrapped(user), 0, target_size)
}

/// A not-found page for `requested` in `era` (status 10221; 10202 in the `__NEXT_DATA__` era,
/// with `serverCode` 404), carrying suggested other users.
pub fn not_found_page(era: Era, requested: &str) -> String {
    let status = if era == Era::NextData { 10202 } else { 10221 };
    pages::page(era, Subject::Missing(requested), status, DEFAULT_PAGE_SIZE)
}

/// A current-era page whose user-detail says only `code` (10000 is the captcha), without a
/// user: for the status codes that are not profiles.
pub fn status_page(code: i64) -> String {
    pages::page(
        Era::Universal,
        Subject::Missing("status.sample"),
        code,
        48 * 1024,
    )
}

/// A current-era page whose user-detail says the profile is shown only to logged-in viewers
/// ([`RESTRICTED_STATUS`]), without the user, for `name`.
pub fn restricted_page(name: &str) -> String {
    pages::page(
        Era::Universal,
        Subject::Missing(name),
        RESTRICTED_STATUS,
        48 * 1024,
    )
}

/// A current-era app shell: the app context is there, the user-detail is not (a soft block).
pub fn shell_page() -> String {
    pages::page(Era::Universal, Subject::Shell, 0, 48 * 1024)
}

/// A page of 2022–23: `era`'s state (the profile of `user`, or the not-found state for
/// `requested` when `user` is `None`) beside a rehydration script holding only the app context,
/// that script coming first in the page (`app_context_first`) or last.
pub fn two_state_page(
    era: Era,
    user: Option<&SampleUser>,
    requested: &str,
    app_context_first: bool,
) -> String {
    let page = match user {
        Some(u) => profile_page(era, u, 40_000),
        None => {
            let status = if era == Era::NextData { 10202 } else { 10221 };
            pages::page(era, Subject::Missing(requested), status, 40_000)
        }
    };
    pages::with_app_context_script(page, app_context_first)
}

/// Whose page it is.
#[derive(Clone, Copy)]
enum Subject<'a> {
    User(&'a SampleUser),
    /// The user, with every count a signed 32-bit integer and no `statsV2` (current era only).
    Wrapped(&'a SampleUser),
    Missing(&'a str),
    Shell,
}

impl Subject<'_> {
    fn name(&self) -> &str {
        match self {
            Subject::User(u) | Subject::Wrapped(u) => u.unique_id,
            Subject::Missing(name) => name,
            Subject::Shell => "",
        }
    }
}

/// The URL of `user`'s avatar at `size` pixels, as the page and the body both give it.
fn avatar(user: &SampleUser, size: u32) -> String {
    format!(
        "https://avatars.short-video.example/tos-avt/{}~c5_{size}x{size}.jpeg?x-expires=1700000000&x-signature=InVeNtEd{size}%2Bsig%3D",
        user.id
    )
}

#[cfg(test)]
mod tests;
