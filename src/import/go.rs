//! Go sources read with tree-sitter's Go grammar: the type declarations (structs with their
//! fields, tags and comments, named types), the constants, the functions and methods with their
//! bodies, and every `+` marker of a comment, each with its file and line. Markers are read from
//! comments only, never from code or strings, as controller-gen reads them.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use tree_sitter::{Node, Parser};

/// A place in a Go file, 1-based, as `file:line:col` in messages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct At {
    pub file: PathBuf,
    pub line: usize,
    pub col: usize,
}

impl std::fmt::Display for At {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.col)
    }
}

/// A `// +name...` marker line: its text after `+`, and where it is.
#[derive(Debug, Clone)]
pub struct Marker {
    pub text: String,
    pub at: At,
}

/// The comments above a declaration, as controller-gen groups them: the doc (the comment
/// group right above it, marker lines left out) and the markers of that group and of the group
/// just above it (separated by one blank line).
#[derive(Debug, Clone, Default)]
pub struct Comments {
    pub doc: Vec<String>,
    pub markers: Vec<Marker>,
}

/// A Go type expression, as far as a CRD's schema needs it.
#[derive(Debug, Clone, PartialEq)]
pub enum GoType {
    /// `string`, `int32`, `MyType` (a type of this package).
    Ident(String),
    /// `metav1.Time`: the import's local name and the type.
    Qualified(String, String),
    Pointer(Box<GoType>),
    Slice(Box<GoType>),
    /// `[N]T`: its length as written.
    Array(String, Box<GoType>),
    Map(Box<GoType>, Box<GoType>),
    /// Anything else (interfaces, functions, channels, inline structs, generics): its text.
    Other(String),
}

/// One field of a struct.
#[derive(Debug, Clone)]
pub struct Field {
    /// None for an embedded field.
    pub name: Option<String>,
    pub ty: GoType,
    /// The `json:"..."` tag's value, if the field has one.
    pub json: Option<String>,
    pub comments: Comments,
    pub at: At,
}

/// What a type declaration declares.
#[derive(Debug, Clone)]
pub enum TypeBody {
    Struct(Vec<Field>),
    /// `type X string`, `type X []Y`, `type X = Y`...
    Named(GoType),
}

#[derive(Debug, Clone)]
pub struct TypeDecl {
    pub name: String,
    pub body: TypeBody,
    pub comments: Comments,
    pub at: At,
}

/// A constant: `Name Type = "value"` (a constant of a named string type is a value of it).
#[derive(Debug, Clone)]
pub struct Const {
    pub ty: Option<String>,
    pub value: String,
    pub doc: Vec<String>,
}

/// A function or a method: its name, its receiver's type (methods) and its body's text.
#[derive(Debug, Clone)]
pub struct Func {
    pub name: String,
    pub receiver: Option<String>,
    pub body: String,
    /// The method calls of the body, in order: (method, its arguments' text), e.g.
    /// (`For`, `&crewv1.Captain{}`) from a controller builder chain.
    pub calls: Vec<(String, String, At)>,
    pub at: At,
}

/// One Go file, read.
#[derive(Debug, Clone, Default)]
pub struct GoFile {
    pub path: PathBuf,
    pub package: String,
    /// Local name -> import path (`metav1` -> `k8s.io/apimachinery/pkg/apis/meta/v1`).
    pub imports: Vec<(String, String)>,
    pub types: Vec<TypeDecl>,
    pub consts: Vec<Const>,
    pub funcs: Vec<Func>,
    /// Every marker of the file's comments, in order (RBAC and webhook markers are read from here).
    pub markers: Vec<Marker>,
    /// The package's markers (`+groupName=`...): those of the comments above `package`.
    pub package_markers: Vec<Marker>,
}

impl GoFile {
    /// The import path a local package name stands for.
    pub fn import(&self, local: &str) -> Option<&str> {
        self.imports
            .iter()
            .find(|(l, _)| l == local)
            .map(|(_, p)| p.as_str())
    }
}

/// Reads one Go file; `shown` is the path messages name.
pub fn read_file(full: &Path, shown: &Path) -> Result<GoFile> {
    let text =
        std::fs::read_to_string(full).with_context(|| format!("reading {}", full.display()))?;
    parse(&text, shown)
}

/// Reads a Go file whose declarations only are needed (a controller, a webhook), as tree-sitter
/// recovers it: with the place of the first part the Go grammar does not read (a newer Go syntax
/// in a function body), for the report ([`super::report::Report::unread_go`]).
pub fn read_file_lenient(full: &Path, shown: &Path) -> Result<(GoFile, Option<At>)> {
    let text =
        std::fs::read_to_string(full).with_context(|| format!("reading {}", full.display()))?;
    parse_with(&text, shown, true)
}

/// Parses Go source text; `shown` is the path messages name. A file tree-sitter finds errors in
/// is refused at the first one.
pub fn parse(text: &str, shown: &Path) -> Result<GoFile> {
    parse_with(text, shown, false).map(|(f, _)| f)
}

fn parse_with(text: &str, shown: &Path, lenient: bool) -> Result<(GoFile, Option<At>)> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_go::LANGUAGE.into())
        .context("loading the Go grammar")?;
    let Some(tree) = parser.parse(text, None) else {
        bail!("{}: could not be parsed as Go", shown.display());
    };
    let root = tree.root_node();
    let mut recovered = None;
    if root.has_error() && lenient {
        recovered = Some(at(shown, first_error(root).unwrap_or(root)));
    } else if root.has_error() {
        let bad = first_error(root).unwrap_or(root);
        bail!(
            "{}: not valid Go here ({}); import reads the Go sources of a project that builds\n  fix the file (go build ./... must pass), then run operator-rs import again",
            at(shown, bad),
            snippet(text, bad)
        );
    }
    let reader = Reader { text, shown };
    let mut file = GoFile {
        path: shown.to_path_buf(),
        ..GoFile::default()
    };
    let mut cursor = root.walk();
    for node in root.children(&mut cursor) {
        match node.kind() {
            "comment" => {
                for line in reader.comment_lines(node) {
                    if let Some(m) = marker_of(&line.0) {
                        file.markers.push(Marker {
                            text: m,
                            at: At {
                                file: shown.to_path_buf(),
                                line: line.1,
                                col: 1,
                            },
                        });
                    }
                }
            }
            "package_clause" => {
                file.package = node
                    .named_child(0)
                    .map(|n| reader.text(n).to_string())
                    .unwrap_or_default();
                file.package_markers = reader.comments_above(node).markers;
            }
            "import_declaration" => reader.imports(node, &mut file.imports),
            "type_declaration" => {
                let comments = reader.comments_above(node);
                let mut c = node.walk();
                let specs: Vec<Node> = node
                    .named_children(&mut c)
                    .filter(|n| matches!(n.kind(), "type_spec" | "type_alias"))
                    .collect();
                let single = specs.len() == 1;
                for spec in specs {
                    let comments = if single {
                        comments.clone()
                    } else {
                        reader.comments_above(spec)
                    };
                    if let Some(decl) = reader.type_decl(spec, comments)? {
                        file.types.push(decl);
                    }
                }
            }
            "const_declaration" => reader.consts(node, &mut file.consts),
            "function_declaration" | "method_declaration" => {
                file.funcs.push(reader.func(node));
            }
            _ => {}
        }
    }
    Ok((file, recovered))
}

fn first_error(node: Node) -> Option<Node> {
    if node.is_error() || node.is_missing() {
        return Some(node);
    }
    let mut c = node.walk();
    let children: Vec<Node> = node.children(&mut c).collect();
    children.into_iter().find_map(first_error)
}

fn at(file: &Path, node: Node) -> At {
    let p = node.start_position();
    At {
        file: file.to_path_buf(),
        line: p.row + 1,
        col: p.column + 1,
    }
}

fn snippet(text: &str, node: Node) -> String {
    let s = &text[node.byte_range()];
    let first = s.lines().next().unwrap_or("").trim();
    format!("{:?}", first.chars().take(60).collect::<String>())
}

/// The marker a comment line holds: its text after `+`, as controller-gen reads one (`// +x`,
/// `//+x`), or None.
pub fn marker_of(line: &str) -> Option<String> {
    let t = line.trim();
    let rest = t.strip_prefix('+')?;
    if rest.is_empty() || rest.starts_with(char::is_whitespace) {
        return None;
    }
    Some(rest.trim_end().to_string())
}

struct Reader<'a> {
    text: &'a str,
    shown: &'a Path,
}

impl<'a> Reader<'a> {
    fn text(&self, node: Node) -> &'a str {
        &self.text[node.byte_range()]
    }

    fn at(&self, node: Node) -> At {
        at(self.shown, node)
    }

    /// The lines of a comment node without `//` or `/* */`, each with its 1-based line number.
    fn comment_lines(&self, node: Node) -> Vec<(String, usize)> {
        let raw = self.text(node);
        let row = node.start_position().row + 1;
        if let Some(line) = raw.strip_prefix("//") {
            return vec![(line.to_string(), row)];
        }
        let inner = raw
            .strip_prefix("/*")
            .and_then(|r| r.strip_suffix("*/"))
            .unwrap_or(raw);
        inner
            .lines()
            .enumerate()
            .map(|(i, l)| (l.to_string(), row + i))
            .collect()
    }

    /// The comment groups right above `node` (see [`Comments`]).
    fn comments_above(&self, node: Node) -> Comments {
        // Groups of consecutive `//` lines, closest first; a `/* */` block is a group of its own.
        let mut groups: Vec<Vec<(String, usize)>> = Vec::new();
        let mut next_row = node.start_position().row;
        let mut current: Vec<(String, usize)> = Vec::new();
        let mut sibling = node.prev_sibling();
        while let Some(s) = sibling {
            if s.kind() != "comment" {
                break;
            }
            let end = s.end_position().row;
            // A comment at the end of a line of code belongs to that line.
            if let Some(before) = s.prev_sibling()
                && before.end_position().row == s.start_position().row
                && before.kind() != "comment"
            {
                break;
            }
            let gap = next_row.saturating_sub(end);
            if gap > 1 {
                // A blank line: the group ends.
                if !current.is_empty() {
                    current.reverse();
                    groups.push(std::mem::take(&mut current));
                }
                if gap > 2 || groups.len() >= 2 {
                    break;
                }
            }
            if groups.is_empty() && current.is_empty() && gap > 1 {
                // The closest comment is not right above the node: it is no doc.
                groups.push(Vec::new());
            }
            let mut lines = self.comment_lines(s);
            lines.reverse();
            current.extend(lines);
            next_row = s.start_position().row;
            sibling = s.prev_sibling();
            if groups.len() >= 2 {
                break;
            }
        }
        if !current.is_empty() && groups.len() < 2 {
            current.reverse();
            groups.push(current);
        }
        let mut comments = Comments::default();
        for (i, group) in groups.iter().enumerate().take(2) {
            for (line, row) in group {
                if let Some(m) = marker_of(line) {
                    comments.markers.push(Marker {
                        text: m,
                        at: At {
                            file: self.shown.to_path_buf(),
                            line: *row,
                            col: 1,
                        },
                    });
                } else if i == 0 {
                    comments.doc.push(line.clone());
                }
            }
        }
        // The marker nearest the declaration last, as controller-gen applies them.
        comments.markers.sort_by_key(|m| m.at.line);
        comments
    }

    fn imports(&self, node: Node, out: &mut Vec<(String, String)>) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if n.kind() == "import_spec" {
                let path = n
                    .child_by_field_name("path")
                    .map(|p| self.text(p).trim_matches(['"', '`']).to_string())
                    .unwrap_or_default();
                let local = match n.child_by_field_name("name") {
                    Some(name) => self.text(name).to_string(),
                    None => path.rsplit('/').next().unwrap_or_default().to_string(),
                };
                out.push((local, path));
            } else {
                let mut c = n.walk();
                stack.extend(n.named_children(&mut c));
            }
        }
        out.sort();
    }

    fn type_decl(&self, spec: Node, comments: Comments) -> Result<Option<TypeDecl>> {
        let Some(name) = spec.child_by_field_name("name") else {
            return Ok(None);
        };
        let Some(ty) = spec.child_by_field_name("type") else {
            return Ok(None);
        };
        let body = if ty.kind() == "struct_type" {
            TypeBody::Struct(self.fields(ty))
        } else {
            TypeBody::Named(self.go_type(ty))
        };
        Ok(Some(TypeDecl {
            name: self.text(name).to_string(),
            body,
            comments,
            at: self.at(spec),
        }))
    }

    fn fields(&self, st: Node) -> Vec<Field> {
        let mut fields = Vec::new();
        let mut c = st.walk();
        let Some(list) = st
            .named_children(&mut c)
            .find(|n| n.kind() == "field_declaration_list")
        else {
            return fields;
        };
        let mut c = list.walk();
        for decl in list.named_children(&mut c) {
            if decl.kind() != "field_declaration" {
                continue;
            }
            let comments = self.comments_above(decl);
            let Some(ty) = decl.child_by_field_name("type") else {
                continue;
            };
            let json = decl
                .child_by_field_name("tag")
                .and_then(|t| json_tag(self.text(t)));
            let mut nc = decl.walk();
            let names: Vec<String> = decl
                .children_by_field_name("name", &mut nc)
                .map(|n| self.text(n).to_string())
                .collect();
            let go = self.go_type(ty);
            if names.is_empty() {
                fields.push(Field {
                    name: None,
                    ty: go,
                    json,
                    comments,
                    at: self.at(decl),
                });
            } else {
                for name in names {
                    fields.push(Field {
                        name: Some(name),
                        ty: go.clone(),
                        json: json.clone(),
                        comments: comments.clone(),
                        at: self.at(decl),
                    });
                }
            }
        }
        fields
    }

    fn go_type(&self, node: Node) -> GoType {
        let field = |name: &str| node.child_by_field_name(name).map(|n| self.go_type(n));
        match node.kind() {
            "type_identifier" => GoType::Ident(self.text(node).to_string()),
            "qualified_type" => {
                let pkg = node.child_by_field_name("package").map(|n| self.text(n));
                let name = node.child_by_field_name("name").map(|n| self.text(n));
                match (pkg, name) {
                    (Some(p), Some(n)) => GoType::Qualified(p.to_string(), n.to_string()),
                    _ => GoType::Other(self.text(node).to_string()),
                }
            }
            "pointer_type" => match node.named_child(0) {
                Some(inner) => GoType::Pointer(Box::new(self.go_type(inner))),
                None => GoType::Other(self.text(node).to_string()),
            },
            "slice_type" => match field("element") {
                Some(e) => GoType::Slice(Box::new(e)),
                None => GoType::Other(self.text(node).to_string()),
            },
            "array_type" => match (node.child_by_field_name("length"), field("element")) {
                (Some(len), Some(e)) => GoType::Array(self.text(len).to_string(), Box::new(e)),
                _ => GoType::Other(self.text(node).to_string()),
            },
            "map_type" => match (field("key"), field("value")) {
                (Some(k), Some(v)) => GoType::Map(Box::new(k), Box::new(v)),
                _ => GoType::Other(self.text(node).to_string()),
            },
            "parenthesized_type" => match node.named_child(0) {
                Some(inner) => self.go_type(inner),
                None => GoType::Other(self.text(node).to_string()),
            },
            _ => GoType::Other(self.text(node).to_string()),
        }
    }

    fn consts(&self, node: Node, out: &mut Vec<Const>) {
        let mut c = node.walk();
        for spec in node.named_children(&mut c) {
            if spec.kind() != "const_spec" {
                continue;
            }
            let ty = spec
                .child_by_field_name("type")
                .map(|t| self.text(t).to_string());
            let value = spec
                .child_by_field_name("value")
                .map(|v| self.text(v).to_string())
                .unwrap_or_default();
            let doc = self.comments_above(spec).doc;
            let mut nc = spec.walk();
            // One constant per name (`const A, B T = ...`); only their type, value and doc are
            // read.
            for _ in spec.children_by_field_name("name", &mut nc) {
                out.push(Const {
                    ty: ty.clone(),
                    value: value.clone(),
                    doc: doc.clone(),
                });
            }
        }
    }

    fn func(&self, node: Node) -> Func {
        let name = node
            .child_by_field_name("name")
            .map(|n| self.text(n).to_string())
            .unwrap_or_default();
        let receiver = node.child_by_field_name("receiver").map(|r| {
            self.text(r)
                .trim_matches(['(', ')'])
                .split_whitespace()
                .last()
                .unwrap_or_default()
                .trim_start_matches('*')
                .to_string()
        });
        let body_node = node.child_by_field_name("body");
        let body = body_node
            .map(|b| self.text(b).to_string())
            .unwrap_or_default();
        let mut calls = Vec::new();
        if let Some(b) = body_node {
            self.calls(b, &mut calls);
        }
        calls.sort_by_key(|(_, _, at): &(String, String, At)| (at.line, at.col));
        Func {
            name,
            receiver,
            body,
            calls,
            at: self.at(node),
        }
    }
}

impl Reader<'_> {
    /// Every call `x.Method(args)` under `node`.
    fn calls(&self, node: Node, out: &mut Vec<(String, String, At)>) {
        if node.kind() == "call_expression"
            && let Some(f) = node.child_by_field_name("function")
            && f.kind() == "selector_expression"
            && let Some(method) = f.child_by_field_name("field")
        {
            let args = node
                .child_by_field_name("arguments")
                .map(|a| {
                    self.text(a)
                        .trim_start_matches('(')
                        .trim_end_matches(')')
                        .trim()
                        .to_string()
                })
                .unwrap_or_default();
            out.push((self.text(method).to_string(), args, self.at(method)));
        }
        let mut c = node.walk();
        let children: Vec<Node> = node.named_children(&mut c).collect();
        for child in children {
            self.calls(child, out);
        }
    }
}

/// The value of the `json` key of a struct tag (`` `json:"name,omitempty" yaml:"x"` ``).
pub fn json_tag(tag: &str) -> Option<String> {
    let inner = tag.trim_matches('`');
    let inner = if tag.starts_with('"') {
        // An interpreted string literal tag: unescape the quotes.
        inner.trim_matches('"').replace("\\\"", "\"")
    } else {
        inner.to_string()
    };
    let start = inner.find("json:\"")? + "json:\"".len();
    let end = inner[start..].find('"')? + start;
    Some(inner[start..end].to_string())
}

/// Joins the doc lines of a comment as controller-gen writes a description: one leading space
/// of each line removed, leading and trailing blank lines dropped, lines joined by `\n`.
pub fn description(doc: &[String]) -> Option<String> {
    let lines: Vec<&str> = doc
        .iter()
        .map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end())
        .collect();
    let start = lines.iter().position(|l| !l.trim().is_empty())?;
    let end = lines.iter().rposition(|l| !l.trim().is_empty())?;
    Some(lines[start..=end].join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1 "k8s.io/api/core/v1"
)

// +kubebuilder:validation:Enum=Allow;Forbid
type Policy string

const (
	// Allow allows.
	Allow Policy = "Allow"
	Forbid Policy = "Forbid"
)

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status

// Thing is a thing.
type Thing struct {
	metav1.TypeMeta `json:",inline"`

	// replicas is how many.
	// +kubebuilder:validation:Minimum=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	Labels map[string]string `json:"labels,omitempty"` // +optional
	Pods []corev1.PodSpec `json:"pods"`
}
"#;

    #[test]
    fn reads_types_fields_markers_and_consts() {
        let f = parse(SRC, Path::new("api/v1/thing_types.go")).expect("parses");
        assert_eq!(f.package, "v1");
        assert_eq!(
            f.import("metav1"),
            Some("k8s.io/apimachinery/pkg/apis/meta/v1")
        );
        let thing = f.types.iter().find(|t| t.name == "Thing").expect("Thing");
        assert_eq!(thing.comments.doc, vec![" Thing is a thing.".to_string()]);
        let markers: Vec<&str> = thing
            .comments
            .markers
            .iter()
            .map(|m| m.text.as_str())
            .collect();
        assert_eq!(
            markers,
            [
                "kubebuilder:object:root=true",
                "kubebuilder:subresource:status"
            ]
        );
        let TypeBody::Struct(fields) = &thing.body else {
            panic!("a struct")
        };
        assert_eq!(fields[0].name, None);
        assert_eq!(fields[0].json.as_deref(), Some(",inline"));
        let replicas = &fields[1];
        assert_eq!(
            replicas.ty,
            GoType::Pointer(Box::new(GoType::Ident("int32".into())))
        );
        assert_eq!(replicas.at.line, 27);
        let m: Vec<&str> = replicas
            .comments
            .markers
            .iter()
            .map(|m| m.text.as_str())
            .collect();
        assert_eq!(m, ["kubebuilder:validation:Minimum=1", "optional"]);
        // A trailing comment is not the next field's doc.
        assert!(fields[3].comments.markers.is_empty());
        assert_eq!(f.consts.len(), 2);
        assert_eq!(f.consts[0].doc, vec![" Allow allows.".to_string()]);
        let policy = f.types.iter().find(|t| t.name == "Policy").expect("Policy");
        assert_eq!(
            policy.comments.markers[0].text,
            "kubebuilder:validation:Enum=Allow;Forbid"
        );
    }

    #[test]
    fn refuses_what_is_not_go_at_its_line() {
        let err = parse(
            "package v1\n\ntype X struct {\n  A int `json:\"a\"\n",
            Path::new("x.go"),
        )
        .expect_err("refused");
        assert!(err.to_string().starts_with("x.go:"), "{err}");
    }

    #[test]
    fn json_tags() {
        assert_eq!(
            json_tag("`json:\"a,omitempty\" yaml:\"b\"`").as_deref(),
            Some("a,omitempty")
        );
        assert_eq!(json_tag("`yaml:\"b\"`"), None);
    }
}
