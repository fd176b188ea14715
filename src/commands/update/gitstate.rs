//! The git repository `update` works in: the state it starts from (a branch checked out, no
//! merge, rebase, cherry-pick, revert or bisect in progress, nothing uncommitted), the user's
//! files as git holds them (the index's blobs, line endings normalised as git stores them, so a
//! `core.autocrlf=true` checkout merges as git would), the working tree's line endings to write
//! results back in, and the scratch folder inside the git directory where replays run (removed at
//! the start and the end of every run, so a killed run leaves nothing in the temp directory).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The folder inside the repository's git directory where `update` replays.
const SCRATCH: &str = "operator-rs-update";

fn git(root: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(root);
    cmd
}

/// The repository's git directory (`.git`, or a worktree's), `None` outside git.
pub fn git_dir(root: &Path) -> Option<PathBuf> {
    let out = git(root)
        .args(["rev-parse", "--absolute-git-dir"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// `update` changes files in place: it needs git to show and undo what it did, so it works on a
/// branch, with nothing in progress and nothing uncommitted.
pub fn check(root: &Path) -> Result<()> {
    let Some(git_dir) = git_dir(root) else {
        // git missing or no repository: say which.
        Command::new("git")
            .arg("--version")
            .output()
            .context("running git (update needs it: is git installed?)")?;
        bail!(
            "{} is not in a git repository: update merges the new scaffold into your files in place, and needs git to show and undo what it changes. Nothing was written.\n  \
             Commit the project first, e.g. `git init && git add -A && git commit -m 'before operator-rs update'`.",
            root.display()
        );
    };
    if let Some((what, way_out)) = in_progress(&git_dir) {
        bail!(
            "a {what} is in progress in the git repository of {}: update merges into your files in place and would mix its changes with the {what}'s. Nothing was written.\n  \
             Finish or abort it first ({way_out}), then run `operator-rs update`.",
            root.display()
        );
    }
    let branch = git(root)
        .args(["symbolic-ref", "-q", "HEAD"])
        .output()
        .context("running git symbolic-ref")?;
    if !branch.status.success() {
        bail!(
            "the git repository of {} has a detached HEAD (no branch checked out): the update's changes would be committed on no branch and lost at the next checkout. Nothing was written.\n  \
             Check out a branch first, e.g. `git switch -c operator-rs-update`, then run `operator-rs update`.",
            root.display()
        );
    }
    let status = git(root)
        .args(["status", "--porcelain", "--untracked-files=all", "."])
        .output()
        .context("running git status")?;
    let dirty: Vec<&str> = std::str::from_utf8(&status.stdout)
        .unwrap_or_default()
        .lines()
        .collect();
    if !dirty.is_empty() {
        let shown: Vec<_> = dirty.iter().take(10).map(|l| format!("  {l}")).collect();
        bail!(
            "the git tree of {} has uncommitted changes: update merges into your files in place, so it starts from a clean tree (to be undone with `git checkout .`). Nothing was written.\n{}{}\n  \
             Commit or stash them first (`git stash -u`), or preview with `operator-rs update --dry-run`.",
            root.display(),
            shown.join("\n"),
            if dirty.len() > 10 {
                format!("\n  ... and {} more", dirty.len() - 10)
            } else {
                String::new()
            }
        );
    }
    Ok(())
}

/// The operation in progress in `git_dir`, with how to end it.
fn in_progress(git_dir: &Path) -> Option<(&'static str, &'static str)> {
    let states: [(&str, &str, &str); 6] = [
        (
            "MERGE_HEAD",
            "merge",
            "`git merge --continue` or `git merge --abort`",
        ),
        (
            "rebase-merge",
            "rebase",
            "`git rebase --continue` or `git rebase --abort`",
        ),
        (
            "rebase-apply",
            "rebase",
            "`git rebase --continue` or `git rebase --abort`",
        ),
        (
            "CHERRY_PICK_HEAD",
            "cherry-pick",
            "`git cherry-pick --continue` or `git cherry-pick --abort`",
        ),
        (
            "REVERT_HEAD",
            "revert",
            "`git revert --continue` or `git revert --abort`",
        ),
        ("BISECT_LOG", "bisect", "`git bisect reset`"),
    ];
    (states.into_iter())
        .find(|(file, _, _)| git_dir.join(file).exists())
        .map(|(_, what, way_out)| (what, way_out))
}

/// The user's side of the merge: each file's content as git holds it in the index (line endings
/// normalised as git stores them), `None` for a file git does not track.
pub struct Committed {
    root: PathBuf,
    tracked: bool,
}

impl Committed {
    /// Reads from git when `root` is in a repository, else (a `--dry-run` outside git) from disk.
    pub fn new(root: &Path) -> Committed {
        Committed {
            root: root.to_path_buf(),
            tracked: git_dir(root).is_some(),
        }
    }

    /// The text of `rel` as git holds it; the disk's when git does not track it.
    pub fn read(&self, rel: &Path) -> Result<Option<String>> {
        if self.tracked {
            let out = git(&self.root)
                .arg("cat-file")
                .arg("blob")
                .arg(format!(":./{}", rel.display()))
                .output()
                .context("running git cat-file")?;
            if out.status.success() {
                return String::from_utf8(out.stdout)
                    .map(Some)
                    .with_context(|| format!("{} is not UTF-8 text in git", rel.display()));
            }
        }
        match std::fs::read_to_string(self.root.join(rel)) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(crate::workspace::with_path(&self.root.join(rel), e).into()),
        }
    }
}

/// `text` (with `\n` line ends, as git stores it) in the line endings of the working tree's copy
/// of `rel`: `\r\n` when that copy has them (a `core.autocrlf=true` checkout), else as it is.
pub fn in_working_tree_endings(root: &Path, rel: &Path, text: String) -> String {
    let crlf = std::fs::read(root.join(rel)).is_ok_and(|b| b.windows(2).any(|w| w == b"\r\n"));
    if !crlf {
        return text;
    }
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// The scratch folder of one run: inside the git directory when there is one (removed at the
/// start of every run too, so what a killed run left goes at the next), else a temporary folder
/// (a `--dry-run` outside git).
pub struct Scratch {
    path: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

impl Scratch {
    pub fn new(root: &Path) -> Result<Scratch> {
        match git_dir(root) {
            Some(git_dir) => {
                let path = git_dir.join(SCRATCH);
                remove(&path)?;
                std::fs::create_dir_all(&path)
                    .with_context(|| format!("creating {}", path.display()))?;
                Ok(Scratch { path, _temp: None })
            }
            None => {
                let temp = tempfile::Builder::new()
                    .prefix("operator-rs-update-")
                    .tempdir()
                    .context("making a temporary folder")?;
                Ok(Scratch {
                    path: temp.path().to_path_buf(),
                    _temp: Some(temp),
                })
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self._temp.is_none() {
            let _ = remove(&self.path);
        }
    }
}

/// Remove the scratch folder (again, when a replay a killed run started still writes in it).
fn remove(path: &Path) -> Result<()> {
    let mut tries = 0;
    loop {
        match std::fs::remove_dir_all(path) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(_) if tries < 5 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            Err(e) => return Err(crate::workspace::with_path(path, e).into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_working_trees_line_endings() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("crlf"), "a\r\nb\r\n").unwrap();
        std::fs::write(tmp.path().join("lf"), "a\nb\n").unwrap();
        let merged = "a\nmerged\nb\n".to_string();
        assert_eq!(
            in_working_tree_endings(tmp.path(), Path::new("crlf"), merged.clone()),
            "a\r\nmerged\r\nb\r\n"
        );
        assert_eq!(
            in_working_tree_endings(tmp.path(), Path::new("lf"), merged.clone()),
            merged
        );
        assert_eq!(
            in_working_tree_endings(tmp.path(), Path::new("new"), merged.clone()),
            merged
        );
    }

    #[test]
    fn each_operation_in_progress_is_named_with_its_way_out() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(in_progress(tmp.path()), None);
        for (file, what) in [
            ("MERGE_HEAD", "merge"),
            ("rebase-merge", "rebase"),
            ("rebase-apply", "rebase"),
            ("CHERRY_PICK_HEAD", "cherry-pick"),
            ("REVERT_HEAD", "revert"),
            ("BISECT_LOG", "bisect"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join(file), "").unwrap();
            let (found, way_out) = in_progress(dir.path()).unwrap();
            assert_eq!(found, what);
            assert!(way_out.contains("git "), "{way_out}");
        }
    }
}
