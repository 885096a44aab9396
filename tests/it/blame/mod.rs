//! Blame decided in one place, by comparison (`src/blame/`): each of the ways a review found
//! the service blaming the wrong party, on loopback. The rules themselves are held by the
//! table of cases beside them (`src/blame/rules.rs`).

mod names;
mod proxies;
mod sources;
