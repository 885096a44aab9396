//! The `{username}` of a lookup route as an extractor: the handler receives a checked
//! [`Username`], and a caller who sent a bad one gets the API's own 400 problem document,
//! never axum's plain-text rejection.

use std::marker::PhantomData;

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;

use crate::error::ApiError;
use crate::platform::site::Site;
use crate::username::{Username, rule_text};

/// A username checked against the rule of platform `S`.
pub struct Name<S> {
    /// The checked name.
    pub name: Username,
    platform: PhantomData<fn() -> S>,
}

impl<S: Site, State: Send + Sync> FromRequestParts<State> for Name<S> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &State) -> Result<Self, ApiError> {
        let platform = S::PLATFORM;
        match Path::<String>::from_request_parts(parts, state).await {
            Ok(Path(raw)) => Username::parse(platform, &raw)
                .map(|name| Name {
                    name,
                    platform: PhantomData,
                })
                .map_err(|e| ApiError::InvalidUsername(e.to_string())),
            // Percent-decoding gave bytes that are not UTF-8.
            Err(_) => {
                let (min, max) = platform.username_len();
                Err(ApiError::InvalidUsername(format!(
                    "the username is not valid text. {}",
                    rule_text(min, max)
                )))
            }
        }
    }
}
