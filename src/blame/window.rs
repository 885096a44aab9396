//! The window of evidence: the recent outcomes of one platform's attempts, this replica's and
//! (with Redis) the fleet's, newest last, at most [`MAX_RECORDS`] and none older than the
//! window. Every question the rules ask is a scan of it (a few hundred records), asked only
//! for an attempt that did not read.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::outcome::{Kind, Record};

/// The most records kept: enough for every rule at hundreds of lookups a minute.
pub const MAX_RECORDS: usize = 1024;

/// The recent outcomes of one platform (see the module docs).
#[derive(Debug, Default)]
pub struct Window {
    records: VecDeque<Record>,
}

impl Window {
    /// Adds `record` (the newest), dropping the oldest past [`MAX_RECORDS`].
    pub fn push(&mut self, record: Record) {
        if self.records.len() == MAX_RECORDS {
            self.records.pop_front();
        }
        self.records.push_back(record);
    }

    /// Adds records merged from the fleet, each placed by its time.
    pub fn merge(&mut self, records: impl IntoIterator<Item = Record>) {
        for record in records {
            let at = self.records.partition_point(|r| r.at <= record.at);
            self.records.insert(at, record);
        }
        while self.records.len() > MAX_RECORDS {
            self.records.pop_front();
        }
    }

    /// Forgets what is older than `window` as of `now`.
    pub fn expire(&mut self, now: Instant, window: Duration) {
        while self
            .records
            .front()
            .is_some_and(|r| now.saturating_duration_since(r.at) > window)
        {
            self.records.pop_front();
        }
    }

    /// Every record, oldest first.
    pub fn records(&self) -> impl DoubleEndedIterator<Item = &Record> {
        self.records.iter()
    }

    /// The newest record that `pick` takes.
    pub fn latest(&self, pick: impl Fn(&Record) -> bool) -> Option<&Record> {
        self.records.iter().rev().find(|r| pick(r))
    }

    /// The records `pick` takes that came after the newest read `reset` takes: a party's
    /// streak since it last read.
    pub fn since_read(
        &self,
        pick: impl Fn(&Record) -> bool,
        reset: impl Fn(&Record) -> bool,
    ) -> impl Iterator<Item = &Record> {
        let from = self
            .records
            .iter()
            .rposition(|r| r.kind == Kind::Read && reset(r))
            .map_or(0, |at| at + 1);
        self.records.range(from..).filter(move |r| pick(r))
    }

    /// How many records there are.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

/// Distinct values, counted (the windows are small: a sorted vector is enough).
pub(super) fn distinct<T: Ord + Copy>(values: impl Iterator<Item = T>) -> usize {
    let mut all: Vec<T> = values.collect();
    all.sort_unstable();
    all.dedup();
    all.len()
}
