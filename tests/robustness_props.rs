//! Properties of the name validators and the YAML value path: a validator never panics, and
//! whatever it accepts reads back from YAML as the same string when written plain (as the
//! templates write it); any string at all round-trips through `yaml_scalar`.

use operator_rs::names;
use operator_rs::scaffold::yaml_scalar;
use proptest::prelude::*;

/// Reads `key: <text>` and returns the value of `key`.
fn read_back(text: &str) -> Option<serde_json::Value> {
    let doc: serde_json::Value = serde_saphyr::from_str(&format!("key: {text}\n")).ok()?;
    doc.get("key").cloned()
}

/// Strings built from the characters names are made of, plus the YAML-special ones.
fn name_like() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[a-zA-Z0-9._:/@~'\"#&*!|>%{}\\[\\], -]{0,24}").unwrap()
}

/// A validator, returning the text that lands in YAML when it accepts.
type Validator = fn(&str) -> Option<String>;

fn validators() -> Vec<(&'static str, Validator)> {
    vec![
        ("image", |s| {
            names::validate_image(s).ok().map(|()| s.to_string())
        }),
        ("kind", |s| {
            names::validate_kind(s).ok().map(|()| s.to_string())
        }),
        ("plural", |s| {
            names::validate_plural(s).ok().map(|()| s.to_string())
        }),
        ("project name", |s| {
            names::validate_project_name(s).ok().map(|()| s.to_string())
        }),
        ("domain", |s| {
            names::validate_domain(s).ok().map(|()| s.to_string())
        }),
        ("group", |s| {
            names::validate_group(s, "example.com")
                .ok()
                .map(|()| names::qualified_group(s, "example.com"))
        }),
        ("group (no domain)", |s| {
            names::validate_group(s, "").ok().map(|()| s.to_string())
        }),
        ("version", |s| {
            names::validate_version(s).ok().map(|()| s.to_string())
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn accepted_names_read_back_from_yaml_unchanged(s in name_like()) {
        for (what, accept) in validators() {
            if let Some(text) = accept(&s) {
                prop_assert_eq!(read_back(&text), Some(serde_json::Value::String(text.clone())), "{} {:?}", what, s);
            }
        }
    }

    #[test]
    fn number_and_boolean_shapes_are_never_accepted_plain(
        n in proptest::string::string_regex("[0-9][0-9a-fA-FxXoO_.:+-]{0,8}|[yY]|[nN]|yes|no|on|off|true|false|null|Null|TRUE|No|Off").unwrap()
    ) {
        prop_assert!(!names::yaml_reads_as_string(&n), "{:?}", n);
    }

    #[test]
    fn any_string_round_trips_through_yaml_scalar(s in any::<String>(), long in "[a-z:/._@-]{60,300}") {
        // One line whatever the value: a template indents it after `key: `.
        let long_scalar = yaml_scalar(&long);
        prop_assert!(!long_scalar.contains('\n'), "{:?}", long_scalar);
        prop_assert_eq!(read_back(&long_scalar), Some(serde_json::Value::String(long.clone())));
        let scalar = yaml_scalar(&s);
        prop_assert!(!scalar.contains('\n'), "{:?}", scalar);
        prop_assert_eq!(read_back(&scalar), Some(serde_json::Value::String(s.clone())), "{:?} as {:?}", s, scalar);
    }
}

#[test]
fn images_accepted_by_the_grammar() {
    for ok in [
        "memcached",
        "memcached:1.6",
        "library/memcached:1.6.21-alpine",
        "quay.io/acme/app:v2",
        "localhost:5000/app",
        "registry.local:5000/a/b__c-d.e:tag_1",
        &format!("ghcr.io/acme/app@sha256:{}", "0f".repeat(32)),
    ] {
        assert!(
            names::validate_image(ok).is_ok(),
            "{ok}: {:?}",
            names::validate_image(ok)
        );
    }
    for bad in [
        "",
        "Memcached",
        "a//b",
        "a:",
        ":tag",
        "a@sha256:xyz",
        "-a",
        "a b",
        "a\tb",
        "1234",
        "null",
        "a_:1",
    ] {
        assert!(names::validate_image(bad).is_err(), "{bad:?} accepted");
    }
}
