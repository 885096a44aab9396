//! The names blame found at fault: a name the platform refuses on several routes (or from
//! every source) while it reads other names there. Its answer (403 `profile_restricted`
//! behind a login wall, else 429) is remembered for the negative TTL, so asking again costs
//! no request and rests nothing.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::platform::Failure;
use crate::username::Username;

/// The most names remembered (the oldest go first).
pub const MAX_NAMES: usize = 10_000;

/// The names blamed lately, each with its answer and when it expires.
#[derive(Debug)]
pub struct BlamedNames {
    life: Duration,
    names: Mutex<HashMap<String, (Failure, Instant)>>,
}

impl BlamedNames {
    /// Names remembered for `life` (the negative TTL).
    pub fn new(life: Duration) -> Self {
        Self {
            life,
            names: Mutex::new(HashMap::new()),
        }
    }

    /// How long an answer is remembered: the `Retry-After` of a name's 429.
    pub fn remembered_for(&self) -> Duration {
        self.life.max(Duration::from_secs(1))
    }

    fn names(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Failure, Instant)>> {
        self.names
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Remembers that `name` is answered `failure`.
    pub fn remember(&self, name: &Username, failure: Failure) {
        if self.life.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut names = self.names();
        if names.len() >= MAX_NAMES {
            names.retain(|_, (_, until)| *until > now);
            if names.len() >= MAX_NAMES
                && let Some(oldest) = names
                    .iter()
                    .min_by_key(|(_, (_, until))| *until)
                    .map(|(k, _)| k.clone())
            {
                names.remove(&oldest);
            }
        }
        names.insert(name.as_str().to_owned(), (failure, now + self.life));
    }

    /// The answer remembered for `name`, while it lasts (a 429's wait is what is left).
    pub fn recall(&self, name: &Username) -> Option<Failure> {
        let now = Instant::now();
        let mut names = self.names();
        let (failure, until) = names.get(name.as_str())?.clone();
        if until <= now {
            names.remove(name.as_str());
            return None;
        }
        Some(match failure {
            Failure::Blocked { reason, .. } => Failure::Blocked {
                reason,
                retry_after: until - now,
            },
            other => other,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;

    #[test]
    fn a_name_is_remembered_for_its_life_and_no_longer() {
        let name = Username::parse(Platform::PhotoShare, "gated").unwrap();
        let names = BlamedNames::new(Duration::from_millis(50));
        assert_eq!(names.recall(&name), None);
        names.remember(&name, Failure::Restricted);
        assert_eq!(names.recall(&name), Some(Failure::Restricted));
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(names.recall(&name), None);
        let off = BlamedNames::new(Duration::ZERO);
        off.remember(&name, Failure::Restricted);
        assert_eq!(off.recall(&name), None);
    }
}
