//! Markers in Rust source (`// +kubebuilder:rbac:...`, `// +kubebuilder:webhook:...`): which
//! comments are markers, where they are, and how their `key=value` arguments read. `rbac` and
//! `webhookgen` find their markers here, and `scaffold` its `// +operator-rs:scaffold:` lines.
//!
//! A marker is what controller-gen takes for one in Go (controller-tools `pkg/markers/collect.go`,
//! `isMarkerComment`): a `//` comment whose text starts with `+`, never a `/* */` comment. Go has
//! no doc-comment syntax of its own, so `///` and `//!` count as `//` here; `/** */` and `/*! */`
//! are block comments and do not. [`line_comments`] lexes the file as rustc does (strings with
//! their escapes, byte and C strings, raw strings with any number of `#`, character literals
//! apart from lifetimes and labels, nested block comments), so no text inside a literal or a block
//! comment (code commented out) is ever read as a marker. A marker is a comment on a line of its
//! own: one after code on its line is refused, with where to put it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::suggest::{osa_distance, suggest};
use crate::syntax::lex::{block_comment_end, is_ident_continue, quoted_end, raw_string_end};
use crate::workspace::SourceTree;

/// A list item with no text (`groups=`, `verbs=get;;list`), as marker messages name it.
const EMPTY_VALUE: &str = "empty value; give one";

/// A `//` comment (`///` and `//!` too) of a Rust file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineComment<'a> {
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters: where its `//` is.
    pub column: usize,
    /// The comment from its `//` to the end of its line (without a `\r` before the `\n`).
    pub text: &'a str,
    /// Nothing but whitespace before it on its line.
    pub own_line: bool,
}

impl<'a> LineComment<'a> {
    /// The text after `//` (and after the `/` or `!` of a doc comment), trimmed; a comment that
    /// comments out another (`// // +kubebuilder:...`) says `// +kubebuilder:...`, not a marker.
    pub fn body(&self) -> &'a str {
        let rest = &self.text[2..];
        rest.strip_prefix(['/', '!']).unwrap_or(rest).trim()
    }

    /// The 1-based column of [`Self::body`]'s first character.
    fn body_column(&self) -> usize {
        let body = self.body();
        let offset = body.as_ptr() as usize - self.text.as_ptr() as usize;
        self.column + self.text[..offset].chars().count()
    }
}

/// A Rust file that cannot be lexed to its end: a literal or block comment that never closes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "this {what} is never closed, so the file cannot be searched for markers (nor compiled); close it"
)]
pub struct LexError {
    /// What never closes: `string literal`, `block comment`...
    pub what: &'static str,
    /// The line where it opens, from 1.
    pub line: usize,
    /// The column where it opens, from 1.
    pub column: usize,
}

/// Every `//` comment of `source`, in order, lexed as rustc lexes: none inside a string, a raw
/// string, a character literal or a block comment.
pub fn line_comments(source: &str) -> Result<Vec<LineComment<'_>>, LexError> {
    let bytes = source.as_bytes();
    let mut comments = Vec::new();
    let (mut line, mut line_start, mut i) = (1, 0, 0);
    while i < bytes.len() {
        let column = || source[line_start..i].chars().count() + 1;
        let unclosed = |what| LexError {
            what,
            line,
            column: column(),
        };
        let end = match bytes[i] {
            b'\n' => {
                line += 1;
                line_start = i + 1;
                i += 1;
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = bytes[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |n| i + n);
                comments.push(LineComment {
                    line,
                    column: column(),
                    text: source[i..end].strip_suffix('\r').unwrap_or(&source[i..end]),
                    own_line: source[line_start..i].trim().is_empty(),
                });
                end
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                block_comment_end(bytes, i).ok_or_else(|| unclosed("block comment"))?
            }
            // `b"` and `c"` too: their prefix was lexed as a word.
            b'"' => quoted_end(bytes, i + 1, b'"').ok_or_else(|| unclosed("string literal"))?,
            b'\'' => match char_literal_end(source, i) {
                Ok(Some(end)) => end,
                // A lifetime or a label: the quote alone; its name is a word.
                Ok(None) => i + 1,
                Err(()) => return Err(unclosed("character literal")),
            },
            b if is_ident_continue(b) => {
                let word_end = i + bytes[i..]
                    .iter()
                    .position(|&b| !is_ident_continue(b))
                    .unwrap_or(bytes.len() - i);
                let hashes = bytes[word_end..].iter().take_while(|&&b| b == b'#').count();
                let raw = matches!(&bytes[i..word_end], b"r" | b"br" | b"cr")
                    && bytes.get(word_end + hashes) == Some(&b'"');
                if raw {
                    raw_string_end(bytes, word_end + hashes + 1, hashes)
                        .ok_or_else(|| unclosed("raw string literal"))?
                } else {
                    word_end
                }
            }
            _ => i + 1,
        };
        for (k, &b) in bytes[i..end].iter().enumerate() {
            if b == b'\n' {
                line += 1;
                line_start = i + k + 1;
            }
        }
        i = end;
    }
    Ok(comments)
}

/// At the `'` at `quote`: the end of a character literal (`'a'`, `'\''`, `'\u{1F600}'`, `b'x'`
/// after its `b`), `None` for a lifetime or a label (`'a`, `'static`), `Err` for an escape that
/// never closes.
fn char_literal_end(source: &str, quote: usize) -> Result<Option<usize>, ()> {
    let bytes = source.as_bytes();
    if bytes.get(quote + 1) == Some(&b'\\') {
        return quoted_end(bytes, quote + 1, b'\'').map(Some).ok_or(());
    }
    let Some(c) = source[quote + 1..].chars().next() else {
        return Ok(None);
    };
    let after = quote + 1 + c.len_utf8();
    Ok((c != '\'' && c != '\n' && bytes.get(after) == Some(&b'\'')).then_some(after + 1))
}

/// A place in a source file, printed `file:line:column` (1-based) as every source message prints it.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Site {
    /// The file, as the reader was given it (relative to the project root).
    pub file: PathBuf,
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1.
    pub column: usize,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

/// The marker a reader looks for: `+kubebuilder:<name>:`.
#[derive(Debug, Clone, Copy)]
pub struct MarkerName {
    /// `rbac`, `webhook`.
    pub name: &'static str,
    /// What its markers are, for messages: `RBAC`, `webhook`.
    pub what: &'static str,
    /// A whole marker comment, for messages.
    pub example: &'static str,
}

impl MarkerName {
    /// `+kubebuilder:<name>:`.
    pub fn prefix(&self) -> String {
        format!("+kubebuilder:{}:", self.name)
    }
}

/// A marker found: where its `+` is, the comment as written, the text after its prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Where the marker's `+` is.
    pub site: Site,
    /// The whole comment, as written.
    pub comment: String,
    /// The text after `+kubebuilder:<name>:`, the marker's `key=value` arguments.
    pub args: String,
}

impl Found {
    /// A fault of this marker.
    pub fn problem(&self, message: impl Into<String>) -> Problem {
        Problem {
            site: self.site.clone(),
            comment: self.comment.clone(),
            message: message.into(),
        }
    }
}

/// A marker that cannot be read (or a file that cannot be searched for markers): where, what
/// was written there, what is wrong and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where the marker (or the fault) is.
    pub site: Site,
    /// The comment as written (empty when the fault is not a comment).
    pub comment: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// Fails, listing every problem, when a marker of `what` (`RBAC`, `webhook`) cannot be read: a
/// generator then writes nothing.
pub fn refuse_unreadable(what: &str, problems: &[Problem]) -> Result<()> {
    if problems.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = problems.iter().map(ToString::to_string).collect();
    anyhow::bail!(
        "{} {what} marker{} cannot be read; nothing was generated:\n{}",
        problems.len(),
        if problems.len() == 1 { "" } else { "s" },
        list.join("\n")
    )
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.site, self.message)?;
        if !self.comment.is_empty() {
            write!(f, "\n    {}", self.comment)?;
        }
        Ok(())
    }
}

/// The markers `marker` of every `.rs` file under `src/` (files by path, then in order), and a
/// problem for each misspelt one, each one after code, and each file that cannot be lexed.
pub fn collect(tree: &dyn SourceTree, marker: &MarkerName) -> Result<(Vec<Found>, Vec<Problem>)> {
    let mut files = tree
        .files_under(Path::new("src"))
        .context("listing the Rust sources under src/")?;
    files.sort();
    let (mut found, mut problems) = (Vec::new(), Vec::new());
    for path in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
    {
        let Some(text) = tree.read(path)?
        // the tree's errors name the file (and a line for bytes not UTF-8)
        else {
            continue;
        };
        scan(path, &text, marker, &mut found, &mut problems);
    }
    Ok((found, problems))
}

/// The markers `marker` of one file, and its problems (see [`collect`]).
pub fn scan(
    path: &Path,
    text: &str,
    marker: &MarkerName,
    found: &mut Vec<Found>,
    problems: &mut Vec<Problem>,
) {
    let comments = match line_comments(text) {
        Ok(comments) => comments,
        Err(e) => {
            problems.push(Problem {
                site: Site {
                    file: path.to_path_buf(),
                    line: e.line,
                    column: e.column,
                },
                comment: String::new(),
                message: e.to_string(),
            });
            return;
        }
    };
    for comment in comments {
        let site = Site {
            file: path.to_path_buf(),
            line: comment.line,
            column: comment.body_column(),
        };
        let problem = |message: String| Problem {
            site: site.clone(),
            comment: comment.text.trim().to_string(),
            message,
        };
        match classify(comment.body(), marker) {
            Classified::None => {}
            _ if !comment.own_line => problems.push(problem(format!(
                "a marker is a comment on a line of its own (controller-gen reads no other); put it on its own line, e.g. `{}`",
                marker.example
            ))),
            Classified::Marker(args) => found.push(Found {
                site,
                comment: comment.text.trim().to_string(),
                args: args.to_string(),
            }),
            Classified::Misspelt(message) => problems.push(problem(message)),
        }
    }
}

enum Classified<'a> {
    None,
    /// The text after the prefix.
    Marker(&'a str),
    Misspelt(String),
}

/// Whether a comment's text is the marker, a misspelling of it, or something else.
fn classify<'a>(body: &'a str, marker: &MarkerName) -> Classified<'a> {
    let prefix = marker.prefix();
    if let Some(args) = body.strip_prefix(&prefix) {
        return Classified::Marker(args);
    }
    let Some(after_plus) = body.strip_prefix('+') else {
        return Classified::None;
    };
    let lower = after_plus.to_ascii_lowercase();
    let mut segments = lower.split(':');
    let (domain, name) = (segments.next().unwrap_or(""), segments.next().unwrap_or(""));
    let name = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or("");
    let like = name == marker.name || osa_distance(name, marker.name) == 1;
    if domain == "operator-rs" && like {
        return Classified::Misspelt(format!(
            "operator-rs reads {} markers in kubebuilder's spelling only; write `{}`",
            marker.what, marker.example
        ));
    }
    if !(like && osa_distance(domain, "kubebuilder") <= 1) {
        return Classified::None;
    }
    let exact = &prefix[1..];
    if lower.starts_with(exact) {
        return Classified::Misspelt(format!(
            "marker names are case-sensitive: write `{prefix}` (found `+{}`)",
            &after_plus[..exact.len()]
        ));
    }
    if name == marker.name && lower.starts_with(&exact[..exact.len() - 1]) {
        return Classified::Misspelt(format!(
            "`{}` must be followed by `:` and then key=value pairs, e.g. `{}`",
            &prefix[..prefix.len() - 1],
            marker.example
        ));
    }
    Classified::Misspelt(format!(
        "unknown marker `+{domain}:{name}`; did you mean `{prefix}`?"
    ))
}

/// Reads a marker's `key=value,key=value` arguments (values `a;b` or `{a,b}`, items bare or
/// quoted), every key one of `keys` (a near miss gets "did you mean"), none twice.
pub fn key_values(
    args: &str,
    keys: &[&'static str],
) -> std::result::Result<BTreeMap<&'static str, Vec<String>>, String> {
    let mut values: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    let mut chars = Cursor {
        s: args.trim(),
        pos: 0,
    };
    loop {
        let key_text = chars.take_until(&['=', ',']).trim().to_string();
        if chars.peek() != Some('=') {
            return Err(if key_text.is_empty() {
                "empty argument (two commas in a row, or a trailing comma); remove it".to_string()
            } else {
                format!("`{key_text}` has no value; write `{key_text}=...`")
            });
        }
        chars.bump();
        let Some(key) = keys.iter().copied().find(|k| *k == key_text) else {
            let hint = suggest(&key_text, keys)
                .map(|s| format!("did you mean `{s}`? "))
                .unwrap_or_default();
            return Err(format!(
                "unknown key `{key_text}`; {hint}(keys: {})",
                keys.join(", ")
            ));
        };
        let items = chars.value().map_err(|e| {
            // Only a group has a name for the empty one.
            if key == "groups" && e == EMPTY_VALUE {
                format!("{key}: {e}, or for the core API group write `core` or `\"\"`")
            } else {
                format!("{key}: {e}")
            }
        })?;
        if values.insert(key, items).is_some() {
            return Err(format!(
                "`{key}` is given twice; list every value in one `{key}=a;b`"
            ));
        }
        match chars.peek() {
            None => break,
            Some(',') => {
                chars.bump();
            }
            Some(c) => {
                return Err(format!(
                    "unexpected `{c}` after the value of `{key}`; separate arguments with `,`"
                ));
            }
        }
    }
    Ok(values)
}

/// A tiny reader over a marker's arguments.
struct Cursor<'a> {
    s: &'a str,
    pos: usize,
}

/// One item of a value: quoted (`""` is the core group) or bare.
struct Item {
    text: String,
    quoted: bool,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.s[self.pos..].chars().next()
    }

    fn bump(&mut self) {
        if let Some(c) = self.peek() {
            self.pos += c.len_utf8();
        }
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }

    fn take_until(&mut self, stops: &[char]) -> &str {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if stops.contains(&c) {
                break;
            }
            self.bump();
        }
        &self.s[start..self.pos]
    }

    /// A value: `a;b;c`, or `{a,b,c}`; stops before the `,` that ends the argument.
    fn value(&mut self) -> std::result::Result<Vec<String>, String> {
        self.skip_spaces();
        let mut items = Vec::new();
        if self.peek() == Some('{') {
            self.bump();
            loop {
                items.push(self.item(&[',', ';', '}'])?);
                match self.peek() {
                    Some('}') => {
                        self.bump();
                        break;
                    }
                    Some(',' | ';') => self.bump(),
                    _ => return Err("`{` is not closed with `}`".to_string()),
                }
            }
            self.skip_spaces();
        } else {
            loop {
                items.push(self.item(&[';', ','])?);
                if self.peek() == Some(';') {
                    self.bump();
                } else {
                    break;
                }
            }
        }
        items
            .into_iter()
            .map(|i| {
                if i.text.is_empty() && !i.quoted {
                    Err(EMPTY_VALUE.to_string())
                } else {
                    Ok(i.text)
                }
            })
            .collect()
    }

    fn item(&mut self, stops: &[char]) -> std::result::Result<Item, String> {
        self.skip_spaces();
        let item = match self.peek() {
            Some(q @ ('"' | '`')) => {
                self.bump();
                let mut text = String::new();
                loop {
                    match self.peek() {
                        None => return Err(format!("the quote {q} is not closed")),
                        Some(c) if c == q => {
                            self.bump();
                            break;
                        }
                        Some('\\') if q == '"' => {
                            self.bump();
                            if let Some(c) = self.peek() {
                                text.push(c);
                                self.bump();
                            }
                        }
                        Some(c) => {
                            text.push(c);
                            self.bump();
                        }
                    }
                }
                Item { text, quoted: true }
            }
            _ => Item {
                text: self.take_until(stops).trim().to_string(),
                quoted: false,
            },
        };
        self.skip_spaces();
        Ok(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RBAC: MarkerName = MarkerName {
        name: "rbac",
        what: "RBAC",
        example: "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get",
    };
    const MARKER: &str = "+kubebuilder:rbac:groups=\"\",resources=secrets,verbs=delete";

    /// The markers of `source` (as `line:column: args`), and its problems.
    fn markers_of(source: &str) -> (Vec<String>, Vec<String>) {
        let (mut found, mut problems) = (Vec::new(), Vec::new());
        scan(
            Path::new("src/a.rs"),
            source,
            &RBAC,
            &mut found,
            &mut problems,
        );
        (
            found
                .iter()
                .map(|f| format!("{}:{}: {}", f.site.line, f.site.column, f.args))
                .collect(),
            problems.iter().map(ToString::to_string).collect(),
        )
    }

    /// Every kind of literal and comment with a marker line inside: none is a marker, and the
    /// real marker after it still is (the lexer found where the literal ends).
    #[test]
    fn text_inside_literals_and_block_comments_is_never_a_marker() {
        let inside = [
            format!("const S: &str = \"\n// {MARKER}\n\";"),
            format!("const S: &str = \"a \\\" b\n// {MARKER}\n\\\\\";"),
            format!("const S: &str = r\"\n// {MARKER}\n\";"),
            format!("const S: &str = r#\"\" \"\n// {MARKER}\n\"#;"),
            format!("const S: &str = r###\"\"## \"#\n// {MARKER}\n\"###;"),
            format!("const S: &[u8] = b\"\n// {MARKER}\n\";"),
            format!("const S: &[u8] = br##\"\n// {MARKER}\n\"##;"),
            format!("const S: &CStr = c\"\n// {MARKER}\n\";"),
            format!("const S: &CStr = cr#\"\n// {MARKER}\n\"#;"),
            format!("const S: &str = \"\\\n// {MARKER}\n\";"),
            format!("/*\n// {MARKER}\n*/"),
            format!("/* outer /* nested */\n// {MARKER}\n*/"),
            format!("/* /* /* deep */ */\n// {MARKER}\n*/"),
            format!("/** doc block\n// {MARKER}\n*/\nfn f() {{}}"),
            format!("/*! inner doc block\n// {MARKER}\n*/"),
            format!("/* {MARKER} */"),
            format!("fn f() {{ let q = '\"'; let s = \"\n// {MARKER}\n\"; }}"),
            format!("fn f() {{ let q = b'\"'; let s = \"\n// {MARKER}\n\"; }}"),
            format!("fn f() {{ let q = '\\''; let s = \"\n// {MARKER}\n\"; }}"),
            format!("fn f() {{ let q = '\\u{{22}}'; let s = \"\n// {MARKER}\n\"; }}"),
            format!("fn f<'a>(x: &'a str) -> &'a str {{ let s = \"\n// {MARKER}\n\"; x }}"),
            format!("fn f() {{ 'outer: loop {{ break 'outer; }} let s = \"\n// {MARKER}\n\"; }}"),
            format!("fn f() {{ let c = 'é'; let s = \"\n// {MARKER}\n\"; }}"),
            format!("fn f() {{ let r#type = \"\n// {MARKER}\n\"; }}"),
            format!("fn f() {{ let s = \"/*\"; }}\n/*\n// {MARKER}\n*/"),
            format!("fn f() {{ let s = \"//\"; }}\nconst T: &str = \"\n// {MARKER}\n\";"),
            format!("macro_rules! m {{ () => {{ \"\n// {MARKER}\n\" }} }}"),
        ];
        for source in &inside {
            let source = format!("{source}\n// {MARKER}\n");
            let last_line = source.lines().count();
            let (found, problems) = markers_of(&source);
            assert!(problems.is_empty(), "{source}\n{problems:?}");
            assert_eq!(
                found,
                [format!("{last_line}:4: {}", &MARKER[18..])],
                "{source}"
            );
        }
    }

    #[test]
    fn line_comments_of_every_kind_are_markers() {
        let source = format!(
            "// {MARKER}\n/// {MARKER}\n//! {MARKER}\n//{MARKER}\n    \t// {MARKER}\r\nfn f() {{\n    // {MARKER}\n}}\n"
        );
        let (found, problems) = markers_of(&source);
        assert!(problems.is_empty(), "{problems:?}");
        let places: Vec<&str> = found.iter().map(|f| f.split(' ').next().unwrap()).collect();
        assert_eq!(places, ["1:4:", "2:5:", "3:5:", "4:3:", "5:9:", "7:8:"]);
        // Commented out, and `////` (not a doc comment): text, not markers.
        let (found, problems) = markers_of(&format!("// // {MARKER}\n//// {MARKER}\n"));
        assert!(
            found.is_empty() && problems.is_empty(),
            "{found:?} {problems:?}"
        );
    }

    #[test]
    fn a_marker_after_code_is_refused_with_where_to_put_it() {
        let (found, problems) = markers_of(&format!("fn f() {{}} // {MARKER}\n"));
        assert!(found.is_empty());
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("src/a.rs:1:14: a marker is a comment on a line of its own"),
            "{}",
            problems[0]
        );
        // A comment after code that is no marker is nobody's business.
        let (found, problems) = markers_of("fn f() {} // +1 for the header\n");
        assert!(found.is_empty() && problems.is_empty());
    }

    #[test]
    fn a_file_that_does_not_lex_is_reported_where_its_literal_opens() {
        for (source, at, what) in [
            (
                "fn f() {}\nconst S: &str = \"abc\n",
                "2:17",
                "string literal",
            ),
            ("const S: &str = r#\"abc\"\n", "1:17", "raw string literal"),
            ("/* a /* b */\n", "1:1", "block comment"),
            ("fn f() { let c = '\\", "1:18", "character literal"),
        ] {
            let marker = "// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get\n";
            let (found, problems) = markers_of(&format!("{source}{marker}"));
            assert!(found.is_empty(), "{source}");
            assert_eq!(problems.len(), 1, "{source}: {problems:?}");
            assert!(
                problems[0].starts_with(&format!("src/a.rs:{at}: this {what} is never closed")),
                "{source}: {}",
                problems[0]
            );
        }
    }

    #[test]
    fn arguments_read_as_controller_gen_reads_them() {
        let values = key_values(
            "groups=\"\";apps,resources={a,b}, verbs=get",
            &["groups", "resources", "verbs"],
        )
        .unwrap();
        assert_eq!(values["groups"], ["", "apps"]);
        assert_eq!(values["resources"], ["a", "b"]);
        assert_eq!(values["verbs"], ["get"]);
        assert!(
            key_values("grups=a", &["groups"])
                .unwrap_err()
                .contains("did you mean `groups`?")
        );
    }
}
