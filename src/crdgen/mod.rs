//! `operator-rs generate crds`: the CRDs of the user's `#[derive(CustomResource)]` types, derived
//! statically (without compiling the crate) with exactly the semantics of kube-derive 5 +
//! schemars 1 + kube-core's transforms, or through the compiler with `--exact`.
//!
//! Its stages, one folder each, in the order a kind goes through them; no stage imports a later
//! one (`src/layering.rs` holds it):
//! - [`read`]: the user's crate as the compiler would see it, without compiling it: the module
//!   tree ([`read::loader`]), names and types ([`read::resolve`]), `#[cfg]` ([`read::cfg`]),
//!   serde/schemars/kube attributes ([`read::attrs`], [`read::place_attrs`]), what they say about
//!   each type ([`read::type_info`], with where each rule and attribute was written:
//!   [`read::sources`]), `schema_with` functions ([`read::type_info::schema_fn`]), literal defaults and
//!   constants ([`read::type_info::values`]), and where each schema node was written ([`read::locate`]);
//! - [`derive`]: the CRD kube-derive would build: the `JsonSchema` derive over schemars' real
//!   generator ([`derive::schema`]), kube-core's structural rewrite ([`derive::structural`]) and
//!   transforms ([`derive::transforms`]), `#[kube(...)]` and `crd()` ([`derive::crd`]);
//! - [`check`]: what kube-apiserver refuses on create, found before anything is written: the
//!   structural rules, list and map combinations, defaults, versions, API approval, and the CEL
//!   rules (type-checked and costed by [`check::cel`], a checker of its own), plus the source
//!   patterns kube-derive accepts and the API server does not ([`check::source_checks`]);
//! - [`emit`]: CRDs into YAML (on other cores while kinds are built) ([`emit::render`]), and the
//!   files, kustomization and warnings ([`emit::output`]).
//!
//! Below the stages: [`error`] (errors carry the file:line:col of what they refuse), [`k8s`]
//! (k8s-openapi's types, recorded) and [`kind`] (the kind data the stages share). This file is the
//! driver that runs the stages in order; beside it, [`exact`] is the driver of `--exact` (the same
//! through the compiler) and [`compat`] (`--check-compat`) compares the CRDs of two revisions of
//! a project. PROJECT's `crd:` options (known formats only, description length) are the runtime's
//! `operator_rs_runtime::crd`, shared with the generated project's drift test.

mod check;
pub(crate) mod compat;
mod derive;
mod emit;
mod error;
mod exact;
/// Public only for `tests/crdgen/k8s_schemas.rs` (as `k8s_table`), which records and checks it
/// against k8s-openapi.
#[doc(hidden)]
pub mod k8s;
mod kind;
mod read;

/// Public only for `tests/apiserver/names.rs`, which checks it against kube-apiserver.
#[doc(hidden)]
pub use check::api_approval_problem;
#[doc(hidden)]
pub use check::verdict as apiserver_verdict;
pub use check::{DEPRECATION_WARNING_RULE, deprecation_warning_problem};
pub use derive::structural;
/// Public only for `tests/crdgen/transforms.rs`, which checks it against running every transform.
#[doc(hidden)]
pub use derive::transforms;
#[doc(hidden)]
pub use k8s as k8s_table;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

#[doc(hidden)]
pub use derive::crd::catch_quietly;
pub use emit::output::KUSTOMIZATION;
pub use emit::render::to_yaml;
pub use error::{CrdgenError, Location};
pub use exact::generate_exact;
pub(crate) use kind::Checks;
pub use kind::{CRD_BASES, KindCrd, crd_path};

use crate::project::Project;
use crate::workspace::{GeneratorOutput, SourceTree};

/// The crate roots `generate crds` reads (each one that exists), relative to the project root.
pub const CRATE_ROOTS: &[&str] = &["src/lib.rs", "src/main.rs"];

/// Read the crate under `tree` and return every CRD, without writing anything.
pub fn crds(tree: &dyn SourceTree, project: &Project) -> Result<Vec<KindCrd>, CrdgenError> {
    let found = static_kinds(tree, true, None)?;
    merge_kinds(found, project, Checks::ApiServer).map(|(crds, _)| crds)
}

/// Read the crate under `tree` and return every CRD (checked as kube-apiserver checks it with
/// `api_server_checks`), with where each version's types are written ([`Places`]).
pub fn crds_located(
    tree: &dyn SourceTree,
    project: &Project,
    api_server_checks: bool,
) -> Result<(Vec<KindCrd>, Places), CrdgenError> {
    let found = static_kinds(tree, true, None)?;
    let places = Places {
        crates: found.crates.clone(),
        versions: (found.kinds.iter())
            .map(|k| PlacedVersion {
                group: k.group.clone(),
                kind: k.kind.clone(),
                version: k.version.clone(),
                loc: k.loc.clone(),
                spec: k.def,
                status: k.status.clone(),
                krate: k.krate,
            })
            .collect(),
    };
    let checks = if api_server_checks {
        Checks::ApiServer
    } else {
        Checks::None
    };
    let (crds, _) = merge_kinds(found, project, checks)?;
    Ok((crds, places))
}

/// Where each version of each kind read by [`crds_located`] is written: its
/// `#[derive(CustomResource)]` struct, and the field behind a place of its schema.
pub struct Places {
    crates: Vec<Rc<read::type_info::Model>>,
    versions: Vec<PlacedVersion>,
}

/// One version of a kind, as [`Places`] keeps it.
struct PlacedVersion {
    group: String,
    kind: String,
    version: String,
    loc: Location,
    spec: read::loader::DefId,
    status: Option<String>,
    krate: usize,
}

impl Places {
    fn version(&self, group: &str, kind: &str, version: &str) -> Option<&PlacedVersion> {
        (self.versions.iter()).find(|v| v.group == group && v.kind == kind && v.version == version)
    }

    /// Where version `version` of `kind` (`group` the full group) is declared; any version of
    /// the kind when that one is not (`None` when the kind is not).
    pub fn kind(&self, group: &str, kind: &str, version: &str) -> Option<&Location> {
        self.version(group, kind, version)
            .or_else(|| (self.versions.iter()).find(|v| v.group == group && v.kind == kind))
            .map(|v| &v.loc)
    }

    /// The field of version `version` of `kind` behind the schema path `path`
    /// (`.spec.items[*].name`); the deepest field on the path when the walk stops short of it.
    pub fn field(&self, group: &str, kind: &str, version: &str, path: &str) -> Option<Location> {
        let v = self.version(group, kind, version)?;
        let types = read::locate::KindTypes {
            spec: v.spec,
            status: v.status.as_deref(),
        };
        read::locate::field_at(
            self.crates.get(v.krate)?,
            &types,
            path,
            read::locate::Part::Field,
        )
    }
}

/// [`generate`] without kube-apiserver's checks: the files kube-derive's `crd()` would give
/// (stale files and the reader's warnings are reported all the same).
pub fn generate_unchecked(
    tree: &dyn SourceTree,
    project: &Project,
) -> Result<GeneratorOutput, CrdgenError> {
    generate_with(tree, project, Checks::None)
}

/// [`crds`] without kube-apiserver's checks: what kube-derive writes, for comparing our verdict
/// with the API server's own.
pub fn crds_unchecked(
    tree: &dyn SourceTree,
    project: &Project,
) -> Result<Vec<KindCrd>, CrdgenError> {
    let found = static_kinds(tree, true, None)?;
    merge_kinds(found, project, Checks::None).map(|(crds, _)| crds)
}

/// `operator-rs generate crds`: every CRD file plus `config/crd/kustomization.yaml`; the files
/// of `config/crd/bases` that no kind produces are stale (it owns that folder).
pub fn generate(tree: &dyn SourceTree, project: &Project) -> Result<GeneratorOutput, CrdgenError> {
    generate_with(tree, project, Checks::ApiServer)
}

/// [`generate`] with the given checks.
fn generate_with(
    tree: &dyn SourceTree,
    project: &Project,
    checks: Checks,
) -> Result<GeneratorOutput, CrdgenError> {
    assemble(tree, read(tree)?, project, checks == Checks::ApiServer)
}

/// The first half of [`generate`], the half that needs no PROJECT: the crate under `tree` read and
/// its kinds built, each CRD rendered on the other core while the next kinds are built. (The
/// command parses PROJECT meanwhile: for 50 kinds its YAML is a tenth of the run.)
pub fn read(tree: &dyn SourceTree) -> Result<Found, CrdgenError> {
    emit::render::with_prerender(|prerender| static_kinds(tree, true, Some(prerender)))
}

/// The second half of [`generate`] (of [`generate_unchecked`] without `api_server_checks`): the
/// kinds [`read`] found merged over their versions and checked, PROJECT's CRD options applied,
/// the files and the stale ones.
pub fn assemble(
    tree: &dyn SourceTree,
    found: Found,
    project: &Project,
    api_server_checks: bool,
) -> Result<GeneratorOutput, CrdgenError> {
    let checks = if api_server_checks {
        Checks::ApiServer
    } else {
        Checks::None
    };
    let (crds, warnings) = merge_kinds(found, project, checks)?;
    let mut out = emit::output::files(tree, crds, &project.crd, checks)?;
    out.warnings.extend(warnings);
    mark_stale(tree, &mut out)?;
    Ok(out)
}

/// Record as stale every YAML file of [`CRD_BASES`] that `out` does not produce (hidden files,
/// such as a `.gitkeep`, are not CRDs and stay).
pub(crate) fn mark_stale(
    tree: &dyn SourceTree,
    out: &mut GeneratorOutput,
) -> Result<(), CrdgenError> {
    let dir = Path::new(CRD_BASES);
    let files = tree.files_under(dir).map_err(|source| CrdgenError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    // A set: looking each file up in the list of outputs was quadratic in the number of kinds.
    let written: std::collections::HashSet<&Path> =
        out.files.iter().map(|g| g.path.as_path()).collect();
    out.stale = files
        .into_iter()
        .filter(|f| {
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or(".");
            !name.starts_with('.') && (name.ends_with(".yaml") || name.ends_with(".yml"))
        })
        .filter(|f| !written.contains(f.as_path()))
        .collect();
    Ok(())
}

/// The kinds the static reader found, and what it warns about (macros it cannot see into).
pub struct Found {
    pub(crate) kinds: Vec<derive::crd::KindDef>,
    pub(crate) warnings: Vec<String>,
    /// The crates read, by [`derive::crd::KindDef::krate`]: a refusal looks up where its field is.
    pub(crate) crates: Vec<Rc<read::type_info::Model>>,
    /// Where the rules and attribute-set keywords of every kind read were written.
    pub(crate) sources: read::sources::Sources,
}

impl Found {
    /// Every file read, with the first name it declares twice at its top level, if any: what
    /// the check of the Rust a command writes would find by parsing it again.
    pub fn parsed(&self) -> impl Iterator<Item = &(PathBuf, Option<String>)> {
        self.crates.iter().flat_map(|c| c.parsed.iter())
    }

    /// For a process about to exit: what reading the crates built is never freed, their trees
    /// and the type information of the last one (the operating system takes the memory back at
    /// once; freeing it, millions of small allocations, is 9 % of `generate crds` on a large
    /// crate).
    pub fn keep_until_exit(&self) {
        // The type information read is cached in each crate's model: forgotten with it.
        std::mem::forget(self.crates.clone());
    }
}

/// Refuses a `#[derive(CustomResource)]` in a `.rs` file under `src/` (but `src/bin/`, other
/// crates) that no module declaration reaches from the crate roots: the compiler never sees it,
/// so its CRD would silently not be generated, and an earlier one removed. Names the first
/// such derive (`file:line:col`), why, and the fix; a missing `src/lib.rs` (where the scaffold
/// declares `pub mod api;`) is named as the cause.
fn unreached_custom_resources(
    tree: &dyn SourceTree,
    roots: &[PathBuf],
    crates: &[Rc<read::type_info::Model>],
) -> Result<(), CrdgenError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CrdgenError::Io { path, source }
    };
    let files = tree
        .files_under(Path::new("src"))
        .map_err(io(Path::new("src")))?;
    let candidates: Vec<&PathBuf> = (files.iter())
        .filter(|f| f.extension().is_some_and(|e| e == "rs") && !f.starts_with("src/bin"))
        .collect();
    if candidates.is_empty() {
        return Ok(());
    }
    // The files the crate roots reach, as the loader followed `mod` declarations.
    let reached: std::collections::HashSet<&PathBuf> =
        crates.iter().flat_map(|c| c.files.iter()).collect();
    for file in candidates.into_iter().filter(|f| !reached.contains(*f)) {
        let Some(text) = tree.read(file).map_err(io(file))? else {
            continue;
        };
        if !text.contains("CustomResource") {
            continue;
        }
        // A file that does not parse is no module of the crate either: rustc never reads it.
        let Ok(parsed) = syn::parse_file(&text) else {
            continue;
        };
        let Some(at) = first_custom_resource(&parsed.items) else {
            continue;
        };
        let parent = file.parent().unwrap_or(Path::new("src"));
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("kind");
        let (module, declaring) = if stem == "mod" {
            let name = parent
                .file_name()
                .and_then(|s| s.to_str())
                .unwrap_or("kind");
            (
                name.to_string(),
                parent.parent().unwrap_or(Path::new("src")),
            )
        } else {
            (stem.to_string(), parent)
        };
        let declaring_file = ["mod.rs", "lib.rs"]
            .iter()
            .map(|f| declaring.join(f))
            .find(|f| files.contains(f))
            .unwrap_or_else(|| declaring.join("mod.rs"));
        let from = (roots.iter())
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(" and ");
        let (cause, fix) = if roots.iter().any(|r| r == Path::new("src/lib.rs")) {
            (
                String::new(),
                format!(
                    "declare it, e.g. `pub mod {module};` in {}, or delete the file",
                    declaring_file.display()
                ),
            )
        } else {
            (
                "; src/lib.rs, the crate root that declares `pub mod api;` and `pub mod controllers;`, is missing".to_string(),
                "restore src/lib.rs (e.g. `git checkout -- src/lib.rs`), then run the command again".to_string(),
            )
        };
        return Err(CrdgenError::Unreached {
            loc: Location {
                file: file.clone(),
                line: at.line,
                column: at.column + 1,
            },
            what: format!(
                "a `CustomResource` in a file no module declaration reaches from {from}: the compiler never reads it, so its CRD would not be generated (and one generated before would be removed){cause}. Nothing was written.\n  {fix}"
            ),
        });
    }
    Ok(())
}

/// Where the first `#[derive(..., CustomResource, ...)]` of `items` (inline modules too) is.
fn first_custom_resource(items: &[syn::Item]) -> Option<proc_macro2::LineColumn> {
    use syn::spanned::Spanned;
    for item in items {
        let attrs = match item {
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Enum(e) => &e.attrs,
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content
                    && let Some(at) = first_custom_resource(inner)
                {
                    return Some(at);
                }
                continue;
            }
            _ => continue,
        };
        for a in attrs.iter().filter(|a| a.path().is_ident("derive")) {
            let derives = a.parse_args_with(
                syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated,
            );
            if derives.is_ok_and(|d| {
                d.iter().any(|p| {
                    p.segments
                        .last()
                        .is_some_and(|s| s.ident == "CustomResource")
                })
            }) {
                return Some(a.span().start());
            }
        }
    }
    None
}

/// The kinds of every crate root, with (`with_schema`) or without their schemas. Each CRD built is
/// handed to `prerender` (rendered while the next kinds are built); errors come as without it.
pub(crate) fn static_kinds(
    tree: &dyn SourceTree,
    with_schema: bool,
    mut prerender: Option<&mut emit::render::Prerender<'_>>,
) -> Result<Found, CrdgenError> {
    let mut roots = Vec::new();
    for r in CRATE_ROOTS {
        let rel = PathBuf::from(r);
        if tree
            .read(&rel)
            .map_err(|source| CrdgenError::Io {
                path: rel.clone(),
                source,
            })?
            .is_some()
        {
            roots.push(rel);
        }
    }
    if roots.is_empty() {
        return Err(CrdgenError::NoCrateRoot(tree.root().to_path_buf()));
    }
    let mut kinds = Vec::new();
    let mut sources = read::sources::Sources::default();
    let mut warnings = Vec::new();
    let mut crates = Vec::new();
    let mut read = || -> Result<(), CrdgenError> {
        for root in roots.clone() {
            let krate = Rc::new(read::type_info::Model::new(read::loader::load(
                tree, &root,
            )?));
            crates.push(krate.clone());
            check::source_checks::check_derives_and_cfg(&krate)?;
            check::source_checks::check_attribute_keys(&krate)?;
            check::source_checks::check_comment_markers(tree, &krate)?;
            for d in derive::crd::custom_resources(&krate) {
                let mut kind = kind_of(&krate, d, with_schema)?;
                kind.krate = crates.len() - 1;
                // Where its rules were written: its own `#[kube]`'s, then its types'.
                sources.extend(&kind.sources);
                sources.extend(&krate.take_sources());
                match prerender.as_deref_mut() {
                    Some(prerender) => {
                        prerender.hand(std::mem::take(&mut kind.crd), kind.pending.take())
                    }
                    None => kind.finish_schema(&krate)?,
                }
                kinds.push(kind);
            }
            let warned = check::source_checks::macro_warnings(&krate)
                .into_iter()
                .chain(check::source_checks::kube_attr_warnings(&krate));
            for w in warned {
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
        }
        Ok(())
    };
    let read = read();
    // What became of the kinds handed over: they come before whatever stopped the reading, so the
    // first refusal among them is the one to report.
    if let Some(prerender) = prerender {
        for (kind, (crd, handed)) in kinds.iter_mut().zip(prerender.take()) {
            kind.crd = crd;
            let krate = &crates[kind.krate];
            match handed {
                emit::render::Handed::Rendered(rendered) => kind.rendered = Some(rendered),
                emit::render::Handed::Refused(refused) => kind.finished(krate, Err(refused))?,
                emit::render::Handed::Kept(pending) => {
                    kind.pending = pending;
                    kind.finish_schema(krate)?;
                }
            }
        }
    }
    read?;
    for krate in &crates {
        sources.extend(&krate.take_sources());
    }
    unreached_custom_resources(tree, &roots, &crates)?;
    check::source_checks::check_clashes(&kinds)?;
    Ok(Found {
        kinds,
        warnings,
        crates,
        sources,
    })
}

/// The kind of the `#[derive(CustomResource)]` struct `d`: its `#[kube(...)]` read and checked
/// as the source (keys kube-derive knows, names the API server takes), then built.
fn kind_of(
    krate: &Rc<read::type_info::Model>,
    d: read::loader::DefId,
    with_schema: bool,
) -> Result<derive::crd::KindDef, CrdgenError> {
    let items = derive::crd::kube_items(krate, d)?;
    check::source_checks::check_kube_attrs(krate, d, &items)?;
    let attrs = derive::crd::KubeAttrs::read(krate, d, &items)?;
    check::source_checks::check_crd_name(krate, d, &items, &attrs.plural, &attrs.group)?;
    derive::crd::build_kind(krate, d, attrs, with_schema)
}

/// Group versions of a kind, pick the storage version, merge with `kube_core::crd::merge_crds`;
/// the CRDs and the warnings of the reader and of the merge.
pub(crate) fn merge_kinds(
    found: Found,
    project: &Project,
    checks: Checks,
) -> Result<(Vec<KindCrd>, Vec<String>), CrdgenError> {
    let Found {
        kinds,
        mut warnings,
        crates,
        sources,
    } = found;
    let mut groups: BTreeMap<(String, String), Vec<derive::crd::KindDef>> = BTreeMap::new();
    for k in kinds {
        groups
            .entry((k.group.clone(), k.kind.clone()))
            .or_default()
            .push(k);
    }
    let mut out = Vec::new();
    for ((group, kind), versions) in groups {
        let mut versions = versions;
        for k in &mut versions {
            check_and_apply(k, &crates, &sources, project, checks)?;
        }
        refuse_versions_twice(&group, &kind, &versions)?;
        let declared: Vec<DeclaredVersion<'_>> = versions
            .iter()
            .map(|k| DeclaredVersion {
                version: &k.version,
                loc: &k.loc,
                storage: k.storage,
            })
            .collect();
        // One version or several, exactly one is stored: a lone `storage = false` is refused as
        // kube-apiserver refuses it (without its checks, as kube-derive writes it).
        let (stored, warning) = if declared.len() > 1 || checks == Checks::ApiServer {
            storage_version(&group, &kind, &declared, project)?
        } else {
            (declared[0].version.to_string(), None)
        };
        drop(declared);
        warnings.extend(warning);
        let kind_loc = versions[0].loc.clone();
        let plural = versions[0].plural.clone();
        if versions.len() == 1 {
            let mut k = versions.into_iter().next().expect("one version");
            if checks == Checks::ApiServer {
                check::check_crd_meta(&k.crd, &kind_loc)?;
            }
            project.crd.apply_to_names(&mut k.crd);
            out.push(KindCrd {
                group,
                kind,
                plural,
                crd: k.crd,
                // Rendered as built: still its text unless PROJECT's options changed it.
                rendered: k
                    .rendered
                    .filter(|_| project.crd.leaves_schemas_as_they_are()),
            });
            continue;
        }
        let mut merged =
            kube_core::crd::merge_crds(versions.into_iter().map(|k| k.crd).collect(), &stored)
                .map_err(|e| {
                    CrdgenError::Versions(format!(
                        "{kind}.{group}: the versions cannot be merged: {e}"
                    ))
                })?;
        if checks == Checks::ApiServer {
            check::check_crd_meta(&merged, &kind_loc)?;
        }
        project.crd.apply_to_names(&mut merged);
        out.push(KindCrd {
            group,
            kind,
            plural,
            crd: merged,
            rendered: None,
        });
    }
    Ok((out, warnings))
}

/// Check each version of the kind `k` as kube-apiserver does (with `checks`), refusals pointing
/// where `sources` and `crates` say the refused part was written, and apply PROJECT's CRD options
/// to its schemas.
fn check_and_apply(
    k: &mut derive::crd::KindDef,
    crates: &[Rc<read::type_info::Model>],
    sources: &read::sources::Sources,
    project: &Project,
    checks: Checks,
) -> Result<(), CrdgenError> {
    for v in &mut k.crd.spec.versions {
        if checks == Checks::ApiServer {
            check::check_version(v, &k.loc, &k.written)?;
        }
        if let Some(s) = v
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
        {
            if checks == Checks::ApiServer {
                let types = read::locate::KindTypes {
                    spec: k.def,
                    status: k.status.as_deref(),
                };
                let field = |path: &str, part| {
                    let krate = crates.get(k.krate)?;
                    read::locate::field_at(krate, &types, path, part)
                };
                check::check(s, &v.name, &k.loc, sources, &field)?;
            }
            project.crd.apply(s);
        }
    }
    Ok(())
}

/// Refuse a version of `kind` (of `group`) that `versions` holds twice.
fn refuse_versions_twice(
    group: &str,
    kind: &str,
    versions: &[derive::crd::KindDef],
) -> Result<(), CrdgenError> {
    for (i, a) in versions.iter().enumerate() {
        if let Some(b) = versions[i + 1..].iter().find(|b| b.version == a.version) {
            if a.loc == b.loc {
                // One place read twice: its file is reached by two module declarations.
                return Err(CrdgenError::Versions(format!(
                    "{}: {group}/{} {kind} is defined twice from this one place: two module declarations (`mod` lines, or a `#[path]`) reach {}, so the crate has the kind twice\n  keep one of the `mod` lines that name it",
                    a.loc,
                    a.version,
                    a.loc.file.display()
                )));
            }
            return Err(CrdgenError::Versions(format!(
                "{group}/{} {kind} is defined twice: at {} and at {}",
                a.version, a.loc, b.loc
            )));
        }
    }
    Ok(())
}

/// A version of a kind as the static reader finds it in the source (without its schema).
#[derive(Debug, Clone)]
pub struct FoundVersion {
    /// The full group, e.g. `batch.example.com`.
    pub group: String,
    /// The kind, e.g. `CronJob`.
    pub kind: String,
    /// The version, e.g. `v1`.
    pub version: String,
    /// Where its `#[derive(CustomResource)]` struct's name is.
    pub loc: Location,
    /// Whether it is the kind's storage version (its `#[kube]` has no `storage = false`).
    pub storage: bool,
}

/// Every `#[derive(CustomResource)]` struct of the crate under `tree`, in module order.
pub fn kind_versions(tree: &dyn SourceTree) -> Result<Vec<FoundVersion>, CrdgenError> {
    Ok(kinds_and_macros(tree)?.0)
}

/// An item macro invocation of the crate: where, and the macro's name.
pub type ItemMacro = (Location, String);

/// [`kind_versions`], and the item macros of the crate that may define a kind the static reader
/// cannot see (where each is invoked, and its name): a command that edits the types names them
/// when a version it needs is not among those found.
pub fn kinds_and_macros(
    tree: &dyn SourceTree,
) -> Result<(Vec<FoundVersion>, Vec<ItemMacro>), CrdgenError> {
    let found = static_kinds(tree, false, None)?;
    let macros = (found.crates.iter())
        .flat_map(|k| check::source_checks::item_macros(k))
        .collect();
    let versions = (found.kinds.into_iter())
        .map(|k| FoundVersion {
            group: k.group,
            kind: k.kind,
            version: k.version,
            loc: k.loc,
            storage: k.storage,
        })
        .collect();
    Ok((versions, macros))
}

/// A version of one of the crate's kinds that a controller of the crate watches, and the place
/// of the source that makes it watch it.
#[derive(Debug, Clone)]
pub struct WatchedVersion {
    /// The full group, e.g. `batch.example.com`.
    pub group: String,
    /// The kind, e.g. `CronJob`.
    pub kind: String,
    /// The version, e.g. `v1`.
    pub version: String,
    /// Where the source makes the controller watch it.
    pub at: Location,
    /// What the source says there, e.g. "the `type Kind` of its Reconciler".
    pub what: String,
    /// Not watched but the hub of a conversion (`impl Spoke<Hub> for ...`).
    pub hub: bool,
}

/// Every version of the crate's own kinds that a controller watches or owns, or that is the hub
/// of a conversion, read from the source (see `watched`).
pub fn watched_versions(tree: &dyn SourceTree) -> Result<Vec<WatchedVersion>, CrdgenError> {
    let found = static_kinds(tree, false, None)?;
    let mut out = Vec::new();
    for (i, krate) in found.crates.iter().enumerate() {
        for w in read::watched::watches(krate) {
            for k in found.kinds.iter().filter(|k| k.krate == i) {
                if w.homes
                    .contains(&(krate.defs[k.def].module, k.kind.clone()))
                {
                    out.push(WatchedVersion {
                        group: k.group.clone(),
                        kind: k.kind.clone(),
                        version: k.version.clone(),
                        at: w.at.clone(),
                        what: w.what.clone(),
                        hub: w.hub,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// One version of a kind as its source declares it.
#[derive(Debug, Clone)]
pub(crate) struct DeclaredVersion<'a> {
    pub version: &'a str,
    /// Where its `#[derive(CustomResource)]` struct is.
    pub loc: &'a Location,
    /// What its `#[kube(...)]` says: a storage version unless it says `storage = false`.
    pub storage: bool,
}

/// The storage version of a kind of several versions (`group` is the full group), and a warning
/// when PROJECT had to decide. The source decides: exactly one version without
/// `#[kube(storage = false)]`. PROJECT's `storage: true` only mirrors it, and breaks the tie of
/// projects made before `create api` wrote `storage = false`, where every version defaults to
/// being stored and PROJECT marks one. Zero or several storage versions otherwise are refused,
/// with where each version is and the command that fixes it.
pub(crate) fn storage_version(
    group: &str,
    kind: &str,
    versions: &[DeclaredVersion<'_>],
    project: &Project,
) -> Result<(String, Option<String>), CrdgenError> {
    let resources: Vec<&crate::project::Resource> = project
        .resources
        .iter()
        .filter(|r| r.kind == kind && r.qualified_group() == group && r.has_api())
        .collect();
    let marked: Vec<&str> = resources
        .iter()
        .filter(|r| r.api.as_ref().is_some_and(|a| a.storage))
        .map(|r| r.version.as_str())
        .filter(|v| versions.iter().any(|d| d.version == *v))
        .collect();
    // `--group` as `create api` took it (the short group), else the full group.
    let group_flag = resources.first().map_or(group, |r| r.group.as_str());
    let fix = |version: &str| {
        format!(
            "operator-rs edit api --group {group_flag} --version {version} --kind {kind} --storage"
        )
    };
    let list = |vs: &[&DeclaredVersion<'_>]| {
        vs.iter()
            .map(|d| format!("{} at {}", d.version, d.loc))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let storing: Vec<&DeclaredVersion<'_>> = versions.iter().filter(|d| d.storage).collect();
    match storing.as_slice() {
        [one] => {
            let warning = match marked.as_slice() {
                [m] if *m != one.version => Some(format!(
                    "{kind}.{group}: PROJECT records {m} as the storage version, but the source says {} (at {}); the source decides. Record it in PROJECT with\n  {}",
                    one.version,
                    one.loc,
                    fix(one.version)
                )),
                _ => None,
            };
            Ok((one.version.to_string(), warning))
        }
        [] => {
            let all: Vec<&DeclaredVersion<'_>> = versions.iter().collect();
            let pick = marked
                .first()
                .copied()
                .unwrap_or_else(|| versions[0].version);
            Err(CrdgenError::Versions(format!(
                "{kind}.{group} has no storage version: every version says `#[kube(storage = false)]` ({}). Exactly one version must be stored; make one the storage version, e.g.\n  {}",
                list(&all),
                fix(pick)
            )))
        }
        several => match marked.as_slice() {
            [m] if several.iter().any(|d| d.version == *m) => Ok((
                m.to_string(),
                Some(format!(
                    "{kind}.{group}: {} are all storage versions in the source (none says `#[kube(storage = false)]`); PROJECT's `storage: true` picks {m}, as in projects made before operator-rs wrote `storage = false`. Make the source say so with\n  {}",
                    list(several),
                    fix(m)
                )),
            )),
            _ => Err(CrdgenError::Versions(format!(
                "{kind}.{group} has {} storage versions: {} (a version is a storage version unless its `#[kube(...)]` says `storage = false`). Keep exactly one: e.g.\n  {}\n  makes {} the storage version and writes `storage = false` into the others",
                several.len(),
                list(several),
                fix(several[0].version),
                several[0].version
            ))),
        },
    }
}
