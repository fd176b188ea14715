//! Where this operator-rs binary came from, so that a generated project's `make operator-rs`
//! (and its CI) installs the very same one: the `cargo install` arguments written into the
//! generated Makefile.
//!
//! cargo records every install in `$CARGO_HOME/.crates2.json`, keyed `"<name> <version>
//! (<source>)"`. A git install is reproducible anywhere (`--git <url> --rev <commit>`). Anything
//! else gets the crates.io form (`operator-rs --version <v>`), which the Makefile writes itself:
//! a crates.io install is that already, and a `--path` install is not reproducible (the path
//! exists on one machine only).

use std::path::{Path, PathBuf};

/// The crate, as cargo knows it.
const NAME: &str = "operator-rs";

/// The `cargo install` arguments of this binary's git source (`--git <url> --rev <commit>
/// operator-rs`), when cargo installed it from git; `None` means crates.io.
pub fn git_install_args() -> Option<String> {
    let file = cargo_home()?.join(".crates2.json");
    let text = std::fs::read_to_string(file).ok()?;
    from_crates2(&text, env!("CARGO_PKG_VERSION"))
}

fn cargo_home() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("CARGO_HOME") {
        return Some(PathBuf::from(home));
    }
    std::env::var_os("HOME").map(|home| Path::new(&home).join(".cargo"))
}

/// The git install arguments for `version` recorded in a `.crates2.json`.
pub(crate) fn from_crates2(text: &str, version: &str) -> Option<String> {
    let json: serde_json::Value = serde_json::from_str(text).ok()?;
    let prefix = format!("{NAME} {version} (");
    let key = json
        .get("installs")?
        .as_object()?
        .keys()
        .find(|k| k.starts_with(&prefix))?;
    let source = key.strip_prefix(&prefix)?.strip_suffix(')')?;
    from_source_id(source)
}

/// `git+https://host/repo?tag=v1#<commit>` → `--git https://host/repo --rev <commit> operator-rs`;
/// anything else (a registry, a path) → `None`.
fn from_source_id(source: &str) -> Option<String> {
    let git = source.strip_prefix("git+")?;
    let (url, commit) = git.split_once('#')?;
    let url = url.split('?').next()?;
    let safe = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._~:/@%+".contains(c))
    };
    (safe(url) && safe(commit)).then(|| format!("--git {url} --rev {commit} {NAME}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_installs_pin_the_commit() {
        let source = "git+https://github.com/acme/operator-rs?tag=v0.1.0#0123abcd";
        assert_eq!(
            from_source_id(source).as_deref(),
            Some("--git https://github.com/acme/operator-rs --rev 0123abcd operator-rs")
        );
        let source = "git+https://github.com/acme/operator-rs#feedbeef";
        assert_eq!(
            from_source_id(source).as_deref(),
            Some("--git https://github.com/acme/operator-rs --rev feedbeef operator-rs")
        );
    }

    #[test]
    fn registries_and_paths_are_left_to_the_crates_io_form() {
        let registry = "registry+https://github.com/rust-lang/crates.io-index";
        assert_eq!(from_source_id(registry), None);
        assert_eq!(from_source_id("path+file:///home/me/operator-rs"), None);
        // Nothing a Makefile would read as more than one word or a command.
        let odd = "git+https://example.com/a b;rm -rf#abc";
        assert_eq!(from_source_id(odd), None);
    }

    #[test]
    fn the_record_of_this_version_is_found_among_others() {
        let text = r#"{"installs":{
            "kopium 0.24.1 (registry+https://github.com/rust-lang/crates.io-index)":{},
            "operator-rs 0.0.9 (git+https://example.com/old#aaaa)":{},
            "operator-rs 0.1.0 (git+https://example.com/new?branch=main#bbbb)":{}}}"#;
        assert_eq!(
            from_crates2(text, "0.1.0").as_deref(),
            Some("--git https://example.com/new --rev bbbb operator-rs")
        );
        assert_eq!(from_crates2(text, "0.2.0"), None);
        assert_eq!(from_crates2("not json", "0.1.0"), None);
    }
}
