//! Textual edits of one `#[kube(...)]` attribute: set or remove a key (`storage`, `served`,
//! `deprecated`) while every other byte of the attribute stays as the user wrote it (comments,
//! raw strings, nested lists, one line or one item a line); then, when `rustfmt` is at hand, the
//! attribute alone is laid out as rustfmt lays it out, so a rustfmt-clean file stays clean.

use std::ops::Range;
use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// Why an attribute could not be edited.
#[derive(Debug, thiserror::Error)]
pub enum AttrError {
    #[error("it is not a `#[kube(...)]` attribute")]
    NotKube,
    #[error("it does not lex: {0}")]
    Lex(String),
}

/// One `key`, `key = value` or `key(...)` of the attribute, by byte range in its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub key: String,
    /// The text after `=`, e.g. `false` or `"warning"` (None for a flag or a list).
    pub value: Option<String>,
    /// From the item's first token to its last.
    pub range: Range<usize>,
    /// The comma after the item, if any.
    pub comma: Option<Range<usize>>,
}

impl Item {
    /// The item's value as a bool: a bare flag is `true`; None for anything else.
    pub fn as_bool(&self) -> Option<bool> {
        match self.value.as_deref() {
            None => Some(true),
            Some("true") => Some(true),
            Some("false") => Some(false),
            Some(_) => None,
        }
    }
}

/// The items of an attribute's text (`#[kube(...)]`), and where its parentheses are.
#[derive(Debug)]
pub struct Parsed {
    pub items: Vec<Item>,
    /// Byte range of the text inside the parentheses.
    pub inner: Range<usize>,
}

/// Read the items of `text`, which must be exactly one `#[kube(...)]` attribute.
pub fn parse(text: &str) -> Result<Parsed, AttrError> {
    let tokens: TokenStream = text.parse().map_err(|e| AttrError::Lex(format!("{e}")))?;
    let mut it = tokens.into_iter();
    let (Some(TokenTree::Punct(p)), Some(TokenTree::Group(bracket)), None) =
        (it.next(), it.next(), it.next())
    else {
        return Err(AttrError::NotKube);
    };
    if p.as_char() != '#' || bracket.delimiter() != Delimiter::Bracket {
        return Err(AttrError::NotKube);
    }
    let mut inside = bracket.stream().into_iter();
    let (Some(TokenTree::Ident(name)), Some(TokenTree::Group(list)), None) =
        (inside.next(), inside.next(), inside.next())
    else {
        return Err(AttrError::NotKube);
    };
    if name != "kube" || list.delimiter() != Delimiter::Parenthesis {
        return Err(AttrError::NotKube);
    }
    let open = list.span_open().byte_range();
    let close = list.span_close().byte_range();
    let mut items = Vec::new();
    let mut current: Vec<TokenTree> = Vec::new();
    let mut flush = |current: &mut Vec<TokenTree>, comma: Option<Range<usize>>| {
        if let (Some(first), Some(last)) = (current.first(), current.last()) {
            let range = first.span().byte_range().start..last.span().byte_range().end;
            let key = match first {
                TokenTree::Ident(i) => i.to_string(),
                other => other.to_string(),
            };
            let value = match current.get(1) {
                Some(TokenTree::Punct(eq)) if eq.as_char() == '=' && current.len() > 2 => {
                    let start = current[2].span().byte_range().start;
                    Some(text[start..range.end].to_string())
                }
                _ => None,
            };
            items.push(Item {
                key,
                value,
                range,
                comma,
            });
        }
        current.clear();
    };
    for tt in list.stream() {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => {
                flush(&mut current, Some(p.span().byte_range()));
            }
            _ => current.push(tt),
        }
    }
    flush(&mut current, None);
    Ok(Parsed {
        items,
        inner: open.end..close.start,
    })
}

/// What to do with one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Drop every occurrence of the key.
    Remove(&'static str),
    /// The key's item becomes this text (e.g. `storage = false`, `deprecated`): its first
    /// occurrence is replaced, later ones dropped; appended when absent.
    Set(&'static str, String),
}

impl Change {
    fn key(&self) -> &'static str {
        match self {
            Change::Remove(k) | Change::Set(k, _) => k,
        }
    }
}

/// `text` (one `#[kube(...)]` attribute) with `changes` made, every other byte as it was: a
/// layout of one item a line stays so (a new item gets its own line, a removed item's line goes),
/// a one-line attribute stays on one line. None when nothing changes.
pub fn edit(text: &str, changes: &[Change]) -> Result<Option<String>, AttrError> {
    let parsed = parse(text)?;
    let items = &parsed.items;
    // Byte ranges to replace, with their new text, in any order (they never overlap).
    let mut splices: Vec<(Range<usize>, String)> = Vec::new();
    let mut appended: Vec<String> = Vec::new();
    let mut removed = vec![false; items.len()];
    for change in changes {
        let mut seen = false;
        for (i, item) in items.iter().enumerate() {
            if item.key != change.key() {
                continue;
            }
            match change {
                Change::Set(_, new) if !seen => {
                    if text[item.range.clone()] != **new {
                        splices.push((item.range.clone(), new.clone()));
                    }
                }
                _ => removed[i] = true,
            }
            seen = true;
        }
        if let (Change::Set(_, new), false) = (change, seen) {
            appended.push(new.clone());
        }
    }
    if splices.is_empty() && appended.is_empty() && !removed.contains(&true) {
        return Ok(None);
    }
    let kept: Vec<usize> = (0..items.len()).filter(|i| !removed[*i]).collect();
    for (i, item) in items.iter().enumerate().filter(|(i, _)| removed[*i]) {
        splices.push((removal_range(text, &parsed, i, &removed), String::new()));
        // The last item leaving its own line: the comma of the new last one goes too (rustfmt
        // writes none), unless the removed one had a trailing comma (the user's style, kept).
        if item.comma.is_none()
            && own_line(text, &parsed, i)
            && kept.last().is_some_and(|k| *k < i)
            && let Some(comma) = kept.last().and_then(|k| items[*k].comma.clone())
        {
            splices.push((comma, String::new()));
        }
    }
    if !appended.is_empty() {
        splices.push(append_splice(text, &parsed, &kept, &appended));
    }
    splices.sort_by_key(|(r, _)| (r.start, r.end));
    let mut out = String::with_capacity(text.len() + 32);
    let mut at = 0;
    for (range, new) in splices {
        if range.start < at {
            continue; // Inside a range already removed (`b` of `a, b, c` losing `b` and `c`).
        }
        out.push_str(&text[at..range.start]);
        out.push_str(&new);
        at = range.end;
    }
    out.push_str(&text[at..]);
    Ok(Some(out))
}

/// Where item `i` ends: after its comma, and when the next item (or the closing parenthesis)
/// is on a later line, at the end of its line (a trailing comment belongs to the item before it).
fn line_end(text: &str, parsed: &Parsed, i: usize) -> usize {
    let item = &parsed.items[i];
    let end = item.comma.as_ref().map_or(item.range.end, |c| c.end);
    let next = parsed
        .items
        .get(i + 1)
        .map_or(parsed.inner.end, |n| n.range.start);
    match text[end..next].find('\n') {
        Some(nl) => end + nl,
        None => end,
    }
}

/// Whether item `i` has its line(s) to itself (the one-item-a-line layout).
fn own_line(text: &str, parsed: &Parsed, i: usize) -> bool {
    let start = parsed.items[i].range.start;
    let line_start = text[..start].rfind('\n').map_or(0, |n| n + 1);
    text[line_start..start].trim().is_empty() && text[line_end(text, parsed, i)..].starts_with('\n')
}

/// The bytes that go with item `i`: when it has its own line, the whole line, from the line
/// break before it (its leading comments included) to the end of its line; else the item and
/// what separates it from the next item, or for the last item, from the last one kept (its
/// own trailing comma, if any, stays).
fn removal_range(text: &str, parsed: &Parsed, i: usize, removed: &[bool]) -> Range<usize> {
    let items = &parsed.items;
    let item = &items[i];
    if own_line(text, parsed, i) {
        let from = if i == 0 {
            parsed.inner.start
        } else {
            line_end(text, parsed, i - 1)
        };
        return from..line_end(text, parsed, i);
    }
    if let Some(next) = items.get(i + 1) {
        return item.range.start..next.range.start;
    }
    match (0..i).rev().find(|k| !removed[*k]) {
        Some(k) => items[k].range.end..item.range.end,
        None => item.range.start..item.comma.as_ref().map_or(item.range.end, |c| c.end),
    }
}

/// The splice that adds `new` items after the last kept one, in the attribute's layout.
fn append_splice(
    text: &str,
    parsed: &Parsed,
    kept: &[usize],
    new: &[String],
) -> (Range<usize>, String) {
    let Some(&last_index) = kept.last() else {
        let at = parsed.inner.start;
        return (at..at, new.join(", "));
    };
    let last = &parsed.items[last_index];
    let trailing_comma = last.comma.is_some();
    if !own_line(text, parsed, last_index) {
        let at = last.range.end;
        let added: String = new.iter().map(|n| format!(", {n}")).collect();
        return (at..at, added);
    }
    let line_start = text[..last.range.start].rfind('\n').map_or(0, |i| i + 1);
    let indent: String = text[line_start..last.range.start]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect();
    let at = line_end(text, parsed, last_index);
    // The last item gets a comma; each new one its line (the last one a comma only if the
    // attribute had a trailing comma).
    let mut added = String::new();
    for (i, n) in new.iter().enumerate() {
        let comma = if i + 1 < new.len() || trailing_comma {
            ","
        } else {
            ""
        };
        added.push_str(&format!("\n{indent}{n}{comma}"));
    }
    if trailing_comma {
        (at..at, added)
    } else {
        // `last // comment` → `last, // comment` then the new lines.
        let tail = &text[last.range.end..at];
        (last.range.end..at, format!(",{tail}{added}"))
    }
}

/// Rust source laid out by rustfmt (edition 2024, the configuration found from `config_dir`);
/// None when rustfmt is not installed or does not format it.
pub fn rustfmt_source(source: &str, config_dir: &Path) -> Option<String> {
    use std::io::Write;
    let mut child = std::process::Command::new("rustfmt")
        .args(["--edition", "2024", "--quiet"])
        .current_dir(config_dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(source.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8(out.stdout).ok()
}

/// Formats the files `files` (relative to `dir`, whose rustfmt configuration applies) in place
/// with one rustfmt; a file rustfmt cannot format, or every file when rustfmt is not installed,
/// stays as it is.
pub fn rustfmt_files(dir: &Path, files: &[&PathBuf]) {
    if files.is_empty() {
        return;
    }
    let _ = std::process::Command::new("rustfmt")
        .args(["--edition", "2024", "--quiet"])
        .args(files)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
}

/// `attr` (an attribute written `depth` blocks deep) laid out as rustfmt lays it out, using the
/// rustfmt configuration found from `config_dir`; None when rustfmt is not installed or does not
/// format it (then the caller keeps `attr` as it is).
pub fn rustfmt(attr: &str, depth: usize, indent: &str, config_dir: &Path) -> Option<String> {
    let mut snippet = String::new();
    for _ in 0..depth {
        snippet.push_str("mod m {\n");
    }
    snippet.push_str(attr);
    snippet.push_str("\nstruct S;\n");
    for _ in 0..depth {
        snippet.push_str("}\n");
    }
    let formatted = rustfmt_source(&snippet, config_dir)?;
    let start = formatted.find("#[")?;
    let end = formatted.rfind("struct S;")?;
    let line_start = formatted[..start].rfind('\n').map_or(0, |i| i + 1);
    // The same indentation as in the file, or rustfmt is configured otherwise than we guessed.
    if &formatted[line_start..start] != indent {
        return None;
    }
    Some(formatted[start..end].trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set_storage_false() -> Vec<Change> {
        vec![Change::Set("storage", "storage = false".into())]
    }

    fn edited(text: &str, changes: &[Change]) -> String {
        edit(text, changes).unwrap().expect("a change")
    }

    #[test]
    fn one_line_add_and_remove() {
        let a = r#"#[kube(group = "a.io", version = "v1", kind = "A")]"#;
        let b = edited(a, &set_storage_false());
        assert_eq!(
            b,
            r#"#[kube(group = "a.io", version = "v1", kind = "A", storage = false)]"#
        );
        assert_eq!(edited(&b, &[Change::Remove("storage")]), a);
        // In the middle: the separator after it goes with it.
        let c = r#"#[kube(group = "a.io", storage = false, version = "v1", kind = "A")]"#;
        assert_eq!(
            edited(c, &[Change::Remove("storage")]),
            r#"#[kube(group = "a.io", version = "v1", kind = "A")]"#
        );
    }

    #[test]
    fn one_line_trailing_comma() {
        let a = r#"#[kube(group = "a.io", version = "v1", kind = "A",)]"#;
        assert_eq!(
            edited(a, &set_storage_false()),
            r#"#[kube(group = "a.io", version = "v1", kind = "A", storage = false,)]"#
        );
        let b = r#"#[kube(group = "a.io", version = "v1", kind = "A", storage = false,)]"#;
        assert_eq!(
            edited(b, &[Change::Remove("storage")]),
            r#"#[kube(group = "a.io", version = "v1", kind = "A",)]"#
        );
        // Two at the end: both go.
        let c = r#"#[kube(group = "a.io", version = "v1", served = false, storage = false)]"#;
        assert_eq!(
            edited(c, &[Change::Remove("served"), Change::Remove("storage")]),
            r#"#[kube(group = "a.io", version = "v1")]"#
        );
    }

    #[test]
    fn vertical_add_keeps_one_item_a_line() {
        let a = "#[kube(\n    group = \"a.io\",\n    version = \"v1\",\n    kind = \"A\",\n    printcolumn(\n        name = \"Ready\",\n        json_path = r#\".status.conditions[?(@.type==\"Ready\")].status\"#\n    )\n)]";
        let b = edited(a, &set_storage_false());
        assert_eq!(
            b,
            "#[kube(\n    group = \"a.io\",\n    version = \"v1\",\n    kind = \"A\",\n    printcolumn(\n        name = \"Ready\",\n        json_path = r#\".status.conditions[?(@.type==\"Ready\")].status\"#\n    ),\n    storage = false\n)]"
        );
        // And back: the line goes, and the comma the new last item had.
        assert_eq!(edited(&b, &[Change::Remove("storage")]), a);
    }

    #[test]
    fn vertical_with_trailing_comma_and_comments() {
        let a = "#[kube(\n    group = \"a.io\", // the group\n    // Stored elsewhere.\n    storage = false,\n    version = \"v1\",\n    kind = \"A\", /* last */\n)]";
        // The removed item's leading comment goes with it; the group's trailing one stays.
        assert_eq!(
            edited(a, &[Change::Remove("storage")]),
            "#[kube(\n    group = \"a.io\", // the group\n    version = \"v1\",\n    kind = \"A\", /* last */\n)]"
        );
        let b = "#[kube(\n    group = \"a.io\",\n    version = \"v1\",\n    kind = \"A\" // the kind\n)]";
        assert_eq!(
            edited(b, &[Change::Set("served", "served = false".into())]),
            "#[kube(\n    group = \"a.io\",\n    version = \"v1\",\n    kind = \"A\", // the kind\n    served = false\n)]"
        );
    }

    #[test]
    fn explicit_true_and_replacement() {
        let a = r#"#[kube(group = "a.io", version = "v1", kind = "A", storage = true)]"#;
        assert_eq!(
            edited(a, &set_storage_false()),
            r#"#[kube(group = "a.io", version = "v1", kind = "A", storage = false)]"#
        );
        let p = parse(a).unwrap();
        assert_eq!(p.items[3].as_bool(), Some(true));
        // Already so: nothing to do.
        let b = r#"#[kube(group = "a.io", version = "v1", kind = "A", storage = false)]"#;
        assert_eq!(edit(b, &set_storage_false()).unwrap(), None);
        assert_eq!(edit(a, &[Change::Remove("served")]).unwrap(), None);
    }

    #[test]
    fn deprecated_flag_warning_and_raw_strings() {
        let a =
            r##"#[kube(group = "a.io", version = "v1", kind = "A", deprecated = r#"use "v2""#)]"##;
        let p = parse(a).unwrap();
        assert_eq!(p.items[3].value.as_deref(), Some(r##"r#"use "v2""#"##));
        assert_eq!(
            edited(a, &[Change::Set("deprecated", "deprecated".into())]),
            r#"#[kube(group = "a.io", version = "v1", kind = "A", deprecated)]"#
        );
        assert_eq!(
            edited(a, &[Change::Remove("deprecated")]),
            r#"#[kube(group = "a.io", version = "v1", kind = "A")]"#
        );
    }

    #[test]
    fn duplicates_collapse_to_one_and_several_changes_compose() {
        let a = r#"#[kube(storage = false, group = "a.io", version = "v1", kind = "A", storage = false)]"#;
        assert_eq!(
            edited(
                a,
                &[
                    Change::Set("storage", "storage = true".into()),
                    Change::Set("served", "served = false".into()),
                    Change::Set("deprecated", "deprecated = \"old\"".into()),
                ]
            ),
            r#"#[kube(storage = true, group = "a.io", version = "v1", kind = "A", served = false, deprecated = "old")]"#
        );
    }

    #[test]
    fn refuses_what_is_not_a_kube_attribute() {
        assert!(matches!(
            parse("#[serde(rename = \"x\")]"),
            Err(AttrError::NotKube)
        ));
        assert!(matches!(parse("#[kube(\"open)]"), Err(AttrError::Lex(_))));
    }

    #[test]
    fn rustfmt_lays_out_the_attribute_alone() {
        let long = r#"#[kube(group = "a.example.com", version = "v1", kind = "E", namespaced, storage = false, served = false)]"#;
        let Some(out) = rustfmt(long, 1, "    ", Path::new(".")) else {
            println!("SKIP rustfmt_lays_out_the_attribute_alone: rustfmt is not installed");
            return;
        };
        assert_eq!(
            out,
            "#[kube(\n        group = \"a.example.com\",\n        version = \"v1\",\n        kind = \"E\",\n        namespaced,\n        storage = false,\n        served = false\n    )]"
        );
        // A guessed depth that does not give the file's indentation is refused.
        assert_eq!(rustfmt(long, 1, "\t", Path::new(".")), None);
    }
}
