//! The errors of the static CRD generator. A source error carries `path:line:col`, the construct
//! that could not be evaluated (or that kube-derive itself cannot render) and the fix.

use std::fmt;
use std::path::PathBuf;

/// A place in the user's sources: a path relative to the project root, 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file, relative to the project root.
    pub file: PathBuf,
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1 (in characters).
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

/// Why `generate crds` stopped.
#[derive(Debug, thiserror::Error)]
pub enum CrdgenError {
    /// A construct the static reader cannot evaluate: use `--exact` or change the source.
    #[error("{loc}: {what} — {fix}")]
    Unsupported {
        /// Where it is written.
        loc: Location,
        /// What was refused, and why.
        what: String,
        /// How to change the source so the command goes through.
        fix: String,
    },
    /// A construct kube-derive itself cannot render (its `crd()` would panic or fail to compile).
    #[error("{loc}: {what} — {fix}")]
    KubeCannotRender {
        /// Where it is written.
        loc: Location,
        /// What was refused, and why.
        what: String,
        /// How to change the source so the command goes through.
        fix: String,
    },
    /// The source does not parse, or a module file is missing.
    #[error("{loc}: {what}")]
    Source {
        /// Where it is written.
        loc: Location,
        /// What is wrong there.
        what: String,
    },
    /// Several versions of one kind, with zero or several storage versions, or otherwise unmergeable.
    #[error("{0}")]
    Versions(String),
    /// Two kinds claim one CRD, file or name: generating would lose one of them.
    #[error("{0}")]
    Clash(String),
    /// A `CustomResource` in a file no module declaration reaches: the compiler never sees it,
    /// so generating would drop its CRD (and remove the one written before).
    #[error("{loc}: {what}")]
    Unreached {
        /// The `#[derive(CustomResource)]`.
        loc: Location,
        /// Why no module reaches it, and the fix.
        what: String,
    },
    /// A CRD kube-apiserver would refuse to create: where (the rule's attribute, else the kind),
    /// what it would say, and the fix.
    #[error("{loc}: kube-apiserver would refuse the CRD: {what} — {fix}")]
    Refused {
        /// Where it is written.
        loc: Location,
        /// What was refused, and why.
        what: String,
        /// How to change the source so the command goes through.
        fix: String,
    },
    /// A CRD kube-apiserver cannot store: the message names the file and the fix.
    #[error("{0}")]
    TooLarge(String),
    /// `config/crd/kustomization.yaml`, which `generate crds` keeps in step, does not parse or
    /// has a `resources:` it cannot keep: the message names the file, the problem and the fix.
    #[error("{0}")]
    Kustomization(String),
    /// No crate root (`src/lib.rs` or `src/main.rs`) under the project.
    #[error("no crate root: neither src/lib.rs nor src/main.rs exists under {0}")]
    NoCrateRoot(PathBuf),
    /// The trees of operator-rs name the path in their errors already.
    #[error("{source}")]
    Io {
        /// The file or folder, relative to the project root.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
}

impl CrdgenError {
    /// The location of a source error, if it has one.
    pub fn location(&self) -> Option<&Location> {
        match self {
            CrdgenError::Unsupported { loc, .. }
            | CrdgenError::KubeCannotRender { loc, .. }
            | CrdgenError::Source { loc, .. }
            | CrdgenError::Refused { loc, .. } => Some(loc),
            _ => None,
        }
    }
}

/// The fix offered for constructs the static reader cannot evaluate.
pub(crate) const FIX_EXACT: &str =
    "run `operator-rs generate crds --exact` (derives through the compiler)";
