//! `operator-rs edit api`: the types are the source of truth for which version of a kind is
//! stored, served and deprecated. Runs the real binary on scaffolded and hand-written projects
//! and checks the edited source (parses, rustfmt-clean), PROJECT, the CRD and the refusals.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::*;

const V1: &str = "src/api/v1/cron_job.rs";
const V2: &str = "src/api/v2/cron_job.rs";
const CRD: &str = "config/crd/bases/batch.example.com_cronjobs.yaml";

/// The CRD's versions by name: (name, served, storage, deprecated, deprecationWarning).
fn crd_versions(dir: &Path) -> Vec<(String, bool, bool, bool, Option<String>)> {
    let crd: serde_json::Value = serde_saphyr::from_str(&read(dir, CRD)).unwrap();
    let mut versions = crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_string(),
                v["served"].as_bool().unwrap(),
                v["storage"].as_bool().unwrap(),
                v["deprecated"].as_bool().unwrap_or(false),
                v["deprecationWarning"].as_str().map(str::to_string),
            )
        })
        .collect::<Vec<_>>();
    versions.sort();
    versions
}

/// Which versions PROJECT marks `storage: true`.
fn project_storage(dir: &Path) -> Vec<String> {
    operator_rs::project::Project::parse(&read(dir, "PROJECT"))
        .unwrap()
        .resources
        .iter()
        .filter(|r| r.api.as_ref().is_some_and(|a| a.storage))
        .map(|r| r.version.clone())
        .collect()
}

/// The file parses as Rust and `rustfmt --check` accepts it (skipped, visibly, without rustfmt).
fn assert_clean_rust(dir: &Path, rel: &str) {
    let text = read(dir, rel);
    if let Err(e) = syn::parse_file(&text) {
        panic!("{rel} does not parse: {e}\n{text}");
    }
    match Command::new("rustfmt")
        .args(["--edition", "2024", "--check", rel])
        .current_dir(dir)
        .output()
    {
        Ok(out) => assert!(
            out.status.success(),
            "{rel} is not rustfmt-clean:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(_) => println!("SKIP rustfmt --check {rel}: rustfmt is not installed"),
    }
}

fn edit(dir: &Path, line: &str) -> Run {
    ok(dir, &words(&format!("edit api {line}")))
}

/// `create api` of a further version writes `storage = false` into its types; `edit api`
/// moves the storage version there and back, in the source, PROJECT and the CRD.
#[test]
fn storage_moves_back_and_forth() {
    let tmp = two_versions("storage-moves");
    let dir = project_dir(&tmp, "storage-moves");
    let (v1_before, v2_before) = (read(&dir, V1), read(&dir, V2));
    assert!(!v1_before.contains("storage = false"), "{v1_before}");
    assert!(v2_before.contains("    storage = false,\n"), "{v2_before}");
    let crd_before = read(&dir, CRD);
    assert_eq!(
        crd_versions(&dir)
            .iter()
            .map(|v| (v.0.as_str(), v.2))
            .collect::<Vec<_>>(),
        vec![("v1", true), ("v2", false)]
    );

    let r = edit(&dir, "--group batch --version v2 --kind CronJob --storage");
    assert!(
        r.stderr.contains(V1) && r.stderr.contains(V2) && r.stderr.contains(CRD),
        "{}",
        r.stderr
    );
    let (v1, v2) = (read(&dir, V1), read(&dir, V2));
    assert!(v1.contains("storage = false"), "{v1}");
    assert!(!v2.contains("storage = false"), "{v2}");
    for rel in [V1, V2] {
        assert_clean_rust(&dir, rel);
    }
    assert_eq!(
        crd_versions(&dir)
            .iter()
            .map(|v| (v.0.as_str(), v.2))
            .collect::<Vec<_>>(),
        vec![("v1", false), ("v2", true)]
    );
    assert_eq!(project_storage(&dir), vec!["v2"]);
    let check = run(&dir, &words("generate crds --check"));
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);

    // Again: nothing to do, nothing written.
    let before = snapshot(&dir);
    let r = edit(&dir, "--group batch --version v2 --kind CronJob --storage");
    assert!(r.stderr.contains("nothing to change"), "{}", r.stderr);
    assert_eq!(snapshot(&dir), before);

    // And back: v1 is as `create api` wrote it, the CRD as it was.
    edit(&dir, "--group batch --version v1 --kind CronJob --storage");
    assert_eq!(read(&dir, V1), v1_before);
    assert!(read(&dir, V2).contains("storage = false"));
    assert_clean_rust(&dir, V2);
    assert_eq!(read(&dir, CRD), crd_before);
    assert_eq!(project_storage(&dir), vec!["v1"]);
}

/// `--deprecated`, with and without a warning, `--no-deprecated`, and `--served`.
#[test]
fn deprecated_and_served() {
    let tmp = two_versions("deprecated");
    let dir = project_dir(&tmp, "deprecated");
    edit(
        &dir,
        "--group batch --version v2 --kind CronJob --deprecated",
    );
    assert_eq!(
        crd_versions(&dir)[1],
        ("v2".into(), true, false, true, None)
    );
    assert_clean_rust(&dir, V2);

    // A warning with quotes and a backslash comes out in the CRD exactly.
    let warning = r#"batch/v2 CronJob is "gone" \ use v1"#;
    let flag = format!("--deprecated={warning}");
    ok(
        &dir,
        &[
            "edit",
            "api",
            "--group",
            "batch",
            "--version",
            "v2",
            "--kind",
            "CronJob",
            &flag,
        ],
    );
    assert_eq!(
        crd_versions(&dir)[1],
        ("v2".into(), true, false, true, Some(warning.to_string()))
    );
    assert_eq!(read(&dir, V2).matches("\n    deprecated").count(), 1);
    assert_clean_rust(&dir, V2);
    let check = run(&dir, &words("generate crds --check"));
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);

    edit(
        &dir,
        "--group batch --version v2 --kind CronJob --no-deprecated",
    );
    assert_eq!(
        crd_versions(&dir)[1],
        ("v2".into(), true, false, false, None)
    );
    assert!(!read(&dir, V2).contains("deprecated ="));

    edit(
        &dir,
        "--group batch --version v2 --kind CronJob --served=false",
    );
    assert_eq!(
        crd_versions(&dir)[1],
        ("v2".into(), false, false, false, None)
    );
    assert!(read(&dir, V2).contains("served = false"));
    assert_clean_rust(&dir, V2);
    edit(
        &dir,
        "--group batch --version v2 --kind CronJob --served=true",
    );
    assert!(!read(&dir, V2).contains("served ="));
    assert!(crd_versions(&dir)[1].1, "v2 is served again");
}

/// What is refused, with what it says, and that nothing is written.
#[test]
fn refusals() {
    let tmp = two_versions("refusals");
    let dir = project_dir(&tmp, "refusals");
    let before = snapshot(&dir);
    let refused = |line: &str, expected: &[&str]| {
        let r = run(&dir, &words(&format!("edit api {line}")));
        assert_ne!(r.code, 0, "edit api {line} was accepted");
        for e in expected {
            assert!(
                r.stderr.contains(e),
                "edit api {line}: no {e:?} in\n{}",
                r.stderr
            );
        }
        assert_eq!(snapshot(&dir), before, "edit api {line} wrote something");
    };
    refused(
        "--group batch --version v1 --kind CronJob",
        &["nothing to change", "--storage"],
    );
    refused(
        "--group batch --version v1 --kind CronJb --storage",
        &[
            "no kind CronJb in group batch.example.com",
            "did you mean CronJob?",
        ],
    );
    refused(
        "--group cache --version v1 --kind CronJob --storage",
        &["CronJob is in group batch.example.com", "--group batch"],
    );
    refused(
        "--group batch --version v3 --kind CronJob --storage",
        &[
            "CronJob.batch.example.com has no version v3",
            "v1 (at src/api/v1/cron_job.rs:",
            "v2 (at src/api/v2/cron_job.rs:",
            "create api --group batch --version v3 --kind CronJob --controller=false",
        ],
    );
    refused(
        "--group batch --version v1 --kind CronJob --served=false",
        &[
            "v1 is the storage version of CronJob",
            "must be served",
            "operator-rs edit api --group batch --version v2 --kind CronJob --storage",
        ],
    );
    refused(
        "--group batch --version v1 --kind CronJob --deprecated --no-deprecated",
        &["cannot be used with"],
    );
    // An unserved version cannot become the storage version unless served too.
    edit(
        &dir,
        "--group batch --version v2 --kind CronJob --served=false",
    );
    let before = snapshot(&dir);
    let r = run(
        &dir,
        &words("edit api --group batch --version v2 --kind CronJob --storage"),
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("v2 CronJob is not served")
            && r.stderr.contains("--storage --served=true"),
        "{}",
        r.stderr
    );
    assert_eq!(snapshot(&dir), before);
    edit(
        &dir,
        "--group batch --version v2 --kind CronJob --storage --served=true",
    );
    let mut versions: Vec<(String, bool, bool)> = crd_versions(&dir)
        .into_iter()
        .map(|v| (v.0, v.1, v.2))
        .collect();
    versions.sort();
    assert_eq!(
        versions,
        vec![("v1".into(), true, false), ("v2".into(), true, true)]
    );
}

#[test]
fn help_has_an_example() {
    let tmp = tempfile::tempdir().unwrap();
    let r = ok(tmp.path(), &words("edit api --help"));
    assert!(
        r.stdout
            .contains("operator-rs edit api --group batch --version v2 --kind CronJob --storage"),
        "{}",
        r.stdout
    );
    for flag in ["--storage", "--served", "--deprecated", "--no-deprecated"] {
        assert!(r.stdout.contains(flag), "{flag}: {}", r.stdout);
    }
}

/// Hand-written versions in one file (inline modules, raw strings, comments, a second
/// `#[kube]` attribute): zero or two storage versions are refused with where each version is and
/// the command that fixes it; that command works, and leaves the file rustfmt-clean.
const HANDWRITTEN: &str = r##"//! Shops, written by hand.

pub mod v1 {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// The first shop.
    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(group = "shop.example.com", version = "v1", kind = "Shop", namespaced)]
    #[kube(printcolumn(name = "Size", type_ = "integer", json_path = r#".spec.size"#))]
    pub struct ShopSpec {
        pub size: i32,
    }
}

pub mod v2 {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// The second shop.
    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(
        group = "shop.example.com", // the group
        version = "v2",
        kind = "Shop",
        // Every shop lives in a namespace.
        namespaced,
        doc = r#"A "shop", version 2"#,
    )]
    pub struct ShopSpec {
        pub size: i64,
    }
}
"##;

fn handwritten_project(name: &str, text: &str) -> tempfile::TempDir {
    let tmp = init_project(name);
    let dir = project_dir(&tmp, name);
    std::fs::write(dir.join("src/shops.rs"), text).unwrap();
    let lib = read(&dir, "src/lib.rs");
    std::fs::write(dir.join("src/lib.rs"), format!("{lib}pub mod shops;\n")).unwrap();
    tmp
}

/// The fix command a refusal prints, run as printed.
fn run_printed_fix(dir: &Path, stderr: &str) -> Run {
    let line = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("operator-rs "))
        .unwrap_or_else(|| panic!("no command in\n{stderr}"));
    ok(dir, &words(line))
}

#[test]
fn two_storage_versions_by_hand() {
    let tmp = handwritten_project("two-storage", HANDWRITTEN);
    let dir = project_dir(&tmp, "two-storage");
    let r = run(&dir, &words("generate crds"));
    assert_ne!(r.code, 0);
    for e in [
        "Shop.shop.example.com has 2 storage versions",
        "v1 at src/shops.rs:12:16",
        "v2 at src/shops.rs:32:16",
        "operator-rs edit api --group shop.example.com --version v1 --kind Shop --storage",
    ] {
        assert!(r.stderr.contains(e), "no {e:?} in\n{}", r.stderr);
    }
    run_printed_fix(&dir, &r.stderr);
    let text = read(&dir, "src/shops.rs");
    // Only v2's attribute changed: one line more, the comments and raw strings kept.
    assert_eq!(
        text,
        HANDWRITTEN.replace(
            "        doc = r#\"A \"shop\", version 2\"#,\n",
            "        doc = r#\"A \"shop\", version 2\"#,\n        storage = false,\n"
        )
    );
    assert_clean_rust(&dir, "src/shops.rs");
    let check = run(&dir, &words("generate crds --check"));
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);

    // v2 stored: v1's one-line attribute grows past the width, and is laid out as rustfmt does.
    edit(
        &dir,
        "--group shop.example.com --version v2 --kind Shop --storage",
    );
    let text = read(&dir, "src/shops.rs");
    assert!(
        text.contains("    #[kube(\n        group = \"shop.example.com\",\n        version = \"v1\",\n        kind = \"Shop\",\n        namespaced,\n        storage = false\n    )]\n    #[kube(printcolumn("),
        "{text}"
    );
    assert_clean_rust(&dir, "src/shops.rs");
    assert_eq!(
        read(&dir, "src/shops.rs")
            .matches("storage = false")
            .count(),
        1
    );
}

#[test]
fn zero_storage_versions_by_hand() {
    let text = HANDWRITTEN
        .replace("namespaced)]", "namespaced, storage = false)]")
        .replace(
            "        doc = r#\"A \"shop\", version 2\"#,\n",
            "        doc = r#\"A \"shop\", version 2\"#,\n        storage = false,\n",
        );
    let tmp = handwritten_project("zero-storage", &text);
    let dir = project_dir(&tmp, "zero-storage");
    let r = run(&dir, &words("generate crds"));
    assert_ne!(r.code, 0);
    for e in [
        "Shop.shop.example.com has no storage version",
        "v1 at src/shops.rs:12:16",
        "v2 at src/shops.rs:33:16",
        "operator-rs edit api --group shop.example.com --version v1 --kind Shop --storage",
    ] {
        assert!(r.stderr.contains(e), "no {e:?} in\n{}", r.stderr);
    }
    run_printed_fix(&dir, &r.stderr);
    assert_eq!(
        read(&dir, "src/shops.rs")
            .matches("storage = false")
            .count(),
        1
    );
    assert_clean_rust(&dir, "src/shops.rs");
    let check = run(&dir, &words("generate crds --check"));
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
}

/// A version that is the only served one cannot be unserved (here the storage version is
/// unserved by hand, which kube-apiserver refuses anyway).
#[test]
fn only_served_version() {
    let text = HANDWRITTEN
        .replace("namespaced)]", "namespaced, storage = false)]")
        .replace(
            "        namespaced,\n",
            "        namespaced,\n        served = false,\n",
        );
    let tmp = handwritten_project("only-served", &text);
    let dir = project_dir(&tmp, "only-served");
    let r = run(
        &dir,
        &words("edit api --group shop.example.com --version v1 --kind Shop --served=false"),
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("v1 is the only served version of Shop")
            && r.stderr.contains("--version v2 --kind Shop --served=true"),
        "{}",
        r.stderr
    );
}

/// A project made before `create api` wrote `storage = false`: every version defaults to being
/// stored and PROJECT marks one. It keeps working, with a warning and the command that records
/// the choice in the source.
#[test]
fn projects_made_before_storage_in_the_source() {
    let tmp = two_versions("legacy");
    let dir = project_dir(&tmp, "legacy");
    let v2 = read(&dir, V2).replace("    storage = false,\n", "");
    std::fs::write(dir.join(V2), v2).unwrap();
    let r = ok(&dir, &words("generate crds --check"));
    assert!(
        r.stderr.contains("PROJECT's `storage: true` picks v1")
            && r.stderr.contains(
                "operator-rs edit api --group batch --version v1 --kind CronJob --storage"
            ),
        "{}",
        r.stderr
    );
    let r = run_printed_fix(&dir, &r.stderr);
    assert!(!r.stderr.contains("picks v1"), "{}", r.stderr);
    assert!(read(&dir, V2).contains("storage = false"));
    assert_clean_rust(&dir, V2);
    let r = ok(&dir, &words("generate crds --check"));
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
}

/// Each command's parser errors end with that command's example, also past `-C <dir>` (which
/// used to be taken for the command, giving `init`'s example under `edit api`'s errors).
#[test]
fn parser_errors_end_with_the_commands_own_example() {
    let tmp = two_versions("example-op");
    let dir = project_dir(&tmp, "example-op");
    let d = dir.to_str().unwrap();
    for (args, example) in [
        (
            vec![
                "-C",
                d,
                "edit",
                "api",
                "--group",
                "batch",
                "--version",
                "v1",
            ],
            "operator-rs edit api --group batch --version v2 --kind CronJob --storage",
        ),
        (
            vec![
                "-C",
                d,
                "edit",
                "api",
                "--group",
                "batch",
                "--version",
                "v1",
                "--kind",
                "CronJob",
                "--served",
                "maybe",
            ],
            "operator-rs edit api --group batch",
        ),
        (
            vec![
                "edit",
                "api",
                "-C",
                d,
                "--kind",
                "CronJob",
                "--no-such-flag",
            ],
            "operator-rs edit api --group batch",
        ),
        (
            vec!["-C", d, "create", "webhook", "--group", "batch"],
            "operator-rs create webhook --group batch --version v1 --kind CronJob",
        ),
        (
            vec!["-C", d, "generate", "rbac", "--exact"],
            "operator-rs generate rbac --check",
        ),
        (
            vec!["-C", d, "upgrade-runtime", "--force"],
            "operator-rs upgrade-runtime",
        ),
    ] {
        let r = run(tmp.path(), &args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        let shown = r.stderr.split("Example:").nth(1).unwrap_or_default();
        assert!(
            shown.contains(example),
            "{args:?}: {example} in\n{}",
            r.stderr
        );
        assert!(
            !shown.contains("operator-rs init"),
            "{args:?}:\n{}",
            r.stderr
        );
    }
}

/// The command lines `edit api`'s errors offer are `edit api`'s, complete (no `...`), at a
/// version the kind has, with the changes asked for, and taken as they are.
#[test]
fn error_examples_are_complete_and_taken() {
    let tmp = two_versions("edit-examples");
    let dir = project_dir(&tmp, "edit-examples");
    for (line, wanted) in [
        (
            "edit api --group batch --version v2 --kind CronJb --storage",
            "e.g. operator-rs edit api --group batch --version v2 --kind CronJob --storage",
        ),
        (
            "edit api --group cache --version v9 --kind CronJob --deprecated",
            "e.g. operator-rs edit api --group batch --version v1 --kind CronJob --deprecated",
        ),
        (
            "edit api --group batch --version v1 --kind cronjob --deprecated=old",
            "e.g. operator-rs edit api --group batch --version v1 --kind CronJob --deprecated=\"old\"",
        ),
    ] {
        let r = run(&dir, &words(line));
        assert_eq!(r.code, 2, "{line}: {}", r.stderr);
        assert!(
            r.stderr.contains(wanted),
            "{line}: {wanted} in\n{}",
            r.stderr
        );
        assert!(!r.stderr.contains("..."), "{}", r.stderr);
        let example = r
            .stderr
            .split("e.g. operator-rs ")
            .nth(1)
            .unwrap()
            .lines()
            .next()
            .unwrap();
        let copy = tempfile::tempdir().unwrap();
        copy_dir(&dir, copy.path());
        let args: Vec<String> = (example.split_whitespace())
            .map(|w| w.replace('"', ""))
            .collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        ok(copy.path(), &args);
    }
}

/// A `#[kube(...)]` behind `#[cfg_attr(feature = ..., ...)]` (here v2's `storage = false`) may or
/// may not apply: `edit api` refuses at the attribute, points to `--exact` and writes nothing (it
/// used to read the kind without it, and left no storage version); `generate crds` likewise.
#[test]
fn a_kube_attribute_behind_cfg_attr_is_refused_before_anything_is_written() {
    let tmp = two_versions("cfg-attr-kube");
    let dir = project_dir(&tmp, "cfg-attr-kube");
    let v2 = read(&dir, V2);
    assert!(v2.contains("    storage = false,\n"), "{v2}");
    let v2 = v2.replace("    storage = false,\n", "").replace(
        "pub struct CronJobSpec",
        "#[cfg_attr(feature = \"legacy\", kube(storage = false))]\npub struct CronJobSpec",
    );
    std::fs::write(dir.join(V2), &v2).unwrap();
    let line = v2
        .lines()
        .position(|l| l.starts_with("#[cfg_attr"))
        .unwrap()
        + 1;
    let before = snapshot(&dir);
    for args in [
        "edit api --group batch --version v1 --kind CronJob --storage",
        "generate crds",
    ] {
        let r = run(&dir, &words(args));
        assert_ne!(r.code, 0, "{args}: {}", r.stderr);
        for e in [
            format!("{V2}:{line}:1: "),
            "depends on the build".to_string(),
            "--exact".to_string(),
        ] {
            assert!(r.stderr.contains(&e), "{args}: no {e:?} in\n{}", r.stderr);
        }
        assert_eq!(snapshot(&dir), before, "{args} wrote");
    }
}

/// `edit api --deprecated=<warning>`: a warning kube-apiserver refuses (over 256 bytes, empty of
/// printable characters: a control, format, separator, private-use or unassigned character;
/// tests/apiserver/names.rs checks the rule against the API server) is refused before anything
/// is written; one it accepts goes into the source and reaches the CRD unchanged.
#[test]
fn deprecation_warnings_are_checked_before_anything_is_written() {
    let tmp = two_versions("warnings");
    let dir = project_dir(&tmp, "warnings");
    let before = snapshot(&dir);
    let refused: Vec<String> = vec![
        "line\nbreak".into(),
        "tab\there".into(),
        "carriage\rreturn".into(),
        "x".repeat(257),
        "x".repeat(300),
        "é".repeat(129), // 129 characters, 258 bytes
        "zero\u{200b}width".into(),
        "no\u{a0}break".into(),
        "soft\u{ad}hyphen".into(),
        "line\u{2028}separator".into(),
        "bidi\u{202e}override".into(),
        "bom\u{feff}".into(),
        "ideographic\u{3000}space".into(),
        "private\u{e000}use".into(),
        "unassigned\u{378}".into(),
        "escape\u{1b}[31m".into(),
        "delete\u{7f}".into(),
        "next line\u{85}".into(),
    ];
    for w in &refused {
        let r = run(
            &dir,
            &[
                "edit",
                "api",
                "--group",
                "batch",
                "--version",
                "v1",
                "--kind",
                "CronJob",
                &format!("--deprecated={w}"),
            ],
        );
        assert_ne!(r.code, 0, "{w:?} was accepted");
        for e in [
            "invalid --deprecated",
            "at most 256 bytes",
            "e.g. operator-rs edit api",
        ] {
            assert!(r.stderr.contains(e), "{w:?}: no {e:?} in\n{}", r.stderr);
        }
        assert_eq!(snapshot(&dir), before, "{w:?} wrote something");
    }
    let accepted: Vec<String> = vec![
        "x".repeat(256),
        "é".repeat(128),
        "quote \" backslash \\ {braces} and 'single'".into(),
        "日本語の警告 \u{1f680}".into(),
        "combining e\u{301}".into(),
        " ".into(),
    ];
    for w in &accepted {
        ok(
            &dir,
            &[
                "edit",
                "api",
                "--group",
                "batch",
                "--version",
                "v1",
                "--kind",
                "CronJob",
                &format!("--deprecated={w}"),
            ],
        );
        let v1 = crd_versions(&dir)
            .into_iter()
            .find(|v| v.0 == "v1")
            .unwrap();
        assert!(v1.3, "{w:?}: v1 is not deprecated");
        assert_eq!(v1.4.as_deref(), Some(w.as_str()));
        assert_clean_rust(&dir, V1);
        let check = run(&dir, &words("generate crds --check"));
        assert_eq!(check.code, 0, "{w:?}: {}{}", check.stdout, check.stderr);
    }
}

/// A kind that `generate crds` refuses as `edit api` would leave it (a CEL rule that does not
/// compile, a deprecation warning written by hand, in another version than the one edited):
/// nothing is written, the source, PROJECT and the CRD stay as they were.
#[test]
fn a_refusal_anywhere_in_the_crate_writes_nothing() {
    let tmp = two_versions("anywhere");
    let dir = project_dir(&tmp, "anywhere");
    let v1 = read(&dir, V1);
    let breakers = [
        (
            "    namespaced,\n",
            "    namespaced,\n    validation = \"self.spec.x ==\",\n",
            "does not compile",
        ),
        (
            "    namespaced,\n",
            "    namespaced,\n    deprecated = \"a\\tb\",\n",
            "deprecationWarning",
        ),
        (
            "    namespaced,\n",
            "    namespaced,\n    deprecated = \"\",\n",
            "must not be an empty string",
        ),
    ];
    for (from, to, why) in breakers {
        assert!(v1.contains(from), "{v1}");
        std::fs::write(dir.join(V1), v1.replacen(from, to, 1)).unwrap();
        let before = snapshot(&dir);
        for line in [
            "--group batch --version v2 --kind CronJob --storage",
            "--group batch --version v2 --kind CronJob --deprecated",
            "--group batch --version v2 --kind CronJob --served=false",
        ] {
            let r = run(&dir, &words(&format!("edit api {line}")));
            assert_ne!(r.code, 0, "{to}: edit api {line} was accepted");
            for e in [why, "src/api/v1/cron_job.rs:", "Nothing was written"] {
                assert!(r.stderr.contains(e), "{to}: no {e:?} in\n{}", r.stderr);
            }
            assert_eq!(
                snapshot(&dir),
                before,
                "{to}: edit api {line} wrote something"
            );
        }
    }
}

/// One version alone, `storage = false`: no storage version, refused by `generate crds` and by
/// `edit api` unless it makes the version stored.
#[test]
fn a_lone_version_not_stored_is_refused() {
    let tmp = init_project("lone");
    let dir = project_dir(&tmp, "lone");
    ok(
        &dir,
        &words("create api --group batch --version v1 --kind CronJob --controller=false"),
    );
    let v1 = read(&dir, V1);
    std::fs::write(
        dir.join(V1),
        v1.replacen(
            "    namespaced,\n",
            "    namespaced,\n    storage = false,\n",
            1,
        ),
    )
    .unwrap();
    let before = snapshot(&dir);
    for line in [
        "generate crds",
        "generate manifests",
        "edit api --group batch --version v1 --kind CronJob --deprecated",
    ] {
        let r = run(&dir, &words(line));
        assert_ne!(r.code, 0, "{line} was accepted");
        for e in [
            "CronJob.batch.example.com has no storage version",
            "operator-rs edit api --group batch --version v1 --kind CronJob --storage",
        ] {
            assert!(r.stderr.contains(e), "{line}: no {e:?} in\n{}", r.stderr);
        }
        assert_eq!(snapshot(&dir), before, "{line} wrote something");
    }
    run_printed_fix(&dir, &run(&dir, &words("generate crds")).stderr);
    assert!(!read(&dir, V1).contains("storage = false"));
    assert!(crd_versions(&dir)[0].2, "v1 is stored");
}

const CONTROLLER: &str = "src/controllers/cron_job.rs";

/// `--served=false` on the version a controller of the project watches (its manager would stop
/// at start) is refused, naming where the controller says so, however the source names the
/// type (the scaffold's `use ... as Kind`, a rename and a type alias around
/// `PartialObjectMeta<_>`); nothing is written. With `--force` it is done and the steps printed.
/// The advice after `--storage` names the controller instead of "delete its types".
#[test]
fn unserving_the_version_a_controller_watches_is_refused() {
    let tmp = two_versions("watched");
    let dir = project_dir(&tmp, "watched");
    let moved = edit(&dir, "--group batch --version v2 --kind CronJob --storage");
    assert!(
        moved.stderr.contains(&format!(
            "make the controller watch v2 instead (the `type Kind` of its Reconciler at {CONTROLLER}:"
        )),
        "{}",
        moved.stderr
    );
    let scaffolded = read(&dir, CONTROLLER);
    let aliased = scaffolded.replace(
        "use crate::api::v1::CronJob as Kind;",
        "use crate::api::v1::CronJob as Watched;\ntype Kind = kube::api::PartialObjectMeta<Watched>;",
    );
    assert_ne!(aliased, scaffolded);
    for (how, source) in [
        ("as scaffolded", &scaffolded),
        ("through an alias", &aliased),
    ] {
        std::fs::write(dir.join(CONTROLLER), source).unwrap();
        let before = snapshot(&dir);
        let r = run(
            &dir,
            &words("edit api --group batch --version v1 --kind CronJob --served=false"),
        );
        assert_ne!(r.code, 0, "{how}: accepted\n{}", r.stderr);
        for e in [
            "batch.example.com/v1 CronJob is watched by a controller of this project",
            &format!("at {CONTROLLER}:"),
            "stops at start",
            "make the controller watch CronJob of v2 (its type is at src/api/v2/cron_job.rs:",
            "Nothing was written",
            "operator-rs edit api --group batch --version v1 --kind CronJob --served=false --force",
        ] {
            assert!(r.stderr.contains(e), "{how}: no {e:?} in\n{}", r.stderr);
        }
        assert_eq!(snapshot(&dir), before, "{how}: something was written");
    }
    // v2 is watched by no controller: unserving it is not this refusal (it is the storage
    // version, refused for that).
    let r = run(
        &dir,
        &words("edit api --group batch --version v2 --kind CronJob --served=false"),
    );
    assert!(
        !r.stderr.contains("watched by a controller"),
        "{}",
        r.stderr
    );

    let forced = edit(
        &dir,
        "--group batch --version v1 --kind CronJob --served=false --force",
    );
    assert!(
        forced.stderr.contains("Done with --force. What to do now:")
            && forced
                .stderr
                .contains("make the controller watch CronJob of v2"),
        "{}",
        forced.stderr
    );
    assert!(!crd_versions(&dir)[0].1, "v1 is not served");
    assert!(read(&dir, V1).contains("served = false"));
}

/// The conversion hub: moving the storage version away from it is refused (`create webhook`
/// for the kind would be refused afterwards), and so is unserving it; forced, the advice keeps
/// the hub's types and never says to delete them.
#[test]
fn the_conversion_hub_is_guarded() {
    let tmp = init_project("hub");
    let dir = project_dir(&tmp, "hub");
    for line in [
        "create api --group batch --version v1 --kind CronJob --controller=false",
        "create api --group batch --version v2 --kind CronJob --controller=false",
        "create webhook --group batch --version v1 --kind CronJob --conversion --spoke v2",
    ] {
        ok(&dir, &words(line));
    }
    let before = snapshot(&dir);
    let r = run(
        &dir,
        &words("edit api --group batch --version v2 --kind CronJob --storage"),
    );
    assert_ne!(r.code, 0, "accepted\n{}", r.stderr);
    for e in [
        "the conversion webhook of CronJob has v1 as its hub (PROJECT: webhooks.conversion on v1, spokes [v2])",
        "`operator-rs create webhook` for CronJob is refused afterwards",
        "operator-rs edit api --group batch --version v2 --kind CronJob --storage --force",
    ] {
        assert!(r.stderr.contains(e), "no {e:?} in\n{}", r.stderr);
    }
    assert_eq!(snapshot(&dir), before, "something was written");

    let forced = edit(
        &dir,
        "--group batch --version v2 --kind CronJob --storage --force",
    );
    assert!(
        forced
            .stderr
            .contains("keep v1's types: v1 is the conversion hub")
            && !forced.stderr.contains("delete its types"),
        "{}",
        forced.stderr
    );
    assert_eq!(project_storage(&dir), vec!["v2"]);

    let before = snapshot(&dir);
    let r = run(
        &dir,
        &words("edit api --group batch --version v1 --kind CronJob --served=false"),
    );
    assert_ne!(r.code, 0, "accepted\n{}", r.stderr);
    assert!(
        r.stderr
            .contains("batch.example.com/v1 CronJob is the hub of its conversion webhook")
            && r.stderr.contains("never delete them"),
        "{}",
        r.stderr
    );
    assert_eq!(snapshot(&dir), before, "something was written");
}

/// `--storage` on the version already stored (as `create api` made it) changes nothing: it says
/// so, exits 0, and writes nothing (PROJECT records no command).
#[test]
fn storage_on_the_storage_version_writes_nothing() {
    let tmp = two_versions("already-stored");
    let dir = project_dir(&tmp, "already-stored");
    let before = snapshot(&dir);
    let r = edit(&dir, "--group batch --version v1 --kind CronJob --storage");
    assert!(
        r.stderr
            .contains("nothing to change: batch.example.com/v1 CronJob: the storage version"),
        "{}",
        r.stderr
    );
    assert_eq!(snapshot(&dir), before);
}

/// `--served=false` on a kind's only version: refused with commands that apply, which, run as
/// printed, get there.
#[test]
fn the_only_version_is_refused_with_advice_that_applies() {
    let tmp = init_project("only-version");
    let dir = project_dir(&tmp, "only-version");
    ok(
        &dir,
        &words("create api --group batch --version v1 --kind CronJob --controller=false"),
    );
    let before = snapshot(&dir);
    let r = run(
        &dir,
        &words("edit api --group batch --version v1 --kind CronJob --served=false"),
    );
    assert_ne!(r.code, 0);
    assert_eq!(snapshot(&dir), before);
    assert!(
        r.stderr.contains("v1 is the only version of CronJob") && !r.stderr.contains('<'),
        "{}",
        r.stderr
    );
    let printed: Vec<&str> = (r.stderr.lines())
        .filter_map(|l| l.trim().strip_prefix("operator-rs "))
        .collect();
    assert_eq!(
        printed,
        [
            "create api --group batch --version v2 --kind CronJob --controller=false",
            "edit api --group batch --version v2 --kind CronJob --storage",
            "edit api --group batch --version v1 --kind CronJob --served=false",
        ],
        "{}",
        r.stderr
    );
    for line in printed {
        ok(&dir, &words(line));
    }
    assert_eq!(
        crd_versions(&dir)
            .iter()
            .map(|v| (v.0.as_str(), v.1, v.2))
            .collect::<Vec<_>>(),
        vec![("v1", false, false), ("v2", true, true)]
    );
}
