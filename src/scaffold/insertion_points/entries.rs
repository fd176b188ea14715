//! The named entries a fragment inserted beside a marker, found again in the file: the Rust items
//! (`fn memcached_v1`, `mod memcached_v1_faults`) in the module that holds the marker, or the
//! YAML sequence entries (`- name: MEMCACHED_IMAGE`) of the sequence that holds it. A fragment
//! that declares the entries it owns (`owns:` in its front matter) replaces them when it is
//! inserted again in another variant, instead of adding a second copy (see [`super`], the insertion points that hold this module).
//!
//! An entry spans its own lines and the comment lines directly above it (doc comments and
//! attributes are part of a Rust item already); line numbers here are 0-based.

use std::ops::Range;

use syn::spanned::Spanned;

use super::{PREFIX, comment_token};

/// For each marker line of `markers`, the line ranges of the entries beside it named in `owns`,
/// in file order. A Rust file that does not parse has none (the check of generated Rust reports
/// it later).
pub fn owned(
    file: &str,
    path: &std::path::Path,
    markers: &[usize],
    owns: &[String],
) -> Vec<Vec<Range<usize>>> {
    let none = || vec![Vec::new(); markers.len()];
    // Most insertions add a new kind: none of its names is in the file yet, so no parse is needed.
    if owns.is_empty() || !owns.iter().any(|n| file.contains(n.as_str())) {
        return none();
    }
    let lines: Vec<&str> = file.lines().collect();
    let token = comment_token(path);
    let mut out = if token == "//" {
        let Ok(ast) = syn::parse_file(file) else {
            return none();
        };
        markers
            .iter()
            .map(|m| rust_items(&ast.items, *m, owns))
            .collect()
    } else {
        markers
            .iter()
            .map(|m| yaml_entries(&lines, *m, owns))
            .collect::<Vec<_>>()
    };
    for ranges in &mut out {
        for r in ranges.iter_mut() {
            r.start = with_comments_above(&lines, r.start, token);
        }
    }
    out
}

/// The owned items of the module whose body holds the marker line (the file's top level, or
/// an inline `mod { ... }`).
fn rust_items(items: &[syn::Item], marker: usize, owns: &[String]) -> Vec<Range<usize>> {
    for item in items {
        if let syn::Item::Mod(m) = item
            && let Some((brace, inner)) = &m.content
        {
            let span = brace.span.join();
            if span.start().line <= marker + 1 && marker < span.end().line {
                return rust_items(inner, marker, owns);
            }
        }
    }
    items
        .iter()
        .filter(|item| item_name(item).is_some_and(|n| owns.contains(&n)))
        .map(|item| {
            let span = item.span();
            span.start().line - 1..span.end().line
        })
        .collect()
}

/// The name an item declares, for the kinds of items a fragment inserts.
fn item_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Fn(i) => &i.sig.ident,
        syn::Item::Mod(i) => &i.ident,
        syn::Item::Struct(i) => &i.ident,
        syn::Item::Enum(i) => &i.ident,
        syn::Item::Const(i) => &i.ident,
        syn::Item::Static(i) => &i.ident,
        syn::Item::Type(i) => &i.ident,
        syn::Item::Trait(i) => &i.ident,
        syn::Item::Union(i) => &i.ident,
        syn::Item::Macro(i) => i.ident.as_ref()?,
        _ => return None,
    };
    Some(ident.to_string())
}

/// The owned entries of the block sequence that holds the marker: the lines at the marker's
/// indentation that start with `- ` and the more indented lines under each. An entry's name is
/// its `name:` (`- name: MEMCACHED_IMAGE`) or its scalar (`- memcached_editor_role.yaml`).
fn yaml_entries(lines: &[&str], marker: usize, owns: &[String]) -> Vec<Range<usize>> {
    let indent = indent_of(lines[marker]);
    let mut top = marker;
    while top > 0 && (lines[top - 1].trim().is_empty() || indent_of(lines[top - 1]) >= indent) {
        top -= 1;
    }
    let mut out = Vec::new();
    let mut i = top;
    while i < marker {
        let line = lines[i];
        let Some(item) = line[indent.min(line.len())..]
            .strip_prefix("- ")
            .filter(|_| indent_of(line) == indent)
        else {
            i += 1;
            continue;
        };
        let mut end = i + 1;
        while end < marker && !lines[end].trim().is_empty() && indent_of(lines[end]) > indent {
            end += 1;
        }
        let name = item.trim().strip_prefix("name:").unwrap_or(item);
        if owns.iter().any(|o| o == unquote(name.trim())) {
            out.push(i..end);
        }
        i = end;
    }
    out
}

fn unquote(s: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Move `start` up over the comment lines directly above it (not over a scaffold marker).
fn with_comments_above(lines: &[&str], mut start: usize, token: &str) -> usize {
    while start > 0 {
        let above = lines[start - 1].trim_start();
        let Some(comment) = above.strip_prefix(token) else {
            break;
        };
        if comment.trim_start().starts_with(PREFIX) {
            break;
        }
        start -= 1;
    }
    start
}

#[cfg(test)]
// The entries of one marker are a list of line ranges; most cases here expect one.
#[allow(clippy::single_range_in_vec_init)]
mod tests {
    use super::*;
    use std::path::Path;

    fn names(owns: &[&str]) -> Vec<String> {
        owns.iter().map(|s| s.to_string()).collect()
    }

    fn marker_lines(file: &str) -> Vec<usize> {
        file.lines()
            .enumerate()
            .filter(|(_, l)| l.contains(PREFIX))
            .map(|(i, _)| i)
            .collect()
    }

    #[test]
    fn rust_items_span_their_docs_attributes_and_comments() {
        let file = "use x;\n\n/// A.\n#[test]\nfn a() {\n    let s = \"}\";\n}\n\n// About b.\n/// B.\nmod a_faults {\n    fn a() {}\n}\n\nfn ab() {}\n// +operator-rs:scaffold:e2e\n";
        let got = owned(
            file,
            Path::new("tests/e2e.rs"),
            &marker_lines(file),
            &names(&["a", "a_faults"]),
        );
        // `fn a` inside the module is not at the marker's level; `ab` is not owned.
        assert_eq!(got, [vec![2..7, 8..13]]);
    }

    #[test]
    fn rust_markers_inside_a_module_see_that_module() {
        let file = "fn a() {}\nmod m {\n    fn a() {}\n    // +operator-rs:scaffold:x\n}\n";
        let got = owned(file, Path::new("a.rs"), &marker_lines(file), &names(&["a"]));
        assert_eq!(got, [vec![2..3]]);
    }

    #[test]
    fn nothing_is_parsed_when_no_owned_name_occurs() {
        // Not Rust at all: had it been parsed, it could not have been read.
        let file = "fn (((\n// +operator-rs:scaffold:x\n";
        let got = owned(
            file,
            Path::new("a.rs"),
            &marker_lines(file),
            &names(&["zz"]),
        );
        assert_eq!(got, [Vec::<Range<usize>>::new()]);
    }

    #[test]
    fn yaml_entries_of_the_marker_sequence() {
        let file = "spec:\n  env:\n  - name: OTHER\n    value: x\n  # The image.\n  - name: \"MEMCACHED_IMAGE\"\n    value: memcached:1.6\n  # +operator-rs:scaffold:managerenv\n  ports:\n  - name: MEMCACHED_IMAGE\n";
        let got = owned(
            file,
            Path::new("config/manager/manager.yaml"),
            &marker_lines(file),
            &names(&["MEMCACHED_IMAGE"]),
        );
        // The entry after the marker belongs to another sequence.
        assert_eq!(got, [vec![4..7]]);
        let list = "resources:\n- a.yaml\n- b.yaml\n# +operator-rs:scaffold:r\n";
        let got = owned(
            list,
            Path::new("k.yaml"),
            &marker_lines(list),
            &names(&["b.yaml"]),
        );
        assert_eq!(got, [vec![2..3]]);
    }
}
