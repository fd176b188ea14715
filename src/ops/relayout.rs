//! The move of a project between the single-group layout (`src/api/<version>/`) and the
//! multigroup one (`src/api/<group>/<version>/`, kubebuilder's `edit --multigroup`), as
//! `init --multigroup` and the same commands would have laid it out: the plan `edit
//! --multigroup` hands to [`finish`](super::finish()).
//!
//! What moves: the files of each kind the scaffold made (types, controller, webhooks), with
//! whatever the user wrote in them (the types are user code: moved, never regenerated). What is
//! rewritten: the module declarations and registrations the scaffold inserted in `mod.rs` files
//! (each removed where it was inserted and inserted again at its marker in the new layout), and
//! every Rust path into a moved module in `src/` and `tests/` (`crate::api::v1::Frigate` ->
//! `crate::api::ship::v1::Frigate`), the user's included. A `mod.rs` left with nothing but its
//! scaffolded text is removed. Refused, with nothing written: a move onto an existing file, two
//! kinds that the target layout would put in one file (`--multigroup=false` with one kind name
//! in two groups of a version), and a declaration the scaffold wrote that is no longer there as
//! written.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::{Crds, Plan};
use crate::names;
use crate::project::{self, Project, Resource};
use crate::scaffold::context::{ApiContext, ApiParts, WebhookContext, WebhookTypes};
use crate::scaffold::insertion_points;
use crate::scaffold::{Action, Report};
use crate::workspace::{DiskTree, Overlay, SourceTree};

/// The layout's name in messages: `multigroup` or `single-group`.
pub fn layout_name(multigroup: bool) -> &'static str {
    if multigroup {
        "multigroup"
    } else {
        "single-group"
    }
}

/// The move of a project to the other layout, planned, nothing written.
pub struct Relayout<'a> {
    /// What [`finish`](super::finish()) writes: the moves, the rewritten modules and paths,
    /// PROJECT in the new layout (the `init` flag recorded).
    pub plan: Plan<'a>,
    /// The module files of the old layout that hold code of the user's: they stay, undeclared.
    pub kept: Vec<String>,
    /// The files the move removes, whose folders go once they are empty
    /// ([`remove_emptied_folders`]).
    pub emptied: Vec<PathBuf>,
}

/// Plan the move of `before`, the project on `disk`, to the multigroup layout (`multigroup`) or
/// back to the single-group one. Refused, nothing written, as the module's doc says.
pub fn plan<'a>(disk: &'a DiskTree, before: &Project, multigroup: bool) -> Result<Relayout<'a>> {
    let mut after = before.clone();
    after.multigroup = multigroup;
    let layout = after.layout();
    for r in after.resources.iter_mut().filter(|r| r.has_api()) {
        r.path = layout.api_type(r);
    }

    if let Some(r) = (after.resources.iter())
        .find(|r| r.has_api() && layout.group_module(r) == project::layout::EXTERNAL_MODULE)
    {
        bail!(
            "cannot move {} to the multigroup layout: the module of group {} ({} {}) would be src/api/{}/, which holds the types of kinds from other projects' CRDs (create api --from-crd). Nothing was written.\n  \
             Keep the single-group layout, or move that kind to another group first.",
            before.project_name,
            r.group,
            r.api_version(),
            r.kind,
            project::layout::EXTERNAL_MODULE
        );
    }
    let mut overlay = Overlay::new(disk);
    let mut report = Report::default();
    let moves = moves(before, &after)?;
    let mut onto = Vec::new();
    let sources: BTreeSet<&String> = moves.iter().map(|m| &m.from).collect();
    for m in &moves {
        if !sources.contains(&m.to) && overlay.read(Path::new(&m.to))?.is_some() {
            onto.push(format!("  {} -> {} (exists)", m.from, m.to));
        }
    }
    if !onto.is_empty() {
        bail!(
            "cannot move {} to the {} layout: these moves would overwrite a file. Nothing was written.\n{}\n  \
             Move or remove those files (they are not the scaffold's), then re-run: operator-rs edit --multigroup{}",
            before.project_name,
            layout_name(multigroup),
            onto.join("\n"),
            if multigroup { "" } else { "=false" }
        );
    }
    let mut moved = BTreeMap::new();
    for m in &moves {
        if let Some(text) = overlay.read(Path::new(&m.from))? {
            moved.insert(m.to.clone(), text);
            overlay.remove(&m.from);
            report.record(Path::new(&m.from), Action::Remove);
        }
    }
    for (to, text) in moved {
        overlay.put(&to, text);
        report.record(Path::new(&to), Action::Create);
    }

    // The module files and declarations of each layout.
    let (old_files, old_fragments) = module_text(before)?;
    let (new_files, new_fragments) = module_text(&after)?;
    for (path, text) in &new_files {
        if overlay.read(path)?.is_none() {
            overlay.put(path.clone(), text.clone());
            report.record(path, Action::Create);
        }
    }
    let mut by_hand = Vec::new();
    for (path, marker, text) in old_fragments.iter().filter(|f| !new_fragments.contains(f)) {
        let Some(current) = overlay.read(path)? else {
            continue;
        };
        match insertion_points::remove_text(&current, text) {
            Some(rest) => {
                overlay.put(path.clone(), rest);
                report.record(path, Action::Update);
            }
            None => by_hand.push(format!(
                "  {} no longer holds what operator-rs inserted at its `{}{marker}` marker; remove it by hand:\n{}",
                path.display(),
                insertion_points::PREFIX,
                crate::scaffold::indent(text)
            )),
        }
    }
    for (path, marker, text) in new_fragments.iter().filter(|f| !old_fragments.contains(f)) {
        let Some(current) = overlay.read(path)? else {
            continue;
        };
        let fragment = insertion_points::Fragment {
            marker,
            text,
            owns: &[],
        };
        match insertion_points::insert(&current, path, &fragment) {
            insertion_points::Inserted::Added(new) => {
                overlay.put(path.clone(), new);
                report.record(path, Action::Update);
            }
            insertion_points::Inserted::AlreadyPresent => {}
            _ => by_hand.push(format!(
                "  {} has no `{}{marker}` marker line (once); add by hand:\n{}",
                path.display(),
                insertion_points::PREFIX,
                crate::scaffold::indent(text)
            )),
        }
    }
    if !by_hand.is_empty() {
        bail!(
            "cannot move {} to the {} layout: the module declarations operator-rs wrote were changed, and it does not guess at Rust you wrote. Nothing was written.\n{}\n  \
             Put the scaffolded lines back (e.g. from version control), then re-run.",
            before.project_name,
            layout_name(multigroup),
            by_hand.join("\n")
        );
    }
    // A module file of the old layout left as the scaffold made it, declaring nothing, goes;
    // one with code of yours stays, and is named.
    let mut kept = Vec::new();
    for (path, pristine) in old_files
        .iter()
        .filter(|(p, _)| !new_files.contains_key(*p))
    {
        match overlay.read(path)? {
            Some(text) if text == *pristine => {
                overlay.remove(path);
                report.record(path, Action::Remove);
            }
            Some(_) => kept.push(path.display().to_string()),
            None => {}
        }
    }

    rewrite_paths(before, &after, &mut overlay, &mut report)?;

    project::history::record_init_flag(&mut after, "--multigroup", multigroup);
    let emptied: Vec<PathBuf> = overlay.removed().iter().cloned().collect();
    Ok(Relayout {
        plan: Plan {
            report,
            crds: Crds::Report,
            ..Plan::new(overlay, after)
        },
        kept,
        emptied,
    })
}

/// Remove the folders under `src/` that the removal of `emptied` (relative to `root`) left
/// empty (`remove_dir` removes only an empty one; the first that is not ends the walk up).
pub fn remove_emptied_folders(root: &Path, emptied: &[PathBuf]) {
    for path in emptied {
        for dir in path
            .ancestors()
            .skip(1)
            .take_while(|d| d.starts_with("src"))
        {
            if dir != Path::new("src") && std::fs::remove_dir(root.join(dir)).is_err() {
                break;
            }
        }
    }
}

/// One file of a kind moving to its place in the other layout.
struct Move {
    from: String,
    to: String,
}

/// The files of each kind the scaffold made, from their place in `before`'s layout to that in
/// `after`'s; refused when two would land on one file.
fn moves(before: &Project, after: &Project) -> Result<Vec<Move>> {
    let (old, new) = (before.layout(), after.layout());
    let mut out: Vec<(Move, String)> = Vec::new();
    let mut add = |from: String, to: String, r: &Resource| {
        if from != to && !out.iter().any(|(m, _)| m.from == from) {
            out.push((Move { from, to }, format!("{} {}", r.api_version(), r.kind)));
        }
    };
    for r in &before.resources {
        if r.has_api() {
            add(old.api_file(r), new.api_file(r), r);
        }
        if r.controller {
            add(old.controller_file(r), new.controller_file(r), r);
        }
        if let Some(w) = &r.webhooks {
            if w.defaulting || w.validation {
                add(old.webhook_file(r), new.webhook_file(r), r);
            }
            for spoke in &w.spoke {
                add(
                    old.conversion_file(r, spoke),
                    new.conversion_file(r, spoke),
                    r,
                );
            }
        }
    }
    let mut seen: BTreeMap<&str, &(Move, String)> = BTreeMap::new();
    for entry in &out {
        if let Some(other) = seen.insert(&entry.0.to, entry) {
            bail!(
                "cannot move {} to the {} layout: {} ({}) and {} ({}) would both be {}; in it, kinds of one version share a module, and controllers one folder. Nothing was written.\n  \
                 Keep the multigroup layout, or first remove one of the kinds (its files and its entry in PROJECT), e.g. rename it: operator-rs create api --group {} --version {} --kind <another name>",
                before.project_name,
                layout_name(after.multigroup),
                other.0.from,
                other.1,
                entry.0.from,
                entry.1,
                entry.0.to,
                before
                    .resources
                    .iter()
                    .find(|r| entry.1 == format!("{} {}", r.api_version(), r.kind))
                    .map_or("<group>", |r| r.group.as_str()),
                before
                    .resources
                    .iter()
                    .find(|r| entry.1 == format!("{} {}", r.api_version(), r.kind))
                    .map_or("<version>", |r| r.version.as_str()),
            );
        }
    }
    Ok(out.into_iter().map(|(m, _)| m).collect())
}

/// A fragment as rendered: its file, marker and text.
type Fragment = (PathBuf, String, String);

/// The module files (`mod.rs` under `src/`) the project's kinds make in its layout, as the
/// scaffold writes them, and the fragments it inserts into `mod.rs` files (declarations and
/// registrations).
fn module_text(project: &Project) -> Result<(BTreeMap<PathBuf, String>, Vec<Fragment>)> {
    let is_module = |p: &Path| p.starts_with("src") && p.ends_with("mod.rs");
    let mut files = BTreeMap::new();
    let mut fragments: Vec<Fragment> = Vec::new();
    let mut add = |f: BTreeMap<PathBuf, String>, fr: Vec<Fragment>| {
        files.extend(f.into_iter().filter(|(p, _)| is_module(p)));
        for f in fr.into_iter().filter(|(p, ..)| is_module(p)) {
            if !fragments.contains(&f) {
                fragments.push(f);
            }
        }
    };
    for r in project
        .resources
        .iter()
        .filter(|r| r.has_api() || r.controller)
    {
        let parts = ApiParts {
            types: true,
            controller: r.controller,
        };
        let ctx = ApiContext::new(project, r, parts);
        add(
            crate::scaffold::render_files(&ctx)?,
            crate::scaffold::render_fragments(&ctx)?,
        );
        let Some(w) = &r.webhooks else { continue };
        let types = WebhookTypes {
            defaulting: w.defaulting,
            validation: w.validation,
            conversion: w.conversion,
        };
        let ctx = WebhookContext::admission(project, r, types, true);
        add(
            crate::scaffold::render_files(&ctx)?,
            crate::scaffold::render_fragments(&ctx)?,
        );
        for spoke in &w.spoke {
            let Some(s) = project.find(&r.group, spoke, &r.kind) else {
                continue;
            };
            let ctx = WebhookContext::conversion(project, r, s, true);
            add(
                crate::scaffold::render_files(&ctx)?,
                crate::scaffold::render_fragments(&ctx)?,
            );
        }
    }
    // The files every project has (`src/api/mod.rs`...) are not the layout's.
    for keep in [
        "src/api/mod.rs",
        "src/controllers/mod.rs",
        "src/webhooks/mod.rs",
    ] {
        files.remove(Path::new(keep));
    }
    Ok((files, fragments))
}

/// Rewrite, in every Rust file of `src/` and `tests/`, the paths into the modules that moved:
/// a whole module where it moves as one (`api::v1` -> `api::ship::v1` when every kind of it is
/// of group ship), else each kind's items (`api::v1::Frigate`), and each controller's module.
fn rewrite_paths(
    before: &Project,
    after: &Project,
    overlay: &mut Overlay<'_>,
    report: &mut Report,
) -> Result<()> {
    let (old, new) = (before.layout(), after.layout());
    // Module -> the modules it becomes, and the item rules for modules that split.
    let mut modules: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut items: Vec<(String, String)> = Vec::new();
    let mut rule = |from_mod: String, to_mod: String, item_names: Vec<String>| {
        modules
            .entry(from_mod.clone())
            .or_default()
            .insert(to_mod.clone());
        for i in item_names {
            items.push((format!("{from_mod}::{i}"), format!("{to_mod}::{i}")));
        }
    };
    for r in &before.resources {
        let kind_items = vec![
            r.kind.clone(),
            format!("{}Spec", r.kind),
            format!("{}Status", r.kind),
        ];
        let snake = names::kind_snake(&r.kind);
        if r.has_api() {
            rule(
                format!("api::{}{}", old.group_path(r), r.version),
                format!("api::{}{}", new.group_path(r), r.version),
                kind_items,
            );
        }
        if let Some(w) = &r.webhooks {
            for v in std::iter::once(&r.version).chain(&w.spoke) {
                rule(
                    format!("webhooks::{}{v}", old.group_path(r)),
                    format!("webhooks::{}{v}", new.group_path(r)),
                    vec![snake.clone(), format!("{snake}_conversion")],
                );
            }
        }
        if r.controller {
            // The controllers' folder holds one module per kind: only its kinds' move.
            rule(
                format!("controllers::{}{snake}", old.group_path(r)),
                format!("controllers::{}{snake}", new.group_path(r)),
                Vec::new(),
            );
        }
    }
    let mut rules: Vec<(String, String)> = Vec::new();
    for (from, to) in &modules {
        if to.len() == 1 {
            let to = to.iter().next().expect("one");
            if from != to {
                rules.push((from.clone(), to.clone()));
            }
        }
    }
    for (from, to) in items {
        let module = from.rsplit_once("::").map_or("", |(m, _)| m);
        let whole = modules.get(module).is_some_and(|t| t.len() == 1);
        if from != to && !whole && !rules.contains(&(from.clone(), to.clone())) {
            rules.push((from, to));
        }
    }
    if rules.is_empty() {
        return Ok(());
    }
    let crate_name = before.crate_name.as_str();
    let mut files = overlay.files_under(Path::new("src"))?;
    files.extend(overlay.files_under(Path::new("tests"))?);
    for path in files
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
    {
        let Some(text) = overlay.read(&path)? else {
            continue;
        };
        let rewritten = rewrite_text(&text, &rules, crate_name);
        if rewritten != text {
            overlay.put(path.clone(), rewritten);
            report.record(&path, Action::Update);
        }
    }
    Ok(())
}

/// `text` with each path that starts with a rule's `from` (a whole segment sequence, rooted at
/// `crate::`, `<crate_name>::` or nothing: `api::v1::Frigate` in `check::<api::v1::Frigate>`)
/// starting with its `to` instead. A path below another crate's module is left alone
/// (`k8s_openapi::api::...`).
pub fn rewrite_text(text: &str, rules: &[(String, String)], crate_name: &str) -> String {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    'scan: while i < text.len() {
        let rest = &text[i..];
        let prev = text[..i].chars().next_back();
        if !prev.is_some_and(ident) {
            let before = &text[..i];
            let rooted = !before.ends_with("::")
                || before.ends_with("crate::")
                    && !before[..before.len() - "crate::".len()]
                        .chars()
                        .next_back()
                        .is_some_and(|c| ident(c) || c == ':')
                || before.ends_with(&format!("{crate_name}::"))
                    && !before[..before.len() - crate_name.len() - 2]
                        .chars()
                        .next_back()
                        .is_some_and(|c| ident(c) || c == ':');
            if rooted {
                for (from, to) in rules {
                    if rest.starts_with(from.as_str())
                        && !rest[from.len()..].chars().next().is_some_and(ident)
                    {
                        out.push_str(to);
                        i += from.len();
                        continue 'scan;
                    }
                }
            }
        }
        let c = rest.chars().next().expect("not at the end");
        out.push(c);
        i += c.len_utf8();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_rewritten_where_rooted_in_this_crate_only() {
        let rules = vec![
            ("api::v1".to_string(), "api::ship::v1".to_string()),
            (
                "controllers::frigate".to_string(),
                "controllers::ship::frigate".to_string(),
            ),
        ];
        let text = "use crate::api::v1::Frigate as Kind;\n\
                    use my_op::api::v1::{Frigate, FrigateSpec};\n\
                    use my_op::controllers::frigate::NAME;\n\
                    check::<api::v1::Frigate>();\n\
                    use k8s_openapi::api::v1::Pod;\n\
                    use crate::api::v1alpha1::Other;\n\
                    use crate::controllers::frigate_two::NAME;\n";
        let want = "use crate::api::ship::v1::Frigate as Kind;\n\
                    use my_op::api::ship::v1::{Frigate, FrigateSpec};\n\
                    use my_op::controllers::ship::frigate::NAME;\n\
                    check::<api::ship::v1::Frigate>();\n\
                    use k8s_openapi::api::v1::Pod;\n\
                    use crate::api::v1alpha1::Other;\n\
                    use crate::controllers::frigate_two::NAME;\n";
        assert_eq!(rewrite_text(text, &rules, "my_op"), want);
    }
}
