//! `operator-rs generate crds --check-compat <ref>`: small projects committed in a temporary git
//! repository (tag `v1`), their types changed, the command run. Each rule has a case asserting
//! exactly the findings printed (severity, rule id, file:line:col of the Rust type or field) and
//! the exit code; compatible changes pass. Also the refusals (not a git repository, an unknown
//! revision, a project that was not there), a project in a folder of its repository, the user's
//! tree left as it was, the generated CI step run as on a pull request, and, where kube-apiserver
//! has an opinion, its verdict on the same change next to ours.

use crate::common;
use crate::control_plane;

use std::path::Path;

use common::*;

const HEAD: &str = "use std::collections::BTreeMap;\nuse kube::{CustomResource, KubeSchema};\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n";

const PROJECT: &str = "version: \"3\"\ndomain: example.com\nprojectName: compat\ncrateName: compat\nlayout:\n- rust.operator-rs.io/v1\ncliVersion: 0.1.0\nk8sOpenapiFeature: v1_37\n";

/// One version of kind `Widget` of `demo.example.com`: `attrs` go into its `#[kube(...)]`
/// (after `namespaced` unless `cluster`), `fields` into `WidgetSpec`, `extra` after it.
fn widget(attrs: &str, fields: &str, extra: &str) -> String {
    let scope = if attrs.contains("cluster") {
        ""
    } else {
        ", namespaced"
    };
    let attrs = attrs.replace("cluster", "");
    format!(
        "#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, KubeSchema)]\n#[kube(group = \"demo.example.com\", version = \"v1\", kind = \"Widget\"{scope}{attrs})]\npub struct WidgetSpec {{\n{fields}}}\n{extra}"
    )
}

/// A project (PROJECT and `src/lib.rs` = HEAD + `v1`) in a new git repository, committed and
/// tagged `v1`.
fn committed(v1: &str) -> tempfile::TempDir {
    let tmp = tempfile::Builder::new()
        .prefix("operator-rs-compat-")
        .tempdir()
        .unwrap();
    write_project(tmp.path(), v1);
    git(tmp.path(), &["init", "-q"]);
    git(tmp.path(), &["add", "-A"]);
    git(tmp.path(), &["commit", "-q", "-m", "v1"]);
    git(tmp.path(), &["tag", "v1"]);
    tmp
}

fn write_project(dir: &Path, body: &str) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("PROJECT"), PROJECT).unwrap();
    std::fs::write(dir.join("src/lib.rs"), format!("{HEAD}{body}")).unwrap();
}

/// One finding as printed: severity, rule id, and where (`None`: no longer in the source).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Printed {
    severity: String,
    rule: String,
    at: Option<(String, usize, usize)>,
}

/// The findings of the command's stderr.
fn printed(stderr: &str) -> Vec<Printed> {
    let mut out = Vec::new();
    let mut lines = stderr.lines().peekable();
    while let Some(line) = lines.next() {
        let Some((severity, rest)) = line.split_once('[') else {
            continue;
        };
        if severity != "error" && severity != "warning" {
            continue;
        }
        let Some((rule, _)) = rest.split_once("]: ") else {
            continue;
        };
        let span = lines.next().expect("a span line follows a finding");
        let span = span.trim().strip_prefix("--> ").expect("`--> ` span line");
        let at = (span != "(no longer in the source)").then(|| {
            let mut parts = span.rsplitn(3, ':');
            let col = parts.next().unwrap().parse().unwrap();
            let line = parts.next().unwrap().parse().unwrap();
            (parts.next().unwrap().to_string(), line, col)
        });
        out.push(Printed {
            severity: severity.to_string(),
            rule: rule.to_string(),
            at,
        });
    }
    out.sort();
    out
}

/// Where `marker` first is in `src/lib.rs` as `body` makes it (1-based line and column).
fn at(body: &str, marker: &str) -> (String, usize, usize) {
    let text = format!("{HEAD}{body}");
    for (i, l) in text.lines().enumerate() {
        if let Some(c) = l.find(marker) {
            return ("src/lib.rs".into(), i + 1, c + 1);
        }
    }
    panic!("marker {marker:?} not in {text}")
}

/// One case: the project at `v1`, changed to `v2`; what `--check-compat v1` must print (severity,
/// rule, marker of `v2` it points at or `None`) and its exit code.
struct Case {
    name: &'static str,
    v1: String,
    v2: String,
    expect: Vec<(&'static str, &'static str, Option<&'static str>)>,
    code: i32,
}

fn case(
    name: &'static str,
    v1: String,
    v2: String,
    expect: &[(&'static str, &'static str, Option<&'static str>)],
) -> Case {
    let code = i32::from(expect.iter().any(|(s, _, _)| *s == "error"));
    Case {
        name,
        v1,
        v2,
        expect: expect.to_vec(),
        code,
    }
}

const ITEM: &str = "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub struct Item {\n    pub name: String,\n    pub port: i32,\n}\n";
const MODE2: &str =
    "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub enum Mode { Fast, Slow }\n";
const MODE_FAST: &str =
    "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub enum Mode { Fast }\n";
const MODE3: &str = "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub enum Mode { Fast, Slow, Medium }\n";

/// Version `v` of Widget in module `v`; `attrs` go into its `#[kube(...)]`.
fn module(v: &str, attrs: &str) -> String {
    format!(
        "pub mod {v} {{\n    use super::*;\n    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, KubeSchema)]\n    #[kube(group = \"demo.example.com\", version = \"{v}\", kind = \"Widget\", namespaced{attrs})]\n    pub struct WidgetSpec {{\n        pub size: i32,\n    }}\n}}\n"
    )
}

/// Versions v1 and v2 of Widget: v2 is the storage version unless `v2_attrs` says otherwise.
fn two(v1_attrs: &str, v2_attrs: &str) -> String {
    module("v1", v1_attrs) + &module("v2", v2_attrs)
}

fn cases() -> Vec<Case> {
    let w = |fields: &str| widget("", fields, "");
    let base = "    pub size: i32,\n    pub name: String,\n";
    vec![
        case(
            "field removed",
            w(base),
            w("    pub size: i32,\n"),
            &[("error", "existingFieldRemoval", Some("WidgetSpec {"))],
        ),
        // Issue 31, 19: a removed status field was located at the spec struct.
        case(
            "status field removed: points at the status struct that held it",
            widget(
                ", status = \"WidgetStatus\"",
                "    pub size: i32,\n",
                "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub struct WidgetStatus {\n    pub ready: bool,\n    pub observed: i64,\n}\n",
            ),
            widget(
                ", status = \"WidgetStatus\"",
                "    pub size: i32,\n",
                "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub struct WidgetStatus {\n    pub ready: bool,\n}\n",
            ),
            &[("error", "existingFieldRemoval", Some("WidgetStatus {"))],
        ),
        case(
            "nested field removed: points at the field that holds it",
            widget("", "    pub item: Item,\n", ITEM),
            widget(
                "",
                "    pub item: Item,\n",
                &ITEM.replace("    pub port: i32,\n", ""),
            ),
            &[("error", "existingFieldRemoval", Some("item: Item"))],
        ),
        case(
            "field of list items removed",
            widget("", "    pub items: Vec<Item>,\n", ITEM),
            widget(
                "",
                "    pub items: Vec<Item>,\n",
                &ITEM.replace("    pub name: String,\n", ""),
            ),
            &[("error", "existingFieldRemoval", Some("items: Vec"))],
        ),
        case(
            "new required field without a default",
            w(base),
            w(&format!("{base}    pub extra: String,\n")),
            &[("error", "required", Some("extra: String"))],
        ),
        case(
            "optional field made required",
            w("    pub size: i32,\n    pub name: Option<String>,\n"),
            w(base),
            &[
                ("error", "required", Some("name: String")),
                ("warning", "nullable", Some("name: String")),
            ],
        ),
        case(
            "type changed",
            w(base),
            w("    pub size: i32,\n    pub name: bool,\n"),
            &[("error", "type", Some("name: bool"))],
        ),
        case(
            "format changed",
            w(base),
            w("    pub size: i64,\n    pub name: String,\n"),
            &[("error", "format", Some("size: i64"))],
        ),
        case(
            "map made a struct",
            w("    pub labels: BTreeMap<String, String>,\n"),
            widget("", "    pub labels: Item,\n", ITEM),
            &[("error", "existingFieldRemoval", Some("labels: Item"))],
        ),
        case(
            "map values' type changed",
            w("    pub labels: BTreeMap<String, String>,\n"),
            w("    pub labels: BTreeMap<String, i32>,\n"),
            &[("error", "type", Some("labels: BTreeMap"))],
        ),
        case(
            "enum value removed",
            widget("", "    pub mode: Mode,\n", MODE2),
            widget("", "    pub mode: Mode,\n", MODE_FAST),
            &[("error", "enum", Some("mode: Mode"))],
        ),
        case(
            "enum value added: a warning",
            widget("", "    pub mode: Mode,\n", MODE2),
            widget("", "    pub mode: Mode,\n", MODE3),
            &[("warning", "enum", Some("mode: Mode"))],
        ),
        case(
            "free string made an enum",
            w("    pub mode: String,\n"),
            widget("", "    pub mode: Mode,\n", MODE2),
            &[("error", "enum", Some("mode: Mode"))],
        ),
        case(
            "maximum lowered",
            w("    #[schemars(range(max = 10))]\n    pub size: i32,\n"),
            w("    #[schemars(range(max = 5))]\n    pub size: i32,\n"),
            &[("warning", "maximum", Some("size: i32"))],
        ),
        case(
            "minimum added",
            w("    pub size: i32,\n"),
            w("    #[schemars(range(min = 1))]\n    pub size: i32,\n"),
            &[("warning", "minimum", Some("size: i32"))],
        ),
        case(
            "maxLength added and minLength raised",
            w("    #[schemars(length(min = 1))]\n    pub name: String,\n"),
            w("    #[schemars(length(min = 2, max = 63))]\n    pub name: String,\n"),
            &[
                ("warning", "maxLength", Some("name: String")),
                ("warning", "minLength", Some("name: String")),
            ],
        ),
        case(
            "maxItems lowered",
            w("    #[schemars(length(max = 10))]\n    pub tags: Vec<String>,\n"),
            w("    #[schemars(length(max = 3))]\n    pub tags: Vec<String>,\n"),
            &[("warning", "maxItems", Some("tags: Vec"))],
        ),
        case(
            "maxProperties added",
            w("    pub labels: BTreeMap<String, String>,\n"),
            w(
                "    #[schemars(extend(\"maxProperties\" = 3))]\n    pub labels: BTreeMap<String, String>,\n",
            ),
            &[("warning", "maxProperties", Some("labels: BTreeMap"))],
        ),
        case(
            "pattern added",
            w(base),
            w(
                "    pub size: i32,\n    #[schemars(regex(pattern = \"^[a-z]+$\"))]\n    pub name: String,\n",
            ),
            &[("warning", "pattern", Some("name: String"))],
        ),
        case(
            "new CEL rule",
            w(base),
            w(
                "    #[x_kube(validation = \"self > 0\")]\n    pub size: i32,\n    pub name: String,\n",
            ),
            &[("warning", "validationRules", Some("size: i32"))],
        ),
        case(
            "default changed",
            w("    #[serde(default = \"ten\")]\n    pub size: i32,\n")
                + "fn ten() -> i32 {\n    10\n}\n",
            w("    #[serde(default = \"ten\")]\n    pub size: i32,\n")
                + "fn ten() -> i32 {\n    20\n}\n",
            &[("warning", "default", Some("size: i32"))],
        ),
        case(
            "scope changed",
            w(base),
            widget("cluster", base, ""),
            &[("error", "scope", Some("WidgetSpec {"))],
        ),
        case(
            "group renamed",
            w(base),
            w(base).replace("demo.example.com", "widgets.example.com"),
            &[("error", "names", Some("WidgetSpec {"))],
        ),
        case(
            "kind renamed",
            w(base),
            w(base).replace("kind = \"Widget\"", "kind = \"Gadget\""),
            &[("error", "names", Some("WidgetSpec {"))],
        ),
        case(
            "kind renamed, its plural kept",
            w(base),
            w(base).replace(
                "kind = \"Widget\"",
                "kind = \"Gadget\", plural = \"widgets\"",
            ),
            &[("error", "names", Some("WidgetSpec {"))],
        ),
        case(
            "plural renamed",
            w(base),
            widget(", plural = \"widgetz\"", base, ""),
            &[("error", "names", Some("WidgetSpec {"))],
        ),
        case(
            "short name removed: a warning",
            widget(", shortname = \"wd\"", base, ""),
            w(base),
            &[("warning", "names", Some("WidgetSpec {"))],
        ),
        case(
            "kind removed",
            format!(
                "{}{}",
                w(base),
                "#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, KubeSchema)]\n#[kube(group = \"demo.example.com\", version = \"v1\", kind = \"Gizmo\", namespaced)]\npub struct GizmoSpec {\n    pub size: i32,\n}\n"
            ),
            w(base),
            &[("error", "crdRemoval", None)],
        ),
        case(
            "storage version removed",
            two(", storage = false", ""),
            module("v1", ""),
            &[("error", "storedVersionRemoval", Some("WidgetSpec {"))],
        ),
        case(
            "served version removed",
            two(", storage = false", ""),
            module("v2", ""),
            &[("error", "servedVersionRemoval", Some("WidgetSpec {"))],
        ),
        case(
            "unserved version removed",
            two(", storage = false, served = false", ""),
            module("v2", ""),
            &[("error", "versionRemoval", Some("WidgetSpec {"))],
        ),
        case(
            "version no longer served",
            two(", storage = false", ""),
            two(", storage = false, served = false", ""),
            &[("error", "servedVersionRemoval", Some("WidgetSpec {"))],
        ),
        case(
            "list type changed",
            w("    pub tags: Vec<String>,\n"),
            w(
                "    #[schemars(extend(\"x-kubernetes-list-type\" = \"set\"))]\n    pub tags: Vec<String>,\n",
            ),
            &[("error", "listType", Some("tags: Vec"))],
        ),
        case(
            "list map keys changed",
            widget(
                "",
                "    #[schemars(extend(\"x-kubernetes-list-type\" = \"map\", \"x-kubernetes-list-map-keys\" = [\"name\"]))]\n    pub items: Vec<Item>,\n",
                ITEM,
            ),
            widget(
                "",
                "    #[schemars(extend(\"x-kubernetes-list-type\" = \"map\", \"x-kubernetes-list-map-keys\" = [\"name\", \"port\"]))]\n    pub items: Vec<Item>,\n",
                ITEM,
            ),
            &[("error", "listMapKeys", Some("items: Vec"))],
        ),
        case(
            "preserve-unknown-fields removed",
            widget(
                "",
                "    #[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]\n    pub item: Item,\n",
                ITEM,
            ),
            widget("", "    pub item: Item,\n", ITEM),
            &[("error", "preserveUnknownFieldsRemoval", Some("item: Item"))],
        ),
        case(
            "status subresource removed",
            widget(
                ", status = \"WidgetStatus\"",
                base,
                "#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub struct WidgetStatus {\n    pub ready: bool,\n}\n",
            ),
            w(base),
            &[
                ("error", "subresourceRemoval", Some("WidgetSpec {")),
                ("error", "existingFieldRemoval", Some("WidgetSpec {")),
            ],
        ),
        case(
            "compatible: new optional field, defaulted field, loosened bound, new doc, new version",
            w("    #[schemars(range(max = 5))]\n    pub size: i32,\n    pub name: String,\n"),
            format!(
                "{}pub mod v2 {{\n    use super::*;\n    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, KubeSchema)]\n    #[kube(group = \"demo.example.com\", version = \"v2\", kind = \"Widget\", namespaced, storage = false)]\n    pub struct WidgetSpec {{\n        pub size: i32,\n    }}\n}}\n",
                w(
                    "    #[schemars(range(max = 10))]\n    pub size: i32,\n    /// The name.\n    pub name: String,\n    pub note: Option<String>,\n    #[serde(default)]\n    pub count: i32,\n    #[serde(default)]\n    pub tags: Vec<String>,\n"
                )
            ),
            &[],
        ),
    ]
}

/// Run `--check-compat v1` on the case's `v2`; the findings it printed against those expected.
fn run_case(c: &Case) -> Result<(), String> {
    let tmp = committed(&c.v1);
    write_project(tmp.path(), &c.v2);
    let r = run(tmp.path(), &["generate", "crds", "--check-compat", "v1"]);
    let got = printed(&r.stderr);
    let mut want: Vec<Printed> = (c.expect.iter())
        .map(|(severity, rule, marker)| Printed {
            severity: severity.to_string(),
            rule: rule.to_string(),
            at: marker.map(|m| at(&c.v2, m)),
        })
        .collect();
    want.sort();
    if got != want || r.code != c.code {
        return Err(format!(
            "{}: want exit {} and {want:?}\n got exit {} and {got:?}\nstderr:\n{}",
            c.name, c.code, r.code, r.stderr
        ));
    }
    Ok(())
}

#[test]
fn each_rule_is_reported_at_the_rust_type_or_field() {
    if crate::common::runs_elsewhere("apiserver") {
        return;
    }
    let failures: Vec<String> = cases().iter().filter_map(|c| run_case(c).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn warnings_pass_unless_made_errors() {
    if crate::common::runs_elsewhere("apiserver") {
        return;
    }
    let v1 = widget(
        "",
        "    #[schemars(range(max = 10))]\n    pub size: i32,\n",
        "",
    );
    let tmp = committed(&v1);
    write_project(
        tmp.path(),
        &widget(
            "",
            "    #[schemars(range(max = 5))]\n    pub size: i32,\n",
            "",
        ),
    );
    let r = run(tmp.path(), &["generate", "crds", "--check-compat", "v1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("warning[maximum]"), "{}", r.stderr);
    assert!(r.stderr.contains("compatible with v1"), "{}", r.stderr);
    let r = run(
        tmp.path(),
        &[
            "generate",
            "crds",
            "--check-compat",
            "v1",
            "--compat-warnings-as-errors",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("warning[maximum]"), "{}", r.stderr);
    assert!(
        r.stderr.contains("--compat-warnings-as-errors"),
        "{}",
        r.stderr
    );
    // The flag means nothing without a revision to compare with.
    let r = run(
        tmp.path(),
        &["generate", "crds", "--compat-warnings-as-errors"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// The user's files and repository (index, refs, worktrees) as they are.
fn state(
    dir: &Path,
) -> (
    std::collections::BTreeMap<std::path::PathBuf, Vec<u8>>,
    String,
) {
    let files = snapshot(dir)
        .into_iter()
        // `git status` below refreshes the index's file times; its content is in the status.
        .filter(|(p, _)| !p.starts_with(".git/logs") && *p != Path::new(".git/index"))
        .collect();
    (files, git(dir, &["status", "--porcelain", "--ignored"]))
}

#[test]
fn the_working_tree_and_repository_are_left_as_they_are() {
    if crate::common::runs_elsewhere("apiserver") {
        return;
    }
    let base = "    pub size: i32,\n    pub name: String,\n";
    let tmp = committed(&widget("", base, ""));
    // Staged, unstaged and untracked changes, and CRDs never generated: all stay as they are.
    write_project(tmp.path(), &widget("", "    pub size: i32,\n", ""));
    git(tmp.path(), &["add", "src/lib.rs"]);
    std::fs::write(tmp.path().join("notes.txt"), "mine").unwrap();
    let before = state(tmp.path());
    let r = run(tmp.path(), &["generate", "crds", "--check-compat", "v1"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("error[existingFieldRemoval]"),
        "{}",
        r.stderr
    );
    // What it compares with is the staged and unstaged source as it is on disk.
    assert!(r.stderr.contains(".spec.name"), "{}", r.stderr);
    assert_eq!(state(tmp.path()), before);
    assert!(!tmp.path().join("config").exists());
}

#[test]
fn with_check_the_files_are_checked_too() {
    if crate::common::runs_elsewhere("apiserver") {
        return;
    }
    let base = "    pub size: i32,\n";
    let tmp = committed(&widget("", base, ""));
    // Compatible, but config/crd was never generated: --check fails, --check-compat passes.
    let r = run(
        tmp.path(),
        &["generate", "crds", "--check", "--check-compat", "v1"],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("compatible with v1"), "{}", r.stderr);
    assert!(r.stderr.contains("stale, missing"), "{}", r.stderr);
    ok(tmp.path(), &["generate", "crds"]);
    ok(
        tmp.path(),
        &["generate", "crds", "--check", "--check-compat", "v1"],
    );
    // `--exact` derives through the compiler, which cannot be pointed at a revision.
    let r = run(
        tmp.path(),
        &["generate", "crds", "--exact", "--check-compat", "v1"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn a_project_in_a_folder_of_its_repository() {
    if crate::common::runs_elsewhere("apiserver") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("operators/widget");
    let base = "    pub size: i32,\n    pub name: String,\n";
    write_project(&dir, &widget("", base, ""));
    // Another project beside it, with the same file names: never read.
    write_project(&tmp.path().join("operators/other"), "");
    git(tmp.path(), &["init", "-q"]);
    git(tmp.path(), &["add", "-A"]);
    git(tmp.path(), &["commit", "-q", "-m", "v1"]);
    let v2 = widget("", "    pub size: i32,\n    pub name: i64,\n", "");
    write_project(&dir, &v2);
    let r = run(&dir, &["generate", "crds", "--check-compat", "HEAD"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let (_, line, col) = at(&v2, "name: i64");
    assert_eq!(
        printed(&r.stderr),
        vec![Printed {
            severity: "error".into(),
            rule: "type".into(),
            at: Some(("src/lib.rs".into(), line, col)),
        }]
    );
    // -C from elsewhere too.
    let r = run(
        tmp.path(),
        &[
            "-C",
            "operators/widget",
            "generate",
            "crds",
            "--check-compat",
            "HEAD",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
}

#[test]
fn refusals_say_what_is_wrong() {
    if crate::common::runs_elsewhere("apiserver") {
        return;
    }
    let base = "    pub size: i32,\n";
    // Not in a git repository.
    let plain = tempfile::tempdir().unwrap();
    write_project(plain.path(), &widget("", base, ""));
    let r = run(
        plain.path(),
        &["generate", "crds", "--check-compat", "main"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("is not in a git repository"),
        "{}",
        r.stderr
    );

    let tmp = committed(&widget("", base, ""));
    for bad in ["no-such-branch", "v1:src", "-p", ""] {
        let r = run(
            tmp.path(),
            &["generate", "crds", &format!("--check-compat={bad}")],
        );
        assert_eq!(r.code, 2, "{bad}: {}", r.stderr);
        assert!(
            r.stderr.contains("is not a revision of this repository")
                && r.stderr.contains("fetch-depth: 0"),
            "{bad}: {}",
            r.stderr
        );
    }

    // The project did not exist at the revision: no PROJECT, then no crate root.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("README.md"), "soon").unwrap();
    git(tmp.path(), &["init", "-q"]);
    git(tmp.path(), &["add", "-A"]);
    git(tmp.path(), &["commit", "-q", "-m", "empty"]);
    git(tmp.path(), &["tag", "empty"]);
    std::fs::write(tmp.path().join("PROJECT"), PROJECT).unwrap();
    git(tmp.path(), &["add", "-A"]);
    git(tmp.path(), &["commit", "-q", "-m", "PROJECT only"]);
    git(tmp.path(), &["tag", "project-only"]);
    write_project(tmp.path(), &widget("", base, ""));
    for (reference, says) in [
        ("empty", "it has no PROJECT file there"),
        ("project-only", "neither src/lib.rs nor src/main.rs"),
    ] {
        let r = run(
            tmp.path(),
            &["generate", "crds", "--check-compat", reference],
        );
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr
                .contains(&format!("the project did not exist at {reference}: {says}")),
            "{}",
            r.stderr
        );
    }
    // A folder that was not in the repository at the revision.
    let sub = tmp.path().join("later");
    write_project(&sub, &widget("", base, ""));
    let r = run(&sub, &["generate", "crds", "--check-compat", "empty"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("the project did not exist at empty: its folder `later`"),
        "{}",
        r.stderr
    );

    // The types at the revision cannot be derived: said so, with the revision.
    let tmp = committed("#[derive(CustomResource)]\npub struct Broken {\n");
    write_project(tmp.path(), &widget("", base, ""));
    let r = run(tmp.path(), &["generate", "crds", "--check-compat", "v1"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("the CRDs of the project at v1 cannot be derived"),
        "{}",
        r.stderr
    );
}

/// `script` run as an Actions `run:` step in `dir` (bash -e -o pipefail), with `operator-rs` (this
/// build) on PATH and what GitHub sets on a pull request into `main`.
fn step(tmp: &Path, dir: &Path, script: &str) -> Run {
    let bin = tmp.join("path-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("operator-rs");
    if !link.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_operator-rs"), &link).unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    crate::common::as_user(&mut std::process::Command::new("bash"))
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .env("CI", "true")
        .envs(PULL_REQUEST_ENV)
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS")
        .output()
        .expect("bash runs")
        .into()
}

#[test]
fn the_generated_ci_checks_pull_requests_against_their_target_branch() {
    if crate::common::runs_elsewhere("apiserver") {
        return;
    }
    let tmp = init_project("compat-operator");
    let dir = project_dir(&tmp, "compat-operator");
    ok(
        &dir,
        &words("create api --group batch --version v1 --kind CronJob"),
    );
    as_pull_request(&dir);
    let workflow: serde_json::Value =
        serde_saphyr::from_str(&read(&dir, ".github/workflows/ci.yml")).expect("ci.yml is YAML");
    let steps = workflow["jobs"]["manifests"]["steps"]
        .as_array()
        .expect("a manifests job");
    let checkout = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/checkout"))
        })
        .expect("a checkout step");
    assert_eq!(
        checkout["with"]["fetch-depth"], 0,
        "the target branch must be fetched: {checkout}"
    );
    let script = |needle: &str| {
        let s = steps
            .iter()
            .find(|s| s["run"].as_str().is_some_and(|r| r.contains(needle)))
            .unwrap_or_else(|| panic!("no step runs {needle}"));
        (s["run"].as_str().unwrap().to_string(), s["if"].as_str())
    };
    let (install, _) = script("make operator-rs");
    let (compat, condition) = script("check-crd-compat");
    assert_eq!(condition, Some(PULL_REQUEST));
    let r = step(tmp.path(), &dir, &install);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);

    // The pull request as the target branch: compatible.
    let r = step(tmp.path(), &dir, &compat);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("compatible with origin/main"),
        "{}",
        r.stderr
    );

    // A pull request that drops the scaffold's field and adds a required one: refused, there.
    let file = dir.join("src/api/v1/cron_job.rs");
    let text = std::fs::read_to_string(&file).unwrap();
    let changed = text.replace(
        "#[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub foo: Option<String>,",
        "pub schedule: String,",
    );
    assert_ne!(text, changed);
    std::fs::write(&file, &changed).unwrap();
    let r = step(tmp.path(), &dir, &compat);
    assert_ne!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let (line, col) = changed
        .lines()
        .enumerate()
        .find_map(|(i, l)| l.find("schedule: String").map(|c| (i + 1, c + 1)))
        .unwrap();
    let spec = changed
        .lines()
        .enumerate()
        .find_map(|(i, l)| l.find("CronJobSpec {").map(|c| (i + 1, c + 1)))
        .unwrap();
    let found = printed(&r.stderr);
    let want = |rule: &str, (line, col): (usize, usize)| Printed {
        severity: "error".into(),
        rule: rule.into(),
        at: Some(("src/api/v1/cron_job.rs".into(), line, col)),
    };
    assert!(
        found.contains(&want("required", (line, col)))
            && found.contains(&want("existingFieldRemoval", spec)),
        "{found:?}\n{}",
        r.stderr
    );

    // The break is intended: allowed in config/compat.yaml, committed with it, which the same
    // CI step reads with no flag; the changes are reported as warnings and the step passes.
    std::fs::write(
        dir.join("config/compat.yaml"),
        "validations:\n  - name: required\n    enforcement: Warn\n    crd: cronjobs.batch.example.com\n    version: v1\n    field: .spec.schedule\n  - name: existingFieldRemoval\n    enforcement: Warn\n    crd: cronjobs.batch.example.com\n    field: .spec.foo\n",
    )
    .unwrap();
    let r = step(tmp.path(), &dir, &compat);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("warning[required]")
            && r.stderr.contains("warning[existingFieldRemoval]")
            && r.stderr.contains("allowed by config/compat.yaml:2:11"),
        "{}",
        r.stderr
    );
}

/// One change put to kube-apiserver: the CRD at `v1` applied and an object of it created
/// (`object`: its spec), then the CRD at `v2` applied.
struct ServerCase {
    name: &'static str,
    v1: String,
    v2: String,
    /// The spec of the object created before the change (valid at `v1`).
    object: serde_json::Value,
    /// Whether kube-apiserver takes the new CRD (the verdict observed, asserted).
    server_accepts: bool,
    /// What we report (severity, rule); empty: compatible.
    ours: &'static [(&'static str, &'static str)],
    /// A field of the object's spec the server no longer returns once the new CRD is in.
    pruned: Option<&'static str>,
}

/// The CRD files `generate crds` writes for `dir` as it is.
fn generated_crds(dir: &Path) -> Vec<std::path::PathBuf> {
    ok(dir, &["generate", "crds"]);
    let bases = dir.join("config/crd/bases");
    let mut files: Vec<_> = std::fs::read_dir(&bases)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

fn apply(cp: &control_plane::ControlPlane, file: &Path) -> Result<String, String> {
    control_plane::kubectl(
        cp,
        &[
            "apply",
            "--server-side",
            "--force-conflicts",
            "-f",
            file.to_str().unwrap(),
        ],
    )
}

/// Create a Widget of group `group`, retrying while discovery does not know the kind yet.
fn create_widget(
    cp: &control_plane::ControlPlane,
    group: &str,
    version: &str,
    spec: &serde_json::Value,
) {
    let object = serde_json::json!({
        "apiVersion": format!("{group}/{version}"),
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": spec,
    });
    let mut last = String::new();
    for _ in 0..60 {
        match control_plane::kubectl_with(cp, &["create", "-f", "-"], &object) {
            Ok(_) => return,
            Err(e) => last = e,
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    panic!("creating {object} failed: {last}");
}

#[test]
fn kube_apiserver_refuses_no_change_we_pass() {
    if crate::common::runs_elsewhere("apiserver") {
        return;
    }
    let Some(assets) = control_plane::assets("crdgen_compat") else {
        return;
    };
    let cp = control_plane::start(&assets);
    let w = |fields: &str| widget("", fields, "");
    let base = "    pub size: i32,\n    pub name: String,\n";
    let spec = serde_json::json!({"size": 1, "name": "a"});
    let cases = vec![
        ServerCase {
            name: "scope changed",
            v1: w(base),
            v2: widget("cluster", base, ""),
            object: spec.clone(),
            server_accepts: false,
            ours: &[("error", "scope")],
            pruned: None,
        },
        ServerCase {
            name: "storage version removed",
            v1: two(", storage = false", ""),
            v2: module("v1", ""),
            object: serde_json::json!({"size": 1}),
            server_accepts: false,
            ours: &[("error", "storedVersionRemoval")],
            pruned: None,
        },
        ServerCase {
            name: "served version removed, never stored",
            v1: two(", storage = false", ""),
            v2: module("v2", ""),
            object: serde_json::json!({"size": 1}),
            server_accepts: true,
            ours: &[("error", "servedVersionRemoval")],
            pruned: None,
        },
        ServerCase {
            name: "field removed",
            v1: w(base),
            v2: w("    pub size: i32,\n"),
            object: spec.clone(),
            server_accepts: true,
            ours: &[("error", "existingFieldRemoval")],
            pruned: Some("name"),
        },
        ServerCase {
            name: "new required field",
            v1: w(base),
            v2: w(&format!("{base}    pub extra: String,\n")),
            object: spec.clone(),
            server_accepts: true,
            ours: &[("error", "required")],
            pruned: None,
        },
        ServerCase {
            name: "type changed",
            v1: w(base),
            v2: w("    pub size: i32,\n    pub name: bool,\n"),
            object: spec.clone(),
            server_accepts: true,
            ours: &[("error", "type")],
            pruned: None,
        },
        ServerCase {
            name: "enum value removed",
            v1: widget("", "    pub mode: Mode,\n", MODE2),
            v2: widget("", "    pub mode: Mode,\n", MODE_FAST),
            object: serde_json::json!({"mode": "Slow"}),
            server_accepts: true,
            ours: &[("error", "enum")],
            pruned: None,
        },
        ServerCase {
            name: "list type changed",
            v1: w("    pub tags: Vec<String>,\n"),
            v2: w(
                "    #[schemars(extend(\"x-kubernetes-list-type\" = \"set\"))]\n    pub tags: Vec<String>,\n",
            ),
            object: serde_json::json!({"tags": ["a", "b"]}),
            server_accepts: true,
            ours: &[("error", "listType")],
            pruned: None,
        },
        ServerCase {
            name: "maximum lowered",
            v1: w("    #[schemars(range(max = 10))]\n    pub size: i32,\n"),
            v2: w("    #[schemars(range(max = 5))]\n    pub size: i32,\n"),
            object: serde_json::json!({"size": 8}),
            server_accepts: true,
            ours: &[("warning", "maximum")],
            pruned: None,
        },
        ServerCase {
            name: "compatible",
            v1: w(base),
            v2: format!(
                "{}{}",
                w(&format!("{base}    pub note: Option<String>,\n")),
                module("v2", ", storage = false")
            ),
            object: spec.clone(),
            server_accepts: true,
            ours: &[],
            pruned: None,
        },
    ];
    let mut disagreements = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        // A group per case: each is its own CRD on the one API server.
        let group = format!("c{i}.example.com");
        let v1 = c.v1.replace("demo.example.com", &group);
        let v2 = c.v2.replace("demo.example.com", &group);
        let tmp = committed(&v1);
        let old = generated_crds(tmp.path());
        assert_eq!(old.len(), 1, "{}", c.name);
        let stored_in = if c.v1.contains("pub mod v2") {
            "v2"
        } else {
            "v1"
        };
        apply(&cp, &old[0]).unwrap_or_else(|e| panic!("{}: the CRD at v1: {e}", c.name));
        create_widget(&cp, &group, stored_in, &c.object);
        let spec_now = || {
            control_plane::kubectl(
                &cp,
                &[
                    "get",
                    &format!("widgets.{group}"),
                    "w",
                    "-n",
                    "default",
                    "-o",
                    "jsonpath={.spec}",
                ],
            )
            .unwrap_or_default()
        };
        if let Some(field) = c.pruned {
            assert!(
                spec_now().contains(&format!("\"{field}\"")),
                "{}: stored without {field}",
                c.name
            );
        }
        // Ours: on the committed tree changed to v2 (before config/crd is regenerated).
        write_project(tmp.path(), &v2);
        let r = run(tmp.path(), &["generate", "crds", "--check-compat", "v1"]);
        let ours: Vec<(String, String)> = printed(&r.stderr)
            .into_iter()
            .map(|p| (p.severity, p.rule))
            .collect();
        let want: Vec<(String, String)> = (c.ours.iter())
            .map(|(s, r)| (s.to_string(), r.to_string()))
            .collect();
        let new = generated_crds(tmp.path());
        let server = apply(&cp, &new[0]);
        eprintln!(
            "{}: kube-apiserver {}; we: exit {} {ours:?}",
            c.name,
            match &server {
                Ok(_) => "accepts".to_string(),
                Err(e) => format!("refuses: {e}"),
            },
            r.code
        );
        if server.is_ok() != c.server_accepts {
            disagreements.push(format!(
                "{}: kube-apiserver was expected to {} it: {server:?}",
                c.name,
                if c.server_accepts { "accept" } else { "refuse" }
            ));
        }
        // The stored object, read back: what the server prunes from it.
        if let Some(field) = c.pruned {
            let gone = (0..60).any(|_| {
                let got = spec_now();
                let gone = !got.contains(&format!("\"{field}\""));
                if !gone {
                    std::thread::sleep(std::time::Duration::from_millis(500));
                }
                gone
            });
            if !gone {
                disagreements.push(format!(
                    "{}: the server still returns .spec.{field}",
                    c.name
                ));
            }
        }
        // What the server refuses, we refuse (an error, exit 1).
        if server.is_err() && r.code != 1 {
            disagreements.push(format!(
                "{}: refused by kube-apiserver, passed by us",
                c.name
            ));
        }
        if ours != want {
            disagreements.push(format!(
                "{}: we report {ours:?}, want {want:?}\n{}",
                c.name, r.stderr
            ));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// `config/compat.yaml`, crdify's configuration narrowed to a CRD, version and field: an
/// allowed break is printed as a warning and passes (even with --compat-warnings-as-errors),
/// others still fail; `None` hides a change, `Error` makes a warning's rule fatal; a malformed
/// file, or an entry naming a rule, CRD, version or field that neither revision has, is refused
/// at its line:column with a valid example.
#[test]
fn allowances_in_config_compat_yaml() {
    if crate::common::runs_elsewhere("apiserver") {
        return;
    }
    let base = "    #[schemars(range(max = 10))]\n    pub size: i32,\n    pub name: String,\n    pub note: String,\n";
    let tmp = committed(&widget("", base, ""));
    let dir = tmp.path();
    // v2 drops `name` and `note` and tightens `size`.
    write_project(
        dir,
        &widget(
            "",
            "    #[schemars(range(max = 5))]\n    pub size: i32,\n",
            "",
        ),
    );
    let check = |extra: &[&str]| {
        let mut args = vec!["generate", "crds", "--check-compat", "v1"];
        args.extend_from_slice(extra);
        run(dir, &args)
    };
    let allow = |text: &str| std::fs::write(dir.join("config/compat.yaml"), text).unwrap();
    std::fs::create_dir_all(dir.join("config")).unwrap();

    // Without the file: two errors.
    let r = check(&[]);
    assert_eq!(r.code, 1, "{}", r.stderr);

    // `name` allowed: `note` still fails.
    allow(
        "validations:\n  - name: existingFieldRemoval\n    enforcement: Warn\n    crd: widgets.demo.example.com\n    version: v1\n    field: .spec.name\n",
    );
    let r = check(&[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let found = printed(&r.stderr);
    assert_eq!(
        found
            .iter()
            .map(|p| (p.severity.as_str(), p.rule.as_str()))
            .collect::<Vec<_>>(),
        [
            ("error", "existingFieldRemoval"),
            ("warning", "existingFieldRemoval"),
            ("warning", "maximum")
        ],
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("= note: allowed by config/compat.yaml:2:11 (enforcement: Warn)"),
        "{}",
        r.stderr
    );

    // The whole spec allowed (a field and everything below it): passes, even with warnings as
    // errors; `maximum` made an error fails; `None` hides it.
    allow(
        "validations:\n  - name: existingFieldRemoval\n    enforcement: Warn\n    field: .spec\n",
    );
    let r = check(&[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("compatible with v1"), "{}", r.stderr);
    let r = check(&["--compat-warnings-as-errors"]);
    assert_eq!(
        r.code, 1,
        "the maximum warning is not allowed:\n{}",
        r.stderr
    );
    allow(
        "validations:\n  - name: existingFieldRemoval\n    enforcement: Warn\n    field: .spec\n  - name: maximum\n    enforcement: None\n",
    );
    let r = check(&["--compat-warnings-as-errors"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("warning[maximum]"), "{}", r.stderr);
    allow(
        "validations:\n  - name: existingFieldRemoval\n    enforcement: Warn\n    field: .spec\n  - name: maximum\n    enforcement: Error\n",
    );
    let r = check(&[]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("error[maximum]"), "{}", r.stderr);

    // Refusals, each at its place, with a valid example.
    for (text, at, what) in [
        (
            "validations:\n  - name: existingFieldRemova\n    enforcement: Warn\n",
            "config/compat.yaml:2:11",
            "unknown rule \"existingFieldRemova\": did you mean existingFieldRemoval?",
        ),
        (
            "validations:\n  - name: existingFieldRemoval\n    enforcement: Warning\n",
            "config/compat.yaml:3:18",
            "unknown enforcement \"Warning\": it is Error, Warn or None",
        ),
        (
            "validations:\n  - name: existingFieldRemoval\n    enforcement: Warn\n    crd: gadgets.demo.example.com\n",
            "config/compat.yaml:4:10",
            "no CRD \"gadgets.demo.example.com\" in the project, at either revision: the CRDs are widgets.demo.example.com",
        ),
        (
            "validations:\n  - name: existingFieldRemoval\n    enforcement: Warn\n    crd: widgets.demo.example.com\n    version: v9\n",
            "config/compat.yaml:5:14",
            "no version \"v9\" of widgets.demo.example.com: the versions are v1",
        ),
        (
            "validations:\n  - name: existingFieldRemoval\n    enforcement: Warn\n    field: .spec.nmae\n",
            "config/compat.yaml:4:12",
            "no field \".spec.nmae\"",
        ),
        (
            "validations:\n  - name: existingFieldRemoval\n    enforcment: Warn\n",
            "config/compat.yaml:",
            "not a valid file",
        ),
        (
            "validations: [\n",
            "config/compat.yaml:",
            "not a valid file",
        ),
    ] {
        allow(text);
        let r = check(&[]);
        assert_eq!(r.code, 2, "{text}: {}", r.stderr);
        for e in [
            at,
            what,
            "e.g.",
            "    validations:\n      - name: servedVersionRemoval",
        ] {
            assert!(r.stderr.contains(e), "{text}: no {e:?} in\n{}", r.stderr);
        }
    }
}
