//! The binary's commands (`src/commands`): `extract`, `serve`, `demo`, `healthcheck`, start-up.

mod cli;
mod startup;
