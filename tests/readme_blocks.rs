//! The user's path is tested as the user walks it: every ```sh block of our README and of a
//! generated project's README is run as written by a test, or says why nothing can run it here.
//! The list is `common::readme::BLOCKS`; this holds both READMEs to it (a new block, or a listed
//! section without one, fails) and each test it names to naming the section's heading.

mod common;

use std::path::Path;

use common::readme::{BLOCKS, Readme, Runs, our_readme, sections};
use common::*;

/// The headings of the sections of `text` with ```sh blocks.
fn with_blocks(text: &str) -> Vec<String> {
    (sections(text).into_iter())
        .filter(|s| !s.blocks.is_empty())
        .map(|s| s.heading)
        .collect()
}

#[test]
fn every_readme_block_is_run_as_written_or_says_why_not() {
    let tmp = init_project("memcached-operator");
    let generated = read(&project_dir(&tmp, "memcached-operator"), "README.md");
    let mut problems = Vec::new();
    for (readme, text) in [(Readme::Ours, our_readme()), (Readme::Generated, generated)] {
        let found = with_blocks(&text);
        let listed: Vec<&str> = (BLOCKS.iter())
            .filter(|(r, _, _)| *r == readme)
            .map(|(_, heading, _)| *heading)
            .collect();
        for heading in &found {
            if !listed.contains(&heading.as_str()) {
                problems.push(format!(
                    "{readme:?} README: the sh blocks under {heading:?} are run by no test: run them as written (common::readme::sh_blocks, UserShell) and list the test in common::readme::BLOCKS, or list why nothing can run them here"
                ));
            }
        }
        for heading in &listed {
            if !found.iter().any(|f| f == heading) {
                problems.push(format!(
                    "{readme:?} README: common::readme::BLOCKS lists {heading:?}, which has no sh block (any more)"
                ));
            }
        }
    }
    for (readme, heading, runs) in BLOCKS {
        let Runs::In(file) = runs else { continue };
        let source = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        if !source.contains(&format!("{heading:?}")) {
            problems.push(format!(
                "{readme:?} README: {file} is said to run the blocks under {heading:?}, but never names that heading"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The README's test command (its "Run the tests:" line) is what CI runs, as written, and it
/// needs nothing beside a fresh clone: the control plane comes from this checkout's own
/// `operator-rs envtest` (which takes a KUBEBUILDER_ASSETS already set, CI's ../shared/k8s).
#[test]
fn the_readmes_test_command_is_what_ci_runs_and_needs_no_folder_beside_the_clone() {
    let readme = our_readme();
    let line = (readme.lines())
        .find(|l| l.starts_with("Run the tests: `"))
        .expect("the README's first lines say how to run the tests");
    let command = line["Run the tests: `".len()..].split('`').next().unwrap();
    assert!(
        command.contains("operator-rs envtest --use-env")
            && command.ends_with("cargo test --locked --workspace --all-features"),
        "{command}"
    );
    assert!(
        !command.contains("shared/"),
        "the command needs ../shared: {command}"
    );
    let ci =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|l| l.contains(command)),
        ".ci/run does not run the README's test command `{command}` as written"
    );
}
