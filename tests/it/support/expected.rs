//! The bodies the stand-ins say the service must return (JSON, since the `stand-in` crate
//! knows nothing of the service), as the service's own body types, for tests that compare
//! an extractor's verdict.

use profile_lookup::platform::photo_share::PhotoShareProfile;
use profile_lookup::platform::short_video::ShortVideoProfile;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use stand_in::{photo_share as ps, short_video as sv};

/// `expected` as the body type `B`, which must write it back exactly: a field the type
/// lacks, adds or spells otherwise fails here, not as a puzzling inequality later.
fn typed<B: Serialize + DeserializeOwned>(expected: Value) -> B {
    let body: B = serde_json::from_value(expected.clone())
        .unwrap_or_else(|e| panic!("the stand-in's body is not the service's: {e}\n{expected}"));
    let back = serde_json::to_value(&body).unwrap();
    assert_eq!(
        back, expected,
        "the service's body type changes the stand-in's"
    );
    body
}

/// [`sv::expected_body`] as the service's short-video body.
pub fn short_video(user: &sv::SampleUser) -> ShortVideoProfile {
    typed(sv::expected_body(user))
}

/// [`sv::expected_embed_body`] as the service's short-video body.
pub fn short_video_embed(user: &sv::SampleUser) -> ShortVideoProfile {
    typed(sv::expected_embed_body(user))
}

/// [`ps::expected_body`] as the service's photo-share body.
pub fn photo_share(user: &ps::SampleUser) -> PhotoShareProfile {
    typed(ps::expected_body(user))
}
