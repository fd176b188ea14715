//! All-or-nothing writes of a command's files. Every new text is first written in full to a
//! temp file beside its destination and every file it replaces or removes is kept as a backup
//! (a hard link); a journal at the project root lists them all before the first rename. A command
//! that fails (an I/O error) rolls back; a command that dies (killed, out of power for the
//! process) is finished or rolled back by the next command that takes the project lock
//! ([`recover`]), so the project is always either as it was or as the command meant to leave it.
//! `PROJECT` is renamed last. Files are created with the mode `cargo new` would give them (0666
//! less the umask); a replaced file keeps its mode.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::fs;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// The journal of a command in progress, at the project root.
pub const JOURNAL: &str = ".operator-rs-journal";
const JOURNAL_TMP: &str = ".operator-rs-journal.tmp";
/// The longest file name (one path component) common file systems take (ext4, xfs, btrfs,
/// tmpfs, APFS, NTFS): 255 bytes.
pub const NAME_MAX: usize = 255;
/// Linux's PATH_MAX less the terminating NUL.
const PATH_MAX: usize = 4095;
/// The file written last: while it is not renamed, the project still describes the old state.
const LAST: &str = "PROJECT";

/// What a command did to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verb {
    /// The file is new.
    Create,
    /// The file existed and is rewritten.
    Update,
    /// The file is removed.
    Remove,
}

impl Verb {
    /// The verb as the commands print it before each path.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Remove => "remove",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum State {
    /// Temp files and backups are being made; the project is untouched: roll back.
    Staging,
    /// Everything is staged and renames are under way: roll forward.
    Committing,
}

/// One destination: its new text waits in `tmp` (None: the file is removed); `backup` holds the
/// file it replaces (None: the file is new). Paths are relative to the project root.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    dest: PathBuf,
    tmp: Option<PathBuf>,
    backup: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Journal {
    state: State,
    entries: Vec<Entry>,
    /// Folders the command creates, parents first (removed again on rollback).
    created_dirs: Vec<PathBuf>,
}

/// Write `writes` and remove `removals` (paths relative to `root`) as one change: either all of it
/// happens or none. Files whose text is already `writes`' are left alone. Returns what changed.
pub fn commit(
    root: &Path,
    writes: &BTreeMap<PathBuf, String>,
    removals: &BTreeSet<PathBuf>,
) -> Result<Vec<(PathBuf, Verb)>> {
    for rel in writes.keys().chain(removals) {
        check_path(root, rel)?;
    }
    let mut changes: Vec<(PathBuf, Verb, Option<&str>)> = Vec::new();
    for (rel, text) in writes {
        match read_bytes(&root.join(rel))? {
            Some(current) if current == text.as_bytes() => {}
            Some(_) => changes.push((rel.clone(), Verb::Update, Some(text))),
            None => changes.push((rel.clone(), Verb::Create, Some(text))),
        }
    }
    for rel in removals.iter().filter(|r| !writes.contains_key(*r)) {
        if fs::symlink_metadata(root.join(rel)).is_ok() {
            changes.push((rel.clone(), Verb::Remove, None));
        }
    }
    // PROJECT last: until it is renamed, a dead command leaves a project that says what it was.
    changes.sort_by_key(|(rel, _, _)| (rel == Path::new(LAST), rel.clone()));
    if changes.is_empty() {
        return Ok(Vec::new());
    }
    // Where each change lands (a link inside the project is written through), every refusal
    // made before the journal exists.
    let canonical_root = fs::canonicalize(root)
        .with_context(|| format!("resolving the project folder {}", root.display()))?;
    let mut dests = Vec::with_capacity(changes.len());
    for (rel, verb, _) in &changes {
        let dest = destination(root, &canonical_root, rel, *verb)?;
        if dest != *rel && changes.iter().any(|(other, _, _)| *other == dest) {
            bail!(
                "refusing to write {}: it is a symbolic link to {}, which this command writes too. Nothing was written.\n  \
                 Replace the link with a copy of the file, or remove it.",
                rel.display(),
                dest.display()
            );
        }
        dests.push(dest);
    }
    for ((rel, _, _), dest) in changes.iter().zip(&dests) {
        if dest != rel {
            crate::errln!(
                "note: {} is a symbolic link to {}: writing through it (the link stays)",
                rel.display(),
                dest.display()
            );
        }
    }

    let pid = std::process::id();
    let mut journal = Journal {
        state: State::Staging,
        entries: Vec::new(),
        created_dirs: missing_dirs(root, dests.iter().map(PathBuf::as_path)),
    };
    for (i, ((_, verb, text), rel)) in changes.iter().zip(&dests).enumerate() {
        let dir = rel.parent().unwrap_or(Path::new(""));
        journal.entries.push(Entry {
            dest: rel.clone(),
            tmp: text.map(|_| dir.join(format!(".operator-rs-{pid}-{i}.tmp"))),
            backup: (*verb != Verb::Create)
                .then(|| dir.join(format!(".operator-rs-{pid}-{i}.bak"))),
        });
    }
    if let Err(e) = write_journal(root, &journal) {
        return Err(e.context("nothing was changed"));
    }
    let texts: Vec<Option<&str>> = changes.iter().map(|(_, _, t)| *t).collect();
    if let Err(e) = stage(root, &journal, &texts) {
        return Err(rolled_back(root, &journal, e));
    }
    journal.state = State::Committing;
    if let Err(e) = write_journal(root, &journal) {
        return Err(rolled_back(root, &journal, e));
    }
    if let Err(e) = rename_all(root, &journal) {
        return Err(rolled_back(root, &journal, e));
    }
    finish(root, &journal);
    Ok(changes.into_iter().map(|(r, v, _)| (r, v)).collect())
}

/// Finish or undo what a dead command left (its journal), and remove leftovers of the journal's
/// own temp file. Called with the project lock held, before a command reads anything.
pub fn recover(root: &Path) -> Result<()> {
    let _ = fs::remove_file(root.join(JOURNAL_TMP));
    let path = root.join(JOURNAL);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let journal: Journal = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a journal this operator-rs can read; an interrupted command left it. \
             Check the project (e.g. `git status`), remove the .operator-rs-* files it lists, then remove it",
            path.display()
        )
    })?;
    match journal.state {
        State::Staging => {
            rollback(root, &journal).with_context(|| {
                format!("rolling back the interrupted command ({})", path.display())
            })?;
            crate::errln!(
                "note: an earlier operator-rs command was interrupted before it changed any file; its temp files are removed"
            );
        }
        State::Committing => {
            roll_forward(root, &journal).with_context(|| {
                format!("finishing the interrupted command ({})", path.display())
            })?;
            crate::errln!(
                "note: an earlier operator-rs command was interrupted while writing; its {} file change{} are now complete:",
                journal.entries.len(),
                if journal.entries.len() == 1 { "" } else { "s" }
            );
            for e in &journal.entries {
                crate::errln!(
                    "{:>10} {}",
                    if e.tmp.is_some() { "write" } else { "remove" },
                    e.dest.display()
                );
            }
        }
    }
    Ok(())
}

/// Refuse, before anything is written, a path that is not inside the project or that no common
/// file system can hold.
pub fn check_path(root: &Path, rel: &Path) -> Result<()> {
    if rel.as_os_str().is_empty() {
        bail!("refusing to write a file with an empty path (a bug in operator-rs)");
    }
    for c in rel.components() {
        match c {
            Component::Normal(name) => {
                let len = name.len();
                if len > NAME_MAX {
                    bail!(
                        "cannot write {}: the file name {:?} is {len} bytes, over the {NAME_MAX}-byte limit of file systems. Nothing was written.\n  \
                         Choose shorter names (the file name is built from them).",
                        rel.display(),
                        name
                    );
                }
            }
            _ => bail!(
                "refusing to write {}: the path leaves the project folder (it must be relative, without `..`). Nothing was written.",
                rel.display()
            ),
        }
    }
    let full = root.join(rel);
    if full.as_os_str().len() > PATH_MAX {
        bail!(
            "cannot write {}: the path is {} bytes, over the {PATH_MAX}-byte limit of the system. Nothing was written.\n  \
             Choose shorter names, or move the project to a shorter folder path.",
            full.display(),
            full.as_os_str().len()
        );
    }
    Ok(())
}

/// Where the change of `rel` lands, relative to the project root: `rel` itself, or the target of a
/// symbolic link inside the project (written through, as editors do). Refused, with the reason:
/// a path that leaves the project through a symbolic link (a linked `vendor/`, a file linked to
/// one outside), a dangling link, and a file the user made read-only (it would be replaced
/// without a word, since a rename ignores the mode of the file it replaces).
fn destination(root: &Path, canonical_root: &Path, rel: &Path, verb: Verb) -> Result<PathBuf> {
    // Every folder on the way: a link may point anywhere inside the project, not outside.
    let mut at = PathBuf::new();
    let parents: Vec<_> = rel
        .parent()
        .into_iter()
        .flat_map(Path::components)
        .collect();
    for c in parents {
        at.push(c);
        let full = root.join(&at);
        if !is_link(&full) {
            continue;
        }
        match fs::canonicalize(&full) {
            Ok(target) if target.starts_with(canonical_root) => {}
            Ok(target) => bail!(
                "refusing to {} {}: the folder {} is a symbolic link to {}, outside the project folder, and operator-rs writes only inside the project. Nothing was written.\n  \
                 Replace the link with a real folder (e.g. `rm {} && mkdir {}`), then re-run.",
                verb_phrase(verb),
                rel.display(),
                at.display(),
                target.display(),
                at.display(),
                at.display()
            ),
            // A dangling link: the write would fail half-way; say why now.
            Err(e) => bail!(
                "refusing to {} {}: the folder {} is a symbolic link that cannot be followed ({e}). Nothing was written.",
                verb_phrase(verb),
                rel.display(),
                at.display()
            ),
        }
    }
    let full = root.join(rel);
    let mut dest = rel.to_path_buf();
    if is_link(&full) && verb != Verb::Remove {
        let target = fs::canonicalize(&full).map_err(|e| {
            anyhow::anyhow!(
                "refusing to write {}: it is a symbolic link that cannot be followed ({e}). Nothing was written.\n  \
                 Remove the link (operator-rs then creates the file), or point it at a file inside the project.",
                rel.display()
            )
        })?;
        match target.strip_prefix(canonical_root) {
            Ok(inside) if !inside.as_os_str().is_empty() => dest = inside.to_path_buf(),
            _ => bail!(
                "refusing to write {}: it is a symbolic link to {}, outside the project folder, and operator-rs writes only inside the project. Nothing was written.\n  \
                 Replace the link with a copy of the file (e.g. `cp --remove-destination {} {}`), then re-run.",
                rel.display(),
                target.display(),
                target.display(),
                rel.display()
            ),
        }
    }
    if verb != Verb::Create
        && let Ok(meta) = fs::metadata(root.join(&dest))
        && meta.permissions().readonly()
    {
        let through = if dest == rel {
            String::new()
        } else {
            format!(" (the target of the link {})", rel.display())
        };
        bail!(
            "refusing to {} {}{through}: the file is read-only, and operator-rs does not replace a file its owner protected. Nothing was written.\n  \
             Make it writable (`chmod u+w {}`) and re-run.",
            verb_phrase(verb),
            dest.display(),
            dest.display()
        );
    }
    Ok(dest)
}

fn is_link(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

fn verb_phrase(verb: Verb) -> &'static str {
    match verb {
        Verb::Remove => "remove",
        Verb::Create | Verb::Update => "write",
    }
}

fn read_bytes(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(super::with_path(path, e).into()),
    }
}

/// The folders (relative, parents first) that must be created to hold `rels`.
fn missing_dirs<'a>(root: &Path, rels: impl Iterator<Item = &'a Path>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for rel in rels {
        let mut chain: Vec<PathBuf> = rel
            .ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .collect();
        chain.reverse();
        for dir in chain {
            if !out.contains(&dir) && !root.join(&dir).is_dir() {
                out.push(dir);
            }
        }
    }
    out
}

fn write_journal(root: &Path, journal: &Journal) -> Result<()> {
    let tmp = root.join(JOURNAL_TMP);
    let dest = root.join(JOURNAL);
    let text = serde_json::to_string_pretty(journal).context("serializing the journal")?;
    let written = (|| {
        let mut f =
            fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        f.write_all(text.as_bytes())
            .and_then(|()| f.sync_all())
            .with_context(|| format!("writing {}", tmp.display()))?;
        fault::point("journal", journal.state as usize)?;
        fs::rename(&tmp, &dest)
            .with_context(|| format!("renaming {} to {}", tmp.display(), dest.display()))
    })();
    // A journal that could not be written leaves nothing behind (a full disk, a fault).
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// Create the folders, write every temp file, link every backup.
fn stage(root: &Path, journal: &Journal, texts: &[Option<&str>]) -> Result<()> {
    for dir in &journal.created_dirs {
        let full = root.join(dir);
        fs::create_dir(&full).with_context(|| format!("creating directory {}", full.display()))?;
    }
    for (i, (entry, text)) in journal.entries.iter().zip(texts).enumerate() {
        let dest = root.join(&entry.dest);
        if let (Some(tmp), Some(text)) = (&entry.tmp, text) {
            let tmp = root.join(tmp);
            // std creates files with mode 0666 less the umask, as `cargo new` does.
            let mut f = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
                .with_context(|| format!("creating {}", tmp.display()))?;
            f.write_all(text.as_bytes())
                .with_context(|| format!("writing {}", tmp.display()))?;
            if let Ok(meta) = fs::metadata(&dest) {
                // Keep the mode of a file we replace (e.g. an executable script).
                fs::set_permissions(&tmp, meta.permissions())
                    .with_context(|| format!("setting the permissions of {}", tmp.display()))?;
            }
        }
        if let Some(backup) = &entry.backup {
            let backup = root.join(backup);
            if fs::hard_link(&dest, &backup).is_err() {
                fs::copy(&dest, &backup).with_context(|| {
                    format!("backing up {} to {}", dest.display(), backup.display())
                })?;
            }
        }
        fault::point("stage", i + 1)?;
    }
    Ok(())
}

fn rename_all(root: &Path, journal: &Journal) -> Result<()> {
    for (i, entry) in journal.entries.iter().enumerate() {
        fault::point("rename", i)?;
        let dest = root.join(&entry.dest);
        match &entry.tmp {
            Some(tmp) => {
                let tmp = root.join(tmp);
                fs::rename(&tmp, &dest)
                    .with_context(|| format!("renaming {} to {}", tmp.display(), dest.display()))?
            }
            None => {
                fs::remove_file(&dest).with_context(|| format!("removing {}", dest.display()))?
            }
        }
    }
    fault::point("rename", journal.entries.len())?;
    Ok(())
}

/// Remove the backups and the journal: the change is complete.
fn finish(root: &Path, journal: &Journal) {
    for backup in journal.entries.iter().filter_map(|e| e.backup.as_ref()) {
        let _ = fs::remove_file(root.join(backup));
    }
    let _ = fs::remove_file(root.join(JOURNAL));
}

/// Complete every rename a dead command had not done.
fn roll_forward(root: &Path, journal: &Journal) -> Result<()> {
    for entry in &journal.entries {
        let dest = root.join(&entry.dest);
        match &entry.tmp {
            Some(tmp) => {
                let tmp = root.join(tmp);
                if tmp.exists() {
                    fs::rename(&tmp, &dest).with_context(|| {
                        format!("renaming {} to {}", tmp.display(), dest.display())
                    })?;
                }
            }
            None => remove_if_present(&dest)?,
        }
    }
    finish(root, journal);
    Ok(())
}

/// Put every file back as it was before the command began.
fn rollback(root: &Path, journal: &Journal) -> Result<()> {
    for entry in journal.entries.iter().rev() {
        let dest = root.join(&entry.dest);
        let tmp_left = match &entry.tmp {
            Some(tmp) => {
                let tmp = root.join(tmp);
                let left = tmp.exists();
                remove_if_present(&tmp)?;
                left
            }
            None => false,
        };
        match &entry.backup {
            Some(backup) => {
                let backup = root.join(backup);
                if backup.exists() {
                    if journal.state == State::Committing {
                        fs::rename(&backup, &dest).with_context(|| {
                            format!("restoring {} from {}", dest.display(), backup.display())
                        })?;
                    }
                    // Renaming a link onto the same file does nothing: remove what is left.
                    remove_if_present(&backup)?;
                }
            }
            // A new file: remove it if its rename happened.
            None if journal.state == State::Committing && !tmp_left => remove_if_present(&dest)?,
            None => {}
        }
    }
    for dir in journal.created_dirs.iter().rev() {
        let _ = fs::remove_dir(root.join(dir));
    }
    let _ = fs::remove_file(root.join(JOURNAL));
    let _ = fs::remove_file(root.join(JOURNAL_TMP));
    Ok(())
}

/// Roll back after `err`; the error says whether the project is whole again.
fn rolled_back(root: &Path, journal: &Journal, err: anyhow::Error) -> anyhow::Error {
    match rollback(root, journal) {
        Ok(()) => err.context("nothing was changed (the files written so far were rolled back)"),
        Err(undo) => err.context(format!(
            "and rolling back failed too ({undo:#}); the next operator-rs command in this folder retries (journal {})",
            root.join(JOURNAL).display()
        )),
    }
}

fn remove_if_present(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("removing {}", path.display())),
    }
}

/// Fault injection for the crash tests, in debug builds only: `OPERATOR_RS_FAULT=<point>:<n>:<how>`
/// makes the command die (`abort`) or fail with an I/O error (`fail`) when it reaches `<point>`
/// (`stage`: after the n-th temp file; `rename`: after n renames; `journal`: once the journal's
/// temp file is written, 0 while staging, 1 before the renames).
mod fault {
    #[cfg(debug_assertions)]
    pub fn point(point: &str, n: usize) -> anyhow::Result<()> {
        let Ok(spec) = std::env::var("OPERATOR_RS_FAULT") else {
            return Ok(());
        };
        let mut parts = spec.split(':');
        let (Some(p), Some(at), Some(how)) = (parts.next(), parts.next(), parts.next()) else {
            return Ok(());
        };
        if p != point || at.parse::<usize>().ok() != Some(n) {
            return Ok(());
        }
        if how == "abort" {
            std::process::abort();
        }
        Err(std::io::Error::other(format!("injected fault at {point} {n}")).into())
    }

    #[cfg(not(debug_assertions))]
    #[inline(always)]
    pub fn point(_point: &str, _n: usize) -> anyhow::Result<()> {
        Ok(())
    }
}
