//! `operator-rs edit api`: change one version of a kind where the types declare it, its
//! `#[kube(...)]` attribute (storage, served, deprecated), then PROJECT (which mirrors the
//! storage version) and the CRDs; checked first, written all-or-nothing under the project lock.
//! The types are the single source of truth: PROJECT is never the place to make such a change.

mod guards;

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use proc_macro2::LineColumn;

use crate::cli::EditApiArgs;
use crate::crdgen::{self, DeclaredVersion, FoundVersion};
use crate::names;
use crate::ops::{self, Crds, Plan};
use crate::project::{self, Project};
use crate::suggest::suggest;
use crate::syntax::kube_attr::{self, Change};
use crate::workspace::{DiskTree, Overlay, SourceTree};

/// A byte range of a file and the text that replaces it.
type Splice = (Range<usize>, String);

/// What a version's `#[kube(...)]` declares, of what `edit api` changes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Settings {
    storage: bool,
    served: bool,
    /// `Some(None)`: `deprecated`; `Some(Some(w))`: `deprecated = "w"`.
    deprecated: Option<Option<String>>,
}

/// One `#[kube(...)]` attribute of a version's struct, where it is in its file.
#[derive(Debug)]
struct AttrAt {
    range: Range<usize>,
    text: String,
    items: Vec<kube_attr::Item>,
    /// How many inline `mod`s deep the struct is, and the indentation of the attribute's line
    /// (None when the attribute does not start its line).
    depth: usize,
    indent: Option<String>,
}

/// One version of the kind, as its source declares it.
#[derive(Debug)]
struct Version {
    found: FoundVersion,
    attrs: Vec<AttrAt>,
    now: Settings,
}

/// `operator-rs edit api`: changes one version of a kind of the project under `root`
/// (storage, served, deprecated).
pub fn run(root: &Path, args: &EditApiArgs) -> Result<()> {
    if !args.storage && args.served.is_none() && args.deprecated.is_none() && !args.no_deprecated {
        bail!(
            "nothing to change: pass --storage, --served=<true|false>, --deprecated[=<warning>] or --no-deprecated\n  e.g. operator-rs edit api --group {} --version {} --kind {} --storage",
            or_example(&args.gvk.group, "batch"),
            or_example(&args.gvk.version, "v2"),
            or_example(&args.gvk.kind, "CronJob")
        );
    }
    // The warning goes into the source and the CRD: refused before anything is read or written.
    if let Some(w) = args.deprecated.as_deref().filter(|w| !w.is_empty())
        && let Some(why) = crdgen::deprecation_warning_problem(w)
    {
        bail!(
            "invalid --deprecated {w:?}: {why}\n  ({})\n  e.g. operator-rs edit api --group {} --version {} --kind {} --deprecated=\"{} is deprecated; use another version\"",
            crdgen::DEPRECATION_WARNING_RULE,
            or_example(&args.gvk.group, "batch"),
            or_example(&args.gvk.version, "v1alpha1"),
            or_example(&args.gvk.kind, "CronJob"),
            or_example(&args.gvk.version, "v1alpha1"),
        );
    }
    let project = Project::load(root)?;
    let disk = DiskTree::new(root);
    let (found, macros) = crdgen::kinds_and_macros(&disk)?;
    let (group, kind) = find_kind(&project, &found, args)?;
    refuse_versions_in_macros(&project, &found, &macros, &group, &kind, args)?;
    let versions: Vec<Version> = found
        .into_iter()
        .filter(|f| f.group == group && f.kind == kind)
        .map(|f| read_version(&disk, f))
        .collect::<Result<_>>()?;
    let me = find_version(&versions, args, &group)?;
    let version = versions[me].found.version.clone();

    let mut target: Vec<Settings> = versions.iter().map(|v| v.now.clone()).collect();
    if args.storage {
        for (i, t) in target.iter_mut().enumerate() {
            t.storage = i == me;
        }
    }
    if let Some(served) = args.served {
        target[me].served = served;
    }
    if let Some(w) = &args.deprecated {
        target[me].deprecated = Some((!w.is_empty()).then(|| w.clone()));
    }
    if args.no_deprecated {
        target[me].deprecated = None;
    }
    let stored = storage_after(&versions, &target, &group, &kind, &project)?;
    refuse_unserved(&versions, &target, me, &stored, args)?;
    // The storage version until now (none when the source does not decide it: the edit fixes that).
    let now: Vec<Settings> = versions.iter().map(|v| v.now.clone()).collect();
    let stored_before = storage_after(&versions, &now, &group, &kind, &project).unwrap_or_default();
    let unserves = versions[me].now.served && !target[me].served;
    let moves = stored != stored_before;
    let edit = guards::Edit {
        project: &project,
        args,
        group: &group,
        kind: &kind,
        versions: &versions,
        target: &target,
        me,
        stored_before: &stored_before,
        stored: &stored,
        watched: if unserves || moves {
            (crdgen::watched_versions(&disk)?.into_iter())
                .filter(|w| w.group == group && w.kind == kind)
                .collect()
        } else {
            Vec::new()
        },
    };
    let forced_steps = guards::check(&edit)?;

    // The source: each changed version's attributes, spliced into its file.
    let mut files: BTreeMap<PathBuf, (String, Vec<Splice>)> = BTreeMap::new();
    for (v, t) in versions.iter().zip(&target) {
        let changes = changes_between(&v.now, t);
        if changes.is_empty() {
            continue;
        }
        let file = v.found.loc.file.clone();
        if !files.contains_key(&file) {
            let text = disk
                .read(&file)?
                .with_context(|| format!("{} disappeared", file.display()))?;
            files.insert(file.clone(), (text, Vec::new()));
        }
        let splices = &mut files.get_mut(&file).expect("inserted").1;
        splices.extend(edit_struct(root, v, &changes)?);
    }
    let mut overlay = Overlay::new(&disk);
    for (file, (mut text, mut splices)) in files {
        splices.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
        for (range, new) in splices {
            text.replace_range(range, &new);
        }
        overlay.put(file, text);
    }

    // PROJECT mirrors the source's storage version.
    let mut mirrored = project.clone();
    for r in mirrored
        .resources
        .iter_mut()
        .filter(|r| r.kind == kind && r.qualified_group() == group)
    {
        if let Some(api) = r.api.as_mut() {
            api.storage = r.version == stored;
        }
    }
    // Nothing to change in the source or PROJECT: nothing is written, PROJECT records nothing.
    let noop = overlay.pending().is_empty() && mirrored == project;
    let changes = if noop {
        Vec::new()
    } else {
        let mut project = mirrored;
        project::history::record(&mut project, &args.words());
        // The CRDs (and the other manifests), as `generate manifests` writes them.
        let crds = Crds::Require;
        ops::finish(
            root,
            Plan {
                crds,
                ..Plan::new(overlay, project)
            },
        )?
    };
    let t = &target[me];
    crate::errln!(
        "\n{}{group}/{version} {kind}: {}, {}{}.",
        if noop || changes.is_empty() {
            "nothing to change: "
        } else {
            ""
        },
        if stored == version {
            "the storage version".to_string()
        } else {
            format!("not stored (the storage version is {stored})")
        },
        if t.served { "served" } else { "not served" },
        match &t.deprecated {
            None => String::new(),
            Some(None) => ", deprecated".to_string(),
            Some(Some(w)) => format!(", deprecated ({w:?})"),
        }
    );
    let moved_from = (versions.iter().zip(&target))
        .find(|(v, _)| v.now.storage && v.found.version != stored)
        .map(|(v, _)| v.found.version.clone());
    if let Some(old) = moved_from.filter(|_| args.storage && !changes.is_empty()) {
        crate::errln!(
            "\nNew {kind} objects are now stored as {stored}; those already stored stay {old} until rewritten. Next:\n  1. apply the CRD to the cluster: make install\n  2. rewrite the stored objects in {stored}: {}\n  3. {}",
            crate::cluster::migrate_command(&group, &kind),
            guards::when_old_can_go(&edit, &old)
        );
    }
    if !noop && !forced_steps.is_empty() {
        crate::errln!("\nDone with --force. What to do now:");
        for (i, step) in forced_steps.iter().enumerate() {
            crate::errln!("  {}. {step}", i + 1);
        }
    }
    Ok(())
}

/// A version of the kind that PROJECT records but the static reader did not find, while the crate
/// invokes item macros, is taken as defined by one of them (`macro_rules!`): `edit api` cannot
/// edit it (it is not in the source as written) and would write a CRD without it, so it refuses,
/// naming the version and each macro's place, with what to do by hand.
fn refuse_versions_in_macros(
    project: &Project,
    found: &[FoundVersion],
    macros: &[crdgen::ItemMacro],
    group: &str,
    kind: &str,
    args: &EditApiArgs,
) -> Result<()> {
    if macros.is_empty() {
        return Ok(());
    }
    let unseen: Vec<&str> = (project.resources.iter())
        .filter(|r| r.kind == kind && r.qualified_group() == group && r.has_api())
        .map(|r| r.version.as_str())
        .filter(|v| {
            !found
                .iter()
                .any(|f| f.group == group && f.kind == kind && f.version == *v)
        })
        .collect();
    if unseen.is_empty() {
        return Ok(());
    }
    let places: Vec<String> = (macros.iter())
        .map(|(loc, name)| format!("`{name}!` at {loc}"))
        .collect();
    let target = args.gvk.version.trim();
    bail!(
        "{kind}.{group} version{} {} (in PROJECT) {} not in the types as written: a macro defines {} ({}), and edit api edits only the `#[kube(...)]` it can see{}. Nothing was written.\n  \
         change the `#[kube(...)]` inside the macro by hand (storage = false, served = false, deprecated), then run `operator-rs generate crds --exact` (it expands macros through the compiler)",
        if unseen.len() > 1 { "s" } else { "" },
        unseen.join(", "),
        if unseen.len() > 1 { "are" } else { "is" },
        if unseen.len() > 1 { "them" } else { "it" },
        places.join(", "),
        if unseen.contains(&target) {
            String::new()
        } else {
            format!(", and writing the CRD for {target} would drop what the macro defines")
        }
    );
}

fn or_example<'a>(given: &'a str, example: &'a str) -> &'a str {
    if given.trim().is_empty() {
        example
    } else {
        given
    }
}

/// The full group and the kind `args` name, or a refusal naming the kinds there are.
fn find_kind(
    project: &Project,
    found: &[FoundVersion],
    args: &EditApiArgs,
) -> Result<(String, String)> {
    let group = args.gvk.group.trim();
    let kind = args.gvk.kind.trim();
    let qualified = match group {
        "" => project.domain.clone(),
        g if g == project.domain || g.ends_with(&format!(".{}", project.domain)) => g.to_string(),
        g => format!("{g}.{}", project.domain),
    };
    let in_group = |f: &&FoundVersion| f.group == group || f.group == qualified;
    if let Some(f) = found.iter().filter(in_group).find(|f| f.kind == kind) {
        return Ok((f.group.clone(), f.kind.clone()));
    }
    if found.is_empty() {
        bail!(
            "this project declares no kinds (no `#[derive(CustomResource)]` under src/), so there is no {kind} to edit\n  create one first: operator-rs create api --group {} --version v1 --kind {kind}",
            or_example(group, "batch")
        );
    }
    let mut kinds: Vec<(&str, &str)> = found
        .iter()
        .map(|f| (f.kind.as_str(), f.group.as_str()))
        .collect();
    kinds.sort();
    kinds.dedup();
    let short = |g: &str| {
        project
            .resources
            .iter()
            .find(|r| r.qualified_group() == g && r.has_api())
            .map_or(g.to_string(), |r| r.group.clone())
    };
    let names: Vec<&str> = kinds.iter().map(|(k, _)| *k).collect();
    let elsewhere: Vec<&str> = kinds
        .iter()
        .filter(|(k, _)| *k == kind)
        .map(|(_, g)| *g)
        .collect();
    // The command line meant, for the kind found instead: at the version asked for if it has
    // it (else its first), with the changes asked for.
    let example = |g: &str, k: &str| {
        let versions: Vec<&str> = (found.iter())
            .filter(|f| f.group == g && f.kind == k)
            .map(|f| f.version.as_str())
            .collect();
        let version = (versions.iter())
            .find(|v| **v == args.gvk.version.trim())
            .or(versions.first())
            .copied()
            .unwrap_or_default();
        format!(
            "operator-rs edit api --group {} --version {version} --kind {k}{}",
            short(g),
            change_flags(args)
        )
    };
    let hint = if let Some(g) = elsewhere.first() {
        format!("{kind} is in group {g}\n  e.g. {}", example(g, kind))
    } else if let Some(s) = suggest(kind, &names) {
        let g = kinds.iter().find(|(k, _)| *k == s).map_or("", |(_, g)| g);
        format!("did you mean {s}?\n  e.g. {}", example(g, s))
    } else {
        format!(
            "the kinds are {}",
            kinds
                .iter()
                .map(|(k, g)| format!("{k} ({})", short(g)))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    bail!("no kind {kind} in group {qualified}: {hint}");
}

/// The changes `args` ask for, as flags (each with a leading space).
fn change_flags(args: &EditApiArgs) -> String {
    let mut flags = String::new();
    if args.storage {
        flags.push_str(" --storage");
    }
    if let Some(served) = args.served {
        flags.push_str(&format!(" --served={served}"));
    }
    match args.deprecated.as_deref() {
        Some("") => flags.push_str(" --deprecated"),
        Some(warning) => flags.push_str(&format!(" --deprecated={warning:?}")),
        None => {}
    }
    if args.no_deprecated {
        flags.push_str(" --no-deprecated");
    }
    flags
}

/// The index of `args.gvk.version` among `versions`, or a refusal naming the versions there are.
fn find_version(versions: &[Version], args: &EditApiArgs, group: &str) -> Result<usize> {
    let version = args.gvk.version.trim();
    if let Some(i) = versions.iter().position(|v| v.found.version == version) {
        return Ok(i);
    }
    let kind = &versions[0].found.kind;
    let names: Vec<&str> = versions.iter().map(|v| v.found.version.as_str()).collect();
    let listed = versions
        .iter()
        .map(|v| format!("{} (at {})", v.found.version, v.found.loc))
        .collect::<Vec<_>>()
        .join(", ");
    let hint = match suggest(version, &names) {
        Some(s) => format!("did you mean {s}? "),
        None => String::new(),
    };
    // The `create api` offered must itself be accepted: a version create api refuses (`V2`)
    // is named as invalid, and the command offered is for its valid form when there is one.
    let add = |v: &str| {
        format!(
            "operator-rs create api --group {} --version {v} --kind {kind} --controller=false",
            or_example(&args.gvk.group, group)
        )
    };
    let next = match names::validate_version(version) {
        Ok(()) => format!("to add a version: {}", add(version)),
        Err(e) => {
            let lower = version.to_ascii_lowercase();
            let valid = names::validate_version(&lower).is_ok();
            format!(
                "{version:?} is not a valid version either: it {}\n  {}",
                e.rule,
                if valid && names.contains(&lower.as_str()) {
                    format!("e.g. --version {lower}")
                } else if valid {
                    format!("to add version {lower}: {}", add(&lower))
                } else {
                    format!("e.g. --version {}", names[0])
                }
            )
        }
    };
    bail!("{kind}.{group} has no version {version}: {hint}its versions are {listed}\n  {next}");
}

/// The storage version once `target` is written, decided as `generate crds` decides it.
fn storage_after(
    versions: &[Version],
    target: &[Settings],
    group: &str,
    kind: &str,
    project: &Project,
) -> Result<String> {
    let declared: Vec<DeclaredVersion<'_>> = versions
        .iter()
        .zip(target)
        .map(|(v, t)| DeclaredVersion {
            version: &v.found.version,
            loc: &v.found.loc,
            storage: t.storage,
        })
        .collect();
    // The warning, if any, is printed when the CRDs are regenerated.
    let (stored, _) = crdgen::storage_version(group, kind, &declared, project)?;
    Ok(stored)
}

/// A storage version is served, and a CRD serves at least one version.
fn refuse_unserved(
    versions: &[Version],
    target: &[Settings],
    me: usize,
    stored: &str,
    args: &EditApiArgs,
) -> Result<()> {
    let v = &versions[me].found;
    let cmd = |version: &str, flags: &str| {
        format!(
            "operator-rs edit api --group {} --version {version} --kind {} {flags}",
            or_example(&args.gvk.group, &v.group),
            v.kind
        )
    };
    if !target[me].served && stored == v.version {
        if args.storage {
            bail!(
                "{} {} is not served (`served = false` at {}), and a storage version must be served; serve it as well:\n  {}",
                v.version,
                v.kind,
                v.loc,
                cmd(&v.version, "--storage --served=true")
            );
        }
        let others = || {
            versions
                .iter()
                .zip(target)
                .filter(|(o, _)| o.found.version != v.version)
        };
        let fix = if let Some((o, _)) = others().find(|(_, t)| t.served) {
            cmd(&o.found.version, "--storage")
        } else if let Some((o, _)) = others().next() {
            cmd(&o.found.version, "--storage --served=true")
        } else {
            // The only version: there is no other to store in until one is added.
            let new = new_version_name(versions);
            bail!(
                "{} is the only version of {} (at {}), its storage version, and a CRD must serve its storage version; to stop serving {} add a version, make it the storage version, then unserve {}:\n  operator-rs create api --group {} --version {new} --kind {} --controller=false\n  {}\n  {}",
                v.version,
                v.kind,
                v.loc,
                v.version,
                v.version,
                or_example(&args.gvk.group, &v.group),
                v.kind,
                cmd(&new, "--storage"),
                cmd(&v.version, "--served=false")
            );
        };
        bail!(
            "{} is the storage version of {}, and a storage version must be served; make another version the storage version first:\n  {fix}",
            v.version,
            v.kind,
        );
    }
    if !target.iter().any(|t| t.served) {
        let listed = versions
            .iter()
            .map(|o| o.found.version.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        bail!(
            "{} is the only served version of {} (versions: {listed}), and a CRD must serve at least one; serve another first, e.g.\n  {}",
            v.version,
            v.kind,
            cmd(
                versions
                    .iter()
                    .map(|o| o.found.version.as_str())
                    .find(|o| *o != v.version)
                    .unwrap_or("<another version>"),
                "--served=true"
            )
        );
    }
    Ok(())
}

/// A version name the kind does not have yet, after its highest `v<N>` (`v2` after `v1` or
/// `v1beta1`).
fn new_version_name(versions: &[Version]) -> String {
    let major = |v: &str| -> u32 {
        let digits: String = (v.strip_prefix('v').unwrap_or(""))
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().unwrap_or(0)
    };
    let top = (versions.iter())
        .map(|v| major(&v.found.version))
        .max()
        .unwrap_or(0);
    (top + 1..)
        .map(|n| format!("v{n}"))
        .find(|n| versions.iter().all(|v| &v.found.version != n))
        .expect("an unused version")
}

/// The attribute changes that take a version from `now` to `target`.
fn changes_between(now: &Settings, target: &Settings) -> Vec<Change> {
    let mut out = Vec::new();
    if now.storage != target.storage {
        out.push(if target.storage {
            Change::Remove("storage")
        } else {
            Change::Set("storage", "storage = false".into())
        });
    }
    if now.served != target.served {
        out.push(if target.served {
            Change::Remove("served")
        } else {
            Change::Set("served", "served = false".into())
        });
    }
    if now.deprecated != target.deprecated {
        out.push(match &target.deprecated {
            None => Change::Remove("deprecated"),
            Some(None) => Change::Set("deprecated", "deprecated".into()),
            // Debug of a str is a valid Rust string literal (quotes, backslashes, control
            // characters escaped).
            Some(Some(w)) => Change::Set("deprecated", format!("deprecated = {w:?}")),
        });
    }
    out
}

/// The splices of the file that make `changes` to a version's `#[kube(...)]` attributes: a key
/// set where it is written (dropped from any other attribute), else in the attribute that
/// declares `version`; each changed attribute laid out as rustfmt would.
fn edit_struct(root: &Path, v: &Version, changes: &[Change]) -> Result<Vec<Splice>> {
    let home = v
        .attrs
        .iter()
        .position(|a| a.items.iter().any(|i| i.key == "version"))
        .unwrap_or(0);
    let mut per_attr: Vec<Vec<Change>> = vec![Vec::new(); v.attrs.len()];
    for change in changes {
        let (key, set) = match change {
            Change::Remove(k) => (*k, false),
            Change::Set(k, _) => (*k, true),
        };
        let holders: Vec<usize> = (0..v.attrs.len())
            .filter(|a| v.attrs[*a].items.iter().any(|i| i.key == key))
            .collect();
        let keeper = if set {
            Some(holders.first().copied().unwrap_or(home))
        } else {
            None
        };
        for (a, attr_changes) in per_attr.iter_mut().enumerate() {
            if Some(a) == keeper {
                attr_changes.push(change.clone());
            } else if holders.contains(&a) {
                attr_changes.push(Change::Remove(key));
            }
        }
    }
    let mut out = Vec::new();
    for (attr, changes) in v.attrs.iter().zip(per_attr) {
        let edited = kube_attr::edit(&attr.text, &changes).map_err(|e| {
            anyhow::anyhow!(
                "{}: cannot edit the `#[kube(...)]` attribute of {} {}: {e}",
                v.found.loc,
                v.found.version,
                v.found.kind
            )
        })?;
        let Some(edited) = edited else { continue };
        let laid_out = attr
            .indent
            .as_deref()
            .and_then(|indent| kube_attr::rustfmt(&edited, attr.depth, indent, root))
            .unwrap_or(edited);
        out.push((attr.range.clone(), laid_out));
    }
    Ok(out)
}

/// Read a version's `#[kube(...)]` attributes from its file.
fn read_version(tree: &DiskTree, found: FoundVersion) -> Result<Version> {
    let file = &found.loc.file;
    let full = tree
        .read(file)?
        .with_context(|| format!("{} disappeared", file.display()))?;
    // The reader's lines and columns are those of the text without a byte-order mark.
    let bom = if full.starts_with('\u{feff}') { 3 } else { 0 };
    let text = &full[bom..];
    let (parsed, _) =
        crate::syntax::parse_file(text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let (attrs, depth) = struct_attrs(&parsed.items, &found, 0).with_context(|| {
        format!(
            "{}: no struct {} found where the reader saw it",
            found.loc, found.kind
        )
    })?;
    let mut out = Vec::new();
    for a in attrs.iter().filter(|a| a.path().is_ident("kube")) {
        let start = offset(text, a.pound_token.span.start());
        let end = offset(text, a.bracket_token.span.close().end());
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let before = &text[line_start..start];
        let attr_text = text[start..end].to_string();
        let parsed =
            kube_attr::parse(&attr_text).map_err(|e| anyhow::anyhow!("{}: {e}", found.loc))?;
        out.push(AttrAt {
            range: start + bom..end + bom,
            text: attr_text,
            items: parsed.items,
            depth,
            indent: before.trim().is_empty().then(|| before.to_string()),
        });
    }
    let now = settings(&out, &found)?;
    Ok(Version {
        found,
        attrs: out,
        now,
    })
}

/// The attributes of the struct or enum whose name is at `found.loc`, and how many inline
/// `mod`s deep it is.
fn struct_attrs<'a>(
    items: &'a [syn::Item],
    found: &FoundVersion,
    depth: usize,
) -> Option<(&'a [syn::Attribute], usize)> {
    let at = |ident: &syn::Ident| {
        let s = ident.span().start();
        s.line == found.loc.line && s.column + 1 == found.loc.column
    };
    for item in items {
        match item {
            syn::Item::Struct(s) if at(&s.ident) => return Some((&s.attrs, depth)),
            syn::Item::Enum(e) if at(&e.ident) => return Some((&e.attrs, depth)),
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content
                    && let Some(hit) = struct_attrs(inner, found, depth + 1)
                {
                    return Some(hit);
                }
            }
            _ => {}
        }
    }
    None
}

/// The byte offset of a line and column (in characters) of `text`.
fn offset(text: &str, at: LineColumn) -> usize {
    let line_start = if at.line <= 1 {
        0
    } else {
        text.match_indices('\n')
            .nth(at.line - 2)
            .map_or(text.len(), |(i, _)| i + 1)
    };
    text[line_start..]
        .char_indices()
        .nth(at.column)
        .map_or(text.len(), |(i, _)| line_start + i)
}

/// What the attributes declare (kube-derive's defaults where they say nothing).
fn settings(attrs: &[AttrAt], found: &FoundVersion) -> Result<Settings> {
    let mut s = Settings {
        storage: found.storage,
        served: true,
        deprecated: None,
    };
    for item in attrs.iter().flat_map(|a| &a.items) {
        match item.key.as_str() {
            "served" => {
                s.served = item.as_bool().with_context(|| {
                    format!(
                        "{}: `served` of {} {} is not `true` or `false`",
                        found.loc, found.version, found.kind
                    )
                })?
            }
            "deprecated" => {
                s.deprecated = Some(item.value.as_ref().map(|v| {
                    syn::parse_str::<syn::LitStr>(v).map_or_else(|_| v.clone(), |l| l.value())
                }))
            }
            _ => {}
        }
    }
    Ok(s)
}
