//! The operator-rs that made a project, for `update` to replay its commands with: the one named
//! by `--from-binary`, the one `make operator-rs` installed into the project's `bin/`, or one
//! built once into a cache folder from PROJECT's version and install source, as `make
//! operator-rs` builds it (`cargo install --locked`).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// `--from-binary PATH`: a file that runs and says it is operator-rs (a bare name is a file of
/// the current folder, not a command looked up on PATH). A version other than PROJECT's
/// `cliVersion` is used as given, with a note.
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
    let version = version_of(&resolved).map_err(|e| refuse(format!("{e:#}")))?;
    crate::errln!(
        "Using {} ({version}) as the operator-rs that made the project.",
        path.display()
    );
    if version != format!("operator-rs {cli_version}") {
        crate::errln!(
            "note: PROJECT says operator-rs {cli_version} made the project; {} is {version}.",
            path.display()
        );
    }
    Ok(resolved)
}

fn version_of(path: &Path) -> Result<String> {
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

/// The operator-rs `version` from `source` (`cargo install` arguments; empty: crates.io): the
/// project's `bin/operator-rs-<version>` if `make operator-rs` put it there, else one built
/// once into the cache folder.
pub fn find(root: &Path, version: &str, source: &str) -> Result<PathBuf> {
    let local = root.join("bin").join(format!("operator-rs-{version}"));
    if version_of(&local).is_ok_and(|v| v == format!("operator-rs {version}")) {
        return std::fs::canonicalize(&local)
            .with_context(|| format!("resolving {}", local.display()));
    }
    let key = match rev_of(source) {
        Some(rev) => format!("{version}-{rev}"),
        None => version.to_string(),
    };
    let cache = cache_dir()?.join(key);
    let binary = cache.join("bin").join("operator-rs");
    if version_of(&binary).is_ok() {
        return Ok(binary);
    }
    let args: Vec<String> = if source.is_empty() {
        vec!["operator-rs".into(), "--version".into(), version.into()]
    } else {
        shlex::split(source).unwrap_or_default()
    };
    crate::errln!(
        "Building operator-rs {version}, which made the project, once into {}: cargo install {}",
        cache.display(),
        args.join(" ")
    );
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["install", "--locked", "--root"])
        .arg(&cache)
        .args(&args)
        .status()
        .context("running cargo install")?;
    if !status.success() || version_of(&binary).is_err() {
        bail!(
            "could not build operator-rs {version} (`cargo install {}`), the version PROJECT says made the project. Nothing was written.\n  \
             Pass the binary that made it: operator-rs update --from-binary <path>",
            args.join(" ")
        );
    }
    Ok(binary)
}

/// Where built operator-rs binaries are kept: `$OPERATOR_RS_CACHE`, else the user's cache folder.
fn cache_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("OPERATOR_RS_CACHE") {
        return Ok(PathBuf::from(dir));
    }
    let base = match std::env::var_os("XDG_CACHE_HOME") {
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("HOME") {
            Some(h) => Path::new(&h).join(".cache"),
            None => bail!("no cache folder: set OPERATOR_RS_CACHE or HOME, or pass --from-binary"),
        },
    };
    Ok(base.join("operator-rs"))
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

/// A `CARGO_HOME` for the old binary's replay in which it finds itself installed from `source`,
/// as it was when it made the project: the Makefile it writes then names the same source as the
/// user's (an empty one: the crates.io form).
pub fn cargo_home_for(tmp: &Path, version: &str, source: &str) -> Result<PathBuf> {
    let home = tmp.join("cargo-home");
    std::fs::create_dir_all(&home).with_context(|| format!("creating {}", home.display()))?;
    let words = shlex::split(source).unwrap_or_default();
    let url = words
        .iter()
        .position(|w| w == "--git")
        .and_then(|i| words.get(i + 1));
    if let (Some(url), Some(rev)) = (url, rev_of(source)) {
        let key = format!("operator-rs {version} (git+{url}#{rev})");
        let json = serde_json::json!({ "installs": { key: {} } });
        std::fs::write(home.join(".crates2.json"), json.to_string())
            .with_context(|| format!("writing {}", home.display()))?;
    }
    Ok(home)
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

    #[test]
    fn the_replay_home_names_the_recorded_git_source() {
        let tmp = tempfile::tempdir().unwrap();
        let home = cargo_home_for(
            tmp.path(),
            "0.1.0",
            "--git https://example.com/op --rev abc123 operator-rs",
        )
        .unwrap();
        let text = std::fs::read_to_string(home.join(".crates2.json")).unwrap();
        // The old binary reads it as install_source does.
        assert_eq!(
            crate::install_source::from_crates2(&text, "0.1.0").as_deref(),
            Some("--git https://example.com/op --rev abc123 operator-rs")
        );
        let other = tempfile::tempdir().unwrap();
        let home = cargo_home_for(other.path(), "0.1.0", "").unwrap();
        assert!(!home.join(".crates2.json").exists());
    }
}
