//! The photo-share platform: its profile JSON, its page shapes, and how we fetch them.
pub mod extract;
pub mod fetch;

pub use fetch::PhotoShareSource;
