//! What the service must answer for a sample: its API body, as JSON. The platform knows
//! nothing of the service's types, so the service's tests compare their own with these.

use serde_json::{Value, json};

use super::SampleUser;

/// The body the service must return for `user`, whichever document it was read from: the
/// small picture stands in for a missing HD one, a count the documents leave out is `null`,
/// links come unwrapped from the platform's redirector, and a hidden category is `null`.
pub fn expected_body(user: &SampleUser) -> Value {
    let hd = if user.profile_pic_url_hd.is_empty() {
        user.profile_pic_url
    } else {
        user.profile_pic_url_hd
    };
    json!({
        "id": user.pk,
        "username": user.username,
        "full_name": user.full_name,
        "biography": user.biography,
        "profile_pic_url": user.profile_pic_url,
        "profile_pic_url_hd": hd,
        "is_verified": user.is_verified,
        "is_private": user.is_private,
        "edge_followed_by": { "count": user.followers },
        "edge_follow": { "count": user.following },
        "edge_owner_to_timeline_media": { "count": user.posts },
        "external_url": user.external_url,
        "bio_links": user
            .bio_links
            .iter()
            .map(|(url, title, _)| json!({ "url": url, "title": title }))
            .collect::<Vec<_>>(),
        "pronouns": user.pronouns,
        "category_name": user.category_name,
    })
}
