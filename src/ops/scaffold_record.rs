//! PROJECT's record of the scaffold a project is on (`scaffold:`): the replay of a project's
//! recorded commands with an operator-rs binary into a scratch folder under pinned conditions
//! (the project's folder name, license year and install source), the digest of the pristine tree
//! a replay makes, the record every scaffolding command writes ([`stamp`]), and the refusal of a
//! scaffolding command on a project recorded on another scaffold ([`refuse_other_scaffold`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::project::history;
use crate::project::{self, Project, ScaffoldRecord};
use crate::release;
use crate::scaffold::context::{LICENSE_YEAR_ENV, license_year};
use crate::vendor;

/// Set in the environment of every replayed command: a replay records no scaffold (it is what a
/// record is computed from) and refuses nothing for its scaffold.
pub const REPLAY_ENV: &str = "OPERATOR_RS_REPLAY";

/// Set while `import` lays a project out by running the commands that make it in this process:
/// they record no scaffold (one [`stamp`] at the end records it, replaying them all).
static REPLAYING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether this process is a replay of a project's commands.
pub fn in_replay() -> bool {
    REPLAYING.load(std::sync::atomic::Ordering::SeqCst) || std::env::var_os(REPLAY_ENV).is_some()
}

/// Runs `f` as a replay (see [`REPLAYING`]).
pub fn replaying<T>(f: impl FnOnce() -> T) -> T {
    use std::sync::atomic::Ordering;
    let was = REPLAYING.swap(true, Ordering::SeqCst);
    let result = f();
    REPLAYING.store(was, Ordering::SeqCst);
    result
}

/// Every file of a tree, path (relative, `/`-separated) and bytes, in a stable order.
pub type Files = BTreeMap<PathBuf, Vec<u8>>;

/// What a replay made.
#[derive(Debug)]
pub struct Replayed {
    /// Every file of the replayed project but its lock.
    pub files: Files,
    /// The recorded commands the replaying binary refused as unknown syntax (clap's usage error),
    /// replayed with the fallback binary instead.
    pub fell_back: Vec<String>,
}

/// Why a replay did not make the tree.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A command of the replay failed.
    #[error("replaying `operator-rs {line}` with {binary} failed:\n{stderr}")]
    Failed {
        /// The command, as PROJECT records it.
        line: String,
        /// The operator-rs that ran it.
        binary: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// The replay made no PROJECT file (the binary named is not an operator-rs).
    #[error(
        "replaying the project's commands with {0} made no PROJECT file: it is not an operator-rs that scaffolds"
    )]
    NoProject(String),
    /// Reading or writing the replay's files failed.
    #[error(transparent)]
    Io(#[from] anyhow::Error),
}

/// The conditions every replay of a project pins: what varies between machines or days.
#[derive(Debug, Clone)]
pub struct Conditions {
    /// The license year of the headers.
    pub year: i64,
    /// A `CARGO_HOME` in which the replaying binary finds itself installed from the project's
    /// recorded source (see [`cargo_home_for`]).
    pub cargo_home: PathBuf,
}

impl Conditions {
    /// The conditions of `project`'s replays, with a `CARGO_HOME` made under `scratch`.
    pub fn of(root: &Path, project: &Project, scratch: &Path) -> Result<Conditions> {
        Ok(Conditions {
            year: recorded_year(root, project),
            cargo_home: cargo_home_for(scratch, &project.cli_version, &project.cli_source)?,
        })
    }
}

/// The license year of `project`: its record's, else (`init`, or a project made before the
/// record) this year, or the README's `Copyright <year>`.
pub fn recorded_year(root: &Path, project: &Project) -> i64 {
    if let Some(year) = project.scaffold.as_ref().and_then(|s| s.license_year) {
        return year;
    }
    // `init` itself: the headers it writes now.
    if project.commands.len() <= 1 {
        return license_year();
    }
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap_or_default();
    readme
        .lines()
        .find_map(|l| l.strip_prefix("Copyright "))
        .and_then(|rest| rest.get(..4))
        .and_then(|y| y.parse().ok())
        .unwrap_or_else(license_year)
}

/// Run `commands` with `binary` in a new folder `base/<projectName>` (names derived from the
/// folder match the project's), and read back every file it wrote. A command's input file inside
/// the project (`create api --from-crd config/external/x.yaml`) is copied from the project at
/// `root` first. A command `binary` refuses as unknown syntax (a newer scaffold's command) is run
/// with `fallback` instead, when there is one.
pub fn replay(
    binary: &Path,
    fallback: Option<&Path>,
    root: &Path,
    base: &Path,
    project: &Project,
    commands: &[Vec<String>],
    conditions: &Conditions,
) -> Result<Replayed, ReplayError> {
    let dir = base.join(&project.project_name);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut fell_back = Vec::new();
    for words in commands {
        copy_inputs(root, &dir, words)?;
        let line = history::lines(std::slice::from_ref(words)).join("");
        let out = run(binary, &dir, words, conditions)?;
        if out.status.success() {
            continue;
        }
        let stderr = String::from_utf8_lossy(&out.stderr).trim_end().to_string();
        match fallback {
            Some(fallback) if is_usage_error(&stderr) && fallback != binary => {
                let again = run(fallback, &dir, words, conditions)?;
                if !again.status.success() {
                    return Err(ReplayError::Failed {
                        line,
                        binary: fallback.display().to_string(),
                        stderr: String::from_utf8_lossy(&again.stderr)
                            .trim_end()
                            .to_string(),
                    });
                }
                fell_back.push(line);
            }
            _ => {
                return Err(ReplayError::Failed {
                    line,
                    binary: binary.display().to_string(),
                    stderr,
                });
            }
        }
    }
    // A binary that says it is operator-rs but scaffolds nothing (another tool, a stub).
    if !dir.join(project::FILE).is_file() {
        return Err(ReplayError::NoProject(binary.display().to_string()));
    }
    let mut files = Files::new();
    read_tree(&dir, Path::new(""), &mut files)?;
    files.remove(Path::new(".operator-rs.lock"));
    Ok(Replayed { files, fell_back })
}

/// A clap usage error (an unknown subcommand or flag): what any operator-rs prints for a command
/// line it does not know, i.e. a command of a newer scaffold.
fn is_usage_error(stderr: &str) -> bool {
    stderr.starts_with("error: ")
        && stderr.contains("\nUsage: ")
        && stderr.contains("For more information, try '--help'.")
}

fn run(
    binary: &Path,
    dir: &Path,
    words: &[String],
    conditions: &Conditions,
) -> Result<std::process::Output> {
    let mut cmd = Command::new(binary);
    // Nothing of this process's own settings (a fault to inject, an install source) reaches the
    // replay: only the pinned conditions.
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("OPERATOR_RS_") {
            cmd.env_remove(key);
        }
    }
    cmd.arg("-C")
        .arg(dir)
        .args(words)
        .env(REPLAY_ENV, "1")
        .env(LICENSE_YEAR_ENV, conditions.year.to_string())
        .env("CARGO_HOME", &conditions.cargo_home)
        .output()
        .with_context(|| format!("running {}", binary.display()))
}

/// Copy the CRD files a `create api --from-crd <relative path>` reads from the project into the
/// replay's folder.
fn copy_inputs(root: &Path, dir: &Path, words: &[String]) -> Result<()> {
    let inputs = (words.windows(2))
        .filter(|w| w[0] == "--from-crd")
        .map(|w| Path::new(&w[1]))
        .filter(|p| p.is_relative());
    for input in inputs {
        let (from, to) = (root.join(input), dir.join(input));
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::copy(&from, &to).with_context(|| {
            format!(
                "copying {} (the CRD file `operator-rs {}` reads) for the replay",
                from.display(),
                history::lines(&[words.to_vec()]).join("")
            )
        })?;
    }
    Ok(())
}

/// Every file under `root.join(rel)`, keyed by its path relative to `root`.
pub fn read_tree(root: &Path, rel: &Path, out: &mut Files) -> Result<()> {
    let dir = root.join(rel);
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let path = rel.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            read_tree(root, &path, out)?;
        } else {
            let bytes = std::fs::read(root.join(&path))
                .with_context(|| format!("reading {}", root.join(&path).display()))?;
            out.insert(path, bytes);
        }
    }
    Ok(())
}

/// `sha256:<hex>` of a tree: each file's path, its length and its bytes, in path order.
pub fn digest(files: &Files) -> String {
    let mut context = ring::digest::Context::new(&ring::digest::SHA256);
    for (path, bytes) in files {
        context.update(path.to_string_lossy().as_bytes());
        context.update(&[0]);
        context.update(&(bytes.len() as u64).to_le_bytes());
        context.update(bytes);
    }
    let hex: String = (context.finish().as_ref().iter())
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// The files of a tree under the vendored runtime's folder.
pub fn runtime_of(files: &Files) -> Files {
    (files.iter())
        .filter(|(p, _)| p.starts_with(vendor::DIR))
        .map(|(p, b)| (p.clone(), b.clone()))
        .collect()
}

/// The project's vendored runtime as it is on disk, its line endings as git stores them (`\n`;
/// a `core.autocrlf=true` checkout has `\r\n`): the runtime is text.
pub fn runtime_on_disk(root: &Path) -> Result<Files> {
    let mut files = Files::new();
    if root.join(vendor::DIR).is_dir() {
        read_tree(root, Path::new(vendor::DIR), &mut files)?;
    }
    for bytes in files.values_mut() {
        if bytes.windows(2).any(|w| w == b"\r\n") {
            let text = String::from_utf8_lossy(bytes).replace("\r\n", "\n");
            *bytes = text.into_bytes();
        }
    }
    Ok(files)
}

/// This binary's copy of the runtime, as `init` vendors it.
pub fn runtime_of_this_binary() -> Files {
    (vendor::files().into_iter())
        .map(|(path, text)| (path, text.as_bytes().to_vec()))
        .collect()
}

/// The first difference between two trees, worded for a refusal; `None` when they are equal.
pub fn first_difference(
    expected: &Files,
    got: &Files,
    expected_is: &str,
    got_is: &str,
) -> Option<String> {
    if expected == got {
        return None;
    }
    let only_expected = expected.keys().find(|p| !got.contains_key(*p));
    let only_got = got.keys().find(|p| !expected.contains_key(*p));
    let differs = (expected.iter()).find(|(p, b)| got.get(*p).is_some_and(|g| g != *b));
    let count = (expected.keys().chain(got.keys()))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|p| expected.get(*p) != got.get(*p))
        .count();
    let first = match (differs, only_expected, only_got) {
        (Some((p, _)), _, _) => format!("{} differs", p.display()),
        (_, Some(p), _) => format!("{} is in {expected_is} only", p.display()),
        (_, _, Some(p)) => format!("{} is in {got_is} only", p.display()),
        _ => "the trees differ".to_string(),
    };
    Some(format!(
        "{count} file{} differ{} between {expected_is} and {got_is}, e.g. {first}",
        if count == 1 { "" } else { "s" },
        if count == 1 { "s" } else { "" },
    ))
}

/// The digest of the pristine tree `project`'s commands make with `binary` under the project's
/// pinned conditions, replayed in full in a scratch folder under `scratch` (the tree is cached
/// by its digest, as every replay's).
pub fn digest_with(
    binary: &Path,
    root: &Path,
    project: &Project,
    scratch: &Path,
) -> Result<String> {
    digest_continuing(binary, root, project, None, scratch)
}

/// Record in `project` (about to be written by a scaffolding command at `root`) the scaffold its
/// files are on: this operator-rs's fingerprint, the license year, and the digest of the
/// pristine tree its recorded commands make with this binary. A replay records nothing. When the
/// digest cannot be made (a record that does not start at `init`, a replay that fails), the
/// record says so with an empty digest, and the command goes on.
pub fn stamp(root: &Path, project: &mut Project) {
    if in_replay() {
        project.scaffold = None;
        return;
    }
    let year = recorded_year(root, project);
    // PROJECT as it is on disk: the record before this command.
    let before = Project::load(root).ok();
    project.scaffold = Some(ScaffoldRecord {
        fingerprint: release::scaffold_fingerprint().to_string(),
        digest: String::new(),
        license_year: Some(year),
    });
    if !history::is_complete(project) {
        return;
    }
    let made = (|| -> Result<String> {
        let binary = std::env::current_exe().context("finding this operator-rs binary")?;
        let scratch = Scratch::new(root)?;
        digest_continuing(&binary, root, project, before.as_ref(), &scratch.dir)
    })();
    match made {
        Ok(digest) => {
            if let Some(record) = &mut project.scaffold {
                record.digest = digest;
            }
        }
        Err(e) => crate::errln!(
            "warning: PROJECT records no digest of the scaffold (the replay of its commands failed: {}); `operator-rs update` will prove its ancestor by the vendored runtime only",
            crate::output::error_text(&e)
        ),
    }
}

/// [`stamp`] for a project whose recorded commands this process has just run in `root`, all of
/// them, from an empty folder and as a replay ([`replaying`]: `import` lays a project out so):
/// the tree they made is the one [`replay`] makes of them, so the digest is taken from it
/// instead of from running them again. Where this process runs them otherwise than a replay
/// does (a license year other than the recorded one, an injected fault: a replay pins or drops
/// both), it replays them as [`stamp`] does.
pub fn stamp_made(root: &Path, project: &mut Project) {
    let year = recorded_year(root, project);
    let as_a_replay = year == license_year() && std::env::var_os("OPERATOR_RS_FAULT").is_none();
    if in_replay() || !as_a_replay || !history::is_complete(project) {
        return stamp(root, project);
    }
    let made = (|| -> Result<String> {
        let mut files = Files::new();
        read_tree(root, Path::new(""), &mut files)?;
        files.remove(Path::new(".operator-rs.lock"));
        let digest = digest(&files);
        pristine::put(&digest, &files);
        Ok(digest)
    })();
    match made {
        Ok(digest) => {
            project.scaffold = Some(ScaffoldRecord {
                fingerprint: release::scaffold_fingerprint().to_string(),
                digest,
                license_year: Some(year),
            })
        }
        Err(_) => stamp(root, project),
    }
}

/// Where operator-rs keeps what it builds or computes once (old binaries `update` builds, the
/// pristine trees of [`stamp`]): `$OPERATOR_RS_CACHE`, else the user's cache folder.
pub fn cache_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("OPERATOR_RS_CACHE") {
        return Ok(PathBuf::from(dir));
    }
    let base = match std::env::var_os("XDG_CACHE_HOME") {
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("HOME") {
            Some(h) => Path::new(&h).join(".cache"),
            None => bail!("no cache folder: set OPERATOR_RS_CACHE or HOME, or pass --from-binary"),
        },
    };
    Ok(base.join("operator-rs"))
}

/// The pristine trees of earlier records, by digest: a scaffolding command that appends one
/// command to a project whose record is this scaffold's replays only that command, onto the tree
/// the record's digest names (checked against it), instead of every command again. Entries are
/// written whole (a folder renamed into place), the oldest dropped past [`PRISTINE_KEPT`]; any
/// problem with the cache means a full replay, never a wrong digest.
mod pristine {
    use super::*;

    /// How many trees the cache keeps.
    pub const PRISTINE_KEPT: usize = 64;

    fn dir() -> Result<PathBuf> {
        Ok(cache_dir()?.join("pristine"))
    }

    /// The tree of `digest`, if the cache has it whole.
    pub fn get(digest: &str) -> Option<Files> {
        let hex = digest.strip_prefix("sha256:")?;
        let entry = dir().ok()?.join(hex);
        let mut files = Files::new();
        read_tree(&entry, Path::new(""), &mut files).ok()?;
        (super::digest(&files) == digest).then_some(files)
    }

    /// Keep `files` (whose digest is `digest`); best effort.
    pub fn put(digest: &str, files: &Files) {
        let _ = (|| -> Result<()> {
            let hex = digest.strip_prefix("sha256:").context("no sha256 digest")?;
            let base = dir()?;
            let entry = base.join(hex);
            if entry.is_dir() {
                return Ok(());
            }
            std::fs::create_dir_all(&base)?;
            let staging = tempfile::Builder::new()
                .prefix(".staging-")
                .tempdir_in(&base)?;
            write_tree(staging.path(), files)?;
            // Another process may have put it first: then theirs stays.
            let _ = std::fs::rename(staging.keep(), &entry);
            prune(&base);
            Ok(())
        })();
    }

    fn prune(base: &Path) {
        let Ok(entries) = std::fs::read_dir(base) else {
            return;
        };
        let mut kept: Vec<(std::time::SystemTime, PathBuf)> = entries
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        if kept.len() <= PRISTINE_KEPT {
            return;
        }
        kept.sort();
        for (_, path) in &kept[..kept.len() - PRISTINE_KEPT] {
            let _ = std::fs::remove_dir_all(path);
        }
    }

    /// Write `files` under `dir`.
    pub fn write_tree(dir: &Path, files: &Files) -> Result<()> {
        for (path, bytes) in files {
            let to = dir.join(path);
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&to, bytes).with_context(|| format!("writing {}", to.display()))?;
        }
        Ok(())
    }
}

/// The digest of the pristine tree of `project`'s commands, as [`digest_with`] makes it, but
/// from the cached tree of `before` (the record of the project as it was, one command fewer)
/// when the cache has it: then only the new command is replayed. Every made tree is cached.
fn digest_continuing(
    binary: &Path,
    root: &Path,
    project: &Project,
    before: Option<&Project>,
    scratch: &Path,
) -> Result<String> {
    let commands = history::replay(project, &history::InitExtras::default());
    let cached = before.and_then(|before| {
        let record = before.scaffold.as_ref()?;
        let earlier = history::replay(before, &history::InitExtras::default());
        let appended = record.fingerprint == release::scaffold_fingerprint()
            && !record.digest.is_empty()
            && earlier.len() + 1 == commands.len()
            && commands.starts_with(&earlier)
            && before.project_name == project.project_name;
        if appended {
            pristine::get(&record.digest)
        } else {
            None
        }
    });
    let conditions = Conditions::of(root, project, scratch)?;
    let tree = scratch.join("tree");
    let replayed = match cached {
        Some(files) => {
            let dir = tree.join(&project.project_name);
            pristine::write_tree(&dir, &files)?;
            replay(
                binary,
                None,
                root,
                &tree,
                project,
                &commands[commands.len() - 1..],
                &conditions,
            )?
        }
        None => replay(binary, None, root, &tree, project, &commands, &conditions)?,
    };
    let digest = digest(&replayed.files);
    pristine::put(&digest, &replayed.files);
    Ok(digest)
}

/// The folder a scaffolding command replays the project's commands in: `target/` of the project
/// (which its `.gitignore` leaves out), not the temporary folder, so that a command killed
/// part-way (SIGKILL included) leaves nothing there; the next command clears it first. Removed
/// on drop, with `target/` when the scratch made it.
struct Scratch {
    dir: PathBuf,
    made_target: Option<PathBuf>,
}

impl Scratch {
    fn new(root: &Path) -> Result<Self> {
        let target = root.join("target");
        let made_target = (!target.exists()).then(|| target.clone());
        let dir = target.join(".operator-rs-scaffold");
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| {
                format!("removing {}, left by an earlier command", dir.display())
            })?;
        }
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Scratch { dir, made_target })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        if let Some(target) = &self.made_target {
            // Only when empty: a build may have started in it meanwhile.
            let _ = std::fs::remove_dir(target);
        }
    }
}

/// Refuse a scaffolding command (`what`, its command line) on a project whose files are on
/// another operator-rs's scaffold: it would mix two scaffolds in one project. A project with no
/// record (made before records) is on this scaffold when its vendored runtime is this binary's
/// byte for byte. A folder that is no readable project is left to the command to refuse.
pub fn refuse_other_scaffold(root: &Path, what: &str) -> Result<()> {
    if in_replay() {
        return Ok(());
    }
    let Ok(project) = Project::load(root) else {
        return Ok(());
    };
    let ours = release::scaffold_fingerprint();
    let then = format!(
        "run `operator-rs update` first (it moves the project to this scaffold, keeping your changes; commit them before), then `operator-rs {what}`. Nothing was written.\n  \
         Or run the operator-rs that made the project (`make operator-rs` installs it as bin/operator-rs-{}).",
        project.cli_version
    );
    match &project.scaffold {
        Some(record) if record.fingerprint == ours => Ok(()),
        Some(record) => bail!(
            "this project is on the scaffold of operator-rs {} (fingerprint {}); this is operator-rs {} (fingerprint {ours}): {then}",
            project.cli_version,
            record.fingerprint,
            release::VERSION,
        ),
        None => {
            let disk = runtime_on_disk(root)?;
            match first_difference(
                &runtime_of_this_binary(),
                &disk,
                "this operator-rs's runtime",
                &format!("the project's {}", vendor::DIR),
            ) {
                None => Ok(()),
                Some(difference) => bail!(
                    "this project was made by operator-rs {} before PROJECT recorded its scaffold (no `scaffold:`), and its vendored runtime is not this operator-rs {}'s ({difference}): it is on another scaffold: {then}",
                    project.cli_version,
                    release::VERSION,
                ),
            }
        }
    }
}

/// A `CARGO_HOME` for a replay in which the replaying binary finds itself installed from
/// `source` (an empty one: the crates.io form), as it was when it made the project: the Makefile
/// it writes then names the same source as the user's.
pub fn cargo_home_for(tmp: &Path, version: &str, source: &str) -> Result<PathBuf> {
    let home = tmp.join("cargo-home");
    std::fs::create_dir_all(&home).with_context(|| format!("creating {}", home.display()))?;
    let words = shlex::split(source).unwrap_or_default();
    let value = |flag: &str| {
        let at = words.iter().position(|w| w == flag)?;
        words.get(at + 1)
    };
    if let (Some(url), Some(rev)) = (value("--git"), value("--rev")) {
        let key = format!("operator-rs {version} (git+{url}#{rev})");
        let json = serde_json::json!({ "installs": { key: {} } });
        std::fs::write(home.join(".crates2.json"), json.to_string())
            .with_context(|| format!("writing {}", home.display()))?;
    }
    Ok(home)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_covers_paths_and_bytes_in_order() {
        let tree = |entries: &[(&str, &str)]| -> Files {
            (entries.iter())
                .map(|(p, b)| (PathBuf::from(p), b.as_bytes().to_vec()))
                .collect()
        };
        let a = tree(&[("a", "1"), ("b", "2")]);
        assert_eq!(digest(&a), digest(&tree(&[("b", "2"), ("a", "1")])));
        assert_ne!(digest(&a), digest(&tree(&[("a", "1"), ("c", "2")])));
        assert_ne!(digest(&a), digest(&tree(&[("a", "12"), ("b", "")])));
        assert!(digest(&a).starts_with("sha256:") && digest(&a).len() == 71);
        assert_eq!(first_difference(&a, &a, "x", "y"), None);
        let d = first_difference(&a, &tree(&[("a", "1"), ("b", "3")]), "x", "y").unwrap();
        assert!(
            d.contains("1 file differs") && d.contains("b differs"),
            "{d}"
        );
    }

    #[test]
    fn the_replay_home_names_the_recorded_git_source() {
        let tmp = tempfile::tempdir().unwrap();
        let home = cargo_home_for(
            tmp.path(),
            "0.1.0",
            "--git https://example.com/op --rev abc123 operator-rs",
        )
        .unwrap();
        let text = std::fs::read_to_string(home.join(".crates2.json")).unwrap();
        // The replaying binary reads it as install_source does.
        assert_eq!(
            crate::install_source::from_crates2(&text, "0.1.0").as_deref(),
            Some("--git https://example.com/op --rev abc123 operator-rs")
        );
        let other = tempfile::tempdir().unwrap();
        let home = cargo_home_for(other.path(), "0.1.0", "").unwrap();
        assert!(!home.join(".crates2.json").exists());
    }

    #[test]
    fn a_usage_error_is_told_from_a_refusal() {
        let clap = "error: unrecognized subcommand 'frobnicate'\n\nUsage: operator-rs [OPTIONS] <COMMAND>\n\nFor more information, try '--help'.";
        assert!(is_usage_error(clap));
        assert!(!is_usage_error(
            "error: kind Foo already exists\n  e.g. operator-rs create api --kind Bar"
        ));
    }
}
