//! The canary (`src/canary`): rounds end to end, the `canary` command, a fleet's canary.

mod cli;
mod fleet;
mod rounds;
