//! `generate crds` takes outer line doc comments (`/// text`) out of the source before it is lexed
//! (src/syntax/doc_comments.rs). These tests hold it to two promises on inputs chosen to trip a
//! scanner: every file:line:col reported after a doc comment is the file's own, and each doc
//! comment reaches the schema exactly as the same text written as `#[doc = "..."]` does.

use crate::crdgen_cases;

use crdgen_cases::project;
use operator_rs::crdgen::{self, CrdgenError};
use operator_rs::workspace::{DiskTree, GeneratorOutput};

const HEAD: &str =
    "use kube::CustomResource;\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n";

/// A crate of the given files (`src/...` paths and their texts).
fn crate_of(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// `generate crds` on a crate of the given files.
fn generate(files: &[(&str, &str)]) -> Result<GeneratorOutput, CrdgenError> {
    let dir = crate_of(files);
    crdgen::generate(&DiskTree::new(dir.path()), &project())
}

/// `generate crds --skip-apiserver-checks` on a crate of the given files.
fn generate_unchecked(files: &[(&str, &str)]) -> Result<GeneratorOutput, CrdgenError> {
    let dir = crate_of(files);
    crdgen::generate_unchecked(&DiskTree::new(dir.path()), &project())
}

/// The 1-based line and column (in characters, as editors and rustc count them) of the first
/// `marker` in `text`.
fn place(text: &str, marker: &str) -> (usize, usize) {
    let at = text.find(marker).expect("the marker is in the text");
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    (
        text[..at].matches('\n').count() + 1,
        text[line_start..at].chars().count() + 1,
    )
}

/// `src/lib.rs` = HEAD + `body` is refused at the place of `marker`, with `says` in the message.
fn refused_at(body: &str, marker: &str, says: &str) {
    let text = format!("{HEAD}{body}");
    let err = generate(&[("src/lib.rs", &text)])
        .err()
        .unwrap_or_else(|| panic!("expected an error for:\n{body}"))
        .to_string();
    let (line, column) = place(&text, marker);
    assert!(
        err.starts_with(&format!("src/lib.rs:{line}:{column}: ")),
        "expected src/lib.rs:{line}:{column}, got: {err}"
    );
    assert!(err.contains(says), "expected {says:?} in: {err}");
}

const KIND: &str = "/// The spec.\n#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[kube(group = \"d.example.com\", version = \"v1\", kind = \"D\")]\n";

#[test]
fn slashes_in_a_string_are_not_a_doc_comment() {
    let body = format!(
        "{KIND}pub struct DSpec {{\n    /// A doc.\n    #[schemars(description = \"a /// b \\\" /// c\", titel = \"x\")]\n    pub a: i32,\n}}\n"
    );
    refused_at(&body, "titel", "unknown key `titel`");
}

#[test]
fn slashes_in_a_raw_string_are_not_a_doc_comment() {
    let body = format!(
        "{KIND}pub struct DSpec {{\n    /// A doc.\n    #[schemars(description = r#\"a \"/// b\" c\"#, titel = \"x\")]\n    pub a: i32,\n}}\n"
    );
    refused_at(&body, "titel", "unknown key `titel`");
}

#[test]
fn a_quote_in_a_char_literal_opens_no_string() {
    let body = format!(
        "pub const Q: char = '\"'; pub const S: &str = \"/// in a string\";\n{KIND}pub struct DSpec {{\n    /// After the char.\n    #[serde(renam = \"b\")]\n    pub b: i32,\n}}\n"
    );
    refused_at(&body, "renam", "unknown key `renam`");
}

#[test]
fn after_a_block_doc_comment() {
    let body = format!(
        "{KIND}pub struct DSpec {{\n    /** A block\n        doc. */ #[serde(renme = \"b\")] pub b: i32,\n}}\n"
    );
    refused_at(&body, "renme", "unknown key `renme`");
}

#[test]
fn a_doc_from_include_str_among_doc_comments() {
    let body = format!(
        "{KIND}pub struct DSpec {{\n    /// First line.\n    #[doc = include_str!(\"field.md\")]\n    /// Last line.\n    pub a: i32,\n}}\n"
    );
    refused_at(
        &body,
        "include_str!",
        "doc comment that is not a string literal",
    );
}

#[test]
fn after_non_ascii_doc_comments_and_text() {
    let body = format!(
        "{KIND}pub struct DSpec {{\n    /// Größe «quoted» 日本語 🦀\n    pub a: i32, /// Ünïcode after a field.\n    #[schemars(description = \"é日本🦀\", titel = \"x\")]\n    pub b: i32,\n}}\n"
    );
    refused_at(&body, "titel", "unknown key `titel`");
}

#[test]
fn on_enum_variants() {
    let body = format!(
        "{KIND}pub struct DSpec {{\n    pub mode: Mode,\n}}\n/// Modes.\n#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub enum Mode {{\n    /// Fast.\n    Fast,\n    /// Slow, \"careful\".\n    #[serde(renam = \"slow\")]\n    Slow,\n}}\n"
    );
    refused_at(&body, "renam", "unknown key `renam`");
}

#[test]
fn on_tuple_struct_fields() {
    let body = format!(
        "{KIND}pub struct DSpec {{\n    pub pair: Pair,\n}}\n#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub struct Pair(\n    /// The first.\n    pub u8,\n    /// The second.\n    #[serde(skip_serializin)] pub String,\n);\n"
    );
    refused_at(&body, "skip_serializin", "unknown key `skip_serializin`");
}

#[test]
fn with_crlf_line_endings() {
    let body = format!(
        "{KIND}pub struct DSpec {{\n    /// One.\n    ///\n    /// Two.\n    pub a: i32,\n    /// Three.\n    #[serde(renam = \"b\")]\n    pub b: i32,\n}}\n"
    )
    .replace('\n', "\r\n");
    refused_at(&body, "renam", "unknown key `renam`");
}

#[test]
fn a_doc_comment_that_documents_nothing() {
    // syn's own verdict and place, as without the pre-pass: the field is missing where the
    // struct ends.
    let body = format!("{KIND}pub struct DSpec {{\n    pub a: i32,\n    /// Dangling.\n}}\n");
    refused_at(
        &body,
        "}\n",
        "does not parse as Rust: unexpected end of input, expected identifier",
    );
}

/// The same fields documented in several ways: doc comments (`///`, with `\n` or `\r\n` line
/// ends) and `#[doc = "..."]` attributes, interleaved.
fn documented(kind: &str, lines: &[&str], as_attrs: bool) -> String {
    let docs = |indent: &str| -> String {
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                // Every third line is an attribute in both forms: the order must hold.
                if as_attrs || i % 3 == 2 {
                    format!("{indent}#[doc = {:?}]\n", format!(" {l}"))
                } else if l.is_empty() {
                    format!("{indent}///\n")
                } else {
                    format!("{indent}/// {l}\n")
                }
            })
            .collect()
    };
    // A doc comment after non-ASCII code on its line (columns count characters, not bytes).
    let trailing = if as_attrs {
        "#[doc = \" Ünï «doc».\"]"
    } else {
        "/// Ünï «doc»."
    };
    format!(
        "{docs0}#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]\n#[kube(group = \"d.example.com\", version = \"v1\", kind = \"{kind}\")]\npub struct {kind}Spec {{\n{docs1}    pub a: i32,\n    #[serde(rename = \"ünï\")] {trailing}\n    pub u: i32,\n{docs1}    pub e: {kind}Mode,\n    pub t: {kind}Pair,\n}}\n{docs0}#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub enum {kind}Mode {{\n{docs1}    Fast {{ x: i32 }},\n{docs1}    Slow {{ y: i32 }},\n}}\n#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]\npub struct {kind}Pair(\n{docs1}    pub u8,\n{docs1}    pub String,\n);\n",
        docs0 = docs(""),
        docs1 = docs("    "),
    )
}

#[test]
fn doc_comments_reach_the_schema_as_doc_attributes_do() {
    let lines = [
        "Title line.",
        "",
        "Quotes \"q\", a backslash \\ and \\n, a tab\there, trailing spaces  ",
        "Größe «quoted» 日本語 🦀 and // and /// and /* not a comment */",
        "    indented `code`",
        "",
        "Last.",
    ];
    let lib = format!("{HEAD}pub mod lf;\npub mod crlf;\npub mod attrs;\n");
    let lf = format!("use super::*;\n{}", documented("Alpha", &lines, false));
    let crlf =
        format!("use super::*;\n{}", documented("Bravo", &lines, false)).replace('\n', "\r\n");
    let attrs = format!("use super::*;\n{}", documented("Charlie", &lines, true));
    // Without kube-apiserver's checks: the tuple struct's schema is not structural.
    let out = generate_unchecked(&[
        ("src/lib.rs", &lib),
        ("src/lf.rs", &lf),
        ("src/crlf.rs", &crlf),
        ("src/attrs.rs", &attrs),
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    let schema_of = |kind: &str| -> String {
        let file = out
            .files
            .iter()
            .find(|f| {
                f.path
                    .to_string_lossy()
                    .contains(&format!("_{}s.yaml", kind.to_lowercase()))
            })
            .unwrap_or_else(|| panic!("no CRD for {kind}"));
        let text = file
            .contents
            .replace(kind, "K")
            .replace(&kind.to_lowercase(), "k");
        text[text.find("openAPIV3Schema").expect("a schema")..].to_string()
    };
    let reference = schema_of("Charlie");
    assert!(
        reference.contains("Größe «quoted» 日本語 🦀"),
        "{reference}"
    );
    assert!(reference.contains("a tab\there"), "{reference}");
    assert!(reference.contains("Ünï «doc»."), "{reference}");
    assert_eq!(schema_of("Alpha"), reference);
    assert_eq!(schema_of("Bravo"), reference);
}
