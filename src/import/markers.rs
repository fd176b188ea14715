//! controller-gen's CRD markers read in reverse: each `+kubebuilder:`/`+k8s:` marker of a Go
//! field, type or kind becomes the Rust attribute docs/markers.md gives for it (`#[schemars(...)]`,
//! `#[x_kube(...)]`, `#[kube(...)]`); one without a Rust form goes to the report.

use serde_json::Value;

use super::go::Marker;
use super::report::Report;

/// What the markers of one field (or of the named types it goes through) ask of it.
#[derive(Debug, Default, Clone)]
pub struct FieldRules {
    /// `+kubebuilder:validation:Pattern` (`regex(pattern = ..)`) and `+kubebuilder:title`.
    pub pattern: Option<String>,
    pub title: Option<String>,
    /// `extend("key" = json)` pairs.
    pub extend: Vec<(String, Value)>,
    /// `x_kube(validation = ...)` rules.
    pub rules: Vec<String>,
    /// The rules of `AtMostOneOf`, `ExactlyOneOf` and `AtLeastOneOf`, which controller-gen
    /// writes after the others, in that order: (order, rule).
    pub one_of: Vec<(u8, String)>,
    pub optional: Option<bool>,
    pub nullable: bool,
    /// Minimum and maximum (kept apart so that both go in one `range`).
    pub min: Option<String>,
    pub max: Option<String>,
    pub min_len: Option<String>,
    pub max_len: Option<String>,
    /// What the `+kubebuilder:validation:items:*` markers ask of a list's items (each
    /// validation marker has an `items:` twin in controller-tools, applied to `items`).
    pub items: Option<Box<FieldRules>>,
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

/// The rule controller-gen v0.21 writes for `+kubebuilder:validation:AtMostOneOf=a;b` (`name`)
/// and its place among them, or None for another marker or no fields.
pub fn one_of_rule(name: &str, fields: &[String]) -> Option<(u8, String)> {
    if fields.is_empty() {
        return None;
    }
    let count = format!(
        "[{}].filter(x,x==true).size()",
        fields
            .iter()
            .map(|f| format!("has(self.{f})"))
            .collect::<Vec<_>>()
            .join(",")
    );
    // Go's `%v` of a []string: `[a b]`.
    let listed = format!("[{}]", fields.join(" "));
    let (order, rule, message) = match name {
        "kubebuilder:validation:AtMostOneOf" => (
            0,
            format!("{count} <= 1"),
            format!("at most one of the fields in {listed} may be set"),
        ),
        "kubebuilder:validation:ExactlyOneOf" => (
            1,
            format!("{count} == 1"),
            format!("exactly one of the fields in {listed} must be set"),
        ),
        "kubebuilder:validation:AtLeastOneOf" => (
            2,
            format!("{count} >= 1"),
            format!("at least one of the fields in {listed} must be set"),
        ),
        _ => return None,
    };
    Some((
        order,
        format!("Rule::new({}).message({})", lit(&rule), lit(&message)),
    ))
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
        match name.strip_prefix(ITEMS_PREFIX) {
            // controller-tools makes an `items:` twin of every validation marker, applied to the
            // items' schema: read as that marker, into the items' rules.
            Some(rest) => {
                let name = format!("kubebuilder:validation:{rest}");
                let items = rules.items.get_or_insert_with(Default::default);
                marker_rule(m, &name, arg, items, report);
            }
            None => marker_rule(m, name, arg, rules, report),
        }
    }
}

/// `+kubebuilder:validation:items:` (controller-tools' `ValidationItemsPrefix`).
const ITEMS_PREFIX: &str = "kubebuilder:validation:items:";

/// One marker (`name`, `arg`: its split text) into `rules`.
fn marker_rule(m: &Marker, name: &str, arg: &str, rules: &mut FieldRules, report: &mut Report) {
    {
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
                rules.pattern = Some(unquote(&a))
            }
            "kubebuilder:validation:Enum" => {
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
            // controller-gen (v0.21, the version kubebuilder's Makefile pins) writes each as a
            // CEL rule with its message.
            "kubebuilder:validation:AtMostOneOf"
            | "kubebuilder:validation:ExactlyOneOf"
            | "kubebuilder:validation:AtLeastOneOf" => {
                let fields: Vec<String> = split_top(&a, ';')
                    .into_iter()
                    .map(|f| unquote(&f))
                    .filter(|f| !f.is_empty())
                    .collect();
                if let Some(r) = one_of_rule(name, &fields) {
                    rules.one_of.push(r);
                }
            }
            "k8s:immutable" => rules
                .rules
                .push("Rule::new(\"self == oldSelf\").message(\"field is immutable\")".into()),
            "kubebuilder:externalDocs" => {
                let mut docs = serde_json::Map::new();
                for (k, v) in args(arg) {
                    let key = if k == "url" { "url" } else { "description" };
                    if !v.is_empty() {
                        docs.insert(key.into(), Value::String(v));
                    }
                }
                rules.extend.push(("externalDocs".into(), Value::Object(docs)));
            }
            "kubebuilder:validation:UniqueItems" if v() != Value::Bool(true) => {}
            "kubebuilder:validation:UniqueItems" => report.add(
                &m.at,
                format!("+{}", m.text),
                "not translated: kube-apiserver refuses `uniqueItems: true` (the Go project's CRD cannot be installed with it); +listType=set makes the API server refuse duplicates",
            ),
            "k8s:enum" => report.add(
                &m.at,
                format!("+{}", m.text),
                "k8s:enum marks a named string type (its constants are the values), not a field: controller-gen refuses it here; move it to the type",
            ),
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
            "kubebuilder:title" => rules.title = Some(unquote(&a)),
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
    /// schemars' validation arguments of these rules (`range`, `length`, `regex`), which
    /// `inner(...)` takes too.
    fn validation(&self) -> Vec<String> {
        let mut out = Vec::new();
        let bounds = |name: &str, min: &Option<String>, max: &Option<String>| {
            let parts: Vec<String> = [("min", min), ("max", max)]
                .iter()
                .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k} = {}", number(v))))
                .collect();
            (!parts.is_empty()).then(|| format!("{name}({})", parts.join(", ")))
        };
        out.extend(bounds("range", &self.min, &self.max));
        out.extend(bounds("length", &self.min_len, &self.max_len));
        out.extend((self.pattern.iter()).map(|p| format!("regex(pattern = {})", lit(p))));
        out
    }

    /// Whether schemars' `inner(...)` says all of these rules for a list's items of the Rust
    /// type `item`: bounds, lengths and a pattern, on items of a type whose schema has a
    /// `type` schemars checks them against (a string or a number; schemars drops them on
    /// others). The rest go on a newtype of the items ([`FieldRules::item_attributes`]).
    pub fn fits_inner(&self, item: &str) -> bool {
        let scalar = matches!(
            item,
            "String" | "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64" | "f32" | "f64"
        );
        scalar
            && self.extend.is_empty()
            && self.rules.is_empty()
            && self.one_of.is_empty()
            && self.enum_values.is_none()
            && self.items.is_none()
            && self.title.is_none()
    }

    /// The attributes of a newtype of a list's items (of the Rust type `item`) that carries
    /// these rules: every keyword as schemars' `extend(...)`, which writes it whatever the
    /// item's schema (controller-gen applies an `items:` marker to the items' schema as it is),
    /// and the CEL rules as `x_kube` (the newtype derives `KubeSchema`).
    pub fn item_attributes(&self, item: &str) -> Vec<String> {
        let list = item.starts_with("Vec<");
        let (min_len, max_len) = if list {
            ("minItems", "maxItems")
        } else {
            ("minLength", "maxLength")
        };
        let mut extend: Vec<(String, Value)> = Vec::new();
        for (key, v) in [
            ("minimum", &self.min),
            ("maximum", &self.max),
            (min_len, &self.min_len),
            (max_len, &self.max_len),
        ] {
            if let Some(v) = v {
                extend.push((key.into(), value(v)));
            }
        }
        for (key, v) in [("pattern", &self.pattern), ("title", &self.title)] {
            if let Some(v) = v {
                extend.push((key.into(), Value::String(v.clone())));
            }
        }
        extend.extend(self.extend.iter().cloned());
        if let Some(values) = &self.enum_values {
            extend.push(("enum".into(), Value::Array(values.clone())));
        }
        let mut attrs = Vec::new();
        if !extend.is_empty() {
            attrs.push(format!("#[schemars({})]", extend_arg(&extend)));
        }
        attrs.extend(self.rule_attributes());
        attrs
    }

    /// The `x_kube` attributes of the CEL rules: XValidation, then the one-of rules in
    /// controller-gen's order.
    fn rule_attributes(&self) -> Vec<String> {
        let mut one_of = self.one_of.clone();
        one_of.sort_by_key(|(order, _)| *order);
        (self.rules.iter().chain(one_of.iter().map(|(_, r)| r)))
            .map(|r| format!("#[x_kube(validation = {r})]"))
            .collect()
    }

    /// The attribute lines of a field (or a newtype) with these rules; the items' rules when
    /// `item` is the Rust type of the items of a list and schemars' `inner(...)` says them.
    pub fn attributes(&self, item: Option<&str>) -> Vec<String> {
        let mut attrs = Vec::new();
        let mut schemars: Vec<String> = (self.title.iter())
            .map(|t| format!("title = {}", lit(t)))
            .collect();
        schemars.extend(self.validation());
        if let (Some(item), Some(items)) = (item, self.items.as_deref())
            && items.fits_inner(item)
            && !items.validation().is_empty()
        {
            schemars.push(format!("inner({})", items.validation().join(", ")));
        }
        let mut extend = self.extend.clone();
        if let Some(values) = &self.enum_values {
            extend.push(("enum".into(), Value::Array(values.clone())));
        }
        if self.nullable {
            extend.push(("nullable".into(), Value::Bool(true)));
        }
        if !extend.is_empty() {
            schemars.push(extend_arg(&extend));
        }
        if !schemars.is_empty() {
            attrs.push(format!("#[schemars({})]", schemars.join(", ")));
        }
        attrs.extend(self.rule_attributes());
        attrs
    }
}

/// schemars' `extend("key" = json, ...)`.
fn extend_arg(pairs: &[(String, Value)]) -> String {
    let pairs: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{} = {}", lit(k), json_tokens(v)))
        .collect();
    format!("extend({})", pairs.join(", "))
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

    fn attributes_of(markers_text: &[&str]) -> (Vec<String>, Vec<String>) {
        let markers: Vec<Marker> = markers_text
            .iter()
            .enumerate()
            .map(|(i, t)| Marker {
                text: t.to_string(),
                at: super::super::go::At {
                    file: "api/v1/x_types.go".into(),
                    line: i + 1,
                    col: 1,
                },
            })
            .collect();
        let mut rules = FieldRules::default();
        let mut report = Report::default();
        field_rules(&markers, &mut rules, &mut report);
        (rules.attributes(Some("String")), report.lines())
    }

    /// controller-tools' markers (pkg/crd/markers, v0.21) without a kube-derive keyword of
    /// their own, each as the rule or keyword controller-gen writes.
    #[test]
    fn one_of_immutable_and_external_docs_markers_become_what_controller_gen_writes() {
        let (attrs, report) = attributes_of(&[
            "kubebuilder:validation:ExactlyOneOf=git;image",
            "kubebuilder:validation:XValidation:rule=\"self.a != 0\"",
            "kubebuilder:validation:AtLeastOneOf=git;image;url",
            "kubebuilder:validation:AtMostOneOf=git;image",
        ]);
        assert!(report.is_empty(), "{report:?}");
        assert_eq!(
            attrs,
            [
                "#[x_kube(validation = Rule::new(\"self.a != 0\"))]",
                "#[x_kube(validation = Rule::new(\"[has(self.git),has(self.image)].filter(x,x==true).size() <= 1\").message(\"at most one of the fields in [git image] may be set\"))]",
                "#[x_kube(validation = Rule::new(\"[has(self.git),has(self.image)].filter(x,x==true).size() == 1\").message(\"exactly one of the fields in [git image] must be set\"))]",
                "#[x_kube(validation = Rule::new(\"[has(self.git),has(self.image),has(self.url)].filter(x,x==true).size() >= 1\").message(\"at least one of the fields in [git image url] must be set\"))]",
            ]
        );
        let (attrs, report) = attributes_of(&[
            "k8s:immutable",
            "kubebuilder:externalDocs:url=\"https://example.com/r\",description=\"Sizing\"",
            "kubebuilder:validation:UniqueItems=false",
        ]);
        assert!(report.is_empty(), "{report:?}");
        assert_eq!(
            attrs,
            [
                "#[schemars(extend(\"externalDocs\" = {\"description\": \"Sizing\", \"url\": \"https://example.com/r\"}))]",
                "#[x_kube(validation = Rule::new(\"self == oldSelf\").message(\"field is immutable\"))]",
            ]
        );
    }

    /// Every validation marker's `items:` twin (controller-tools' `ValidationItemsPrefix`) is
    /// read as that marker, for the items: bounds, lengths and a pattern of scalar items as
    /// schemars' `inner(...)`, everything else as the keywords of a newtype of the items.
    #[test]
    fn items_markers_are_the_items_rules() {
        let markers: Vec<Marker> = [
            "kubebuilder:validation:items:Minimum=2",
            "kubebuilder:validation:items:Maximum=10",
            "kubebuilder:validation:items:Pattern=`^[a-z]+$`",
            "kubebuilder:validation:items:Enum=Fast;Slow",
            "kubebuilder:validation:items:Format=email",
            "kubebuilder:validation:items:MinItems=1",
            "kubebuilder:validation:items:XValidation:rule=\"self.size() > 1\"",
        ]
        .iter()
        .map(|t| Marker {
            text: t.to_string(),
            at: super::super::go::At::default(),
        })
        .collect();
        let mut rules = FieldRules::default();
        let mut report = Report::default();
        field_rules(&markers[..3], &mut rules, &mut report);
        assert!(report.lines().is_empty(), "{:?}", report.lines());
        assert_eq!(
            rules.attributes(Some("String")),
            ["#[schemars(inner(range(min = 2, max = 10), regex(pattern = \"^[a-z]+$\")))]"]
        );
        // Not a scalar item: schemars' `inner` would drop them; a newtype says them.
        assert!(!rules.items.as_ref().unwrap().fits_inner("IntOrString"));
        let mut rules = FieldRules::default();
        field_rules(&markers[3..], &mut rules, &mut report);
        assert!(report.lines().is_empty(), "{:?}", report.lines());
        let items = rules.items.as_ref().unwrap();
        assert!(!items.fits_inner("String"));
        assert_eq!(
            items.item_attributes("Vec<String>"),
            [
                "#[schemars(extend(\"minItems\" = 1, \"format\" = \"email\", \"enum\" = [\"Fast\", \"Slow\"]))]",
                "#[x_kube(validation = Rule::new(\"self.size() > 1\"))]",
            ]
        );
    }

    /// What has no Rust form is reported at its Go line, never dropped.
    #[test]
    fn markers_without_a_rust_form_are_reported_at_their_line() {
        let (attrs, report) = attributes_of(&[
            "kubebuilder:validation:UniqueItems=true",
            "k8s:enum",
            "kubebuilder:validation:items:UniqueItems=true",
            "kubebuilder:validation:Frobnicate=3",
        ]);
        assert!(attrs.is_empty(), "{attrs:?}");
        assert_eq!(report.len(), 4, "{report:?}");
        for (i, marker) in [
            "UniqueItems=true",
            "+k8s:enum",
            "items:UniqueItems=true",
            "Frobnicate=3",
        ]
        .iter()
        .enumerate()
        {
            assert!(
                report[i].starts_with(&format!("api/v1/x_types.go:{}:1: ", i + 1))
                    && report[i].contains(marker),
                "{report:?}"
            );
        }
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
