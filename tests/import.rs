//! `operator-rs import` of kubebuilder's own projects (fixtures/kubebuilder, copied from
//! kubebuilder's repository with both sides committed: the Go API and what controller-gen made
//! of it): the imported project's `generate manifests` gives the same CRDs (semantically: only
//! the controller-gen version annotation and whitespace inside descriptions are ignored), the
//! same role.yaml rules and the same webhook configurations; the API server judges objects by the
//! imported CRDs as by the Go ones (on the real control plane); and what import refuses, it
//! refuses with the Go file:line, writing nothing. The builds of imported projects are in
//! tests/import_build.rs.

mod common;
mod control_plane;
#[path = "import/fixtures.rs"]
mod fixtures;
#[path = "import/verdicts.rs"]
mod verdicts;

use std::path::{Path, PathBuf};

use common::{Run, run};
use fixtures::{fixture, fixtures, import};
use serde_json::Value;

fn docs(path: &Path) -> Vec<Value> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_saphyr::from_multiple::<Value>(&text)
        .unwrap_or_else(|e| panic!("{} is not YAML: {e}", path.display()))
        .into_iter()
        .filter(|d| !d.is_null())
        .collect()
}

/// Whitespace inside descriptions is not a difference; the controller-gen version annotation
/// is not either.
fn normalize(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                if k == "description"
                    && let Value::String(s) = child
                {
                    *s = s.split_whitespace().collect::<Vec<_>>().join(" ");
                } else {
                    normalize(child);
                }
            }
            if let Some(Value::Object(meta)) = map.get_mut("metadata")
                && let Some(Value::Object(a)) = meta.get_mut("annotations")
            {
                a.remove("controller-gen.kubebuilder.io/version");
                if a.is_empty() {
                    meta.remove("annotations");
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(normalize),
        _ => {}
    }
}

/// Every difference between `go` and `rs`, one line each with its path.
fn differences(go: &Value, rs: &Value, path: &str, out: &mut Vec<String>) {
    let short = |v: &Value| {
        let s = v.to_string();
        if s.len() > 160 {
            format!("{}...", &s[..160])
        } else {
            s
        }
    };
    match (go, rs) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = format!("{path}.{k}");
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => differences(x, y, &p, out),
                    (Some(x), None) => {
                        out.push(format!("{p}: only in the Go project's: {}", short(x)))
                    }
                    (None, Some(y)) => out.push(format!("{p}: only in the imported: {}", short(y))),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differences(x, y, &format!("{path}[{i}]"), out);
            }
        }
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => {}
        (a, b) if a == b => {}
        (a, b) => out.push(format!(
            "{path}: the Go project's {} != the imported {}",
            short(a),
            short(b)
        )),
    }
}

/// The CRDs of the Go project and of the imported one, file by file.
fn crd_differences(name: &str, dir: &Path) -> Vec<String> {
    let go_dir = fixture(name).join("config/crd/bases");
    let mut out = Vec::new();
    let mut go_files: Vec<PathBuf> = std::fs::read_dir(&go_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    go_files.sort();
    let mut rs_files: Vec<String> = std::fs::read_dir(dir.join("config/crd/bases"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    rs_files.sort();
    let go_names: Vec<String> = go_files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(go_names, rs_files, "the same CRD files");
    for (file, name) in go_files.iter().zip(&go_names) {
        let mut go = docs(file).remove(0);
        let mut rs = docs(&dir.join("config/crd/bases").join(name)).remove(0);
        normalize(&mut go);
        normalize(&mut rs);
        let mut d = Vec::new();
        differences(&go, &rs, "", &mut d);
        out.extend(d.into_iter().map(|l| format!("{name}: {l}")));
    }
    out
}

/// The rules of each role of role.yaml, by kind and `namespace/name`; a Role in no namespace is
/// in the manager's, `own` (config/default puts it there: kubebuilder's `<project>-system`).
fn roles(path: &Path, own: &str) -> Vec<(String, String, Value)> {
    let mut out: Vec<(String, String, Value)> = docs(path)
        .into_iter()
        .map(|d| {
            let kind = d["kind"].as_str().unwrap_or("").to_string();
            let namespace = match d["metadata"]["namespace"].as_str() {
                Some(n) => n,
                None if kind == "Role" => own,
                None => "",
            };
            let name = d["metadata"]["name"].as_str().unwrap_or("");
            (kind, format!("{namespace}/{name}"), d["rules"].clone())
        })
        .collect();
    out.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    out
}

/// The webhooks of the webhook configurations, by configuration kind and webhook name.
fn webhooks(path: &Path) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for d in docs(path) {
        let kind = d["kind"].as_str().unwrap_or("").to_string();
        for w in d["webhooks"].as_array().cloned().unwrap_or_default() {
            let name = w["name"].as_str().unwrap_or("").to_string();
            out.push((kind.clone(), name, w));
        }
    }
    out.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    out
}

/// Differences of two lists of named things (roles, webhooks): each one missing on a side, and
/// for those on both, their differences (a role's rules compared as a set when `rules`).
fn keyed_differences(
    file: &str,
    go: &[(String, String, Value)],
    rs: &[(String, String, Value)],
    rules: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    for (kind, name, g) in go {
        let Some((_, _, r)) = rs.iter().find(|(k, n, _)| k == kind && n == name) else {
            out.push(format!("{file}: {kind} {name}: only in the Go project's"));
            continue;
        };
        if rules {
            let set = |v: &Value| -> Vec<String> {
                let mut s: Vec<String> = v
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(Value::to_string)
                    .collect();
                s.sort();
                s
            };
            let (gs, rs) = (set(g), set(r));
            for rule in gs.iter().filter(|x| !rs.contains(x)) {
                out.push(format!(
                    "{file}: {kind} {name}: rule only in the Go project's: {rule}"
                ));
            }
            for rule in rs.iter().filter(|x| !gs.contains(x)) {
                out.push(format!(
                    "{file}: {kind} {name}: rule only in the imported: {rule}"
                ));
            }
        } else {
            let mut d = Vec::new();
            differences(g, r, &format!("{file}: {kind} {name}"), &mut d);
            out.extend(d);
        }
    }
    for (kind, name, _) in rs {
        if !go.iter().any(|(k, n, _)| k == kind && n == name) {
            out.push(format!("{file}: {kind} {name}: only in the imported"));
        }
    }
    out
}

/// Imports `name` and compares every manifest controller-gen made for the Go project with the
/// imported project's `generate manifests`; returns the differences (empty: the same API).
fn same_api(name: &str) -> (tempfile::TempDir, PathBuf, Vec<String>) {
    let started = std::time::Instant::now();
    let (tmp, dir) = import(name);
    eprintln!("import {name}: {:.2} s", started.elapsed().as_secs_f64());
    let check = run(&dir, &["generate", "manifests", "--check"]);
    assert_eq!(
        check.code, 0,
        "the imported {name}'s manifests are not what generate writes:\n{}{}",
        check.stdout, check.stderr
    );
    let mut diffs = crd_differences(name, &dir);
    let project: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(fixture(name).join("PROJECT")).unwrap())
            .unwrap();
    let own = format!("{}-system", project["projectName"].as_str().unwrap());
    let go_roles = roles(&fixture(name).join("config/rbac/role.yaml"), &own);
    let rs_roles = roles(&dir.join("config/rbac/role.yaml"), &own);
    diffs.extend(keyed_differences("role.yaml", &go_roles, &rs_roles, true));
    let go_hooks = fixture(name).join("config/webhook/manifests.yaml");
    if go_hooks.exists() {
        let go = webhooks(&go_hooks);
        let rs = webhooks(&dir.join("config/webhook/manifests.yaml"));
        diffs.extend(keyed_differences(
            "config/webhook/manifests.yaml",
            &go,
            &rs,
            false,
        ));
    }
    (tmp, dir, diffs)
}

/// Asserts the imported `name` has the Go project's API; `except`: differences the import
/// reports as not translated (each must be listed in IMPORT.md), matched by a text they contain.
fn assert_same_api(name: &str, except: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir, diffs) = same_api(name);
    let report = std::fs::read_to_string(dir.join("IMPORT.md")).unwrap();
    for (_, reported) in except {
        assert!(
            report.contains(reported),
            "IMPORT.md lists {reported:?}:\n{report}"
        );
    }
    let diffs: Vec<String> = diffs
        .into_iter()
        .filter(|d| !except.iter().any(|(text, _)| d.contains(text)))
        .collect();
    assert!(
        diffs.is_empty(),
        "the imported {name} differs from the Go project ({} differences):\n{}",
        diffs.len(),
        diffs.join("\n")
    );
    (tmp, dir)
}

/// The differences of a fixture's import that IMPORT.md reports as not translated: (a text the
/// difference contains, the text IMPORT.md has).
fn known_differences(name: &str) -> &'static [(&'static str, &'static str)] {
    match name {
        // cert-manager's Issuer is an external kind (its Go types are in cert-manager's module):
        // its webhook is not imported, and IMPORT.md says so.
        "project-v4" | "project-v4-multigroup" => &[(
            "MutatingWebhookConfiguration missuer-v1.kb.io",
            "the external kind Issuer",
        )],
        // The schemas of the k8s.io/api types the spec and status embed are k8s-openapi's: they
        // lack the Go types' +listType/+mapType markers and defaults and follow Kubernetes 1.37;
        // IMPORT.md lists each such field. Everything of the project's own types is the same.
        "cronjob-tutorial" | "multiversion-tutorial" => &[
            (
                ".properties.spec.properties.jobTemplate.",
                "the schema of k8s.io/api/batch/v1.JobTemplateSpec",
            ),
            (
                ".properties.status.properties.active.items.",
                "the schema of k8s.io/api/core/v1.ObjectReference",
            ),
        ],
        // IntOrString items under `items:` markers are a newtype of k8s-openapi's IntOrString:
        // its description, no anyOf (the same values pass); IMPORT.md says so.
        "items" => &[(
            ".properties.spec.properties.surges.items.",
            "k8s-openapi's schema of IntOrString under the `items:` markers' keywords",
        )],
        _ => &[],
    }
}

/// Every `+kubebuilder:validation:items:` marker of controller-tools v0.21 (each validation
/// marker's `items:` twin; fixtures/import-grammar/items) imports to the CRD controller-gen
/// writes: scalar items' bounds and pattern as schemars' `inner(...)`, the other keywords on a
/// newtype of the items; the API server's verdicts are compared in
/// `the_api_server_judges_imported_crds_as_the_go_ones`.
#[test]
fn every_items_marker_imports_to_the_crd_controller_gen_writes() {
    if common::runs_elsewhere("import") {
        return;
    }
    let (_tmp, dir) = assert_same_api("items", known_differences("items"));
    let report = std::fs::read_to_string(dir.join("IMPORT.md")).unwrap();
    assert!(
        !report.contains("+kubebuilder:validation:items:"),
        "{report}"
    );
}

#[test]
fn project_v4_imports_with_the_same_crds_rbac_and_webhooks() {
    if common::runs_elsewhere("import") {
        return;
    }
    let _ = assert_same_api("project-v4", known_differences("project-v4"));
}

#[test]
fn getting_started_imports_with_the_same_crds_and_rbac() {
    if common::runs_elsewhere("import") {
        return;
    }
    let _ = assert_same_api("getting-started", &[]);
}

#[test]
fn cronjob_tutorial_imports_with_the_same_crds_rbac_and_webhooks() {
    if common::runs_elsewhere("import") {
        return;
    }
    let (_tmp, dir) = assert_same_api("cronjob-tutorial", known_differences("cronjob-tutorial"));
    // The webhook tests review the sample's spec (`{}` lacks the required schedule and
    // jobTemplate, and does not deserialize).
    // One sample of CronJob v1, Go's, which the kustomization names.
    let samples: Vec<String> = std::fs::read_dir(dir.join("config/samples"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(samples.len(), 2, "{samples:?}");
    let listing = std::fs::read_to_string(dir.join("config/samples/kustomization.yaml")).unwrap();
    assert!(listing.contains("- batch_v1_cronjob.yaml\n"), "{listing}");
    let tests = std::fs::read_to_string(dir.join("src/webhooks/v1/cron_job.rs")).unwrap();
    assert!(
        tests.contains("\"schedule\": \"*/1 * * * *\"") && !tests.contains("\"spec\": {},"),
        "{tests}"
    );
}

#[test]
fn project_v4_with_plugins_imports_with_the_same_crds_rbac_and_webhooks() {
    if common::runs_elsewhere("import") {
        return;
    }
    // Its manager is namespace-scoped, each RBAC marker naming the manager's namespace: one
    // Role there, as controller-gen's.
    let (_tmp, dir) = assert_same_api("project-v4-with-plugins", &[]);
    // PROJECT's plugins are listed, deploy-image's kinds with the operator-rs command that
    // scaffolds such a controller.
    let report = std::fs::read_to_string(dir.join("IMPORT.md")).unwrap();
    for line in [
        "`PROJECT:12:3`: the plugin deploy-image.go.kubebuilder.io/v1-alpha",
        "--kind Memcached --image memcached:1.6.26-alpine3.19 --image-container-port 11211 --image-container-command memcached,--memory-limit=64,-o,modern,-v --run-as-user 1001`",
        "`PROJECT:30:3`: the plugin helm.kubebuilder.io/v2-alpha",
        "the plugin grafana.kubebuilder.io/v1-alpha",
        "the plugin autoupdate.kubebuilder.io/v1-alpha",
    ] {
        assert!(report.contains(line), "IMPORT.md lists {line:?}:\n{report}");
    }
}

/// kubebuilder's multigroup project (`multigroup: true`: `api/<group>/<version>/`, a kind Bar
/// in the groups foo and fiz, groups with dots and dashes, a built-in kind's controller and
/// webhooks, a second controller of a kind, conversion) imported into operator-rs's multigroup
/// layout: the same CRDs, role.yaml and webhook configurations, each file where the layout puts
/// it, and PROJECT replays as `init --multigroup`, so `update` finds the project up to date.
#[test]
fn project_v4_multigroup_imports_into_the_multigroup_layout_with_the_same_api() {
    if common::runs_elsewhere("import") {
        return;
    }
    let (_tmp, dir) = assert_same_api(
        "project-v4-multigroup",
        known_differences("project-v4-multigroup"),
    );
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(project.contains("\nmultigroup: true\n"), "{project}");
    let recorded: Value = serde_saphyr::from_str(&project).unwrap();
    let init = recorded["commands"][0].as_str().unwrap();
    assert!(
        init.starts_with("init ") && init.ends_with(" --multigroup"),
        "{project}"
    );
    // Bar of foo and Bar of fiz, each in its group's modules.
    for (file, has) in [
        ("src/api/foo/v1/bar.rs", "group = \"foo.testproject.org\""),
        ("src/api/fiz/v1/bar.rs", "group = \"fiz.testproject.org\""),
        (
            "src/api/foo_policy/v1/health_check_policy.rs",
            "HealthCheckPolicySpec",
        ),
        ("src/api/example_com/v2/wordpress.rs", "version = \"v2\""),
        (
            "src/controllers/foo/bar.rs",
            "pub const NAME: &str = \"foo-bar\";",
        ),
        (
            "src/controllers/fiz/bar.rs",
            "use crate::api::fiz::v1::Bar as Kind;",
        ),
        (
            "src/controllers/apps/deployment.rs",
            "pub const NAME: &str = \"apps-deployment\";",
        ),
        (
            "src/controllers/crew/captain_backup.rs",
            "pub const NAME: &str = \"crew-captain-backup\";",
        ),
        ("src/controllers/crew/mod.rs", "pub mod captain_backup;"),
        (
            "src/controllers/mod.rs",
            "crew::captain_backup::registration(),",
        ),
        (
            "src/controllers/mod.rs",
            "pub mod cert_manager_certificate;",
        ),
        ("src/webhooks/mod.rs", "ship::v1::destroyer::defaulting()"),
        ("src/webhooks/mod.rs", "core::v1::pod::validating()"),
        (
            "src/webhooks/example_com/v2/wordpress_conversion.rs",
            "use crate::api::example_com::v2::Wordpress as Kind;",
        ),
    ] {
        let text =
            std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(text.contains(has), "{file} lacks {has:?}:\n{text}");
    }
    for gone in [
        "src/api/v1",
        "src/controllers/bar.rs",
        "src/controllers/crew_captain_backup.rs",
    ] {
        assert!(
            !dir.join(gone).exists(),
            "{gone} is not in the multigroup layout"
        );
    }
    let report = std::fs::read_to_string(dir.join("IMPORT.md")).unwrap();
    assert!(
        report.contains("`internal/controller/fiz/bar_controller.go:")
            && report.contains("kept as a comment in src/controllers/fiz/bar.rs")
            && report.contains(
                "`PROJECT:162:5`: the apply configurations of Prawn sea-creatures/v1 (ssa: true)"
            ),
        "{report}"
    );
    // `update` replays the recorded commands (init --multigroup...) to the same project.
    assert_up_to_date(&dir);
}

#[test]
fn multiversion_tutorial_imports_with_the_same_crds_rbac_and_webhooks() {
    if common::runs_elsewhere("import") {
        return;
    }
    let (_tmp, dir) = assert_same_api(
        "multiversion-tutorial",
        known_differences("multiversion-tutorial"),
    );
    // Its Go conversion maps v2's schedule to v1's: listed, and the Rust conversion's round
    // trips (through JSON until it is ported) ignored with what to port.
    let report = std::fs::read_to_string(dir.join("IMPORT.md")).unwrap();
    assert!(
        report.contains(
            "`api/v2/cronjob_conversion.go:51:1`: the conversion logic CronJob.ConvertTo"
        ),
        "{report}"
    );
    let conversion =
        std::fs::read_to_string(dir.join("src/webhooks/v2/cron_job_conversion.rs")).unwrap();
    assert_eq!(
        conversion
            .matches(
                "#[ignore = \"the Go conversion (api/v2/cronjob_conversion.go:51:1) maps fields"
            )
            .count(),
        2,
        "{conversion}"
    );
}

#[test]
fn project_v4_import_writes_its_report_and_records_its_commands() {
    if common::runs_elsewhere("import") {
        return;
    }
    let (_tmp, dir) = import("project-v4");
    let report = std::fs::read_to_string(dir.join("IMPORT.md")).unwrap();
    // The Go logic left to port, each at its place in the Go project.
    assert!(
        report.contains("`internal/controller/captain_controller.go:49:1`: the Reconcile logic"),
        "{report}"
    );
    assert!(report.contains("the external kind Certificate"), "{report}");
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    for line in [
        "create api --group crew --version v1 --kind Captain --plural captains",
        "controllerGen: true",
    ] {
        assert!(project.contains(line), "PROJECT lacks {line:?}:\n{project}");
    }
    // The second controller of Captain, wired with its Go name and RBAC markers.
    let backup = std::fs::read_to_string(dir.join("src/controllers/captain_backup.rs")).unwrap();
    assert!(
        backup.contains("pub const NAME: &str = \"captain-backup\";"),
        "{backup}"
    );
    assert!(
        backup.contains("// +kubebuilder:rbac:groups=crew.testproject.org,resources=captains,verbs=get;list;watch;create;update;patch;delete"),
        "{backup}"
    );
    let controllers = std::fs::read_to_string(dir.join("src/controllers/mod.rs")).unwrap();
    assert!(
        controllers.contains("captain_backup::registration(),"),
        "{controllers}"
    );
    // A webhook at the Go project's custom path is served there.
    let hooks = std::fs::read_to_string(dir.join("src/webhooks/mod.rs")).unwrap();
    assert!(
        hooks.contains("v1::sailor::defaulting().at_path(\"/custom-mutate-sailor\"),"),
        "{hooks}"
    );
}

fn snapshot_of(dir: &Path) -> Vec<PathBuf> {
    if !dir.exists() {
        return Vec::new();
    }
    common::snapshot(dir).into_keys().collect()
}

fn refused(source: &Path, expect: &[&str]) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let r = run(
        tmp.path(),
        &[
            "-C",
            dir.to_str().unwrap(),
            "import",
            source.to_str().unwrap(),
        ],
    );
    assert_ne!(r.code, 0, "refused: {}", r.stderr);
    for e in expect {
        assert!(
            r.stderr.contains(e),
            "the refusal says {e:?}:\n{}",
            r.stderr
        );
    }
    assert!(
        snapshot_of(&dir).is_empty(),
        "nothing written: {:?}",
        snapshot_of(&dir)
    );
    r
}

/// A copy of a fixture with `edit` applied to one of its files.
fn edited(name: &str, file: &str, edit: impl Fn(&str) -> String) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    common::copy_dir(&fixture(name), tmp.path());
    let path = tmp.path().join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, edit(&text)).unwrap();
    tmp
}

#[test]
fn a_folder_that_is_no_kubebuilder_project_is_refused() {
    if common::runs_elsewhere("import") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    refused(
        tmp.path(),
        &["not a kubebuilder project (it has no PROJECT file)"],
    );
}

#[test]
fn an_unsupported_layout_is_refused_at_its_line() {
    if common::runs_elsewhere("import") {
        return;
    }
    let src = edited("getting-started", "PROJECT", |t| {
        t.replace("go.kubebuilder.io/v4", "go.kubebuilder.io/v3")
    });
    refused(
        src.path(),
        &[
            "PROJECT:",
            "the layout go.kubebuilder.io/v3 is not supported",
            "go/v4",
        ],
    );
}

#[test]
fn a_type_with_no_schema_is_refused_at_its_go_line() {
    if common::runs_elsewhere("import") {
        return;
    }
    let src = edited("getting-started", "api/v1alpha1/memcached_types.go", |t| {
        t.replacen(
            "type MemcachedSpec struct {",
            "type MemcachedSpec struct {\n\tNotify chan int `json:\"notify,omitempty\"`",
            1,
        )
    });
    let r = refused(
        src.path(),
        &["the field Notify cannot be mapped", "Nothing was written"],
    );
    let line = std::fs::read_to_string(src.path().join("api/v1alpha1/memcached_types.go"))
        .unwrap()
        .lines()
        .position(|l| l.contains("Notify chan int"))
        .unwrap()
        + 1;
    assert!(
        r.stderr
            .contains(&format!("api/v1alpha1/memcached_types.go:{line}:")),
        "{}",
        r.stderr
    );
}

/// In the multigroup layout each group's kinds are in the group's Rust module: a group whose
/// module is `external` (the types of other projects' CRDs) and two groups that are one module
/// (`foo.policy`, `foo-policy`) are refused at their PROJECT line, nothing written.
#[test]
fn a_multigroup_group_without_a_rust_module_of_its_own_is_refused() {
    if common::runs_elsewhere("import") {
        return;
    }
    let fiz = "  group: fiz\n  kind: Bar\n";
    let src = edited("project-v4-multigroup", "PROJECT", |t| {
        assert!(t.contains(fiz));
        t.replacen(fiz, "  group: external\n  kind: Bar\n", 1)
    });
    let line = |src: &Path, group: &str| {
        let text = std::fs::read_to_string(src.join("PROJECT")).unwrap();
        let at = text.lines().position(|l| l == format!("  group: {group}"));
        format!("PROJECT:{}:3: ", at.unwrap() + 1)
    };
    refused(
        src.path(),
        &[
            &line(src.path(), "external"),
            "the group \"external\" of Bar v1",
            "src/api/external/ holds the types of kinds from other projects' CRDs",
            "rename it in the Go project (e.g. group: fleet",
        ],
    );
    let src = edited("project-v4-multigroup", "PROJECT", |t| {
        t.replacen(fiz, "  group: foo-policy\n  kind: Bar\n", 1)
    });
    refused(
        src.path(),
        &[
            &line(src.path(), "foo-policy"),
            "the groups \"foo.policy\" (HealthCheckPolicy v1) and \"foo-policy\" (Bar v1) are both the Rust module foo_policy",
            "rename one of the groups",
        ],
    );
}

#[test]
fn a_users_file_in_the_target_is_not_overwritten() {
    if common::runs_elsewhere("import") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("Makefile"), "mine\n").unwrap();
    let source = fixture("getting-started");
    let r = run(
        tmp.path(),
        &[
            "-C",
            dir.to_str().unwrap(),
            "import",
            source.to_str().unwrap(),
        ],
    );
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("Makefile"), "{}", r.stderr);
    assert_eq!(snapshot_of(&dir), vec![PathBuf::from("Makefile")]);
    assert_eq!(
        std::fs::read_to_string(dir.join("Makefile")).unwrap(),
        "mine\n"
    );
}

/// A kubebuilder project written here, with every kind of field and marker import maps: the
/// imported CRD has each marker's schema as controller-gen writes it.
const WIDGET_TYPES: &str = r#"package v1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Mode is how a widget runs.
// +kubebuilder:validation:Enum=Fast;Slow
type Mode string

const (
	// Fast runs fast.
	Fast Mode = "Fast"
	// Slow runs slow.
	Slow Mode = "Slow"
)

// Tier is a service level.
// +k8s:enum
type Tier string

const (
	// Gold is the best.
	Gold Tier = "Gold"
	Bronze Tier = "Bronze"
)

// Name is a DNS label.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
type Name string

// Common holds fields every widget has.
type Common struct {
	// owner of the widget.
	// +optional
	Owner string `json:"owner,omitempty"`
}

// Port is a named port.
type Port struct {
	// name of the port.
	Name Name `json:"name"`
	// port number.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`
}

// WidgetSpec defines the desired state of Widget.
// +kubebuilder:validation:XValidation:rule="self.minReplicas <= self.maxReplicas",message="min at most max"
// +kubebuilder:validation:AtLeastOneOf=owner;ratio
// +kubebuilder:validation:ExactlyOneOf=target;tier
// +kubebuilder:validation:AtMostOneOf=labels;template
type WidgetSpec struct {
	Common `json:",inline"`

	// minReplicas is the least.
	// +kubebuilder:default=1
	// +optional
	MinReplicas int32 `json:"minReplicas,omitempty"`
	// maxReplicas is the most.
	// +k8s:immutable
	MaxReplicas int32 `json:"maxReplicas"`
	// tier of service.
	// +optional
	Tier Tier `json:"tier,omitempty"`
	// mode of the widget.
	// +kubebuilder:default:=Fast
	// +optional
	Mode Mode `json:"mode,omitempty"`
	// hosts served.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:UniqueItems=true
	// +kubebuilder:validation:items:Enum=a;b
	// +listType=set
	Hosts []string `json:"hosts"`
	// ports, by name.
	// +listType=map
	// +listMapKey=name
	// +optional
	Ports []Port `json:"ports,omitempty"`
	// labels to add.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// size of its volume.
	Size resource.Quantity `json:"size"`
	// target port.
	// +optional
	Target *intstr.IntOrString `json:"target,omitempty"`
	// config passed on as it is.
	// +optional
	Config *runtime.RawExtension `json:"config,omitempty"`
	// values passed on as they are.
	// +optional
	Values *apiextensionsv1.JSON `json:"values,omitempty"`
	// template of its pods.
	// +optional
	Template *corev1.PodTemplateSpec `json:"template,omitempty"`
	// interval between checks.
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`
	// ratio kept.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:externalDocs:url="https://example.com/ratio",description="Ratios"
	// +optional
	Ratio *float64 `json:"ratio,omitempty"`
	internal string `json:"-"`
}

// WidgetStatus defines the observed state of Widget.
type WidgetStatus struct {
	// replicas running.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// selector of its pods.
	// +optional
	Selector string `json:"selector,omitempty"`
	// conditions of the widget.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.maxReplicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:resource:shortName=wd;wdg,categories=all,scope=Cluster
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`,description="How it runs"

// Widget is the Schema for the widgets API.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec   `json:"spec,omitempty"`
	Status WidgetStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// WidgetList contains a list of Widget.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}
"#;

const WIDGET_PROJECT: &str = "domain: example.com
layout:
- go.kubebuilder.io/v4
projectName: widgets
repo: github.com/acme/widgets
resources:
- api:
    crdVersion: v1
  domain: example.com
  group: toys
  kind: Widget
  path: github.com/acme/widgets/api/v1
  version: v1
version: \"3\"
";

fn at<'a>(v: &'a Value, path: &str) -> &'a Value {
    path.split('.')
        .fold(v, |v, k| if k.is_empty() { v } else { &v[k] })
}

#[test]
fn every_field_and_marker_kind_becomes_the_schema_controller_gen_writes() {
    if common::runs_elsewhere("import") {
        return;
    }
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("PROJECT"), WIDGET_PROJECT).unwrap();
    std::fs::create_dir_all(src.path().join("api/v1")).unwrap();
    std::fs::write(src.path().join("api/v1/widget_types.go"), WIDGET_TYPES).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("widgets");
    let r = run(
        tmp.path(),
        &[
            "-C",
            dir.to_str().unwrap(),
            "import",
            src.path().to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let crd = docs(&dir.join("config/crd/bases/toys.example.com_widgets.yaml")).remove(0);
    assert_eq!(crd["spec"]["scope"], "Cluster");
    assert_eq!(
        crd["spec"]["names"]["shortNames"],
        serde_json::json!(["wd", "wdg"])
    );
    assert_eq!(
        crd["spec"]["names"]["categories"],
        serde_json::json!(["all"])
    );
    assert_eq!(crd["spec"]["names"]["listKind"], "WidgetList");
    let version = &crd["spec"]["versions"][0];
    assert_eq!(
        version["subresources"],
        serde_json::json!({"status": {}, "scale": {"specReplicasPath": ".spec.maxReplicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}})
    );
    assert_eq!(
        version["additionalPrinterColumns"],
        serde_json::json!([{"name": "Mode", "type": "string", "jsonPath": ".spec.mode", "description": "How it runs"}])
    );
    let root = &version["schema"]["openAPIV3Schema"];
    assert_eq!(
        root["description"],
        "Widget is the Schema for the widgets API."
    );
    let spec = at(root, "properties.spec");
    // XValidation first, then AtMostOneOf, ExactlyOneOf and AtLeastOneOf, as controller-gen
    // (v0.21) orders and writes them.
    assert_eq!(
        spec["x-kubernetes-validations"],
        serde_json::json!([
            {"rule": "self.minReplicas <= self.maxReplicas", "message": "min at most max"},
            {"rule": "[has(self.labels),has(self.template)].filter(x,x==true).size() <= 1", "message": "at most one of the fields in [labels template] may be set"},
            {"rule": "[has(self.target),has(self.tier)].filter(x,x==true).size() == 1", "message": "exactly one of the fields in [target tier] must be set"},
            {"rule": "[has(self.owner),has(self.ratio)].filter(x,x==true).size() >= 1", "message": "at least one of the fields in [owner ratio] must be set"},
        ])
    );
    let mut required: Vec<&str> = spec["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    required.sort();
    assert_eq!(required, ["hosts", "maxReplicas", "size"]);
    let p = |name: &str| at(spec, &format!("properties.{name}")).clone();
    // The embedded struct's fields are the spec's.
    assert_eq!(
        p("owner"),
        serde_json::json!({"type": "string", "description": "owner of the widget."})
    );
    assert_eq!(p("minReplicas")["default"], 1);
    assert_eq!(p("minReplicas")["format"], "int32");
    assert_eq!(p("mode")["enum"], serde_json::json!(["Fast", "Slow"]));
    assert_eq!(p("mode")["default"], "Fast");
    assert_eq!(p("mode")["description"], "mode of the widget.");
    let hosts = p("hosts");
    assert_eq!(hosts["minItems"], 1);
    assert_eq!(hosts["items"]["maxLength"], 253);
    assert_eq!(hosts["x-kubernetes-list-type"], "set");
    let ports = p("ports");
    assert_eq!(ports["x-kubernetes-list-type"], "map");
    assert_eq!(
        ports["x-kubernetes-list-map-keys"],
        serde_json::json!(["name"])
    );
    // A named type's markers apply where it is used.
    assert_eq!(ports["items"]["properties"]["name"]["maxLength"], 63);
    assert_eq!(
        ports["items"]["properties"]["name"]["pattern"],
        "^[a-z]([-a-z0-9]*[a-z0-9])?$"
    );
    // Numbers compare as numbers (`1` = `1.0`), as the API server reads them.
    assert_eq!(
        ports["items"]["properties"]["port"]["minimum"].as_f64(),
        Some(1.0)
    );
    assert_eq!(
        ports["items"]["properties"]["port"]["maximum"].as_f64(),
        Some(65535.0)
    );
    assert_eq!(
        p("labels")["additionalProperties"],
        serde_json::json!({"type": "string"})
    );
    assert_eq!(p("size")["x-kubernetes-int-or-string"], true);
    assert_eq!(p("target")["x-kubernetes-int-or-string"], true);
    assert_eq!(p("config")["x-kubernetes-preserve-unknown-fields"], true);
    assert_eq!(p("config")["type"], "object");
    assert_eq!(p("values")["x-kubernetes-preserve-unknown-fields"], true);
    assert_eq!(p("template")["type"], "object");
    assert!(p("template")["properties"]["spec"]["properties"]["containers"].is_object());
    assert_eq!(p("interval")["type"], "string");
    assert_eq!(p("ratio")["exclusiveMinimum"], true);
    assert_eq!(
        p("ratio")["externalDocs"],
        serde_json::json!({"url": "https://example.com/ratio", "description": "Ratios"})
    );
    assert_eq!(
        p("maxReplicas")["x-kubernetes-validations"],
        serde_json::json!([{"rule": "self == oldSelf", "message": "field is immutable"}])
    );
    // +k8s:enum: the type's constants, sorted, as controller-gen writes them.
    assert_eq!(
        p("tier"),
        serde_json::json!({"type": "string", "enum": ["Bronze", "Gold"], "description": "tier of service."})
    );
    // What has no Rust form is in IMPORT.md at its Go line.
    let types_go = WIDGET_TYPES.lines().collect::<Vec<_>>();
    let report = std::fs::read_to_string(dir.join("IMPORT.md")).unwrap();
    assert_eq!(hosts["items"]["enum"], serde_json::json!(["a", "b"]));
    let marker = "+kubebuilder:validation:UniqueItems=true";
    let line = types_go.iter().position(|l| l.ends_with(marker)).unwrap() + 1;
    assert!(
        report.contains(&format!("`api/v1/widget_types.go:{line}:")) && report.contains(marker),
        "IMPORT.md lists {marker} at line {line}:\n{report}"
    );
    assert!(spec["properties"].get("internal").is_none());
    // No `nullable` where Go has no +nullable (controller-gen's CRD).
    let text = std::fs::read_to_string(dir.join("config/crd/bases/toys.example.com_widgets.yaml"))
        .unwrap();
    assert!(!text.contains("nullable"), "{text}");
    // The Rust types: an enum with its constants' docs, doc comments from Go.
    let rust = std::fs::read_to_string(dir.join("src/api/v1/widget.rs")).unwrap();
    for line in [
        "pub enum Mode {",
        "/// Fast runs fast.",
        "/// hosts served.",
        "pub template: Option<PodTemplateSpec>,",
    ] {
        assert!(rust.contains(line), "{line:?} in:\n{rust}");
    }
    let check = run(&dir, &["generate", "manifests", "--check"]);
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
}

/// PROJECT records the commands that make the imported project and the digest of their replay:
/// `update` finds this operator-rs to be the one that made it, as for any project.
#[test]
fn an_imported_project_updates_like_any_other() {
    if common::runs_elsewhere("import") {
        return;
    }
    let (_tmp, dir) = import("project-v4");
    assert_up_to_date(&dir);
}

/// `update` (this binary's scaffold) finds the imported project in `dir` up to date: the replay
/// of the commands its PROJECT records makes the files import wrote.
fn assert_up_to_date(dir: &Path) {
    common::git(dir, &["init", "-q"]);
    common::git(dir, &["add", "-A"]);
    common::git(dir, &["commit", "-qm", "import"]);
    let this = env!("CARGO_BIN_EXE_operator-rs");
    let r = run(
        dir,
        &["update", "--dry-run", "--no-check", "--from-binary", this],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        format!("{}{}", r.stdout, r.stderr).contains("already up to date"),
        "{}{}",
        r.stdout,
        r.stderr
    );
}

/// The YAML documents of the `.yaml` files of `dir` but its kustomization.
fn yaml_docs(dir: &Path) -> Vec<Value> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "yaml")
                && p.file_name().is_some_and(|n| n != "kustomization.yaml")
        })
        .collect();
    files.sort();
    files.iter().flat_map(|f| docs(f)).collect()
}

/// Deletes the CRDs `names` and waits until they are gone.
async fn remove_crds(client: &kube::Client, names: &[String]) {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let api: kube::Api<CustomResourceDefinition> = kube::Api::all(client.clone());
    for name in names {
        let _ = api.delete(name, &Default::default()).await;
    }
    for name in names {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while api.get_opt(name).await.unwrap().is_some() {
            assert!(
                std::time::Instant::now() < deadline,
                "the CRD {name} is not gone after 60 s"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

/// The API server's verdict on each case with the CRDs of `crds` installed (those of `names`
/// removed first): the stored object (defaults filled in), or the refusal's message.
fn verdicts_with(
    cp: &control_plane::ControlPlane,
    runtime: &tokio::runtime::Runtime,
    names: &[String],
    crds: &Path,
    cases: &[verdicts::Case],
) -> Vec<Result<Value, String>> {
    let env = cp.envtest();
    runtime.block_on(async {
        let client = env.client().unwrap();
        remove_crds(&client, names).await;
        env.install_crds(crds)
            .await
            .unwrap_or_else(|e| panic!("installing {}: {e:#}", crds.display()));
    });
    let objects: Vec<Value> = cases.iter().map(|c| c.object.clone()).collect();
    control_plane::dry_run_all(cp, &objects)
        .into_iter()
        .map(|v| v.map(verdicts::comparable))
        .collect()
}

/// The API server judges the imported CRDs as it judges the Go project's: on the real control
/// plane, each fixture's Go CRDs installed, then replaced by the imported ones, the samples and
/// the boundary objects generated from the Go schema (every bounded, patterned, enumerated,
/// required or defaulted field; `verdicts`) are dry-run, and every verdict (accepted with the
/// same defaulted object, or refused with the same message) must be the same. The k8s.io/api
/// types' subtrees IMPORT.md reports (`known_differences`) are left out. Fixtures whose CRDs
/// share no name are judged at once (most of the time is the API server's CRD set-up).
#[test]
fn the_api_server_judges_imported_crds_as_the_go_ones() {
    if common::runs_elsewhere("import") {
        return;
    }
    let Some(assets) = control_plane::assets("the_api_server_judges_imported_crds_as_the_go_ones")
    else {
        return;
    };
    let cp = control_plane::start(&assets);
    // Fixtures sharing a CRD name (cronjob-tutorial's and multiversion-tutorial's are the same
    // CRD) in one lane, in turn; the lanes at once.
    let mut lanes: Vec<(std::collections::BTreeSet<String>, Vec<String>)> = Vec::new();
    for name in fixtures() {
        let crds: std::collections::BTreeSet<String> =
            yaml_docs(&fixture(&name).join("config/crd/bases"))
                .iter()
                .map(|c| c["metadata"]["name"].as_str().unwrap().to_string())
                .collect();
        match lanes.iter_mut().find(|(used, _)| !used.is_disjoint(&crds)) {
            Some((used, names)) => {
                used.extend(crds);
                names.push(name);
            }
            None => lanes.push((crds, vec![name])),
        }
    }
    let failures: Vec<String> = std::thread::scope(|s| {
        let cp = &cp;
        let handles: Vec<_> = lanes
            .into_iter()
            .map(|(_, names)| {
                s.spawn(move || {
                    let mut failures = Vec::new();
                    for name in names {
                        failures.extend(judge(cp, &name));
                    }
                    failures
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(
        failures.is_empty(),
        "{} different verdicts:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// One fixture's verdicts, Go CRDs then imported ones: each difference.
fn judge(cp: &control_plane::ControlPlane, name: &str) -> Vec<String> {
    let started = std::time::Instant::now();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (_tmp, dir) = import(name);
    let go_crds = fixture(name).join("config/crd/bases");
    let samples = yaml_docs(&fixture(name).join("config/samples"));
    let skip: Vec<&str> = known_differences(name).iter().map(|(t, _)| *t).collect();
    let mut cases = Vec::new();
    let mut names = Vec::new();
    for crd in yaml_docs(&go_crds) {
        names.push(crd["metadata"]["name"].as_str().unwrap().to_string());
        for version in crd["spec"]["versions"].as_array().unwrap() {
            cases.extend(verdicts::cases(&crd, version, &samples, &skip));
        }
    }
    let go = verdicts_with(cp, &runtime, &names, &go_crds, &cases);
    let rs = verdicts_with(cp, &runtime, &names, &dir.join("config/crd/bases"), &cases);
    runtime.block_on(async { remove_crds(&cp.envtest().client().unwrap(), &names).await });
    let accepted = go.iter().filter(|v| v.is_ok()).count();
    let defaulted = cases
        .iter()
        .zip(&go)
        .filter(|(c, v)| v.as_ref().is_ok_and(|v| v["spec"] != c.object["spec"]))
        .count();
    let mut record = format!(
        "{name}: {} objects, {accepted} accepted ({defaulted} of them defaulted), {} refused, in {:.1} s\n",
        cases.len(),
        cases.len() - accepted,
        started.elapsed().as_secs_f64()
    );
    let mut failures = Vec::new();
    for ((case, g), r) in cases.iter().zip(&go).zip(&rs) {
        record.push_str(&format!("  {}: {}\n", case.what, short_verdict(g)));
        if g != r {
            failures.push(format!(
                "{name}: {}:\n  the Go CRD: {}\n  the imported: {}",
                case.what,
                short_verdict(g),
                short_verdict(r)
            ));
        }
    }
    eprint!("{record}");
    assert!(
        accepted > 0 && accepted < cases.len(),
        "{name}: the cases are all accepted or all refused:\n{record}"
    );
    failures
}

fn short_verdict(v: &Result<Value, String>) -> String {
    match v {
        Ok(o) => format!("accepted as {}", o["spec"]),
        Err(e) => format!("refused: {e}"),
    }
}
