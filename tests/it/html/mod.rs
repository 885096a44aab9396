//! The HTML reader (`src/html`): where the state script is found.

mod script_finder;
