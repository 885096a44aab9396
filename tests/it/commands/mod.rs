//! The binary's commands (`src/commands`): `extract`, `serve`, `demo`, `healthcheck`, start-up, usage mistakes.

mod check;
mod cli;
mod extract_owner;
mod healthcheck;
mod startup;
mod usage_mistakes;
