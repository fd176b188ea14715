//! The imported kubebuilder projects as their users build them (each build of a generated project
//! takes minutes: this binary runs in its own `.ci/run` lane, `import_build`): our README's
//! "Coming from kubebuilder" walk as written, and the most complete fixture, project-v4, green
//! under its own checks (`cargo fmt --check`, `cargo clippy --all-targets -- -D warnings`,
//! `cargo test`, `operator-rs generate manifests --check`); every other fixture too with
//! `OPERATOR_RS_IMPORT_BUILD_ALL=1`, or those it names (`=project-v4-multigroup,...`).

mod common;
#[path = "import/fixtures.rs"]
mod fixtures;

use common::run;
use fixtures::{fixture, fixtures, import};

/// Our README's "Coming from kubebuilder" block, run as written (one shell script) next to a
/// copy of kubebuilder's getting-started project named as the block names it; then the imported
/// project lints clean (`cargo fmt --check`, `cargo clippy --all-targets -- -D warnings`).
#[test]
fn the_readme_import_walk_builds_and_lints_clean() {
    if common::runs_elsewhere("import_build") {
        return;
    }
    let block = common::readme::sh_blocks(
        &common::readme::our_readme(),
        "### Coming from kubebuilder: `operator-rs import`",
    )
    .concat();
    assert!(
        block[1].starts_with("operator-rs import ../memcached-operator"),
        "{block:?}"
    );
    let tmp = tempfile::tempdir().unwrap();
    common::copy_dir(
        &fixture("getting-started"),
        &tmp.path().join("memcached-operator"),
    );
    assert_eq!(block[3], "cargo build", "{block:?}");
    // The import and the check as one script (the first line's `cd` holds for the others).
    common::readme::UserShell::new(tmp.path(), &[])
        .run(&format!("set -e\n{}", block[..3].join("\n")));
    let dir = tmp.path().join("memcached-operator-rs");
    // The build with the versions this workspace built (no registry), then as written.
    common::seed_lock(&dir);
    common::readme::UserShell::new(&dir, &[]).run(&block[3]);
    common::cargo(&dir, &["fmt", "--check"]);
    common::cargo(&dir, &["clippy", "--all-targets", "--", "-D", "warnings"]);
}

/// The fixture every CI run builds: the most complete (several kinds and versions, conversion,
/// defaulting and validating webhooks, webhooks of built-in kinds, a second controller of a kind,
/// external kinds).
const ALWAYS_BUILT: &str = "project-v4";

/// Each imported project passes the checks its own CI runs: fmt, clippy with warnings denied,
/// its tests, and its manifests as `generate` writes them. project-v4 always; the others with
/// `OPERATOR_RS_IMPORT_BUILD_ALL=1` (minutes each), or those it names
/// (`OPERATOR_RS_IMPORT_BUILD_ALL=project-v4-multigroup,cronjob-tutorial`), else a SKIPPED line
/// names them.
#[test]
fn imported_projects_build_lint_and_test_green() {
    if common::runs_elsewhere("import_build") {
        return;
    }
    let asked = std::env::var("OPERATOR_RS_IMPORT_BUILD_ALL").unwrap_or_default();
    let built = |name: &str| {
        name == ALWAYS_BUILT || asked == "1" || asked.split(',').any(|n| n.trim() == name)
    };
    for name in fixtures() {
        if !built(&name) {
            eprintln!(
                "SKIPPED building the imported {name}: OPERATOR_RS_IMPORT_BUILD_ALL=1 cargo test --test import_build builds every fixture (OPERATOR_RS_IMPORT_BUILD_ALL={name} this one)"
            );
            continue;
        }
        let (_tmp, dir) = common::timed(&format!("import {name}"), || import(&name));
        common::seed_lock(&dir);
        common::cargo(&dir, &["fmt", "--check"]);
        common::cargo(&dir, &["clippy", "--all-targets", "--", "-D", "warnings"]);
        // With KUBEBUILDER_ASSETS, its integration tests run on envtest.
        common::cargo(&dir, &["test"]);
        let check = run(&dir, &["generate", "manifests", "--check"]);
        assert_eq!(
            check.code, 0,
            "{name}: generate manifests --check after the build:\n{}{}",
            check.stdout, check.stderr
        );
    }
}
