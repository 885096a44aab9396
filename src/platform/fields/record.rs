//! What a document gave under a table's names for one user, and the body's values read from
//! it by the table's rules: the first name that gives a usable value wins.

use std::borrow::Cow;

use super::scalar::{Item, Num, Scalar};
use super::table::{Kind, Start, Step, Table};

/// The values a document gave for one user, each under the table name it came by (the first
/// occurrence of a name wins, as a document's later duplicate says nothing new).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record<'a> {
    entries: Vec<(u8, u8, Start, Scalar<'a>)>,
}

impl<'a> Record<'a> {
    /// Keeps `value` under `step`'s name, unless the name already has one.
    pub(super) fn put(&mut self, step: &Step, value: Scalar<'a>) {
        let known = self
            .entries
            .iter()
            .any(|(f, n, _, _)| *f == step.field && *n == step.name);
        if !known {
            self.entries
                .push((step.field, step.name, step.start, value));
        }
    }

    /// Whether the object gave a value under a name that starts at it for some field other
    /// than `field` (a user's object gives more than its name; a request's parameters do not).
    pub(super) fn gives_besides(&self, field: usize) -> bool {
        self.entries
            .iter()
            .any(|(f, _, start, _)| *start == Start::User && usize::from(*f) != field)
    }

    /// Adds what `other` gave under names this record has no value for.
    pub fn merge(&mut self, other: Record<'a>) {
        for (field, name, start, value) in other.entries {
            let step = Step {
                field,
                name,
                start,
                rest: None,
            };
            self.put(&step, value);
        }
    }

    /// Adds the values `holder` gave under names that start at the holder.
    pub fn merge_holder(&mut self, holder: &Record<'a>) {
        for (field, name, start, value) in &holder.entries {
            if *start == Start::Holder {
                let step = Step {
                    field: *field,
                    name: *name,
                    start: *start,
                    rest: None,
                };
                self.put(&step, value.clone());
            }
        }
    }

    /// Drops the value of `field`'s name `path`: for a form where that name means something
    /// else (the xig object's own `id` is not the user id).
    pub fn forget(&mut self, table: &Table, field: &str, path: &str) {
        let Some(f) = table.field(field) else { return };
        let Some(n) = table.fields[f].names.iter().position(|n| n.path == path) else {
            return;
        };
        self.entries
            .retain(|(ef, en, _, _)| !(usize::from(*ef) == f && usize::from(*en) == n));
    }

    /// The values of field `f`, in the order of its names.
    fn values(&self, f: usize, names: usize) -> impl Iterator<Item = &Scalar<'a>> {
        (0..names).filter_map(move |n| {
            self.entries
                .iter()
                .find(|(ef, en, _, _)| usize::from(*ef) == f && usize::from(*en) == n)
                .map(|(_, _, _, value)| value)
        })
    }
}

/// A record read through its table: each body field's value by the table's rules.
#[derive(Clone, Copy, Debug)]
pub struct View<'t, 'r, 'a> {
    table: &'t Table,
    record: &'r Record<'a>,
}

impl<'t, 'r, 'a> View<'t, 'r, 'a> {
    /// `record` read through `table`.
    pub fn new(table: &'t Table, record: &'r Record<'a>) -> Self {
        Self { table, record }
    }

    fn values(&self, key: &str, kind: Kind) -> impl Iterator<Item = &'r Scalar<'a>> + use<'r, 'a> {
        let field = self
            .table
            .field(key)
            .filter(|&f| self.table.fields[f].kind == kind);
        let names = field.map_or(0, |f| self.table.fields[f].names.len());
        let record: &'r Record<'a> = self.record;
        record.values(field.unwrap_or(0), names)
    }

    /// A text field: the first name that gives a non-empty text, else `""`.
    pub fn text(&self, key: &str) -> Cow<'a, str> {
        self.values(key, Kind::Text)
            .filter_map(Scalar::text)
            .find(|text| !text.is_empty())
            .unwrap_or_default()
    }

    /// A flag field: the first name that gives a boolean, else `false`.
    pub fn flag(&self, key: &str) -> bool {
        self.values(key, Kind::Flag)
            .find_map(Scalar::flag)
            .unwrap_or(false)
    }

    /// A switch field: the first name that gives a boolean (or `0`/`1`), else `false`.
    pub fn switch(&self, key: &str) -> bool {
        self.values(key, Kind::Switch)
            .find_map(Scalar::switch)
            .unwrap_or(false)
    }

    /// A list field: the elements of the first name that gives an array, else none.
    pub fn list(&self, key: &str) -> &'r [Item<'a>] {
        self.values(key, Kind::List)
            .find_map(Scalar::list)
            .unwrap_or_default()
    }

    /// A code field: what its first name that is present gives (0 for anything but an
    /// integer), else 0.
    pub fn code(&self, key: &str) -> i64 {
        self.values(key, Kind::Code).next().map_or(0, Scalar::code)
    }

    /// The count as its names give it: the first usable one, else the first unusable one.
    pub fn num(&self, key: &str) -> Num {
        self.values(key, Kind::Count)
            .map(Scalar::count)
            .fold(Num::Missing, Num::or)
    }

    /// A count field: the first name that gives an exact count; when the names give one that
    /// is unusable (mistyped, negative), the value of the field that stands in for it, then, on
    /// a platform whose totals wrap into 32 bits, its own value unwrapped; `None` when the
    /// document gives none.
    pub fn count(&self, key: &str) -> Option<u64> {
        let own = self.num(key);
        if own == Num::Missing {
            return None;
        }
        if let Some(n) = own.value() {
            return Some(n);
        }
        let stand_in = self
            .table
            .field(key)
            .and_then(|f| self.table.fields[f].stand_in)
            .and_then(|other| self.num(other).value());
        stand_in.or_else(|| {
            if self.table.unwraps_int32 {
                own.unwrapped()
            } else {
                None
            }
        })
    }

    /// The username the record gives.
    pub fn username(&self) -> Cow<'a, str> {
        self.text(self.table.username)
    }
}
