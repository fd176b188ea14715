//! What `import` did not translate, each item with its Go file:line: printed at the end of an
//! import and written into the project as `IMPORT.md`, so the work left is a list to go through.

use super::go::At;

/// The file the report is written to, at the project's root.
pub const FILE: &str = "IMPORT.md";

/// One thing not translated (or translated with a difference the user must know).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    pub at: At,
    /// What it is (`+kubebuilder:validation:UniqueItems`, `Reconcile logic`...).
    pub what: String,
    /// Why, and what to do.
    pub todo: String,
}

impl PartialOrd for At {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for At {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (&self.file, self.line, self.col).cmp(&(&other.file, other.line, other.col))
    }
}

/// Everything an import left to the user.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub entries: Vec<Entry>,
}

impl Report {
    /// Notes the part of a Go file the grammar did not read ([`super::go::read_file_lenient`]).
    pub fn unread_go(&mut self, at: Option<At>) {
        if let Some(at) = at {
            self.add(
                &at,
                "Go the grammar does not read",
                "tree-sitter-go recovered the rest of the file; check this function's translation",
            );
        }
    }

    pub fn add(&mut self, at: &At, what: impl Into<String>, todo: impl Into<String>) {
        self.entries.push(Entry {
            at: at.clone(),
            what: what.into(),
            todo: todo.into(),
        });
    }

    /// The entries in file and line order, each once.
    pub fn sorted(&self) -> Vec<Entry> {
        let mut e = self.entries.clone();
        e.sort();
        e.dedup();
        e
    }

    /// The report as printed: one line per entry, `file:line:col: what: todo`.
    pub fn lines(&self) -> Vec<String> {
        self.sorted()
            .iter()
            .map(|e| format!("{}: {}: {}", e.at, e.what, e.todo))
            .collect()
    }

    /// The report as written into the project.
    pub fn markdown(&self, source: &str) -> String {
        let mut s = format!(
            "# Imported from {source}\n\n\
             `operator-rs import` translated the Go project's PROJECT, API types and markers, RBAC\n\
             and webhook markers, samples and config/. What it did not translate is below, each at\n\
             its place in the Go project: go through the list, then delete this file.\n\n"
        );
        let entries = self.sorted();
        if entries.is_empty() {
            s.push_str("Nothing: every part of the Go project has its Rust form.\n");
        }
        for e in entries {
            s.push_str(&format!("- `{}`: {}: {}\n", e.at, e.what, e.todo));
        }
        s
    }
}
