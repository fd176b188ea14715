//! `+kubebuilder:webhook` markers against the real kube-apiserver: for every row of [`ROWS`] (one
//! or more markers), the configurations `generate webhooks` would write are made from the markers
//! as controller-gen reads them (`marker::parse`, no checks) and created (server-side dry run);
//! our verdict (`webhookgen::read`: `marker::check`, and one name per configuration) must be the
//! API server's. Each row also records the verdict the API server gave (1.36), which our checks
//! must keep without a control plane. Needs `KUBEBUILDER_ASSETS` for the API server's half
//! (`export KUBEBUILDER_ASSETS=$(/work/shared/k8s/install.sh)`); without it that half prints one
//! `SKIPPED` line.

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use operator_rs::markers::{Found, Site};
use operator_rs::webhookgen::{self, Located, manifests, marker};

/// A validating marker the API server accepts; rows change one key of it.
const BASE: &str = "path=/validate-batch-example-com-v1-cronjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=batch.example.com,resources=cronjobs,verbs=create;update,versions=v1,name=vcronjob-v1.kb.io,admissionReviewVersions=v1";

/// `BASE` with `key` set to `value` (added when absent); `url` replaces `path`.
fn with(key: &str, value: &str) -> String {
    let mut parts: Vec<String> = BASE.split(',').map(str::to_string).collect();
    let drop = if key == "url" { "path" } else { key };
    parts.retain(|p| !p.starts_with(&format!("{drop}=")));
    parts.push(format!("{key}={value}"));
    parts.join(",")
}

/// (what the row is, the markers, whether the API server accepts them).
fn rows() -> Vec<(String, Vec<String>, bool)> {
    let long = |n: usize| "a".repeat(n);
    let mut rows: Vec<(String, Vec<String>, bool)> = Vec::new();
    let mut one = |key: &str, value: &str, ok: bool| {
        rows.push((format!("{key}={value}"), vec![with(key, value)], ok));
    };
    for (path, ok) in [
        ("/", true),
        ("\"\"", true),
        ("/a", true),
        ("/a/", true),
        ("/a/b.c/d-e", true),
        ("/v1.2", true),
        (&format!("/{}", long(70)), true),
        (&format!("/{}", long(253)), true),
        (&format!("/{}", long(254)), false),
        ("//", false),
        ("//a", false),
        ("/a//b", false),
        ("/a//", false),
        ("a", false),
        ("/Mutate", false),
        ("/mutate_pods", false),
        ("/-a", false),
        ("/a-", false),
        ("/a..b", false),
        ("/a b", false),
        ("/a?b", false),
        ("/a%20b", false),
    ] {
        one("path", path, ok);
    }
    for (url, ok) in [
        ("https://example.com/x", true),
        ("https://example.com", true),
        ("HTTPS://example.com/x", true),
        ("https://example.com:8443/x", true),
        ("https://example.com:/x", true),
        ("https://[::1]:8443/x", true),
        ("https://exa_mple.com/x", true),
        ("https://example.com/x#", true),
        ("https://example.com/x?", true),
        ("https://example.com/a%20b", true),
        ("https://:8443/x", true),
        ("http://example.com/x", false),
        ("ftp://example.com/x", false),
        ("example.com/x", false),
        ("\"\"", false),
        ("https:example.com", false),
        ("https:///x", false),
        ("https://user@example.com/x", false),
        ("https://user:pw@example.com/x", false),
        ("https://example.com/x#frag", false),
        ("https://example.com/x?a=b", false),
        ("https://example.com:port/x", false),
        ("https://exa%20mple.com/x", false),
        ("https://exa{mple.com/x", false),
        ("https://example.com/%zz", false),
        ("https://[::1/x", false),
    ] {
        one("url", url, ok);
    }
    for (name, ok) in [
        ("vcronjob-v1.kb.io", true),
        ("a.b.c", true),
        ("a.b.c.d.e", true),
        (&format!("v{}-v1.kb.io", long(70)), true),
        (&format!("{}.kb.io", long(248)), false),
        (&format!("{}.kb.io", long(247)), true),
        ("vcronjob.kbio", false),
        ("vcronjob", false),
        ("VCronJob.kb.io", false),
        ("a..b.c", false),
        ("-a.b.c", false),
        ("a_b.c.d", false),
        ("a.b.c.", false),
        ("\"\"", false),
    ] {
        one("name", name, ok);
    }
    for (key, value, ok) in [
        ("failurePolicy", "Ignore", true),
        ("failurePolicy", "IGNORE", true),
        ("failurePolicy", "fial", false),
        ("failurePolicy", "\"\"", false),
        ("matchPolicy", "Exact", true),
        ("matchPolicy", "equivalent", true),
        ("matchPolicy", "Fuzzy", false),
        ("sideEffects", "NoneOnDryRun", true),
        ("sideEffects", "none", true),
        ("sideEffects", "Some", false),
        ("sideEffects", "Unknown", false),
        ("sideEffects", "Maybe", false),
        ("timeoutSeconds", "1", true),
        ("timeoutSeconds", "30", true),
        ("timeoutSeconds", "0", false),
        ("timeoutSeconds", "31", false),
        ("timeoutSeconds", "-1", false),
        ("verbs", "*", true),
        ("verbs", "CONNECT;delete", true),
        ("verbs", "*;create", false),
        ("verbs", "patch", false),
        ("verbs", "get", false),
        ("groups", "*", true),
        ("groups", "\"\"", true),
        ("groups", "core;apps", true),
        ("groups", "*;apps", false),
        ("versions", "*", true),
        ("versions", "v1;v2", true),
        ("versions", "*;v1", false),
        ("versions", "\"\"", false),
        ("versions", "v1;\"\"", false),
        ("resources", "*", true),
        ("resources", "*/status", true),
        ("resources", "*;*/status", true),
        ("resources", "*/*", true),
        ("resources", "pods/*", true),
        ("resources", "pods;pods/status", true),
        ("resources", "pods/status;*/status", true),
        ("resources", "*/status;pods/*", true),
        ("resources", "*;pods", false),
        ("resources", "*/*;pods", false),
        ("resources", "pods/*;pods/status", false),
        ("resources", "*/status;pods/status", false),
        ("resources", "\"\"", false),
        ("resources", "pods;\"\"", false),
        ("admissionReviewVersions", "v1;v1beta1", true),
        ("admissionReviewVersions", "v1beta1", true),
        ("admissionReviewVersions", "v1;v2", true),
        ("admissionReviewVersions", "v2", false),
        ("admissionReviewVersions", "v1;v1", false),
        ("admissionReviewVersions", "V1", false),
        ("admissionReviewVersions", "v1;1v", false),
    ] {
        one(key, value, ok);
    }
    let mutating = |extra: &str| {
        format!("{},{extra}", with("mutating", "true")).replace(",mutating=false", "")
    };
    for (policy, ok) in [("IfNeeded", true), ("never", true), ("Always", false)] {
        rows.push((
            format!("reinvocationPolicy={policy}"),
            vec![mutating(&format!("reinvocationPolicy={policy}"))],
            ok,
        ));
    }
    rows.push((
        "two validating webhooks of one name".into(),
        vec![BASE.into(), with("path", "/other")],
        false,
    ));
    rows.push((
        "a mutating and a validating webhook of one name".into(),
        vec![BASE.into(), with("mutating", "true")],
        true,
    ));
    rows
}

/// Our verdict on the markers: `None` when `generate webhooks` writes them, else its message.
fn ours(markers: &[String]) -> Option<String> {
    let found: Vec<Found> = markers
        .iter()
        .enumerate()
        .map(|(i, args)| Found {
            site: Site {
                file: "src/webhooks/mod.rs".into(),
                line: i + 1,
                column: 4,
            },
            comment: format!("// +kubebuilder:webhook:{args}"),
            args: args.clone(),
        })
        .collect();
    let mut problems = Vec::new();
    webhookgen::read(&found, &mut problems);
    problems.first().map(ToString::to_string)
}

/// The configurations the markers make, unchecked, as YAML documents.
fn documents(markers: &[String]) -> Vec<serde_json::Value> {
    let located: Vec<Located> = markers
        .iter()
        .map(|args| Located {
            site: Site::default(),
            marker: marker::parse(args).expect("rows are markers controller-gen reads"),
        })
        .collect();
    manifests::render(&located)
        .unwrap()
        .split("---\n")
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_saphyr::from_str(d).unwrap())
        .collect()
}

#[test]
fn our_verdict_is_the_one_recorded_from_the_api_server() {
    if crate::common::runs_elsewhere("apiserver") {
        return;
    }
    let mut wrong = Vec::new();
    for (what, markers, ok) in rows() {
        let verdict = ours(&markers);
        if verdict.is_none() != ok {
            wrong.push(format!(
                "{what}: the API server {}, we {}",
                if ok { "accepts" } else { "refuses" },
                verdict.unwrap_or_else(|| "accept".into())
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn refusals_name_the_place_the_rule_and_an_example() {
    if crate::common::runs_elsewhere("apiserver") {
        return;
    }
    for (what, markers, ok) in rows() {
        if ok {
            continue;
        }
        let message = ours(&markers).unwrap();
        assert!(
            message.starts_with("src/webhooks/mod.rs:") && message.contains("e.g."),
            "{what}: {message}"
        );
    }
}

#[test]
fn api_server_refuses_exactly_what_we_refuse() {
    if crate::common::runs_elsewhere("apiserver") {
        return;
    }
    let Some(assets) = crate::control_plane::assets("webhook_apiserver") else {
        return;
    };
    let env = crate::control_plane::start(&assets).envtest();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = runtime.block_on(async { env.client().unwrap() });
    let dry_run = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let (mut disagreements, mut refused) = (Vec::new(), 0);
    let rows = rows();
    for (what, markers, _) in &rows {
        let mut refusal = None;
        for doc in documents(markers) {
            let kind = doc["kind"].as_str().unwrap().to_string();
            let resource = ApiResource::from_gvk(&GroupVersionKind::gvk(
                "admissionregistration.k8s.io",
                "v1",
                &kind,
            ));
            let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
            let object: DynamicObject = serde_json::from_value(doc).unwrap();
            if let Err(e) = runtime.block_on(api.create(&dry_run, &object)) {
                refusal.get_or_insert(e.to_string());
            }
        }
        refused += usize::from(refusal.is_some());
        let verdict = ours(markers);
        if verdict.is_some() != refusal.is_some() {
            disagreements.push(format!(
                "{what}: the API server {}; we {}",
                refusal.unwrap_or_else(|| "accepts".into()),
                verdict.unwrap_or_else(|| "accept".into())
            ));
        }
    }
    eprintln!(
        "webhook_apiserver: {} rows, {refused} refused by the API server, {} disagreements",
        rows.len(),
        disagreements.len()
    );
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
