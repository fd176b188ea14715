//! The proof that a candidate binary is the operator-rs that made the project, before `update`
//! merges against its scaffold. With PROJECT's `scaffold:` record, the candidate must print the
//! recorded fingerprint (`operator-rs version`) and its replay of the recorded commands must hash
//! to the recorded digest. Without a record (a project made before records), it must say it is
//! PROJECT's `cliVersion`, and its replay's vendored runtime must be the project's
//! `vendor/operator-rs-runtime` byte for byte (`update` is the only command that replaces it).
//! A candidate that fails is never used: the refusal says what differed.

use std::path::{Path, PathBuf};

use crate::ops::scaffold_record::{self, Conditions, Files, ReplayError};
use crate::project::Project;
use crate::vendor;

use super::binary;

/// A proven ancestor: its binary and its replay of the project's commands.
#[derive(Debug)]
pub struct Proven {
    pub binary: PathBuf,
    /// Every file of its replay, the vendored runtime included.
    pub files: Files,
    /// Recorded commands it refused as unknown syntax, replayed with this operator-rs.
    pub fell_back: Vec<String>,
}

/// What the proof of one candidate needs.
pub struct Proof<'a> {
    pub root: &'a Path,
    pub project: &'a Project,
    pub commands: &'a [Vec<String>],
    pub conditions: &'a Conditions,
    /// Where replays are made (one folder per candidate below it).
    pub scratch: &'a Path,
    /// This operator-rs, which replays the commands an ancestor does not know.
    pub this: &'a Path,
    /// The project's vendored runtime as committed (legacy proof).
    pub runtime: &'a Files,
}

impl Proof<'_> {
    /// Prove `candidate` (the `index`th tried): its replay, or why it is not the ancestor.
    pub fn prove(&self, candidate: &Path, index: usize) -> Result<Proven, String> {
        let version = binary::version_of(candidate).map_err(|e| format!("{e:#}"))?;
        let wanted = format!("operator-rs {}", self.project.cli_version);
        let record = self.project.scaffold.as_ref();
        if version != wanted {
            return Err(format!(
                "it is {version}, and PROJECT records that {wanted} made the project"
            ));
        }
        // A recorded scaffold knew every recorded command; a legacy one may not have.
        let fallback = record.is_none().then_some(self.this);
        let replayed = scaffold_record::replay(
            candidate,
            fallback,
            self.root,
            &self.scratch.join(format!("candidate-{index}")),
            self.project,
            self.commands,
            self.conditions,
        )
        .map_err(|e| match e {
            ReplayError::Io(e) => format!("{e:#}"),
            other => other.to_string(),
        })?;
        if let Some(record) = record {
            match binary::fingerprint_of(candidate) {
                Some(f) if f == record.fingerprint => {}
                Some(f) if f == crate::release::scaffold_fingerprint() => {
                    return Err(format!(
                        "its scaffold is {f}, this operator-rs's, and PROJECT records {}: it is the new operator-rs, not the one that made the project",
                        record.fingerprint
                    ));
                }
                Some(f) => {
                    return Err(format!(
                        "its scaffold is {f}, and PROJECT records {}",
                        record.fingerprint
                    ));
                }
                None => {
                    return Err(format!(
                        "`{} version` prints no scaffold fingerprint (an operator-rs older than PROJECT's record), and PROJECT records {}",
                        candidate.display(),
                        record.fingerprint
                    ));
                }
            }
        }
        match record.map(|r| r.digest.as_str()) {
            Some(digest) if !digest.is_empty() => {
                let got = scaffold_record::digest(&replayed.files);
                if got != digest {
                    return Err(format!(
                        "its replay of the recorded commands hashes to {got}, and PROJECT records {digest}: it does not make the files the project was made with"
                    ));
                }
            }
            // No digest (the record's replay failed) or no record: the vendored runtime.
            _ => {
                let made = scaffold_record::runtime_of(&replayed.files);
                if let Some(difference) = scaffold_record::first_difference(
                    self.runtime,
                    &made,
                    &format!("the project's {}", vendor::DIR),
                    "the runtime it vendors",
                ) {
                    return Err(format!("its scaffold is not the project's: {difference}"));
                }
            }
        }
        Ok(Proven {
            binary: candidate.to_path_buf(),
            files: replayed.files,
            fell_back: replayed.fell_back,
        })
    }
}

/// The refusal when no candidate is proven: each one tried and why, and how to get the right one.
pub fn refusal(project: &Project, source: &str, tried: &[(String, String)]) -> String {
    let mut text = format!(
        "no operator-rs binary found is the one that made this project (PROJECT records operator-rs {}{}), so update has no ancestor to merge with; it never merges against a guess. Nothing was written.",
        project.cli_version,
        match &project.scaffold {
            Some(r) if !r.digest.is_empty() =>
                format!(", scaffold {}, digest {}", r.fingerprint, r.digest),
            Some(r) => format!(", scaffold {}", r.fingerprint),
            None => ", made before PROJECT recorded its scaffold".to_string(),
        }
    );
    for (candidate, why) in tried {
        text.push_str(&format!("\n  - {candidate}: {why}"));
    }
    let get = match binary::git_source(source) {
        Some((url, rev)) => format!(
            "`cargo install --locked --git {url} --rev {rev} operator-rs --root /tmp/operator-rs-{rev}`, then `operator-rs update --from-binary /tmp/operator-rs-{rev}/bin/operator-rs`"
        ),
        None => format!(
            "build operator-rs at the commit that made the project (`cargo install --locked --git <url> --rev <commit> operator-rs --root <dir>`; `git log PROJECT` shows when it was made; crates.io: `cargo install operator-rs --version {} --root <dir>`), then `operator-rs update --from-binary <dir>/bin/operator-rs`",
            project.cli_version
        ),
    };
    text.push_str(&format!(
        "\n  Get it: {get}.\n  e.g. --from-binary bin/operator-rs-{} once `make operator-rs` put the one that made the project there",
        project.cli_version
    ));
    text
}
