//! `[canary]`: long-lived public accounts per platform, looked up through each source every
//! `interval_seconds`, so that a platform changing its pages is seen before callers see it.
//!
//! The account lists are keyed by each registered platform's section (`<section> = […]`), read
//! from the environment like the other plain lists (`PROFILE_LOOKUP__CANARY__<SECTION>=a,b`),
//! and checked at load with the platform's username rule: a new platform gets its list from
//! its registry line, with no edit here.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use super::Section;
use super::limits::{self, DAY_S, range};
use crate::registry::Platform;
use crate::username::Username;

/// The most accounts one platform's list may name: each costs one request per source a round.
pub const MAX_ACCOUNTS: usize = 20;
/// The largest `jitter`: a wait between rounds varies by at most half the interval.
pub const MAX_JITTER: f64 = 0.5;

/// `[canary]`
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CanaryConfig {
    /// Seconds between rounds; 0 turns the canary off (so does every list being empty).
    pub interval_seconds: u64,
    /// How much each wait between rounds varies at random, as a fraction of the interval,
    /// both ways (0.1: 540 to 660 s for 600), so replicas and rounds do not fall in step.
    pub jitter: f64,
    /// Whether `GET /status` names the accounts (else it names none, and hides them in the
    /// reasons it shows).
    pub public_names: bool,
    /// The accounts of each platform, by the platform's section; every other key of the
    /// section lands here too and is refused by its check with its name.
    #[serde(flatten)]
    pub accounts: BTreeMap<String, AccountList>,
}

impl CanaryConfig {
    /// The accounts configured for `platform` (none when its list is absent).
    pub fn accounts(&self, platform: Platform) -> &[String] {
        match self.accounts.get(platform.section()) {
            Some(AccountList::Names(names)) => names,
            _ => &[],
        }
    }

    /// Whether rounds run at all: an interval and at least one account.
    pub fn is_on(&self) -> bool {
        self.interval_seconds > 0 && Platform::ALL.iter().any(|p| !self.accounts(*p).is_empty())
    }

    /// The accounts of `platform`, checked (as the section's check did at load).
    pub fn usernames(&self, platform: Platform) -> Vec<Username> {
        self.accounts(platform)
            .iter()
            .filter_map(|name| Username::parse(platform, name).ok())
            .collect()
    }
}

/// One key of `[canary]` past the scalars: a list of names, or something else (a misspelt key,
/// a value of the wrong type), kept so that the section's check can name it.
#[derive(Clone, Debug, PartialEq)]
pub enum AccountList {
    /// A list of strings.
    Names(Vec<String>),
    /// Anything that is not a list of strings.
    NotAList,
}

impl Serialize for AccountList {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            AccountList::Names(names) => names.serialize(s),
            AccountList::NotAList => s.serialize_unit(),
        }
    }
}

impl<'de> Deserialize<'de> for AccountList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ListOrNot)
    }
}

/// Reads a list of strings, and anything else as [`AccountList::NotAList`] (never an error, so
/// the message can name the key).
struct ListOrNot;

/// Every scalar an account list could be given as: kept as "not a list".
macro_rules! not_a_list {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(fn $method<E: serde::de::Error>(self, _: $ty) -> Result<AccountList, E> {
            Ok(AccountList::NotAList)
        })*
    };
}

impl<'de> Visitor<'de> for ListOrNot {
    type Value = AccountList;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of usernames")
    }

    not_a_list!(
        visit_bool: bool, visit_i64: i64, visit_i128: i128, visit_u64: u64, visit_u128: u128,
        visit_f64: f64, visit_str: &str, visit_bytes: &[u8],
    );

    fn visit_unit<E: serde::de::Error>(self) -> Result<AccountList, E> {
        Ok(AccountList::NotAList)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<AccountList, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(AccountList::NotAList)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<AccountList, A::Error> {
        let mut names = Vec::new();
        let mut all_strings = true;
        while let Some(item) = seq.next_element::<Item>()? {
            match item {
                Item::Name(name) if names.len() <= MAX_ACCOUNTS => names.push(name),
                Item::Name(_) => {}
                Item::Other => all_strings = false,
            }
        }
        Ok(if all_strings {
            AccountList::Names(names)
        } else {
            AccountList::NotAList
        })
    }
}

/// One item of an account list: a string, or not.
enum Item {
    Name(String),
    Other,
}

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ItemVisitor;
        impl<'de> Visitor<'de> for ItemVisitor {
            type Value = Item;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a username")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Item, E> {
                Ok(Item::Name(v.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Item, E> {
                Ok(Item::Name(v))
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Item, E> {
                Ok(Item::Other)
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Item, E> {
                Ok(Item::Other)
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Item, E> {
                Ok(Item::Other)
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Item, E> {
                Ok(Item::Other)
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Item, E> {
                Ok(Item::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Item, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Item::Other)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Item, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Item::Other)
            }
        }
        d.deserialize_any(ItemVisitor)
    }
}

/// Whether `path` (`canary.<section>`) is one of the canary's account lists, read from one
/// comma-separated environment variable like `<section>.sources`.
pub fn is_account_list(path: &str) -> bool {
    Platform::ALL
        .iter()
        .any(|p| path.strip_prefix("canary.") == Some(p.section()))
}

impl Section for CanaryConfig {
    /// `[canary]` makes sense: every key is known, `interval_seconds` and `jitter` are in
    /// range, each list names valid, distinct usernames of its platform, at most
    /// [`MAX_ACCOUNTS`] of them.
    fn check(&self) -> Result<(), String> {
        limits::check(&[range(
            "canary.interval_seconds",
            self.interval_seconds,
            0,
            DAY_S,
            "1 day",
        )])?;
        check_accounts(&self.accounts)?;
        if !self.jitter.is_finite() || !(0.0..=MAX_JITTER).contains(&self.jitter) {
            return Err(format!(
                "canary.jitter is {}, out of range: allowed 0 to {MAX_JITTER} (a fraction of \
                 the interval); see config/default.toml",
                self.jitter
            ));
        }
        Ok(())
    }
}

/// Each key past the scalars is a platform's list of valid, distinct usernames.
fn check_accounts(accounts: &BTreeMap<String, AccountList>) -> Result<(), String> {
    let sections: Vec<&str> = Platform::ALL.iter().map(|p| p.section()).collect();
    for (key, list) in accounts {
        let Some(&platform) = Platform::ALL.iter().find(|p| p.section() == key) else {
            return Err(format!(
                "canary.{key} is not a key of [canary]: the keys are interval_seconds, jitter, \
                 public_names and one list of accounts per platform ({})",
                sections.join(", ")
            ));
        };
        let AccountList::Names(names) = list else {
            return Err(format!(
                "canary.{key} must be a list of {platform} usernames, e.g. [\"name\"]"
            ));
        };
        if names.len() > MAX_ACCOUNTS {
            return Err(format!(
                "canary.{key} names more than {MAX_ACCOUNTS} accounts (each costs one request \
                 per source every round)"
            ));
        }
        for (at, name) in names.iter().enumerate() {
            let checked = Username::parse(platform, name).map_err(|e| {
                format!("canary.{key}[{at}] {name:?} is not a {platform} username: {e}")
            })?;
            let twice = names[..at]
                .iter()
                .any(|other| other.eq_ignore_ascii_case(checked.as_str()));
            if twice {
                return Err(format!("canary.{key}[{at}] {name:?} is listed twice"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(key: &str, list: AccountList) -> CanaryConfig {
        let mut c = CanaryConfig::default();
        c.accounts.insert(key.to_owned(), list);
        c
    }

    fn names(names: &[&str]) -> AccountList {
        AccountList::Names(names.iter().map(|n| (*n).to_owned()).collect())
    }

    #[test]
    fn the_default_is_off_with_a_list_per_platform() {
        let c = CanaryConfig::default();
        assert!(!c.is_on());
        for p in Platform::ALL {
            assert_eq!(
                c.accounts.get(p.section()),
                Some(&AccountList::Names(Vec::new())),
                "config/default.toml's [canary] has no `{} = []`",
                p.section()
            );
        }
        assert_eq!(c.accounts.len(), Platform::ALL.len());
        assert!(c.check().is_ok());
    }

    #[test]
    fn lists_are_checked_with_each_platforms_rule() {
        let ok = with("short_video", names(&["sunny.kitchen.lab", "Tiny.Baker_7"]));
        assert!(ok.check().is_ok() && ok.is_on());
        assert_eq!(ok.usernames(Platform::ShortVideo).len(), 2);
        let short = with("short_video", names(&["a"]));
        assert!(short.check().unwrap_err().contains("canary.short_video[0]"));
        let twice = with("photo_share", names(&["lumen.trails", "LUMEN.trails"]));
        assert!(twice.check().unwrap_err().contains("twice"));
        let typo = with("interval_secnds", AccountList::NotAList);
        assert!(
            typo.check()
                .unwrap_err()
                .contains("canary.interval_secnds is not a key")
        );
        let scalar = with("photo_share", AccountList::NotAList);
        assert!(
            scalar
                .check()
                .unwrap_err()
                .contains("list of photo-share usernames")
        );
        let many: Vec<String> = (0..=MAX_ACCOUNTS).map(|i| format!("name{i}")).collect();
        let many = with("photo_share", AccountList::Names(many));
        assert!(many.check().unwrap_err().contains("more than"));
    }

    #[test]
    fn jitter_is_a_fraction_up_to_a_half() {
        for bad in [-0.1, 0.51, f64::NAN, f64::INFINITY] {
            let c = CanaryConfig {
                jitter: bad,
                ..CanaryConfig::default()
            };
            assert!(c.check().unwrap_err().contains("canary.jitter"), "{bad}");
        }
        for good in [0.0, 0.25, 0.5] {
            let c = CanaryConfig {
                jitter: good,
                ..CanaryConfig::default()
            };
            assert!(c.check().is_ok(), "{good}");
        }
    }

    #[test]
    fn only_registered_sections_are_account_lists() {
        assert!(is_account_list("canary.short_video") && is_account_list("canary.photo_share"));
        assert!(!is_account_list("canary.jitter") && !is_account_list("short_video"));
    }
}
