//! Reading an object at a known place through a table: the user's own object, the object that
//! holds it, or one member of that holder. Only the members the table names are read (with
//! [`Scalar`]'s rules); every other member is skipped unread.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::Text;
use super::record::Record;
use super::scalar::{Scalar, read_list, visit_scalars_with};
use super::table::{Start, Step, Table, Tabled};

/// The user's own object at a known place (the xig object, `data.user`, `userInfo.user`),
/// read through platform `T`'s table: what the names that start at the user gave.
#[derive(Debug)]
pub struct UserObject<'a, T>(pub Record<'a>, PhantomData<T>);

impl<'de: 'a, 'a, T: Tabled> Deserialize<'de> for UserObject<'a, T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut record = Record::default();
        let seed = ObjectSeed {
            table: T::table(),
            start: Start::User,
            record: &mut record,
            user: None,
        };
        seed.deserialize(d)?;
        Ok(UserObject(record, PhantomData))
    }
}

/// An object that holds the user's object at a known place (`userInfo`): what the names that
/// start at the holder gave, and the user's object under the table's `user_member`.
#[derive(Debug, Default)]
pub struct HolderObject<'a, T> {
    /// The holder's own names (the counts beside the user).
    pub holder: Record<'a>,
    /// The user's object, when the holder has one.
    pub user: Option<Record<'a>>,
    table: PhantomData<T>,
}

impl<'a, T> HolderObject<'a, T> {
    /// The user's record with the holder's values added, when there is a user.
    pub fn into_user(self) -> Option<Record<'a>> {
        let mut user = self.user?;
        user.merge_holder(&self.holder);
        Some(user)
    }
}

impl<'de: 'a, 'a, T: Tabled> Deserialize<'de> for HolderObject<'a, T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (mut holder, mut user) = (Record::default(), None);
        let seed = ObjectSeed {
            table: T::table(),
            start: Start::Holder,
            record: &mut holder,
            user: Some(&mut user),
        };
        seed.deserialize(d)?;
        Ok(HolderObject {
            holder,
            user,
            table: PhantomData,
        })
    }
}

/// Reads the value of a holder's member `key` (given apart, as `UserModule.stats[name]` is):
/// what the holder's names through `key` gave.
pub fn member<'de: 'a, 'a, D: Deserializer<'de>>(
    table: &'static Table,
    key: &str,
    d: D,
) -> Result<Record<'a>, D::Error> {
    let mut record = Record::default();
    MemberSeed {
        steps: table.steps(key),
        start: Start::Holder,
        record: &mut record,
    }
    .deserialize(d)?;
    Ok(record)
}

/// One object's members read into `record` for the names of `start` that begin at it; with
/// `user`, its member named by the table's `user_member` is the user's object.
struct ObjectSeed<'t, 'r, 'a> {
    table: &'t Table,
    start: Start,
    record: &'r mut Record<'a>,
    user: Option<&'r mut Option<Record<'a>>>,
}

impl<'de: 'a, 'a> DeserializeSeed<'de> for ObjectSeed<'_, '_, 'a> {
    /// Whether the value was an object.
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for ObjectSeed<'_, '_, 'a> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<bool, A::Error> {
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            if key == self.table.user_member
                && let Some(user) = self.user.as_deref_mut()
            {
                let mut record = Record::default();
                let seed = ObjectSeed {
                    table: self.table,
                    start: Start::User,
                    record: &mut record,
                    user: None,
                };
                if map.next_value_seed(seed)? && user.is_none() {
                    *user = Some(record);
                }
                continue;
            }
            let steps = self.table.steps(&key);
            if steps.iter().any(|s| s.start == self.start) {
                map.next_value_seed(MemberSeed {
                    steps,
                    start: self.start,
                    record: self.record,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(true)
    }

    // Anything but an object holds no member: it gives nothing.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(false)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }

    visit_scalars_with!(no_members -> bool);
}

impl ObjectSeed<'_, '_, '_> {
    /// A scalar where an object was expected: no member, so nothing read.
    fn no_members(self, _: Scalar<'_>) -> bool {
        false
    }
}

/// The value of one member whose key begins names of `start`: a name that ends there takes
/// the value itself, a name that goes one step further takes that member of it.
pub(super) struct MemberSeed<'t, 'r, 'a> {
    pub steps: &'t [Step],
    pub start: Start,
    pub record: &'r mut Record<'a>,
}

impl<'a> MemberSeed<'_, '_, 'a> {
    /// Keeps a value for every name that ends at this member.
    fn leaf(self, value: Scalar<'a>) {
        for step in self.steps {
            if step.start == self.start && step.rest.is_none() {
                self.record.put(step, value.clone());
            }
        }
    }
}

impl<'de: 'a, 'a> DeserializeSeed<'de> for MemberSeed<'_, '_, 'a> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de: 'a, 'a> Visitor<'de> for MemberSeed<'_, '_, 'a> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    visit_scalars_with!(leaf -> ());

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    /// An array: its strings and link objects, for a list field (a name of another kind
    /// makes nothing of them).
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        let list = read_list(seq)?;
        self.leaf(list);
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            let mut wanted = self
                .steps
                .iter()
                .filter(|s| s.start == self.start && s.rest == Some(key.as_ref()))
                .peekable();
            if wanted.peek().is_none() {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let value: Scalar<'de> = map.next_value()?;
            for step in wanted {
                self.record.put(step, value.clone());
            }
        }
        self.leaf(Scalar::Container);
        Ok(())
    }
}
