//! The candidates for the operator-rs that made a project, for `update` to prove
//! ([`super::ancestor`]) and replay its commands with: the one named by `--from-binary`, the one
//! `make operator-rs` installed into the project's `bin/`, or one built once into a cache folder
//! from PROJECT's version and install source, as `make operator-rs` builds it (`cargo install
//! --locked`); and what a binary says it is (`--version`, `version`'s scaffold fingerprint).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// `--from-binary PATH`: a file that runs and says it is operator-rs (a bare name is a file of
/// the current folder, not a command looked up on PATH). Whether it is the one that made the
/// project is proven by [`super::ancestor`].
pub fn given(path: &Path, cli_version: &str) -> Result<PathBuf> {
    let refuse = |problem: String| {
        anyhow::anyhow!(
            "--from-binary {}: {problem}: not an operator-rs binary. Pass the operator-rs that made the project (`<path> --version` prints `operator-rs {cli_version}`). Nothing was written.\n  e.g. --from-binary bin/operator-rs-{cli_version}",
            path.display()
        )
    };
    let resolved = match std::fs::canonicalize(path) {
        Ok(p) if p.is_dir() => return Err(refuse("is a folder, not a binary".into())),
        Ok(p) => p,
        Err(e) => return Err(refuse(format!("cannot be read ({e})"))),
    };
    version_of(&resolved).map_err(|e| refuse(format!("{e:#}")))?;
    Ok(resolved)
}

/// What `<path> --version` prints (`operator-rs <version>`).
pub fn version_of(path: &Path) -> Result<String> {
    let out = Command::new(path)
        .arg("--version")
        .output()
        .context("it does not run")?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || !text.starts_with("operator-rs ") {
        bail!(
            "`{} --version` printed {:?}, not `operator-rs <version>`",
            path.display(),
            text.lines().next().unwrap_or_default()
        );
    }
    Ok(text)
}

/// The scaffold fingerprint `<path> version` prints (its `scaffold:` line); `None` for an
/// operator-rs made before it printed one.
pub fn fingerprint_of(path: &Path) -> Option<String> {
    let out = Command::new(path).arg("version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (text.lines())
        .find_map(|l| l.strip_prefix("scaffold:"))
        .map(|f| f.trim().to_string())
}

/// Where an operator-rs that may have made the project is found, in the order `update` tries
/// them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Candidate {
    /// The project's `bin/operator-rs-<version>`, which `make operator-rs` installs (a link to
    /// whatever operator-rs was on PATH then).
    Local(PathBuf),
    /// One built before into the cache folder.
    Cached(PathBuf),
    /// To be built into the cache folder with `cargo install <args>`.
    Build { cache: PathBuf, args: Vec<String> },
}

impl Candidate {
    /// The candidate's binary, built first when it is a [`Candidate::Build`].
    pub fn binary(&self, version: &str) -> Result<PathBuf> {
        match self {
            Candidate::Local(path) => {
                std::fs::canonicalize(path).with_context(|| format!("resolving {}", path.display()))
            }
            Candidate::Cached(path) => Ok(path.clone()),
            Candidate::Build { cache, args } => build(cache, args, version),
        }
    }

    /// The candidate as the user would name it.
    pub fn describe(&self) -> String {
        match self {
            Candidate::Local(path) | Candidate::Cached(path) => path.display().to_string(),
            Candidate::Build { cache, args } => format!(
                "`cargo install --locked --root {} {}`",
                cache.display(),
                args.join(" ")
            ),
        }
    }
}

/// The candidates for the operator-rs `version` from `source` (`cargo install` arguments; empty:
/// crates.io): the project's `bin/operator-rs-<version>` if `make operator-rs` put one there,
/// one built before into the cache folder, else one to build there.
pub fn candidates(root: &Path, version: &str, source: &str) -> Result<Vec<Candidate>> {
    let mut out = Vec::new();
    let local = root.join("bin").join(format!("operator-rs-{version}"));
    if version_of(&local).is_ok() {
        out.push(Candidate::Local(local));
    }
    let key = match rev_of(source) {
        Some(rev) => format!("{version}-{rev}"),
        None => version.to_string(),
    };
    let cache = crate::ops::scaffold_record::cache_dir()?.join(key);
    let binary = cache.join("bin").join("operator-rs");
    if version_of(&binary).is_ok() {
        out.push(Candidate::Cached(binary));
    } else {
        let args: Vec<String> = if source.is_empty() {
            vec!["operator-rs".into(), "--version".into(), version.into()]
        } else {
            shlex::split(source).unwrap_or_default()
        };
        out.push(Candidate::Build { cache, args });
    }
    Ok(out)
}

/// `cargo install --locked --root <cache> <args>`, once.
fn build(cache: &Path, args: &[String], version: &str) -> Result<PathBuf> {
    let binary = cache.join("bin").join("operator-rs");
    crate::errln!(
        "Building operator-rs {version}, which made the project, once into {}: cargo install {}",
        cache.display(),
        args.join(" ")
    );
    let status = crate::cargo_command::cargo()
        .args(["install", "--locked", "--root"])
        .arg(cache)
        .args(args)
        .status()
        .context("running cargo install")?;
    if !status.success() || version_of(&binary).is_err() {
        bail!("`cargo install {}` did not build it", args.join(" "));
    }
    Ok(binary)
}

/// The URL and commit of `source` when it is the one form of install source operator-rs records,
/// `--git <url> --rev <commit> operator-rs`.
pub fn git_source(source: &str) -> Option<(String, String)> {
    match shlex::split(source)?.as_slice() {
        [git, url, rev, commit, name]
            if git == "--git"
                && rev == "--rev"
                && name == "operator-rs"
                && !url.starts_with('-')
                && !url.is_empty()
                && !commit.is_empty()
                && commit.bytes().all(|b| b.is_ascii_alphanumeric()) =>
        {
            Some((url.clone(), commit.clone()))
        }
        _ => None,
    }
}

/// The commit of a git source (`--git <url> --rev <commit> operator-rs`).
fn rev_of(source: &str) -> Option<String> {
    let words = shlex::split(source)?;
    let at = words.iter().position(|w| w == "--rev")?;
    words.get(at + 1).cloned()
}

/// The install source a generated Makefile records (`OPERATOR_RS_INSTALL = $(or
/// $(OPERATOR_RS_SOURCE),<args>)`), for projects whose PROJECT predates `cliSource`; `None` for
/// the crates.io form.
pub fn source_in_makefile(makefile: &str) -> Option<String> {
    let line = makefile
        .lines()
        .find_map(|l| l.strip_prefix("OPERATOR_RS_INSTALL = $(or $(OPERATOR_RS_SOURCE),"))?;
    let args = line.strip_suffix(')')?;
    args.starts_with("--git ").then(|| args.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_makefile_source_is_read_back() {
        let git = "OPERATOR_RS_INSTALL = $(or $(OPERATOR_RS_SOURCE),--git https://example.com/op --rev abc123 operator-rs)\n";
        let source = source_in_makefile(git).unwrap();
        assert_eq!(
            source,
            "--git https://example.com/op --rev abc123 operator-rs"
        );
        assert_eq!(rev_of(&source).as_deref(), Some("abc123"));
        let crates = "OPERATOR_RS_INSTALL = $(or $(OPERATOR_RS_SOURCE),operator-rs --version $(OPERATOR_RS_VERSION))\n";
        assert_eq!(source_in_makefile(crates), None);
    }
}
