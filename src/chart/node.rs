//! The chart's objects as a tree of data with Helm template actions in it, and its printing as
//! YAML: data (from the project's typed objects, as `serde_json::Value`) is printed as YAML with
//! every string quoted where YAML needs it and every literal `{{` escaped, so that Helm renders it
//! back as it was; the Helm parts (`{{ .Values... }}`, conditionals, `toYaml`) are nodes of their
//! own, never text spliced into printed YAML.

use serde_json::Value;

/// One value of an object: data, or a Helm action that renders to one.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// Plain data (a scalar, or a mapping or sequence of data).
    Data(Value),
    /// A mapping whose entries may be conditional or Helm-valued.
    Map(Vec<Entry>),
    /// A sequence whose items may be conditional or Helm-valued.
    Seq(Vec<Item>),
    /// A scalar rendered by Helm: `{{ <expr> }}` (the expression's text, without braces).
    Expr(String),
    /// A string scalar with Helm actions inside (`{{ .Release.Namespace }}` in a DNS name):
    /// printed double-quoted, the text as given.
    Template(String),
    /// A mapping or sequence from the values: `toYaml <expr>` indented under its key.
    ToYaml(String),
    /// Template lines printed as given, each at the node's indentation (a `range` over values).
    Lines(Vec<String>),
}

/// One entry of a [`Node::Map`].
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub key: String,
    pub node: Node,
    /// Printed only when this Helm condition holds (`{{- if <when> }}`).
    pub when: Option<String>,
    /// A comment printed above the entry (values.yaml).
    pub comment: Option<String>,
}

/// One item of a [`Node::Seq`].
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub node: Node,
    pub when: Option<String>,
}

impl From<Value> for Node {
    fn from(v: Value) -> Self {
        match v {
            Value::Object(m) => Node::Map(
                m.into_iter()
                    .map(|(k, v)| Entry::new(k, Node::from(v)))
                    .collect(),
            ),
            Value::Array(a) => Node::Seq(a.into_iter().map(|v| Item::new(Node::from(v))).collect()),
            other => Node::Data(other),
        }
    }
}

impl From<&str> for Node {
    fn from(s: &str) -> Self {
        Node::Data(Value::String(s.to_string()))
    }
}

impl From<String> for Node {
    fn from(s: String) -> Self {
        Node::Data(Value::String(s))
    }
}

impl Entry {
    pub fn new(key: impl Into<String>, node: impl Into<Node>) -> Self {
        Self {
            key: key.into(),
            node: node.into(),
            when: None,
            comment: None,
        }
    }

    pub fn when(mut self, cond: impl Into<String>) -> Self {
        self.when = Some(cond.into());
        self
    }
}

impl Item {
    pub fn new(node: impl Into<Node>) -> Self {
        Self {
            node: node.into(),
            when: None,
        }
    }

    pub fn when(mut self, cond: impl Into<String>) -> Self {
        self.when = Some(cond.into());
        self
    }
}

/// A mapping of unconditional entries.
pub fn map<K: Into<String>>(entries: impl IntoIterator<Item = (K, Node)>) -> Node {
    Node::Map(entries.into_iter().map(|(k, n)| Entry::new(k, n)).collect())
}

/// A sequence of unconditional items.
pub fn seq(items: impl IntoIterator<Item = Node>) -> Node {
    Node::Seq(items.into_iter().map(Item::new).collect())
}

/// `{{ <expr> }}`.
pub fn expr(e: impl Into<String>) -> Node {
    Node::Expr(e.into())
}

impl Node {
    /// The entry `key` of a mapping.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        match self {
            Node::Map(entries) => entries
                .iter_mut()
                .find(|e| e.key == key)
                .map(|e| &mut e.node),
            _ => None,
        }
    }

    /// The node at `path` (mapping keys), if every step is a mapping that has it.
    pub fn at_mut(&mut self, path: &[&str]) -> Option<&mut Node> {
        let mut node = self;
        for key in path {
            node = node.get_mut(key)?;
        }
        Some(node)
    }

    /// Sets the entry `key` of a mapping (replaced in place, else appended); no-op on other nodes.
    pub fn set(&mut self, key: &str, value: impl Into<Node>) {
        self.set_entry(Entry::new(key, value));
    }

    /// Sets an entry (with its condition) of a mapping, replacing one of its key in place.
    pub fn set_entry(&mut self, entry: Entry) {
        if let Node::Map(entries) = self {
            match entries.iter_mut().find(|e| e.key == entry.key) {
                Some(e) => *e = entry,
                None => entries.push(entry),
            }
        }
    }

    /// The string of a data scalar.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::Data(Value::String(s)) => Some(s),
            _ => None,
        }
    }
}

/// Whether printing is for a Helm template (literal `{{` escaped) or a plain YAML file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Template,
    Plain,
}

/// `node` (a mapping) printed as a YAML document, two spaces a level, sequences at their key's
/// indentation.
pub fn print(node: &Node, target: Target) -> String {
    let mut out = String::new();
    match node {
        Node::Map(entries) => print_map(entries, 0, target, &mut out),
        other => print_value_line(other, 0, target, &mut out),
    }
    out
}

fn pad(n: usize) -> String {
    " ".repeat(n)
}

fn print_map(entries: &[Entry], indent: usize, target: Target, out: &mut String) {
    for e in entries {
        if let Some(c) = &e.comment {
            for line in c.lines() {
                out.push_str(&format!("{}# {}\n", pad(indent), line).replace("# \n", "#\n"));
            }
        }
        if let Some(cond) = &e.when {
            out.push_str(&format!("{}{{{{- if {cond} }}}}\n", pad(indent)));
        }
        let key = scalar(&Value::String(e.key.clone()), target);
        print_keyed(&key, &e.node, indent, target, out);
        if e.when.is_some() {
            out.push_str(&format!("{}{{{{- end }}}}\n", pad(indent)));
        }
    }
}

/// `key: value` (or `key:` then the value's block) at `indent`.
fn print_keyed(key: &str, node: &Node, indent: usize, target: Target, out: &mut String) {
    let p = pad(indent);
    match node {
        Node::Map(m) if m.is_empty() => out.push_str(&format!("{p}{key}: {{}}\n")),
        Node::Seq(s) if s.is_empty() => out.push_str(&format!("{p}{key}: []\n")),
        Node::Data(Value::Object(m)) if m.is_empty() => out.push_str(&format!("{p}{key}: {{}}\n")),
        Node::Data(Value::Array(a)) if a.is_empty() => out.push_str(&format!("{p}{key}: []\n")),
        Node::Map(m) => {
            out.push_str(&format!("{p}{key}:\n"));
            print_map(m, indent + 2, target, out);
        }
        Node::Seq(s) => {
            out.push_str(&format!("{p}{key}:\n"));
            print_seq(s, indent, target, out);
        }
        Node::Data(v @ (Value::Object(_) | Value::Array(_))) => {
            print_keyed(key, &Node::from(v.clone()), indent, target, out)
        }
        Node::ToYaml(e) => {
            out.push_str(&format!("{p}{key}:\n"));
            out.push_str(&format!(
                "{}{{{{- toYaml {e} | nindent {} }}}}\n",
                pad(indent + 2),
                indent + 2
            ));
        }
        Node::Lines(lines) => {
            out.push_str(&format!("{p}{key}:\n"));
            for l in lines {
                out.push_str(&format!("{}{l}\n", pad(indent)));
            }
        }
        scalar_node => out.push_str(&format!("{p}{key}: {}\n", inline(scalar_node, target))),
    }
}

fn print_seq(items: &[Item], indent: usize, target: Target, out: &mut String) {
    let p = pad(indent);
    for item in items {
        if let Some(cond) = &item.when {
            out.push_str(&format!("{p}{{{{- if {cond} }}}}\n"));
        }
        match &item.node {
            Node::Data(v @ (Value::Object(_) | Value::Array(_))) => {
                print_item(&Node::from(v.clone()), indent, target, out)
            }
            other => print_item(other, indent, target, out),
        }
        if item.when.is_some() {
            out.push_str(&format!("{p}{{{{- end }}}}\n"));
        }
    }
}

fn print_item(node: &Node, indent: usize, target: Target, out: &mut String) {
    let p = pad(indent);
    match node {
        Node::Map(m) if !m.is_empty() && m[0].when.is_none() && m[0].comment.is_none() => {
            let mut block = String::new();
            print_map(m, indent + 2, target, &mut block);
            // The first entry goes on the dash's line.
            out.push_str(&p);
            out.push_str("- ");
            out.push_str(&block[indent + 2..]);
        }
        Node::Map(m) if m.is_empty() => out.push_str(&format!("{p}- {{}}\n")),
        Node::Map(m) => {
            out.push_str(&format!("{p}-\n"));
            print_map(m, indent + 2, target, out);
        }
        Node::Seq(s) if s.is_empty() => out.push_str(&format!("{p}- []\n")),
        Node::Seq(s) => {
            out.push_str(&format!("{p}-\n"));
            print_seq(s, indent + 2, target, out);
        }
        Node::Lines(lines) => {
            for l in lines {
                out.push_str(&format!("{p}{l}\n"));
            }
        }
        Node::ToYaml(e) => out.push_str(&format!("{p}{{{{- toYaml {e} | nindent {indent} }}}}\n")),
        scalar_node => out.push_str(&format!("{p}- {}\n", inline(scalar_node, target))),
    }
}

fn print_value_line(node: &Node, indent: usize, target: Target, out: &mut String) {
    out.push_str(&format!("{}{}\n", pad(indent), inline(node, target)));
}

/// A scalar node on one line.
fn inline(node: &Node, target: Target) -> String {
    match node {
        Node::Data(v) => scalar(v, target),
        Node::Expr(e) => format!("{{{{ {e} }}}}"),
        Node::Template(t) => format!("\"{t}\""),
        // Block nodes are printed by their parents; here only for completeness.
        other => format!("{other:?}"),
    }
}

/// A data scalar as YAML: plain when YAML reads it back as the same string, else double-quoted
/// (JSON's escapes are YAML's). In a template, a literal `{{` becomes `{{ "{{" }}`.
pub fn scalar(v: &Value, target: Target) -> String {
    let text = match v {
        Value::String(s) if plain_ok(s) => s.clone(),
        Value::String(s) => serde_json::to_string(s).expect("a string serializes"),
        Value::Object(m) if m.is_empty() => "{}".into(),
        Value::Array(a) if a.is_empty() => "[]".into(),
        other => serde_json::to_string(other).expect("JSON serializes"),
    };
    match target {
        Target::Template if text.contains("{{") => text.replace("{{", "{{ \"{{\" }}"),
        _ => text,
    }
}

/// Whether `s` can be printed as a plain YAML scalar and read back as this string: a
/// conservative character set, nothing YAML 1.1 or 1.2 reads as another type.
fn plain_ok(s: &str) -> bool {
    if s.is_empty() || s.trim() != s {
        return false;
    }
    let first = s.chars().next().unwrap_or(' ');
    if !(first.is_ascii_alphanumeric() || first == '/' || first == '_' || first == '.') {
        return false;
    }
    if !s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./=+@ ()".contains(c))
    {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    let reserved = [
        "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", ".nan", ".inf", "-.inf",
    ];
    if reserved.contains(&lower.as_str()) {
        return false;
    }
    // Numbers, in any base or with exponents, and sexagesimal-looking values.
    let numeric = s
        .chars()
        .all(|c| c.is_ascii_hexdigit() || "+-._eExXoO".contains(c));
    !numeric || !s.chars().any(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_yaml_would_read_as_another_type_are_quoted() {
        for s in [
            "true", "No", "1.0", "0x1F", "1e3", "", " a", "a: b", "null", "*", "#x",
        ] {
            let printed = scalar(&json!(s), Target::Plain);
            assert!(printed.starts_with('"'), "{s:?} printed {printed}");
            let back: String = serde_saphyr::from_str(&printed).unwrap();
            assert_eq!(back, s);
        }
        assert_eq!(
            scalar(&json!("rbac.authorization.k8s.io"), Target::Plain),
            "rbac.authorization.k8s.io"
        );
    }

    #[test]
    fn a_literal_brace_pair_is_escaped_in_templates_only() {
        let v = json!("a {{ b }}");
        assert_eq!(scalar(&v, Target::Plain), "\"a {{ b }}\"");
        assert_eq!(scalar(&v, Target::Template), "\"a {{ \"{{\" }} b }}\"");
    }

    #[test]
    fn data_round_trips_through_the_printer() {
        let v = json!({"a": [{"b": 1, "c": ["x", "y"]}, "z"], "e": {}, "f": [], "g": {"h": null, "i": true}});
        let printed = print(&Node::from(v.clone()), Target::Plain);
        let back: Value = serde_saphyr::from_str(&printed).unwrap();
        assert_eq!(back, v, "{printed}");
    }
}
