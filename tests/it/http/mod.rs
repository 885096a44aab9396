//! The HTTP edge (`src/http`): auth, usernames, errors, limits, the OpenAPI contract, `/docs`.

mod docs_page;
mod edge;
mod openapi;
