//! Our verdict against the real kube-apiserver's (etcd + kube-apiserver started here, flags of
//! /work/shared/k8s/README.md): every source case of `tests/crdgen/cases/` and every fixture is
//! generated without our checks and created; every schema case is created as it is; the API server
//! must refuse exactly what we refuse. And every cost case: the rule is put under a list of
//! `maxItems` K, where K is the fewest runs at which we find it over budget; the API server must
//! refuse it there with the same factor (to six decimals: the same cost) and accept it at K - 1.
//! Needs `KUBEBUILDER_ASSETS` (`export KUBEBUILDER_ASSETS=$(../shared/k8s/install.sh)`);
//! without it the test prints one line and is skipped.

use crate::control_plane;
use crate::crdgen_cases;

use std::path::{Path, PathBuf};

use control_plane::{ControlPlane, start};

use crdgen_cases::{cases, crate_of, project, schemas};
use operator_rs::crdgen;
use operator_rs::workspace::DiskTree;

/// Create (server-side dry run) the CRD of kind `C` in group `<name>.example.com` with `root` as
/// its schema; `Err` with the API server's message when it refuses.
fn create(cp: &ControlPlane, name: &str, root: &serde_json::Value) -> Result<(), String> {
    // The name's first word, as a DNS label.
    let label: String = name
        .split(' ')
        .next()
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let group = format!("{label}.example.com");
    let crd = serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("cs.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "cs", "singular": "c", "kind": "C", "listKind": "CList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": root}}]
        }
    });
    control_plane::dry_run(cp, &crd)
}

/// The factor in an "exceeds budget by factor of X" message.
fn factor_in(msg: &str, what: &str) -> Option<String> {
    let at = msg.find(&format!("{what} exceeds budget by factor of "))?;
    let rest = &msg[at + what.len() + " exceeds budget by factor of ".len()..];
    let end = rest.find(" (").unwrap_or(rest.len());
    Some(rest[..end].trim().to_string())
}

#[test]
fn apiserver_refuses_what_we_refuse() {
    if crate::common::runs_elsewhere("apiserver") {
        return;
    }
    let Some(assets) = control_plane::assets("crdgen_apiserver") else {
        return;
    };
    let cp = start(&assets);
    let mut disagreements = Vec::new();
    schema_cases(&cp, &mut disagreements);
    published_crds(&cp, &mut disagreements);
    type_cases(&cp, &mut disagreements);
    cost_cases(&cp, &mut disagreements);
    message_costs(&cp, &mut disagreements);
    source_cases(&cp, &mut disagreements);
    assert!(
        disagreements.is_empty(),
        "kube-apiserver and generate crds disagree on:\n{}",
        disagreements.join("\n")
    );
}

/// Every schema case, created as it is.
fn schema_cases(cp: &ControlPlane, disagreements: &mut Vec<String>) {
    for case in schemas::schema_cases() {
        let root = schemas::root(case.spec.clone());
        let ours = crdgen::apiserver_verdict(&serde_json::from_value(root.clone()).unwrap());
        let theirs = create(cp, case.name, &root);
        eprintln!("{}: ours {ours:?}, kube-apiserver {theirs:?}", case.name);
        if ours.is_ok() != theirs.is_ok() {
            disagreements.push(format!(
                "schema case {}: ours {ours:?}, kube-apiserver {theirs:?}",
                case.name
            ));
        }
    }
}

/// The published CRDs of `fixtures/crdgen-validate/`, as they are.
fn published_crds(cp: &ControlPlane, disagreements: &mut Vec<String>) {
    for (name, schema) in schemas::published_schemas() {
        let ours = crdgen::apiserver_verdict(&schema);
        let theirs = create(cp, "published", &serde_json::to_value(&schema).unwrap());
        eprintln!("{name}: ours {ours:?}, kube-apiserver {theirs:?}");
        if ours.is_ok() != theirs.is_ok() {
            disagreements.push(format!(
                "published {name}: ours {ours:?}, kube-apiserver {theirs:?}"
            ));
        }
    }
}

/// Every type case: the API server accepts exactly the rules we accept.
fn type_cases(cp: &ControlPlane, disagreements: &mut Vec<String>) {
    for (i, (rule, _)) in schemas::type_rules().into_iter().enumerate() {
        let root = schemas::type_case(rule);
        let ours = crdgen::apiserver_verdict(&serde_json::from_value(root.clone()).unwrap());
        let theirs = create(cp, &format!("type{i}"), &root);
        eprintln!("type `{rule}`: ours {ours:?}, kube-apiserver {theirs:?}");
        if ours.is_ok() != theirs.is_ok() {
            disagreements.push(format!(
                "type `{rule}`: ours {ours:?}, kube-apiserver {theirs:?}"
            ));
        }
    }
}

/// Where our verdict on a case scaled by `n` (runs of a rule, bound of a message) turns.
enum Turn {
    /// We accept it at every `n` up to the given one: it costs nothing that scales.
    Never(u64),
    /// We refuse it at every `n`, 0 included.
    Always,
    /// We refuse it from this `n` on, and accept it below.
    At(u64),
}

fn turn(refuses: impl Fn(u64) -> bool, max: u64) -> Turn {
    if !refuses(max) {
        return Turn::Never(max);
    }
    if refuses(0) {
        return Turn::Always;
    }
    let (mut lo, mut hi) = (0, max);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if refuses(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Turn::At(hi)
}

/// Hold the API server to our verdict on a scaled case: accepted where we accept it; at the
/// turn, refused with our factor (to six decimals: the same cost) and accepted one below.
fn agree_on_scale(
    cp: &ControlPlane,
    name: &str,
    what: &str,
    case: impl Fn(u64) -> serde_json::Value,
    max: u64,
    disagreements: &mut Vec<String>,
) {
    let ours = |n: u64| crdgen::apiserver_verdict(&serde_json::from_value(case(n)).unwrap());
    let theirs_factor = |r: &Result<(), String>| r.as_ref().err().and_then(|m| factor_in(m, what));
    let (n, below) = match turn(|n| ours(n).is_err(), max) {
        Turn::Never(n) => {
            let theirs = create(cp, name, &case(n));
            eprintln!("{name}: free to {n}, kube-apiserver {theirs:?}");
            if theirs.is_err() {
                disagreements.push(format!(
                    "{name}: we accept it at {n}, kube-apiserver: {theirs:?}"
                ));
            }
            return;
        }
        Turn::Always => (0, None),
        Turn::At(n) => (n, Some(n - 1)),
    };
    let our_msg = ours(n).unwrap_err();
    let our_factor = factor_in(&our_msg, what);
    let theirs = create(cp, name, &case(n));
    let below_ok = below.map(|b| create(cp, name, &case(b)));
    eprintln!(
        "{name}: at {n} ours {our_factor:?}, kube-apiserver {:?}, one below accepted: {:?}",
        theirs_factor(&theirs),
        below_ok.as_ref().map(Result::is_ok)
    );
    if our_factor.is_none()
        || our_factor != theirs_factor(&theirs)
        || below_ok.as_ref().is_some_and(Result::is_err)
    {
        disagreements.push(format!(
            "{name} at {n}: ours {our_msg}; kube-apiserver {theirs:?}; one below: {below_ok:?}"
        ));
    }
}

/// Every message cost case, scaled by the bound of the string or list it reads.
fn message_costs(cp: &ControlPlane, disagreements: &mut Vec<String>) {
    for (i, (list, message)) in schemas::message_costs().into_iter().enumerate() {
        let case = |n: u64| {
            schemas::root(serde_json::json!({"type": "object", "properties": {
                "a": schemas::message_node(n, list, message)
            }}))
        };
        let name = format!("message{i} `{message}`");
        agree_on_scale(
            cp,
            &name,
            "estimated messageExpression cost",
            case,
            1 << 40,
            disagreements,
        );
    }
}

/// Every cost case, scaled by the runs of its rule (the `maxItems` of the list above it).
fn cost_cases(cp: &ControlPlane, disagreements: &mut Vec<String>) {
    for (i, (node, rule)) in schemas::cost_rules().into_iter().enumerate() {
        let case = |k: u64| {
            let mut node = node.clone();
            node["x-kubernetes-validations"] = serde_json::json!([{"rule": rule}]);
            schemas::root(serde_json::json!({"type": "object", "properties": {
                "l": {"type": "array", "maxItems": k, "items": node}
            }}))
        };
        let name = format!("cost{i} `{rule}`");
        agree_on_scale(
            cp,
            &name,
            "estimated rule cost",
            case,
            10_000_000_000_000,
            disagreements,
        );
    }
}

/// The source cases and every fixture of the differential tests, generated without our checks.
fn source_cases(cp: &ControlPlane, disagreements: &mut Vec<String>) {
    // The cases, then every fixture of the differential tests (each in its own crate).
    let mut crates: Vec<(String, tempfile::TempDir)> = cases()
        .into_iter()
        .map(|c| (c.name.to_string(), crate_of(&c.body)))
        .collect();
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/crdgen");
    for e in std::fs::read_dir(&fixtures).unwrap() {
        let p = e.unwrap().path();
        let Some(name) = p.file_stem().and_then(|n| n.to_str()) else {
            continue;
        };
        if p.extension().is_some_and(|x| x == "rs") {
            let dir = crate_of("");
            std::fs::write(dir.path().join("src/lib.rs"), format!("pub mod {name};\n")).unwrap();
            std::fs::copy(&p, dir.path().join(format!("src/{name}.rs"))).unwrap();
            crates.push((format!("fixture {name}"), dir));
        }
    }
    for (name, dir) in &crates {
        let tree = DiskTree::new(dir.path());
        let ours = crdgen::crds(&tree, &project());
        let Ok(unchecked) = crdgen::crds_unchecked(&tree, &project()) else {
            continue; // Refused before any check (a storage-version question, a too-large CRD...).
        };
        let file = dir.path().join("crd.yaml");
        let docs: Vec<String> = unchecked.iter().map(|k| crdgen::to_yaml(&k.crd)).collect();
        std::fs::write(&file, docs.join("---\n")).unwrap();
        let out = control_plane::kubectl(cp, &["create", "-f", file.to_str().unwrap()]);
        eprintln!(
            "{name}: ours {}, kube-apiserver {}",
            match &ours {
                Ok(_) => "accepts".to_string(),
                Err(e) => format!("refuses ({e})"),
            },
            match &out {
                Ok(_) => "accepts".to_string(),
                Err(theirs) => format!("refuses ({theirs})"),
            }
        );
        if ours.is_ok() != out.is_ok() {
            disagreements.push(name.clone());
        }
    }
}

/// Patterns as Go's `regexp/syntax` reads them (valid in one of Go and Rust only, Go's limits
/// and table names), and defaults that match under only one of Go's ASCII `\d \w \s \b` and
/// Unicode's, each with the default it is given (if any).
fn regex_rows() -> Vec<(String, Option<&'static str>)> {
    let mut rows: Vec<(String, Option<&str>)> = [
        // Only Rust's grammar accepts these.
        "(?x)a",
        "\\u0041",
        "\\p{Emoji}",
        "(?R)",
        "a{1001}",
        "a{2000}",
        "\\p{Grek}",
        "\\p{Latn}",
        "\\p{Garay}",
        "\\p{Old_Italic}",
        "\\p{SignWriting}",
        "\\p{Unknown}",
        "\\e",
        "\\Z",
        "(?=a)",
        "(?<=a)b",
        "(?'n'a)",
        "\\1",
        "(a)\\1",
        "\\8",
        "\\x{110000}",
        "[[:foo:]]",
        "(?P=n)",
        "\\C",
        "(?u)a",
        "(?i-)a",
        "(?-)a",
        "[a-\\d]",
        "\\Ea",
        "(?<é>a)",
        "\\k<n>",
        "\\h",
        "\\R",
        "\\X",
        "(?|a)",
        "(?>a)",
        "a++",
        "a{2}{3}",
        "a**",
        "a*??",
        "(a{100}){11}",
        "((a{10}){10}){11}",
        // Go accepts these.
        "\\Qa.b\\E",
        "\\Qa",
        "\\Q",
        "a{,5}",
        "x{2}{,3}",
        "a{1000}",
        "(a{100}){10}",
        "(?P<n>a)",
        "(?<n>a)",
        "(?P<n>a)(?P<n>b)",
        "(?)a",
        "(?i-m)a",
        "(?U)a*",
        "\\p{greek}",
        "\\p{Letter}",
        "\\p{Cased_Letter}",
        "\\p{lu}",
        "\\p{Any}",
        "\\p{ascii}",
        "\\p{Assigned}",
        "\\p{Cn}",
        "\\p{LC}",
        "\\p{Kawi}",
        "\\pl",
        "\\p{^Greek}",
        "\\P{^L}",
        "\\p{Common}",
        "\\p{digit}",
        "\\p{Other}",
        "\\x{10FFFF}",
        "\\0",
        "\\377",
        "\\_",
        "\\z",
        "[]a]",
        "[[:word:]]",
        "[[:^alpha:]]",
        "a{01}",
        "^*",
        "a|*",
        "\\p{Zl}",
        "\\p{Zp}",
        "\\p{Cs}",
        "\\p{Surrogate}",
        "\\p{Braille}",
        "\\p{Yi}",
        "[\\p{Zl}a]",
        "\\p{Line-Separator}",
        "\\b\\B",
        // Go refuses these too.
        "[",
        "[z-a]",
        "[]",
        "[^]",
        "(?:a",
        "a)",
        "a\\",
        "*a",
        "a{1,0}",
        "\\x4",
        "\\pé",
        "\\p{}",
        "(?P<n!>a)",
        "(?P<>a)",
    ]
    .into_iter()
    .map(|p| (p.to_string(), None))
    .collect();
    let deep =
        |n: usize, open: &str, close: &str| format!("{}a{}", open.repeat(n), close.repeat(n));
    rows.push((deep(260, "(", ")"), None));
    rows.push((deep(999, "(", ")"), None));
    rows.push((deep(1000, "(", ")"), None));
    rows.push((deep(2000, "(?:", ")"), None));
    rows.push((deep(999, "(?:", ")*"), None));
    rows.push((deep(1000, "(?:", ")*"), None));
    rows.push((format!("(?:{}){{1000}}", "abcdefghij".repeat(300)), None));
    rows.push((format!("(?:{}){{1000}}", "abcdefghij".repeat(400)), None));
    for (p, d) in [
        ("^\\d+$", "١٢"),
        ("^\\d+$", "12"),
        ("^\\w+$", "é"),
        ("^\\w+$", "e_1"),
        ("^\\s$", "\u{a0}"),
        ("^\\s$", "\u{b}"),
        ("^[[:space:]]$", "\u{b}"),
        ("\\bb", "éb"),
        ("^\\Bb", "éb"),
        ("^.$", "é"),
        ("(?i)^k$", "\u{212a}"),
        ("(?i)^\\w$", "\u{17f}"),
        ("^\\W$", "é"),
        ("^\\Qa.b\\E$", "axb"),
        ("^a{,5}$", "a{,5}"),
        ("^a{,5}$", "aa"),
        ("^\\p{Greek}+$", "ab"),
        ("^\\p{Greek}+$", "αβ"),
        ("a$", "a\n"),
        ("(?m)a$", "a\n"),
        ("^\\p{Zl}$", "\u{2028}"),
        ("^\\p{Zl}$", "\u{2029}"),
    ] {
        rows.push((p.to_string(), Some(d)));
    }
    rows
}

/// `s` as a single-quoted CEL string literal.
fn cel_string(s: &str) -> String {
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Every regex row put into a `pattern` (with its default) and into `self.matches(..)` and
/// `self.find(..)` rules: the API server and we must agree on each.
#[test]
fn apiserver_parses_regexes_as_go_does() {
    if crate::common::runs_elsewhere("apiserver") {
        return;
    }
    let Some(assets) = std::env::var_os("KUBEBUILDER_ASSETS") else {
        eprintln!(
            "SKIPPED crdgen_apiserver regexes: KUBEBUILDER_ASSETS is unset (export KUBEBUILDER_ASSETS=$(../shared/k8s/install.sh))"
        );
        return;
    };
    let cp = start(Path::new(&assets));
    let mut disagreements = Vec::new();
    let (mut accepted, mut refused) = (0, 0);
    let root = |field: serde_json::Value| {
        serde_json::json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"f": field}}}})
    };
    for (i, (p, default)) in regex_rows().into_iter().enumerate() {
        let mut field = serde_json::json!({"type": "string", "pattern": p});
        if let Some(d) = default {
            field["default"] = d.into();
        }
        let lit = cel_string(&p);
        let cases = [
            ("pattern", root(field)),
            (
                "matches",
                root(serde_json::json!({"type": "string", "maxLength": 10,
                    "x-kubernetes-validations": [{"rule": format!("self.matches({lit})")}]})),
            ),
            (
                "find",
                root(serde_json::json!({"type": "string", "maxLength": 10,
                    "x-kubernetes-validations": [{"rule": format!("self.find({lit}) == ''")}]})),
            ),
        ];
        for (how, root) in cases {
            if how != "pattern" && default.is_some() {
                continue;
            }
            let ours = crdgen::apiserver_verdict(&serde_json::from_value(root.clone()).unwrap());
            let theirs = create(&cp, &format!("re{i}"), &root);
            let short: String = p.chars().take(40).collect();
            let cut =
                |r: &Result<(), String>| format!("{r:?}").chars().take(300).collect::<String>();
            eprintln!(
                "{how} `{short}` {default:?}: ours {}, kube-apiserver {}",
                cut(&ours),
                cut(&theirs)
            );
            if theirs.is_ok() {
                accepted += 1;
            } else {
                refused += 1;
            }
            if ours.is_ok() != theirs.is_ok() {
                disagreements.push(format!(
                    "{how} `{short}` (default {default:?}): ours {ours:?}, kube-apiserver {theirs:?}"
                ));
            }
        }
    }
    eprintln!("regex cases: kube-apiserver accepted {accepted}, refused {refused}");
    assert!(
        disagreements.is_empty(),
        "kube-apiserver and generate crds disagree on:\n{}",
        disagreements.join("\n")
    );
}
