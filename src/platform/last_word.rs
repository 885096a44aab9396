//! What the platform last said to each lookup still running, for a caller whose request
//! deadline comes first.
//!
//! A lookup runs in a flight of its own that outlives its callers (see `crate::cache`): a
//! caller whose `server.request_timeout_ms` passes is answered at once, while the lookup goes
//! on. When the platform's last answer to that lookup was a block (a 429 being waited out, say),
//! the caller must hear that block (429 `upstream_blocked` with its wait), not a bare time-out.
//! The fetcher notes each answer here ([`LastWords::note`]); the edge asks
//! ([`LastWords::block`]) when a deadline passes. An entry lives exactly as long as the lookups
//! of that name that listen ([`LastWords::listen`]), so the map holds no more names than there
//! are lookups in flight.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::username::Username;

/// A block the platform answered: its signal and the wait the caller is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// The signal (`http_429`, `login_wall`, …), for logs.
    pub reason: &'static str,
    /// The platform's `Retry-After`, or the fetcher's wait for a block that named none.
    pub retry_after: Duration,
}

/// One name's entry: how many lookups listen, and the platform's last word to them.
#[derive(Debug, Default)]
struct Heard {
    listeners: usize,
    last: Option<Block>,
}

/// The last word of the platform to each name being looked up; one per platform source.
#[derive(Debug, Default)]
pub struct LastWords {
    heard: Mutex<HashMap<Username, Heard>>,
}

impl LastWords {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Username, Heard>> {
        self.heard
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts keeping what the platform says to the lookup of `name`, until the returned
    /// guard drops (when the lookup ends).
    pub fn listen(&self, name: &Username) -> Listening<'_> {
        self.lock().entry(name.clone()).or_default().listeners += 1;
        Listening {
            words: self,
            name: name.clone(),
        }
    }

    /// Keeps the platform's latest answer to the lookup of `name`: `Some` for a block, `None`
    /// for anything else it said. Nothing is kept for a name no lookup listens for.
    pub fn note(&self, name: &Username, said: Option<Block>) {
        if let Some(heard) = self.lock().get_mut(name) {
            heard.last = said;
        }
    }

    /// The block the platform last answered to the lookup of `name` still running, if its
    /// last answer was one.
    pub fn block(&self, name: &Username) -> Option<Block> {
        self.lock().get(name).and_then(|heard| heard.last)
    }
}

/// A lookup's hold on its entry in [`LastWords`]; the entry goes with the last hold.
#[must_use = "the entry is dropped with the guard"]
pub struct Listening<'a> {
    words: &'a LastWords,
    name: Username,
}

impl Drop for Listening<'_> {
    fn drop(&mut self) {
        let mut heard = self.words.lock();
        if let Some(entry) = heard.get_mut(&self.name) {
            entry.listeners -= 1;
            if entry.listeners == 0 {
                heard.remove(&self.name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;

    #[test]
    fn an_entry_lives_as_long_as_its_listeners_and_keeps_only_the_last_word() {
        let words = LastWords::default();
        let name = Username::parse(Platform::PhotoShare, "someone").unwrap();
        let block = Block {
            reason: "http_429",
            retry_after: Duration::from_secs(2),
        };
        words.note(&name, Some(block));
        assert_eq!(words.block(&name), None, "nobody listens: nothing kept");
        let first = words.listen(&name);
        words.note(&name, Some(block));
        assert_eq!(words.block(&name), Some(block));
        let second = words.listen(&name);
        drop(first);
        assert_eq!(words.block(&name), Some(block), "one listener is left");
        words.note(&name, None);
        assert_eq!(words.block(&name), None, "the platform answered since");
        words.note(&name, Some(block));
        drop(second);
        assert_eq!(words.block(&name), None);
        assert!(words.lock().is_empty());
    }
}
