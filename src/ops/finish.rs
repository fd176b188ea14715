//! The one way a scaffolding command finishes, as kubebuilder's `machinery.Scaffold.Execute`
//! ends every plugin's command: the command checks its arguments and plans (its templates
//! rendered and its fragments inserted into an [`Overlay`], PROJECT as it leaves it), then hands
//! that [`Plan`] to [`finish`], which does the rest in one fixed order:
//!
//! 1. refuses the files the plan would replace without `--force` (all listed), before any work;
//! 2. records in PROJECT the scaffold its files are on ([`scaffold_record::stamp`]) and renders
//!    PROJECT over its text;
//! 3. regenerates the manifests into the overlay ([`regenerate_into`]);
//! 4. in a folder that is no project yet, refuses replacing any file that is there (all listed);
//! 5. checks the Rust about to be written ([`crate::scaffold::check`]), unless the plan is a
//!    tree the command does not vouch for ([`Plan::check_rust`]: `update`'s merge, `import`'s
//!    translation);
//! 6. writes every change at once, or nothing ([`write_all`]), into the folder (made when it is
//!    not there yet: `import`);
//! 7. prints one line a changed file ([`print_changes`]), unless the command says what it did
//!    its own way ([`Plan::print`]).
//!
//! Nothing reaches the disk before step 6, so a refusal at any step leaves the folder as it was.
//! A command's plan may be a few files over the project (`create api`) or a whole tree
//! (`import`'s staged project, `update`'s merge), put into the overlay file by file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::regenerate::{Crds, regenerate_into};
use super::scaffold_record;
use crate::project::{self, Project};
use crate::scaffold::{Action, Report};
use crate::workspace::{Overlay, SourceTree, Verb, write_all};

/// Whose the files already in the folder are, which decides what a command may replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// A project's: the scaffold's plan named the files it would replace ([`Report::conflicts`]);
    /// they are refused before any other work.
    Project,
    /// A folder that is no project yet (`init`): every file there is the user's, so any the
    /// command would replace or remove is refused, the regenerated manifests' too.
    User,
}

/// What a scaffolding command hands to [`finish`]: everything it decided, nothing written yet.
pub struct Plan<'a> {
    /// The files the command writes and removes, over the disk.
    pub overlay: Overlay<'a>,
    /// PROJECT as the command leaves it: stamped with the scaffold record, rendered over PROJECT's
    /// text, and the manifests regenerated from it. `None`: the command changes neither PROJECT
    /// nor the manifests (`upgrade-runtime`).
    pub project: Option<Project>,
    /// Whether the regeneration derives the CRDs, and what one that cannot be derived does.
    pub crds: Crds,
    /// What the scaffold did to each file (the word printed for it) and the files it would have
    /// to replace without `--force`.
    pub report: Report,
    /// Whose the files already there are.
    pub existing: Existing,
    /// Said after the list of refused files (what decides their text).
    pub refusal_note: Option<String>,
    /// The kind the command adds, named in the fix of a Rust name clash.
    pub kind: Option<String>,
    /// `--force`: replace the user's files.
    pub force: bool,
    /// Whether the Rust about to be written is checked (it parses, no name twice): `false` for a
    /// tree whose Rust the command does not make and vouch for (`update`'s merge may hold
    /// conflict markers; `import`'s translation is checked by the user's `cargo build`).
    pub check_rust: bool,
    /// Whether [`finish`] prints one line a changed file; `false` when the command reports what
    /// it did its own way (`import`'s summary, `update`'s report of merges and conflicts).
    pub print: bool,
}

impl<'a> Plan<'a> {
    /// A plan over `overlay` that leaves PROJECT as `project` and regenerates the manifests
    /// without the CRDs, in a project, without `--force`: the fields a command sets change it.
    pub fn new(overlay: Overlay<'a>, project: Project) -> Plan<'a> {
        Plan {
            project: Some(project),
            ..Plan::files(overlay)
        }
    }

    /// A plan that writes `overlay`'s files only: PROJECT and the manifests stay as they are.
    pub fn files(overlay: Overlay<'a>) -> Plan<'a> {
        Plan {
            overlay,
            project: None,
            crds: Crds::Skip,
            report: Report::default(),
            existing: Existing::Project,
            refusal_note: None,
            kind: None,
            force: false,
            check_rust: true,
            print: true,
        }
    }

    /// A plan that writes the whole tree `files` (paths relative to the root) into `disk`'s
    /// folder and removes `removals` there: PROJECT and the manifests are as the tree holds them.
    pub fn tree(
        disk: &'a crate::workspace::DiskTree,
        files: BTreeMap<PathBuf, String>,
        removals: BTreeSet<PathBuf>,
    ) -> Plan<'a> {
        let mut overlay = Overlay::new(disk);
        for path in removals {
            overlay.remove(path);
        }
        for (path, text) in files {
            overlay.put(path, text);
        }
        Plan::files(overlay)
    }
}

/// Finish a command with `plan`, in the order the module's doc gives. Returns what was written.
pub fn finish(root: &Path, plan: Plan<'_>) -> Result<Vec<(PathBuf, Verb)>> {
    let Plan {
        mut overlay,
        project,
        crds,
        report,
        existing,
        refusal_note,
        kind,
        force,
        check_rust,
        print,
    } = plan;
    if existing == Existing::Project && !report.conflicts.is_empty() {
        anyhow::bail!("{}", refusal(&report.conflicts, refusal_note.as_deref()));
    }
    if let Some(mut project) = project {
        let previous = overlay.read(Path::new(project::FILE))?;
        scaffold_record::stamp(root, &mut project);
        overlay.put(project::FILE, project.render_over(previous.as_deref())?);
        regenerate_into(&mut overlay, &project, crds)?;
    }
    let parsed = overlay.parsed().clone();
    let (pending, removals) = overlay.into_changes();
    if existing == Existing::User {
        refuse_replacing_user_files(root, &pending, &removals, &report.conflicts, force)?;
    }
    if check_rust {
        crate::scaffold::check::check(&pending, &parsed, kind.as_deref())?;
    }
    if !root.is_dir() {
        std::fs::create_dir_all(root).map_err(|e| crate::workspace::with_path(root, e))?;
    }
    let changes = write_all(root, &pending, &removals)?;
    if print {
        print_changes(&report, &changes);
    }
    Ok(changes)
}

/// The refusal of replacing `files`, then `note` on a line of its own.
fn refusal(files: &[PathBuf], note: Option<&str>) -> String {
    let mut text = crate::scaffold::refusal(files);
    if let Some(note) = note {
        text.push_str("\n  ");
        text.push_str(note);
    }
    text
}

/// Print every file a command changed, one line a file, as `cargo new` does: the scaffold's own
/// word for a template it overwrote, else what the write did (create, update, remove).
pub fn print_changes(report: &Report, changes: &[(PathBuf, Verb)]) {
    for (path, verb) in changes {
        let scaffolded = (report.actions.iter())
            .find(|(p, _)| p == path)
            .map(|(_, a)| *a);
        let word = match scaffolded {
            Some(Action::Overwrite) if *verb == Verb::Update => "overwrite",
            _ => verb.as_str(),
        };
        crate::errln!("{word:>10} {}", path.display());
    }
}

/// Refuse to replace or remove a file that was there before the command and that the command did
/// not create (in a folder that is not yet a project, every file is the user's): list them all,
/// with `known`, the ones found already. Nothing is refused with `force`.
fn refuse_replacing_user_files(
    root: &Path,
    writes: &BTreeMap<PathBuf, String>,
    removals: &BTreeSet<PathBuf>,
    known: &[PathBuf],
    force: bool,
) -> Result<()> {
    if force {
        return Ok(());
    }
    let mut conflicts = known.to_vec();
    for (rel, text) in writes {
        let full = root.join(rel);
        match std::fs::read(&full) {
            Ok(current) if current != text.as_bytes() => conflicts.push(rel.clone()),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(crate::workspace::with_path(&full, e).into()),
        }
    }
    conflicts.extend(removals.iter().filter(|r| root.join(r).exists()).cloned());
    if conflicts.is_empty() {
        return Ok(());
    }
    conflicts.sort();
    conflicts.dedup();
    anyhow::bail!("{}", crate::scaffold::refusal(&conflicts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::DiskTree;

    /// The files under `dir`, relative, with their text.
    fn files(dir: &Path) -> BTreeMap<PathBuf, String> {
        let mut out = BTreeMap::new();
        for entry in walkdir(dir) {
            let text = std::fs::read_to_string(&entry).unwrap();
            out.insert(entry.strip_prefix(dir).unwrap().to_path_buf(), text);
        }
        out
    }

    fn walkdir(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.extend(walkdir(&path));
            } else {
                out.push(path);
            }
        }
        out
    }

    #[test]
    fn the_plans_conflicts_are_refused_before_the_record_and_the_regeneration() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("README.md"), "mine\n").unwrap();
        let before = files(dir.path());
        // No crate here: deriving the CRDs (required) fails, after the refusal it must not reach.
        let finish_with = |conflicts: Vec<PathBuf>| {
            let disk = DiskTree::new(dir.path());
            let mut overlay = Overlay::new(&disk);
            overlay.put("src/new.rs", "pub struct New;\n".to_string());
            let plan = Plan {
                report: Report {
                    conflicts,
                    ..Report::default()
                },
                crds: Crds::Require,
                refusal_note: Some("(a note)".into()),
                ..Plan::new(overlay, Project::for_tests(Vec::new()))
            };
            crate::output::error_text(&finish(dir.path(), plan).unwrap_err())
        };
        let refused = finish_with(vec![PathBuf::from("README.md")]);
        assert!(refused.contains("README.md"), "{refused}");
        assert!(refused.ends_with("\n  (a note)"), "{refused}");
        assert!(!refused.contains("generate crds"), "{refused}");
        // Without the conflict, the same plan gets as far as the CRDs, and is refused there.
        let later = finish_with(Vec::new());
        assert!(later.contains("Nothing was written"), "{later}");
        assert_ne!(later, refused);
        assert_eq!(files(dir.path()), before, "a refused plan writes nothing");
    }

    #[test]
    fn in_a_folder_that_is_no_project_every_file_replaced_is_the_users() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Makefile"), "mine:\n").unwrap();
        std::fs::write(dir.path().join("same.txt"), "same\n").unwrap();
        let finish_with = |force: bool| {
            let disk = DiskTree::new(dir.path());
            let mut overlay = Overlay::new(&disk);
            overlay.put("Makefile", "all:\n".to_string());
            overlay.put("same.txt", "same\n".to_string());
            overlay.put("new.txt", "new\n".to_string());
            let plan = Plan {
                existing: Existing::User,
                force,
                ..Plan::files(overlay)
            };
            finish(dir.path(), plan)
        };
        let refused = crate::output::error_text(&finish_with(false).unwrap_err());
        assert!(refused.contains("Makefile"), "{refused}");
        assert!(!refused.contains("same.txt"), "{refused}");
        assert!(!dir.path().join("new.txt").exists(), "nothing was written");
        let written = finish_with(true).unwrap();
        assert_eq!(
            written,
            [
                (PathBuf::from("Makefile"), Verb::Update),
                (PathBuf::from("new.txt"), Verb::Create)
            ]
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("Makefile")).unwrap(),
            "all:\n"
        );
    }

    #[test]
    fn a_whole_tree_goes_into_a_folder_made_for_it_its_rust_checked_unless_told() {
        let parent = tempfile::tempdir().unwrap();
        let root = parent.path().join("new-project");
        let tree = || {
            BTreeMap::from([
                (
                    PathBuf::from("PROJECT"),
                    "domain: example.com\n".to_string(),
                ),
                (
                    PathBuf::from("src/lib.rs"),
                    "<<<<<<< ours\npub fn a() {}\n=======\n>>>>>>> theirs\n".to_string(),
                ),
            ])
        };
        let disk = DiskTree::new(&root);
        // Checked (the default), the conflict markers are no Rust: refused, no folder made.
        let refused = finish(&root, Plan::tree(&disk, tree(), BTreeSet::new())).unwrap_err();
        let refused = crate::output::error_text(&refused);
        assert!(refused.contains("src/lib.rs"), "{refused}");
        assert!(!root.exists(), "a refused plan makes no folder");
        // Unchecked (a merge the user resolves), the whole tree is written, the folder made.
        let plan = Plan {
            check_rust: false,
            print: false,
            ..Plan::tree(&disk, tree(), BTreeSet::new())
        };
        let written = finish(&root, plan).unwrap();
        assert_eq!(
            written,
            [
                (PathBuf::from("src/lib.rs"), Verb::Create),
                (PathBuf::from("PROJECT"), Verb::Create)
            ]
        );
        assert_eq!(files(&root), tree());
        // A removal the tree names goes with it.
        let plan = Plan {
            check_rust: false,
            ..Plan::tree(
                &disk,
                BTreeMap::new(),
                BTreeSet::from([PathBuf::from("PROJECT")]),
            )
        };
        finish(&root, plan).unwrap();
        assert!(!root.join("PROJECT").exists());
    }
}
