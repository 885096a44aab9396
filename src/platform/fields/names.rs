//! Every name each platform has used for each field of its body: one table per platform, in
//! this one file, each name with the document form and the date it was seen.
//!
//! A reader finds the requested user's object (at a known place, or by the anchored search),
//! then reads every field through its platform's table: the first name that gives a usable
//! value wins, so a form that renames a count to a name listed here still reads. A name
//! starts at the user's own object, or (short-video) at the object that holds it (`userInfo`,
//! whose `stats` and `statsV2` sit beside its `user`). When a platform is seen using a new
//! name, it is added here with its form and date, and `docs/<platform>.md` points here.

use super::table::{Field, Kind, Name, Start, Table};

/// A name that starts at the user's own object.
const fn user(path: &'static str, form: &'static str, seen: &'static str) -> Name {
    Name {
        start: Start::User,
        path,
        form,
        seen,
    }
}

/// A name that starts at the object holding the user's object.
const fn holder(path: &'static str, form: &'static str, seen: &'static str) -> Name {
    Name {
        start: Start::Holder,
        path,
        form,
        seen,
    }
}

// Short-video forms, as the names below cite them.
const PAGES: &str = "every page era's `user` (`__NEXT_DATA__`, `SIGI_STATE`, \
                     `__UNIVERSAL_DATA_FOR_REHYDRATION__`) and the embed's `userInfo`";
const PAGE_ERAS: &str = "every page era's `user`";
const SINCE_2020: &str = "2020 on: real captures of 2021-01, 2022 and 2026-01; \
                          embed: kaifcodec/user-scanner@b30150a8 (2026-08-05)";
const PAGES_SINCE: &str = "2020 on: real captures of 2021-01, 2022 and 2026-01";
const STATS: &str = "`stats` beside `user` (rounded on big accounts since 2024)";
const STATS_SEEN: &str = "every era: real captures of 2021-01, 2022 and 2026-01";
const STATS_V2: &str = "`statsV2` beside `user`: exact counts as decimal strings";
const STATS_V2_SEEN: &str = "2024 on: davidteather/TikTok-Api#1143 (2024-04); \
                             TobyG74/tiktok-api-dl#56 (2025-07-31); real capture of 2026-01";
const EMBED: &str = "the embed's flat `userInfo` (`/embed/@name`), signed 32-bit";
const EMBED_SEEN: &str = "2026-08: kaifcodec/user-scanner@b30150a8 (2026-08-05), #515";

/// A short-video count: exact `statsV2`, then `stats`, then the embed's flat name.
const fn sv_count(key: &'static str, names: &'static [Name]) -> Field {
    field(key, Kind::Count, names)
}

/// The short-video body's fields (`userInfo.user` then `userInfo.stats`, in the body's order).
const SHORT_VIDEO_FIELDS: &[Field] = &[
    field("id", Kind::Text, &[user("id", PAGES, SINCE_2020)]),
    field(
        "uniqueId",
        Kind::Text,
        &[
            user("uniqueId", PAGES, SINCE_2020),
            user(
                "unique_id",
                "the snake-case spelling the platform's app answers use; for moved objects",
                "named in the 2026-09 report to us; not found in the stored peer material",
            ),
        ],
    ),
    field(
        "nickname",
        Kind::Text,
        &[user("nickname", PAGES, SINCE_2020)],
    ),
    field(
        "signature",
        Kind::Text,
        &[user("signature", PAGES, SINCE_2020)],
    ),
    field(
        "verified",
        Kind::Flag,
        &[user("verified", PAGES, SINCE_2020)],
    ),
    field(
        "privateAccount",
        Kind::Flag,
        &[user("privateAccount", PAGES, SINCE_2020)],
    ),
    field(
        "avatarThumb",
        Kind::Text,
        &[
            user("avatarThumb", PAGE_ERAS, PAGES_SINCE),
            user("avatarThumbUrl", EMBED, EMBED_SEEN),
        ],
    ),
    field(
        "avatarMedium",
        Kind::Text,
        &[user("avatarMedium", PAGE_ERAS, PAGES_SINCE)],
    ),
    field(
        "avatarLarger",
        Kind::Text,
        &[user("avatarLarger", PAGE_ERAS, PAGES_SINCE)],
    ),
    field(
        "secUid",
        Kind::Text,
        &[user(
            "secUid",
            PAGE_ERAS,
            "2020 on: real capture of 2022; yt-dlp/yt-dlp@81ecd58b (2026-08-21)",
        )],
    ),
    field(
        "relation",
        Kind::Code,
        &[user("relation", PAGE_ERAS, PAGES_SINCE)],
    ),
    field(
        "openFavorite",
        Kind::Flag,
        &[user("openFavorite", PAGE_ERAS, PAGES_SINCE)],
    ),
    field(
        "bioLink",
        Kind::Text,
        &[user(
            "bioLink.link",
            "every page era's `user` (`{\"link\": …, \"risk\": …}`); never the embed",
            "2022 on: real captures of 2022, 2024-02 and 2026-01; FxEmbed (2026-08)",
        )],
    ),
    field(
        "createTime",
        Kind::Count,
        &[user(
            "createTime",
            "every page era's `user`, unix seconds (`0` when hidden); never the embed",
            "2020 on: real captures of 2021-01, 2022, 2024-02 and 2026-01",
        )],
    ),
    field(
        "language",
        Kind::Text,
        &[user(
            "language",
            "the `__UNIVERSAL_DATA_FOR_REHYDRATION__` `user`; never the embed",
            "2024 on: real captures of 2024-02 and 2026-01",
        )],
    ),
    field(
        "isOrganization",
        Kind::Switch,
        &[user(
            "isOrganization",
            "the 2026 `__UNIVERSAL_DATA_FOR_REHYDRATION__` `user`, spelled `0`/`1`",
            "2026 on: real capture of 2026-01",
        )],
    ),
    sv_count(
        "followerCount",
        &[
            holder("statsV2.followerCount", STATS_V2, STATS_V2_SEEN),
            holder("stats.followerCount", STATS, STATS_SEEN),
            user("followerCount", EMBED, EMBED_SEEN),
        ],
    ),
    sv_count(
        "followingCount",
        &[
            holder("statsV2.followingCount", STATS_V2, STATS_V2_SEEN),
            holder("stats.followingCount", STATS, STATS_SEEN),
            user("followingCount", EMBED, EMBED_SEEN),
        ],
    ),
    Field {
        stand_in: Some("heartCount"),
        ..sv_count(
            "heart",
            &[
                holder("statsV2.heart", STATS_V2, STATS_V2_SEEN),
                holder("stats.heart", STATS, STATS_SEEN),
                user(
                    "heartCount",
                    "the embed's one like count, which both of the body's spellings take",
                    EMBED_SEEN,
                ),
            ],
        )
    },
    Field {
        stand_in: Some("heart"),
        ..sv_count(
            "heartCount",
            &[
                holder("statsV2.heartCount", STATS_V2, STATS_V2_SEEN),
                holder("stats.heartCount", STATS, STATS_SEEN),
                user("heartCount", EMBED, EMBED_SEEN),
            ],
        )
    },
    sv_count(
        "videoCount",
        &[
            holder("statsV2.videoCount", STATS_V2, STATS_V2_SEEN),
            holder("stats.videoCount", STATS, STATS_SEEN),
            user(
                "videoCount",
                EMBED,
                "read when present; the 2026-08 embed leaves it out",
            ),
        ],
    ),
    sv_count(
        "diggCount",
        &[
            holder("statsV2.diggCount", STATS_V2, STATS_V2_SEEN),
            holder("stats.diggCount", STATS, STATS_SEEN),
            user(
                "diggCount",
                EMBED,
                "read when present; the 2026-08 embed leaves it out",
            ),
        ],
    ),
];

/// The short-video platform's table.
pub static SHORT_VIDEO: Table = Table::new(
    "short-video",
    SHORT_VIDEO_FIELDS,
    "uniqueId",
    "user",
    "followerCount",
    // kaifcodec/user-scanner@b30150a8 (2026-08-05); TobyG74/tiktok-api-dl#56 (2025-07-31).
    true,
);

/// A field of `kind` called `key` in the body, with its names.
const fn field(key: &'static str, kind: Kind, names: &'static [Name]) -> Field {
    Field {
        key,
        kind,
        names,
        stand_in: None,
    }
}

// Photo-share forms, as the names below cite them.
const EDGE: &str = "the edge-style user of `web_profile_info` and the legacy `_sharedData` page";
const EDGE_SEEN: &str = "2021 to 2026: real captures of 2021-04, 2022 and 2024-03; \
                         instaloader/instaloader#2701 (2026-06-16)";
const MOBILE: &str = "the mobile API's names: the page's `xig_user_by_username` object and the \
                      profile query's `data.user` (PolarisProfilePageContentQuery)";
const MOBILE_SEEN: &str = "2026: instaloader/instaloader@78bbd697 (2026-03-22); \
                           mifi/SimpleInstaBot#329 (2026-09-14)";
const ALL_FORMS: &str = "every form: edge-style, xig object, profile query";

/// The photo-share body's fields, in the body's order.
const PHOTO_SHARE_FIELDS: &[Field] = &[
    field(
        "id",
        Kind::Text,
        &[
            user("pk", MOBILE, MOBILE_SEEN),
            user(
                "pk_id",
                "the xig object of some 2026 builds",
                "2026 (the service's earlier reading, kept)",
            ),
            user(
                "id",
                "edge-style user, the preloaded `web_profile_info` answer and the profile \
                 query (never the xig object, whose `id` is another id)",
                EDGE_SEEN,
            ),
        ],
    ),
    field(
        "username",
        Kind::Text,
        &[user("username", ALL_FORMS, EDGE_SEEN)],
    ),
    field(
        "full_name",
        Kind::Text,
        &[user("full_name", ALL_FORMS, EDGE_SEEN)],
    ),
    field(
        "biography",
        Kind::Text,
        &[user("biography", ALL_FORMS, EDGE_SEEN)],
    ),
    field(
        "profile_pic_url",
        Kind::Text,
        &[user("profile_pic_url", ALL_FORMS, EDGE_SEEN)],
    ),
    field(
        "profile_pic_url_hd",
        Kind::Text,
        &[
            user(
                "hd_profile_pic_url_info.url",
                MOBILE,
                "2026: instaloader/instaloader@78bbd697 (2026-03-22); \
                 saschaheim/instantgram#49 (2026-08-05); mifi/SimpleInstaBot#329 (2026-09-14)",
            ),
            user("profile_pic_url_hd", EDGE, EDGE_SEEN),
        ],
    ),
    field(
        "is_verified",
        Kind::Flag,
        &[user("is_verified", ALL_FORMS, EDGE_SEEN)],
    ),
    field(
        "is_private",
        Kind::Flag,
        &[user("is_private", ALL_FORMS, EDGE_SEEN)],
    ),
    field(
        "edge_followed_by",
        Kind::Count,
        &[
            user("follower_count", MOBILE, MOBILE_SEEN),
            user("edge_followed_by.count", EDGE, EDGE_SEEN),
        ],
    ),
    field(
        "edge_follow",
        Kind::Count,
        &[
            user("following_count", MOBILE, MOBILE_SEEN),
            user("edge_follow.count", EDGE, EDGE_SEEN),
        ],
    ),
    field(
        "edge_owner_to_timeline_media",
        Kind::Count,
        &[
            user("media_count", MOBILE, MOBILE_SEEN),
            user("edge_owner_to_timeline_media.count", EDGE, EDGE_SEEN),
        ],
    ),
    field(
        "external_url",
        Kind::Text,
        &[
            user("external_url", ALL_FORMS, EDGE_SEEN),
            user(
                "external_url_linkshimmed",
                "the edge-style user: the same link wrapped in the redirector",
                "2024-03: real captures of 2024-03",
            ),
        ],
    ),
    field(
        "bio_links",
        Kind::List,
        &[user(
            "bio_links",
            "every form: `[{\"url\", \"lynx_url\", \"title\", \"link_type\"}]`",
            "2023 on: real captures of 2024-03; scrapfly-scrapers (2026-07)",
        )],
    ),
    field(
        "pronouns",
        Kind::List,
        &[user(
            "pronouns",
            ALL_FORMS,
            "2022 on: real captures of 2024-03 (`[\"she\", \"her\", \"hers\"]`, `[]`)",
        )],
    ),
    field(
        "category_name",
        Kind::Text,
        &[user(
            "category_name",
            "every form (`\"\"` or `null` when the owner hides it)",
            "2021 on: real captures of 2021-04 and 2024-03",
        )],
    ),
];

/// The photo-share platform's table.
pub static PHOTO_SHARE: Table = Table::new(
    "photo-share",
    PHOTO_SHARE_FIELDS,
    "username",
    // No known form nests the user in a holder whose members are the user's counts.
    "user",
    "edge_followed_by",
    false,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_has_at_most_two_steps_a_form_and_a_date() {
        for table in [&SHORT_VIDEO, &PHOTO_SHARE] {
            assert!(table.fields.len() < 256);
            assert!(table.field(table.username).is_some(), "{}", table.platform);
            assert!(table.field(table.followers).is_some(), "{}", table.platform);
            for field in table.fields {
                assert!(!field.names.is_empty() && field.names.len() < 256);
                if let Some(other) = field.stand_in {
                    assert!(table.field(other).is_some(), "{}", field.key);
                }
                for name in field.names {
                    assert!(name.path.split('.').count() <= 2, "{}", name.path);
                    assert!(
                        !name.form.is_empty() && !name.seen.is_empty(),
                        "{}",
                        name.path
                    );
                }
            }
        }
    }
}
