//! The HTTP edge (`src/http`): auth, usernames, errors, limits, the OpenAPI contract, `/docs`.

mod access_log;
mod docs_page;
mod edge;
mod openapi;
