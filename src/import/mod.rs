//! `operator-rs import`'s reading of a kubebuilder go/v4 project: its PROJECT file, its API
//! packages (`api/<version>/`, `api/<group>/<version>/` in a multigroup project), its
//! controllers (`internal/controller/[<group>/]`) and webhooks
//! (`internal/webhook/[<group>/]<version>/`), read with tree-sitter's Go grammar ([`go`]), the
//! types translated to Rust ([`types`], [`markers`]), controllers to compiling stubs ([`controllers`]),
//! and what is left to the user listed with its Go file:line ([`report`]). This module only
//! reads and translates; `commands::import` lays the project out and writes it.

pub mod controllers;
pub mod go;
pub mod markers;
pub mod report;
pub mod types;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::project::Resource;
use crate::project::layout::{EXTERNAL_MODULE, Layout};
use report::Report;

/// kubebuilder's PROJECT file, as far as the import reads it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoProjectFile {
    #[serde(default)]
    pub domain: String,
    #[serde(default)]
    pub repo: String,
    #[serde(default)]
    pub project_name: String,
    #[serde(default)]
    pub layout: Vec<String>,
    #[serde(default)]
    pub multigroup: bool,
    #[serde(default)]
    pub namespaced: bool,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub resources: Vec<GoResource>,
    /// kubebuilder's optional plugins (`deploy-image.go.kubebuilder.io/v1-alpha`, `helm...`) and
    /// their settings: each goes to the report ([`report_plugins`]).
    #[serde(default)]
    pub plugins: BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoResource {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub domain: String,
    pub version: String,
    pub kind: String,
    #[serde(default)]
    pub plural: Option<String>,
    #[serde(default)]
    pub api: Option<GoApi>,
    #[serde(default)]
    pub controller: bool,
    /// Several controllers of one kind (`controllers: [{name: captain}, {name: captain-backup}]`).
    #[serde(default)]
    pub controllers: Vec<serde::de::IgnoredAny>,
    #[serde(default)]
    pub external: bool,
    #[serde(default)]
    pub core: bool,
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub module: Option<String>,
    #[serde(default)]
    pub webhooks: Option<GoWebhooks>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoApi {
    #[serde(default)]
    pub namespaced: bool,
    /// Apply configurations generated for the kind (`create api --ssa`), which the report lists.
    #[serde(default)]
    pub ssa: bool,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GoWebhooks {
    #[serde(default)]
    pub defaulting: bool,
    #[serde(default)]
    pub validation: bool,
    #[serde(default)]
    pub conversion: bool,
    #[serde(default)]
    pub spoke: Vec<String>,
}

impl GoResource {
    /// Whether the project owns the kind's CRD (its API types are in this project).
    pub fn owns_api(&self) -> bool {
        self.api.is_some() && !self.external && !self.core
    }

    /// The kind's plural as kubebuilder derives it when PROJECT has none.
    pub fn plural(&self) -> String {
        self.plural
            .clone()
            .unwrap_or_else(|| crate::names::default_plural(&self.kind))
    }

    pub fn has_controller(&self) -> bool {
        self.controller || !self.controllers.is_empty()
    }

    /// The group with its domain (`crew.testproject.org`); a core group as it is.
    pub fn qualified_group(&self) -> String {
        if self.domain.is_empty() || self.core {
            self.group.clone()
        } else {
            crate::names::qualified_group(&self.group, &self.domain)
        }
    }
}

impl GoProjectFile {
    /// The operator-rs layout the project is imported into: the multigroup one
    /// (`src/api/<group>/<version>/`...) where PROJECT says `multigroup: true`, as kubebuilder's
    /// `api/<group>/<version>/`.
    pub fn layout(&self) -> Layout {
        Layout {
            multigroup: self.multigroup,
        }
    }

    /// `r` as the imported project's PROJECT records it, as far as its paths go ([`Layout`]):
    /// its group qualified with the project's domain (operator-rs has one), a built-in or
    /// external kind's with its own.
    pub fn as_resource(&self, r: &GoResource) -> Resource {
        let domain = match () {
            _ if r.core => "",
            _ if r.external => &r.domain,
            _ => &self.domain,
        };
        Resource {
            controller: r.has_controller(),
            core: r.core,
            external: r.external,
            ..Resource::new(&r.group, domain, &r.version, &r.kind, r.plural())
        }
    }

    /// The line of `field` (`group: crew`, `ssa: true`) in the entry of `r` under PROJECT's
    /// `resources:` (the `resources:` line when not found).
    fn entry_line(&self, text: &str, r: &GoResource, field: &str) -> usize {
        let lines: Vec<&str> = text.lines().collect();
        let first = lines
            .iter()
            .position(|l| l.trim_end() == "resources:")
            .unwrap_or(0);
        let line = |l: &str| l.trim_start_matches("- ").trim().to_string();
        let (kind, version) = (
            format!("kind: {}", r.kind),
            format!("version: {}", r.version),
        );
        // Each entry: from its `- ` line to the next one, or to the end of the list.
        let mut start = first + 1;
        while start < lines.len() && lines[start].starts_with("- ") {
            let end = (start + 1..lines.len())
                .find(|&j| !lines[j].starts_with(' '))
                .unwrap_or(lines.len());
            let entry = &lines[start..end];
            if entry.iter().any(|l| line(l) == kind)
                && entry.iter().any(|l| line(l) == version)
                && let Some(at) = entry.iter().position(|l| line(l) == field)
            {
                return start + at + 1;
            }
            start = end;
        }
        first + 1
    }
}

/// A kubebuilder project, read and translated.
#[derive(Debug)]
pub struct Imported {
    pub source: PathBuf,
    pub project: GoProjectFile,
    /// The Rust module of each kind version the project owns: (resource index, module name, text).
    pub kinds: Vec<(usize, String, String)>,
    pub controllers: Vec<controllers::Stub>,
    /// The `+kubebuilder:webhook` markers of the Go webhooks, each with its Go place.
    pub webhook_markers: Vec<go::Marker>,
    /// Sample files (config/samples/*.yaml): path relative to the project, text.
    pub samples: Vec<(PathBuf, String)>,
    /// The storage version of each kind with several versions (kind -> version).
    pub storage: BTreeMap<(String, String), String>,
    /// controller-gen's `crd:maxDescLen=N` of the Makefile's `manifests` target.
    pub max_desc_len: Option<usize>,
    /// The spokes whose Go `ConvertTo`/`ConvertFrom` map fields, by their Rust conversion file
    /// (`src/webhooks/[<group>/]<version>/<kind>_conversion.rs`): it (through JSON) cannot pass
    /// its round trip until that logic is ported.
    pub conversion_logic: Vec<(String, go::At)>,
    pub report: Report,
}

/// The layouts the import reads.
pub const LAYOUTS: &[&str] = &["go.kubebuilder.io/v4"];

/// Reads the kubebuilder project at `source`; refuses what it cannot import, naming the file
/// (and line) and what to do, before anything is written.
pub fn read(source: &Path) -> Result<Imported> {
    let project_path = source.join("PROJECT");
    let text = match std::fs::read_to_string(&project_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "{}: not a kubebuilder project (it has no PROJECT file)\n  \
             import reads a project made by `kubebuilder init` (go/v4 layout), e.g. operator-rs import ../memcached-operator",
            source.display()
        ),
        Err(e) => return Err(e).with_context(|| format!("reading {}", project_path.display())),
    };
    let project: GoProjectFile = serde_saphyr::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}: not a kubebuilder PROJECT file: {e}\n  the file kubebuilder writes starts with `domain:`, `layout:` and `projectName:`",
            project_path.display()
        )
    })?;
    if project.version != "3" {
        bail!(
            "{}:1:1: PROJECT version {:?} is not supported: import reads the version 3 PROJECT of kubebuilder 3 and 4 (`version: \"3\"`)\n  \
             migrate the project with kubebuilder (`kubebuilder alpha generate`) first",
            project_path.display(),
            project.version
        );
    }
    let line_of = |needle: &str| {
        text.lines()
            .position(|l| l.contains(needle))
            .map(|i| i + 1)
            .unwrap_or(1)
    };
    let supported: Vec<&String> = project
        .layout
        .iter()
        .filter(|l| l.starts_with("go.kubebuilder.io/"))
        .collect();
    match supported.first() {
        Some(l) if LAYOUTS.contains(&l.as_str()) => {}
        Some(l) => bail!(
            "{}:{}:1: the layout {l} is not supported: import reads {} projects\n  \
             move the project to go/v4 first (kubebuilder's migration guide: `kubebuilder alpha generate`)",
            project_path.display(),
            line_of(l),
            LAYOUTS.join(", ")
        ),
        None => bail!(
            "{}:{}:1: the layout {:?} is not a kubebuilder Go layout: import reads {} projects",
            project_path.display(),
            line_of("layout"),
            project.layout,
            LAYOUTS.join(", ")
        ),
    }
    if project.multigroup {
        refuse_groups_without_a_module(&project, &text, &project_path)?;
    }
    let mut report = Report::default();
    for (i, other) in project.layout.iter().enumerate() {
        if !LAYOUTS.contains(&other.as_str()) {
            report.add(
                &go::At {
                    file: "PROJECT".into(),
                    line: line_of(other),
                    col: 1,
                },
                format!("the plugin {other}"),
                "its scaffolding is not imported (operator-rs has no such plugin); port what it made by hand",
            );
            let _ = i;
        }
    }

    report_plugins(&project, &text, &mut report);
    for r in (project.resources.iter()).filter(|r| r.api.as_ref().is_some_and(|a| a.ssa)) {
        report.add(
            &go::At {
                file: "PROJECT".into(),
                line: project.entry_line(&text, r, "ssa: true"),
                col: 5,
            },
            format!("the apply configurations of {} {}/{} (ssa: true)", r.kind, r.group, r.version),
            "not generated: server-side apply takes the Rust types as they are (kube's `Api::patch` with `Patch::Apply`); port the Go code that builds apply configurations to them",
        );
    }

    // The API packages, one per version directory (`api/<version>`, or `path` under the repo).
    let mut packages: BTreeMap<PathBuf, types::Package> = BTreeMap::new();
    for r in project.resources.iter().filter(|r| r.owns_api()) {
        let dir = api_dir(&project, r);
        if packages.contains_key(&dir) {
            continue;
        }
        packages.insert(dir.clone(), read_package(source, &dir)?);
    }

    let mut kinds = Vec::new();
    let mut declared: BTreeMap<PathBuf, BTreeMap<String, std::collections::BTreeSet<String>>> =
        BTreeMap::new();
    let mut storage = BTreeMap::new();
    for r in project.resources.iter().filter(|r| r.owns_api()) {
        let versions: Vec<&GoResource> = project
            .resources
            .iter()
            .filter(|o| o.owns_api() && o.kind == r.kind && o.group == r.group)
            .collect();
        if versions.len() > 1 {
            let stored = versions.iter().find(|v| {
                let pkg = &packages[&api_dir(&project, v)];
                pkg.files.iter().any(|f| {
                    f.types.iter().any(|t| {
                        t.name == v.kind
                            && t.comments
                                .markers
                                .iter()
                                .any(|m| m.text == "kubebuilder:storageversion")
                    })
                })
            });
            if let Some(s) = stored {
                storage.insert((r.group.clone(), r.kind.clone()), s.version.clone());
            }
        }
    }
    for (index, r) in project.resources.iter().enumerate() {
        if !r.owns_api() {
            continue;
        }
        let dir = api_dir(&project, r);
        let pkg = &packages[&dir];
        let several = project
            .resources
            .iter()
            .filter(|o| o.owns_api() && o.kind == r.kind && o.group == r.group)
            .count()
            > 1;
        let info = types::KindInfo {
            group: r.qualified_group(),
            version: r.version.clone(),
            kind: r.kind.clone(),
            plural: r.plural(),
            namespaced: r.api.as_ref().is_some_and(|a| a.namespaced),
            storage: several
                .then(|| storage.get(&(r.group.clone(), r.kind.clone())) == Some(&r.version)),
        };
        let module = crate::names::kind_snake(&r.kind);
        let version_declared = declared.entry(dir.clone()).or_default();
        let m = types::kind_module(pkg, &info, version_declared, &mut report)?;
        version_declared.insert(module.clone(), m.declared.clone());
        kinds.push((index, module, m.text));
    }

    let conversion_logic = conversion_logic(&project, &packages, &mut report);
    let controllers = controllers::read(source, &project, &mut report)?;
    let webhook_markers = controllers::webhook_markers(source, &mut report)?;
    let samples = read_samples(source)?;
    let max_desc_len = controller_gen_options(source, &mut report);
    Ok(Imported {
        source: source.to_path_buf(),
        project,
        kinds,
        controllers,
        webhook_markers,
        samples,
        storage,
        max_desc_len,
        conversion_logic,
        report,
    })
}

/// The Go conversions (`ConvertTo`/`ConvertFrom` of an API package) in the report, each at its
/// line; those whose code (not comments) reads or writes a `.Spec` or `.Status`, by spoke.
fn conversion_logic(
    project: &GoProjectFile,
    packages: &BTreeMap<PathBuf, types::Package>,
    report: &mut Report,
) -> Vec<(String, go::At)> {
    let mut out: Vec<(String, go::At)> = Vec::new();
    for r in project.resources.iter().filter(|r| r.owns_api()) {
        let Some(pkg) = packages.get(&api_dir(project, r)) else {
            continue;
        };
        let file = (project.layout()).conversion_file(&project.as_resource(r), &r.version);
        for f in pkg.files.iter().flat_map(|f| f.funcs.iter()) {
            let receiver = f.receiver.as_deref().unwrap_or("");
            let receiver = receiver.rsplit(['*', ' ']).next().unwrap_or("");
            if receiver != r.kind || !matches!(f.name.as_str(), "ConvertTo" | "ConvertFrom") {
                continue;
            }
            report.add(
                &f.at,
                format!("the conversion logic {}.{}", r.kind, f.name),
                format!(
                    "not translated: {file} converts through JSON (`via_json`), which holds while both versions' fields are the same; port it to `to_hub`/`from_hub`"
                ),
            );
            let maps_fields = f.body.lines().any(|l| {
                let l = l.trim();
                !l.starts_with("//") && (l.contains(".Spec") || l.contains(".Status"))
            });
            if maps_fields && !out.iter().any(|(known, _)| *known == file) {
                out.push((file.clone(), f.at.clone()));
            }
        }
    }
    out
}

/// Each plugin of PROJECT's `plugins:` in the report, at its line, with what operator-rs has in
/// its place: the kinds deploy-image scaffolded are imported as any other (their Go controller's
/// logic is reported with it); the others' files are not read.
fn report_plugins(project: &GoProjectFile, text: &str, report: &mut Report) {
    let line_of = |needle: &str| {
        let needle = format!("{needle}:");
        text.lines()
            .position(|l| l.trim_start().starts_with(&needle))
            .map(|i| i + 1)
            .unwrap_or(1)
    };
    for (name, settings) in &project.plugins {
        let at = go::At {
            file: "PROJECT".into(),
            line: line_of(name),
            col: 3,
        };
        let plugin = name.split('/').next().unwrap_or(name);
        let what = match plugin {
            "deploy-image.go.kubebuilder.io" => {
                let kinds: Vec<String> = settings["resources"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|r| {
                        let o = &r["options"];
                        let mut c = format!(
                            "`operator-rs create api --group {} --version {} --kind {} --image {}",
                            r["group"].as_str().unwrap_or(""),
                            r["version"].as_str().unwrap_or(""),
                            r["kind"].as_str().unwrap_or(""),
                            o["image"].as_str().unwrap_or("")
                        );
                        for (key, flag) in [
                            ("containerPort", "--image-container-port"),
                            ("containerCommand", "--image-container-command"),
                            ("runAsUser", "--run-as-user"),
                        ] {
                            if let Some(v) = o[key].as_str() {
                                c.push_str(&format!(" {flag} {v}"));
                            }
                        }
                        c + "`"
                    })
                    .collect();
                format!(
                    "the kinds are imported with their Go types and a stub controller; operator-rs's deploy-image flavour writes such a controller in Rust, as {} would in a new project",
                    kinds.join(", ")
                )
            }
            "helm.kubebuilder.io" => {
                "dist/ is not imported: `operator-rs generate chart` writes the project's Helm chart (README: Helm chart)".to_string()
            }
            "grafana.kubebuilder.io" => {
                "grafana/ is not imported: `operator-rs generate dashboards` writes the manager's dashboards".to_string()
            }
            _ => "its scaffolding is not imported (operator-rs has no such plugin); port what it made by hand".to_string(),
        };
        report.add(&at, format!("the plugin {name}"), what);
    }
}

/// The `crd:` options the Makefile passes controller-gen: `maxDescLen` is kept (PROJECT's
/// `crd: {maxDescLen}`), others are reported.
fn controller_gen_options(source: &Path, report: &mut Report) -> Option<usize> {
    let text = std::fs::read_to_string(source.join("Makefile")).ok()?;
    let mut max = None;
    for (i, line) in text.lines().enumerate() {
        if !line.contains("CONTROLLER_GEN)") {
            continue;
        }
        for word in line.split_whitespace() {
            let Some(options) = word.strip_prefix("crd:") else {
                continue;
            };
            for option in options.split(',') {
                match option.split_once('=') {
                    Some(("maxDescLen", n)) => max = n.parse().ok(),
                    _ => report.add(
                        &go::At { file: "Makefile".into(), line: i + 1, col: 1 },
                        format!("controller-gen's crd:{option}"),
                        "not translated: PROJECT's `crd:` takes knownFormatsOnly, maxDescLen and controllerGen",
                    ),
                }
            }
        }
    }
    max
}

/// In the multigroup layout each group's kinds are in a Rust module of the group
/// (`src/api/<group>/`, [`Layout::group_module`]): refused, at the group's line of PROJECT, a
/// group whose module is the one of kinds from other projects' CRDs (`external`), and two
/// groups that are one module in Rust (`sea-creatures` and `sea.creatures`), whose Go packages
/// would be merged into one Rust module.
fn refuse_groups_without_a_module(project: &GoProjectFile, text: &str, path: &Path) -> Result<()> {
    let layout = project.layout();
    let mut seen: BTreeMap<String, &GoResource> = BTreeMap::new();
    for r in project.resources.iter().filter(|r| r.owns_api() || r.core) {
        let module = layout.group_module(&project.as_resource(r));
        let group = format!("group: {}", r.group);
        let at = format!(
            "{}:{}:3",
            path.display(),
            project.entry_line(text, r, &group)
        );
        if r.owns_api() && module == EXTERNAL_MODULE {
            bail!(
                "{at}: the group {:?} of {} {}: in operator-rs's multigroup layout a group's kinds are in the Rust module of the group (src/api/<group>/<version>/), and src/api/{EXTERNAL_MODULE}/ holds the types of kinds from other projects' CRDs (create api --from-crd)\n  \
                 the group cannot be imported under this name: rename it in the Go project (e.g. group: fleet, api/fleet/{}/), then run operator-rs import again",
                r.group,
                r.kind,
                r.version,
                r.version
            );
        }
        match seen.get(&module) {
            Some(other) if other.group != r.group => bail!(
                "{at}: the groups {:?} ({} {}) and {:?} ({} {}) are both the Rust module {module} in operator-rs's multigroup layout (src/api/{module}/): their Go packages would be one Rust module, whose types may clash\n  \
                 rename one of the groups in the Go project (e.g. group: {}-b), then run operator-rs import again",
                other.group,
                other.kind,
                other.version,
                r.group,
                r.kind,
                r.version,
                r.group
            ),
            Some(_) => {}
            None => {
                seen.insert(module, r);
            }
        }
    }
    Ok(())
}

/// The directory of a resource's API package, relative to the project: its Go import path
/// under the repo (`<repo>/api/v1` -> `api/v1`), else kubebuilder's `api/<version>`.
pub fn api_dir(project: &GoProjectFile, r: &GoResource) -> PathBuf {
    let prefix = format!("{}/", project.repo);
    match r.path.strip_prefix(&prefix) {
        Some(rel) if !rel.is_empty() => PathBuf::from(rel),
        _ if project.multigroup => PathBuf::from(format!("api/{}/{}", r.group, r.version)),
        _ => PathBuf::from(format!("api/{}", r.version)),
    }
}

/// The Go files of an API package, without tests and generated code (`zz_generated.*`).
pub fn read_package(source: &Path, dir: &Path) -> Result<types::Package> {
    let full = source.join(dir);
    let mut names: Vec<PathBuf> = std::fs::read_dir(&full)
        .with_context(|| {
            format!(
                "{}: the API package PROJECT names is not there",
                full.display()
            )
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            n.ends_with(".go") && !n.ends_with("_test.go") && !n.starts_with("zz_generated")
        })
        .collect();
    names.sort();
    let mut files = Vec::new();
    for p in names {
        let shown = dir.join(p.file_name().unwrap_or_default());
        files.push(go::read_file(&p, &shown)?);
    }
    Ok(types::Package {
        dir: dir.to_path_buf(),
        files,
    })
}

fn read_samples(source: &Path) -> Result<Vec<(PathBuf, String)>> {
    let dir = source.join("config/samples");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        let name = p
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        if name.ends_with(".yaml") && name != "kustomization.yaml" {
            let text =
                std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
            out.push((PathBuf::from("config/samples").join(name), text));
        }
    }
    out.sort();
    Ok(out)
}
