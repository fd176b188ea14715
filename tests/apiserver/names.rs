//! kube-apiserver's verdict against ours on what operator-rs checks before it writes anything
//! (etcd + kube-apiserver started here): a version's deprecation warning (`edit api --deprecated`,
//! `#[kube(deprecated = "...")]`), the API approval annotation of a protected group, every object
//! name made from a project name (Namespace, Services, ServiceAccount, Lease, Secret, labels), and
//! a kind beside another kind's list kind, the kind and group of a CRD operator-rs did not make
//! (`migrate-storage --group --kind`). Needs `KUBEBUILDER_ASSETS`; without it the test prints
//! one `SKIPPED` line.

use crate::control_plane;

use control_plane::{ControlPlane, dry_run, kubectl, kubectl_with, start};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use operator_rs::{crdgen, names};
use serde_json::{Value, json};

#[test]
fn apiserver_agrees_on_names_and_versions() {
    if crate::common::runs_elsewhere("apiserver") {
        return;
    }
    let Some(assets) = control_plane::assets("names_apiserver") else {
        return;
    };
    let cp = start(&assets);
    let mut disagreements = Vec::new();
    deprecation_warnings(&cp, &mut disagreements);
    api_approval(&cp, &mut disagreements);
    project_names(&cp, &mut disagreements);
    list_kind_beside_kind(&cp, &mut disagreements);
    kind_lengths(&cp, &mut disagreements);
    crd_kinds_and_groups(&cp, &mut disagreements);
    crd_names(&cp, &mut disagreements);
    assert!(
        disagreements.is_empty(),
        "kube-apiserver and operator-rs disagree on:\n{}",
        disagreements.join("\n")
    );
}

/// Deprecation warnings: the edge cases of length (bytes, not characters) and every code point of
/// Latin-1, the General Punctuation block and the Specials, each between two letters.
fn warnings() -> Vec<String> {
    let mut out: Vec<String> = [
        "",
        " ",
        "a",
        "v1 is deprecated; use v2",
        "quote \" backslash \\ and 'single'",
        "日本語の警告",
        "e\u{301} combining",
        "\u{1f680} emoji",
        "\u{1b}[31mred",
        "\u{378} unassigned",
        "\u{e000} private use",
        "\u{10ffff} noncharacter",
        "\u{fffd} replacement",
        "\u{3000} ideographic space",
        "\u{1680} ogham space",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for n in [255, 256, 257, 300] {
        out.push("x".repeat(n));
    }
    // 128 and 129 two-byte characters: 256 and 258 bytes; 85 and 86 three-byte: 255 and 258;
    // 64 and 65 four-byte: 256 and 260.
    for (c, n) in [
        ('é', 128),
        ('é', 129),
        ('€', 85),
        ('€', 86),
        ('🚀', 64),
        ('🚀', 65),
    ] {
        out.push(std::iter::repeat_n(c, n).collect());
    }
    let ranges = [0x0..=0xff_u32, 0x2000..=0x206f, 0xfff0..=0xffff];
    for c in ranges.into_iter().flatten().filter_map(char::from_u32) {
        out.push(format!("a{c}b"));
    }
    out
}

/// Each warning on a version of one CRD (40 versions a CRD, so one request names many), the
/// API server's errors read by index.
fn deprecation_warnings(cp: &ControlPlane, disagreements: &mut Vec<String>) {
    let all = warnings();
    for (chunk_no, chunk) in all.chunks(40).enumerate() {
        let mut versions = vec![json!({"name": "v0", "served": true, "storage": true,
            "schema": {"openAPIV3Schema": {"type": "object"}}})];
        for (i, w) in chunk.iter().enumerate() {
            versions.push(
                json!({"name": format!("v{}", i + 1), "served": true, "storage": false,
                "deprecated": true, "deprecationWarning": w,
                "schema": {"openAPIV3Schema": {"type": "object"}}}),
            );
        }
        let group = format!("w{chunk_no}.example.com");
        let crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("cs.{group}")},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": "cs", "singular": "c", "kind": "C", "listKind": "CList"},
                     "versions": versions}
        });
        let theirs = dry_run(cp, &crd).err().unwrap_or_default();
        for (i, w) in chunk.iter().enumerate() {
            let refused = theirs.contains(&format!("spec.versions[{}].deprecationWarning", i + 1));
            let ours = crdgen::deprecation_warning_problem(w);
            if ours.is_some() != refused {
                disagreements.push(format!(
                    "deprecation warning {w:?} ({} bytes): ours {ours:?}, kube-apiserver {}",
                    w.len(),
                    if refused { "refuses" } else { "accepts" }
                ));
            }
        }
    }
}

/// Groups protected or not, and the annotation's values.
fn api_approval(cp: &ControlPlane, disagreements: &mut Vec<String>) {
    let groups = [
        "k8s.io",
        "a.k8s.io",
        "x.y.k8s.io",
        "kubernetes.io",
        "b.kubernetes.io",
        "xk8s.io",
        "k8s.io.example.com",
        "notkubernetes.io",
        "example.com",
    ];
    let values: [Option<&str>; 16] = [
        None,
        Some(""),
        Some("unapproved"),
        Some("unapproved, experimental"),
        Some("unapprovedx"),
        Some("https://github.com/kubernetes/enhancements/pull/1111"),
        Some("http://x"),
        Some("ftp://host/path"),
        Some("github.com/kubernetes/enhancements/pull/1111"),
        Some("https://"),
        Some("https:///path"),
        Some("mailto:someone@example.com"),
        Some("not a url"),
        Some("https://a b/"),
        Some("https://host/%zz"),
        Some("https://user@host:8080/p?q=1"),
    ];
    let mut n = 0;
    for group in groups {
        for value in values {
            n += 1;
            let plural = format!("p{n}s");
            let mut crd = json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": format!("{plural}.{group}")},
                "spec": {"group": group, "scope": "Namespaced",
                         "names": {"plural": plural, "singular": format!("p{n}"),
                                   "kind": format!("P{n}"), "listKind": format!("P{n}List")},
                         "versions": [{"name": "v1", "served": true, "storage": true,
                                       "schema": {"openAPIV3Schema": {"type": "object"}}}]}
            });
            if let Some(v) = value {
                crd["metadata"]["annotations"] = json!({"api-approved.kubernetes.io": v});
            }
            let typed: CustomResourceDefinition = serde_json::from_value(crd.clone()).unwrap();
            let ours = crdgen::api_approval_problem(&typed);
            let theirs = dry_run(cp, &crd);
            if ours.is_some() != theirs.is_err() {
                disagreements.push(format!(
                    "group {group}, annotation {value:?}: ours {ours:?}, kube-apiserver {theirs:?}"
                ));
            }
        }
    }
}

/// Every object the scaffold names from the project name, for names of every length up to 64
/// and of other shapes: the API server accepts them all exactly when `init` accepts the name
/// (names `init` refuses for another reason, a crate of the dependency tree, are left out).
fn project_names(cp: &ControlPlane, disagreements: &mut Vec<String>) {
    let mut candidates: Vec<String> = (1..=64)
        .map(|n| format!("p{}", "q".repeat(n - 1)))
        .collect();
    candidates.extend(
        [
            "memcached-operator",
            "a1",
            "a-b-c",
            "x2345678901234567890123456789",
            "x234567890123456789012345678",
        ]
        .map(String::from),
    );
    for name in candidates {
        let objects = json!({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": format!("{name}-system"),
                "labels": {"app.kubernetes.io/name": name}}},
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": format!("{name}-controller-manager-metrics-service"), "namespace": "default"},
                "spec": {"ports": [{"port": 8443}]}},
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": format!("{name}-webhook-service"), "namespace": "default"},
                "spec": {"ports": [{"port": 443}]}},
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": format!("{name}-controller-manager"), "namespace": "default"}},
            {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": format!("{name}-leader"), "namespace": "default"}},
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": format!("{name}-webhook-server-cert"), "namespace": "default"}},
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": format!("{name}-controller-manager"), "namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app.kubernetes.io/name": name}},
                         "template": {"metadata": {"labels": {"app.kubernetes.io/name": name}},
                                      "spec": {"containers": [{"name": "manager", "image": "controller:latest"}]}}}}
        ]});
        let theirs = kubectl_with(cp, &["create", "--dry-run=server", "-f", "-"], &objects);
        let ours = names::validate_project_name(&name);
        if ours.is_ok() != theirs.is_ok() {
            disagreements.push(format!(
                "project name {name:?} ({} characters): ours {ours:?}, kube-apiserver {theirs:?}",
                name.len()
            ));
        }
    }
}

/// A kind `FooList` beside `Foo` in one group: the second CRD is created, but its names are not
/// accepted (the naming controller's `NamesAccepted` is False), so the kind is never served. We
/// refuse it (`tests/cli/commands.rs`); here the API server shows why.
/// A kind's length against the CRD of every name made from it (plural, singular, listKind) as
/// `create api` derives them: kube-apiserver refuses the CRD of a kind of 60 to 63 characters (its
/// listKind is over 63), which `names::validate_kind` refuses too (issue 31: a kind of 62
/// characters was accepted).
fn kind_lengths(cp: &ControlPlane, disagreements: &mut Vec<String>) {
    for len in [58, 59, 60, 62, 63] {
        let kind = format!("K{}", "a".repeat(len - 1));
        let plural = names::default_plural(&kind);
        let crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.lengths.example.com")},
            "spec": {"group": "lengths.example.com", "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.to_lowercase(),
                               "kind": kind, "listKind": format!("{kind}List")},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                                   "schema": {"openAPIV3Schema": {"type": "object"}}}]}
        });
        let ours = names::validate_kind(&kind).is_ok() && names::validate_plural(&plural).is_ok();
        let theirs = dry_run(cp, &crd);
        if ours != theirs.is_ok() {
            disagreements.push(format!(
                "a kind of {len} characters: we say {ours}, kube-apiserver {theirs:?}"
            ));
        }
    }
}

fn list_kind_beside_kind(cp: &ControlPlane, disagreements: &mut Vec<String>) {
    let crd = |kind: &str, plural: &str| -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.lists.example.com")},
            "spec": {"group": "lists.example.com", "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.to_lowercase(),
                               "kind": kind, "listKind": format!("{kind}List")},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                                   "schema": {"openAPIV3Schema": {"type": "object"}}}]}
        })
    };
    kubectl_with(cp, &["create", "-f", "-"], &crd("Foo", "foos")).unwrap();
    kubectl_with(cp, &["create", "-f", "-"], &crd("FooList", "foolists")).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let status = kubectl(
            cp,
            &[
                "get",
                "crd",
                "foolists.lists.example.com",
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"NamesAccepted\")].status}",
            ],
        )
        .unwrap_or_default();
        match status.trim() {
            "False" => return,
            "True" => {
                disagreements.push(
                    "kind FooList beside Foo: kube-apiserver accepts its names; we refuse them"
                        .into(),
                );
                return;
            }
            _ if std::time::Instant::now() > deadline => {
                disagreements.push(format!(
                    "kind FooList beside Foo: no NamesAccepted condition in 30 s ({status:?})"
                ));
                return;
            }
            _ => std::thread::sleep(std::time::Duration::from_millis(200)),
        }
    }
}

/// A CRD's kind and group as `migrate-storage` takes them (`names::validate_crd_kind`,
/// `names::validate_crd_group`): kube-apiserver's verdict on a CRD with each.
fn crd_kinds_and_groups(cp: &ControlPlane, disagreements: &mut Vec<String>) {
    let crd = |group: &str, kind: &str| -> Value {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("tests.{group}")},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": "tests", "singular": "test", "kind": kind, "listKind": "TestList"},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                                   "schema": {"openAPIV3Schema": {"type": "object"}}}]}
        })
    };
    let long = |n: usize| format!("M{}", "a".repeat(n - 1));
    for kind in [
        "Memcached".to_string(),
        "memcached".into(),
        "Mem-Cached".into(),
        "Mem cached".into(),
        "M\u{e9}mcached".into(),
        "1Memcached".into(),
        "Mem_cached".into(),
        "Mem.cached".into(),
        "-Memcached".into(),
        "Memcached-".into(),
        "".into(),
        long(63),
        long(64),
    ] {
        let ours = names::validate_crd_kind(&kind, "--kind Memcached").is_ok();
        let theirs = dry_run(cp, &crd("kinds.example.com", &kind));
        if ours != theirs.is_ok() {
            disagreements.push(format!(
                "CRD kind {kind:?}: we say {ours}, kube-apiserver {theirs:?}"
            ));
        }
    }
    let label = |n: usize| "a".repeat(n);
    for group in [
        "cache.example.com".to_string(),
        "cache".into(),
        "Cache.example.com".into(),
        "cache..example.com".into(),
        "cache.-example.com".into(),
        "a b.example.com".into(),
        "c\u{e9}che.example.com".into(),
        "cache_x.example.com".into(),
        "123.example.com".into(),
        format!("{}.com", label(63)),
        format!("{}.com", label(64)),
        format!("{}.com", label(200)),
        format!("{}.{}.{}.{}", label(63), label(63), label(63), label(50)),
        format!("{}.{}.{}.{}", label(63), label(63), label(63), label(63)),
    ] {
        let ours = names::validate_crd_group(&group, "--group cache.example.com").is_ok();
        let theirs = dry_run(cp, &crd(&group, "Test"));
        if ours != theirs.is_ok() {
            disagreements.push(format!(
                "CRD group {group:?}: we say {ours}, kube-apiserver {theirs:?}"
            ));
        }
    }
}

/// A CRD's name, `<plural>.<group>`, around 253 characters, with a plural and a group each valid
/// alone (`names::validate_crd_name`, which `create api` and `generate crds` apply): kube-apiserver's
/// verdict on a CRD of each.
fn crd_names(cp: &ControlPlane, disagreements: &mut Vec<String>) {
    for (plural, last) in [
        ("tests", 50),
        ("tests", 51),
        ("tests", 52),
        ("tests", 63),
        ("a", 55),
        ("a", 56),
        (&*"p".repeat(63), 1),
    ] {
        let group = format!(
            "{}.{}.{}.{}",
            "a".repeat(63),
            "b".repeat(63),
            "c".repeat(63),
            "d".repeat(last)
        );
        let crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": "test", "kind": "Test", "listKind": "TestList"},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                                   "schema": {"openAPIV3Schema": {"type": "object"}}}]}
        });
        let ours = names::validate_crd_name(plural, &group, "--group cache").is_ok();
        let theirs = dry_run(cp, &crd);
        if ours != theirs.is_ok() {
            disagreements.push(format!(
                "CRD name of {} characters (plural {plural:?}, group of {}): we say {ours}, kube-apiserver {theirs:?}",
                plural.len() + 1 + group.len(),
                group.len()
            ));
        }
    }
}
