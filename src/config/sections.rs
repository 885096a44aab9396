//! How the settings are made of their sections: [`settings!`] declares
//! [`Settings`](super::Settings) from the one list of its fixed sections (in `mod.rs`), with
//! every registered platform's section in a table beside them, and reads and writes it as one
//! TOML table whose keys are the sections' names.
//!
//! A fixed section is a field; a platform's section is the table's entry at its
//! [`Platform::index`], read under its [`Platform::section`], so a new platform needs no code
//! here. A key that is neither is refused with serde's own message (`unknown field …,
//! expected one of …`), as `deny_unknown_fields` words it; a section missing from the first
//! layer is refused by name.

use serde::Deserialize;
use serde::de::{Error, MapAccess};

use super::platforms::{PlatformConfig, Platforms};
use crate::registry::Platform;

/// Declares `Settings` from its fixed sections, each `name: Type` (a [`Section`] in its own
/// file) with its doc comment, in the order of `config/default.toml`; `@platforms` marks where
/// the platforms' sections come in that order. It writes the struct, its serde (in the order
/// above, so unknown-key messages list the sections as the file does),
/// `Settings::check_sections` (each section checks itself, in that order) and each fixed
/// section's `Default` (its part of the built-in defaults).
///
/// [`Section`]: super::Section
macro_rules! settings {
    (
        $( $(#[$before_doc:meta])* $before:ident: $before_ty:ty, )*
        @platforms
        $( $(#[$after_doc:meta])* $after:ident: $after_ty:ty, )*
    ) => {
        /// Everything the service can be told; see `config/default.toml` for each key's
        /// meaning. Each registered platform's section is reached through
        /// [`Settings::platform`].
        #[derive(Clone, Debug)]
        pub struct Settings {
            $( $(#[$before_doc])* pub $before: $before_ty, )*
            /// Each registered platform's section, at its index.
            platforms: $crate::config::platforms::Platforms,
            $( $(#[$after_doc])* pub $after: $after_ty, )*
        }

        impl Settings {
            /// The top-level keys, as serde's unknown-key message lists them.
            fn section_names() -> &'static [&'static str] {
                static NAMES: std::sync::LazyLock<Vec<&'static str>> =
                    std::sync::LazyLock::new(|| {
                        let mut names = vec![$(stringify!($before)),*];
                        names.extend($crate::registry::Platform::ALL.iter().map(|p| p.section()));
                        names.extend([$(stringify!($after)),*]);
                        names
                    });
                &NAMES
            }

            /// Each section's own check, in the order of the sections.
            fn check_sections(&self) -> Result<(), String> {
                $( $crate::config::Section::check(&self.$before)?; )*
                for &platform in $crate::registry::Platform::ALL {
                    self.platform(platform).check(platform)?;
                }
                $( $crate::config::Section::check(&self.$after)?; )*
                Ok(())
            }
        }

        impl serde::Serialize for Settings {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeMap;
                let mut map = s.serialize_map(None)?;
                $( map.serialize_entry(stringify!($before), &self.$before)?; )*
                for &platform in $crate::registry::Platform::ALL {
                    map.serialize_entry(platform.section(), self.platform(platform))?;
                }
                $( map.serialize_entry(stringify!($after), &self.$after)?; )*
                map.end()
            }
        }

        impl<'de> serde::Deserialize<'de> for Settings {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_map(SettingsVisitor)
            }
        }

        /// Reads the table of sections into [`Settings`].
        struct SettingsVisitor;

        impl<'de> serde::de::Visitor<'de> for SettingsVisitor {
            type Value = Settings;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a table of settings sections")
            }

            fn visit_map<A>(self, mut map: A) -> Result<Settings, A::Error>
            where
                A: serde::de::MapAccess<'de>,
            {
                use $crate::config::sections::{PlatformSections, read_once, required};
                $( let mut $before: Option<$before_ty> = None; )*
                $( let mut $after: Option<$after_ty> = None; )*
                let mut platforms = PlatformSections::default();
                while let Some(key) = map.next_key::<String>()? {
                    let key = key.as_str();
                    match key {
                        $( stringify!($before) => read_once(&mut map, &mut $before, key)?, )*
                        $( stringify!($after) => read_once(&mut map, &mut $after, key)?, )*
                        _ => platforms.read(&mut map, key, Settings::section_names())?,
                    }
                }
                Ok(Settings {
                    $( $before: required($before, stringify!($before))?, )*
                    platforms: platforms.finish()?,
                    $( $after: required($after, stringify!($after))?, )*
                })
            }
        }

        $(
            impl Default for $before_ty {
                /// This section of the built-in defaults (`config/default.toml`).
                fn default() -> Self {
                    Settings::default().$before
                }
            }
        )*
        $(
            impl Default for $after_ty {
                /// This section of the built-in defaults (`config/default.toml`).
                fn default() -> Self {
                    Settings::default().$after
                }
            }
        )*
    };
}

pub(super) use settings;

/// Reads the value of the key `name` into `slot`, which it may fill once.
pub fn read_once<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    map: &mut A,
    slot: &mut Option<T>,
    name: &str,
) -> Result<(), A::Error> {
    if slot.is_some() {
        // serde's own `duplicate_field` words, which want a `'static` name.
        return Err(A::Error::custom(format_args!("duplicate field `{name}`")));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

/// The section `name` as read, or the error naming it when the table lacked it.
pub fn required<T, E: Error>(slot: Option<T>, name: &'static str) -> Result<T, E> {
    slot.ok_or_else(|| E::missing_field(name))
}

/// The platforms' sections while the table is read.
pub struct PlatformSections(Vec<Option<PlatformConfig>>);

impl Default for PlatformSections {
    fn default() -> Self {
        Self(vec![None; Platform::ALL.len()])
    }
}

impl PlatformSections {
    /// Reads the value of `key` as the section of the platform it names; a key no platform
    /// has is an unknown key among `names`.
    pub fn read<'de, A: MapAccess<'de>>(
        &mut self,
        map: &mut A,
        key: &str,
        names: &'static [&'static str],
    ) -> Result<(), A::Error> {
        let Some(platform) = Platform::ALL.iter().find(|p| p.section() == key) else {
            return Err(A::Error::unknown_field(key, names));
        };
        read_once(map, &mut self.0[platform.index()], platform.section())
    }

    /// The table, once every platform's section was read.
    pub fn finish<E: Error>(self) -> Result<Platforms, E> {
        Platforms::new(self.0).map_err(|missing| E::missing_field(missing.section()))
    }
}
