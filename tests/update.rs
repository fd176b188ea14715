//! `operator-rs update` on projects made by earlier commits of this repository's main: each old
//! operator-rs is built from git once (in the shared build directory, binary cached in
//! target/old-operator-rs/<commit>/operator-rs), makes a project, the project is edited as users
//! edit it, and this operator-rs updates it. The result must be exactly a fresh scaffold of the
//! same commands with the same edits; an edit overlapping a scaffold change must give conflict
//! markers and a non-zero exit. Refusals (no git, dirty tree) and --dry-run are checked too.
//! One of them walks our README's "Updating a project" block as written, from `git status` to
//! the commit, the updated project built, tested and `make check-manifests` clean.
//! CI updates from dea212f (that walk) only; the updates from the older commits ccecc98 and
//! d56e86b, each another old build, run with `OPERATOR_RS_UPDATE_OLD_VERSIONS=1`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use common::{Run, snapshot};

const NAME: &str = "memcached-operator";

/// One old binary builds at a time: they share a cargo target whose `debug/operator-rs` each
/// build replaces.
static BUILD: Mutex<()> = Mutex::new(());

/// The operator-rs of `commit`, built once; `None` (with a visible SKIPPED line) when this
/// checkout does not have the commit (a shallow clone).
fn old_binary(commit: &str) -> Option<PathBuf> {
    let _guard = BUILD.lock().unwrap_or_else(|e| e.into_inner());
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cache = repo.join("target/old-operator-rs");
    let binary = cache.join(commit).join("operator-rs");
    if binary.is_file() {
        return Some(binary);
    }
    let has = Command::new("git")
        .args(["cat-file", "-e", &format!("{commit}^{{commit}}")])
        .current_dir(repo)
        .status()
        .is_ok_and(|s| s.success());
    if !has {
        eprintln!(
            "SKIPPED: commit {commit} is not in this checkout (shallow clone?): no old operator-rs to update from"
        );
        return None;
    }
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    git(
        repo,
        &["worktree", "add", "--detach", src.to_str().unwrap(), commit],
    );
    let started = std::time::Instant::now();
    let out = common::as_user(&mut Command::new(env!("CARGO")))
        // Old commits build the CLI only with the runtime feature on, as their workspace did;
        // and k8s-openapi (the largest crate of the tree) with `schemars`, as this workspace's
        // tests build it: the old build then finds it compiled (dea212f's CLI has it without).
        .args([
            "build",
            "--bin",
            "operator-rs",
            "--features",
            "operator-rs-runtime/runtime,k8s-openapi/schemars",
        ])
        .current_dir(&src)
        // Their binaries in a folder of their own, their compiled units in the shared build
        // directory: an old commit's crates are mostly the versions and features this
        // workspace's build compiled (a cold build of their own cost minutes of CPU each run).
        // Cargo locks the build directory while it compiles, so the jobs beside this one wait
        // for the old commit's own crates (about a minute), not for every dependency.
        .env("CARGO_TARGET_DIR", cache.join("target"))
        .env("CARGO_BUILD_BUILD_DIR", common::shared_build_dir())
        .env("CARGO_INCREMENTAL", "0")
        .env("CARGO_PROFILE_DEV_DEBUG", "0")
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    git(
        repo,
        &["worktree", "remove", "--force", src.to_str().unwrap()],
    );
    assert!(
        out.status.success(),
        "building operator-rs at {commit} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("built operator-rs at {commit} in {:?}", started.elapsed());
    std::fs::create_dir_all(binary.parent().unwrap()).unwrap();
    std::fs::copy(cache.join("target/debug/operator-rs"), &binary).unwrap();
    Some(binary)
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn commit_all(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", message]);
}

/// `binary -C dir <line>`, required to succeed.
fn run_with(binary: &Path, dir: &Path, line: &str) -> Run {
    let words = shlex::split(line).unwrap();
    let out: Run = common::as_user(&mut Command::new(binary))
        .arg("-C")
        .arg(dir)
        .args(&words)
        .output()
        .unwrap()
        .into();
    assert_eq!(
        out.code,
        0,
        "{} {line} failed:\n{}",
        binary.display(),
        out.stderr
    );
    out
}

fn this_binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_operator-rs"))
}

/// What users scaffold: a deploy-image kind, a kind with webhooks, and (where the old operator-rs
/// has `edit api`) a second version made the storage version with a conversion webhook.
fn scenario(edit_api: bool) -> Vec<&'static str> {
    let mut lines = vec![
        "init --domain example.com --repo github.com/acme/memcached-operator",
        "create api --group cache --version v1alpha1 --kind Memcached --image memcached:1.6 --image-container-port 11211",
        "create api --group batch --version v1 --kind CronJob",
        "create webhook --group batch --version v1 --kind CronJob --defaulting --programmatic-validation",
    ];
    if edit_api {
        lines.extend([
            "create api --group batch --version v2 --kind CronJob --controller=false",
            "edit api --group batch --version v2 --kind CronJob --storage",
            "create webhook --group batch --version v2 --kind CronJob --conversion --spoke v1",
        ]);
    }
    lines
}

fn scaffold(binary: &Path, base: &Path, lines: &[&str]) -> PathBuf {
    let dir = base.join(NAME);
    std::fs::create_dir_all(&dir).unwrap();
    for line in lines {
        run_with(binary, &dir, line);
    }
    dir
}

fn edit(dir: &Path, rel: &str, f: impl FnOnce(&str) -> String) {
    let path = dir.join(rel);
    let text = std::fs::read_to_string(&path).unwrap();
    let changed = f(&text);
    assert_ne!(changed, text, "the edit of {rel} found its place");
    std::fs::write(path, changed).unwrap();
}

fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?} not found");
    text.replacen(from, to, 1)
}

/// Edits users make: a spec field, controller logic, a flag of the manager, a Makefile target, a
/// resource limit; then `generate manifests` with `binary` (the one the Makefile pins).
fn user_edits(binary: &Path, dir: &Path) {
    edit(dir, "src/api/v1alpha1/memcached.rs", |t| {
        replace_once(
            t,
            "pub struct MemcachedSpec {\n",
            "pub struct MemcachedSpec {\n    /// How long a cache entry lives, in seconds.\n    #[serde(default)]\n    pub ttl_seconds: i32,\n",
        )
    });
    edit(dir, "src/controllers/cron_job.rs", |t| {
        let at = t.find("\n\n").expect("a blank line after the module doc") + 1;
        format!(
            "{}\n/// Jobs started at once at most (the user's logic).\npub const MAX_PARALLEL_JOBS: usize = 3;\n{}",
            &t[..at],
            &t[at..]
        )
    });
    edit(dir, "src/main.rs", |t| {
        replace_once(
            t,
            "struct Cli {\n",
            "struct Cli {\n    /// How often reports are sent, in seconds.\n    #[arg(long, default_value_t = 300)]\n    report_seconds: u64,\n",
        )
    });
    edit(dir, "Makefile", |t| {
        format!(
            "{t}\n.PHONY: bench\nbench: ## Run the benchmarks (the user's target).\n\t$(CARGO) bench\n"
        )
    });
    // The CPU limit (the memory limit's line sits next to one a newer scaffold adds, which
    // git's merge would rightly call a conflict).
    edit(dir, "config/manager/manager.yaml", |t| {
        replace_once(t, "cpu: 500m", "cpu: \"2\"")
    });
    run_with(binary, dir, "generate manifests");
}

/// Every file of a project but git's and the build's.
fn tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    snapshot(dir)
        .into_iter()
        .filter(|(p, _)| {
            !p.starts_with(".git") && !p.starts_with("target") && p != Path::new("Cargo.lock")
        })
        .map(|(p, b)| (p, String::from_utf8(b).unwrap()))
        .collect()
}

fn assert_same_tree(got: &Path, want: &Path) {
    let (got, want) = (tree(got), tree(want));
    let only_got: Vec<_> = got.keys().filter(|p| !want.contains_key(*p)).collect();
    let only_want: Vec<_> = want.keys().filter(|p| !got.contains_key(*p)).collect();
    let differ: Vec<_> = (got.iter())
        .filter(|(p, t)| want.get(*p).is_some_and(|w| w != *t))
        .map(|(p, t)| {
            let w = &want[p];
            let line = (t.lines().zip(w.lines()))
                .find(|(a, b)| a != b)
                .map(|(a, b)| format!("got {a:?}, want {b:?}"))
                .unwrap_or_else(|| "lengths differ".into());
            format!("{}: {line}", p.display())
        })
        .collect();
    assert!(
        only_got.is_empty() && only_want.is_empty() && differ.is_empty(),
        "the updated project is not the fresh scaffold with the user's edits:\n only in the update: {only_got:?}\n missing: {only_want:?}\n differ:\n  {}",
        differ.join("\n  ")
    );
}

/// The commands the updated PROJECT records (what a fresh scaffold replays).
fn recorded_commands(dir: &Path) -> Vec<String> {
    let project = operator_rs::project::Project::load(dir).unwrap();
    assert!(
        !project.commands.is_empty(),
        "update records the commands in PROJECT"
    );
    project.commands
}

/// Our README's "Updating a project" block, checked to be the steps [`update_from`] walks.
fn readme_block() -> Vec<String> {
    let block =
        common::readme::sh_blocks(&common::readme::our_readme(), "### Updating a project").concat();
    let steps: Vec<String> = (block.iter())
        .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        steps,
        [
            "git status",
            "operator-rs update",
            "operator-rs update",
            "git status",
            "operator-rs generate",
            "git add"
        ],
        "the README's update block changed: walk its new steps here"
    );
    assert_eq!(block[1], "operator-rs update --dry-run", "{block:?}");
    assert_eq!(block[2], "operator-rs update", "{block:?}");
    block
}

/// A user's shell in `dir` for our README's update block: the operator-rs under test on PATH,
/// and `old` where `update` finds the operator-rs that made the project when `make operator-rs`
/// did not install it into `bin/`: built once into the cache folder (`OPERATOR_RS_CACHE`, as
/// `cargo install` of PROJECT's `cliVersion` leaves it). Not `bin/`: every commit of main is
/// 0.1.0, so `bin/operator-rs-0.1.0` would still be the old one for the updated project's
/// `make check-manifests`.
fn user_shell(dir: &Path, old: &Path, cache: &Path) -> common::readme::UserShell {
    let version = operator_rs::project::Project::load(dir)
        .unwrap()
        .cli_version;
    let bin = cache.join(version).join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(old, bin.join("operator-rs")).unwrap();
    let mut shell = common::readme::UserShell::new(dir, &[("OPERATOR_RS_CACHE", cache)]);
    for (key, value) in [
        ("GIT_AUTHOR_NAME", "t"),
        ("GIT_AUTHOR_EMAIL", "t@example.com"),
        ("GIT_COMMITTER_NAME", "t"),
        ("GIT_COMMITTER_EMAIL", "t@example.com"),
    ] {
        shell.set(key, value);
    }
    shell
}

/// The whole story for one old commit; `literal` walks our README's update block as written
/// (the update found as a user's is, then the build, the tests and `make check-manifests` of
/// the updated project, and the commit); else the same update with `--from-binary`.
fn update_from(commit: &str, edit_api: bool, literal: bool) {
    if common::runs_elsewhere("update") {
        return;
    }
    let started = std::time::Instant::now();
    let Some(old) = old_binary(commit) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let lines = scenario(edit_api);
    let dir = scaffold(&old, &tmp.path().join("user"), &lines);
    if literal {
        // The user built the project before, and committed its Cargo.lock (as its .gitignore
        // says): the workspace's, which the build then trims.
        common::seed_lock(&dir);
    }
    git(&dir, &["init", "-q"]);
    commit_all(&dir, "scaffold");
    user_edits(&old, &dir);
    commit_all(&dir, "user edits");
    let literal = literal.then(|| {
        (
            readme_block(),
            user_shell(&dir, &old, &tmp.path().join("cache")),
        )
    });
    // `operator-rs update [--dry-run]`: the README's line, or with --from-binary.
    let update = |line: &str| -> (bool, String) {
        match &literal {
            Some((_, shell)) => shell.try_run(line),
            None => {
                let mut args = common::words(&line["operator-rs ".len()..]);
                args.extend(["--from-binary", old.to_str().unwrap(), "--no-check"]);
                let r = common::run(&dir, &args);
                (r.code == 0, r.stderr)
            }
        }
    };
    if let Some((block, shell)) = &literal {
        let status = shell.run(&block[0]);
        assert!(status.contains("working tree clean"), "{status}");
    }

    // --dry-run lists the changes and writes nothing.
    let before = snapshot(&dir);
    let (dry_ok, dry) = update("operator-rs update --dry-run");
    assert!(dry_ok, "{dry}");
    assert!(dry.contains("would merge Makefile"), "{dry}");
    assert!(dry.contains("--dry-run: nothing was written"), "{dry}");
    assert_eq!(snapshot(&dir), before, "--dry-run wrote something");

    // A copy for the conflict case below, before the update.
    let conflicting = tmp.path().join("conflict").join(NAME);
    common::copy_dir(&dir, &conflicting);

    let (update_ok, updated) = update("operator-rs update");
    assert!(update_ok, "update failed:\n{updated}");
    if literal.is_some() {
        // Without --no-check: the merged project is built, then linted as `make lint` does.
        for step in ["cargo check --all-targets", "cargo clippy --all-targets"] {
            assert!(
                updated.contains(&format!("Running `{step}")),
                "{step} not run:\n{updated}"
            );
        }
        assert!(updated.contains("passed."), "{updated}");
    }

    // The expectation: this operator-rs's scaffold of the same commands, with the same edits.
    let commands = recorded_commands(&dir);
    let command_refs: Vec<&str> = commands.iter().map(String::as_str).collect();
    let fresh = scaffold(&this_binary(), &tmp.path().join("fresh"), &command_refs);
    user_edits(&this_binary(), &fresh);
    assert_same_tree(&dir, &fresh);
    assert!(
        git(&dir, &["status", "--porcelain"]).contains("Makefile"),
        "the update shows in git status"
    );
    eprintln!("{commit}: update checked in {:?}", started.elapsed());

    if let Some((block, shell)) = &literal {
        // The rest of the block as written: review, regenerate, build, test, check, commit
        // (the files the new scaffold added too: `git commit -am` once left them out).
        let review = shell.run(&block[3]);
        assert!(review.contains("diff --git a/Makefile"), "{review}");
        assert!(review.contains("Untracked files:"), "{review}");
        shell.run(&block[4]);
        shell.run(&block[5]);
        let left = git(&dir, &["status", "--porcelain"]);
        assert_eq!(left, "", "left out of the README's commit");
        eprintln!(
            "{commit}: updated project built, tested and committed in {:?}",
            started.elapsed()
        );
    }

    // An edit of a line the new scaffold changes: conflict markers, the file named, exit 1.
    let ancestor = scaffold(&old, &tmp.path().join("ancestor"), &lines);
    let (rel, line) =
        changed_line(&ancestor, &fresh).expect("the scaffold changed since the old commit");
    edit(&conflicting, &rel, |t| {
        replace_once(t, &line, &format!("{line} # the user's"))
    });
    commit_all(&conflicting, "an edit the scaffold overlaps");
    let update = common::run(
        &conflicting,
        &["update", "--from-binary", old.to_str().unwrap()],
    );
    assert_eq!(
        update.code, 1,
        "an overlap must fail the update:\n{}",
        update.stderr
    );
    assert!(
        update.stderr.contains(&format!("  {rel}\n")),
        "the conflicted file is listed:\n{}",
        update.stderr
    );
    let text = std::fs::read_to_string(conflicting.join(&rel)).unwrap();
    assert!(
        text.contains("<<<<<<< ")
            && text.contains(&format!("{line} # the user's"))
            && text.contains(">>>>>>> "),
        "{rel} has conflict markers around the user's line:\n{text}"
    );
    eprintln!("{commit}: done in {:?}", started.elapsed());
}

/// A line of a scaffold file (not the vendored runtime, PROJECT or a generated manifest) that
/// the old scaffold has and the new one changed.
fn changed_line(old: &Path, new: &Path) -> Option<(String, String)> {
    let (old, new) = (tree(old), tree(new));
    for (path, text) in &old {
        let rel = path.to_string_lossy().into_owned();
        if rel.starts_with("vendor/") || rel == "PROJECT" || rel.starts_with("config/crd/bases") {
            continue;
        }
        let Some(new_text) = new.get(path) else {
            continue;
        };
        let new_lines: std::collections::BTreeSet<&str> = new_text.lines().collect();
        let unique = |l: &&str| text.matches(*l).count() == 1;
        if let Some(line) = text
            .lines()
            .filter(|l| l.trim().len() > 8 && !new_lines.contains(l))
            .find(unique)
        {
            return Some((rel, line.to_string()));
        }
    }
    None
}

#[test]
fn update_from_dea212f_keeps_edits_builds_and_conflicts() {
    update_from("dea212f", true, true);
}

/// The env var that runs [`update_from_ccecc98`] and [`update_from_d56e86b_the_first_create_webhook`].
const OLD_VERSIONS: &str = "OPERATOR_RS_UPDATE_OLD_VERSIONS";

/// Whether the updates from the older commits run: each builds another old operator-rs (its own
/// crates and a k8s-openapi of its own features, about two minutes of CPU), so CI updates from
/// dea212f only (the README's walk, [`update_from_dea212f_keeps_edits_builds_and_conflicts`]),
/// and these run with `OPERATOR_RS_UPDATE_OLD_VERSIONS=1` (a visible SKIPPED line without it).
fn old_versions_opted_in(test: &str) -> bool {
    let on = std::env::var(OLD_VERSIONS).is_ok_and(|v| v == "1");
    if !on {
        eprintln!(
            "SKIPPED {test}: builds an older operator-rs (minutes of CPU); run it with {OLD_VERSIONS}=1"
        );
    }
    on
}

#[test]
fn update_from_ccecc98() {
    if old_versions_opted_in("update_from_ccecc98") {
        update_from("ccecc98", true, false);
    }
}

#[test]
fn update_from_d56e86b_the_first_create_webhook() {
    if old_versions_opted_in("update_from_d56e86b_the_first_create_webhook") {
        update_from("d56e86b", false, false);
    }
}

#[test]
fn a_project_of_this_version_is_up_to_date() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = scaffold(&this_binary(), tmp.path(), &scenario(true));
    // A kind from a CRD file kept in the project, and the manager made namespace-scoped: both
    // in PROJECT's record of commands, both replayed (the CRD file copied to the replay).
    let crds = dir.join("config/external");
    std::fs::create_dir_all(&crds).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/external_crds/cert-manager.io_certificates.yaml"),
        crds.join("certificates.yaml"),
    )
    .unwrap();
    for line in [
        "create api --group cert-manager.io --version v1 --kind Certificate --from-crd config/external/certificates.yaml",
        "edit --namespaced",
    ] {
        let r = common::run(&dir, &line.split(' ').collect::<Vec<_>>());
        assert_eq!(r.code, 0, "{line}: {}", r.stderr);
    }
    let recorded = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    let recorded: serde_json::Value = serde_saphyr::from_str(&recorded).unwrap();
    let commands: Vec<&str> = (recorded["commands"].as_array().unwrap().iter())
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(commands[0].ends_with(" --namespaced"), "{commands:#?}");
    assert!(
        commands.contains(&"create api --group cert-manager.io --version v1 --kind Certificate --from-crd config/external/certificates.yaml"),
        "{commands:#?}"
    );
    git(&dir, &["init", "-q"]);
    commit_all(&dir, "scaffold");
    let r = common::run(
        &dir,
        &["update", "--from-binary", this_binary().to_str().unwrap()],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("up to date"), "{}", r.stderr);
    assert_eq!(
        git(&dir, &["status", "--porcelain"]),
        "",
        "the replay reproduced the project exactly"
    );
}

#[test]
fn update_refuses_a_dirty_tree_and_a_folder_outside_git() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = scaffold(&this_binary(), tmp.path(), &scenario(false)[..2]);
    let before = snapshot(&dir);
    let r = common::run(&dir, &["update"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("is not in a git repository"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("git init"), "the way out: {}", r.stderr);
    assert_eq!(snapshot(&dir), before);

    git(&dir, &["init", "-q"]);
    commit_all(&dir, "scaffold");
    std::fs::write(dir.join("src/notes.rs"), "// wip\n").unwrap();
    let before = snapshot(&dir);
    let r = common::run(&dir, &["update"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("uncommitted changes"), "{}", r.stderr);
    assert!(
        r.stderr.contains("src/notes.rs"),
        "the dirty file is named: {}",
        r.stderr
    );
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn from_binary_must_be_an_operator_rs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = scaffold(&this_binary(), tmp.path(), &scenario(false)[..1]);
    git(&dir, &["init", "-q"]);
    commit_all(&dir, "scaffold");
    let r = common::run(&dir, &["update", "--from-binary", "/bin/true"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("not an operator-rs binary"),
        "{}",
        r.stderr
    );
}

/// Every file of a project but git's own.
fn work_tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    snapshot(dir)
        .into_iter()
        .filter(|(p, _)| !p.starts_with(".git"))
        .collect()
}

/// A project scaffolded by `binary` with `lines`, under git, committed.
fn committed(binary: &Path, base: &Path, lines: &[&str]) -> PathBuf {
    let dir = scaffold(binary, base, lines);
    git(&dir, &["init", "-q", "-b", "main"]);
    commit_all(&dir, "scaffold");
    dir
}

/// PROJECT's `scaffold:` record rewritten by `f` (as an older operator-rs would have left it),
/// committed.
fn rewrite_record(dir: &Path, f: impl FnOnce(&str) -> String) {
    edit(dir, "PROJECT", f);
    commit_all(dir, "the record of another scaffold");
}

const OTHER_FINGERPRINT: &str =
    "sha256:1111111111111111111111111111111111111111111111111111111111111111";

/// The record's fingerprint line replaced by another scaffold's.
fn other_scaffold(text: &str) -> String {
    let line = (text.lines())
        .find(|l| l.trim_start().starts_with("fingerprint: "))
        .expect("PROJECT records the scaffold's fingerprint");
    text.replacen(line, &format!("  fingerprint: {OTHER_FINGERPRINT}"), 1)
}

/// `operator-rs update <args>` where no operator-rs is installed but in the project's `bin/`:
/// an empty cache folder, and a `cargo install` that fails at once (no network).
fn update_offline(dir: &Path, cache: &Path, args: &[&str]) -> common::Run {
    let mut all = vec!["update"];
    all.extend(args);
    common::run_env(
        dir,
        &all,
        &[
            ("OPERATOR_RS_CACHE", cache.to_str().unwrap()),
            ("CARGO", "/bin/false"),
        ],
    )
}

/// `make operator-rs` after the user upgraded the tool: `bin/operator-rs-0.1.0` is a link to
/// the operator-rs on PATH, this one.
fn link_this_binary_into_bin(dir: &Path) -> PathBuf {
    let version = operator_rs::project::Project::load(dir)
        .unwrap()
        .cli_version;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join(format!("operator-rs-{version}"));
    // This operator-rs, saying it is the project's version as every build before 0.2.0 said
    // 0.1.0 (the case): the version alone cannot tell it from the one that made the
    // project, only its scaffold can.
    std::fs::write(
        &link,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'operator-rs {version}'; exit 0; fi\nexec '{}' \"$@\"\n",
            this_binary().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&link, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    link
}

/// The headline of issue 31: a project made by dea212f, whose `bin/operator-rs-0.1.0` is this
/// operator-rs (as `make operator-rs` links it after the user upgraded). `update` must refuse
/// (this binary does not make the project's scaffold), name what to do, and write nothing;
/// with `--from-binary <dea212f>` it merges, and `tests/e2e.rs`, which the user never touched,
/// becomes the new scaffold's exactly (no conflict).
#[test]
fn update_refuses_the_new_binary_as_the_ancestor_and_merges_with_the_proven_one() {
    if common::runs_elsewhere("update") {
        return;
    }
    let Some(old) = old_binary("dea212f") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let lines = scenario(true);
    let dir = committed(&old, &tmp.path().join("user"), &lines);
    let link = link_this_binary_into_bin(&dir);
    let cache = tmp.path().join("cache");
    let before = work_tree(&dir);

    let r = update_offline(&dir, &cache, &[]);
    assert_ne!(
        r.code, 0,
        "update merged against the new binary:\n{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(&format!(
            "bin/{}",
            link.file_name().unwrap().to_string_lossy()
        )) && r.stderr.contains("differ"),
        "the refusal names the candidate and what differed:\n{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("--from-binary") && r.stderr.contains("cargo install"),
        "the refusal says how to get the right binary:\n{}",
        r.stderr
    );
    assert!(r.stderr.contains("Nothing was written"), "{}", r.stderr);
    assert_eq!(work_tree(&dir), before, "a refused update wrote something");
    assert!(!dir.join(".git/operator-rs-update").exists());

    // This binary given by hand is refused the same way.
    let r = update_offline(
        &dir,
        &cache,
        &["--from-binary", this_binary().to_str().unwrap()],
    );
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains(&format!("it is operator-rs {}", env!("CARGO_PKG_VERSION"))),
        "{}",
        r.stderr
    );
    assert_eq!(work_tree(&dir), before);

    // The operator-rs that made it: proven, merged.
    let r = update_offline(
        &dir,
        &cache,
        &["--from-binary", old.to_str().unwrap(), "--no-check"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("proven"), "{}", r.stderr);
    let commands = recorded_commands(&dir);
    let command_refs: Vec<&str> = commands.iter().map(String::as_str).collect();
    let fresh = scaffold(&this_binary(), &tmp.path().join("fresh"), &command_refs);
    assert_eq!(
        std::fs::read_to_string(dir.join("tests/e2e.rs")).unwrap(),
        std::fs::read_to_string(fresh.join("tests/e2e.rs")).unwrap(),
        "tests/e2e.rs, never changed by the user, is the new scaffold's"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("PROJECT")).unwrap(),
        std::fs::read_to_string(fresh.join("PROJECT")).unwrap(),
        "PROJECT records this scaffold, as a fresh project does"
    );
    // Now on this scaffold: the next update is a no-op.
    commit_all(&dir, "operator-rs update");
    let r = update_offline(&dir, &cache, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("already up to date"), "{}", r.stderr);
}

/// A project made by this operator-rs: `update` exits 0 with "already up to date", without
/// looking for any other binary (none is installed, and `cargo install` fails).
#[test]
fn a_project_of_this_scaffold_is_already_up_to_date_without_another_binary() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = committed(&this_binary(), tmp.path(), &scenario(true));
    let before = work_tree(&dir);
    let r = update_offline(&dir, &tmp.path().join("cache"), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("already up to date"), "{}", r.stderr);
    assert!(!r.stderr.contains("Building"), "{}", r.stderr);
    assert_eq!(work_tree(&dir), before);
}

/// PROJECT records another scaffold than this binary's: `bin/operator-rs-<v>` being this binary
/// (its fingerprint is not the recorded one) and a `--from-binary` of this binary are refused,
/// and so is a candidate whose replay does not hash to the recorded digest.
#[test]
fn candidates_of_another_scaffold_or_digest_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = committed(&this_binary(), &tmp.path().join("a"), &scenario(false));
    rewrite_record(&dir, other_scaffold);
    link_this_binary_into_bin(&dir);
    let cache = tmp.path().join("cache");
    let before = work_tree(&dir);
    for args in [
        vec![],
        vec!["--from-binary", this_binary().to_str().unwrap()],
    ] {
        let r = update_offline(&dir, &cache, &args);
        assert_ne!(r.code, 0, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("this operator-rs's") && r.stderr.contains(OTHER_FINGERPRINT),
            "{args:?}: the refusal says the candidate is the new operator-rs:\n{}",
            r.stderr
        );
        assert_eq!(work_tree(&dir), before, "{args:?}");
    }

    // This scaffold's fingerprint, a digest that no replay makes: not up to date, and this
    // binary is not proven by it.
    let dir = committed(&this_binary(), &tmp.path().join("b"), &scenario(false));
    rewrite_record(&dir, |t| {
        let line = t
            .lines()
            .find(|l| l.trim_start().starts_with("digest: "))
            .unwrap();
        t.replacen(line, &format!("  digest: {OTHER_FINGERPRINT}"), 1)
    });
    link_this_binary_into_bin(&dir);
    let before = work_tree(&dir);
    let r = update_offline(&dir, &cache, &[]);
    assert_ne!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("hashes to"), "{}", r.stderr);
    assert_eq!(work_tree(&dir), before);
}

/// A scaffolding command on a project of another scaffold is refused (run `update` first), as is
/// one on a project made before the record whose vendored runtime is not this binary's; one whose
/// runtime is this binary's is allowed.
#[test]
fn scaffolding_commands_refuse_a_project_on_another_scaffold() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = committed(&this_binary(), tmp.path(), &scenario(false)[..2]);
    let create = [
        "create",
        "api",
        "--group",
        "web",
        "--version",
        "v1",
        "--kind",
        "Site",
    ];
    let namespaced = ["edit", "--namespaced"];
    rewrite_record(&dir, other_scaffold);
    let before = work_tree(&dir);
    for args in [&create[..], &namespaced[..]] {
        let r = common::run(&dir, args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains(OTHER_FINGERPRINT)
                && r.stderr.contains("run `operator-rs update` first"),
            "{args:?}: {}",
            r.stderr
        );
        assert!(r.stderr.contains(&args.join(" ")), "{}", r.stderr);
        assert_eq!(work_tree(&dir), before, "{args:?}");
    }

    // No record (a project made before it): the vendored runtime decides.
    edit(&dir, "PROJECT", |t| {
        let at = t.find("scaffold:\n").unwrap();
        let end = at + t[at..].find("commands:").unwrap();
        format!("{}{}", &t[..at], &t[end..])
    });
    let runtime_file = dir.join("vendor/operator-rs-runtime/src/lib.rs");
    let runtime = std::fs::read_to_string(&runtime_file).unwrap();
    std::fs::write(&runtime_file, format!("{runtime}// another version's\n")).unwrap();
    let before = work_tree(&dir);
    let r = common::run(&dir, &create);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("vendored runtime") && r.stderr.contains("operator-rs update"),
        "{}",
        r.stderr
    );
    assert_eq!(work_tree(&dir), before);
    std::fs::write(&runtime_file, runtime).unwrap();
    let r = common::run(&dir, &create);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let project = std::fs::read_to_string(dir.join("PROJECT")).unwrap();
    assert!(
        project.contains("scaffold:\n  fingerprint: sha256:"),
        "the command records the scaffold:\n{project}"
    );
}

/// `update` refuses a detached HEAD and a merge or cherry-pick in progress, saying what to do.
#[test]
fn update_refuses_a_detached_head_and_an_operation_in_progress() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = committed(&this_binary(), tmp.path(), &scenario(false)[..2]);
    // Not on this scaffold, so that update has something to do.
    rewrite_record(&dir, other_scaffold);
    let cache = tmp.path().join("cache");

    git(&dir, &["checkout", "-q", "--detach"]);
    let before = work_tree(&dir);
    let r = update_offline(&dir, &cache, &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("detached HEAD") && r.stderr.contains("git switch"),
        "{}",
        r.stderr
    );
    assert_eq!(work_tree(&dir), before);
    git(&dir, &["checkout", "-q", "main"]);

    // A merge stopped on a conflict, then resolved in the working tree (nothing uncommitted
    // would show... but MERGE_HEAD is there).
    git(&dir, &["checkout", "-q", "-b", "other"]);
    edit(&dir, "README.md", |t| format!("{t}\nother\n"));
    commit_all(&dir, "other");
    git(&dir, &["checkout", "-q", "main"]);
    edit(&dir, "README.md", |t| format!("{t}\nmain\n"));
    commit_all(&dir, "main");
    let merge = Command::new("git")
        .args(["merge", "-q", "other"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(!merge.status.success(), "the merge stops on its conflict");
    let r = update_offline(&dir, &cache, &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("a merge is in progress") && r.stderr.contains("git merge --abort"),
        "{}",
        r.stderr
    );
    git(&dir, &["merge", "--abort"]);

    let pick = Command::new("git")
        .args(["cherry-pick", "other"])
        .current_dir(&dir)
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap();
    assert!(
        !pick.status.success(),
        "the cherry-pick stops on its conflict"
    );
    let r = update_offline(&dir, &cache, &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("a cherry-pick is in progress"),
        "{}",
        r.stderr
    );
}

/// `update` works in the repository's git directory, never in the temp directory: killed
/// (SIGKILL) in the middle of its replays it leaves nothing there, and the next run removes what
/// the killed one left in `.git/operator-rs-update` and ends with nothing left.
#[test]
fn update_leaves_nothing_in_the_temp_directory_even_when_killed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = committed(&this_binary(), &tmp.path().join("user"), &scenario(true));
    // A project made before the record: update proves this binary by its runtime and replays.
    edit(&dir, "PROJECT", |t| {
        let at = t.find("scaffold:\n").unwrap();
        let end = at + t[at..].find("commands:").unwrap();
        format!("{}{}", &t[..at], &t[end..])
    });
    commit_all(&dir, "a PROJECT without the record");
    let temp = tmp.path().join("temp");
    std::fs::create_dir_all(&temp).unwrap();
    let update = || {
        let mut cmd = Command::new(this_binary());
        common::as_user(&mut cmd);
        cmd.args(["update", "--no-check", "--from-binary"])
            .arg(this_binary())
            .current_dir(&dir)
            .env("TMPDIR", &temp);
        cmd
    };
    let mut child = update()
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let scratch = dir.join(".git/operator-rs-update");
    let started = std::time::Instant::now();
    while !scratch.exists() && std::fs::read_dir(&temp).unwrap().next().is_none() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "update made no scratch folder"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();
    let left: Vec<_> = std::fs::read_dir(&temp).unwrap().collect();
    assert!(left.is_empty(), "left in the temp directory: {left:?}");
    // The replay the killed update had started ends on its own.
    std::thread::sleep(std::time::Duration::from_secs(2));

    let r: common::Run = update().output().unwrap().into();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!scratch.exists(), "update left {}", scratch.display());
    let left: Vec<_> = std::fs::read_dir(&temp).unwrap().collect();
    assert!(left.is_empty(), "left in the temp directory: {left:?}");
    // It recorded the scaffold: the next update is a no-op.
    commit_all(&dir, "update");
    let r = update_offline(&dir, &tmp.path().join("cache"), &[]);
    assert!(r.stderr.contains("already up to date"), "{}", r.stderr);
}

/// A `core.autocrlf=true` checkout of a project made by dea212f, with the user's edits: the
/// merge works on what git holds (`\n`), so it merges as on any checkout (no whole-file
/// conflicts), and the files it writes keep the working tree's `\r\n`.
#[test]
fn a_crlf_checkout_merges_as_git_holds_it() {
    if common::runs_elsewhere("update") {
        return;
    }
    let Some(old) = old_binary("dea212f") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let made = committed(&old, &tmp.path().join("made"), &scenario(true));
    user_edits(&old, &made);
    commit_all(&made, "user edits");
    let dir = tmp.path().join("crlf").join(NAME);
    let out = Command::new("git")
        .args(["-c", "core.autocrlf=true", "clone", "-q"])
        .arg(&made)
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    git(&dir, &["config", "core.autocrlf", "true"]);
    let makefile = std::fs::read(dir.join("Makefile")).unwrap();
    assert!(makefile.windows(2).any(|w| w == b"\r\n"), "a CRLF checkout");

    let r = common::run(
        &dir,
        &[
            "update",
            "--no-check",
            "--from-binary",
            old.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("merge Makefile"), "{}", r.stderr);
    let makefile = std::fs::read_to_string(dir.join("Makefile")).unwrap();
    assert!(!makefile.contains("<<<<<<<"), "{makefile}");
    assert!(makefile.contains("\r\n") && !makefile.replace("\r\n", "").contains('\n'));
    assert!(makefile.contains("bench:"), "the user's target stays");
}

/// A command the old operator-rs does not know (here `create api --from-crd`, run on a dea212f
/// project as a newer tool allowed before records): replayed with this operator-rs in both
/// trees, said so, and the update goes on.
#[test]
fn a_command_the_ancestor_lacks_is_replayed_with_this_binary() {
    if common::runs_elsewhere("update") {
        return;
    }
    let Some(old) = old_binary("dea212f") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = scaffold(&old, &tmp.path().join("user"), &scenario(false)[..2]);
    let crds = dir.join("config/external");
    std::fs::create_dir_all(&crds).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/external_crds/cert-manager.io_certificates.yaml"),
        crds.join("certificates.yaml"),
    )
    .unwrap();
    // The newer tool, before scaffolds were recorded and checked.
    let r = common::run_env(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "cert-manager.io",
            "--version",
            "v1",
            "--kind",
            "Certificate",
            "--from-crd",
            "config/external/certificates.yaml",
        ],
        &[("OPERATOR_RS_REPLAY", "1")],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    git(&dir, &["init", "-q", "-b", "main"]);
    commit_all(&dir, "scaffold");
    let r = common::run(
        &dir,
        &[
            "update",
            "--no-check",
            "--from-binary",
            old.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("--from-crd config/external/certificates.yaml` is a command")
            && r.stderr.contains("replayed with this operator-rs"),
        "{}",
        r.stderr
    );
}

/// A dependency the user added where the new scaffold removed lines (dea212f's e2e dev-dependencies
/// and its profile packages): git's line merge conflicts, and taking either side breaks the build.
/// Merged by its structure instead: the user's dependency stays, what the scaffold removed and the
/// user never touched goes, and no conflict is left.
#[test]
fn cargo_toml_is_merged_by_its_structure() {
    if common::runs_elsewhere("update") {
        return;
    }
    let Some(old) = old_binary("dea212f") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = committed(&old, &tmp.path().join("user"), &scenario(false));
    edit(&dir, "Cargo.toml", |t| {
        replace_once(
            t,
            "serde-saphyr = \"2.1\"\n\n",
            "serde-saphyr = \"2.1\"\nhttp = \"1\"\n\n",
        )
    });
    commit_all(&dir, "the user's dependency");
    let r = common::run(
        &dir,
        &[
            "update",
            "--no-check",
            "--from-binary",
            old.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(!text.contains("<<<<<<<"), "{text}");
    let merged: toml::Table = text.parse().unwrap();
    let dev = merged["dev-dependencies"].as_table().unwrap();
    assert_eq!(
        dev["http"].as_str(),
        Some("1"),
        "the user's dependency stays:\n{text}"
    );
    assert!(
        !dev.contains_key("libc"),
        "the scaffold removed it:\n{text}"
    );
    let profiles = merged["profile"].as_table().unwrap();
    assert!(
        !profiles.contains_key("dev"),
        "the scaffold removed it:\n{text}"
    );
    assert!(
        text.contains("\nkube = { version = \"5.0.0\", "),
        "each dependency on one line:\n{text}"
    );
    assert!(
        merged["dependencies"].get("kube").is_some(),
        "the scaffold's dependencies stay:\n{text}"
    );
}
