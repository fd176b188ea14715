//! `create api --from-crd`'s types against real CRDs (fixtures/external_crds: cert-manager's
//! Certificate and Issuer, Gateway API's HTTPRoute, prometheus-operator's ServiceMonitor):
//! generation is deterministic; the four files build, clippy- and rustfmt-clean, in one small
//! crate (one cargo build, in the generated projects' shared target); and on a real
//! kube-apiserver, sample objects of each CRD are created and what the API server returns is read
//! through the generated types and written back without loss (the crate's binary does that).
//! Without `KUBEBUILDER_ASSETS` the API-server half prints `SKIPPED` and the build still runs.

mod common;
mod control_plane;

use std::path::Path;

use operator_rs::fromcrd;
use serde_json::Value;

/// (file, group, version, kind, module).
const CRDS: &[(&str, &str, &str, &str, &str)] = &[
    (
        "cert-manager.io_certificates.yaml",
        "cert-manager.io",
        "v1",
        "Certificate",
        "certificate",
    ),
    (
        "gateway.networking.k8s.io_httproutes.yaml",
        "gateway.networking.k8s.io",
        "v1",
        "HTTPRoute",
        "httproute",
    ),
    (
        "cert-manager.io_issuers.yaml",
        "cert-manager.io",
        "v1",
        "Issuer",
        "issuer",
    ),
    (
        "monitoring.coreos.com_servicemonitors.yaml",
        "monitoring.coreos.com",
        "v1",
        "ServiceMonitor",
        "servicemonitor",
    ),
    // Each schema feature a stored object carries (not upstream): embedded resources (their
    // metadata listed as a bare object, or not at all), preserve-unknown-fields, int-or-string,
    // date-time with fractions and offsets, numbers written as integers, int64 past 2^53, nullable
    // fields, items and values kept as null, maps,
    // defaults.
    (
        "features.example.org_widgets.yaml",
        "features.example.org",
        "v1",
        "Widget",
        "widget",
    ),
];

fn fixture(file: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/external_crds")
        .join(file)
}

fn generate(file: &str, group: &str, version: &str, kind: &str) -> String {
    let path = fixture(file);
    let (bytes, sel) = fromcrd::select_file(&path, group, version, kind).unwrap();
    let sha = fromcrd::sha256_hex(&bytes);
    sel.rust(&fromcrd::Source {
        file: &format!("fixtures/external_crds/{file}"),
        sha256: &sha,
    })
}

/// Valid objects of each kind (`fixtures/external_crds/samples.json`, and
/// `features_samples.json` for the CRD of schema features), each with its kind and the status
/// written through the status subresource, if any.
fn samples() -> Vec<(String, Value, Option<Value>)> {
    let mut samples: Vec<Value> = Vec::new();
    for file in ["samples.json", "features_samples.json"] {
        let text = std::fs::read_to_string(fixture(file)).unwrap();
        samples.extend(serde_json::from_str::<Vec<Value>>(&text).unwrap());
    }
    samples
        .into_iter()
        .map(|s| {
            let kind = s["object"]["kind"].as_str().unwrap().to_string();
            (kind, s["object"].clone(), s.get("status").cloned())
        })
        .collect()
}

/// Whether `got` holds everything of `sent` (maps may have more keys: defaults).
fn contains(got: &Value, sent: &Value) -> bool {
    match (got, sent) {
        (Value::Object(g), Value::Object(s)) => s
            .iter()
            .all(|(k, v)| g.get(k).is_some_and(|gv| contains(gv, v))),
        (Value::Array(g), Value::Array(s)) => {
            g.len() == s.len() && g.iter().zip(s).all(|(g, s)| contains(g, s))
        }
        _ => got == sent,
    }
}

const MAIN: &str = r#"//! Reads each `<Kind>.json` (an object as kube-apiserver returned it) of the folder given,
//! through the generated type, and writes it back: it must be the same JSON.

mod types;

use serde::Serialize;
use serde::de::DeserializeOwned;

fn round_trip<K: DeserializeOwned + Serialize>(text: &str) -> Result<(), String> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let typed: K = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    let back = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    if back != value {
        return Err(format!(
            "lost in the round trip:\nread  {value}\nwrote {back}"
        ));
    }
    Ok(())
}

fn main() {
    let dir = std::env::args().nth(1).expect("a folder");
    let mut failed = false;
    for entry in std::fs::read_dir(&dir).expect("the folder") {
        let path = entry.expect("an entry").path();
        let text = std::fs::read_to_string(&path).expect("the file");
        let kind = path.file_stem().unwrap().to_string_lossy().into_owned();
        let result = match kind.split('-').next().unwrap() {
            "Certificate" => round_trip::<types::certificate::Certificate>(&text),
            "Issuer" => round_trip::<types::issuer::Issuer>(&text),
            "HTTPRoute" => round_trip::<types::httproute::HTTPRoute>(&text),
            "ServiceMonitor" => round_trip::<types::servicemonitor::ServiceMonitor>(&text),
            "Widget" => round_trip::<types::widget::Widget>(&text),
            other => Err(format!("unknown kind {other}")),
        };
        match result {
            Ok(()) => println!("round-tripped {kind}"),
            Err(e) => {
                eprintln!("{kind}: {e}");
                failed = true;
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}
"#;

#[test]
fn types_of_real_crds_build_and_round_trip_what_the_api_server_returns() {
    if common::runs_elsewhere("from_crd_types") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let krate = tmp.path().join("external-types");
    std::fs::create_dir_all(krate.join("src/types")).unwrap();
    let mut modules = String::new();
    for (file, group, version, kind, module) in CRDS {
        let first = generate(file, group, version, kind);
        assert_eq!(
            first,
            generate(file, group, version, kind),
            "{kind}: generation is deterministic"
        );
        assert!(fromcrd::is_external_file(&first), "{kind}: marked external");
        std::fs::write(krate.join(format!("src/types/{module}.rs")), first).unwrap();
        modules.push_str(&format!("pub mod {module};\n"));
    }
    std::fs::write(krate.join("src/types/mod.rs"), modules).unwrap();
    std::fs::write(krate.join("src/main.rs"), MAIN).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"external-types\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\n\
         kube = { version = \"5.0.0\", default-features = false, features = [\"derive\"] }\n\
         k8s-openapi = { version = \"0.29.0\", default-features = false, features = [\"std\", \"schemars\", \"v1_37\"] }\n\
         schemars = \"1.2\"\nserde = { version = \"1\", features = [\"derive\"] }\nserde_json = \"1\"\n\n[workspace]\n",
    )
    .unwrap();
    // The versions this workspace builds with (cargo drops what the crate does not use).
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock"),
        krate.join("Cargo.lock"),
    )
    .unwrap();

    // The API server's objects, when there is one.
    let objects = krate.join("objects");
    std::fs::create_dir_all(&objects).unwrap();
    let have_server = match control_plane::assets("from_crd_types round trip") {
        None => false,
        Some(assets) => {
            let cp = control_plane::start(&assets);
            for (file, ..) in CRDS {
                let path = fixture(file);
                control_plane::kubectl(&cp, &["create", "-f", path.to_str().unwrap()])
                    .unwrap_or_else(|e| panic!("installing {file}: {e}"));
            }
            control_plane::kubectl(
                &cp,
                &[
                    "wait",
                    "--for=condition=Established",
                    "--timeout=60s",
                    "crd",
                    "--all",
                ],
            )
            .expect("the CRDs are established");
            for (kind, object, status) in samples() {
                control_plane::kubectl_with(&cp, &["create", "-f", "-"], &object)
                    .unwrap_or_else(|e| panic!("creating the {kind} sample: {e}"));
                let name = object["metadata"]["name"].as_str().unwrap();
                let resource = kind.to_ascii_lowercase();
                if let Some(status) = status {
                    control_plane::kubectl(
                        &cp,
                        &[
                            "patch",
                            &resource,
                            name,
                            "--subresource=status",
                            "--type=merge",
                            "-p",
                            &status.to_string(),
                        ],
                    )
                    .unwrap_or_else(|e| panic!("writing the {kind} status: {e}"));
                }
                let got = control_plane::kubectl(&cp, &["get", &resource, name, "-o", "json"])
                    .unwrap_or_else(|e| panic!("reading the {kind} back: {e}"));
                let got: Value = serde_json::from_str(&got).unwrap();
                // What was sent is what is read (the API server adds defaults, drops nothing).
                assert!(
                    contains(&got["spec"], &object["spec"]),
                    "{kind}: the API server kept the spec sent: {}",
                    got["spec"]
                );
                std::fs::write(objects.join(format!("{kind}-{name}.json")), got.to_string())
                    .unwrap();
            }
            true
        }
    };

    common::cargo(&krate, &["fmt", "--check"]);
    common::cargo(&krate, &["clippy", "--all-targets", "--", "-D", "warnings"]);
    if have_server {
        let out = common::cargo_output(
            &krate,
            &["run", "--quiet", "--", objects.to_str().unwrap()],
            &[],
        );
        assert!(
            out.success,
            "round trip failed:\n{}\n{}",
            out.stdout, out.stderr
        );
        for (kind, object, _) in samples() {
            let name = object["metadata"]["name"].as_str().unwrap();
            assert!(
                out.stdout.contains(&format!("round-tripped {kind}-{name}")),
                "{}",
                out.stdout
            );
        }
    }
}
