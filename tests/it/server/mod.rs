//! The server (`src/server`): connections that hang up or stop reading.

mod hangups;
