//! The multigroup layout (`init --multigroup`, `edit --multigroup[=BOOL]`): a kind's modules
//! under its group, so one kind name in two groups of a version works; every command follows
//! it; `edit --multigroup` moves a project there and back to exactly what `init` and the same
//! commands would have laid out, the user's edits moved with their files, and refuses (writing
//! nothing) what it cannot move. The build of such a project, and its CRDs on a real API
//! server, are in tests/generated_workflow.rs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common;

use common::*;

/// Kinds of every flavour the layout moves: two versions of a kind (one without a
/// controller), another group's kind, a built-in kind's controller, and webhooks of all three
/// types (the conversion's spoke in a module of its own).
const KINDS: &[&str] = &[
    "create api --group ship --version v1 --kind Frigate",
    "create api --group ship --version v2 --kind Frigate --controller=false",
    "create api --group crew --version v1 --kind Sailor",
    "create api --group apps --version v1 --kind Deployment --resource=false",
    "create webhook --group ship --version v1 --kind Frigate --defaulting --programmatic-validation --conversion --spoke v2",
];

/// The same kind name in a second group of the same version, with a webhook.
const SEA_FRIGATE: &[&str] = &[
    "create api --group sea --version v1 --kind Frigate",
    "create webhook --group sea --version v1 --kind Frigate --defaulting --programmatic-validation",
];

/// A project `fleet-op` made by `init` with `init_flags`, then `commands`, in a git repository
/// with everything committed.
fn project(init_flags: &[&str], commands: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::Builder::new()
        .prefix("operator-rs-test-")
        .tempdir()
        .unwrap();
    let dir = tmp.path().join("fleet-op");
    std::fs::create_dir(&dir).unwrap();
    let mut init = words("init --domain example.com --repo github.com/acme/fleet-op");
    init.extend(init_flags);
    ok(&dir, &init);
    for c in commands {
        ok(&dir, &words(c));
    }
    git(&dir, &["init", "-q", "-b", "main"]);
    commit(&dir);
    (tmp, dir)
}

fn commit(dir: &Path) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "step"]);
}

/// The project's files, without git's.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut all = snapshot(dir);
    all.retain(|p, _| !p.starts_with(".git"));
    all
}

/// The first file where `got` and `want` differ, for a readable failure.
fn first_difference(got: &BTreeMap<PathBuf, Vec<u8>>, want: &BTreeMap<PathBuf, Vec<u8>>) -> String {
    let only = |a: &BTreeMap<PathBuf, Vec<u8>>, b: &BTreeMap<PathBuf, Vec<u8>>| {
        a.keys()
            .filter(|k| !b.contains_key(*k))
            .cloned()
            .collect::<Vec<_>>()
    };
    let differ: Vec<_> = (got.iter())
        .filter(|(k, v)| want.get(*k).is_some_and(|w| w != *v))
        .map(|(k, v)| {
            format!(
                "{}:\n--- got\n{}\n--- want\n{}",
                k.display(),
                String::from_utf8_lossy(v),
                String::from_utf8_lossy(&want[k])
            )
        })
        .collect();
    format!(
        "only in the moved project: {:?}\nonly in the made one: {:?}\n{}",
        only(got, want),
        only(want, got),
        differ.first().cloned().unwrap_or_default()
    )
}

/// Append `text` to the file `rel` (a user's edit).
fn append(dir: &Path, rel: &str, text: &str) {
    let mut s = read(dir, rel);
    s.push_str(text);
    std::fs::write(dir.join(rel), s).unwrap();
}

#[test]
fn a_multigroup_project_holds_one_kind_name_in_two_groups() {
    let mut commands = KINDS.to_vec();
    commands.extend(SEA_FRIGATE);
    let (_tmp, dir) = project(&["--multigroup"], &commands);
    assert!(read(&dir, "PROJECT").contains("\nmultigroup: true\n"));
    for f in [
        "src/api/ship/v1/frigate.rs",
        "src/api/ship/v2/frigate.rs",
        "src/api/sea/v1/frigate.rs",
        "src/api/crew/v1/sailor.rs",
        "src/controllers/ship/frigate.rs",
        "src/controllers/sea/frigate.rs",
        "src/controllers/apps/deployment.rs",
        "src/webhooks/ship/v1/frigate.rs",
        "src/webhooks/ship/v2/frigate_conversion.rs",
        "src/webhooks/sea/v1/frigate.rs",
        "config/samples/ship_v1_frigate.yaml",
        "config/samples/sea_v1_frigate.yaml",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    assert!(!dir.join("src/api/v1").exists());
    // Each CRD of its own group, from its own types.
    for group in ["ship", "sea"] {
        let crd = read(
            &dir,
            &format!("config/crd/bases/{group}.example.com_frigates.yaml"),
        );
        assert!(
            crd.contains(&format!("group: {group}.example.com")),
            "{crd}"
        );
    }
    // Both controllers run, both kinds' types are declared, both webhooks are served.
    let controllers = read(&dir, "src/controllers/mod.rs");
    for line in [
        "ship::frigate::registration(),",
        "sea::frigate::registration(),",
    ] {
        assert!(controllers.contains(line), "{controllers}");
    }
    assert!(read(&dir, "src/api/mod.rs").contains("pub mod sea;"));
    let integration = read(&dir, "tests/integration.rs");
    assert!(
        integration.contains("async fn frigate_v1()"),
        "{integration}"
    );
    assert!(
        integration.contains("async fn sea_frigate_v1()"),
        "{integration}"
    );
    let hooks = read(&dir, "config/webhook/manifests.yaml");
    for name in [
        "mfrigate-v1.kb.io",
        "msea-frigate-v1.kb.io",
        "vsea-frigate-v1.kb.io",
    ] {
        assert!(hooks.contains(&format!("name: {name}")), "{hooks}");
    }
    let check = run(&dir, &words("generate manifests --check"));
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);

    // `edit api` edits the version of the group it names, in its file.
    ok(
        &dir,
        &words("edit api --group sea --version v1 --kind Frigate --deprecated"),
    );
    assert!(read(&dir, "src/api/sea/v1/frigate.rs").contains("deprecated"));
    assert!(!read(&dir, "src/api/ship/v1/frigate.rs").contains("deprecated"));

    // `generate crds` finds the types in their new place, and says where what it refuses is.
    let types = "src/api/sea/v1/frigate.rs";
    let text = read(&dir, types);
    let field = "    pub foo: Option<String>,\n";
    let line = text[..text.find(field).unwrap()].lines().count() + 2;
    std::fs::write(
        dir.join(types),
        text.replacen(
            field,
            &format!("{field}    pub bad: other_crate::Thing,\n"),
            1,
        ),
    )
    .unwrap();
    let refused = run(&dir, &words("generate crds"));
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains(&format!("{types}:{line}:14: ")),
        "{}",
        refused.stderr
    );
}

#[test]
fn a_single_group_project_refuses_one_kind_name_in_two_groups_naming_edit_multigroup() {
    let (_tmp, dir) = project(&[], &[KINDS[0]]);
    let before = files(&dir);
    // The types' module (one per version), and the controllers' folder (one for all groups).
    for (command, place) in [
        (
            "create api --group sea --version v1 --kind Frigate",
            "src/api/v1/frigate.rs",
        ),
        (
            "create api --group sea --version v2 --kind Frigate",
            "src/controllers/frigate.rs",
        ),
    ] {
        let out = run(&dir, &words(command));
        assert_ne!(out.code, 0, "{command}");
        assert!(
            out.stderr.contains(place) && out.stderr.contains("operator-rs edit --multigroup"),
            "{command}: {}",
            out.stderr
        );
        assert_eq!(files(&dir), before, "{command} wrote something");
    }
}

#[test]
fn edit_multigroup_moves_a_project_there_and_back_as_init_lays_it_out() {
    let (_tmp, dir) = project(&[], KINDS);
    // The user's edits: to types, a controller, a webhook, and the module of a version.
    let edits = [
        (
            "src/api/v1/frigate.rs",
            "\n/// Mine.\npub const CREW: u32 = 3;\n",
        ),
        ("src/controllers/sailor.rs", "\n// Reviewed.\n"),
        ("src/webhooks/v2/frigate_conversion.rs", "\n// Checked.\n"),
    ];
    for (rel, text) in edits {
        append(&dir, rel, text);
    }
    commit(&dir);

    ok(&dir, &["edit", "--multigroup"]);
    let (_made_tmp, made) = project(&["--multigroup"], KINDS);
    let mut want = files(&made);
    for (rel, text) in edits {
        let moved = rel
            .replace("src/api/v1/", "src/api/ship/v1/")
            .replace("src/controllers/", "src/controllers/crew/")
            .replace("src/webhooks/v2/", "src/webhooks/ship/v2/");
        want.get_mut(Path::new(&moved))
            .unwrap_or_else(|| panic!("{moved}"))
            .extend(text.as_bytes());
    }
    let got = files(&dir);
    assert!(got == want, "{}", first_difference(&got, &want));
    assert!(
        !dir.join("src/api/v1").exists(),
        "an emptied folder is left"
    );
    let check = run(&dir, &words("generate manifests --check"));
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
    // `update` replays the project as it now is: multigroup, up to date.
    commit(&dir);
    let update = run(&dir, &["update", "--no-check"]);
    assert_eq!(update.code, 0, "{}{}", update.stdout, update.stderr);
    assert!(
        update.stderr.contains("already up to date"),
        "{}",
        update.stderr
    );
    // Run again, it changes nothing.
    let again = run(&dir, &["edit", "--multigroup"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(files(&dir), got);

    // And back.
    ok(&dir, &["edit", "--multigroup=false"]);
    let (_single_tmp, single) = project(&[], KINDS);
    let mut want = files(&single);
    for (rel, text) in edits {
        want.get_mut(Path::new(rel))
            .unwrap()
            .extend(text.as_bytes());
    }
    let got = files(&dir);
    assert!(got == want, "{}", first_difference(&got, &want));
    assert!(
        !dir.join("src/api/ship").exists(),
        "an emptied folder is left"
    );
    let check = run(&dir, &words("generate manifests --check"));
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
}

#[test]
fn edit_multigroup_refuses_what_it_cannot_move_and_writes_nothing() {
    // Back to one group: two groups' Frigates of v1 would be one module.
    let mut commands = KINDS.to_vec();
    commands.extend(SEA_FRIGATE);
    let (_tmp, dir) = project(&["--multigroup"], &commands);
    let before = files(&dir);
    let out = run(&dir, &["edit", "--multigroup=false"]);
    assert_ne!(out.code, 0);
    for part in [
        "src/api/ship/v1/frigate.rs",
        "src/api/sea/v1/frigate.rs",
        "src/api/v1/frigate.rs",
        "Nothing was written",
    ] {
        assert!(out.stderr.contains(part), "{part}: {}", out.stderr);
    }
    assert_eq!(files(&dir), before);

    // Onto a file of the user's.
    let (_tmp, dir) = project(&[], KINDS);
    std::fs::create_dir_all(dir.join("src/controllers/crew")).unwrap();
    std::fs::write(dir.join("src/controllers/crew/sailor.rs"), "// mine\n").unwrap();
    let before = files(&dir);
    let out = run(&dir, &["edit", "--multigroup"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr
            .contains("src/controllers/sailor.rs -> src/controllers/crew/sailor.rs (exists)")
            && out.stderr.contains("Nothing was written"),
        "{}",
        out.stderr
    );
    assert_eq!(files(&dir), before);

    // A registration the scaffold wrote, since changed: shown, not guessed at.
    let (_tmp, dir) = project(&[], KINDS);
    let controllers = read(&dir, "src/controllers/mod.rs");
    let changed = controllers.replace(
        "sailor::registration(),",
        "sailor::registration().with_name(\"crew\"),",
    );
    assert_ne!(changed, controllers);
    std::fs::write(dir.join("src/controllers/mod.rs"), changed).unwrap();
    let before = files(&dir);
    let out = run(&dir, &["edit", "--multigroup"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("src/controllers/mod.rs")
            && out.stderr.contains("sailor::registration(),")
            && out.stderr.contains("Nothing was written"),
        "{}",
        out.stderr
    );
    assert_eq!(files(&dir), before);
}

#[test]
fn a_module_file_holding_user_code_stays_and_is_named() {
    let (_tmp, dir) = project(&[], &[KINDS[0]]);
    append(
        &dir,
        "src/api/v1/mod.rs",
        "\n/// Mine.\npub const FLEET: u8 = 1;\n",
    );
    let out = run(&dir, &["edit", "--multigroup"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("src/api/v1/mod.rs"), "{}", out.stderr);
    assert!(read(&dir, "src/api/v1/mod.rs").contains("pub const FLEET"));
    assert!(dir.join("src/api/ship/v1/frigate.rs").is_file());
    assert!(!read(&dir, "src/api/v1/mod.rs").contains("mod frigate;"));
}

#[test]
fn the_group_external_is_refused_in_the_multigroup_layout() {
    // `src/api/external/` holds the types of other projects' CRDs (`create api --from-crd`).
    let (_tmp, dir) = project(&["--multigroup"], &[]);
    let before = files(&dir);
    let out = run(
        &dir,
        &words("create api --group external --version v1 --kind Frigate"),
    );
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("src/api/external/") && out.stderr.contains("Nothing was written"),
        "{}",
        out.stderr
    );
    assert_eq!(files(&dir), before);
    // Nor is a project holding it moved there.
    let (_tmp, dir) = project(
        &[],
        &["create api --group external --version v1 --kind Frigate"],
    );
    let before = files(&dir);
    let out = run(&dir, &["edit", "--multigroup"]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("src/api/external/"), "{}", out.stderr);
    assert_eq!(files(&dir), before);
}
