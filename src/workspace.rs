//! The project's files as a command sees them: the disk, overlaid with the files a command is about
//! to write. Generators (`crdgen`, `rbac`) read through [`SourceTree`] so that `create api` can run
//! them on what it is about to write, before anything touches the disk. Also owns atomic writes and
//! the unified diffs printed by `--check`.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

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
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }
}

impl SourceTree for DiskTree {
    fn read(&self, rel: &Path) -> io::Result<Option<String>> {
        match std::fs::read_to_string(self.root.join(rel)) {
            Ok(s) => Ok(Some(s)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
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
            for entry in std::fs::read_dir(&dir)? {
                let entry = entry?;
                let ty = entry.file_type()?;
                let path = entry.path();
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
}

impl<'a> Overlay<'a> {
    pub fn new(base: &'a DiskTree) -> Self {
        Self {
            base,
            pending: BTreeMap::new(),
        }
    }

    /// Record that `rel` will hold `contents`.
    pub fn put(&mut self, rel: impl Into<PathBuf>, contents: String) {
        self.pending.insert(rel.into(), contents);
    }

    /// The pending writes, by relative path.
    pub fn pending(&self) -> &BTreeMap<PathBuf, String> {
        &self.pending
    }

    pub fn into_pending(self) -> BTreeMap<PathBuf, String> {
        self.pending
    }
}

impl SourceTree for Overlay<'_> {
    fn read(&self, rel: &Path) -> io::Result<Option<String>> {
        match self.pending.get(rel) {
            Some(s) => Ok(Some(s.clone())),
            None => self.base.read(rel),
        }
    }

    fn files_under(&self, rel_dir: &Path) -> io::Result<Vec<PathBuf>> {
        let mut files = self.base.files_under(rel_dir)?;
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
    pub path: PathBuf,
    pub contents: String,
}

/// What a generator returns: the files it owns, and warnings to print (each one line, self-contained).
#[derive(Debug, Clone, Default)]
pub struct GeneratorOutput {
    pub files: Vec<GeneratedFile>,
    pub warnings: Vec<String>,
}

/// Write `contents` to `path` atomically: a temp file in the same directory, then a rename, so a
/// reader never sees a half-written file. Parent directories are created.
pub fn write_atomic(path: &Path, contents: &str) -> Result<()> {
    stage(path, contents)?.commit()
}

/// Write every file of `files` (paths relative to `root`) all-or-nothing as far as a filesystem
/// allows: every file is first written in full to a temp file beside its destination, and only
/// when all are staged are they renamed into place. A failure while staging leaves the project
/// untouched (the temp files are removed).
pub fn write_all(root: &Path, files: &BTreeMap<PathBuf, String>) -> Result<()> {
    let staged = files
        .iter()
        .map(|(rel, contents)| stage(&root.join(rel), contents))
        .collect::<Result<Vec<_>>>()?;
    for s in staged {
        s.commit()?;
    }
    Ok(())
}

/// A file written in full to a temp file beside its destination, not yet renamed into place.
struct Staged {
    tmp: tempfile::NamedTempFile,
    dest: PathBuf,
}

impl Staged {
    fn commit(self) -> Result<()> {
        let dest = self.dest;
        self.tmp
            .persist(&dest)
            .map_err(|e| e.error)
            .with_context(|| format!("replacing {}", dest.display()))?;
        Ok(())
    }
}

fn stage(path: &Path, contents: &str) -> Result<Staged> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating directory {}", dir.display()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".operator-rs-")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    io::Write::write_all(&mut tmp, contents.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    // Keep the permissions of a file we replace (e.g. an executable script).
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    }
    Ok(Staged {
        tmp,
        dest: path.to_path_buf(),
    })
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
