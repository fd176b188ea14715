//! `operator-rs import <kubebuilder project>`: reads the Go project ([`crate::import`]), lays
//! out the operator-rs project by replaying the commands that make it (`init`, `create api`,
//! `create webhook`, `edit api`) in a staging folder, so that PROJECT records them and `update`
//! replays them as for any project, then puts the translated types, controllers, webhook
//! markers and samples over the scaffolded ones, regenerates the manifests, and writes it all
//! into the target folder at once (nothing when anything is refused).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};

use crate::cli::ImportArgs;
use crate::import::{self, GoResource, Imported, report};
use crate::ops::{self, Existing, Plan};
use crate::workspace::DiskTree;

/// `operator-rs import`: makes an operator-rs project in `root` of the kubebuilder project
/// `args` names; `replay` runs the commands that lay the project out.
pub fn run(root: &Path, args: &ImportArgs, replay: Replay<'_>) -> Result<()> {
    let started = Instant::now();
    let imported = import::read(&args.source)?;
    if root.join(crate::project::FILE).exists() && !args.force {
        bail!(
            "{} is already an operator-rs project (it has a PROJECT file). Nothing was written.\n  \
             import into an empty folder: mkdir {} && operator-rs -C {} import {}",
            root.display(),
            imported.project.project_name,
            imported.project.project_name,
            args.source.display()
        );
    }
    let staging = staging_folder()?;
    let stage = staging.path().join(&imported.project.project_name);
    let mut imported = imported;
    crate::output::quietly(|| lay_out(&stage, &mut imported, replay))?;
    let files = collect(&stage)?;
    let disk = DiskTree::new(root);
    let changes = ops::finish(
        root,
        Plan {
            // A folder that is no project yet: every file in it is the user's.
            existing: Existing::User,
            force: args.force,
            // The translation's Rust is the user's `cargo build`'s to judge (IMPORT.md lists
            // what was not translated); the summary below says what was written.
            check_rust: false,
            print: false,
            ..Plan::tree(&disk, files, BTreeSet::new())
        },
    )?;
    let elapsed = started.elapsed();
    crate::errln!(
        "imported {} ({} file{}) in {:.2} s",
        args.source.display(),
        changes.len(),
        if changes.len() == 1 { "" } else { "s" },
        elapsed.as_secs_f64()
    );
    let lines = imported.report.lines();
    if lines.is_empty() {
        crate::errln!("everything was translated");
    } else {
        crate::errln!(
            "not translated ({} item{}, also in {}):",
            lines.len(),
            if lines.len() == 1 { "" } else { "s" },
            report::FILE
        );
        for l in lines {
            crate::errln!("  {l}");
        }
    }
    crate::errln!("\nNext: cargo build && cargo test, then port what IMPORT.md lists");
    Ok(())
}

/// A folder for the project as it is laid out, in memory where the system has a tmpfs
/// (`/dev/shm`): the replayed commands' durable writes (their journals are synced to disk) cost
/// nothing there, and only the final write into the target folder is durable.
fn staging_folder() -> Result<tempfile::TempDir> {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(dir) = tempfile::Builder::new()
            .prefix("operator-rs-import-")
            .tempdir_in(shm)
    {
        return Ok(dir);
    }
    tempfile::tempdir().context("making a staging folder")
}

/// Runs one command line of this tool (the words after `operator-rs -C <folder>`) on a folder,
/// as the dispatcher runs a command: `import` replays `init`, `create api`... through it, and
/// imports no other command.
pub type Replay<'a> = &'a dyn Fn(&Path, &[String]) -> Result<()>;

fn w(s: &[&str]) -> Vec<String> {
    s.iter().map(|s| s.to_string()).collect()
}

/// The project in `stage`: the commands that make it, then the translated files over them.
fn lay_out(stage: &Path, imported: &mut Imported, replay: Replay<'_>) -> Result<()> {
    // The commands record no scaffold as they run; PROJECT records it once, the digest of the
    // tree they made here: what `update`'s replay of them makes.
    crate::ops::scaffold_record::replaying(|| run_commands(stage, imported, replay))?;
    let mut project = crate::project::Project::load(stage)?;
    crate::ops::scaffold_record::stamp_made(stage, &mut project);
    translate(stage, imported, project, replay)
}

/// `init`, `create api` per kind version, `edit api --storage`, `create webhook`, in `stage`.
fn run_commands(stage: &Path, imported: &mut Imported, replay: Replay<'_>) -> Result<()> {
    let p = imported.project.clone();
    let mut init = w(&[
        "init",
        "--domain",
        &p.domain,
        "--project-name",
        &p.project_name,
    ]);
    if !p.repo.is_empty() {
        init.extend(w(&["--repo", &p.repo]));
    }
    if p.namespaced {
        init.push("--namespaced".into());
    }
    if p.multigroup {
        init.push("--multigroup".into());
    }
    replay(stage, &init)?;

    let project_file = PathBuf::from("PROJECT");
    let line_of = |r: &GoResource| {
        let text = std::fs::read_to_string(imported.source.join("PROJECT")).unwrap_or_default();
        let needle = format!("kind: {}", r.kind);
        text.lines()
            .position(|l| l.trim() == needle)
            .map(|i| i + 1)
            .unwrap_or(1)
    };
    // The kinds, each version in PROJECT's order.
    for r in &p.resources {
        let at = import::go::At {
            file: project_file.clone(),
            line: line_of(r),
            col: 1,
        };
        if r.external {
            imported.report.add(
                &at,
                format!("the external kind {} {}/{}", r.kind, r.group, r.version),
                format!(
                    "not imported: its Go types are in {}; add it with `operator-rs create api --group {} --version {} --kind {} --external-api-domain {} --external-api-path <crate>::<path>::{} --external-api-crate <crate>@<version>` (README: Kinds this project does not own), or `--from-crd <its CRD file>`",
                    r.module.as_deref().unwrap_or(&r.path),
                    r.group,
                    r.version,
                    r.kind,
                    r.domain,
                    r.kind
                ),
            );
            continue;
        }
        if r.owns_api() {
            if !r.domain.is_empty() && r.domain != p.domain {
                imported.report.add(
                    &at,
                    format!("the domain {} of {}", r.domain, r.kind),
                    format!("operator-rs qualifies every group with the project's domain {}: the group is {}.{}", p.domain, r.group, p.domain),
                );
            }
            let mut c = w(&[
                "create",
                "api",
                "--group",
                &r.group,
                "--version",
                &r.version,
                "--kind",
                &r.kind,
                "--plural",
                &r.plural(),
            ]);
            if !r.api.as_ref().is_some_and(|a| a.namespaced) {
                c.push("--namespaced=false".into());
            }
            if !r.has_controller() {
                c.push("--controller=false".into());
            }
            replay(stage, &c)?;
        } else if r.core && r.has_controller() {
            replay(
                stage,
                &w(&[
                    "create",
                    "api",
                    "--group",
                    &r.group,
                    "--version",
                    &r.version,
                    "--kind",
                    &r.kind,
                    "--resource=false",
                ]),
            )?;
        }
    }
    // The stored version of a kind with several, where it is not the first.
    for ((group, kind), version) in &imported.storage {
        let first = p
            .resources
            .iter()
            .find(|r| r.owns_api() && &r.group == group && &r.kind == kind)
            .map(|r| r.version.clone());
        if first.as_deref() != Some(version.as_str()) {
            replay(
                stage,
                &w(&[
                    "edit",
                    "api",
                    "--group",
                    group,
                    "--version",
                    version,
                    "--kind",
                    kind,
                    "--storage",
                ]),
            )?;
        }
    }
    // Webhooks.
    for r in &p.resources {
        let Some(hooks) = &r.webhooks else { continue };
        if r.external {
            continue;
        }
        let mut c = w(&[
            "create",
            "webhook",
            "--group",
            &r.group,
            "--version",
            &r.version,
            "--kind",
            &r.kind,
        ]);
        if hooks.defaulting {
            c.push("--defaulting".into());
        }
        if hooks.validation {
            c.push("--programmatic-validation".into());
        }
        if hooks.conversion {
            c.push("--conversion".into());
            if !hooks.spoke.is_empty() {
                c.extend(w(&["--spoke", &hooks.spoke.join(",")]));
            }
        }
        // Some webhook asked for, beyond the 8 words that name the kind.
        if c.len() > 8 {
            replay(stage, &c)?;
        }
    }

    Ok(())
}

/// The translated files over the scaffolded ones in `stage`, `project` (stamped) with the CRD
/// options, and the manifests generated.
fn translate(
    stage: &Path,
    imported: &mut Imported,
    mut project: crate::project::Project,
    replay: Replay<'_>,
) -> Result<()> {
    let p = imported.project.clone();
    // The CRDs as controller-gen wrote them for the Go project (PROJECT's `crd:` options).
    project.crd.controller_gen = true;
    project.crd.max_desc_len = imported.max_desc_len;
    let previous = std::fs::read_to_string(stage.join(crate::project::FILE))?;
    std::fs::write(
        stage.join(crate::project::FILE),
        project.render_over(Some(&previous))?,
    )?;

    // The translated files over the scaffolded ones, where the project's layout puts them.
    let layout = p.layout();
    let mut put: BTreeMap<PathBuf, String> = BTreeMap::new();
    for (index, _, text) in &imported.kinds {
        let r = p.as_resource(&p.resources[*index]);
        put.insert(PathBuf::from(layout.api_file(&r)), text.clone());
    }
    // Each stub over the kind's scaffolded controller, or in a module of its own, declared and
    // registered at the scaffold's markers.
    let current = |rel: &str, put: &BTreeMap<PathBuf, String>| -> String {
        match put.get(Path::new(rel)) {
            Some(t) => t.clone(),
            None => std::fs::read_to_string(stage.join(rel)).unwrap_or_default(),
        }
    };
    for stub in &imported.controllers {
        let place = &stub.place;
        if let Some(parent) = &place.declared_in
            && !stage.join(&place.file).exists()
        {
            let what = match stub.resource {
                Some(_) => format!("The {} controller (imported).", stub.name),
                None => format!(
                    "The RBAC of the Go {} controller (its kind is not imported).",
                    stub.name
                ),
            };
            let text = current(parent, &put);
            let all = "src/controllers/mod.rs";
            if !text.is_empty() && !current(all, &put).is_empty() {
                let module = &place.module;
                let text = text.replace(
                    "// +operator-rs:scaffold:modules",
                    &format!("// {what}\npub mod {module};\n// +operator-rs:scaffold:modules"),
                );
                put.insert(PathBuf::from(parent), text);
                if let Some(path) = &place.registered_as {
                    let text = current(all, &put).replace(
                        "        // +operator-rs:scaffold:controllers",
                        &format!("        {path}::registration(),\n        // +operator-rs:scaffold:controllers"),
                    );
                    put.insert(PathBuf::from(all), text);
                }
            }
        }
        put.insert(PathBuf::from(&place.file), stub.text.clone());
    }
    for (rel, text) in webhook_wiring(stage, imported)? {
        put.insert(rel, text);
    }
    for (rel, text) in &imported.samples {
        let text = match sample_with_a_spec(text) {
            Some((filled, line)) => {
                imported.report.add(
                    &import::go::At { file: rel.clone(), line, col: 1 },
                    "a sample with an empty `spec:` (null)",
                    "written as `spec: {}`: the API server refuses a null spec where the CRD requires one (the Go project's CRD too); fill in the fields your kind needs",
                );
                filled
            }
            None => text.clone(),
        };
        put.insert(rel.clone(), text);
    }
    for (rel, text) in webhook_tests_with_samples(stage, &p, &imported.samples)? {
        put.insert(rel, text);
    }
    // A spoke whose Go conversion maps fields converts through JSON until it is ported: its
    // round-trip tests are ignored, saying what to port (IMPORT.md lists it).
    for (rel, at) in &imported.conversion_logic {
        let rel = PathBuf::from(rel);
        let text = match put.get(&rel) {
            Some(t) => t.clone(),
            None => match std::fs::read_to_string(stage.join(&rel)) {
                Ok(t) => t,
                Err(_) => continue,
            },
        };
        let ignore = format!(
            "    #[ignore = \"the Go conversion ({at}) maps fields: port it to to_hub/from_hub, then remove this\"]\n"
        );
        let mut ignored = text.clone();
        for test in [
            "    fn round_trips_through_the_hub()",
            "    async fn answers_a_conversion_review()",
        ] {
            ignored = ignored.replacen(test, &format!("{ignore}{test}"), 1);
        }
        put.insert(rel, ignored);
    }
    // The scaffolded integration tests wait for each kind's status to report its generation,
    // which the imported controllers (stubs) never write: they wait for the controller's
    // finalizer instead, until `apply` is ported.
    let tests = PathBuf::from("tests/integration.rs");
    if let Ok(text) = std::fs::read_to_string(stage.join(&tests)) {
        put.insert(tests, integration_tests_of_stubs(&text)?);
    }
    // The Go project's config/ files the operator-rs layout has no counterpart of.
    for rel in config_files(&imported.source.join("config"), Path::new("config")) {
        if !stage.join(&rel).exists() && !put.contains_key(&rel) {
            imported.report.add(
                &import::go::At { file: rel.clone(), line: 1, col: 1 },
                "a config/ file of the Go project",
                "not carried over: operator-rs's config/ has no such file; copy it, and add it to its kustomization.yaml, if the deployment needs it",
            );
        }
    }
    put.insert(
        PathBuf::from(report::FILE),
        imported
            .report
            .markdown(&imported.source.display().to_string()),
    );
    for (rel, text) in &put {
        let full = stage.join(rel);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&full, text).with_context(|| format!("writing {}", full.display()))?;
    }
    replace_scaffolded_samples(stage, &imported.samples)?;
    // The translated Rust as rustfmt lays it out (the project's `cargo fmt --check` holds), by
    // one rustfmt for all files (one per file was most of the import's time); as written when
    // rustfmt is not installed.
    let rust: Vec<&PathBuf> = put
        .keys()
        .filter(|rel| rel.extension().is_some_and(|e| e == "rs"))
        .collect();
    crate::syntax::kube_attr::rustfmt_files(stage, &rust);
    replay(stage, &w(&["generate", "manifests"])).map_err(|e| {
        anyhow!(
            "{}\n  (in the project the import made from {}: report this as a bug of operator-rs import)",
            crate::output::error_text(&e).replace(&format!("{}/", stage.display()), ""),
            imported.source.display()
        )
    })?;
    Ok(())
}

/// A sample's text with `spec: {}` for a `spec:` that holds nothing but comments (kubebuilder's
/// `spec:\n  # TODO(user): Add fields here`), and that line; None when its spec has a value.
fn sample_with_a_spec(text: &str) -> Option<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| l.trim_end() == "spec:")?;
    let empty = lines[at + 1..]
        .iter()
        .take_while(|l| !l.starts_with("---"))
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
    if !empty {
        return None;
    }
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    out[at] = "spec: {}".into();
    let mut text = out.join("\n");
    text.push('\n');
    Some((text, at + 1))
}

/// The Go project's samples in place of those `create api` scaffolded for the same kind version
/// under another name (`batch_v1_cron_job.yaml` beside Go's `batch_v1_cronjob.yaml`): the
/// scaffold's is removed and config/samples/kustomization.yaml names the Go one, so each kind
/// version has one sample (the one the tests read).
fn replace_scaffolded_samples(stage: &Path, samples: &[(PathBuf, String)]) -> Result<()> {
    let kind_of = |text: &str| -> Option<(String, String)> {
        let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(text).ok()?;
        let d = docs.into_iter().find(|d| d["kind"].is_string())?;
        Some((
            d["apiVersion"].as_str()?.to_string(),
            d["kind"].as_str()?.to_string(),
        ))
    };
    let dir = stage.join("config/samples");
    let kustomization = dir.join("kustomization.yaml");
    let mut listing = std::fs::read_to_string(&kustomization).unwrap_or_default();
    for (rel, text) in samples {
        let (Some(go_kind), Some(go_name)) = (kind_of(text), rel.file_name()) else {
            continue;
        };
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(());
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let shown = name.to_string_lossy().into_owned();
            if name == go_name || shown == "kustomization.yaml" || !shown.ends_with(".yaml") {
                continue;
            }
            let theirs = std::fs::read_to_string(e.path()).unwrap_or_default();
            if kind_of(&theirs).as_ref() == Some(&go_kind)
                && !samples.iter().any(|(r, _)| r.file_name() == Some(&name))
            {
                std::fs::remove_file(e.path())?;
                listing = listing.replace(
                    &format!("- {shown}\n"),
                    &format!("- {}\n", go_name.to_string_lossy()),
                );
            }
        }
    }
    if kustomization.exists() {
        std::fs::write(&kustomization, listing)?;
    }
    Ok(())
}

/// The scaffolded webhook tests of each kind (`src/webhooks/**/<kind>.rs`, the conversion's
/// `<kind>_conversion.rs`) review an object whose spec is `{}`, which an imported spec with
/// required fields does not deserialize from: they review the spec of the kind version's sample
/// (config/samples) instead, where it has one. A test's kind is its `use <type> as Kind;`, the
/// type of the sample's group, version and kind where the project's layout puts it.
fn webhook_tests_with_samples(
    stage: &Path,
    project: &import::GoProjectFile,
    samples: &[(PathBuf, String)],
) -> Result<Vec<(PathBuf, String)>> {
    const EMPTY: &str = "\"spec\": {},";
    let layout = project.layout();
    let mut specs: Vec<(String, serde_json::Value)> = Vec::new();
    for (_, text) in samples {
        let docs: Vec<serde_json::Value> = serde_saphyr::from_multiple(text).unwrap_or_default();
        for d in docs {
            let (Some(api_version), Some(kind)) = (d["apiVersion"].as_str(), d["kind"].as_str())
            else {
                continue;
            };
            let Some(r) = (project.resources.iter())
                .filter(|r| r.owns_api() && r.kind == kind)
                .map(|r| project.as_resource(r))
                .find(|r| r.api_version() == api_version)
            else {
                continue;
            };
            let spec = &d["spec"];
            // A spec json! takes as it is (no `\u` escapes, which Rust writes otherwise).
            let json = spec.to_string();
            if spec.as_object().is_some_and(|s| !s.is_empty()) && !json.contains("\\u") {
                let used = format!("use {} as Kind;", layout.api_type(&r));
                specs.push((used, spec.clone()));
            }
        }
    }
    let mut out = Vec::new();
    for rel in config_files(&stage.join("src/webhooks"), Path::new("src/webhooks")) {
        let Ok(text) = std::fs::read_to_string(stage.join(&rel)) else {
            continue;
        };
        let found = specs.iter().find(|(used, _)| text.contains(used.as_str()));
        if let Some((_, spec)) = found
            && text.contains(EMPTY)
        {
            let spec = serde_json::to_string_pretty(spec)?;
            let spec = spec.replace('\n', "\n            ");
            out.push((rel, text.replacen(EMPTY, &format!("\"spec\": {spec},"), 1)));
        }
    }
    Ok(out)
}

/// The scaffold's integration helpers waited on `status.observedGeneration`; an imported
/// project's wait until the controller took the object in (its finalizer is on it).
fn integration_tests_of_stubs(text: &str) -> Result<String> {
    const RECONCILED: &str =
        "/// Creates `obj` (in a namespace of its own) and waits until it is reconciled.
async fn create_reconciled<K: Object>(obj: &K) -> anyhow::Result<K> {
    Ok(operator()?.create_reconciled(obj).await?)
}";
    const TAKEN_IN: &str = "/// Creates `obj` (in a namespace of its own) and waits until its controller took it in (its
/// finalizer is on it). The controllers `operator-rs import` made reconcile nothing yet, so no
/// status reports the generation it reconciled: once a controller's `apply` writes
/// `status.observedGeneration`, wait for that again, `operator()?.create_reconciled(obj)`.
async fn create_reconciled<K: Object>(obj: &K) -> anyhow::Result<K> {
    Ok(operator()?.create_until(obj, \"taken in\", taken_in).await?)
}

/// Whether the object is there with a finalizer on it.
fn taken_in<K: Object>(obj: Option<&K>) -> bool {
    use kube::ResourceExt;
    obj.is_some_and(|o| !o.finalizers().is_empty())
}";
    const NS_DELETION: &str =
        "async fn namespace_deletion<K: Object>(obj: &K) -> anyhow::Result<()> {
    Ok(operator()?.namespace_deletion(obj).await?)
}";
    const NS_DELETION_TAKEN_IN: &str =
        "async fn namespace_deletion<K: Object>(obj: &K) -> anyhow::Result<()> {
    Ok(operator()?.namespace_deletion_until(obj, \"taken in\", taken_in).await?)
}";
    if !text.contains(RECONCILED) || !text.contains(NS_DELETION) {
        bail!(
            "tests/integration.rs: the scaffold's create_reconciled/namespace_deletion helpers are not as import knows them (report this as a bug of operator-rs import)"
        );
    }
    Ok(text
        .replace(RECONCILED, TAKEN_IN)
        .replace(NS_DELETION, NS_DELETION_TAKEN_IN))
}

/// `src/webhooks/mod.rs` with the Go project's `+kubebuilder:webhook` markers in place of the
/// scaffolded ones (same kind, version and kind of webhook), and each webhook served at the Go
/// marker's path where it is not kubebuilder's default.
fn webhook_wiring(stage: &Path, imported: &Imported) -> Result<Vec<(PathBuf, String)>> {
    let rel = PathBuf::from("src/webhooks/mod.rs");
    let Ok(text) = std::fs::read_to_string(stage.join(&rel)) else {
        return Ok(Vec::new());
    };
    let key = |marker: &str| {
        let args = import::markers::args(marker.trim_start_matches("kubebuilder:webhook:"));
        let get = |k: &str| {
            args.iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        (
            get("groups"),
            get("resources"),
            get("versions"),
            get("mutating"),
            get("path"),
        )
    };
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        let Some(marker) = trimmed.strip_prefix("// +") else {
            out.push(line.to_string());
            continue;
        };
        if !marker.starts_with("kubebuilder:webhook:") {
            out.push(line.to_string());
            continue;
        }
        let indent = &line[..line.len() - trimmed.len()];
        let (g, r, v, m, path) = key(marker);
        let go = imported.webhook_markers.iter().find(|gm| {
            let (gg, gr, gv, gmut, _) = key(&gm.text);
            gg == g && gr == r && gv == v && gmut == m
        });
        match go {
            Some(gm) => {
                out.push(format!("{indent}// +{}", gm.text));
                let go_path = key(&gm.text).4;
                if go_path != path
                    && let Some(next) = lines.next()
                {
                    let call = next.trim_end().trim_end_matches(',');
                    out.push(format!("{call}.at_path({go_path:?}),"));
                }
            }
            None => out.push(line.to_string()),
        }
    }
    let mut new = out.join("\n");
    new.push('\n');
    Ok(vec![(rel, new)])
}

/// Every file under `dir`, as `rel`-prefixed relative paths.
fn config_files(dir: &Path, rel: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let path = rel.join(e.file_name());
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(config_files(&e.path(), &path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Every file of the staged project, relative to it.
fn collect(stage: &Path) -> Result<BTreeMap<PathBuf, String>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(stage.join(&dir))? {
            let e = e?;
            let rel = dir.join(e.file_name());
            if e.file_type()?.is_dir() {
                stack.push(rel);
            } else if rel.file_name().is_some_and(|n| n == ".operator-rs.lock") {
                continue;
            } else {
                let text = std::fs::read_to_string(e.path())
                    .with_context(|| format!("reading {}", e.path().display()))?;
                files.insert(rel, text);
            }
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kubebuilder's samples leave `spec:` empty (null), which the API server refuses where the
    /// CRD requires a spec; a spec with a value is kept as written.
    #[test]
    fn an_empty_sample_spec_becomes_an_empty_object() {
        let go = "apiVersion: crew.testproject.org/v1\nkind: Admiral\nmetadata:\n  name: admiral-sample\nspec:\n  # TODO(user): Add fields here\n";
        let (text, line) = sample_with_a_spec(go).expect("an empty spec");
        assert_eq!(line, 5);
        assert_eq!(text, go.replace("spec:\n", "spec: {}\n"));
        let full = "kind: A\nspec:\n  # the size\n  size: 1\n";
        assert_eq!(sample_with_a_spec(full), None);
        assert_eq!(sample_with_a_spec("kind: A\n"), None);
    }
}
