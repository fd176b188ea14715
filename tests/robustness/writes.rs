//! Robustness of writes: a command leaves the old project or the new one whatever happens to it
//! (killed at every step, or an I/O error), two commands at once both land, files get the mode
//! `cargo new` gives, and no command replaces a file it did not create without `--force`.

use crate::common;

use common::*;
use std::path::Path;

const API: &str = "create api --group cache --version v1alpha1 --kind Memcached";

/// A fresh copy of `template` under a new temp folder, at the same folder name (the project name
/// comes from it, so copies compare byte for byte).
fn copy_of(template: &Path) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(template.file_name().unwrap());
    copy_dir(template, &dir);
    (tmp, dir)
}

fn assert_no_leftovers(dir: &Path) {
    for path in snapshot(dir).keys() {
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(
            !name.starts_with(".operator-rs-"),
            "left behind: {}",
            path.display()
        );
    }
}

/// Kill `create api` after every number of renames, then run another command: the project must be
/// exactly what an uninterrupted run leaves. Killed while staging: exactly what it was before.
#[test]
fn a_killed_command_is_finished_or_undone_by_the_next() {
    let tmp = init_project("crash-op");
    let base = project_dir(&tmp, "crash-op");
    let before = snapshot(&base);
    let before_folders = folders(&base);
    let (_t, clean) = copy_of(&base);
    ok(&clean, &words(API));
    let after = snapshot(&clean);

    let mut killed = 0;
    for n in 0.. {
        let (_t, dir) = copy_of(&base);
        let fault = format!("rename:{n}:abort");
        let r = run_env(&dir, &words(API), &[("OPERATOR_RS_FAULT", &fault)]);
        if r.code == 0 {
            // n is past the last rename: every kill point is covered.
            assert!(n > 5, "create api did only {n} renames");
            break;
        }
        killed += 1;
        assert_ne!(
            r.code, 2,
            "rename {n}: an abort, not an error:\n{}",
            r.stderr
        );
        // Any command that takes the lock finishes the change.
        let check = run(&dir, &["generate", "crds", "--check"]);
        assert!(
            check.stderr.contains("interrupted while writing"),
            "rename {n}: {}",
            check.stderr
        );
        assert_eq!(check.code, 0, "rename {n}: {}", check.stderr);
        assert_eq!(snapshot(&dir), after, "killed after {n} renames");
        assert_no_leftovers(&dir);
    }
    assert!(killed > 5);

    for n in 1.. {
        let (_t, dir) = copy_of(&base);
        let fault = format!("stage:{n}:abort");
        let r = run_env(&dir, &words(API), &[("OPERATOR_RS_FAULT", &fault)]);
        if r.code == 0 {
            break;
        }
        let again = run(&dir, &["generate", "rbac", "--check"]);
        assert_eq!(again.code, 0, "stage {n}: {}", again.stderr);
        assert_eq!(snapshot(&dir), before, "killed while staging file {n}");
        assert_eq!(folders(&dir), before_folders, "stage {n}: new folders left");
        // The re-run that the old bug refused ("already exists") now works.
        ok(&dir, &words(API));
        assert_eq!(snapshot(&dir), after);
    }
}

/// An I/O error at any rename rolls everything back: the folder is byte-for-byte what it was.
#[test]
fn an_io_error_mid_write_rolls_back() {
    let tmp = init_project("io-op");
    let base = project_dir(&tmp, "io-op");
    let before = snapshot(&base);
    let before_folders = folders(&base);
    for n in [0, 1, 5, 16] {
        let (_t, dir) = copy_of(&base);
        let fault = format!("rename:{n}:fail");
        let r = run_env(&dir, &words(API), &[("OPERATOR_RS_FAULT", &fault)]);
        assert_eq!(r.code, 2, "rename {n}: {}", r.stderr);
        assert!(
            r.stderr.contains("nothing was changed") && r.stderr.contains("injected fault"),
            "{}",
            r.stderr
        );
        assert_eq!(snapshot(&dir), before, "rename {n}");
        assert_eq!(folders(&dir), before_folders, "rename {n}");
    }
}

/// Two `create api` at once in one project: both land, one after the other.
#[test]
fn two_commands_at_once_both_land() {
    let tmp = init_project("lock-op");
    let dir = project_dir(&tmp, "lock-op");
    let spawn = |kind: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_operator-rs"))
            .args(words(&format!(
                "create api --group cache --version v1 --kind {kind}"
            )))
            .current_dir(&dir)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    for round in 0..3 {
        let kinds = [format!("Alpha{round}"), format!("Beta{round}")];
        let children: Vec<_> = kinds.iter().map(|k| spawn(k)).collect();
        for c in children {
            let out = c.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let project = read(&dir, "PROJECT");
        for k in &kinds {
            assert!(
                project.contains(&format!("kind: {k}")),
                "{k} lost:\n{project}"
            );
            // `Alpha0` is one word: its module name is its lowercase.
            let file = format!("src/api/v1/{}.rs", k.to_lowercase());
            assert!(dir.join(&file).is_file(), "{k}: {file} is missing");
        }
    }
}

/// Files get 0666 less the umask, as `cargo new` gives them (not tempfile's 0600).
#[cfg(unix)]
#[test]
fn files_honour_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    for (umask, mode) in [("022", 0o644), ("002", 0o664), ("077", 0o600)] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("mode-op");
        std::fs::create_dir(&dir).unwrap();
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "umask {umask} && exec \"$0\" init --domain example.com",
            ))
            .arg(env!("CARGO_BIN_EXE_operator-rs"))
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(status.status.success(), "{status:?}");
        for f in [
            "Cargo.toml",
            "PROJECT",
            "config/rbac/role.yaml",
            "src/main.rs",
        ] {
            let got = std::fs::metadata(dir.join(f)).unwrap().permissions().mode() & 0o777;
            assert_eq!(got, mode, "{f} under umask {umask}: {got:o}");
        }
    }
}

/// `init` in a folder with the user's own files: it refuses every one it would replace (also
/// those a generator writes, like role.yaml), lists them, writes nothing; with --force it replaces
/// them and lists every file it wrote.
#[test]
fn init_never_replaces_a_user_file_without_force() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("user-op");
    for (rel, text) in [
        ("config/rbac/role.yaml", "# my own role\n"),
        ("config/crd/kustomization.yaml", "resources: []\n"),
        ("notes.txt", "mine\n"),
    ] {
        std::fs::create_dir_all(dir.join(rel).parent().unwrap()).unwrap();
        std::fs::write(dir.join(rel), text).unwrap();
    }
    let before = snapshot(&dir);
    let r = run(&dir, &["init", "--domain", "example.com"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    for f in ["config/rbac/role.yaml", "config/crd/kustomization.yaml"] {
        assert!(r.stderr.contains(f), "{f} not listed:\n{}", r.stderr);
    }
    assert!(r.stderr.contains("--force"), "{}", r.stderr);
    assert_eq!(snapshot(&dir), before);

    let r = ok(&dir, &["init", "--domain", "example.com", "--force"]);
    let listed: Vec<&str> = r
        .stderr
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    // Every file that changed is listed, and nothing else.
    let after = snapshot(&dir);
    for (path, bytes) in &after {
        let changed = before.get(path) != Some(bytes);
        let p = path.to_str().unwrap();
        assert_eq!(
            changed,
            listed.contains(&p),
            "{p}: listed {:?}",
            listed.contains(&p)
        );
    }
    assert_eq!(read(&dir, "notes.txt"), "mine\n");
}

/// Names whose file names no file system holds are refused before anything is written.
#[test]
fn names_too_long_for_a_file_are_refused_up_front() {
    let tmp = init_project("long-op");
    let dir = project_dir(&tmp, "long-op");
    let label = "g".repeat(63);
    let group = format!("{label}.{label}.{label}");
    // A CRD name of 253 bytes (the most the API server takes): its `<group>_<plural>.yaml`
    // would pass 255 bytes, so the file name is cut and ends with a hash of the whole name (the
    // same on every run).
    let r = run(
        &dir,
        &words(&format!(
            "create api --group {group} --version v1 --kind K{}",
            "k".repeat(47)
        )),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let bases: Vec<String> = std::fs::read_dir(dir.join("config/crd/bases"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(bases.len(), 1, "{bases:?}");
    assert!(
        bases[0].len() <= 255 && bases[0].starts_with(&group),
        "{bases:?}"
    );
    // A sample whose `<group>_<version>_<kind>.yaml` passes 255 bytes is refused up front
    // (a short plural keeps the CRD's name valid).
    let before = snapshot(&dir);
    let r = run(
        &dir,
        &words(&format!(
            "create api --group {group} --version v1 --kind K{} --plural ks",
            "k".repeat(58)
        )),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("255-byte limit") && r.stderr.contains("Nothing was written"),
        "{}",
        r.stderr
    );
    assert_eq!(snapshot(&dir), before);
}

/// No `.operator-rs-*` file anywhere below `dir`, links not followed.
fn assert_no_leftovers_below(dir: &Path) {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(
                !name.starts_with(".operator-rs-"),
                "left behind: {}",
                e.path().display()
            );
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            }
        }
    }
}

/// A file or folder that is a symbolic link out of the project is never written through (nor
/// replaced by a regular file): the command is refused, saying which link and where it points.
#[cfg(unix)]
#[test]
fn links_out_of_the_project_are_refused() {
    let tmp = init_project("link-op");
    let dir = project_dir(&tmp, "link-op");
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();

    // src/api/mod.rs, a link to a file outside.
    std::fs::rename(dir.join("src/api/mod.rs"), outside.join("mod.rs")).unwrap();
    std::os::unix::fs::symlink(outside.join("mod.rs"), dir.join("src/api/mod.rs")).unwrap();
    let (before, outside_before) = (snapshot(&dir), snapshot(&outside));
    let r = run(&dir, &words(API));
    assert_eq!(r.code, 2, "{}", r.stderr);
    for needle in [
        "src/api/mod.rs",
        "symbolic link to",
        "outside the project folder",
        "Nothing was written",
    ] {
        assert!(r.stderr.contains(needle), "{needle}: {}", r.stderr);
    }
    assert_eq!(snapshot(&dir), before);
    assert_eq!(snapshot(&outside), outside_before);
    let meta = std::fs::symlink_metadata(dir.join("src/api/mod.rs")).unwrap();
    assert!(meta.file_type().is_symlink(), "the link stays a link");
    assert_no_leftovers_below(&dir);

    // vendor/, a link to a folder outside: upgrade-runtime would write the copy there.
    std::fs::remove_file(dir.join("src/api/mod.rs")).unwrap();
    std::fs::rename(outside.join("mod.rs"), dir.join("src/api/mod.rs")).unwrap();
    std::fs::rename(dir.join("vendor"), outside.join("vendor")).unwrap();
    std::os::unix::fs::symlink(outside.join("vendor"), dir.join("vendor")).unwrap();
    let lib = outside.join("vendor/operator-rs-runtime/src/lib.rs");
    let old = format!(
        "{}// an older copy\n",
        std::fs::read_to_string(&lib).unwrap()
    );
    std::fs::write(&lib, &old).unwrap();
    std::fs::write(
        outside.join("vendor/operator-rs-runtime/src/gone.rs"),
        "// stale\n",
    )
    .unwrap();
    let outside_before = snapshot(&outside);
    let r = run(&dir, &["upgrade-runtime"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    for needle in [
        "the folder vendor is a symbolic link to",
        "outside the project folder",
    ] {
        assert!(r.stderr.contains(needle), "{needle}: {}", r.stderr);
    }
    assert_eq!(
        snapshot(&outside),
        outside_before,
        "nothing written through the link"
    );
    assert_no_leftovers_below(&dir);
    assert_no_leftovers_below(&outside);
}

/// A link to a file inside the project is written through, deliberately and said so: the link
/// stays, its target gets the new text.
#[cfg(unix)]
#[test]
fn a_link_inside_the_project_is_written_through() {
    let tmp = init_project("inlink-op");
    let dir = project_dir(&tmp, "inlink-op");
    std::fs::rename(dir.join("src/api/mod.rs"), dir.join("src/api/real.rs")).unwrap();
    std::os::unix::fs::symlink("real.rs", dir.join("src/api/mod.rs")).unwrap();
    let r = ok(&dir, &words(API));
    assert!(
        r.stderr.contains(
            "note: src/api/mod.rs is a symbolic link to src/api/real.rs: writing through it"
        ),
        "{}",
        r.stderr
    );
    let meta = std::fs::symlink_metadata(dir.join("src/api/mod.rs")).unwrap();
    assert!(meta.file_type().is_symlink());
    assert!(read(&dir, "src/api/real.rs").contains("pub mod v1alpha1;"));
    assert_no_leftovers_below(&dir);
}

/// A file its owner made read-only is not replaced (a rename would, silently): refused, with
/// the reason and the way out; with the mode back, the command runs.
#[cfg(unix)]
#[test]
fn read_only_files_are_refused_not_replaced() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = init_project("ro-op");
    let dir = project_dir(&tmp, "ro-op");
    let file = dir.join("src/api/mod.rs");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = snapshot(&dir);
    let r = run(&dir, &words(API));
    assert_eq!(r.code, 2, "{}", r.stderr);
    for needle in [
        "src/api/mod.rs",
        "read-only",
        "chmod u+w src/api/mod.rs",
        "Nothing was written",
    ] {
        assert!(r.stderr.contains(needle), "{needle}: {}", r.stderr);
    }
    assert_eq!(snapshot(&dir), before);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o444);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    ok(&dir, &words(API));
}

/// The journal's own temp file goes with every failure to write the journal (before the
/// renames, and before the commit point): nothing is left behind, the project is unchanged.
#[test]
fn a_journal_that_cannot_be_written_leaves_nothing() {
    let tmp = init_project("journal-op");
    let base = project_dir(&tmp, "journal-op");
    let before = snapshot(&base);
    let before_folders = folders(&base);
    for fault in ["journal:0:fail", "journal:1:fail"] {
        let (_t, dir) = copy_of(&base);
        let r = run_env(&dir, &words(API), &[("OPERATOR_RS_FAULT", fault)]);
        assert_eq!(r.code, 2, "{fault}: {}", r.stderr);
        assert!(
            r.stderr.contains("nothing was changed"),
            "{fault}: {}",
            r.stderr
        );
        assert_eq!(snapshot(&dir), before, "{fault}");
        assert_eq!(folders(&dir), before_folders, "{fault}");
        assert_no_leftovers(&dir);
    }
    // `init` in a folder it makes: on failure the folder goes too.
    let fresh = tmp.path().join("new/deeper");
    let r = run_env(
        tmp.path(),
        &[
            "-C",
            fresh.to_str().unwrap(),
            "init",
            "--domain",
            "example.com",
        ],
        &[("OPERATOR_RS_FAULT", "journal:0:fail")],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        !tmp.path().join("new").exists(),
        "the folders init made are gone"
    );
}

/// `init --force` in a project with kinds would reset their wiring (PROJECT's resources,
/// src/api/mod.rs) while their sources stay: refused, naming the kinds and what to run instead.
/// In a project without kinds it re-scaffolds and keeps PROJECT's settings, keys and comments.
#[test]
fn init_force_keeps_what_later_commands_added() {
    let tmp = init_project("force-op");
    let dir = project_dir(&tmp, "force-op");
    let project = read(&dir, "PROJECT").replace(
        "domain: example.com\n",
        "# ours\ndomain: example.com\ncrd:\n  maxDescLen: 10\nplugins:\n  x.example.com/v1: {}\n",
    );
    std::fs::write(dir.join("PROJECT"), &project).unwrap();
    std::fs::write(dir.join("Makefile"), "# mine\n").unwrap();
    ok(&dir, &["init", "--domain", "example.com", "--force"]);
    let after = read(&dir, "PROJECT");
    for kept in ["# ours\n", "maxDescLen: 10", "x.example.com/v1: {}"] {
        assert!(after.contains(kept), "{kept}: {after}");
    }
    assert_ne!(read(&dir, "Makefile"), "# mine\n", "re-scaffolded");

    ok(&dir, &words(API));
    let before = snapshot(&dir);
    let r = run(&dir, &["init", "--domain", "example.com", "--force"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    for needle in [
        "cache.example.com/v1alpha1 Memcached",
        "src/api/mod.rs",
        "Nothing was written",
        "operator-rs upgrade-runtime",
    ] {
        assert!(r.stderr.contains(needle), "{needle}: {}", r.stderr);
    }
    assert_eq!(snapshot(&dir), before);
}

/// A stream that cannot take the tool's messages (a full disk: /dev/full; a closed pipe, as
/// `| head -1` leaves) changes neither the outcome nor the exit code: no panic (exit 101).
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_or_a_closed_pipe_never_panics() {
    use std::process::{Command, Stdio};
    let tmp = init_project("full-op");
    let dir = project_dir(&tmp, "full-op");
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let exe = env!("CARGO_BIN_EXE_operator-rs");
    let status = |args: &[&str], out: Stdio, err: Stdio| {
        Command::new(exe)
            .args(args)
            .current_dir(&dir)
            .stdout(out)
            .stderr(err)
            .status()
            .unwrap()
            .code()
    };
    // Success, with its progress lines lost: the files are written.
    assert_eq!(status(&words(API), full().into(), full().into()), Some(0));
    assert!(dir.join("src/api/v1alpha1/memcached.rs").is_file());
    // A refusal whose message is lost: still exit 2.
    assert_eq!(status(&words(API), full().into(), full().into()), Some(2));
    assert_eq!(
        status(&["no-such-command"], full().into(), full().into()),
        Some(2)
    );
    for args in [&["version"][..], &["completion", "bash"], &["--help"]] {
        assert_eq!(
            status(args, full().into(), full().into()),
            Some(0),
            "{args:?}"
        );
    }
    // `generate crds --check | head -1`: the reader is gone after the first line.
    std::fs::write(
        dir.join("config/crd/bases/cache.example.com_memcacheds.yaml"),
        "stale: 1\n".repeat(5000),
    )
    .unwrap();
    let mut child = Command::new(exe)
        .args(["generate", "crds", "--check"])
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    assert_eq!(
        child.wait().unwrap().code(),
        Some(1),
        "stale, reported by the exit code"
    );
}

/// A file where the scaffold puts a folder, or a folder where it puts a file: the command says
/// which path is in the way and what to do, and writes nothing.
#[test]
fn a_file_where_a_folder_belongs_is_named() {
    let tmp = init_project("inway-op");
    let dir = project_dir(&tmp, "inway-op");
    let args = [
        "create",
        "api",
        "--group",
        "web",
        "--version",
        "v1",
        "--kind",
        "Site",
    ];
    for (make, undo, needle) in [
        (
            (|d: &Path| {
                std::fs::remove_dir_all(d.join("config/samples")).unwrap();
                std::fs::write(d.join("config/samples"), "x").unwrap();
            }) as fn(&Path),
            (|d: &Path| std::fs::remove_file(d.join("config/samples")).unwrap()) as fn(&Path),
            "config/samples is a file where a folder belongs",
        ),
        (
            |d: &Path| std::fs::create_dir_all(d.join("config/samples/web_v1_site.yaml")).unwrap(),
            |d: &Path| std::fs::remove_dir(d.join("config/samples/web_v1_site.yaml")).unwrap(),
            "config/samples/web_v1_site.yaml is a folder where a file belongs",
        ),
    ] {
        make(&dir);
        let before = snapshot(&dir);
        let r = run(&dir, &args);
        assert_eq!(r.code, 2, "{needle}: {}", r.stderr);
        assert!(
            r.stderr.contains(needle)
                && r.stderr.contains("Nothing was written")
                && r.stderr.contains("e.g. `mv"),
            "{}",
            r.stderr
        );
        assert_eq!(snapshot(&dir), before, "{needle}: the project changed");
        undo(&dir);
    }
    std::fs::create_dir_all(dir.join("config/samples")).unwrap();
}

/// A kustomization a command adds to (config/crd's `resources:`, which `generate crds` keeps in
/// step; config/rbac's and the others', where `create api` inserts at a marker) that does not
/// parse, or that the edit would break (a flow list, a marker moved out of its list), is refused:
/// the file, the parser's line and column or the rule, the fix; nothing written. A comment after
/// `resources:` is kept.
#[test]
fn kustomizations_a_command_cannot_keep_are_refused() {
    let tmp = init_project("kust-op");
    let dir = project_dir(&tmp, "kust-op");
    ok(&dir, &words(API));
    let crd = "config/crd/kustomization.yaml";
    let rbac = "config/rbac/kustomization.yaml";
    let (crd_text, rbac_text) = (read(&dir, crd), read(&dir, rbac));
    let marker = "# +operator-rs:scaffold:rbacroles\n";
    let bases = "- bases/cache.example.com_memcacheds.yaml\n";
    let another = words("create api --group cache --version v1 --kind Other");
    for (file, text, args, needles) in [
        (
            crd,
            "resources: [\n".to_string(),
            words("generate crds"),
            vec![
                "config/crd/kustomization.yaml: not valid YAML (error: line 1 column 12",
                "then re-run",
            ],
        ),
        (
            crd,
            crd_text.replacen(
                &format!("resources:\n{bases}"),
                "resources: [bases/cache.example.com_memcacheds.yaml]\n",
                1,
            ),
            words("generate crds"),
            vec![
                "config/crd/kustomization.yaml: operator-rs keeps its `resources:` in step",
                "duplicate mapping key: resources",
                "e.g.\n  resources:\n  - bases/",
            ],
        ),
        (
            rbac,
            format!("{rbac_text}x: [\n"),
            another.clone(),
            vec!["config/rbac/kustomization.yaml: not valid YAML (error: line "],
        ),
        (
            rbac,
            rbac_text.replacen(marker, "", 1).replacen(
                "kind: Kustomization\n",
                &format!("kind: Kustomization\n{marker}"),
                1,
            ),
            another.clone(),
            vec![
                "config/rbac/kustomization.yaml: adding at its `# +operator-rs:scaffold:rbacroles` line would make it invalid YAML",
                "- other_editor_role.yaml",
            ],
        ),
    ] {
        assert_ne!(read(&dir, file), text, "{file}: the edit changed nothing");
        std::fs::write(dir.join(file), &text).unwrap();
        let before = snapshot(&dir);
        let r = run(&dir, &args);
        assert_eq!(r.code, 2, "{text}: {}", r.stderr);
        for n in needles {
            assert!(r.stderr.contains(n), "{text}: {n:?} not in:\n{}", r.stderr);
        }
        assert_eq!(
            snapshot(&dir),
            before,
            "{text}: {args:?} changed the project"
        );
        std::fs::write(dir.join(crd), &crd_text).unwrap();
        std::fs::write(dir.join(rbac), &rbac_text).unwrap();
    }
    let commented = crd_text.replacen("resources:\n", "resources: # the CRDs\n", 1);
    std::fs::write(dir.join(crd), &commented).unwrap();
    ok(&dir, &words("generate crds"));
    assert_eq!(read(&dir, crd), commented);
}

/// A folder where a command reads a file of its own (PROJECT, a generated manifest it compares
/// with, with or without `--check`): named as such, with what to do, for every command and every
/// such file; nothing written.
#[test]
fn a_folder_where_a_generated_file_belongs_is_named() {
    let tmp = init_project("folder-op");
    let dir = project_dir(&tmp, "folder-op");
    ok(&dir, &words(API));
    let crd = "config/crd/bases/cache.example.com_memcacheds.yaml";
    for (file, commands) in [
        (
            "config/rbac/role.yaml",
            vec![
                "generate rbac",
                "generate rbac --check",
                "generate manifests",
            ],
        ),
        (
            crd,
            vec![
                "generate crds",
                "generate crds --check",
                "create api --group cache --version v1 --kind Other",
            ],
        ),
        (
            "PROJECT",
            vec![
                "generate crds",
                "create api --group cache --version v1 --kind Other",
            ],
        ),
    ] {
        let text = read(&dir, file);
        std::fs::remove_file(dir.join(file)).unwrap();
        std::fs::create_dir(dir.join(file)).unwrap();
        let before = snapshot(&dir);
        for args in commands {
            let r = run(&dir, &words(args));
            assert_eq!(r.code, 2, "{file}: {args}: {}", r.stderr);
            for needle in [
                &format!("{file} is a folder where a file belongs") as &str,
                "Nothing was written",
                "e.g. `mv",
            ] {
                assert!(
                    r.stderr.contains(needle),
                    "{file}: {args}: {needle:?} not in:\n{}",
                    r.stderr
                );
            }
            assert_eq!(
                snapshot(&dir),
                before,
                "{file}: {args}: the project changed"
            );
        }
        std::fs::remove_dir(dir.join(file)).unwrap();
        std::fs::write(dir.join(file), text).unwrap();
    }
}
