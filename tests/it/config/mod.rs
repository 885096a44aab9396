//! Configuration (`src/config`): layering, API keys, ranges checked at load.

mod api_keys;
mod layers;
mod limits;
mod mistakes;
