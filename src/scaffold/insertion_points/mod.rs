//! Insertion points: the named marker lines (`// +operator-rs:scaffold:<name>` in Rust,
//! `# +operator-rs:scaffold:<name>` in YAML, Makefiles and Dockerfiles) before which later
//! commands insert code, as kubebuilder's `+kubebuilder:scaffold:` markers (not the
//! `+kubebuilder:` markers the generators read: those are [`crate::markers`]). Inserting is idempotent: a fragment already present is not
//! added twice, so re-running a command is always safe.

pub(super) mod entries;

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

/// The (0-based) lines of `file` that are the marker `name`. In Rust, only a `//` comment on a
/// line of its own is (as [`crate::markers`] finds them): a marker line inside a string or a block
/// comment is text. A Rust file that does not lex (an unclosed literal) is read line by line, and
/// left to the generated-Rust check to refuse.
fn marker_lines(file: &str, path: &Path, name: &str) -> Vec<usize> {
    let token = comment_token(path);
    let by_line = || {
        file.split_inclusive('\n')
            .enumerate()
            .filter(|(_, line)| is_marker(line, token, name))
            .map(|(i, _)| i)
            .collect()
    };
    if token != "//" {
        return by_line();
    }
    match crate::markers::line_comments(file) {
        Ok(comments) => comments
            .iter()
            .filter(|c| c.own_line && is_marker(c.text, token, name))
            .map(|c| c.line - 1)
            .collect(),
        Err(_) => by_line(),
    }
}

/// One fragment to insert at a marker.
#[derive(Debug, Clone, Copy)]
pub struct Fragment<'a> {
    /// The marker's name (`controllers` for `+operator-rs:scaffold:controllers`).
    pub marker: &'a str,
    /// The rendered fragment.
    pub text: &'a str,
    /// The names of the entries (Rust items, YAML sequence entries) the fragment owns in every
    /// variant it renders: an earlier variant of them is replaced, not added to.
    pub owns: &'a [String],
}

/// The outcome of one insertion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inserted {
    /// The fragment was added, or replaced its earlier variant; here is the new file.
    Added(String),
    /// The fragment was already there; nothing changed.
    AlreadyPresent,
    /// The file has no such marker (and no copy of the fragment).
    NoMarker,
    /// The marker is in the file more than once, so where the fragment goes is ambiguous: the
    /// refusal, naming each place (`file:line:col`), the marker and the fix.
    Ambiguous(String),
}

/// The refusal of a marker found on several `lines` (0-based) of `file`: every place, the rule
/// and the fix; the command's flags are not at fault, and the message says so.
fn ambiguous(file: &str, path: &Path, marker: &str, lines: &[usize]) -> String {
    let text: Vec<&str> = file.split('\n').collect();
    let places: Vec<String> = (lines.iter())
        .map(|&i| {
            let line = text.get(i).copied().unwrap_or("");
            let col = line.len() - line.trim_start().len() + 1;
            format!("{}:{}:{col}", path.display(), i + 1)
        })
        .collect();
    format!(
        "{}: the marker `{} {PREFIX}{marker}` is there {} times, at {}: operator-rs inserts new entries before it, and one marker per file says where (the command's flags are not at fault). Nothing was written.\n  \
         delete all but one of those lines (keep the one where new entries belong), then run the command again",
        path.display(),
        comment_token(path),
        lines.len(),
        places.join(" and ")
    )
}

/// Insert the fragment before the line of `file` that is its marker, indented like the marker
/// (a marker found twice is refused: [`Inserted::Ambiguous`]). A fragment that owns entries and finds them beside the marker replaces them in place
/// (a re-run in another variant: `--image` on a plain kind, a controller for a kind that had
/// none); otherwise a fragment whose non-blank lines already appear in the file (in order,
/// contiguous, whitespace-trimmed) is not added again.
pub fn insert(file: &str, path: &Path, fragment: &Fragment<'_>) -> Inserted {
    let frag_lines: Vec<&str> = fragment.text.lines().map(str::trim_end).collect();
    let wanted: Vec<&str> = frag_lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    if wanted.is_empty() {
        return Inserted::AlreadyPresent;
    }
    let lines: Vec<&str> = file.split_inclusive('\n').collect();
    let marker_at = marker_lines(file, path, fragment.marker);
    if marker_at.len() > 1 {
        return Inserted::Ambiguous(ambiguous(file, path, fragment.marker, &marker_at));
    }
    let owned = entries::owned(file, path, &marker_at, fragment.owns);
    if owned.iter().any(|o| !o.is_empty()) {
        if owned.iter().all(|o| non_blank(&lines, o) == wanted) {
            return Inserted::AlreadyPresent;
        }
        return Inserted::Added(replace(&lines, &marker_at, &owned, &frag_lines));
    }
    if contains_run(file, &wanted) {
        return Inserted::AlreadyPresent;
    }
    if marker_at.is_empty() {
        return Inserted::NoMarker;
    }
    let mut out = String::with_capacity(file.len() + fragment.text.len() + 64);
    for (i, line) in lines.iter().enumerate() {
        if marker_at.contains(&i) {
            push_indented(&mut out, &frag_lines, indent_of(line));
        }
        out.push_str(line);
    }
    Inserted::Added(out)
}

/// Remove the entries named in `owns` from beside the marker (a fragment whose condition no
/// longer holds: `--image` dropped by a re-run); `None` when there are none.
pub fn remove(file: &str, path: &Path, marker: &str, owns: &[String]) -> Option<String> {
    let lines: Vec<&str> = file.split_inclusive('\n').collect();
    let marker_at = marker_lines(file, path, marker);
    let owned = entries::owned(file, path, &marker_at, owns);
    owned
        .iter()
        .any(|o| !o.is_empty())
        .then(|| replace(&lines, &marker_at, &owned, &[]))
}

/// The file with each marker's owned entries taken out (with the blank lines between two of
/// them) and the fragment's lines, less its leading and trailing blank lines (those of the
/// first insertion are still there), put where the first one was. A marker with no owned entry
/// gets the whole fragment before it, as a first insertion.
fn replace(
    lines: &[&str],
    marker_at: &[usize],
    owned: &[Vec<std::ops::Range<usize>>],
    frag_lines: &[&str],
) -> String {
    let first = frag_lines.iter().position(|l| !l.trim().is_empty());
    let last = frag_lines.iter().rposition(|l| !l.trim().is_empty());
    let core = match (first, last) {
        (Some(f), Some(l)) => &frag_lines[f..=l],
        _ => &[],
    };
    let mut dropped = vec![false; lines.len()];
    let mut core_at = Vec::new();
    let mut whole_at = Vec::new();
    for (marker, ranges) in marker_at.iter().zip(owned) {
        let Some(head) = ranges.first() else {
            whole_at.push(*marker);
            continue;
        };
        core_at.push((head.start, indent_of(lines[*marker])));
        for (n, r) in ranges.iter().enumerate() {
            dropped[r.clone()].iter_mut().for_each(|d| *d = true);
            if let Some(next) = ranges.get(n + 1)
                && lines[r.end..next.start].iter().all(|l| l.trim().is_empty())
            {
                dropped[r.end..next.start]
                    .iter_mut()
                    .for_each(|d| *d = true);
            }
        }
    }
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some((_, indent)) = core_at.iter().find(|(at, _)| *at == i) {
            push_indented(&mut out, core, indent);
        }
        if whole_at.contains(&i) {
            push_indented(&mut out, frag_lines, indent_of(line));
        }
        if !dropped[i] {
            out.push_str(line);
        }
    }
    out
}

/// Push `frag_lines` with `indent` before each non-blank one (keeping the fragment's own
/// relative indentation under the marker's).
fn push_indented(out: &mut String, frag_lines: &[&str], indent: &str) {
    for f in frag_lines {
        if !f.trim().is_empty() {
            out.push_str(indent);
            out.push_str(f);
        }
        out.push('\n');
    }
}

/// The whitespace a line starts with.
fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// The non-blank lines of the ranges, trimmed.
fn non_blank<'a>(lines: &[&'a str], ranges: &[std::ops::Range<usize>]) -> Vec<&'a str> {
    ranges
        .iter()
        .flat_map(|r| lines[r.clone()].iter())
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect()
}

/// `file` without the fragment `text` an earlier insertion put there: the lines of its first
/// whole run (its non-blank lines, trimmed, contiguous apart from blank lines) and the blank
/// lines between them; `None` when the file no longer holds it as inserted.
pub fn remove_text(file: &str, text: &str) -> Option<String> {
    let wanted: Vec<&str> = (text.lines().map(str::trim))
        .filter(|l| !l.is_empty())
        .collect();
    let lines: Vec<&str> = file.split_inclusive('\n').collect();
    let non_blank: Vec<usize> = (0..lines.len())
        .filter(|&i| !lines[i].trim().is_empty())
        .collect();
    if wanted.is_empty() {
        return None;
    }
    let start = non_blank.windows(wanted.len()).find(|w| {
        w.iter()
            .zip(&wanted)
            .all(|(&i, want)| lines[i].trim() == *want)
    })?;
    let (first, last) = (start[0], start[wanted.len() - 1]);
    let mut out = String::with_capacity(file.len());
    for (i, line) in lines.iter().enumerate() {
        if i < first || i > last {
            out.push_str(line);
        }
    }
    Some(out)
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

    #[test]
    fn remove_text_takes_out_a_fragment_as_inserted_or_says_it_is_gone() {
        let file = "pub mod ship;\n\n// API version v1.\n    pub mod v1;\n// +operator-rs:scaffold:versions\n";
        assert_eq!(
            remove_text(file, "// API version v1.\npub mod v1;\n").as_deref(),
            Some("pub mod ship;\n\n// +operator-rs:scaffold:versions\n")
        );
        assert_eq!(remove_text(file, "pub mod v2;\n"), None);
        assert_eq!(remove_text(file, "\n"), None);
    }

    /// Insert a fragment that owns no entries.
    fn insert_text(file: &str, path: &Path, marker: &str, text: &str) -> Inserted {
        let fragment = Fragment {
            marker,
            text,
            owns: &[],
        };
        insert(file, path, &fragment)
    }

    const MOD_RS: &str = "pub fn all() -> Vec<R> {\n    vec![\n        // +operator-rs:scaffold:controllers\n    ]\n}\n";

    #[test]
    fn inserts_before_marker_with_its_indent() {
        let Inserted::Added(out) = insert_text(
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

    /// A marker line inside a string or a block comment is text: nothing is inserted into it.
    #[test]
    fn markers_inside_literals_and_block_comments_are_text() {
        let file = "const HELP: &str = r#\"\n        // +operator-rs:scaffold:controllers\n\"#;\n/*\n        // +operator-rs:scaffold:controllers\n*/\n".to_string() + MOD_RS;
        let Inserted::Added(out) = insert_text(
            &file,
            Path::new("src/controllers/mod.rs"),
            "controllers",
            "a::run(),\n",
        ) else {
            panic!("not added")
        };
        assert_eq!(out.matches("a::run()").count(), 1, "{out}");
        assert!(
            out.ends_with(
                "        a::run(),\n        // +operator-rs:scaffold:controllers\n    ]\n}\n"
            ),
            "{out}"
        );
        let only_text = "const HELP: &str = \"\n// +operator-rs:scaffold:controllers\n\";\n";
        assert_eq!(
            insert_text(
                only_text,
                Path::new("src/a.rs"),
                "controllers",
                "a::run(),\n"
            ),
            Inserted::NoMarker
        );
    }

    #[test]
    fn insertion_is_idempotent() {
        let p = Path::new("x.rs");
        let Inserted::Added(once) = insert_text(MOD_RS, p, "controllers", "a::run(),\n") else {
            panic!()
        };
        assert_eq!(
            insert_text(&once, p, "controllers", "a::run(),\n"),
            Inserted::AlreadyPresent
        );
        // A second, different fragment goes after the first, before the marker.
        let Inserted::Added(twice) = insert_text(&once, p, "controllers", "b::run(),\n") else {
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
        let Inserted::Added(out) = insert_text(file, p, "crdkustomizeresource", "- b.yaml") else {
            panic!()
        };
        assert_eq!(
            out,
            "resources:\n- a.yaml\n- b.yaml\n# +operator-rs:scaffold:crdkustomizeresource\n"
        );
        // The Rust comment token is not a marker in YAML, and another marker name is not this one.
        assert_eq!(
            insert_text("// +operator-rs:scaffold:x\n", p, "x", "- c"),
            Inserted::NoMarker
        );
        assert_eq!(insert_text(file, p, "other", "- c"), Inserted::NoMarker);
    }

    #[test]
    fn multi_line_fragment_keeps_relative_indent() {
        let file = "fn f() {\n    // +operator-rs:scaffold:body\n}\n";
        let Inserted::Added(out) =
            insert_text(file, Path::new("a.rs"), "body", "if x {\n    y();\n}\n")
        else {
            panic!()
        };
        assert_eq!(
            out,
            "fn f() {\n    if x {\n        y();\n    }\n    // +operator-rs:scaffold:body\n}\n"
        );
    }
}

#[cfg(test)]
mod variant_tests {
    use super::*;

    const E2E: &str = "use x;\n\nfn helper() {}\n\n// +operator-rs:scaffold:e2e\n";

    fn owns(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn added(file: &str, path: &str, fragment: &Fragment<'_>) -> String {
        match insert(file, Path::new(path), fragment) {
            Inserted::Added(out) => out,
            other => panic!("{other:?} for\n{}", fragment.text),
        }
    }

    /// A kind's e2e block in three variants: with a namespace test, without, with a module.
    const NAMESPACED: &str = "/// A.\n#[test]\nfn a_v1() {\n    run(\"}\");\n}\n\n/// A in a namespace.\nfn a_v1_ns_deletion() {}\n\n";
    const CLUSTER: &str = "/// A, cluster-wide.\nfn a_v1() {}\n\n";
    const FAULTS: &str =
        "/// A.\nfn a_v1() {}\n\n// Faults.\nmod a_v1_faults {\n    fn a_v1() {}\n}\n\n";

    #[test]
    fn a_variant_replaces_the_entries_of_another_in_place() {
        let names = owns(&["a_v1", "a_v1_ns_deletion", "a_v1_faults"]);
        let other = owns(&["a_v1_foo_v1"]);
        let frag = |text| Fragment {
            marker: "e2e",
            text,
            owns: &names,
        };
        let b = "/// A v1 Foo.\nfn a_v1_foo_v1() {}\n\n";
        let other_frag = Fragment {
            marker: "e2e",
            text: b,
            owns: &other,
        };
        for (first, then) in [
            (NAMESPACED, CLUSTER),
            (CLUSTER, NAMESPACED),
            (NAMESPACED, FAULTS),
            (FAULTS, CLUSTER),
        ] {
            // Another kind after it, whose names start with this kind's: left alone.
            let before = added(&added(E2E, "e2e.rs", &frag(first)), "e2e.rs", &other_frag);
            let after = added(&before, "e2e.rs", &frag(then));
            let fresh = added(&added(E2E, "e2e.rs", &frag(then)), "e2e.rs", &other_frag);
            assert_eq!(after, fresh, "{first:?} then {then:?}");
            assert_eq!(
                insert(&after, Path::new("e2e.rs"), &frag(then)),
                Inserted::AlreadyPresent
            );
        }
    }

    #[test]
    fn a_yaml_entry_is_replaced_and_removed() {
        let manager = "      env:\n      - name: KEEP\n        value: a\n      # +operator-rs:scaffold:managerenv\n      ports: []\n";
        let names = owns(&["MEMCACHED_IMAGE"]);
        let env = |image: &str| {
            format!(
                "# The image of the Pods the Memcached controller runs.\n- name: MEMCACHED_IMAGE\n  value: {image}\n"
            )
        };
        let (old, new) = (env("memcached:1.6"), env("\"memcached:1.7\""));
        let frag = |text| Fragment {
            marker: "managerenv",
            text,
            owns: &names,
        };
        let p = "config/manager/manager.yaml";
        let once = added(manager, p, &frag(&old));
        let changed = added(&once, p, &frag(&new));
        assert_eq!(changed, added(manager, p, &frag(&new)));
        assert!(!changed.contains("1.6"), "{changed}");
        assert_eq!(
            remove(&changed, Path::new(p), "managerenv", &names).as_deref(),
            Some(manager)
        );
        assert_eq!(remove(manager, Path::new(p), "managerenv", &names), None);
    }
}
