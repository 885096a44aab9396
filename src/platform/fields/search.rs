//! The anchored search: the requested user's object, wherever a document's JSON keeps it.
//!
//! Readers look at the places each known form keeps the user first (fast, and exact about
//! whose page it is). When none of them holds the user, the search walks every object of the
//! document's JSON once and keeps those whose username, by the table's names, is the requested
//! one (ASCII case-insensitive) and that give something besides it: an object of anyone else
//! (a suggestion, a hovercard, the viewer) is never taken, nor a request's parameters. Each kept object is read through the table, with what the object
//! holding it gives under the names that start at a holder (the `stats` beside a `user`).
//!
//! One streaming pass: strings are borrowed where they hold no escapes, containers are walked
//! as they come (serde_json's depth limit bounds the recursion), and an object's values are
//! kept only while it is open, unless it is the user's. What it costs is counted in
//! [`crate::cost`] as the text's length, once.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::Text;
use super::record::{Record, View};
use super::scalar::{Scalar, read_list, visit_scalars_with};
use super::table::{Kind, Step, Table};
use crate::cost;

/// The most objects of the user one search keeps: a document repeats its owner (as the
/// author of each item, say), and a few are all the choice needs.
const MAX_FOUND: usize = 64;

/// The requested user's objects in the first JSON value of `text` (anything after it is not
/// read), in the order they close, each with its holder's values added; `None` when the text
/// holds no readable JSON value.
pub fn search<'a>(
    table: &'static Table,
    text: &'a [u8],
    requested: &str,
) -> Option<Vec<Record<'a>>> {
    cost::examined(text.len());
    let mut de = serde_json::Deserializer::from_slice(text);
    let mut search = Search {
        table,
        requested,
        found: Vec::new(),
    };
    let seed = ValueSeed {
        search: &mut search,
        up: None,
        grand: None,
    };
    seed.deserialize(&mut de).ok()?;
    Some(search.found)
}

/// Of the user's objects a search found, the one to read: the first that gives a usable
/// follower count (the profile's, where items repeat the user without counts), else the first.
pub fn best<'a>(table: &Table, found: Vec<Record<'a>>) -> Option<Record<'a>> {
    let mut first = None;
    for record in found {
        if View::new(table, &record).count(table.followers).is_some() {
            return Some(record);
        }
        first.get_or_insert(record);
    }
    first
}

/// One search's state: what it looks for and what it found.
struct Search<'t, 'q, 'a> {
    table: &'t Table,
    requested: &'q str,
    found: Vec<Record<'a>>,
}

/// One value of the document. `up` is the record of the object it is a member of, with the
/// steps its key begins there; `grand` is the record of that object's holder, with the steps
/// of the holder's key and this value's own key (a two-step name ending here). Deserializing
/// it says whether it is an object of the requested user (kept last in `found`).
struct ValueSeed<'s, 't, 'q, 'a> {
    search: &'s mut Search<'t, 'q, 'a>,
    up: Option<(&'s mut Record<'a>, &'t [Step])>,
    grand: Option<(&'s mut Record<'a>, &'t [Step], &'s str)>,
}

impl<'a> ValueSeed<'_, '_, '_, 'a> {
    /// A scalar value: kept for the names that end at it; never a user's object.
    fn scalar(mut self, value: Scalar<'a>) -> bool {
        self.leaf(&value);
        false
    }

    /// Keeps `value` for every name that ends at this value.
    fn leaf(&mut self, value: &Scalar<'a>) {
        if let Some((record, steps)) = self.up.as_mut() {
            for step in steps.iter().filter(|s| s.rest.is_none()) {
                record.put(step, value.clone());
            }
        }
        if let Some((record, steps, key)) = self.grand.as_mut() {
            for step in steps.iter().filter(|s| s.rest == Some(*key)) {
                record.put(step, value.clone());
            }
        }
    }
}

impl<'de: 'a, 'a> DeserializeSeed<'de> for ValueSeed<'_, '_, '_, 'a> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for ValueSeed<'_, '_, '_, 'a> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    visit_scalars_with!(scalar -> bool);

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<bool, A::Error> {
        // A list field of the object (`bio_links`): its elements, never a user's object.
        let table = self.search.table;
        let is_list = |step: &Step| {
            step.rest.is_none() && table.fields[usize::from(step.field)].kind == Kind::List
        };
        if self
            .up
            .as_ref()
            .is_some_and(|(_, steps)| steps.iter().any(is_list))
        {
            let list = read_list(seq)?;
            self.leaf(&list);
            return Ok(false);
        }
        self.leaf(&Scalar::Container);
        loop {
            let element = ValueSeed {
                search: &mut *self.search,
                up: None,
                grand: None,
            };
            if seq.next_element_seed(element)?.is_none() {
                return Ok(false);
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<bool, A::Error> {
        self.leaf(&Scalar::Container);
        let table = self.search.table;
        let mut own = Record::default();
        // The user's objects among this object's own members: this object holds them.
        let mut held = Vec::new();
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            let member = ValueSeed {
                search: &mut *self.search,
                up: Some((&mut own, table.steps(&key))),
                grand: self
                    .up
                    .as_mut()
                    .map(|(record, steps)| (&mut **record, *steps, key.as_ref())),
            };
            if map.next_value_seed(member)? {
                held.push(self.search.found.len() - 1);
            }
        }
        for at in held {
            self.search.found[at].merge_holder(&own);
        }
        // The requested user's object: their name, and something besides it (a request's
        // `{"username": …}` parameters are not a user).
        let name = View::new(table, &own).username();
        let theirs = !name.is_empty()
            && name.eq_ignore_ascii_case(self.search.requested)
            && table
                .field(table.username)
                .is_some_and(|username| own.gives_besides(username));
        if theirs && self.search.found.len() < MAX_FOUND {
            self.search.found.push(own);
            return Ok(true);
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{PHOTO_SHARE, SHORT_VIDEO};
    use super::*;

    fn found(table: &'static Table, json: &str, name: &str) -> Vec<(String, Option<u64>)> {
        search(table, json.as_bytes(), name)
            .expect("JSON")
            .iter()
            .map(|r| {
                let v = View::new(table, r);
                (v.text("id").into_owned(), v.count(table.followers))
            })
            .collect()
    }

    #[test]
    fn finds_the_users_objects_at_any_depth_and_reads_the_counts_beside_them() {
        let json = r#"{"a":[{"b":{"holder":{"user":{"id":"1","uniqueId":"Ann"},
            "stats":{"followerCount":5},"statsV2":{"followerCount":"6"}}}}],
            "items":[{"author":{"id":"1","uniqueId":"ann","nickname":"A"},"stats":{"diggCount":1}}],
            "viewer":{"id":"9","uniqueId":"me","followerCount":2}}"#;
        let got = found(&SHORT_VIDEO, json, "ANN");
        assert_eq!(got, [("1".into(), Some(6)), ("1".into(), None)]);
        let best = best(
            &SHORT_VIDEO,
            search(&SHORT_VIDEO, json.as_bytes(), "ann").unwrap(),
        );
        let best = best.unwrap();
        assert_eq!(
            View::new(&SHORT_VIDEO, &best).count("followerCount"),
            Some(6)
        );
        assert!(found(&SHORT_VIDEO, json, "nobody").is_empty());
    }

    #[test]
    fn a_name_alone_is_no_user_and_another_name_is_never_taken() {
        let json = r#"{"params":{"query":{"username":"bo"}},"hovercard":{"pk":"2","username":"bob",
            "follower_count":3},"user":{"pk":"1","username":"bo","edge_followed_by":{"count":4}}}"#;
        assert_eq!(found(&PHOTO_SHARE, json, "bo"), [("1".into(), Some(4))]);
        assert!(found(&PHOTO_SHARE, r#"{"username":"bo"}"#, "bo").is_empty());
    }

    #[test]
    fn only_the_first_value_is_read_and_broken_json_finds_nothing() {
        let json = r#"{"pk":"1","username":"bo","follower_count":1};window.x={"#;
        assert_eq!(found(&PHOTO_SHARE, json, "bo").len(), 1);
        let cut = r#"{"a":{"pk":"1","username":"bo","follower_count":1},"b":["#;
        assert!(search(&PHOTO_SHARE, cut.as_bytes(), "bo").is_none());
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(search(&PHOTO_SHARE, deep.as_bytes(), "bo").is_none());
    }
}
