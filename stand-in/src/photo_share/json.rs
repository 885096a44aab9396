//! Writing JSON the way each upstream shape spells it, and deterministic filler for samples.

use std::fmt::Write as _;

use crate::json_text::push_json_str;

/// How a shape escapes its strings (the platforms differ, and the extractor must decode all).
#[derive(Clone, Copy, Debug)]
pub(super) enum Style {
    /// The JSON API: `/` as `\/`, `&` as `\u0026`, other text raw UTF-8.
    Api,
    /// A data-sjs blob: `/` as `\/`, `<` as `\u003C`, every non-ASCII character as `\uXXXX`.
    Sjs,
    /// The legacy `_sharedData` state: `/` as `\u002F`, `<` and `&` as `\u…`.
    Legacy,
}

/// Appends `s` as a JSON string literal (quotes included) in `style`.
pub(super) fn push_str(out: &mut String, s: &str, style: Style) {
    push_json_str(out, s, |out, c| {
        match c {
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '/' => out.push_str(match style {
                Style::Api | Style::Sjs => "\\/",
                Style::Legacy => "\\u002F",
            }),
            '&' if matches!(style, Style::Api | Style::Legacy) => out.push_str("\\u0026"),
            '<' if matches!(style, Style::Sjs | Style::Legacy) => out.push_str("\\u003C"),
            c if !c.is_ascii() && matches!(style, Style::Sjs) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            _ => return false,
        }
        true
    });
}

/// Appends `"key":"value",` in `style`.
pub(super) fn push_field(out: &mut String, key: &str, value: &str, style: Style) {
    out.push('"');
    out.push_str(key);
    out.push_str("\":");
    push_str(out, value, style);
    out.push(',');
}

/// Appends `"key":n,` or nothing when the count is unknown.
pub(super) fn push_count(out: &mut String, key: &str, count: Option<u64>) {
    if let Some(n) = count {
        let _ = write!(out, "\"{key}\":{n},");
    }
}

/// Appends `{"count":n,` (no count key when unknown) to start an edge-style object.
pub(super) fn open_edge(out: &mut String, key: &str, count: Option<u64>) {
    let _ = write!(out, "\"{key}\":{{");
    push_count(out, "count", count);
}

/// A deterministic pseudo-random number for the `i`th filler item (a 64-bit mix).
pub(super) fn mix(i: u64) -> u64 {
    let mut x = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A short-code-like token of 11 characters for filler item `i`.
pub(super) fn token(i: u64) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut x = mix(i);
    (0..11)
        .map(|_| {
            let c = ALPHABET[(x & 63) as usize] as char;
            x >>= 6;
            c
        })
        .collect()
}

/// Appends one timeline post node (edge-style, as the API and the legacy page carry it).
pub(super) fn push_post(out: &mut String, i: u64, owner_id: &str, owner: &str, style: Style) {
    let code = token(i);
    let r = mix(i);
    let likes = r % 50_000;
    let comments = (r >> 20) % 900;
    let taken = 1_600_000_000 + (r >> 32) % 100_000_000;
    let _ = write!(
        out,
        "{{\"node\":{{\"__typename\":\"GraphImage\",\"id\":\"{}\",\"shortcode\":\"{code}\",\
         \"dimensions\":{{\"height\":1350,\"width\":1080}},",
        3_000_000_000_000_000_000u64 + r % 1_000_000_000_000
    );
    let url = format!(
        "https://cdn.photo-share.example/v/t51/{code}_n.jpg?stp=dst-jpg_e35&_nc_ht=cdn&oh=00_{code}&oe=6600{i:04X}"
    );
    push_field(out, "display_url", &url, style);
    out.push_str("\"edge_media_to_tagged_user\":{\"edges\":[]},\"fact_check_overall_rating\":null,\"fact_check_information\":null,\"gating_info\":null,\"sharing_friction_info\":{\"should_have_sharing_friction\":false,\"bloks_app_url\":null},\"media_overlay_info\":null,\"media_preview\":null,");
    let _ = write!(out, "\"owner\":{{\"id\":\"{owner_id}\",");
    push_field(out, "username", owner, style);
    out.pop();
    out.push_str("},\"is_video\":false,\"has_upcoming_event\":false,");
    let alt = format!(
        "Photo by {owner} on {taken}. May be an image of a trail, a map and text that says \"day {i}\"."
    );
    push_field(out, "accessibility_caption", &alt, style);
    let caption = format!(
        "Day {i} on the ridge \u{26f0}\u{fe0f} \"worth it\" & more at https://example.org/d/{code}\n#trail{} #maps",
        r % 97
    );
    out.push_str("\"edge_media_to_caption\":{\"edges\":[{\"node\":{");
    push_field(out, "text", &caption, style);
    out.pop();
    let _ = write!(
        out,
        "}}}}]}},\"edge_media_to_comment\":{{\"count\":{comments}}},\"comments_disabled\":false,\
         \"taken_at_timestamp\":{taken},\"edge_liked_by\":{{\"count\":{likes}}},\
         \"edge_media_preview_like\":{{\"count\":{likes}}},\"location\":null,\"nft_asset_info\":null,"
    );
    push_field(out, "thumbnail_src", &url, style);
    out.push_str("\"thumbnail_resources\":[");
    for (n, size) in [150, 240, 320, 480, 640].into_iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        out.push('{');
        push_field(out, "src", &format!("{url}&s={size}"), style);
        let _ = write!(out, "\"config_width\":{size},\"config_height\":{size}}}");
    }
    out.push_str(
        "],\"coauthor_producers\":[],\"pinned_for_users\":[],\"viewer_can_reshare\":true}}",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_style_round_trips_through_a_json_parser() {
        let text = "a/b & <c> \"q\" \\ \n \u{1f9ed} \u{1}";
        for style in [Style::Api, Style::Sjs, Style::Legacy] {
            let mut out = String::new();
            push_str(&mut out, text, style);
            let back: String = serde_json::from_str(&out).expect("valid JSON string");
            assert_eq!(back, text, "{style:?}: {out}");
            assert_eq!(
                out.matches('/').count(),
                out.matches("\\/").count(),
                "{out}"
            );
            if !matches!(style, Style::Api) {
                assert!(!out.contains('<'), "{style:?}: {out}");
            }
        }
    }

    #[test]
    fn posts_are_valid_json_and_deterministic() {
        let mut a = String::new();
        push_post(&mut a, 7, "1", "x", Style::Legacy);
        let mut b = String::new();
        push_post(&mut b, 7, "1", "x", Style::Legacy);
        assert_eq!(a, b);
        serde_json::from_str::<serde_json::Value>(&a).expect("valid post JSON");
    }
}
