//! Re-running commands on one project is safe, as kubebuilder promises: with or without
//! `--force`, with other flags, in another flavour. A re-run either refuses and writes nothing,
//! or leaves the project as if it had been scaffolded that way from the start, and the project
//! still builds.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;

/// The variants of one kind, cache/v1 Memcached, that `create api` can scaffold.
const VARIANTS: &[&str] = &[
    "",
    "--image memcached:1.6",
    "--image memcached:1.6 --image-container-port 11211 --run-as-user 1001 --image-container-command memcached,-m=64",
    "--image memcached:1.7 --namespaced=false",
    "--namespaced=false",
    "--controller=false",
];

const MEMCACHED: &str = "create api --group cache --version v1 --kind Memcached";

fn create(dir: &Path, flags: &str, force: bool) -> Run {
    let force = if force { " --force" } else { "" };
    ok(dir, &words(&format!("{MEMCACHED} {flags}{force}")))
}

/// Every file of the project but the vendored runtime (identical in every project).
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = snapshot(dir);
    files.retain(|p, _| !p.starts_with("vendor"));
    files
}

fn differences(a: &BTreeMap<PathBuf, Vec<u8>>, b: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<String> {
    let mut out = Vec::new();
    for path in a
        .keys()
        .chain(b.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        match (a.get(path), b.get(path)) {
            (Some(x), Some(y)) if x == y => {}
            (Some(x), Some(y)) => out.push(format!(
                "{} differs:\n--- re-run\n{}\n--- fresh\n{}",
                path.display(),
                String::from_utf8_lossy(x),
                String::from_utf8_lossy(y)
            )),
            (x, _) => out.push(format!(
                "{} only in the {}",
                path.display(),
                if x.is_some() {
                    "re-run"
                } else {
                    "fresh project"
                }
            )),
        }
    }
    out
}

/// `create api` in one variant, then `--force` in another that has a controller, leaves every
/// file as `create api` in the second variant alone does: fragments of the first variant
/// (tests of the kind, the image's variable in the manager) are replaced, not added to.
#[test]
fn a_forced_rerun_in_another_variant_is_that_variant_from_the_start() {
    let tmp = init_project("rerun-op");
    let base = project_dir(&tmp, "rerun-op");
    let work = tmp.path().join("work");
    let fresh: Vec<_> = VARIANTS
        .iter()
        .map(|then| {
            let dir = tmp.path().join("fresh");
            let _ = std::fs::remove_dir_all(&dir);
            copy_dir(&base, &dir);
            create(&dir, then, false);
            tree(&dir)
        })
        .collect();
    let mut failures = Vec::new();
    for first in VARIANTS {
        for (then, want) in VARIANTS.iter().zip(&fresh) {
            if first == then || then.contains("--controller=false") {
                // Without a controller, a re-run keeps the one the kind had (kubebuilder's
                // `Resource.Update`); checked apart below.
                continue;
            }
            let _ = std::fs::remove_dir_all(&work);
            copy_dir(&base, &work);
            create(&work, first, false);
            create(&work, then, true);
            let diff = differences(&tree(&work), want);
            if !diff.is_empty() {
                failures.push(format!(
                    "`{first}` then `{then} --force`:\n{}",
                    diff.join("\n")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `--force --controller=false` re-scaffolds the types of a kind and keeps its controller, its
/// tests and (for a deploy-image kind) its image; then `--resource=false --controller` on a kind
/// made without one adds it, as if it had been there from the start.
#[test]
fn a_controller_stays_and_can_be_added_later() {
    let tmp = init_project("keep-op");
    let dir = project_dir(&tmp, "keep-op");
    let image = "--image memcached:1.6 --image-container-port 11211";
    create(&dir, image, false);
    let before = tree(&dir);
    create(&dir, "--controller=false", true);
    assert_eq!(differences(&tree(&dir), &before), Vec::<String>::new());

    let tmp = init_project("late-op");
    let late = project_dir(&tmp, "late-op");
    let early = tmp.path().join("early/late-op");
    copy_dir(&late, &early);
    create(&late, "--controller=false", false);
    // A deploy-image controller needs fields the plain types lack.
    let before = snapshot(&late);
    let refused = run(
        &late,
        &words(&format!(
            "{MEMCACHED} --resource=false --controller {image}"
        )),
    );
    assert!(
        refused.code != 0 && refused.stderr.contains("--image memcached:1.6 --force"),
        "{}",
        refused.stderr
    );
    assert!(snapshot(&late) == before, "a refused run wrote");
    create(&late, "--resource=false --controller", false);
    create(&early, "", false);
    assert_eq!(
        differences(&tree(&late), &tree(&early)),
        Vec::<String>::new()
    );
}

/// Every command, re-run on one project with and without `--force` and with other flags:
/// each run succeeds, or refuses and changes nothing; the manifests stay what the generators
/// make; and the project builds at the end (`cargo check --all-targets`, `cargo fmt --check`).
#[test]
fn every_command_rerun_on_one_project_leaves_it_building() {
    let tmp = init_project("all-op");
    let dir = project_dir(&tmp, "all-op");
    // (command line, whether it must succeed)
    let steps: &[(&str, bool)] = &[
        ("init --domain example.com", false),
        (MEMCACHED, true),
        (MEMCACHED, false),
        (
            "create api --group cache --version v1 --kind Memcached --force",
            true,
        ),
        (
            "create api --group cache --version v1 --kind Memcached --image memcached:1.6",
            false,
        ),
        (
            "create api --group cache --version v1 --kind Memcached --image memcached:1.6 --force",
            true,
        ),
        (
            "create api --group cache --version v1 --kind Memcached --image memcached:1.6 --image-container-port 11211 --run-as-user 1001 --force",
            true,
        ),
        (
            "create api --group cache --version v1 --kind Memcached --controller=false --force",
            true,
        ),
        (
            "create api --group cache --version v2 --kind Memcached --controller=false",
            true,
        ),
        (
            "create api --group cache --version v2 --kind Memcached --controller=false --force",
            true,
        ),
        (
            "create api --group webapp --version v1 --kind Guestbook --controller=false",
            true,
        ),
        (
            "create api --group webapp --version v1 --kind Guestbook --resource=false --controller",
            true,
        ),
        (
            "create api --group webapp --version v1 --kind Guestbook --resource=false --controller",
            false,
        ),
        // A deploy-image controller needs its types' fields: not without re-scaffolding them.
        (
            "create api --group webapp --version v1 --kind Guestbook --resource=false --controller --image nginx:1.27 --force",
            false,
        ),
        (
            "create api --group webapp --version v1 --kind Guestbook --image nginx:1.27 --force",
            true,
        ),
        (
            "create api --group webapp --version v1 --kind Guestbook --resource=false --controller --image nginx:1.28 --force",
            true,
        ),
        (
            "create api --group webapp --version v1 --kind Guestbook --namespaced=false --force",
            true,
        ),
        (
            "create api --group core --version v1 --kind ConfigMap --resource=false --controller",
            true,
        ),
        (
            "create api --group core --version v1 --kind ConfigMap --resource=false --controller",
            false,
        ),
        (
            "create api --group core --version v1 --kind ConfigMap --resource=false --controller --force",
            true,
        ),
        (
            "create api --group apps --version v1 --kind Deployment --resource=false --controller --force",
            true,
        ),
        (
            "create webhook --group cache --version v1 --kind Memcached --defaulting",
            true,
        ),
        (
            "create webhook --group cache --version v1 --kind Memcached --defaulting",
            true,
        ),
        (
            "create webhook --group cache --version v1 --kind Memcached --programmatic-validation",
            true,
        ),
        (
            "create webhook --group cache --version v1 --kind Memcached --defaulting --programmatic-validation --force",
            true,
        ),
        (
            "create webhook --group cache --version v2 --kind Memcached --conversion --spoke v1",
            false,
        ),
        (
            "create webhook --group cache --version v1 --kind Memcached --conversion --spoke v2",
            true,
        ),
        (
            "create webhook --group cache --version v1 --kind Memcached --conversion --spoke v2",
            true,
        ),
        (
            "create webhook --group cache --version v1 --kind Memcached --conversion --spoke v2 --force",
            true,
        ),
        (
            "create webhook --group core --version v1 --kind ConfigMap --defaulting --programmatic-validation",
            true,
        ),
        (
            "create webhook --group core --version v1 --kind ConfigMap --defaulting --force",
            true,
        ),
        (
            "edit api --group cache --version v1 --kind Memcached --deprecated",
            true,
        ),
        (
            "edit api --group cache --version v1 --kind Memcached --deprecated",
            true,
        ),
        (
            "edit api --group cache --version v1 --kind Memcached --no-deprecated",
            true,
        ),
        ("generate manifests", true),
        ("generate manifests", true),
        ("upgrade-runtime", true),
    ];
    for (line, succeeds) in steps {
        let before = snapshot(&dir);
        let run = run(&dir, &words(line));
        if *succeeds {
            assert_eq!(run.code, 0, "`{line}` failed:\n{}", run.stderr);
        } else {
            assert_ne!(run.code, 0, "`{line}` should be refused:\n{}", run.stderr);
            assert!(snapshot(&dir) == before, "`{line}` was refused but wrote");
        }
        ok(&dir, &["generate", "manifests", "--check"]);
        check_duplicate_tests(&dir, line);
    }
    let expected_warnings = ok(&dir, &["generate", "rbac"]).stderr;
    assert!(
        !expected_warnings.contains("warning"),
        "{expected_warnings}"
    );

    cargo(&dir, &["fmt", "--check"]);
    cargo(&dir, &["check", "--all-targets"]);
}

/// No test function is defined twice in the project's test files (cheaper than a build, and it
/// names the step).
fn check_duplicate_tests(dir: &Path, step: &str) {
    for file in ["tests/e2e.rs", "tests/integration.rs"] {
        let text = read(dir, file);
        let mut seen = std::collections::BTreeSet::new();
        for name in text
            .lines()
            // Top-level tests only: each `_faults` module has the same names inside.
            .filter_map(|l| l.strip_prefix("async fn "))
            .map(|l| l.split('(').next().unwrap())
            .filter(|n| !n.is_empty())
        {
            assert!(
                seen.insert(name.to_string()),
                "after `{step}`: {file} defines `{name}` twice"
            );
        }
    }
}

/// `create webhook` re-run for webhooks the kind has already (all of them, or some), without
/// `--force`, changes nothing: not a file, not a line of PROJECT's history.
#[test]
fn a_webhook_rerun_that_adds_nothing_changes_nothing() {
    let tmp = init_project("rewh-op");
    let dir = project_dir(&tmp, "rewh-op");
    ok(
        &dir,
        &words("create api --group cache --version v1 --kind Memcached"),
    );
    let both = "create webhook --group cache --version v1 --kind Memcached --defaulting --programmatic-validation";
    ok(&dir, &words(both));
    let before = tree(&dir);
    for again in [
        both,
        "create webhook --group cache --version v1 --kind Memcached --defaulting",
        "create webhook --group cache --version v1 --kind Memcached --programmatic-validation",
    ] {
        ok(&dir, &words(again));
        assert_eq!(
            differences(&before, &tree(&dir)),
            Vec::<String>::new(),
            "{again}"
        );
    }
    let project = read(&dir, "PROJECT");
    assert_eq!(project.matches("create webhook").count(), 1, "{project}");
}
