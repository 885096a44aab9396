//! PLACEHOLDER while the solver is written in parallel; replaced before any commit.
/// Placeholder.
#[derive(Clone, Debug)]
pub struct WafChallenge;
/// Placeholder.
pub fn detect(_page: &[u8]) -> Option<WafChallenge> {
    None
}
/// Placeholder.
pub fn solve(_ch: &WafChallenge, _max_iterations: u32) -> Option<Vec<(String, String)>> {
    None
}
