//! The switch of a project's manager between cluster-scoped and namespace-scoped, and between
//! one active replica and a sharded manager (`edit --namespaced` / `edit --sharded`), as
//! `init --namespaced` / `init --sharded` would have scaffolded it: the plan those commands
//! hand to [`finish`](super::finish()).
//!
//! The files a switch owns are the scaffolded ones whose text depends on the setting (the
//! templates rendered both ways differ: `config/rbac/role_binding.yaml`, the editor and viewer
//! roles, `src/main.rs`'s `Manager::new` line, `config/manager/`'s replicas and
//! PodDisruptionBudget), plus PROJECT and the regenerated `config/rbac/role.yaml`. Each is
//! rewritten only where it still reads as scaffolded: the whole file, or else the one passage
//! the setting changes, found exactly once; a file only one setting has is added or removed
//! (removed only as scaffolded). A file edited there is refused (all listed, nothing written)
//! unless `--force`; a Rust file is never overwritten whole.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use anyhow::{Result, bail};

use super::Plan;
use crate::project::{self, Project};
use crate::scaffold::Report;
use crate::scaffold::context::{ApiContext, ApiParts, InitContext};
use crate::scaffold::indent;
use crate::workspace::{DiskTree, Overlay, SourceTree};

/// What `init` takes to make `project`'s settings: its flags the settings add.
fn init_flags(project: &Project) -> String {
    let mut flags = String::new();
    if project.namespaced {
        flags.push_str(" --namespaced");
    }
    if project.sharded {
        flags.push_str(" --sharded");
    }
    flags
}

/// Plan the switch of `before`, the project on `disk`, to `after`'s settings (`target`: them in
/// words, for a refusal: `namespace-scoped`); `force`: even over scaffolded files the user
/// edited (never a Rust file). Refused, nothing written, where a Rust file no longer holds the
/// code the switch changes.
pub fn plan<'a>(
    disk: &'a DiskTree,
    before: &Project,
    mut after: Project,
    target: &str,
    force: bool,
) -> Result<Plan<'a>> {
    let mut overlay = Overlay::new(disk);
    let old = scoped_files(before)?;
    let new = scoped_files(&after)?;
    let mut conflicts = Vec::new();
    let mut by_hand = Vec::new();
    let paths: BTreeSet<&PathBuf> = old.keys().chain(new.keys()).collect();
    for path in paths {
        let current = overlay.read(path)?;
        match (old.get(path), new.get(path), current) {
            (Some(old_text), Some(new_text), _) if old_text == new_text => {}
            // A file the user removed (an editor role they did not want) stays removed.
            (Some(_), Some(_), None) | (Some(_), None, None) => {}
            (Some(old_text), Some(new_text), Some(current)) => {
                match rewrite(&current, old_text, new_text) {
                    Some(text) => overlay.put(path.clone(), text),
                    None if path.extension().is_some_and(|e| e == "rs") => {
                        by_hand.push((path.clone(), passage(old_text, new_text)))
                    }
                    None if force => overlay.put(path.clone(), new_text.clone()),
                    None => conflicts.push(path.clone()),
                }
            }
            // A file only the new settings have (the PodDisruptionBudget).
            (None, Some(new_text), None) => overlay.put(path.clone(), new_text.clone()),
            (None, Some(new_text), Some(current)) if current == *new_text => {}
            (None, Some(new_text), Some(_)) if force => overlay.put(path.clone(), new_text.clone()),
            // A file only the old settings have: removed while it is as scaffolded.
            (Some(old_text), None, Some(current)) if current == *old_text || force => {
                overlay.remove(path.clone())
            }
            (None, Some(_), Some(_)) | (Some(_), None, Some(_)) => conflicts.push(path.clone()),
            (None, None, _) => {}
        }
    }
    if !by_hand.is_empty() {
        let steps: Vec<String> = (by_hand.iter())
            .map(|(path, (old, new))| {
                format!(
                    "  in {}, replace\n{}\n  with\n{}",
                    path.display(),
                    indent(old),
                    indent(new)
                )
            })
            .collect();
        bail!(
            "cannot make the manager {}: these Rust files no longer hold the code the switch changes, \
             and operator-rs does not overwrite Rust files. Nothing was written.\n{}\n  \
             Make that change by hand (or put the scaffolded line back), then re-run this command.",
            target,
            steps.join("\n")
        );
    }
    conflicts.sort();
    let (namespaced, sharded) = (after.namespaced, after.sharded);
    if namespaced != before.namespaced {
        project::history::record_init_flag(&mut after, "--namespaced", namespaced);
    }
    if sharded != before.sharded {
        project::history::record_init_flag(&mut after, "--sharded", sharded);
    }
    Ok(Plan {
        report: Report {
            conflicts,
            ..Report::default()
        },
        refusal_note: Some(format!(
            "(They are the files whose text the manager's settings decide; see what `operator-rs init{}` writes.)",
            init_flags(&after)
        )),
        ..Plan::new(overlay, after)
    })
}

/// Every file `init` and `create api` (for each kind with a CRD) scaffold for `project`.
fn scoped_files(project: &Project) -> Result<BTreeMap<PathBuf, String>> {
    let ctx = InitContext::new(project, "", "none", String::new());
    let mut files = crate::scaffold::render_files(&ctx)?;
    for r in project.resources.iter().filter(|r| r.has_api()) {
        let parts = ApiParts {
            types: true,
            controller: false,
        };
        files.extend(crate::scaffold::render_files(&ApiContext::new(
            project, r, parts,
        ))?);
    }
    Ok(files)
}

/// The lines `old` and `new` differ in: `(old passage, new passage)`. Where one side is empty
/// (lines only added or only removed), both get the line before and the line after, where there
/// are such lines, to anchor them.
fn passage(old: &str, new: &str) -> (String, String) {
    let (a, b): (Vec<&str>, Vec<&str>) = (
        old.split_inclusive('\n').collect(),
        new.split_inclusive('\n').collect(),
    );
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let max_suffix = a.len().min(b.len()) - prefix;
    let suffix = (a.iter().rev().zip(b.iter().rev()))
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    let context = usize::from(prefix + suffix == a.len() || prefix + suffix == b.len());
    let start = prefix.saturating_sub(context);
    let (end_a, end_b) = (
        (a.len() - suffix + context).min(a.len()),
        (b.len() - suffix + context).min(b.len()),
    );
    (a[start..end_a].concat(), b[start..end_b].concat())
}

/// `current` switched from `old` (the file as scaffolded for the other scope) to `new`: `new`
/// itself when `current` is `old` untouched, else `current` with the one passage the scope
/// changes replaced, if it is there exactly once; `None` when it is not.
fn rewrite(current: &str, old: &str, new: &str) -> Option<String> {
    if current == old || current == new {
        return Some(new.to_string());
    }
    let (from, to) = passage(old, new);
    if current.contains(&to) && !current.contains(&from) {
        return Some(current.to_string());
    }
    (current.matches(&from).count() == 1).then(|| current.replacen(&from, &to, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "a\nb\nkind: ClusterRole\nc\nd\n";
    const NEW: &str = "a\nb\nkind: Role\nc\nd\n";

    #[test]
    fn the_passage_is_the_changed_lines_anchored_by_context_only_when_one_side_is_empty() {
        assert_eq!(
            passage(OLD, NEW),
            ("kind: ClusterRole\n".into(), "kind: Role\n".into())
        );
        // An inserted line: the context alone on one side.
        assert_eq!(
            passage("a\nb\n", "a\nx\nb\n"),
            ("a\nb\n".into(), "a\nx\nb\n".into())
        );
    }

    #[test]
    fn rewrites_an_edited_file_only_where_the_scope_changes_it() {
        assert_eq!(rewrite(OLD, OLD, NEW).as_deref(), Some(NEW));
        let edited = "a\nb\nkind: ClusterRole\nc\nd\nmine: 1\n";
        assert_eq!(
            rewrite(edited, OLD, NEW).as_deref(),
            Some("a\nb\nkind: Role\nc\nd\nmine: 1\n")
        );
        // Edited inside the passage: not ours to guess.
        assert_eq!(rewrite("a\nb\nkind: Custom\nc\nd\n", OLD, NEW), None);
        // Already switched (by hand): left as it is.
        let switched = "a\nb\nkind: Role\nc\nd\nmine: 1\n";
        assert_eq!(rewrite(switched, OLD, NEW).as_deref(), Some(switched));
    }
}
