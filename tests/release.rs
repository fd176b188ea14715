//! What a release promises, checked: the scaffold this build writes is the one
//! `scaffold.fingerprint` names (the reference scenarios below, one per scaffolding command and
//! flavour, run by this build's binary); CHANGELOG.md's newest entry is Cargo.toml's version
//! and names that fingerprint and the runtime API's; the runtime's public API is what
//! `runtime/API.txt` lists, and nothing the previous release's listing (`runtime/api/`) had is
//! gone unless it was deprecated there.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use operator_rs::release::{self, api};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `OPERATOR_RS_UPDATE_API=1` writes the listings instead of failing (as INSTA_UPDATE does).
fn updating() -> bool {
    std::env::var_os("OPERATOR_RS_UPDATE_API").is_some_and(|v| v == "1")
}

// ---------------------------------------------------------------------------------------------
// The scaffold fingerprint.

/// The reference scenarios: two projects, each a folder of its own after `init` (with an owner
/// and the default license). `reference-operator` takes tests/common's reference project (own
/// kinds, deploy-image, a built-in kind, cluster-scoped, `--controller=false`; defaulting,
/// validation and conversion webhooks), then webhooks on a built-in kind, `edit api`,
/// `create api --from-crd`, `edit --namespaced` and `edit --multigroup` (then the multigroup
/// layout's own names: a kind of one name in a second group, deploy-image, with webhooks);
/// `variants-operator` takes the flavours the reference project does not (tests/snapshots.rs's
/// variants project).
fn scenarios() -> Vec<(&'static str, Vec<String>)> {
    let create = |verb: &str, lines: &[&str]| -> Vec<String> {
        lines.iter().map(|l| format!("create {verb} {l}")).collect()
    };
    let mut reference = create("api", REFERENCE_APIS);
    reference.extend(create("webhook", REFERENCE_WEBHOOKS));
    reference.extend(
        [
            "create webhook --group core --version v1 --kind ConfigMap --defaulting --programmatic-validation",
            "edit api --group webapp --version v2 --kind Guestbook --deprecated",
            "create api --group cert-manager.io --version v1 --kind Certificate --from-crd crds/certificates.yaml",
            "edit --namespaced",
            "edit --multigroup",
            "create api --group fleet --version v1 --kind Guestbook --image nginx:1.27",
            "create webhook --group fleet --version v1 --kind Guestbook --defaulting --programmatic-validation",
        ]
        .map(String::from),
    );
    let mut variants = create("api", VARIANT_APIS);
    variants.extend(create("webhook", VARIANT_WEBHOOKS));
    vec![
        ("reference-operator", reference),
        ("variants-operator", variants),
    ]
}

/// The files the scenarios write, by `/`-separated path below the folder holding both projects.
/// Pinned: the install source (an empty `CARGO_HOME`: the crates.io form), rustfmt's user
/// configuration (none), and the license year (`Copyright YEAR`); and the fingerprint itself, should a file record it (PROJECT), is read as
/// `sha256:FINGERPRINT`, so that recording it does not change it.
fn scenario_files() -> Vec<(String, Vec<u8>)> {
    let tmp = tempfile::Builder::new()
        .prefix("operator-rs-release-")
        .tempdir()
        .unwrap();
    let cargo_home = tmp.path().join("cargo-home");
    std::fs::create_dir(&cargo_home).unwrap();
    let projects = tmp.path().join("projects");
    // `edit api` lays out the attribute it changes with rustfmt: no user configuration of it.
    let config = tmp.path().join("config");
    std::fs::create_dir(&config).unwrap();
    let env = [
        ("CARGO_HOME", cargo_home.to_str().unwrap()),
        ("XDG_CONFIG_HOME", config.to_str().unwrap()),
    ];
    for (name, commands) in scenarios() {
        let dir = projects.join(name);
        std::fs::create_dir_all(dir.join("crds")).unwrap();
        std::fs::copy(
            repo().join("fixtures/external_crds/cert-manager.io_certificates.yaml"),
            dir.join("crds/certificates.yaml"),
        )
        .unwrap();
        let init = format!("init --domain example.com --repo github.com/acme/{name} --owner Acme");
        for line in std::iter::once(&init).chain(&commands) {
            let r = run_env(&dir, &words(line), &env);
            assert_eq!(
                r.code, 0,
                "reference scenario `operator-rs {line}` in {name} failed:\n{}{}",
                r.stdout, r.stderr
            );
        }
    }
    let year = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .year();
    snapshot(&projects)
        .into_iter()
        .map(|(path, bytes)| {
            let path = path
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            let bytes = match String::from_utf8(bytes) {
                Ok(mut text) => {
                    if path.ends_with("/README.md") {
                        text = text.replace(&format!("Copyright {year}"), "Copyright YEAR");
                    }
                    text.replace(release::scaffold_fingerprint(), "sha256:FINGERPRINT")
                        .into_bytes()
                }
                Err(e) => e.into_bytes(),
            };
            (path, bytes)
        })
        .collect()
}

fn scenario_fingerprint() -> String {
    let files = scenario_files();
    release::fingerprint_files(files.iter().map(|(p, b)| (p.as_str(), b.as_slice())))
}

#[test]
fn the_scaffold_is_the_one_scaffold_fingerprint_names() {
    // `edit api` writes what rustfmt lays out (and keeps the attribute as it is without it).
    if !Command::new("rustfmt")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("SKIPPED: rustfmt is not installed; `edit api` writes otherwise without it");
        return;
    }
    let started = std::time::Instant::now();
    let first = scenario_fingerprint();
    // Deterministic: a second run writes the same bytes.
    let second = scenario_fingerprint();
    assert_eq!(
        first, second,
        "the reference scenarios wrote different files twice: something in the scaffold varies by run (a time, a temp path)"
    );
    assert_eq!(
        release::scaffold_fingerprint(),
        first,
        "the scaffold changed: write {first} into scaffold.fingerprint, bump the version in \
         Cargo.toml (pre-1.0: minor for a breaking change), and add a CHANGELOG.md entry for it \
         with `Scaffold: {first}` (the version is written into the scaffold too, PROJECT's \
         cliVersion and the Makefile: once it is bumped, run this test again for the final \
         fingerprint)"
    );
    eprintln!(
        "the reference scenarios, twice: {:.1}s",
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn operator_rs_version_prints_the_fingerprint_and_the_version() {
    let dir = tempfile::tempdir().unwrap();
    let r = ok(dir.path(), &["version"]);
    assert!(
        r.stdout.contains(&format!(
            "scaffold:    {}\n",
            release::scaffold_fingerprint()
        )),
        "{}",
        r.stdout
    );
    let r = ok(dir.path(), &["--version"]);
    assert_eq!(
        r.stdout,
        format!("operator-rs {}\n", env!("CARGO_PKG_VERSION"))
    );
}

// ---------------------------------------------------------------------------------------------
// CHANGELOG.md.

/// One `## [<version>] - <date>` entry of CHANGELOG.md.
#[derive(Debug)]
struct Entry {
    version: String,
    scaffold: Option<String>,
    runtime_api: Option<String>,
}

fn changelog() -> Vec<Entry> {
    let text = std::fs::read_to_string(repo().join("CHANGELOG.md")).expect("CHANGELOG.md exists");
    let mut entries: Vec<Entry> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("## [") {
            let version = rest.split(']').next().unwrap().to_string();
            entries.push(Entry {
                version,
                scaffold: None,
                runtime_api: None,
            });
        } else if let Some(entry) = entries.last_mut() {
            if let Some(f) = line.strip_prefix("Scaffold: ") {
                assert!(
                    entry.scaffold.is_none(),
                    "{}: two Scaffold lines",
                    entry.version
                );
                entry.scaffold = Some(f.trim().to_string());
            } else if let Some(f) = line.strip_prefix("Runtime API: ") {
                assert!(
                    entry.runtime_api.is_none(),
                    "{}: two Runtime API lines",
                    entry.version
                );
                entry.runtime_api = Some(f.trim().to_string());
            }
        }
    }
    entries
}

fn is_fingerprint(f: &str) -> bool {
    f.strip_prefix("sha256:")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[test]
fn the_changelog_names_this_version_and_its_fingerprints() {
    let entries = changelog();
    let newest = entries
        .first()
        .expect("CHANGELOG.md has entries (`## [x.y.z] - date`)");
    let version = env!("CARGO_PKG_VERSION");
    let api_fingerprint = api::fingerprint(&current_api_file());
    assert_eq!(
        newest.version,
        version,
        "CHANGELOG.md's newest entry is {}, Cargo.toml's version {version}: add an entry `## [{version}] - <date>` \
         saying what changed and what a user must do, with `Scaffold: {}` and `Runtime API: {api_fingerprint}`",
        newest.version,
        release::scaffold_fingerprint()
    );
    assert_eq!(
        newest.scaffold.as_deref(),
        Some(release::scaffold_fingerprint()),
        "CHANGELOG.md's entry for {version} must say `Scaffold: {}` (scaffold.fingerprint)",
        release::scaffold_fingerprint()
    );
    assert_eq!(
        newest.runtime_api.as_deref(),
        Some(api_fingerprint.as_str()),
        "CHANGELOG.md's entry for {version} must say `Runtime API: {api_fingerprint}` (runtime/API.txt)"
    );
    // For users of the previous version, what they must do comes first.
    let text = std::fs::read_to_string(repo().join("CHANGELOG.md")).unwrap();
    let newest_text = text.split("\n## [").nth(1).unwrap_or_default();
    let first_section = newest_text.lines().find(|l| l.starts_with("### "));
    assert_eq!(
        first_section,
        Some("### What you must do"),
        "CHANGELOG.md's entry for {version}: its first section says what a user of the previous \
         version must do (`### What you must do`; `- Nothing.` when nothing)"
    );
    let mut versions = BTreeSet::new();
    let mut scaffolds = BTreeSet::new();
    for e in &entries {
        assert!(
            versions.insert(e.version.as_str()),
            "CHANGELOG.md has two entries for {}",
            e.version
        );
        semver::Version::parse(&e.version)
            .unwrap_or_else(|err| panic!("CHANGELOG.md: `{}` is not a version: {err}", e.version));
        for f in [&e.scaffold, &e.runtime_api].into_iter().flatten() {
            assert!(
                is_fingerprint(f) || f.starts_with("unrecorded"),
                "CHANGELOG.md, {}: `{f}` is not sha256:<64 hex digits>",
                e.version
            );
        }
        if let Some(s) = e.scaffold.as_deref().filter(|s| is_fingerprint(s)) {
            assert!(
                scaffolds.insert(s),
                "CHANGELOG.md: {} has the scaffold fingerprint of a newer entry, {s}: a release whose scaffold did not change needs no entry; one whose scaffold changed has a new fingerprint",
                e.version
            );
        }
    }
    // Newest first.
    let parsed: Vec<semver::Version> = entries
        .iter()
        .map(|e| semver::Version::parse(&e.version).unwrap())
        .collect();
    assert!(
        parsed.windows(2).all(|w| w[0] > w[1]),
        "CHANGELOG.md's entries are not newest first: {:?}",
        entries.iter().map(|e| &e.version).collect::<Vec<_>>()
    );
}

// ---------------------------------------------------------------------------------------------
// The runtime's public API.

fn current_api_file() -> String {
    std::fs::read_to_string(repo().join("runtime/API.txt")).unwrap_or_default()
}

const UPDATE_API: &str = "OPERATOR_RS_UPDATE_API=1 cargo test --test release runtime_api";

#[test]
fn runtime_api_is_the_one_api_txt_lists() {
    let listing = api::listing(&repo().join("runtime/src")).unwrap();
    let recorded = current_api_file();
    if listing != recorded && updating() {
        std::fs::write(repo().join("runtime/API.txt"), &listing).unwrap();
        return;
    }
    if listing != recorded {
        let diff = similar::TextDiff::from_lines(&recorded, &listing)
            .unified_diff()
            .header("runtime/API.txt", "runtime/src")
            .to_string();
        panic!(
            "the runtime's API changed: review runtime/API.txt ({UPDATE_API} writes it), bump the \
             version (pre-1.0: minor for a breaking change), and add a CHANGELOG.md entry with \
             `Runtime API: {}`:\n{diff}",
            api::fingerprint(&listing)
        );
    }
}

/// `runtime/api/<version>.txt`, by version.
fn released_listings() -> Vec<(semver::Version, PathBuf)> {
    let mut out: Vec<(semver::Version, PathBuf)> = std::fs::read_dir(repo().join("runtime/api"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let v = semver::Version::parse(p.file_stem()?.to_str()?).ok()?;
            Some((v, p))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn runtime_api_keeps_every_item_of_the_previous_release() {
    let current = semver::Version::parse(env!("CARGO_PKG_VERSION")).unwrap();
    // Every release CHANGELOG.md names before this version has its listing, the one its entry's
    // fingerprint names.
    for entry in changelog() {
        let version = semver::Version::parse(&entry.version).unwrap();
        if version >= current {
            continue;
        }
        let path = repo().join(format!("runtime/api/{version}.txt"));
        let listing = std::fs::read_to_string(&path).unwrap_or_else(|_| {
            panic!(
                "{} is missing: the runtime API listing of the release {version} (runtime/API.txt \
                 as that release had it)",
                path.display()
            )
        });
        assert_eq!(
            entry.runtime_api.as_deref(),
            Some(api::fingerprint(&listing).as_str()),
            "CHANGELOG.md's entry for {version} names another runtime API than {}",
            path.display()
        );
    }
    let Some((previous, path)) = released_listings()
        .into_iter()
        .rev()
        .find(|(v, _)| *v < current)
    else {
        panic!("runtime/api/ has no listing of a release before {current}");
    };
    let old = std::fs::read_to_string(&path).unwrap();
    let new = api::listing(&repo().join("runtime/src")).unwrap();
    let gone = api::removed(&old, &new);
    assert!(
        gone.is_empty(),
        "items of the runtime's API {previous} ({}) are gone without being kept: keep each under \
         its old name as a `#[deprecated(note = \"use ...\")]` alias (a type alias, a function \
         calling the new one, a trait with a blanket impl of the new trait), or, if it was \
         deprecated in {previous}, it may go:\n{}",
        path.display(),
        gone.join("\n")
    );
}

/// The commit the 0.1.0 listing is the API of: where the issue's users made their projects.
const V0_1_0: &str = "dea212f";

/// `folder` of the repository as the commit [`V0_1_0`] had it, in a temporary folder; `None`
/// (and a SKIPPED line) when this checkout lacks the commit.
fn at_0_1_0(folder: &str) -> Option<tempfile::TempDir> {
    let has = Command::new("git")
        .args(["cat-file", "-e", &format!("{V0_1_0}^{{commit}}")])
        .current_dir(repo())
        .status()
        .is_ok_and(|s| s.success());
    if !has {
        eprintln!("SKIPPED: commit {V0_1_0} is not in this checkout (shallow clone?)");
        return None;
    }
    let tmp = tempfile::tempdir().unwrap();
    let archive = Command::new("git")
        .args(["archive", "--format=tar", V0_1_0, folder])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(archive.status.success());
    let mut tar = Command::new("tar")
        .args(["-x", "-C", tmp.path().to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    tar.stdin
        .take()
        .unwrap()
        .write_all(&archive.stdout)
        .unwrap();
    assert!(tar.wait().unwrap().success());
    Some(tmp)
}

#[test]
fn runtime_api_of_0_1_0_is_the_api_of_its_commit() {
    let Some(tmp) = at_0_1_0("runtime/src") else {
        return;
    };
    let listing = api::listing(&tmp.path().join("runtime/src")).unwrap();
    let path = repo().join("runtime/api/0.1.0.txt");
    if updating() {
        std::fs::write(&path, &listing).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(&path).unwrap_or_default(),
        listing,
        "runtime/api/0.1.0.txt is not the API of {V0_1_0} ({UPDATE_API} writes it)"
    );
}

/// The runtime paths Rust text names: each `operator_rs_runtime::...` path, and each path of a
/// `use operator_rs_runtime::{...};` tree, without the crate's name.
fn runtime_paths(text: &str) -> BTreeSet<String> {
    const CRATE: &str = "operator_rs_runtime::";
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find(CRATE) {
        let tail = &rest[at + CRATE.len()..];
        let is_use = rest[..at].trim_end().ends_with("use");
        let end = if is_use {
            tail.find(';').unwrap_or(tail.len())
        } else {
            tail.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(tail.len())
        };
        let path = tail[..end].trim_end_matches(':');
        match syn::parse_str::<syn::UseTree>(path) {
            Ok(tree) => flatten(&tree, String::new(), &mut out),
            Err(_) => {
                out.insert(path.to_string());
            }
        }
        rest = &tail[end..];
    }
    out
}

fn flatten(tree: &syn::UseTree, prefix: String, out: &mut BTreeSet<String>) {
    let join = |name: &str| {
        if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}::{name}")
        }
    };
    match tree {
        syn::UseTree::Path(p) => flatten(&p.tree, join(&p.ident.to_string()), out),
        syn::UseTree::Name(n) if n.ident == "self" => {
            out.insert(prefix.clone());
        }
        syn::UseTree::Name(n) => {
            out.insert(join(&n.ident.to_string()));
        }
        syn::UseTree::Rename(r) => {
            out.insert(join(&r.ident.to_string()));
        }
        syn::UseTree::Glob(_) => {
            out.insert(prefix.clone());
        }
        syn::UseTree::Group(g) => {
            for t in &g.items {
                flatten(t, prefix.clone(), out);
            }
        }
    }
}

/// Every runtime path a project made by 0.1.0 names (its templates: main.rs, controllers,
/// webhooks, tests/e2e.rs and tests/integration.rs...) is one this runtime still has, kept or
/// deprecated: the project compiles against it (the methods it calls are checked by
/// [`runtime_api_keeps_every_item_of_the_previous_release`]).
#[test]
fn every_runtime_path_a_0_1_0_project_names_is_kept() {
    let Some(tmp) = at_0_1_0("templates") else {
        return;
    };
    let listing = api::listing(&repo().join("runtime/src")).unwrap();
    let paths: BTreeSet<&str> = listing
        .lines()
        .filter_map(|l| l.split(' ').next())
        .collect();
    let mut named = BTreeSet::new();
    for (file, bytes) in snapshot(&tmp.path().join("templates")) {
        for path in runtime_paths(&String::from_utf8_lossy(&bytes)) {
            named.insert((path, file.display().to_string()));
        }
    }
    assert!(
        named.len() > 20,
        "dea212f's templates name only {} runtime paths: {named:?}",
        named.len()
    );
    let gone: Vec<String> = named
        .iter()
        .filter(|(path, _)| !paths.contains(path.as_str()))
        .map(|(path, file)| format!("operator_rs_runtime::{path} (templates/{file})"))
        .collect();
    assert!(
        gone.is_empty(),
        "projects made by 0.1.0 name runtime items this runtime does not have: keep each under \
         its old name, deprecated:\n{}",
        gone.join("\n")
    );
}

#[test]
fn the_api_listing_names_what_users_call() {
    let listing = current_api_file();
    for line in [
        "webhook::Defaulter::apply_defaults ",
        "webhook::CustomDefaulter #[deprecated] trait CustomDefaulter<K>",
        "webhook::CustomDefaulter::default ",
        "manager::Manager ",
        "controller::Action use kube::runtime::controller::Action",
    ] {
        assert!(
            listing.lines().any(|l| l.starts_with(line)),
            "runtime/API.txt has no line starting `{line}`"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Code written against 0.1.0's runtime.

/// dea212f's webhook file (`create webhook --defaulting --programmatic-validation`), for a
/// ConfigMap: the code the issue's users have, written against `CustomDefaulter` and
/// `CustomValidator`.
fn webhook_file_of_0_1_0() -> Option<String> {
    let out = Command::new("git")
        .args([
            "show",
            &format!("{V0_1_0}:templates/webhook/src/webhooks/version/kind.rs.tera"),
        ])
        .current_dir(repo())
        .output()
        .unwrap();
    if !out.status.success() {
        return None;
    }
    let template = String::from_utf8(out.stdout).unwrap();
    // The front matter, then the variables (the template has no other tera syntax).
    let body = template.split_once("-#}\n").unwrap().1;
    Some(
        body.replace("{{ rust_type }}", "k8s_openapi::api::core::v1::ConfigMap")
            .replace("{{ kind }}", "ConfigMap")
            .replace("{{ api_version }}", "v1")
            .replace("{{ kind_snake }}", "config_map")
            .replace("{{ version }}", "v1"),
    )
}

/// Code written against this runtime beside it, as a project updated part-way has: impls of the
/// new traits for types of its own, which the blanket impls for the deprecated traits must not
/// conflict with.
const NEW_IMPLS: &str = r#"
pub mod new_style {
    use k8s_openapi::api::core::v1::ConfigMap;
    use operator_rs_runtime::webhook::{self, Rejection, Request, Warnings, Webhook};

    pub struct Defaulter;

    impl webhook::Defaulter<ConfigMap> for Defaulter {
        async fn apply_defaults(&self, _obj: &mut ConfigMap, _req: &Request) -> Result<(), Rejection> {
            Ok(())
        }
    }

    pub struct Validator;

    impl webhook::Validator<ConfigMap> for Validator {
        async fn validate_create(&self, _obj: &ConfigMap, _req: &Request) -> Result<Warnings, Rejection> {
            Ok(Vec::new())
        }
        async fn validate_update(&self, _old: &ConfigMap, _new: &ConfigMap, _req: &Request) -> Result<Warnings, Rejection> {
            Ok(Vec::new())
        }
        async fn validate_delete(&self, _obj: &ConfigMap, _req: &Request) -> Result<Warnings, Rejection> {
            Ok(Vec::new())
        }
    }

    pub fn webhooks() -> Vec<Webhook> {
        vec![
            Webhook::defaulting::<ConfigMap>(Defaulter),
            Webhook::validating::<ConfigMap>(Validator),
        ]
    }
}
"#;

/// Items of 0.1.0 kept under their old names since they became private or changed: used as
/// code written against 0.1.0 used them.
const OLD_CALLS: &str = r#"
use operator_rs_runtime::webhook::{install, local};

pub async fn old_calls(client: kube::Client, configurations: Vec<serde_json::Value>) {
    let _ = install::remove(&client, &configurations).await;
    let _ = install::ca_bundle("pem");
    let _ = local::LocalUrl::parse("https://127.0.0.1:9443").map(|u| u.bind_address());
    let _ = local::install;
    let _: Option<operator_rs_runtime::manager::RunFn> = None;
    let _ = operator_rs_runtime::manager::Shutdown::default();
}

/// 0.1.0's names that 0.2.0 renamed, and its public plumbing, now hidden from the docs.
pub fn old_names() {
    use operator_rs_runtime::controller::Reconcile;
    use operator_rs_runtime::manager::ControllerContext;
    use operator_rs_runtime::manager::health::Readiness;
    use operator_rs_runtime::manager::shutdown::{Shutdown, listen_for_signals};
    use operator_rs_runtime::webhook::certs::{CertificateAuthority, now};
    use operator_rs_runtime::webhook::tls::CertStore;

    let _: Option<Reconcile<()>> = None;
    let _ = ControllerContext::for_tests;
    let _ = Readiness::new().handle().is_ready();
    let _ = Shutdown::new().is_triggered();
    let _ = listen_for_signals;
    let _: Option<CertStore> = None;
    let _: Option<CertificateAuthority> = None;
    let _ = now();
    let _ = operator_rs_runtime::controller::strip::<k8s_openapi::api::core::v1::ConfigMap>;
    let _ = operator_rs_runtime::controller::error_policy::<k8s_openapi::api::core::v1::ConfigMap>;
    let _: Option<operator_rs_runtime::manager::LeaderConfig> = None;
    let _ = operator_rs_runtime::manager::telemetry::LogFormat::Json;
    let _ = operator_rs_runtime::manager::metrics::Metrics::new().encode();
    let _: Option<operator_rs_runtime::webhook::server::ServerError> = None;
    let _: Option<operator_rs_runtime::webhook::self_managed::SelfManagedError> = None;
    let _ = operator_rs_runtime::webhook::metrics::WebhookMetrics::register;
}
"#;

#[test]
fn code_written_against_0_1_0_builds_with_deprecation_warnings() {
    if runs_elsewhere("release_old_code") {
        return;
    }
    let Some(webhook) = webhook_file_of_0_1_0() else {
        eprintln!("SKIPPED: commit {V0_1_0} is not in this checkout (shallow clone?)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("old-code");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    // The dependencies as this workspace's tests build them (the same features), so that the
    // crates are those already built in the shared build directory.
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"old-code\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
             [dependencies]\n\
             operator-rs-runtime = {{ path = {:?}, features = [\"testing\"] }}\n\
             k8s-openapi = {{ version = \"0.29.0\", default-features = false, features = [\"std\", \"schemars\", \"v1_37\"] }}\n\
             kube = {{ version = \"5.0.0\", default-features = false, features = [\"derive\"] }}\n\
             serde_json = \"1\"\n",
            repo().join("runtime").display().to_string()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        format!("pub mod webhook;\n{OLD_CALLS}{NEW_IMPLS}"),
    )
    .unwrap();
    std::fs::write(dir.join("src/webhook.rs"), webhook).unwrap();
    let out = cargo_output(&dir, &["build", "--lib"], &[]);
    assert!(
        out.success,
        "code written against 0.1.0's runtime does not build against this one:\n{}",
        out.stderr
    );
    for (old, new) in [
        (
            "use of deprecated trait `operator_rs_runtime::webhook::CustomDefaulter`",
            "use webhook::Defaulter, whose method `default` is now `apply_defaults`",
        ),
        (
            "use of deprecated trait `operator_rs_runtime::webhook::CustomValidator`",
            "use webhook::Validator",
        ),
        (
            "use of deprecated function `operator_rs_runtime::webhook::install::remove`",
            "",
        ),
        (
            "use of deprecated function `operator_rs_runtime::webhook::local::install`",
            "",
        ),
        (
            "use of deprecated type alias `operator_rs_runtime::controller::Reconcile`",
            "use controller::ReconcileLoop (the same type, renamed)",
        ),
        (
            "use of deprecated type alias `operator_rs_runtime::manager::ControllerContext`",
            "use manager::Runtime (the same type, renamed)",
        ),
    ] {
        assert!(
            out.stderr.contains(&format!("{old}: {new}")),
            "no warning `{old}: {new}...` when building code written against 0.1.0:\n{}",
            out.stderr
        );
    }
}
