//! What `edit api` must not do silently: stop serving a version a controller of the project
//! watches (its manager stops at start), the conversion hub, or a version the cluster's CRD
//! still lists in `status.storedVersions`; move the storage version away from the conversion
//! hub. Each is refused with what to do, or with `--force` accepted with the exact steps; and
//! the advice printed after a move names only steps that apply.

use anyhow::{Result, bail};

use crate::cli::EditApiArgs;
use crate::crdgen::WatchedVersion;
use crate::project::{Project, Resource};

use super::{Settings, Version};

/// What the edit must be refused for (or, forced, followed by).
pub(super) struct Problem {
    /// Why it is refused.
    why: String,
    /// What to do (before it, or after it when forced).
    steps: String,
}

/// One kind's versions, before and after the edit, and what its source and PROJECT say of them.
pub(super) struct Edit<'a> {
    pub project: &'a Project,
    pub args: &'a EditApiArgs,
    pub group: &'a str,
    pub kind: &'a str,
    pub versions: &'a [Version],
    pub target: &'a [Settings],
    pub me: usize,
    /// The storage version before and after the edit.
    pub stored_before: &'a str,
    pub stored: &'a str,
    /// The versions of the kind the crate's controllers watch, or that a conversion's source
    /// takes as its hub.
    pub watched: Vec<WatchedVersion>,
}

impl Edit<'_> {
    /// The command that edits `version` with `flags`.
    fn cmd(&self, version: &str, flags: &str) -> String {
        format!(
            "operator-rs edit api --group {} --version {version} --kind {} {flags}",
            short_group(self.project, self.group, &self.args.gvk.group),
            self.kind
        )
    }

    fn version(&self) -> &str {
        &self.versions[self.me].found.version
    }

    /// The hub of the kind's conversion webhook: from PROJECT (`webhooks.conversion`), else from
    /// the source (`impl Spoke<Hub>`), with what says so.
    pub fn hub(&self) -> Option<(String, String)> {
        let recorded = (self.project.resources.iter())
            .filter(|r| r.kind == self.kind && r.qualified_group() == self.group)
            .find(|r| r.webhooks.as_ref().is_some_and(|w| w.conversion));
        if let Some(r) = recorded {
            return Some((r.version.clone(), project_says(r)));
        }
        (self.watched.iter())
            .find(|w| w.hub)
            .map(|w| (w.version.clone(), format!("{} at {}", w.what, w.at)))
    }

    /// The controllers' watches of `version`.
    fn watches(&self, version: &str) -> Vec<&WatchedVersion> {
        (self.watched.iter())
            .filter(|w| !w.hub && w.version == version)
            .collect()
    }

    /// A served version other than this one after the edit, and where its type is.
    fn other_served(&self) -> Option<&Version> {
        (self.versions.iter().zip(self.target))
            .find(|(v, t)| v.found.version != self.version() && t.served)
            .map(|(v, _)| v)
    }

    /// The CRD's name, as the API server knows it.
    fn crd_name(&self) -> String {
        let plural = (self.project.resources.iter())
            .find(|r| r.kind == self.kind && r.qualified_group() == self.group)
            .map_or_else(|| crate::names::to_plural(self.kind), |r| r.plural.clone());
        format!("{plural}.{}", self.group)
    }
}

/// What PROJECT records of a hub, for messages.
fn project_says(r: &Resource) -> String {
    let spokes = r.webhooks.as_ref().map_or(Vec::new(), |w| w.spoke.clone());
    format!(
        "PROJECT: webhooks.conversion on {}, spokes [{}]",
        r.version,
        spokes.join(", ")
    )
}

/// The group as the user gave it (or as `create api` took it).
fn short_group(project: &Project, group: &str, given: &str) -> String {
    if !given.trim().is_empty() {
        return given.trim().to_string();
    }
    (project.resources.iter())
        .find(|r| r.qualified_group() == group)
        .map_or(group.to_string(), |r| r.group.clone())
}

/// The problems of the edit. Without `--force`, any is a refusal (nothing written); with it,
/// the steps to print once written.
pub(super) fn check(edit: &Edit<'_>) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let me = edit.me;
    let v = edit.version();
    let (group, kind) = (edit.group, edit.kind);
    if edit.versions[me].now.served && !edit.target[me].served {
        let serve_instead = edit.other_served().map_or_else(
            || "another version".to_string(),
            |o| format!("{} (its type is at {})", o.found.version, o.found.loc),
        );
        for w in edit.watches(v) {
            problems.push(Problem {
                why: format!(
                    "{group}/{v} {kind} is watched by a controller of this project ({} at {}): a manager whose controller watches a version the API server does not serve stops at start (`the API server does not serve {group}/{v}`)",
                    w.what, w.at
                ),
                steps: format!(
                    "make the controller watch {kind} of {serve_instead}: change the type at {} and adapt the code to its fields, then check with `cargo test`",
                    w.at
                ),
            });
        }
        if let Some((hub, says)) = edit.hub().filter(|(h, _)| h == v) {
            problems.push(Problem {
                why: format!(
                    "{group}/{hub} {kind} is the hub of its conversion webhook ({says}): every conversion between {kind}'s versions goes through {hub}'s types, served or not"
                ),
                steps: format!(
                    "keep {hub}'s types (at {}) as long as the conversion webhook converts through them: never delete them; unserving {hub} only hides it from clients",
                    edit.versions[me].found.loc
                ),
            });
        }
        problems.extend(stored_on_cluster(edit)?);
    }
    if edit.args.storage
        && edit.stored != edit.stored_before
        && let Some((hub, says)) = edit.hub().filter(|(h, _)| h != edit.stored)
    {
        problems.push(Problem {
            why: format!(
                "the conversion webhook of {kind} has {hub} as its hub ({says}), and the hub is the storage version: moving the storage version to {} leaves the hub behind, and `operator-rs create webhook` for {kind} is refused afterwards",
                edit.stored
            ),
            steps: format!(
                "conversion still goes through {hub}: keep its types (never delete them while the conversion webhook converts through them); to make the hub the storage version again: {}",
                edit.cmd(&hub, "--storage")
            ),
        });
    }
    if problems.is_empty() {
        return Ok(Vec::new());
    }
    if edit.args.force {
        return Ok(problems.into_iter().map(|p| p.steps).collect());
    }
    let listed: Vec<String> = (problems.iter())
        .map(|p| format!("  - {}\n    what to do: {}", p.why, p.steps))
        .collect();
    bail!(
        "refusing to edit {group}/{v} {kind}:\n{}\n  Nothing was written. To do it anyway (then follow the steps printed): {} --force",
        listed.join("\n"),
        edit.cmd(v, super::change_flags(edit.args).trim_start())
    );
}

/// A version about to be unserved that the cluster's CRD still lists in `status.storedVersions`
/// (the cluster of the kubeconfig's current context, when one can be reached; else a warning).
/// A replay (`update`, the scaffold record) asks no cluster: it remakes files only, and the
/// command it replays was checked when it ran.
fn stored_on_cluster(edit: &Edit<'_>) -> Result<Option<Problem>> {
    if crate::ops::scaffold_record::in_replay() {
        return Ok(None);
    }
    let (v, kind, group) = (edit.version(), edit.kind, edit.group);
    let crd = edit.crd_name();
    let stored = match crate::cluster::stored_versions(&[&crd])? {
        Ok(mut stored) => stored.pop().flatten(),
        Err(why) => {
            crate::errln!(
                "warning: no cluster could be reached to check that no {kind} object is still stored as {v} ({why}).\n  Check that `kubectl get crd {crd} -o jsonpath='{{.status.storedVersions}}'` does not list {v}; if it does, run `{}` first.",
                crate::cluster::migrate_command(group, kind)
            );
            return Ok(None);
        }
    };
    let Some(stored) = stored.filter(|s| s.iter().any(|s| s == v)) else {
        return Ok(None);
    };
    Ok(Some(Problem {
        why: format!(
            "the cluster's CRD {crd} still lists {v} in status.storedVersions [{}]: {kind} objects may be stored as {v}",
            stored.join(", ")
        ),
        steps: format!(
            "rewrite them in the storage version {} first (the cluster's CRD must have it as its storage version: `make install`): {}",
            edit.stored,
            crate::cluster::migrate_command(group, kind)
        ),
    }))
}

/// Step 3 of the advice after the storage version moved away from `old`: when its types can go,
/// or what must happen first (a controller watching it, the conversion hub).
pub(super) fn when_old_can_go(edit: &Edit<'_>, old: &str) -> String {
    let mut first = Vec::new();
    for w in edit.watches(old) {
        first.push(format!(
            "make the controller watch {} instead ({} at {})",
            edit.stored, w.what, w.at
        ));
    }
    if let Some((_, says)) = edit.hub().filter(|(h, _)| h == old) {
        return format!(
            "keep {old}'s types: {old} is the conversion hub ({says}), and every conversion goes through it{}",
            if first.is_empty() {
                String::new()
            } else {
                format!("; and {}", first.join("; "))
            }
        );
    }
    let removal = format!(
        "{old} can go: delete its types and run operator-rs generate crds (refused while the cluster's CRD still lists {old} in status.storedVersions)"
    );
    if first.is_empty() {
        format!("then {removal}")
    } else {
        format!("{}; then {removal}", first.join("; "))
    }
}
