//! A profile as the cache and the edge carry it, whichever platform it came from: the
//! platform's exact body, serialised once, and the few facts the service itself reads from it.
//!
//! Each platform's body type (its folder's `body.rs`) is the API's exact shape and implements
//! [`Body`]; nothing above the platform layer names those types.

use std::fmt;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{AdditionalProperties, Schema};

/// A platform's success body: serialised as the API answers it, described by its schema.
pub trait Body: Serialize + serde::de::DeserializeOwned + ToSchema + Send + Sync + 'static {
    /// What the service reads from the body itself (the private flag, the extract summary).
    fn summary(&self) -> Summary;

    /// The documented nullable fields that are `null` in this body because the platform
    /// withheld them from a guest (a private account's counts, a post count no guest form
    /// gives), as dotted paths of the body: what `Profile-Withheld` names, so that a caller
    /// tells "withheld" from "zero". A body never holds `null` for a field it could not read
    /// (that answer is never given), so every `null` count is a withheld one.
    fn withheld(&self) -> Vec<&'static str>;

    /// The documented nullable fields beside the counts (a bio link, a creation time) that are
    /// `null` in this body, as dotted paths of the body. Such a field is `null` when the user
    /// set none, too, so it is withheld only when the body came from a document that never
    /// gives it ([`Document::withholds`](crate::platform::site::Document::withholds)).
    fn unset(&self) -> Vec<&'static str>;
}

/// The facts of a profile the service reads, whatever the platform's body calls them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The platform's id of the account (what a source asked by id asks by; `""` when the
    /// document gave none).
    pub id: String,
    /// The handle, in the platform's spelling.
    pub username: String,
    /// Whether the platform flags the account as private.
    pub private: bool,
    /// Followers, `None` where the platform does not give the count.
    pub followers: Option<u64>,
    /// What the account published, in the platform's word for it (`videos`, `posts`), and how
    /// many.
    pub posts: (&'static str, Option<u64>),
    /// The fields the platform withheld ([`Body::withheld`]).
    pub withheld: Vec<&'static str>,
    /// The nullable fields beside the counts that are `null` ([`Body::unset`]).
    pub unset: Vec<&'static str>,
}

impl Summary {
    /// The withheld fields as `Profile-Withheld` lists them (`a, b`), when the profile came
    /// from a document that never gives `withholds`: the withheld counts, then each of those
    /// fields that is `null`; `None` when none was.
    pub fn withheld_list(&self, withholds: &[&str]) -> Option<Bytes> {
        let mut fields = self.withheld.clone();
        fields.extend(self.unset.iter().filter(|f| withholds.contains(f)));
        withheld_list(&fields)
    }
}

/// `fields` as one `Profile-Withheld` value (`a, b`); `None` for none.
pub fn withheld_list(fields: &[&str]) -> Option<Bytes> {
    (!fields.is_empty()).then(|| Bytes::from(fields.join(", ")))
}

impl fmt::Display for Summary {
    /// `@name followers=N videos=N private=false`, `null` for a count not given; the name is
    /// escaped, since it comes from the platform.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = |n: Option<u64>| n.map_or_else(|| "null".to_owned(), |n| n.to_string());
        write!(
            f,
            "@{} followers={} {}={} private={}",
            self.username.escape_debug(),
            count(self.followers),
            self.posts.0,
            count(self.posts.1),
            self.private
        )
    }
}

/// The OpenAPI schemas of body `B` and of those it refers to, by name, each a closed object
/// (`additionalProperties: false`: the service answers no other key). The body types do not
/// deny unknown keys themselves, so that a stored body of a newer version reads back.
pub fn schemas<B: Body>() -> Vec<(String, RefOr<Schema>)> {
    let mut schemas = vec![(B::name().into_owned(), B::schema())];
    B::schemas(&mut schemas);
    for (_, schema) in &mut schemas {
        if let RefOr::T(Schema::Object(object)) = schema {
            object.additional_properties = Some(Box::new(AdditionalProperties::FreeForm(false)));
        }
    }
    schemas
}

/// A profile of any platform: its exact JSON body and its [`Summary`].
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    json: Bytes,
    summary: Summary,
}

impl Profile {
    /// Serialises `body` once, so that a cache hit costs a reference-count bump.
    pub fn new<B: Body>(body: &B) -> Self {
        // Serialising plain structs of strings, bools and integers cannot fail.
        let json = serde_json::to_vec(body).unwrap_or_default();
        Self {
            json: Bytes::from(json),
            summary: body.summary(),
        }
    }

    /// The exact response body.
    pub fn json(&self) -> &Bytes {
        &self.json
    }

    /// Whether the platform flags the account as private.
    pub fn is_private(&self) -> bool {
        self.summary.private
    }

    /// What the service reads from the body.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }
}

/// A `{"count": n}` object; `null` where the platform gives no count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Count {
    /// The exact count, or `null` when the platform does not give it.
    #[schema(format = "uint64")]
    pub count: Option<u64>,
}

impl Count {
    /// A count the platform gave.
    pub fn of(n: u64) -> Self {
        Self { count: Some(n) }
    }
}
