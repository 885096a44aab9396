//! The repository's own checks: the README and `docs/` true to the code, the module graph.

mod module_graph;
mod readme_and_docs;
