//! The project's files as a command sees them: the disk, overlaid with the files a command is about
//! to write. Generators (`crdgen`, `rbac`) read through [`SourceTree`] so that `create api` can run
//! them on what it is about to write, before anything touches the disk. Also owns the unified diffs
//! printed by `--check`; all-or-nothing writes are in [`transaction`], the project lock in [`lock`],
//! Rust files cut into top-level items in [`rust_items`] (for the scaffold's check of the Rust it
//! writes, `crate::scaffold::check`), the project at a git revision in [`git`].

pub(crate) mod git;
pub(crate) mod lock;
pub(crate) mod rust_items;
pub(crate) mod transaction;

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};

use anyhow::Result;

pub use transaction::Verb;

/// An I/O error reading `path` that names it (a bare OS error says nothing of where), and, for a
/// file where a folder belongs or a folder where a file does, which and what to do.
pub(crate) fn with_path(path: &Path, e: io::Error) -> io::Error {
    // A file where a folder belongs, or a folder where a file does: which one, and what to do.
    let misplaced = match e.kind() {
        io::ErrorKind::NotADirectory => (path.ancestors().skip(1))
            .find(|a| a.is_file())
            .map(|file| format!("{} is a file where a folder belongs", file.display())),
        io::ErrorKind::IsADirectory => Some(format!(
            "{} is a folder where a file belongs",
            path.display()
        )),
        // Bytes that are not UTF-8: `utf8_text` named the file and the line already.
        io::ErrorKind::InvalidData => return e,
        _ => None,
    };
    match misplaced {
        Some(what) => io::Error::new(
            e.kind(),
            format!(
                "reading {}: {what}. Nothing was written.\n  move it out of the way (e.g. `mv <it> <it>.bak`), then run the command again",
                path.display()
            ),
        ),
        None => io::Error::new(e.kind(), format!("reading {}: {e}", path.display())),
    }
}

/// The text of the file `rel` from its bytes, or, when they are not UTF-8, an error naming the
/// first byte that is not: `file:line:col` (the column in characters, as an editor counts them),
/// the byte, the rule (Rust sources and manifests are UTF-8, as rustc and kubectl read them) and
/// the fix. Every reader of the project's files (the disk, git) goes through it.
pub fn utf8_text(rel: &Path, bytes: Vec<u8>) -> io::Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        // The valid prefix is UTF-8: lines and columns counted on it.
        let before = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}:{line}:{column}: byte 0x{:02x} is not UTF-8: operator-rs reads the project's files as UTF-8, as rustc does\n  \
                 re-save the file as UTF-8, e.g. `iconv -f latin1 -t utf-8 {0} -o {0}.utf8 && mv {0}.utf8 {0}`",
                rel.display(),
                bytes[at]
            ),
        )
    })
}

/// A read-only view of a project's files, by path relative to the project root.
pub trait SourceTree {
    /// The contents of `rel`, or `None` when it does not exist.
    fn read(&self, rel: &Path) -> io::Result<Option<String>>;
    /// Every regular file below `rel_dir` (recursively), relative to the project root, sorted.
    fn files_under(&self, rel_dir: &Path) -> io::Result<Vec<PathBuf>>;
    /// The project root on disk (for messages and for tools that need real paths).
    fn root(&self) -> &Path;
}

/// The project as it is on disk.
#[derive(Debug, Clone)]
pub struct DiskTree {
    root: PathBuf,
}

impl DiskTree {
    /// The project whose root folder is `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }
}

impl SourceTree for DiskTree {
    fn read(&self, rel: &Path) -> io::Result<Option<String>> {
        let path = self.root.join(rel);
        match std::fs::read(&path) {
            Ok(bytes) => utf8_text(rel, bytes).map(Some),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(with_path(&path, e)),
        }
    }

    fn files_under(&self, rel_dir: &Path) -> io::Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        let base = self.root.join(rel_dir);
        if !base.is_dir() {
            return Ok(out);
        }
        let mut stack = vec![base];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).map_err(|e| with_path(&dir, e))? {
                let entry = entry.map_err(|e| with_path(&dir, e))?;
                let path = entry.path();
                let ty = entry.file_type().map_err(|e| with_path(&path, e))?;
                if ty.is_dir() {
                    stack.push(path);
                } else if ty.is_file() {
                    out.push(path.strip_prefix(&self.root).unwrap_or(&path).to_path_buf());
                }
            }
        }
        out.sort();
        Ok(out)
    }

    fn root(&self) -> &Path {
        &self.root
    }
}

/// The disk overlaid with pending writes: what the project will look like once a command is done.
#[derive(Debug, Clone)]
pub struct Overlay<'a> {
    base: &'a DiskTree,
    pending: BTreeMap<PathBuf, String>,
    removed: BTreeSet<PathBuf>,
    /// Rust files read through the overlay and parsed, by path: the first name each declares
    /// twice, if any (see [`Overlay::parsed`]).
    parsed: std::collections::HashMap<PathBuf, Option<String>>,
}

impl<'a> Overlay<'a> {
    /// `base` with no write pending yet.
    pub fn new(base: &'a DiskTree) -> Self {
        Self {
            base,
            pending: BTreeMap::new(),
            removed: BTreeSet::new(),
            parsed: std::collections::HashMap::new(),
        }
    }

    /// Record that `rel` will hold `contents`.
    pub fn put(&mut self, rel: impl Into<PathBuf>, contents: String) {
        let rel = rel.into();
        self.removed.remove(&rel);
        self.parsed.remove(&rel);
        self.pending.insert(rel, contents);
    }

    /// Record that `rel` will be removed.
    pub fn remove(&mut self, rel: impl Into<PathBuf>) {
        let rel = rel.into();
        self.pending.remove(&rel);
        self.removed.insert(rel);
    }

    /// The pending removals.
    pub fn removed(&self) -> &BTreeSet<PathBuf> {
        &self.removed
    }

    /// The pending writes, by relative path.
    pub fn pending(&self) -> &BTreeMap<PathBuf, String> {
        &self.pending
    }

    /// Record what parsing the file at `rel`, as the overlay holds it now, found: the first name
    /// it declares twice, if any. Writing the file again forgets it.
    pub fn record_parsed(&mut self, rel: PathBuf, duplicate: Option<String>) {
        self.parsed.insert(rel, duplicate);
    }

    /// The verdicts [`Self::record_parsed`] recorded: the check of the Rust a command writes
    /// (`crate::scaffold::check`) reuses them instead of parsing those files again.
    pub fn parsed(&self) -> &std::collections::HashMap<PathBuf, Option<String>> {
        &self.parsed
    }

    /// The pending writes and removals.
    pub fn into_changes(self) -> (BTreeMap<PathBuf, String>, BTreeSet<PathBuf>) {
        (self.pending, self.removed)
    }
}

impl SourceTree for Overlay<'_> {
    fn read(&self, rel: &Path) -> io::Result<Option<String>> {
        if self.removed.contains(rel) {
            return Ok(None);
        }
        match self.pending.get(rel) {
            Some(s) => Ok(Some(s.clone())),
            None => self.base.read(rel),
        }
    }

    fn files_under(&self, rel_dir: &Path) -> io::Result<Vec<PathBuf>> {
        let mut files = self.base.files_under(rel_dir)?;
        files.retain(|f| !self.removed.contains(f));
        files.extend(
            self.pending
                .keys()
                .filter(|p| p.starts_with(rel_dir))
                .cloned(),
        );
        files.sort();
        files.dedup();
        Ok(files)
    }

    fn root(&self) -> &Path {
        self.base.root()
    }
}

/// A file a generator produces: its path relative to the project root and its full contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedFile {
    /// The file, relative to the project root.
    pub path: PathBuf,
    /// Its whole text.
    pub contents: String,
}

/// What a generator returns: the files it owns, files of its folder that nothing produces any
/// more (to remove), and warnings to print (each one line, self-contained).
#[derive(Debug, Clone, Default)]
pub struct GeneratorOutput {
    /// Every file the generator owns, as it should be.
    pub files: Vec<GeneratedFile>,
    /// Files of the generator's folder that nothing produces any more, to remove.
    pub stale: Vec<PathBuf>,
    /// Warnings to print, each one self-contained line.
    pub warnings: Vec<String>,
}

/// Write every file of `files` and remove every file of `removals` (paths relative to `root`)
/// all-or-nothing (see [`transaction`]). Returns what changed, in the order it was done.
pub fn write_all(
    root: &Path,
    files: &BTreeMap<PathBuf, String>,
    removals: &BTreeSet<PathBuf>,
) -> Result<Vec<(PathBuf, Verb)>> {
    transaction::commit(root, files, removals)
}

/// A unified diff from `old` (None: the file is missing) to `new`, labelled with `rel`.
pub fn unified_diff(rel: &Path, old: Option<&str>, new: &str) -> String {
    let label = rel.display().to_string();
    let old_text = old.unwrap_or("");
    let diff = similar::TextDiff::from_lines(old_text, new);
    let old_label = if old.is_some() {
        format!("a/{label}")
    } else {
        "/dev/null".to_string()
    };
    diff.unified_diff()
        .context_radius(3)
        .header(&old_label, &format!("b/{label}"))
        .to_string()
}
