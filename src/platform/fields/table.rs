//! What a table of field names is: for each field of a platform's body, every name the
//! platform has used for it, where that name sits relative to the user's object, and the form
//! and date it was seen in. The tables themselves are in `names.rs`, one per platform.

use std::sync::OnceLock;

/// How a field's value is read: as the body's type of it (see [`super::Scalar`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A string (an integer is read in decimal).
    Text,
    /// A boolean.
    Flag,
    /// A count: exact and non-negative, or `null`.
    Count,
    /// A signed code (`relation`).
    Code,
    /// A boolean the platform may also spell `0` or `1` (`isOrganization`).
    Switch,
    /// An array of strings or of link objects (`bio_links`, `pronouns`).
    List,
}

/// Where a name's path starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// At the user's own object (the one whose username is the user's).
    User,
    /// At the object that holds the user's object as a member (`userInfo`, whose `user` is the
    /// user and whose `stats` are the user's counts).
    Holder,
}

/// One name a platform has used for a field.
#[derive(Debug)]
pub struct Name {
    /// Where the path starts.
    pub start: Start,
    /// A member, or a member of a member (`edge_followed_by.count`): at most two steps.
    pub path: &'static str,
    /// The document form the name was seen in (for people, and held by the tables' test).
    #[cfg_attr(not(test), allow(dead_code))]
    pub form: &'static str,
    /// When it was seen, and by whom (a peer's issue or commit, or a real capture).
    #[cfg_attr(not(test), allow(dead_code))]
    pub seen: &'static str,
}

/// One field of a platform's body and the names it has had, preferred first.
#[derive(Debug)]
pub struct Field {
    /// The body's key.
    pub key: &'static str,
    /// How its value is read.
    pub kind: Kind,
    /// Its names: the first one that gives a usable value wins.
    pub names: &'static [Name],
    /// The field whose value stands in when this one is given but unusable (a wrapped or
    /// mistyped count), never when it is absent.
    pub stand_in: Option<&'static str>,
}

/// One member key's part in the names of a table: a name that ends at that key, or one that
/// goes one step further.
#[derive(Clone, Copy, Debug)]
pub(super) struct Step {
    /// The field (its position in the table).
    pub field: u8,
    /// The name (its position in the field's names).
    pub name: u8,
    /// Where the name's path starts.
    pub start: Start,
    /// The path's second member, when the name goes one step further.
    pub rest: Option<&'static str>,
}

/// A platform's table: its body's fields, the name readers anchor on, and its rule for
/// negative counts.
#[derive(Debug)]
pub struct Table {
    /// The platform, for the documentation and the logs.
    pub platform: &'static str,
    /// Every field of the body, in the body's order.
    pub fields: &'static [Field],
    /// The key of the username field: the object whose username is the requested one is the
    /// user's.
    pub username: &'static str,
    /// The member of a holder that is the user's object in the known forms (`userInfo.user`).
    pub user_member: &'static str,
    /// The key of the follower count: a public account's document must give it.
    pub followers: &'static str,
    /// Whether a negative count is a total wrapped into a signed 32-bit integer (taken from an
    /// exact or unwrapped sibling, else read as `v + 2^32`); otherwise it is no count.
    pub unwraps_int32: bool,
    /// The steps of each member key, sorted by key, built on first use (a binary search over
    /// a few dozen short keys costs less than hashing each member's key).
    index: OnceLock<Vec<(&'static str, Vec<Step>)>>,
}

impl Table {
    /// A table of `fields` (see the fields of [`Table`]).
    pub const fn new(
        platform: &'static str,
        fields: &'static [Field],
        username: &'static str,
        user_member: &'static str,
        followers: &'static str,
        unwraps_int32: bool,
    ) -> Self {
        Self {
            platform,
            fields,
            username,
            user_member,
            followers,
            unwraps_int32,
            index: OnceLock::new(),
        }
    }

    /// The position of the field whose body key is `key`.
    pub fn field(&self, key: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.key == key)
    }

    /// Why a profile read from a document cannot be answered, if it cannot: the account is
    /// not private and the document gives its follower count under none of the table's names
    /// (the platform withholds that count only from a private account's limited view, so its
    /// absence means the document moved). Never a 200 with `null` followers for a public one.
    pub fn unanswerable(&self, private: bool, followers: Option<u64>) -> Option<String> {
        if private || followers.is_some() {
            return None;
        }
        let names = self
            .field(self.followers)
            .map(|f| {
                self.fields[f]
                    .names
                    .iter()
                    .map(|n| n.path)
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        Some(format!(
            "a public {} profile gives no follower count under any known name ({})",
            self.platform,
            names.join(", ")
        ))
    }

    /// The steps that start at a member called `key` (of either start).
    pub(super) fn steps(&self, key: &str) -> &[Step] {
        let index = self.index.get_or_init(|| self.build_index());
        match index.binary_search_by(|(k, _)| (*k).cmp(key)) {
            Ok(at) => &index[at].1,
            Err(_) => &[],
        }
    }

    fn build_index(&self) -> Vec<(&'static str, Vec<Step>)> {
        let mut index: Vec<(&'static str, Vec<Step>)> = Vec::new();
        for (f, field) in self.fields.iter().enumerate() {
            for (n, name) in field.names.iter().enumerate() {
                let (first, rest) = match name.path.split_once('.') {
                    Some((first, rest)) => (first, Some(rest)),
                    None => (name.path, None),
                };
                // Tables are small (a test holds them under 256 of each).
                let step = Step {
                    field: u8::try_from(f).unwrap_or(u8::MAX),
                    name: u8::try_from(n).unwrap_or(u8::MAX),
                    start: name.start,
                    rest,
                };
                match index.iter_mut().find(|(k, _)| *k == first) {
                    Some((_, steps)) => steps.push(step),
                    None => index.push((first, vec![step])),
                }
            }
        }
        index.sort_unstable_by_key(|(k, _)| *k);
        index
    }
}

/// A type that reads through one platform's table (a marker for the known-place readers).
pub trait Tabled {
    /// The platform's table.
    fn table() -> &'static Table;
}
