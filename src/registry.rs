//! The platforms this service serves: each is registered here, once, by one line.
//!
//! A line gives the platform's identity, which every layer reads from [`Platform`] instead of
//! naming platforms itself: its folder under `platform/` and the type there that implements
//! its `Site`, its label (metrics, logs, the route `/{label}/profile/{username}`, the CLI's
//! argument), its config section (`[section]` in the settings, its environment variables, its
//! secret lists, its value ranges), its username lengths, its sources: the documents it
//! serves a profile in, in the order a lookup asks them by default (the names of
//! `<section>.sources`, of `x-source` and of the metrics), and which of them are asked by the
//! account's platform id rather than by name (`by_id`: the configuration, which cannot ask the
//! site, checks from it that a source asked by name comes before them; the site's
//! `Document::by_id` says the same, as a test checks). Everything that loops over the
//! platforms loops over [`Platform::ALL`]. The lines are given to a macro of the caller's
//! choosing by `for_each_platform!`: this module makes [`Platform`] and its facts of them,
//! `platform` its `platform::with_site`, the one `match` from a variant to its site type. Its
//! stand-in lives in the workspace's `stand-in` crate, under the platform's label. The steps
//! of adding a platform are listed in `docs/architecture.md` ("Adding a platform").
//!
//! This module sits below everything (configuration included), so it imports nothing of the
//! platform layer: a line names its folder and site type only as tokens for the platform
//! layer's own macro.

/// The registry: one line per platform, handed to `$callback!` (a `macro_rules!` in scope
/// where this is called). A line is `Variant: <folder>::<Type> { label: "…", section: "…",
/// usernames: MIN..=MAX, sources: ["…", …], by_id: ["…", …] };` (`by_id`: those of its
/// sources asked by id, often none), the platform's doc comment above it: the folder under
/// `platform/` and the type there that implements its `Site`, then its facts (in braces, so
/// that a callback that needs none of them can take them whole).
macro_rules! for_each_platform {
    ($callback:ident) => {
        $callback! {
            /// The TikTok-style short-video platform (HTML page with embedded JSON state,
            /// falling back to the smaller embed page when the page is blocked).
            ShortVideo: short_video::ShortVideo { label: "short-video", section: "short_video", usernames: 2..=24, sources: ["page", "embed"], by_id: [] };
            /// The Instagram-style photo platform (the logged-out profile query by name, the
            /// page, the profile JSON, and the profile query by pk when configured).
            PhotoShare: photo_share::PhotoShare { label: "photo-share", section: "photo_share", usernames: 1..=30, sources: ["loggedout", "page", "json", "graphql"], by_id: ["graphql"] };
        }
    };
}

pub(crate) use for_each_platform;

/// Declares [`Platform`] and its identity from the registry's lines, so that a variant and
/// its facts cannot be added apart (the folder and the site type are the platform layer's).
macro_rules! platforms {
    ($(
        $(#[$doc:meta])*
        $variant:ident: $folder:ident::$site:ident {
            label: $label:literal, section: $section:literal,
            usernames: $min:literal..=$max:literal, sources: [$($source:literal),+],
            by_id: [$($by_id:literal),*] $(,)?
        };
    )+) => {
        /// One of the platforms the service serves.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Platform {
            $($(#[$doc])* $variant,)+
        }

        impl Platform {
            /// Every platform, in the order they are registered (the API lists them so).
            pub const ALL: &'static [Platform] = &[$(Platform::$variant),+];

            /// The label in metrics, logs, the route path and the CLI: `short-video`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Platform::$variant => $label,)+
                }
            }

            /// The platform's settings section (and the prefix of its keys): `short_video`.
            pub const fn section(self) -> &'static str {
                match self {
                    $(Platform::$variant => $section,)+
                }
            }

            /// Inclusive length bounds of a username on this platform.
            pub const fn username_len(self) -> (usize, usize) {
                match self {
                    $(Platform::$variant => ($min, $max),)+
                }
            }

            /// The platform's sources, in the order a lookup asks them unless configured
            /// otherwise.
            pub const fn sources(self) -> &'static [&'static str] {
                match self {
                    $(Platform::$variant => &[$($source),+],)+
                }
            }

            /// The platform's sources asked by the account's platform id rather than by name
            /// (photo-share's `graphql`, by pk): a lookup has an id to ask them by only once a
            /// source asked by name found the account, so `<section>.sources` must list one of
            /// those before them.
            pub const fn sources_by_id(self) -> &'static [&'static str] {
                match self {
                    $(Platform::$variant => &[$($by_id),*],)+
                }
            }
        }
    };
}

for_each_platform!(platforms);

impl Platform {
    /// The platform's position in [`Platform::ALL`], for tables indexed by platform.
    pub fn index(self) -> usize {
        // Each variant is in ALL by construction (the macro lists them together).
        Platform::ALL.iter().position(|p| *p == self).unwrap_or(0)
    }

    /// The name of one of this platform's sources, as the registry spells it (a name read
    /// from elsewhere, e.g. a stored entry, is mapped back to it); `None` for an unknown name.
    pub fn source(self, name: &str) -> Option<&'static str> {
        self.sources().iter().copied().find(|s| *s == name)
    }

    /// Whether the source called `name` is asked by the account's platform id (see
    /// [`Platform::sources_by_id`]); false for a source asked by name, or an unknown name.
    pub fn source_by_id(self, name: &str) -> bool {
        self.sources_by_id().contains(&name)
    }

    /// The platform whose label is `label`, if one is registered.
    pub fn from_label(label: &str) -> Option<Platform> {
        Platform::ALL.iter().copied().find(|p| p.as_str() == label)
    }
}

impl std::fmt::Display for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `profile-lookup extract PLATFORM`: the CLI takes a platform by its label.
impl clap::ValueEnum for Platform {
    fn value_variants<'a>() -> &'a [Self] {
        Platform::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_sections_and_positions_are_distinct_and_consistent() {
        for (i, p) in Platform::ALL.iter().enumerate() {
            assert_eq!(p.index(), i);
            assert_eq!(Platform::from_label(p.as_str()), Some(*p));
            assert_eq!(p.section(), p.as_str().replace('-', "_"));
            let (min, max) = p.username_len();
            assert!(1 <= min && min <= max, "{p}");
            assert!(!p.sources().is_empty(), "{p} has no source");
            for s in p.sources() {
                assert_eq!(p.source(s), Some(*s));
            }
            for s in p.sources_by_id() {
                assert_eq!(p.source(s), Some(*s), "{p}: {s} asked by id is no source");
            }
            assert!(
                p.sources().iter().any(|s| !p.source_by_id(s)),
                "{p} has no source asked by name: no list of its sources could be valid"
            );
            assert!(!p.source_by_id("nope"), "{p}");
        }
        assert_eq!(Platform::from_label("nope"), None);
    }
}
