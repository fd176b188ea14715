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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// A file name from any stem fits 255 bytes and keeps its extension; the stem stays whole when
    /// it fits; the name is the same on every call; two stems never share a name.
    #[test]
    fn file_names_fit_and_stay_apart(a in "\\PC{0,300}", b in "\\PC{0,300}", tail in "[a-z.]{0,80}") {
        for stem in [&a, &b, &format!("{a}{tail}")] {
            let f = names::fit_file_name(stem, ".yaml");
            prop_assert!(f.len() <= 255, "{} bytes: {:?}", f.len(), f);
            prop_assert!(f.ends_with(".yaml"));
            prop_assert_eq!(&f, &names::fit_file_name(stem, ".yaml"));
            if stem.len() + 5 <= 255 {
                prop_assert_eq!(f, format!("{stem}.yaml"));
            }
        }
        // Long stems that differ only after the cut.
        let long_a = format!("{}{a}", "x".repeat(260));
        let long_b = format!("{}{b}", "x".repeat(260));
        if long_a != long_b {
            prop_assert_ne!(names::fit_file_name(&long_a, ".yaml"), names::fit_file_name(&long_b, ".yaml"));
        }
    }

    /// A deprecation warning that is accepted fits kube-apiserver's length (bytes) and holds no
    /// control character, line or paragraph separator, or space other than ' '
    /// (tests/apiserver/names.rs checks the whole rule against the API server).
    #[test]
    fn accepted_deprecation_warnings_are_printable_and_short(w in "\\PC{0,140}|[\\s\\PC]{0,300}|.{0,20}") {
        if operator_rs::crdgen::deprecation_warning_problem(&w).is_none() {
            prop_assert!(!w.is_empty() && w.len() <= 256, "{:?}", w);
            prop_assert!(!w.chars().any(|c| c.is_control() || (c.is_whitespace() && c != ' ')), "{:?}", w);
        }
    }

    /// Any accepted project name makes a valid Namespace (`<name>-system`, a DNS-1123 label) and
    /// valid Services (`<name>-controller-manager-metrics-service`, `<name>-webhook-service`,
    /// DNS-1035 labels); and any name of lowercase letters short enough for them is accepted
    /// unless it is a crate of the dependency tree or a keyword.
    #[test]
    fn project_names_make_valid_object_names(n in "[a-z][a-z0-9-]{0,70}[a-z0-9]|[a-z]{1,40}") {
        if names::validate_project_name(&n).is_ok() {
            prop_assert!(names::is_dns1123_label(&format!("{n}-system")), "{}", n);
            prop_assert!(names::is_dns1035_label(&format!("{n}-controller-manager-metrics-service")), "{}", n);
            prop_assert!(names::is_dns1035_label(&format!("{n}-webhook-service")), "{}", n);
        } else if n.len() <= 28 && n.chars().all(|c| c.is_ascii_lowercase()) {
            let e = names::validate_project_name(&n).unwrap_err().to_string();
            prop_assert!(e.contains("dependency tree") || e.contains("keyword") || e.contains("YAML"), "{}: {}", n, e);
        }
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
