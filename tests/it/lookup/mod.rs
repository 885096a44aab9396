//! Lookups end to end (`src/lookup`): bodies, refusals, one flight per name, retries.

mod end_to_end;
mod flight_and_retry;
