use super::*;

#[derive(Debug, Deserialize)]
struct Inner {
    #[serde(default)]
    count: Num,
}

#[derive(Debug, Deserialize)]
struct Probe<'a> {
    #[serde(default, borrow)]
    t: Text<'a>,
    #[serde(default)]
    f: Flag,
    #[serde(default)]
    n: Num,
    #[serde(default)]
    i: Code,
    #[serde(default)]
    o: Object<Inner>,
}

/// A code field, read as the readers read `relation`.
#[derive(Debug, Default, PartialEq)]
struct Code(i64);

impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Scalar::deserialize(d).map(|s| Code(s.code()))
    }
}

fn probe(json: &str) -> Probe<'_> {
    serde_json::from_str(json).expect("a wrongly typed field never fails the document")
}

fn num(json: &str) -> Num {
    probe(&format!(r#"{{"n":{json}}}"#)).n
}

#[test]
fn missing_and_null_fields_take_the_neutral_value() {
    for json in ["{}", r#"{"t":null,"f":null,"n":null,"i":null,"o":null}"#] {
        let p = probe(json);
        assert_eq!(p.t.0, "");
        assert_eq!((p.f, p.n), (Flag(false), Num::Missing));
        assert_eq!(p.i, Code(0));
        assert!(p.o.0.is_none());
    }
}

#[test]
fn every_json_type_in_every_field_is_read_or_neutral() {
    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    for value in [
        "\"x\"",
        "7",
        "-7",
        "1.5",
        "true",
        "[1,[2]]",
        r#"{"a":{"b":[]}}"#,
        &deep,
    ] {
        let json = format!(r#"{{"t":{value},"f":{value},"n":{value},"i":{value},"o":{value}}}"#);
        let p = probe(&json);
        let number = value == "7" || value == "-7";
        let text = number || value.starts_with('"');
        assert_eq!(p.t.0.is_empty(), !text, "{value}");
        assert_eq!(p.f, Flag(value == "true"), "{value}");
        assert_eq!(p.i.0 != 0, number, "{value}");
        let count = match value {
            "7" => Num::Value(7),
            "-7" => Num::Negative(-7),
            _ => Num::Invalid,
        };
        assert_eq!(p.n, count, "{value}");
        assert_eq!(p.o.0.is_some(), value.starts_with('{'), "{value}");
    }
}

#[test]
fn counts_are_integers_integral_floats_and_digit_strings() {
    for (json, want) in [
        ("0", Some(0)),
        ("18446744073709551615", Some(u64::MAX)),
        ("4.0e6", Some(4_000_000)),
        ("1.8e19", None),
        ("9.007199254740992e15", Some(9_007_199_254_740_992)),
        ("9.007199254740994e15", None),
        (r#""4001943""#, Some(4_001_943)),
        (r#""007""#, Some(7)),
        (r#""\u0035""#, Some(5)),
        ("18446744073709551616", None),
        ("-1", None),
        ("1.5", None),
        ("1e300", None),
        (r#""+5""#, None),
        (r#""-3""#, None),
        (r#"" 5""#, None),
        (r#""12k""#, None),
        (r#""""#, None),
        (r#""18446744073709551616""#, None),
    ] {
        assert_eq!(num(json).value(), want, "{json}");
        let unusable = want.is_none();
        let negative = matches!(num(json), Num::Negative(_));
        assert_eq!(num(json) == Num::Invalid || negative, unusable, "{json}");
    }
}

#[test]
fn the_first_usable_spelling_of_a_count_wins() {
    let (v, bad, none, neg) = (Num::Value(3), Num::Invalid, Num::Missing, Num::Negative(-2));
    assert_eq!(bad.or(v), v);
    assert_eq!(neg.or(v), v);
    assert_eq!(v.or(Num::Value(4)), v);
    assert_eq!(none.or(bad), bad);
    assert_eq!(bad.or(none), bad);
    assert_eq!(neg.or(bad), neg);
    assert_eq!(none.or(none), none);
}

#[test]
fn a_negative_count_unwraps_from_32_bits_down_to_i32_min_only() {
    assert_eq!(
        Num::Negative(-1_625_611_536).unwrapped(),
        Some(2_669_355_760)
    );
    assert_eq!(Num::Negative(-1).unwrapped(), Some(4_294_967_295));
    assert_eq!(
        Num::Negative(i64::from(i32::MIN)).unwrapped(),
        Some(2_147_483_648)
    );
    assert_eq!(Num::Negative(i64::from(i32::MIN) - 1).unwrapped(), None);
    assert_eq!(Num::Value(5).unwrapped(), Some(5));
    assert_eq!(Num::Invalid.unwrapped(), None);
}

#[test]
fn text_borrows_when_it_can_and_decodes_escapes() {
    let p = probe(r#"{"t":"plain"}"#);
    assert!(matches!(p.t.0, Cow::Borrowed("plain")));
    let p = probe(r#"{"t":"a\u002Fb\/c &amp; \ud83d\ude00"}"#);
    assert_eq!(p.t.0, "a/b/c &amp; \u{1f600}");
    assert_eq!(probe(r#"{"t":12345678901234}"#).t.0, "12345678901234");
    assert_eq!(probe(r#"{"t":-5}"#).t.0, "-5");
}

#[test]
fn codes_are_integers_that_fit_an_i64() {
    assert_eq!(probe(r#"{"i":-2}"#).i, Code(-2));
    assert_eq!(probe(r#"{"i":9223372036854775808}"#).i, Code(0));
    assert_eq!(probe(r#"{"i":"1"}"#).i, Code(0));
}

#[test]
fn an_object_field_reads_its_members() {
    let p = probe(r#"{"o":{"count":"12","edges":[{}]}}"#);
    assert_eq!(p.o.0.map(|o| o.count), Some(Num::Value(12)));
}

#[test]
fn errors_do_not_quote_the_input() {
    #[derive(Debug, Deserialize)]
    struct Strict {
        #[serde(rename = "o")]
        _o: Inner,
    }
    let syntax = serde_json::from_str::<Probe>(r#"{"t": secret-token}"#).unwrap_err();
    assert_eq!(
        describe("api body", &syntax),
        "api body: expected value at line 1 column 7"
    );
    let eof = serde_json::from_str::<Probe>(r#"{"t": "secret"#).unwrap_err();
    assert_eq!(
        describe("api body", &eof),
        "api body: EOF while parsing a string at line 1 column 13"
    );
    let data = serde_json::from_str::<Strict>(r#"{"o": "secret"}"#).unwrap_err();
    assert!(
        data.to_string().contains("secret"),
        "serde quotes it: {data}"
    );
    assert_eq!(
        describe("state", &data),
        "state: a value of an unexpected shape at line 1 column 14"
    );
}

#[test]
fn the_first_value_is_read_and_what_follows_is_not() {
    let (text, end) = first_value::<Text>(br#" "a" ;window.x = {"#)
        .unwrap()
        .unwrap();
    assert_eq!((text.0.as_ref(), end), ("a", 4));
    assert!(first_value::<Text>(b" \n").is_none());
    assert!(first_value::<Probe>(br#"{"t":"#).unwrap().is_err());
}

/// The record a user object gives through the photo-share table.
fn photo_share_user(json: &str) -> Record<'_> {
    let user: UserObject<'_, PhotoShareNames> = serde_json::from_str(json).unwrap();
    user.0
}

#[derive(Debug)]
struct PhotoShareNames;

impl Tabled for PhotoShareNames {
    fn table() -> &'static Table {
        &PHOTO_SHARE
    }
}

#[test]
fn a_list_keeps_strings_and_link_objects_and_nothing_else() {
    let record = photo_share_user(
        r#"{"username":"bo","pronouns":["she",7,null,["x"],{"a":1},"her"],
            "bio_links":[{"url":"https://a.example","title":"A","link_type":"external",
            "icon":{"deep":[[]]}},{"lynx_url":"https://l.example/?u=b"},"loose"]}"#,
    );
    let view = View::new(&PHOTO_SHARE, &record);
    let texts: Vec<_> = view
        .list("pronouns")
        .iter()
        .map(|item| match item {
            Item::Text(text) => text.to_string(),
            Item::Link { url, .. } => format!("link {url}"),
        })
        .collect();
    assert_eq!(texts, ["she", "link ", "her"]);
    let links = view.list("bio_links");
    assert_eq!(links.len(), 3);
    assert_eq!(
        links[0],
        Item::Link {
            url: "https://a.example".into(),
            lynx_url: "".into(),
            title: "A".into(),
        }
    );
    assert!(matches!(&links[1], Item::Link { url, lynx_url, .. }
        if url.is_empty() && lynx_url == "https://l.example/?u=b"));
    // A list field that is not an array, and a text field that is one, give nothing.
    let odd = photo_share_user(r#"{"username":"bo","pronouns":"she","category_name":["A"]}"#);
    let view = View::new(&PHOTO_SHARE, &odd);
    assert!(view.list("pronouns").is_empty());
    assert_eq!(view.text("category_name"), "");
}

#[test]
fn a_list_keeps_its_first_elements_only() {
    let many = format!(
        r#"{{"username":"bo","pronouns":[{}"last"]}}"#,
        r#""p","#.repeat(10_000)
    );
    let record = photo_share_user(&many);
    let list = View::new(&PHOTO_SHARE, &record).list("pronouns");
    assert_eq!(list.len(), scalar::MAX_ITEMS);
    assert!(list.iter().all(|item| *item == Item::Text("p".into())));
}

#[test]
fn a_switch_is_a_boolean_or_zero_or_one() {
    let cases = [
        ("true", Some(true)),
        ("1", Some(true)),
        ("false", Some(false)),
        ("0", Some(false)),
        ("2", None),
        ("-1", None),
        ("\"1\"", None),
        ("null", None),
        ("[]", None),
    ];
    for (json, want) in cases {
        let value: Scalar = serde_json::from_str(json).unwrap();
        assert_eq!(value.switch(), want, "{json}");
    }
}
