//! The binary's commands (`src/commands`): `extract`, `serve`, `demo`, `healthcheck`, start-up, usage mistakes.

mod check;
mod cli;
mod startup;
mod usage_mistakes;
