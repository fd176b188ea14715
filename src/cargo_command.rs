//! The `cargo` this CLI runs (the `--exact` harness, `update`'s checks and installs, `create api
//! --external-api-crate`'s check): `$CARGO` when cargo runs us (`cargo run`, a Makefile's
//! `$(CARGO)`), else `cargo` from PATH, without the variables cargo set for the crate that ran
//! us. Those name that crate (its package, manifest and `OUT_DIR`), not the one we build;
//! passed on, they re-run every dependency's build script that watches one (ring's watches
//! `CARGO_PKG_NAME` and `OUT_DIR`), and everything above it compiles again.

use std::process::Command;

/// A `cargo` command, with none of the variables cargo set for the process that runs us.
pub fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (key, _) in std::env::vars_os() {
        if let Some(key) = key.to_str().filter(|k| set_for_the_running_crate(k)) {
            cmd.env_remove(key);
        }
    }
    cmd
}

/// Whether cargo sets `key` for the crate it runs (a binary, a test, a build script): its
/// package (`CARGO_PKG_*`), manifest (`CARGO_MANIFEST_*`), binaries, target configuration,
/// `OUT_DIR` and the like. Not `CARGO` itself, nor what a user sets (`CARGO_HOME`,
/// `CARGO_TARGET_DIR`, `CARGO_BUILD_*`, `CARGO_PROFILE_*`).
pub fn set_for_the_running_crate(key: &str) -> bool {
    ["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_BIN_", "CARGO_CFG_"]
        .iter()
        .any(|prefix| key.starts_with(prefix))
        || matches!(
            key,
            "OUT_DIR"
                | "CARGO_CRATE_NAME"
                | "CARGO_PRIMARY_PACKAGE"
                | "CARGO_TARGET_TMPDIR"
                | "CARGO_RUSTC_CURRENT_DIR"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_running_crates_variables_are_left_out_and_the_users_kept() {
        for key in [
            "CARGO_PKG_NAME",
            "CARGO_MANIFEST_DIR",
            "OUT_DIR",
            "CARGO_BIN_EXE_x",
        ] {
            assert!(set_for_the_running_crate(key), "{key}");
        }
        for key in [
            "CARGO",
            "CARGO_HOME",
            "CARGO_TARGET_DIR",
            "CARGO_BUILD_BUILD_DIR",
            "PATH",
        ] {
            assert!(!set_for_the_running_crate(key), "{key}");
        }
        // A unit test runs under `cargo test`, which sets CARGO_PKG_NAME: the command drops it.
        assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
        let cmd = cargo();
        let removed: Vec<_> = (cmd.get_envs())
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        assert!(
            removed.contains(&"CARGO_PKG_NAME".to_owned()),
            "{removed:?}"
        );
    }
}
