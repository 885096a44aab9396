//! The cache on one replica (`src/cache`): stale-while-revalidate, refresh-ahead.

pub mod freshness;
