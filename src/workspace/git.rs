//! A project's files as they were at a git revision ([`GitTree`]), read with the `git` command:
//! nothing is checked out, and neither the working tree nor the repository is written to.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::SourceTree;

/// Why a revision of the project cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run `git` ({0}): reading the project at a git revision needs git on PATH")]
    NoGit(io::Error),
    #[error(
        "{dir} is not in a git repository ({msg}): comparing with an earlier revision reads it from git"
    )]
    NotARepo { dir: PathBuf, msg: String },
    #[error(
        "`{reference}` is not a revision of this repository ({msg}); give a branch, tag or commit, e.g. `origin/main` or `v0.1.0` (in CI, fetch the history: actions/checkout with `fetch-depth: 0`)"
    )]
    BadRef { reference: String, msg: String },
    #[error("the project did not exist at {reference}: {what}")]
    NoProject { reference: String, what: String },
}

/// The project's files at one commit, by path relative to the project root (which may be a
/// folder of the repository).
#[derive(Debug)]
pub struct GitTree {
    /// The project root on disk (for messages).
    root: PathBuf,
    /// Every blob under the project's folder at the commit: its object id, by relative path.
    blobs: BTreeMap<PathBuf, String>,
}

/// Run `git -C dir args`: its stdout, or its stderr (trimmed) as the error.
fn git(dir: &Path, args: &[&str]) -> Result<Result<Vec<u8>, String>, GitError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(GitError::NoGit)?;
    Ok(if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    })
}

impl GitTree {
    /// The project under `root` as it was at `reference` (a branch, tag or commit).
    pub fn at(root: &Path, reference: &str) -> Result<Self, GitError> {
        let prefix =
            git(root, &["rev-parse", "--show-prefix"])?.map_err(|msg| GitError::NotARepo {
                dir: root.to_path_buf(),
                msg,
            })?;
        let prefix = String::from_utf8_lossy(&prefix).trim().to_string();
        let bad = |msg: String| GitError::BadRef {
            reference: reference.to_string(),
            msg,
        };
        // A revision, never an option (`--output=..`).
        if reference.is_empty() || reference.starts_with('-') {
            return Err(bad("a revision cannot be empty or start with `-`".into()));
        }
        let commit = git(
            root,
            &[
                "rev-parse",
                "--verify",
                "--end-of-options",
                &format!("{reference}^{{commit}}"),
            ],
        )?
        .map_err(|msg| {
            bad(if msg.is_empty() {
                "unknown revision".into()
            } else {
                msg
            })
        })?;
        let commit = String::from_utf8_lossy(&commit).trim().to_string();
        // The project's folder at the commit.
        let tree = format!("{commit}:{}", prefix.trim_end_matches('/'));
        // `--full-tree`: run from a folder, ls-tree would also keep only the paths under it.
        let listing = git(
            root,
            &[
                "ls-tree",
                "-r",
                "-z",
                "--full-tree",
                "--end-of-options",
                &tree,
            ],
        )?
        .map_err(|_| GitError::NoProject {
            reference: reference.to_string(),
            what: format!(
                "its folder `{}` is not in the repository at that revision",
                prefix.trim_end_matches('/')
            ),
        })?;
        let mut blobs = BTreeMap::new();
        for entry in listing.split(|b| *b == 0).filter(|e| !e.is_empty()) {
            let entry = String::from_utf8_lossy(entry);
            // `<mode> <type> <object>\t<path>`
            let Some((meta, path)) = entry.split_once('\t') else {
                continue;
            };
            let mut meta = meta.split(' ');
            let (Some(_mode), Some("blob"), Some(object)) = (meta.next(), meta.next(), meta.next())
            else {
                continue;
            };
            blobs.insert(PathBuf::from(path), object.to_string());
        }
        Ok(GitTree {
            root: root.to_path_buf(),
            blobs,
        })
    }
}

/// `rel` without `.` components (the readers may join `src/./x.rs`).
fn normal(rel: &Path) -> PathBuf {
    rel.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

impl SourceTree for GitTree {
    fn read(&self, rel: &Path) -> io::Result<Option<String>> {
        let Some(object) = self.blobs.get(&normal(rel)) else {
            return Ok(None);
        };
        let bytes = git(&self.root, &["cat-file", "blob", object])
            .map_err(|e| io::Error::other(e.to_string()))?
            .map_err(|msg| io::Error::other(format!("reading {}: {msg}", rel.display())))?;
        super::utf8_text(rel, bytes).map(Some)
    }

    fn files_under(&self, rel_dir: &Path) -> io::Result<Vec<PathBuf>> {
        let dir = normal(rel_dir);
        Ok(self
            .blobs
            .keys()
            .filter(|p| p.starts_with(&dir))
            .cloned()
            .collect())
    }

    fn root(&self) -> &Path {
        &self.root
    }
}
