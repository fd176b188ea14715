//! `generate crds --exact` (through the compiler) agrees with the static reader, byte for byte.
//! Builds a harness crate with kube-derive in `target/crdgen-exact`, its dependencies the units
//! the workspace's build compiled ([`harness_manifest`]): only the crate itself compiles.

use crate::crdgen_cases;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use operator_rs::crdgen;
use operator_rs::project::{LAYOUT, Project};
use operator_rs::workspace::{DiskTree, GeneratorOutput};

fn project() -> Project {
    Project {
        version: "3".into(),
        domain: "example.com".into(),
        repo: String::new(),
        project_name: "fixture".into(),
        crate_name: "fixture".into(),
        layout: vec![LAYOUT.into()],
        cli_version: "0.1.0".into(),
        cli_source: String::new(),
        scaffold: None,
        commands: Vec::new(),
        k8s_openapi_feature: "v1_37".into(),
        namespaced: false,
        multigroup: false,
        sharded: false,
        resources: Vec::new(),
        crd: Default::default(),
    }
}

/// The manifest of the harness crates (every build shares the workspace's build directory):
/// a dependency on every crate this workspace declares (both packages' dependencies and
/// dev-dependencies, the runtime's optional ones with every feature on), each with the
/// features the workspace turns on. Cargo then resolves every crate of the harness's tree,
/// proc-macros and build scripts included, to the features `cargo test --workspace
/// --all-features` builds it with, so the harness compiles its own crate only: a smaller
/// manifest (kube with `derive`, k8s-openapi, serde, serde_json, schemars) unified syn,
/// serde_json, base64 and jiff to other features, and k8s-openapi, serde and every proc-macro
/// compiled a second time. Those already built cost cargo a freshness check each.
/// `extra` is more dependency lines (TOML), merged in.
pub fn harness_manifest(extra: &str) -> String {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |rel: &str| -> toml::Table {
        toml::from_str(&std::fs::read_to_string(repo.join(rel)).unwrap()).unwrap()
    };
    let (cli, runtime) = (read("Cargo.toml"), read("runtime/Cargo.toml"));
    // name -> (version requirement, default features, features)
    let mut deps: BTreeMap<String, (String, bool, BTreeSet<String>)> = BTreeMap::new();
    let mut declare = |table: Option<&toml::Value>| {
        for (name, spec) in table.and_then(toml::Value::as_table).into_iter().flatten() {
            let (version, default, features) = match spec {
                toml::Value::String(v) => (v.clone(), true, Vec::new()),
                spec => {
                    if spec.get("path").is_some() {
                        continue; // the runtime: its dependencies are declared below
                    }
                    let features = (spec.get("features").and_then(toml::Value::as_array))
                        .into_iter()
                        .flatten()
                        .map(|f| f.as_str().unwrap().to_owned())
                        .collect();
                    let default =
                        spec.get("default-features") != Some(&toml::Value::Boolean(false));
                    (
                        spec["version"].as_str().unwrap().to_owned(),
                        default,
                        features,
                    )
                }
            };
            let entry = deps
                .entry(name.clone())
                .or_insert((version, false, BTreeSet::new()));
            entry.1 |= default;
            entry.2.extend(features);
        }
    };
    let extra: toml::Table = toml::from_str(extra).unwrap();
    for table in [&cli, &runtime] {
        declare(table.get("dependencies"));
        declare(table.get("dev-dependencies"));
    }
    declare(Some(&toml::Value::Table(extra)));
    // The runtime's features, all on (`--all-features`): `dep/feature` turns a feature of `dep` on.
    for feature in
        (runtime["features"].as_table().unwrap().values()).flat_map(|v| v.as_array().unwrap())
    {
        if let Some((dep, f)) = feature.as_str().unwrap().split_once('/') {
            let dep = dep.trim_end_matches('?');
            (deps.get_mut(dep))
                .unwrap_or_else(|| {
                    panic!("runtime/Cargo.toml: feature {feature} names {dep}, not a dependency")
                })
                .2
                .insert(f.to_owned());
        }
    }
    let mut manifest = String::from(
        "[package]\nname = \"fixture\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n\n[dependencies]\n",
    );
    for (name, (version, default, features)) in deps {
        let features: Vec<String> = features.iter().map(|f| format!("{f:?}")).collect();
        manifest.push_str(&format!(
            "{name} = {{ version = {version:?}, default-features = {default}, features = [{}] }}\n",
            features.join(", ")
        ));
    }
    manifest
}

/// The dependencies `fixtures/crdgen/external_types.rs` adds: the crates whose types schemars
/// gives a schema behind its features. With them, schemars and so k8s-openapi (the largest crate
/// of the tree) compile a second time, so its kube-derive output is recorded
/// ([`records_kube_derive_output_of_external_types`]) and checked in tests/crdgen/differential.rs.
const EXTERNAL_TYPES_DEPENDENCIES: &str = "schemars = { version = \"1.2\", features = [\"chrono04\", \"jiff02\", \"uuid1\", \"url2\", \"semver1\", \"indexmap2\"] }\n\
         chrono = { version = \"0.4\", default-features = false, features = [\"serde\", \"std\"] }\n\
         jiff = { version = \"0.2\", features = [\"serde\"] }\nuuid = { version = \"1\", features = [\"serde\"] }\n\
         url = { version = \"2\", features = [\"serde\"] }\nsemver = { version = \"1\", features = [\"serde\"] }\n\
         indexmap = { version = \"2\", features = [\"serde\"] }\n";

/// The workspace's target directory (`CARGO_TARGET_TMPDIR` is `<target dir>/tmp`), as cargo's
/// build-dir of the harness crates.
pub fn workspace_build_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .to_owned()
}

fn agree(names: &[&str]) {
    agree_with(names, &project(), false);
}

/// `--exact` and the static reader write the same files under `project`'s `crd:` options, with or
/// without kube-apiserver's checks (some fixtures hold CRDs the API server refuses).
fn agree_with(names: &[&str], project: &Project, checks: bool) {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    let mut lib = String::new();
    for n in names {
        lib.push_str(&format!("pub mod {n};\n"));
        let file = repo.join(format!("fixtures/crdgen/{n}.rs"));
        if file.exists() {
            std::fs::copy(&file, root.join(format!("src/{n}.rs"))).unwrap();
        } else {
            copy_dir(
                &repo.join("fixtures/crdgen").join(n),
                &root.join("src").join(n),
            );
        }
    }
    std::fs::write(root.join("src/lib.rs"), lib).unwrap();
    agree_in(root, project, checks);
}

/// [`agree_with`] on the crate whose `src/` is laid out in `root`.
fn agree_in(root: &Path, project: &Project, checks: bool) {
    let exact = exact_in(root, project, checks, &harness_manifest(""));
    let tree = DiskTree::new(root);
    let stat = if checks {
        crdgen::generate(&tree, project)
    } else {
        crdgen::generate_unchecked(&tree, project)
    }
    .unwrap();
    assert!(stat.files.len() > 1, "no kind in the crate");
    assert_eq!(exact.files.len(), stat.files.len());
    for (a, b) in exact.files.iter().zip(&stat.files) {
        assert_eq!(a.path, b.path);
        assert_eq!(
            a.contents,
            b.contents,
            "{} differs between --exact and the static reader",
            a.path.display()
        );
    }
}

/// `generate crds --exact` on the crate laid out in `root`, its manifest `manifest`.
fn exact_in(root: &Path, project: &Project, checks: bool, manifest: &str) -> GeneratorOutput {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    std::fs::write(root.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(repo.join("Cargo.lock"), root.join("Cargo.lock")).unwrap();
    // SAFETY of sharing: one target dir for every exact build of the repo.
    let target = repo.join("target/crdgen-exact");
    // The harness reads CARGO_TARGET_DIR from the environment; set it for this process only.
    unsafe { std::env::set_var("CARGO_TARGET_DIR", &target) };
    // Its crates compile in the workspace's build directory: k8s-openapi and the crates under
    // it are the ones the workspace's tests built (the same versions and features).
    unsafe { std::env::set_var("CARGO_BUILD_BUILD_DIR", workspace_build_dir()) };
    crdgen::generate_exact(root, project, checks).unwrap()
}

/// Records what kube-derive's `crd()` renders for `fixtures/crdgen/external_types.rs` (through
/// `--exact`, with the crates it needs) in `fixtures/crdgen/external_types.crd.yaml`, headed by
/// the versions of kube, schemars and k8s-openapi it was rendered with; tests/crdgen/differential.rs
/// checks the static reader against it, and asks for this when Cargo.lock moves past them:
/// `cargo test --test crdgen -- --ignored exact::records_kube_derive_output_of_external_types`.
#[test]
#[ignore = "records a fixture: run it when Cargo.lock's kube, schemars or k8s-openapi changes"]
fn records_kube_derive_output_of_external_types() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::copy(
        repo.join("fixtures/crdgen/external_types.rs"),
        root.join("src/external_types.rs"),
    )
    .unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub mod external_types;\n").unwrap();
    let manifest = harness_manifest(EXTERNAL_TYPES_DEPENDENCIES);
    let exact = exact_in(root, &project(), false, &manifest);
    let crds: Vec<_> = (exact.files.iter())
        .filter(|f| f.path.starts_with("config/crd/bases"))
        .collect();
    assert_eq!(crds.len(), 1, "one kind in external_types.rs");
    let lock = std::fs::read_to_string(repo.join("Cargo.lock")).unwrap();
    let header = crdgen_cases::recorded::header(&lock);
    std::fs::write(
        repo.join("fixtures/crdgen/external_types.crd.yaml"),
        format!("{header}{}", crds[0].contents),
    )
    .unwrap();
}

/// kube-derive's own tests (those of the version in Cargo.lock, from cargo's registry, where
/// building this crate put them) hold the kinds its authors check `crd()` on: read statically,
/// each file's kinds give what kube-derive gives. Those its tests expect to panic are refused.
#[test]
fn exact_agrees_with_static_on_kube_derives_own_tests() {
    if crate::common::runs_elsewhere("crdgen_exact") {
        return;
    }
    let Some(tests) = kube_derive_tests() else {
        eprintln!(
            "SKIPPED exact_agrees_with_static_on_kube_derives_own_tests: kube-derive's sources are not in cargo's registry (vendored build?)"
        );
        return;
    };
    let files = [
        "crd_schema_test",
        "crd_enum_test",
        "crd_complex_enum_test",
        "crd_mixed_enum_test",
        "crd_no_spec_test",
    ];
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    let mut lib = String::new();
    for name in files {
        let text = std::fs::read_to_string(tests.join(format!("{name}.rs"))).unwrap();
        // jiff's `Timestamp` has a schema only behind schemars' `jiff02` feature, which would
        // compile schemars and k8s-openapi a second time: k8s-openapi's `Time` (the same
        // `date-time` string) stands in; jiff's types are checked in the recorded
        // external_types (records_kube_derive_output_of_external_types).
        let text = text.replace(
            "use jiff::Timestamp;",
            "use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time as Timestamp;",
        );
        let (kept, refused) = as_module(&text, name);
        if name == "crd_mixed_enum_test" {
            assert!(
                !refused.is_empty(),
                "the invalid mixed enums were not found"
            );
        }
        // Each kind kube-derive's tests expect `crd()` to panic on is refused on its own.
        for item in refused {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join("src")).unwrap();
            std::fs::write(dir.path().join("src/lib.rs"), format!("{PRELUDE}{item}")).unwrap();
            let e = crdgen::generate_unchecked(&DiskTree::new(dir.path()), &project());
            let msg = e.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(
                msg.starts_with("src/lib.rs:") && msg.contains("panic"),
                "{name}: not refused as kube-derive panics: {msg:?}\n{item}"
            );
        }
        lib.push_str(&format!("pub mod {name};\n"));
        std::fs::write(dir.path().join(format!("src/{name}.rs")), kept).unwrap();
    }
    // One crate, one harness build.
    std::fs::write(dir.path().join("src/lib.rs"), lib).unwrap();
    agree_in(dir.path(), &project(), false);
}

const PRELUDE: &str =
    "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n";

/// `tests/` of the kube-derive in Cargo.lock, in cargo's registry.
fn kube_derive_tests() -> Option<PathBuf> {
    let lock =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.lock")).ok()?;
    let at = lock.find("name = \"kube-derive\"\nversion = \"")?
        + "name = \"kube-derive\"\nversion = \"".len();
    let version = &lock[at..at + lock[at..].find('"')?];
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    std::fs::read_dir(home.join("registry/src"))
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join(format!("kube-derive-{version}/tests")))
        .find(|p| p.is_dir())
}

/// A kube-derive test file as the module `name` of a library, and the items (with their doc
/// comments) of the kinds its tests expect to panic, cut out of it: the test-only imports and
/// crate attributes go, `kube_derive::` is `kube::` (this crate's dependency), top-level types are
/// `pub` (kube-derive gives a kind its spec's visibility; the harness names every kind), each
/// group is prefixed with the file's name (the files reuse kinds: one crate holds them all), and
/// the `cel` flag goes (it adds client-side validation methods, not CRD content, and needs
/// kube's `cel` feature, whose CEL interpreter the harness would compile).
fn as_module(text: &str, name: &str) -> (String, Vec<String>) {
    let prefix = format!("group = \"{}.", name.replace('_', "-"));
    let mut kept = String::new();
    let mut refused = Vec::new();
    // Items at the top level, each with the comments and attributes above it.
    let mut item = String::new();
    let mut depth = 0i32;
    for line in text.lines() {
        let line =
            if line.starts_with("#![recursion_limit") || line.starts_with("use assert_json_diff") {
                ""
            } else {
                line
            };
        let line = if line.trim() == "cel," { "" } else { line };
        let line = line
            .replace("kube_derive::", "kube::")
            .replace("#[x_kube(cel, ", "#[x_kube(")
            .replace("group = \"", &prefix);
        let line = match line.strip_prefix("struct ").or(line.strip_prefix("enum ")) {
            Some(_) => format!("pub {line}"),
            None => line,
        };
        item.push_str(&line);
        item.push('\n');
        depth += line.matches(['{', '(', '[']).count() as i32;
        depth -= line.matches(['}', ')', ']']).count() as i32;
        let ends = depth == 0 && (line.ends_with('}') || line.ends_with(';') || line.is_empty());
        if ends {
            if item.contains("kind = \"Invalid") {
                refused.push(std::mem::take(&mut item));
            } else {
                kept.push_str(&std::mem::take(&mut item));
            }
        }
    }
    kept.push_str(&item);
    (kept, refused)
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.path().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Every fixture, in one crate (one harness build). `versions3` is left out: without a PROJECT
/// naming its storage version it is an error case (tested in tests/crdgen/differential.rs).
#[test]
fn exact_agrees_with_static_on_every_fixture() {
    if crate::common::runs_elsewhere("crdgen_exact") {
        return;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/crdgen");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|n| n != "versions3")
        // Recorded instead (records_kube_derive_output_of_external_types).
        .filter(|n| n != "external_types")
        .collect();
    names.sort();
    assert!(names.len() >= 30, "{names:?}");
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    agree(&names);
}

/// PROJECT's `crd:` options (descriptions cut, known formats only) apply to `--exact` identically.
#[test]
fn exact_applies_crd_options() {
    if crate::common::runs_elsewhere("crdgen_exact") {
        return;
    }
    let mut p = project();
    p.crd.max_desc_len = Some(12);
    p.crd.known_formats_only = true;
    agree_with(&["docs", "scalars"], &p, true);
}

/// A crate named `name` of `files` (path, text), for `--exact`'s refusals (nothing is built).
fn crate_of(name: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    let manifest =
        format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n");
    std::fs::write(root.join("Cargo.toml"), manifest).unwrap();
    for (path, text) in files {
        std::fs::write(root.join(path), text).unwrap();
    }
    dir
}

/// A kind `Ghost` (`GhostSpec` at line 7), with its imports.
const GHOST: &str = "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n\n#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[kube(group = \"ghost.example.com\", version = \"v1\", kind = \"Ghost\")]\npub struct GhostSpec {\n    pub a: i32,\n}\n";

/// `--exact`'s error on the crate `dir`; nothing may have been built.
fn exact_refusal(dir: &tempfile::TempDir) -> String {
    let e = crdgen::generate_exact(dir.path(), &project(), true).unwrap_err();
    assert!(
        !dir.path().join("target").exists(),
        "nothing is built for a kind the harness cannot name"
    );
    e.to_string()
}

/// A kind no other crate can name (a private module, no re-export) is refused before anything is
/// built, at the kind, with the fix; kinds named only through re-exports are covered by the
/// `reexported` fixture above.
#[test]
fn exact_refuses_a_kind_other_crates_cannot_name() {
    if crate::common::runs_elsewhere("crdgen_exact") {
        return;
    }
    let lib = "mod hidden;\npub use hidden::GhostSpec;\n";
    let dir = crate_of("hidden", &[("src/lib.rs", lib), ("src/hidden.rs", GHOST)]);
    let msg = exact_refusal(&dir);
    assert!(
        msg.starts_with("src/hidden.rs:7:12: `Ghost`")
            && msg.contains("cannot be named from outside the crate")
            && msg.contains("pub use ...::Ghost;"),
        "{msg}"
    );
}

/// kube-derive gives the root struct its spec's visibility: a private or `pub(crate)` spec in a
/// public module (kube-rs's own `crd_derive_cel` example) makes a kind the harness cannot name.
#[test]
fn exact_refuses_a_kind_whose_spec_is_not_pub() {
    if crate::common::runs_elsewhere("crdgen_exact") {
        return;
    }
    for (vis, shown) in [("", "private"), ("pub(crate) ", "`pub(crate)`")] {
        let spec = GHOST.replace("pub struct GhostSpec", &format!("{vis}struct GhostSpec"));
        let dir = crate_of(
            "private_spec",
            &[("src/lib.rs", "pub mod open;\n"), ("src/open.rs", &spec)],
        );
        let msg = exact_refusal(&dir);
        let at = 8 + vis.len();
        assert!(
            msg.starts_with(&format!("src/open.rs:7:{at}: `Ghost`"))
                && msg.contains(&format!("`GhostSpec`, which is {shown}"))
                && msg.contains("make `GhostSpec` `pub`"),
            "{msg}"
        );
    }
}

/// A kind of the binary crate (`src/main.rs`) cannot be named by the harness, which depends on the
/// library: refused at the kind before anything is built.
#[test]
fn exact_refuses_a_kind_of_the_binary_crate() {
    if crate::common::runs_elsewhere("crdgen_exact") {
        return;
    }
    let main = format!("{GHOST}\nfn main() {{}}\n");
    let files = [
        ("src/lib.rs", "pub mod util {}\n"),
        ("src/main.rs", main.as_str()),
    ];
    let msg = exact_refusal(&crate_of("binkind", &files));
    assert!(
        msg.starts_with("src/main.rs:7:12: `Ghost` is in the binary crate"),
        "{msg}"
    );
}

/// rustc's verdict on what the static reader refuses as the compiler would
/// (`tests/crdgen/cases/compiled.rs`): each such case fails to compile at the line our refusal
/// names (kube-derive's "Unsupported shape" at the item below its derive), and each case refused
/// only because its meaning depends on the build compiles. One crate, one `cargo build`: each
/// case is a module of its own file.
#[test]
fn rustc_refuses_what_the_reader_refuses_as_the_compiler() {
    if crate::common::runs_elsewhere("crdgen_exact") {
        return;
    }
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let cases = crdgen_cases::compiled::refused();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("Cargo.toml"), harness_manifest("")).unwrap();
    std::fs::copy(repo.join("Cargo.lock"), root.join("Cargo.lock")).unwrap();
    let mut lib = String::new();
    for c in &cases {
        lib.push_str(&format!("pub mod {};\n", c.name));
        std::fs::write(
            root.join(format!("src/{}.rs", c.name)),
            format!("{}{}", crdgen_cases::HEAD, c.body),
        )
        .unwrap();
    }
    std::fs::write(root.join("src/lib.rs"), lib).unwrap();
    // `build`, not `check`: a check compiles every dependency again in check mode (metadata
    // only), where a build finds the workspace's compiled units; rustc stops at the same errors.
    // As a user's shell runs it: with the test process's CARGO_PKG_* and OUT_DIR, ring's build
    // script (it watches them) ran again and ring, rustls, kube's client and the runtime compiled
    // again, here and then in the workspace's next build.
    let out = crate::common::as_user(&mut std::process::Command::new(env!("CARGO")))
        .args(["build", "--quiet", "--message-format=short"])
        .current_dir(root)
        .env("CARGO_TARGET_DIR", repo.join("target/crdgen-exact"))
        .env("CARGO_BUILD_BUILD_DIR", workspace_build_dir())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains(": error")).collect();
    assert!(!out.status.success(), "the crate compiled:\n{stderr}");
    let mut wrong = Vec::new();
    for c in &cases {
        let (line, _) = crdgen_cases::pos(&c.body, c.marker);
        let file = format!("src/{}.rs:", c.name);
        let at: Vec<usize> = errors
            .iter()
            .filter_map(|e| e.strip_prefix(&file)?.split(':').next()?.parse().ok())
            .collect();
        match (c.rustc_refuses, at.as_slice()) {
            (true, []) => wrong.push(format!("{}: rustc accepts it", c.name)),
            (true, at) if !at.iter().any(|l| *l == line || *l == line + 1) => wrong.push(format!(
                "{}: rustc refuses it at lines {at:?}, we at line {line}",
                c.name
            )),
            (false, [_, ..]) => wrong.push(format!("{}: rustc refuses it", c.name)),
            _ => {}
        }
    }
    assert!(wrong.is_empty(), "{}\n{stderr}", wrong.join("\n"));
}

/// The harness's manifest ([`harness_manifest`]) resolves every crate to the units `cargo test
/// --workspace --all-features` built in the workspace's build directory: a build of it compiles
/// its own crate only. (An empty library: the `--exact` builds above add kube-derive's output.)
#[test]
fn the_harness_compiles_no_dependency_again() {
    if crate::common::runs_elsewhere("crdgen_exact") {
        return;
    }
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "").unwrap();
    std::fs::write(root.join("Cargo.toml"), harness_manifest("")).unwrap();
    std::fs::copy(repo.join("Cargo.lock"), root.join("Cargo.lock")).unwrap();
    let out = crate::common::as_user(&mut std::process::Command::new(env!("CARGO")))
        .args(["build", "--offline", "--message-format=json"])
        .current_dir(root)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env("CARGO_BUILD_BUILD_DIR", workspace_build_dir())
        .env_remove("CARGO_MANIFEST_DIR")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let compiled: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["fresh"] == false)
        .filter_map(|m| m["package_id"].as_str().map(str::to_owned))
        .filter(|id| !id.starts_with("path+"))
        .collect();
    assert!(
        compiled.is_empty(),
        "the harness compiled dependencies the workspace's build had not (other features?):\n{}",
        compiled.join("\n")
    );
}
