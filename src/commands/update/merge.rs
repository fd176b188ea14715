//! The three-way merge of one file: the user's copy against the scaffold the project was made
//! with (the ancestor) and this operator-rs's (new). Text merges are `git merge-file`'s (git is
//! on every machine `update` runs on, since it needs a git tree; no crate in Cargo.lock merges
//! three ways), so the result and its conflict markers are the ones git users know; a
//! `Cargo.toml` whose lines conflict is merged by its structure instead ([`super::cargo_toml`]).

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

/// What happens to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The user's file stays as it is.
    Keep,
    /// The new scaffold's file replaces the user's untouched one (or is added).
    Write(String),
    /// The user's changes and the scaffold's, merged cleanly.
    Merged(String),
    /// Overlapping changes: the text has conflict markers.
    Conflict(String),
    /// The scaffold dropped the file and the user never changed it.
    Remove,
    /// The user's file stays, with a note on what the scaffold did to it.
    Note(String),
}

/// Merge `path`: `ancestor`, `user` and `new` are its contents in each tree (`None`: absent);
/// `scratch` is a folder for `git merge-file`'s inputs.
pub fn file(
    scratch: &Path,
    path: &Path,
    ancestor: Option<&str>,
    user: Option<&str>,
    new: Option<&str>,
) -> Result<Outcome> {
    Ok(match (ancestor, user, new) {
        // The scaffold did not change the file: the user's stays (or stays deleted).
        (a, _, n) if a == n => Outcome::Keep,
        (_, u, n) if u == n => Outcome::Keep,
        // Added by the scaffold.
        (None, None, Some(n)) => Outcome::Write(n.to_string()),
        // Deleted by the scaffold.
        (Some(a), Some(u), None) if a == u => Outcome::Remove,
        (Some(_), Some(_), None) => Outcome::Note(
            "the new scaffold no longer has this file; kept, as you changed it".to_string(),
        ),
        (Some(_), None, Some(_)) => Outcome::Note(
            "you deleted this file and the new scaffold changed it; left deleted".to_string(),
        ),
        (Some(a), Some(u), Some(n)) if a == u => Outcome::Write(n.to_string()),
        // Changed on both sides, or added on both sides differently (merged against nothing).
        (a, Some(u), Some(n)) => {
            let (mut text, mut conflicts) = merge_file(scratch, path, a.unwrap_or(""), u, n)?;
            // Cargo.toml: where lines conflict, its tables and keys may not.
            if conflicts
                && path == Path::new("Cargo.toml")
                && let Some(structural) =
                    super::cargo_toml::merge("Cargo.toml", a.unwrap_or(""), u, n)
            {
                (text, conflicts) = structural;
            }
            if conflicts {
                Outcome::Conflict(text)
            } else {
                Outcome::Merged(text)
            }
        }
        (None, Some(_), None) | (_, None, None) => Outcome::Keep,
    })
}

/// `git merge-file -p`: the merged text, and whether it has conflicts.
fn merge_file(
    scratch: &Path,
    path: &Path,
    ancestor: &str,
    user: &str,
    new: &str,
) -> Result<(String, bool)> {
    let write = |name: &str, text: &str| -> Result<std::path::PathBuf> {
        let p = scratch.join(name);
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
        Ok(p)
    };
    let (u, a, n) = (
        write("yours", user)?,
        write("ancestor", ancestor)?,
        write("new", new)?,
    );
    let shown = path.display().to_string();
    let out = Command::new("git")
        .args(["merge-file", "-p"])
        .args(["-L", &format!("{shown} (yours)")])
        .args(["-L", &format!("{shown} (scaffold of the old operator-rs)")])
        .args(["-L", &format!("{shown} (scaffold of this operator-rs)")])
        .arg(&u)
        .arg(&a)
        .arg(&n)
        .output()
        .context("running `git merge-file` (is git installed?)")?;
    // Its exit code is the number of conflicts (up to 127); an error is negative (255).
    match out.status.code() {
        Some(code @ 0..=127) => Ok((
            String::from_utf8(out.stdout).context("git merge-file wrote text that is not UTF-8")?,
            code > 0,
        )),
        _ => bail!(
            "`git merge-file` failed on {shown}: {}",
            String::from_utf8_lossy(&out.stderr).trim_end()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merge(a: Option<&str>, u: Option<&str>, n: Option<&str>) -> Outcome {
        let scratch = tempfile::tempdir().unwrap();
        file(scratch.path(), Path::new("src/main.rs"), a, u, n).unwrap()
    }

    #[test]
    fn untouched_files_take_the_new_scaffold_and_user_files_stay() {
        assert_eq!(
            merge(Some("a\n"), Some("a\n"), Some("b\n")),
            Outcome::Write("b\n".into())
        );
        assert_eq!(
            merge(Some("a\n"), Some("mine\n"), Some("a\n")),
            Outcome::Keep
        );
        assert_eq!(
            merge(None, None, Some("new\n")),
            Outcome::Write("new\n".into())
        );
        assert_eq!(merge(Some("a\n"), Some("a\n"), None), Outcome::Remove);
        assert!(matches!(
            merge(Some("a\n"), Some("mine\n"), None),
            Outcome::Note(_)
        ));
        assert!(matches!(
            merge(Some("a\n"), None, Some("b\n")),
            Outcome::Note(_)
        ));
        assert_eq!(merge(Some("a\n"), None, None), Outcome::Keep);
    }

    #[test]
    fn separate_changes_merge_and_overlapping_ones_conflict() {
        let a = "one\ntwo\nthree\nfour\nfive\n";
        let u = "one\nTWO\nthree\nfour\nfive\n";
        let n = "one\ntwo\nthree\nfour\nFIVE\n";
        assert_eq!(
            merge(Some(a), Some(u), Some(n)),
            Outcome::Merged("one\nTWO\nthree\nfour\nFIVE\n".into())
        );
        let Outcome::Conflict(text) = merge(Some(a), Some(u), Some("one\n2\nthree\nfour\nfive\n"))
        else {
            panic!("an overlap must conflict")
        };
        assert!(text.contains("<<<<<<< src/main.rs (yours)\nTWO\n=======\n2\n>>>>>>> src/main.rs (scaffold of this operator-rs)"), "{text}");
    }

    #[test]
    fn a_file_both_added_differently_conflicts() {
        assert!(matches!(
            merge(None, Some("mine\n"), Some("theirs\n")),
            Outcome::Conflict(_)
        ));
    }
}
