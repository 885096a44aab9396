//! The cache on one replica (`src/cache`): stale-while-revalidate, refresh-ahead, its memory
//! bound.

pub mod freshness;
pub mod memory;
