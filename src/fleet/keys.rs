//! Key names, with hash tags so that what one script touches sits on one cluster slot.
//!
//! Every key is `P{KIND:COMPONENT:…}` and maybe a suffix, built by `Keys::tag`: `P` is
//! `redis.key_prefix`, `KIND` a letter or two a primitive names in its own file (an `impl Keys`
//! block beside its calls), and each component caller text made safe. The table of every key
//! is in the module docs of [`super`]. The one tag several primitives share is a name's
//! ([`Keys::name`]): `P{n:PLATFORM:NAME}:e` the fresh entry, `…:s` its stale record, `…:l` its
//! flight lock (and `…:f` its refresh limit, `…:i` the platform id learned for it), so that a script can read the entry and the
//! lock, or write the entry and drop the stale copy, in one call even on a cluster.
//!
//! Components that are not plain `[A-Za-z0-9._-]` (at most 64 bytes) are replaced by `#` and
//! a hex digest, so no caller input can open a hash tag, make a key long, or collide with a
//! plain name.

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

/// Builds every key name from one prefix (`redis.key_prefix`).
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

    /// `P{KIND:PART:…}`: the key (or the start of the keys) of `kind` for `parts`, each part
    /// made safe. What the key's hash slot is: keys with one tag share a slot.
    pub(super) fn tag(&self, kind: &str, parts: &[&str]) -> String {
        let len = parts
            .iter()
            .map(|p| p.len().min(MAX_PLAIN_LEN) + 2)
            .sum::<usize>();
        let mut key = String::with_capacity(self.prefix.len() + kind.len() + len + 8);
        key.push_str(&self.prefix);
        key.push('{');
        key.push_str(kind);
        for part in parts {
            key.push(':');
            push_component(&mut key, part);
        }
        key.push('}');
        key
    }

    /// The keys of `name` on `platform`.
    pub fn name(&self, platform: &str, name: &str) -> NameKeys {
        let tag = self.name_tag(platform, name);
        NameKeys {
            entry: format!("{tag}:e"),
            stale: format!("{tag}:s"),
            lock: format!("{tag}:l"),
        }
    }

    /// The tag every key of `name` on `platform` shares (its slot).
    pub(super) fn name_tag(&self, platform: &str, name: &str) -> String {
        self.tag("n", &[platform, name])
    }
}

/// Appends `s` as a key component: as written when plain, else `#` and a digest.
fn push_component(key: &mut String, s: &str) {
    let plain = !s.is_empty()
        && s.len() <= MAX_PLAIN_LEN
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if plain {
        key.push_str(s);
    } else {
        key.push('#');
        key.push_str(&hex(&Sha256::digest(s.as_bytes())[..16]));
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
