//! The user's path through a README: its ```sh blocks by section, and a shell that runs their
//! lines as written (`bash -c`) with the operator-rs under test on PATH. The list of which test
//! runs each block (`tests/readme_blocks.rs` holds every block to it) is [`BLOCKS`].

use std::path::{Path, PathBuf};

use super::{shared_build_dir, timed};

/// Every section of our README and of a generated project's README with ```sh blocks: the test
/// that runs them as written (its source names the section's heading), or why none can here.
pub const BLOCKS: &[(Readme, &str, Runs)] = &[
    (
        Readme::Ours,
        "## Quickstart: from an empty folder to a running operator",
        Runs::In("tests/generated_project.rs"),
    ),
    (
        Readme::Ours,
        "### Kinds this project does not own",
        Runs::In("tests/cli_external.rs"),
    ),
    (
        Readme::Ours,
        "### Moving the storage version, then removing the old version",
        Runs::In("tests/cli_migrate_storage.rs"),
    ),
    (
        Readme::Ours,
        "### Kinds from another project's CRD",
        Runs::In("tests/cli_from_crd.rs"),
    ),
    (
        Readme::Ours,
        "### Coming from kubebuilder: `operator-rs import`",
        Runs::In("tests/import_build.rs"),
    ),
    (
        Readme::Ours,
        "### Updating a project",
        Runs::In("tests/update.rs"),
    ),
    (
        Readme::Generated,
        "### Run it on your machine",
        Runs::In("tests/generated_project.rs"),
    ),
    (
        Readme::Generated,
        "### Scale lab",
        Runs::In("tests/generated_project.rs"),
    ),
    (
        Readme::Generated,
        "## Dashboards",
        Runs::In("tests/chart.rs"),
    ),
    (
        Readme::Generated,
        "### Deploy it to the cluster",
        // Its `make docker-build docker-push` line is skipped there, saying so: no container
        // runtime or registry here.
        Runs::In("tests/generated_project.rs"),
    ),
    (
        Readme::Generated,
        "### Metrics",
        // Its `port-forward` line is skipped there, saying so: it reaches a deployed manager's
        // Pod, and no node runs Pods here (`make run` serves the metrics itself).
        Runs::In("tests/generated_project.rs"),
    ),
    (
        Readme::Generated,
        "### Run the tests",
        Runs::In("tests/generated_project.rs"),
    ),
    (
        Readme::Generated,
        "### Uninstall",
        Runs::In("tests/generated_project.rs"),
    ),
    (
        Readme::Generated,
        "## Distribution",
        Runs::In("tests/generated_project.rs"),
    ),
    (
        Readme::Generated,
        "## Helm chart",
        // With helm as the Helm SDK's tests/chart/helm_cli.py (no helm binary here).
        Runs::In("tests/chart.rs"),
    ),
];

/// Which README a section is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readme {
    /// This repository's README.md.
    Ours,
    /// The README.md `operator-rs init` writes.
    Generated,
}

/// Who runs a section's blocks.
#[derive(Clone, Copy, Debug)]
pub enum Runs {
    /// The test file (relative to this repository) that runs them as written.
    In(&'static str),
    /// Nothing here can: the reason.
    Nowhere(&'static str),
}

/// A heading of a README (the line as written, `### Metrics`) and the ```sh blocks right under
/// it (before the next heading of any level), each as its command lines without comments.
pub struct Section {
    pub heading: String,
    pub level: usize,
    pub blocks: Vec<Vec<String>>,
}

/// The sections of `readme`, in order (text before the first heading is left out).
pub fn sections(readme: &str) -> Vec<Section> {
    let mut sections: Vec<Section> = Vec::new();
    // Inside a fence: `Some(block)` for a ```sh block, `None` for any other.
    let mut fence: Option<Option<Vec<String>>> = None;
    for line in readme.lines() {
        if line.trim_start().starts_with("```") {
            match fence.take() {
                Some(Some(done)) => {
                    if let Some(section) = sections.last_mut() {
                        section.blocks.push(done);
                    }
                }
                Some(None) => {}
                None => fence = Some((line.trim() == "```sh").then(Vec::new)),
            }
            continue;
        }
        match &mut fence {
            Some(Some(block)) => {
                let command = line.split(" #").next().unwrap_or("").trim();
                let continued = block.last().is_some_and(|l: &String| l.ends_with('\\'));
                if continued {
                    let last = block.last_mut().unwrap();
                    last.pop();
                    last.push_str(command);
                } else if !command.is_empty() && !command.starts_with('#') {
                    block.push(command.to_owned());
                }
            }
            Some(None) => {}
            None => {
                let level = line.chars().take_while(|c| *c == '#').count();
                if level > 0 && line[level..].starts_with(' ') {
                    sections.push(Section {
                        heading: line.trim_end().to_owned(),
                        level,
                        blocks: Vec::new(),
                    });
                }
            }
        }
    }
    assert!(fence.is_none(), "an unclosed ``` fence");
    sections
}

/// The ```sh blocks of `readme` in the section under `heading`, its subsections included (up
/// to the next heading of that level or above).
pub fn sh_blocks(readme: &str, heading: &str) -> Vec<Vec<String>> {
    let sections = sections(readme);
    let start = (sections.iter())
        .position(|s| s.heading == heading)
        .unwrap_or_else(|| panic!("the README has no section {heading:?}"));
    let level = sections[start].level;
    let blocks: Vec<Vec<String>> = (sections[start..].iter())
        .enumerate()
        .take_while(|(i, s)| *i == 0 || s.level > level)
        .flat_map(|(_, s)| s.blocks.iter().cloned())
        .collect();
    assert!(!blocks.is_empty(), "no sh block under {heading:?}");
    blocks
}

/// This repository's README.md.
pub fn our_readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap()
}

/// A user's shell in a project: `bash -c <line>` in its folder with the operator-rs under test
/// on PATH (first), the shared build directory for cargo, and the given variables.
pub struct UserShell {
    pub dir: PathBuf,
    env: Vec<(String, String)>,
    log: PathBuf,
    _tmp: tempfile::TempDir,
}

impl UserShell {
    pub fn new(dir: &Path, env: &[(&str, &Path)]) -> Self {
        // The versions this workspace's tests were built with, as every project build here takes
        // (a `make run` resolving afresh compiled every dependency again: 200 s of CPU).
        super::seed_lock(dir);
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_operator-rs"), bin.join("operator-rs"))
            .unwrap();
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut vars = vec![
            ("PATH".to_owned(), path),
            (
                "CARGO_BUILD_BUILD_DIR".to_owned(),
                shared_build_dir().display().to_string(),
            ),
        ];
        vars.extend((env.iter()).map(|(k, v)| ((*k).to_owned(), v.display().to_string())));
        Self {
            dir: dir.to_owned(),
            env: vars,
            log: tmp.path().join("manager.log"),
            _tmp: tmp,
        }
    }

    /// Sets a variable of the shell (the user's environment: who they are to git, ...).
    pub fn set(&mut self, key: &str, value: &str) {
        self.env.push((key.to_owned(), value.to_owned()));
    }

    fn command(&self, line: &str) -> std::process::Command {
        let mut cmd = std::process::Command::new("bash");
        super::as_user(&mut cmd)
            .args(["-c", line])
            .current_dir(&self.dir)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env_remove("CARGO_MANIFEST_DIR")
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("RUSTFLAGS")
            .env_remove("WEBHOOK_LOCAL_URL");
        cmd
    }

    /// Runs `line` to its end: whether it succeeded, and what it printed.
    pub fn try_run(&self, line: &str) -> (bool, String) {
        timed(line, || self.try_run_quietly(line))
    }

    /// [`Self::try_run`], out of the step timeline (for the polls of [`Self::wait_for`]).
    pub fn try_run_quietly(&self, line: &str) -> (bool, String) {
        let out = self.command(line).output().unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }

    /// Runs `line` to its end; what it printed, or the test fails with it.
    pub fn run(&self, line: &str) -> String {
        let (ok, text) = self.try_run(line);
        assert!(
            ok,
            "`{line}` failed:\n{text}\nmanager log:\n{}",
            self.manager_log()
        );
        text
    }

    /// Starts `line` as a terminal's foreground job (a process group of its own), its output
    /// into the manager log.
    pub fn start(&self, line: &str) -> std::process::Child {
        use std::os::unix::process::CommandExt as _;
        let file = std::fs::File::create(&self.log).unwrap();
        self.command(line)
            .stdin(std::process::Stdio::null())
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .process_group(0)
            .spawn()
            .unwrap()
    }

    pub fn manager_log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits (up to `secs`) until the job [`Self::start`] started runs its binary: cargo printed
    /// ``Running `...` ``. A wait for what the binary does then starts from there, not from
    /// cargo's build and its turn at the build directory's lock, which the jobs beside this one
    /// hold while they compile (minutes on a loaded machine, even when nothing is to be built).
    pub fn wait_for_build(&self, secs: u64) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
        timed("wait: the job's build", || {
            while !self.manager_log().contains("Running `") {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the job's binary did not start after {secs} s:\n{}",
                    self.manager_log()
                );
                std::thread::sleep(std::time::Duration::from_millis(500));
            }
        })
    }

    /// Polls `check` until `done` holds of what it prints, for up to `secs`.
    pub fn wait_for(&self, what: &str, secs: u64, check: &str, done: impl Fn(&str) -> bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
        timed(&format!("wait: {what}"), || {
            loop {
                let (_, out) = self.try_run_quietly(check);
                if done(&out) {
                    return;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "{what}: not after {secs} s; last `{check}`:\n{out}\nmanager log:\n{}",
                    self.manager_log()
                );
                std::thread::sleep(std::time::Duration::from_millis(500));
            }
        })
    }
}

/// Sends `signal` (`INT`: a terminal's Ctrl-C; `KILL`) to the process group of `job`, and
/// waits for its leader to exit.
pub fn signal_job(job: &mut std::process::Child, signal: &str) {
    let group = format!("-{}", job.id());
    let status = std::process::Command::new("kill")
        .args(["-s", signal, "--", &group])
        .status()
        .unwrap();
    assert!(status.success(), "kill -s {signal} -- {group}");
    job.wait().unwrap();
}
