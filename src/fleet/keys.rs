//! Key names, with hash tags so that what one script touches sits on one cluster slot.
//!
//! - `P{n:PLATFORM:NAME}:e` the fresh entry, `…:s` its stale record, `…:l` its flight lock, `…:f`
//!   its refresh limit: one tag, so a script can read the entry and the lock, or write the
//!   entry and drop the stale copy, in one call even on a cluster.
//! - `P{q:KEYID}` the GCRA state of one API key (its own slot).
//! - `P{o:PLATFORM}` the outbound budget, `…:r` its share for background refreshes, and
//!   `P{b:PLATFORM}` the breaker of one platform.
//! - `P{r:SCOPE}:INDEX` the rest of one proxy; one tag per scope, so one script reads them all.
//! - `P{c}:lease` the canary's round lease and `P{c}:verdicts` its last verdicts (one tag:
//!   both are the canary's, small and read once per interval).
//!
//! `P` is `redis.key_prefix`. Components that are not plain `[A-Za-z0-9._-]` (at most 64
//! bytes) are replaced by `#` and a hex digest, so no caller input can open a hash tag, make a
//! key long, or collide with a plain name.

use sha2::{Digest, Sha256};

/// The longest component kept as written.
const MAX_PLAIN_LEN: usize = 64;
/// Domain separation of [`key_id`]: a key id is useless for anything but this quota.
const KEY_ID_TAG: &[u8] = b"profile-lookup/fleet-quota-key-id/v1\0";

/// The name under which the fleet keeps one API key's quota: hex of the first 16 bytes of
/// SHA-256 over a fixed tag and the key's SHA-256 digest. It cannot be turned back into the key
/// or its digest, so Redis never holds either.
pub fn key_id(digest: &[u8; 32]) -> String {
    let mut h = Sha256::new();
    h.update(KEY_ID_TAG);
    h.update(digest);
    hex(&h.finalize()[..16])
}

/// Builds every key name from one prefix (`redis.key_prefix`): the one place a key is named.
#[derive(Clone, Debug)]
pub struct Keys {
    prefix: String,
}

/// The three keys of one name: what a flight reads, locks and writes in one call.
#[derive(Clone, Debug)]
pub struct NameKeys {
    /// The fresh entry.
    pub entry: String,
    /// The stale record (a stale copy or a tombstone).
    pub stale: String,
    /// The flight lock.
    pub lock: String,
}

impl Keys {
    /// Key names under `prefix`.
    pub fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.to_owned(),
        }
    }

    /// The keys of `name` on `platform`.
    pub fn name(&self, platform: &str, name: &str) -> NameKeys {
        let tag = format!(
            "{}{{n:{}:{}}}",
            self.prefix,
            component(platform),
            component(name)
        );
        NameKeys {
            entry: format!("{tag}:e"),
            stale: format!("{tag}:s"),
            lock: format!("{tag}:l"),
        }
    }

    /// The refresh limit of one name: in the name's slot, next to its entry.
    pub fn refresh_limit(&self, platform: &str, name: &str) -> String {
        format!(
            "{}{{n:{}:{}}}:f",
            self.prefix,
            component(platform),
            component(name)
        )
    }

    /// The GCRA state of the API key whose id is `key_id` ([`key_id`]).
    pub fn quota(&self, key_id: &str) -> String {
        format!("{}{{q:{}}}", self.prefix, component(key_id))
    }

    /// The outbound budget of `platform`.
    pub fn outbound(&self, platform: &str) -> String {
        format!("{}{{o:{}}}", self.prefix, component(platform))
    }

    /// The refresh share of `platform`'s budget: its own key, in the budget's slot.
    pub fn refresh_share(&self, platform: &str) -> String {
        format!("{}:r", self.outbound(platform))
    }

    /// The breaker of `platform`.
    pub fn breaker(&self, platform: &str) -> String {
        format!("{}{{b:{}}}", self.prefix, component(platform))
    }

    /// The rest of proxy `index` of `scope`.
    pub fn proxy(&self, scope: &str, index: usize) -> String {
        format!("{}{{r:{}}}:{index}", self.prefix, component(scope))
    }

    /// The canary's round lease.
    pub fn canary_lease(&self) -> String {
        format!("{}{{c}}:lease", self.prefix)
    }

    /// The canary's last verdicts.
    pub fn canary_verdicts(&self) -> String {
        format!("{}{{c}}:verdicts", self.prefix)
    }
}

fn component(s: &str) -> String {
    let plain = !s.is_empty()
        && s.len() <= MAX_PLAIN_LEN
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if plain {
        s.to_owned()
    } else {
        format!("#{}", hex(&Sha256::digest(s.as_bytes())[..16]))
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// The hash slot's tag of a key: what Redis Cluster hashes.
#[cfg(test)]
pub(crate) fn hash_tag(key: &str) -> &str {
    match key.find('{') {
        Some(open) => match key[open + 1..].find('}') {
            Some(len) if len > 0 => &key[open + 1..open + 1 + len],
            _ => key,
        },
        None => key,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_names_keys_share_one_slot_and_differ() {
        let k = Keys::new("pl:");
        let n = k.name("short-video", "alice");
        assert_eq!(n.entry, "pl:{n:short-video:alice}:e");
        assert_eq!(hash_tag(&n.entry), hash_tag(&n.stale));
        assert_eq!(hash_tag(&n.entry), hash_tag(&n.lock));
        assert_ne!(n.entry, n.stale);
        assert_ne!(
            hash_tag(&n.entry),
            hash_tag(&k.name("photo-share", "alice").entry)
        );
        assert_eq!(hash_tag(&k.proxy("sv", 0)), hash_tag(&k.proxy("sv", 7)));
        assert_ne!(hash_tag(&k.quota("ab")), hash_tag(&n.entry));
    }

    #[test]
    fn hostile_components_cannot_open_a_tag_or_grow() {
        let k = Keys::new("pl:");
        for evil in ["a}b", "{x}", "", "a b", &"y".repeat(10_000), "ünï"] {
            let key = k.name("sv", evil).entry;
            assert_eq!(key.matches('{').count(), 1, "{key}");
            assert_eq!(key.matches('}').count(), 1, "{key}");
            assert!(key.len() < 100, "{key}");
        }
        assert_ne!(k.name("sv", "a}b").entry, k.name("sv", "a{b").entry);
    }

    #[test]
    fn key_ids_are_stable_short_and_not_the_digest() {
        let digest: [u8; 32] = Sha256::digest(b"secret-key").into();
        let id = key_id(&digest);
        assert_eq!(id.len(), 32);
        assert_eq!(id, key_id(&digest));
        assert!(!hex(&digest).contains(&id));
        assert_ne!(id, key_id(&[0; 32]));
    }
}
