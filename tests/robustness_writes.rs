//! Robustness of writes: a command leaves the old project or the new one whatever happens to it
//! (killed at every step, or an I/O error), two commands at once both land, files get the mode
//! `cargo new` gives, and no command replaces a file it did not create without `--force`.

mod common;

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
    let before = snapshot(&dir);
    let label = "g".repeat(63);
    let group = format!("{label}.{label}.{label}");
    let r = run(
        &dir,
        &words(&format!(
            "create api --group {group} --version v1 --kind {}",
            "K".to_string() + &"k".repeat(48)
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
