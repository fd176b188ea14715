//! Markers: the named lines (`// +operator-rs:scaffold:<name>` in Rust, `# +operator-rs:scaffold:<name>`
//! in YAML, Makefiles and Dockerfiles) before which later commands insert code, as kubebuilder's
//! `+kubebuilder:scaffold:` markers. Inserting is idempotent: a fragment already present is not
//! added twice, so re-running a command is always safe.

use std::path::Path;

/// The text every marker carries after its comment token.
pub const PREFIX: &str = "+operator-rs:scaffold:";

/// The comment token of a file, by its name.
pub fn comment_token(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("rs") => "//",
        _ => "#",
    }
}

/// Whether `line` is the marker `name` for a file commented with `token`.
pub fn is_marker(line: &str, token: &str, name: &str) -> bool {
    line.trim()
        .strip_prefix(token)
        .map(|rest| rest.trim() == format!("{PREFIX}{name}"))
        .unwrap_or(false)
}

/// The outcome of one insertion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inserted {
    /// The fragment was added; here is the new file.
    Added(String),
    /// The fragment was already there; nothing changed.
    AlreadyPresent,
    /// The file has no such marker (and no copy of the fragment).
    NoMarker,
}

/// Insert `fragment` before every line of `file` that is the marker `name`, indented like the
/// marker. A fragment whose non-blank lines already appear in the file (in order, contiguous,
/// whitespace-trimmed) is not added again.
pub fn insert(file: &str, path: &Path, name: &str, fragment: &str) -> Inserted {
    let token = comment_token(path);
    let frag_lines: Vec<&str> = fragment.lines().map(str::trim_end).collect();
    let wanted: Vec<&str> = frag_lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    if wanted.is_empty() || contains_run(file, &wanted) {
        return Inserted::AlreadyPresent;
    }
    let mut out = String::with_capacity(file.len() + fragment.len() + 64);
    let mut found = false;
    for line in file.split_inclusive('\n') {
        if is_marker(line, token, name) {
            found = true;
            let indent: String = line.chars().take_while(|c| c.is_whitespace()).collect();
            for f in &frag_lines {
                if f.trim().is_empty() {
                    out.push('\n');
                } else {
                    // Keep the fragment's own relative indentation under the marker's.
                    out.push_str(&indent);
                    out.push_str(f);
                    out.push('\n');
                }
            }
        }
        out.push_str(line);
    }
    if found {
        Inserted::Added(out)
    } else {
        Inserted::NoMarker
    }
}

fn contains_run(file: &str, wanted: &[&str]) -> bool {
    let lines: Vec<&str> = file
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.windows(wanted.len()).any(|w| w == wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOD_RS: &str = "pub fn all() -> Vec<R> {\n    vec![\n        // +operator-rs:scaffold:controllers\n    ]\n}\n";

    #[test]
    fn inserts_before_marker_with_its_indent() {
        let Inserted::Added(out) = insert(
            MOD_RS,
            Path::new("src/controllers/mod.rs"),
            "controllers",
            "a::run(),\n",
        ) else {
            panic!("not added")
        };
        assert_eq!(
            out,
            "pub fn all() -> Vec<R> {\n    vec![\n        a::run(),\n        // +operator-rs:scaffold:controllers\n    ]\n}\n"
        );
    }

    #[test]
    fn insertion_is_idempotent() {
        let p = Path::new("x.rs");
        let Inserted::Added(once) = insert(MOD_RS, p, "controllers", "a::run(),\n") else {
            panic!()
        };
        assert_eq!(
            insert(&once, p, "controllers", "a::run(),\n"),
            Inserted::AlreadyPresent
        );
        // A second, different fragment goes after the first, before the marker.
        let Inserted::Added(twice) = insert(&once, p, "controllers", "b::run(),\n") else {
            panic!()
        };
        let a = twice.find("a::run").unwrap();
        let b = twice.find("b::run").unwrap();
        let m = twice.find("+operator-rs").unwrap();
        assert!(a < b && b < m, "{twice}");
    }

    #[test]
    fn yaml_markers_use_hash_comments() {
        let file = "resources:\n- a.yaml\n# +operator-rs:scaffold:crdkustomizeresource\n";
        let p = Path::new("config/crd/kustomization.yaml");
        let Inserted::Added(out) = insert(file, p, "crdkustomizeresource", "- b.yaml") else {
            panic!()
        };
        assert_eq!(
            out,
            "resources:\n- a.yaml\n- b.yaml\n# +operator-rs:scaffold:crdkustomizeresource\n"
        );
        // The Rust comment token is not a marker in YAML, and another marker name is not this one.
        assert_eq!(
            insert("// +operator-rs:scaffold:x\n", p, "x", "- c"),
            Inserted::NoMarker
        );
        assert_eq!(insert(file, p, "other", "- c"), Inserted::NoMarker);
    }

    #[test]
    fn multi_line_fragment_keeps_relative_indent() {
        let file = "fn f() {\n    // +operator-rs:scaffold:body\n}\n";
        let Inserted::Added(out) = insert(file, Path::new("a.rs"), "body", "if x {\n    y();\n}\n")
        else {
            panic!()
        };
        assert_eq!(
            out,
            "fn f() {\n    if x {\n        y();\n    }\n    // +operator-rs:scaffold:body\n}\n"
        );
    }
}
