//! A per-thread count of the upstream bytes the page readers examine, so that tests can show a
//! reader's work grows linearly with its input without timing anything.
//!
//! Linear cost matters (a hostile page must not make a reader quadratic), but timing it flakes
//! on a loaded machine. So every search over upstream bytes goes through the counted searches
//! here (`memchr`, `memchr2`, `find`), and every loop that steps through bytes itself adds its
//! steps with `examined`: the HTML tokenizer, the JSON skimmer, the key and marker
//! searches, and the bytes handed to serde_json (a single-pass parser, so linear in what it is
//! given). Tests wrap a call in [`measure`] and compare an input of `n` bytes with one of `2n`
//! ([`linear`]).
//!
//! Counting costs a thread-local add per search or per loop, never per byte, and nothing reads
//! the count outside tests.

use std::cell::Cell;

thread_local! {
    static EXAMINED: Cell<u64> = const { Cell::new(0) };
}

/// Adds `bytes` to this thread's count of bytes examined.
#[inline]
pub(crate) fn examined(bytes: usize) {
    EXAMINED.with(|count| count.set(count.get().wrapping_add(bytes as u64)));
}

/// [`memchr::memchr`], counting the bytes it looked at.
#[inline]
pub(crate) fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    let found = memchr::memchr(needle, haystack);
    examined(found.map_or(haystack.len(), |at| at + 1));
    found
}

/// [`memchr::memchr2`], counting the bytes it looked at.
#[inline]
pub(crate) fn memchr2(one: u8, two: u8, haystack: &[u8]) -> Option<usize> {
    let found = memchr::memchr2(one, two, haystack);
    examined(found.map_or(haystack.len(), |at| at + 1));
    found
}

/// [`memchr::memmem::find`], counting the bytes it looked at.
#[inline]
pub(crate) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let found = memchr::memmem::find(haystack, needle);
    examined(found.map_or(haystack.len(), |at| at + needle.len()));
    found
}

/// Runs `f`, returning its result and the bytes examined on this thread meanwhile.
#[doc(hidden)]
pub fn measure<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = EXAMINED.with(Cell::get);
    let out = f();
    (out, EXAMINED.with(Cell::get).wrapping_sub(before))
}

/// Whether `work` (bytes examined for an input of about the given size) grows linearly between
/// `n` and `2n`: `work(2n) ≤ 2.2 × work(n) + 4 KiB` (quadratic work would be 4×). `Err` says
/// both counts.
#[doc(hidden)]
pub fn linear(n: usize, work: impl Fn(usize) -> u64) -> Result<(u64, u64), String> {
    let (once, twice) = (work(n), work(2 * n));
    if twice * 10 <= once * 22 + 40 * 1024 {
        Ok((once, twice))
    } else {
        Err(format!(
            "{once} bytes examined for {n}, {twice} for {}",
            2 * n
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_what_each_search_looked_at() {
        let ((), count) = measure(|| {
            assert_eq!(memchr(b'c', b"abcabc"), Some(2));
            assert_eq!(memchr2(b'x', b'y', b"abc"), None);
            assert_eq!(find(b"abcabc", b"ca"), Some(2));
            examined(10);
        });
        assert_eq!(count, 3 + 3 + 4 + 10);
    }

    #[test]
    fn tells_linear_from_quadratic() {
        let n = 10_000;
        assert!(linear(n, |n| 3 * n as u64 + 100).is_ok());
        assert!(linear(n, |n| (n * n / 1000) as u64).is_err());
    }
}
