//! controller-gen's CRD markers read in reverse: each `+kubebuilder:`/`+k8s:` marker of a Go
//! field, type or kind becomes the Rust attribute docs/markers.md gives for it (`#[schemars(...)]`,
//! `#[x_kube(...)]`, `#[kube(...)]`); one without a Rust form goes to the report.

use serde_json::Value;

use super::go::Marker;
use super::report::Report;

/// What the markers of one field (or of the named types it goes through) ask of it.
#[derive(Debug, Default, Clone)]
pub struct FieldRules {
    /// `schemars(...)` arguments (`range(min = 1)`, `length(max = 3)`, `regex(pattern = ..)`).
    pub schemars: Vec<String>,
    /// `extend("key" = json)` pairs.
    pub extend: Vec<(String, Value)>,
    /// `inner(...)` arguments for the items of a list.
    pub inner: Vec<String>,
    /// `x_kube(validation = ...)` rules.
    pub rules: Vec<String>,
    pub optional: Option<bool>,
    pub nullable: bool,
    /// Minimum and maximum (kept apart so that both go in one `range`).
    pub min: Option<String>,
    pub max: Option<String>,
    pub min_len: Option<String>,
    pub max_len: Option<String>,
    pub items_min: Option<String>,
    pub items_max: Option<String>,
    pub items_min_len: Option<String>,
    pub items_max_len: Option<String>,
    pub items_pattern: Option<String>,
    /// `+kubebuilder:validation:Enum` values (a named string type's enum).
    pub enum_values: Option<Vec<Value>>,
}

/// The name and arguments of a marker (`kubebuilder:validation:Maximum=10` ->
/// (`kubebuilder:validation:Maximum`, `10`)). A marker with `:=` or `=` after its name, or
/// `:` arguments (`printcolumn:name=...`).
pub fn split(text: &str) -> (&str, &str) {
    // `+kubebuilder:default:=x` and `+kubebuilder:default=x` are the same marker.
    if let Some(i) = text.find(":=") {
        return (&text[..i], &text[i + 2..]);
    }
    let eq = text.find('=');
    // `name:key=value`: the name ends at the last ':' before the first '='.
    match eq {
        Some(e) => {
            let head = &text[..e];
            let known_single = [
                "kubebuilder:validation:",
                "kubebuilder:default",
                "default",
                "kubebuilder:example",
                "kubebuilder:title",
                "listType",
                "listMapKey",
                "mapType",
                "structType",
                "k8s:listType",
                "k8s:listMapKey",
                "kubebuilder:validation:items:",
                "groupName",
                "versionName",
            ];
            let single = known_single.iter().any(|k| {
                head == k.trim_end_matches(':')
                    || (k.ends_with(':')
                        && head.starts_with(k)
                        && !head[k.len()..].contains(':')
                        && !head.starts_with("kubebuilder:validation:XValidation"))
            });
            if single {
                return (head, &text[e + 1..]);
            }
            match head.rfind(':') {
                Some(c) => (&text[..c], &text[c + 1..]),
                None => (head, &text[e + 1..]),
            }
        }
        None => (text, ""),
    }
}

/// A marker value as JSON: a number, `true`/`false`, a JSON value, a quoted or bare string, or
/// `{a,b}`/`a;b` lists where `list` is set.
pub fn value(text: &str) -> Value {
    let t = text.trim();
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        return v;
    }
    if let Some(inner) = t.strip_prefix('`').and_then(|r| r.strip_suffix('`')) {
        return Value::String(inner.to_string());
    }
    if let Some(inner) = t.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        // controller-gen's `{a,b}` list, or `{key: value}` map.
        if inner.contains(':') {
            let mut map = serde_json::Map::new();
            for pair in split_top(inner, ',') {
                if let Some((k, v)) = pair.split_once(':') {
                    map.insert(k.trim().trim_matches('"').to_string(), value(v));
                }
            }
            return Value::Object(map);
        }
        return Value::Array(split_top(inner, ',').iter().map(|s| value(s)).collect());
    }
    Value::String(t.to_string())
}

/// Splits at `sep` outside quotes and brackets.
pub fn split_top(s: &str, sep: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut cur = String::new();
    let mut escaped = false;
    for c in s.chars() {
        if let Some(q) = quote {
            cur.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' && q == '"' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '`' | '\'' => {
                quote = Some(c);
                cur.push(c);
            }
            '{' | '[' | '(' => {
                depth += 1;
                cur.push(c);
            }
            '}' | ']' | ')' => {
                depth -= 1;
                cur.push(c);
            }
            c if c == sep && depth == 0 => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out.into_iter().map(|s| s.trim().to_string()).collect()
}

/// `key=value` arguments of a marker, values unquoted.
pub fn args(text: &str) -> Vec<(String, String)> {
    split_top(text, ',')
        .into_iter()
        .filter_map(|a| {
            let (k, v) = a.split_once('=')?;
            Some((k.trim().to_string(), unquote(v.trim())))
        })
        .collect()
}

/// A quoted marker string's content (`"a\"b"` -> `a"b`, `` `x` `` -> `x`), a bare one as is.
pub fn unquote(v: &str) -> String {
    if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
        return serde_json::from_str::<String>(v).unwrap_or_else(|_| v[1..v.len() - 1].to_string());
    }
    if v.len() >= 2 && v.starts_with('`') && v.ends_with('`') {
        return v[1..v.len() - 1].to_string();
    }
    v.to_string()
}

/// A Rust string literal of `s` (a raw string when it has quotes or backslashes).
pub fn lit(s: &str) -> String {
    if s.contains('"') || s.contains('\\') {
        let mut hashes = String::from("#");
        while s.contains(&format!("\"{hashes}")) {
            hashes.push('#');
        }
        format!("r{hashes}\"{s}\"{hashes}")
    } else {
        format!("\"{s}\"")
    }
}

/// The Rust expression of an `x_kube`/`kube` validation rule from `+kubebuilder:validation:XValidation`.
pub fn rule(args_text: &str) -> Option<String> {
    let args = args(args_text);
    let get = |k: &str| args.iter().find(|(a, _)| a == k).map(|(_, v)| v.clone());
    let rule = get("rule")?;
    let mut e = format!("Rule::new({})", lit(&rule));
    if let Some(m) = get("message") {
        e.push_str(&format!(".message({})", lit(&m)));
    }
    if let Some(m) = get("messageExpression") {
        e.push_str(&format!(
            ".message(Message::Expression({}.into()))",
            lit(&m)
        ));
    }
    if let Some(r) = get("reason") {
        let r = r.rsplit('.').next().unwrap_or(&r).to_string();
        e.push_str(&format!(".reason(Reason::{r})"));
    }
    if let Some(p) = get("fieldPath") {
        e.push_str(&format!(".field_path({})", lit(&p)));
    }
    if let Some(o) = get("optionalOldSelf") {
        e.push_str(&format!(".optional_old_self({o})"));
    }
    Some(e)
}

/// Markers that mean nothing to a Rust project (deepcopy, registration, docs generation): `name`
/// is the marker's name or its whole text.
pub fn no_counterpart(name: &str) -> bool {
    let name = name.split('=').next().unwrap_or(name);
    name == "kubebuilder:object"
        || name == "kubebuilder:ac"
        || name.starts_with("kubebuilder:object:")
        || name.starts_with("kubebuilder:ac:")
        || name.starts_with("kubebuilder:docs-gen")
        || name.starts_with("genclient")
        || name.starts_with("k8s:deepcopy-gen")
        || name.starts_with("k8s:openapi-gen")
        || name == "kubebuilder:scaffold"
        || name.starts_with("kubebuilder:scaffold:")
        || name.starts_with("kubebuilder:rbac")
        || name.starts_with("kubebuilder:webhook")
        || name.starts_with("groupName")
        || name.starts_with("versionName")
}

/// Reads the markers of a field (or a type it goes through) into `rules`; those without a Rust
/// form go to `report`.
pub fn field_rules(markers: &[Marker], rules: &mut FieldRules, report: &mut Report) {
    for m in markers {
        let (name, arg) = split(&m.text);
        let v = || value(arg);
        let a = arg.trim().to_string();
        match name {
            "optional" | "kubebuilder:validation:Optional" | "k8s:optional" => {
                rules.optional = Some(true)
            }
            "required" | "kubebuilder:validation:Required" | "k8s:required" => {
                rules.optional = Some(false)
            }
            "nullable" => {
                rules.nullable = true;
                report.add(
                    &m.at,
                    "+nullable",
                    "not kept: PROJECT's `crd: {controllerGen: true}` writes no `nullable` (kube-derive would write it on every Option); to keep it, remove controllerGen and accept `nullable` on every optional field",
                );
            }
            "kubebuilder:validation:Minimum" => rules.min = Some(a),
            "kubebuilder:validation:Maximum" => rules.max = Some(a),
            // `=false` is the schema's default: controller-gen writes nothing.
            "kubebuilder:validation:ExclusiveMinimum" => {
                if v() != Value::Bool(false) {
                    rules.extend.push(("exclusiveMinimum".into(), v()))
                }
            }
            "kubebuilder:validation:ExclusiveMaximum" => {
                if v() != Value::Bool(false) {
                    rules.extend.push(("exclusiveMaximum".into(), v()))
                }
            }
            "kubebuilder:validation:MinLength" => rules.min_len = Some(a),
            "kubebuilder:validation:MaxLength" => rules.max_len = Some(a),
            "kubebuilder:validation:MinItems" => rules.min_len = Some(a),
            "kubebuilder:validation:MaxItems" => rules.max_len = Some(a),
            "kubebuilder:validation:Pattern" => {
                rules.schemars.push(format!("regex(pattern = {})", lit(&unquote(&a))))
            }
            "kubebuilder:validation:Enum" | "k8s:enum" => {
                let values: Vec<Value> = split_top(&a, ';').iter().map(|s| value(s)).collect();
                if !values.is_empty() {
                    rules.enum_values = Some(values);
                }
            }
            "kubebuilder:validation:Format" => {
                rules.extend.push(("format".into(), Value::String(unquote(&a))))
            }
            "kubebuilder:validation:Type" => {
                rules.extend.push(("type".into(), Value::String(unquote(&a))))
            }
            "kubebuilder:validation:MultipleOf" => rules.extend.push(("multipleOf".into(), v())),
            "kubebuilder:validation:MinProperties" => {
                rules.extend.push(("minProperties".into(), v()))
            }
            "kubebuilder:validation:MaxProperties" => {
                rules.extend.push(("maxProperties".into(), v()))
            }
            "kubebuilder:validation:XPreserveUnknownFields"
            | "kubebuilder:pruning:PreserveUnknownFields" => rules
                .extend
                .push(("x-kubernetes-preserve-unknown-fields".into(), Value::Bool(true))),
            "kubebuilder:validation:XEmbeddedResource"
            | "kubebuilder:validation:EmbeddedResource" => rules
                .extend
                .push(("x-kubernetes-embedded-resource".into(), Value::Bool(true))),
            "kubebuilder:validation:Schemaless" => rules
                .extend
                .push(("x-kubernetes-preserve-unknown-fields".into(), Value::Bool(true))),
            "kubebuilder:validation:XIntOrString" => rules
                .extend
                .push(("x-kubernetes-int-or-string".into(), Value::Bool(true))),
            "kubebuilder:validation:XValidation" => match rule(arg) {
                Some(r) => rules.rules.push(r),
                None => report.add(
                    &m.at,
                    format!("+{}", m.text),
                    "an XValidation marker without rule=; add the rule as #[x_kube(validation = ...)]",
                ),
            },
            "kubebuilder:default" | "default" => rules.extend.push(("default".into(), v())),
            "kubebuilder:example" => rules.extend.push(("example".into(), v())),
            "kubebuilder:title" => rules.schemars.push(format!("title = {}", lit(&unquote(&a)))),
            "listType" | "k8s:listType" => rules
                .extend
                .push(("x-kubernetes-list-type".into(), Value::String(a))),
            "listMapKey" | "k8s:listMapKey" => {
                let key = Value::String(a);
                match rules
                    .extend
                    .iter_mut()
                    .find(|(k, _)| k == "x-kubernetes-list-map-keys")
                {
                    Some((_, Value::Array(keys))) => keys.push(key),
                    _ => rules
                        .extend
                        .push(("x-kubernetes-list-map-keys".into(), Value::Array(vec![key]))),
                }
            }
            "mapType" | "structType" | "k8s:mapType" | "k8s:structType" => rules
                .extend
                .push(("x-kubernetes-map-type".into(), Value::String(a))),
            "kubebuilder:validation:items:Minimum" => rules.items_min = Some(a),
            "kubebuilder:validation:items:Maximum" => rules.items_max = Some(a),
            "kubebuilder:validation:items:MinLength" => rules.items_min_len = Some(a),
            "kubebuilder:validation:items:MaxLength" => rules.items_max_len = Some(a),
            "kubebuilder:validation:items:Pattern" => rules.items_pattern = Some(unquote(&a)),
            _ if no_counterpart(&m.text) => {}
            _ => report.add(
                &m.at,
                format!("+{}", m.text),
                "a marker without a Rust form here (docs/markers.md lists what each becomes); write its equivalent by hand",
            ),
        }
    }
}

impl FieldRules {
    /// The attribute lines of a field (or a newtype) with these rules; `kube_schema` says the
    /// struct derives `KubeSchema` (needed for `x_kube`).
    pub fn attributes(&self, is_list: bool) -> Vec<String> {
        let mut attrs = Vec::new();
        let mut schemars = self.schemars.clone();
        if self.min.is_some() || self.max.is_some() {
            let parts: Vec<String> = [("min", &self.min), ("max", &self.max)]
                .iter()
                .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} = {}", number(v))))
                .collect();
            schemars.push(format!("range({})", parts.join(", ")));
        }
        if self.min_len.is_some() || self.max_len.is_some() {
            let parts: Vec<String> = [("min", &self.min_len), ("max", &self.max_len)]
                .iter()
                .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} = {v}")))
                .collect();
            schemars.push(format!("length({})", parts.join(", ")));
        }
        let mut inner = self.inner.clone();
        if is_list {
            if self.items_min.is_some() || self.items_max.is_some() {
                let parts: Vec<String> = [("min", &self.items_min), ("max", &self.items_max)]
                    .iter()
                    .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} = {}", number(v))))
                    .collect();
                inner.push(format!("range({})", parts.join(", ")));
            }
            if self.items_min_len.is_some() || self.items_max_len.is_some() {
                let parts: Vec<String> =
                    [("min", &self.items_min_len), ("max", &self.items_max_len)]
                        .iter()
                        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} = {v}")))
                        .collect();
                inner.push(format!("length({})", parts.join(", ")));
            }
            if let Some(p) = &self.items_pattern {
                inner.push(format!("regex(pattern = {})", lit(p)));
            }
        }
        if !inner.is_empty() {
            schemars.push(format!("inner({})", inner.join(", ")));
        }
        let mut extend = self.extend.clone();
        if let Some(values) = &self.enum_values {
            extend.push(("enum".into(), Value::Array(values.clone())));
        }
        if self.nullable {
            extend.push(("nullable".into(), Value::Bool(true)));
        }
        if !extend.is_empty() {
            let pairs: Vec<String> = extend
                .iter()
                .map(|(k, v)| format!("{} = {}", lit(k), json_tokens(v)))
                .collect();
            schemars.push(format!("extend({})", pairs.join(", ")));
        }
        if !schemars.is_empty() {
            attrs.push(format!("#[schemars({})]", schemars.join(", ")));
        }
        for r in &self.rules {
            attrs.push(format!("#[x_kube(validation = {r})]"));
        }
        attrs
    }
}

/// A marker's number as a Rust literal of the field's type is inferred: `1` stays `1`.
fn number(v: &str) -> String {
    v.trim().to_string()
}

/// JSON as schemars' `extend` takes it (serde_json's `json!` syntax).
fn json_tokens(v: &Value) -> String {
    match v {
        Value::String(s) => lit(s),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(json_tokens).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", lit(k), json_tokens(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_marker_names_and_arguments() {
        assert_eq!(
            split("kubebuilder:validation:Maximum=10"),
            ("kubebuilder:validation:Maximum", "10")
        );
        assert_eq!(
            split("kubebuilder:default:=Allow"),
            ("kubebuilder:default", "Allow")
        );
        assert_eq!(
            split("kubebuilder:printcolumn:name=\"A\",type=string"),
            ("kubebuilder:printcolumn", "name=\"A\",type=string")
        );
        assert_eq!(
            split("kubebuilder:validation:XValidation:rule=\"self == 1\""),
            ("kubebuilder:validation:XValidation", "rule=\"self == 1\"")
        );
        assert_eq!(split("listMapKey=type"), ("listMapKey", "type"));
        assert_eq!(split("optional"), ("optional", ""));
        assert_eq!(
            split("kubebuilder:validation:items:Pattern=^a$"),
            ("kubebuilder:validation:items:Pattern", "^a$")
        );
    }

    #[test]
    fn rules_become_attributes() {
        let r = rule("rule=\"self.a <= self.b\",message=\"a, at most b\"").expect("a rule");
        assert_eq!(
            r,
            "Rule::new(\"self.a <= self.b\").message(\"a, at most b\")"
        );
        assert_eq!(value("{a,b}"), serde_json::json!(["a", "b"]));
        assert_eq!(value("3"), serde_json::json!(3));
        assert_eq!(value("Allow"), serde_json::json!("Allow"));
    }
}
