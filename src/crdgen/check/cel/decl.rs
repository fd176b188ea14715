//! The CEL view of a schema node, built as kube-apiserver declares it to CEL (`SchemaDeclType` in
//! `k8s.io/apiserver/pkg/cel/common/schemas.go`): the node's CEL kind, the most elements
//! (characters, items or entries) a value can hold, and the fewest bytes it serializes to. Rules
//! are type-checked against these kinds and their costs are sized from these bounds.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};

/// `celconfig.MaxRequestSizeBytes`: the largest request, which bounds every unbounded size.
pub(in crate::crdgen) const MAX_REQUEST_BYTES: u64 = 3 * 1024 * 1024;

/// The scalar kinds of CEL (and `dyn`, for `x-kubernetes-int-or-string`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::crdgen) enum Prim {
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Null,
    Duration,
    Timestamp,
    Dyn,
}

#[derive(Debug)]
pub(in crate::crdgen) enum DeclKind {
    Prim(Prim),
    List(Box<Decl>),
    /// Keys (always strings, declared without a size bound) and values.
    Map(Box<Decl>, Box<Decl>),
    /// Fields by their CEL (escaped) names.
    Object(BTreeMap<String, Decl>),
}

/// One declared node: `DeclType` with its `MaxElements` and `MinSerializedSize`.
#[derive(Debug)]
pub(in crate::crdgen) struct Decl {
    pub kind: DeclKind,
    pub max_elements: u64,
    pub min_size: u64,
}

impl Decl {
    fn prim(p: Prim, max_elements: u64, min_size: u64) -> Decl {
        Decl {
            kind: DeclKind::Prim(p),
            max_elements,
            min_size,
        }
    }

    /// The declaration a path step (`field`, `@items`, `@values`, `@keys`) leads to.
    pub fn step(&self, name: &str) -> Option<&Decl> {
        match (&self.kind, name) {
            (DeclKind::List(e), "@items" | "@values")
            | (DeclKind::Map(_, e), "@items" | "@values") => Some(e),
            (DeclKind::Map(k, _), "@keys") => Some(k),
            (DeclKind::Object(_), _) => self.field(name),
            _ => None,
        }
    }

    /// The field `name` of an object as a rule's `.name` selects it: its escaped name, or, for a
    /// CEL reserved word, the property it escapes (`self.namespace` is the property `namespace`,
    /// declared as `__namespace__`: the API server's type provider recognizes keywords as field
    /// names since 1.28).
    pub fn field(&self, name: &str) -> Option<&Decl> {
        let DeclKind::Object(fields) = &self.kind else {
            return None;
        };
        fields.get(name).or_else(|| {
            RESERVED
                .contains(&name)
                .then(|| fields.get(&format!("__{name}__")))
                .flatten()
        })
    }
}

fn non_negative(v: i64) -> u64 {
    v.max(0) as u64
}

/// The declaration of `s` (`None` where the API server does not expose the node to CEL:
/// a node without a type, a list whose items are not exposed...). `resource_root`: the root of
/// the resource or of an embedded resource, which always has apiVersion, kind and metadata.
pub(in crate::crdgen) fn decl(s: &JSONSchemaProps, resource_root: bool) -> Option<Decl> {
    if s.x_kubernetes_int_or_string == Some(true) {
        let max = match s.max_length {
            Some(n) => non_negative(n) * 4,
            None => MAX_REQUEST_BYTES - 2,
        };
        return Some(Decl::prim(Prim::Dyn, max, 1));
    }
    match s.type_.as_deref() {
        Some("array") => {
            let Some(JSONSchemaPropsOrArray::Schema(items)) = &s.items else {
                return None;
            };
            let item = decl(items, items.x_kubernetes_embedded_resource == Some(true))?;
            let max = match s.max_items {
                Some(n) => non_negative(n),
                None => (MAX_REQUEST_BYTES - 2) / (item.min_size + 1),
            };
            Some(Decl {
                kind: DeclKind::List(Box::new(item)),
                max_elements: max,
                min_size: 2,
            })
        }
        Some("object") => {
            if let Some(JSONSchemaPropsOrBool::Schema(values)) = &s.additional_properties {
                let value = decl(values, values.x_kubernetes_embedded_resource == Some(true))?;
                let max = match s.max_properties {
                    Some(n) => non_negative(n),
                    None => (MAX_REQUEST_BYTES - 2) / (value.min_size + 6),
                };
                let key = Decl::prim(Prim::String, 0, 2);
                return Some(Decl {
                    kind: DeclKind::Map(Box::new(key), Box::new(value)),
                    max_elements: max,
                    min_size: 2,
                });
            }
            let required = s.required.as_deref().unwrap_or_default();
            let mut fields = BTreeMap::new();
            let mut min_size = 2;
            let meta = (resource_root && !has_type_and_object_meta(s)).then(type_and_object_meta);
            let props = s.properties.iter().flatten();
            let props = props.filter(|(n, _)| meta.is_none() || !META.contains(&n.as_str()));
            for (name, prop) in props.chain(meta.iter().flatten().map(|(n, p)| (n, p))) {
                let Some(field) = decl(prop, prop.x_kubernetes_embedded_resource == Some(true))
                else {
                    continue;
                };
                if required.contains(name) && prop.default.is_none() {
                    min_size += name.len() as u64 + field.min_size + 4;
                }
                if let Some(escaped) = escape(name) {
                    fields.insert(escaped, field);
                }
            }
            Some(Decl {
                kind: DeclKind::Object(fields),
                max_elements: 0,
                min_size,
            })
        }
        Some("string") => Some(match s.format.as_deref() {
            Some("byte") => Decl::prim(
                Prim::Bytes,
                s.max_length.map_or(MAX_REQUEST_BYTES - 2, non_negative),
                2,
            ),
            Some("duration") => Decl::prim(Prim::Duration, 32, 3),
            Some("date") => Decl::prim(Prim::Timestamp, 12, 12),
            Some("date-time") => Decl::prim(Prim::Timestamp, 32, 21),
            _ => {
                let max = match (s.max_length, &s.enum_) {
                    (Some(n), _) => non_negative(n) * 4,
                    (None, Some(values)) if !values.is_empty() => values
                        .iter()
                        .filter_map(|v| v.0.as_str())
                        .map(|v| v.len() as u64)
                        .max()
                        .unwrap_or(0),
                    _ => MAX_REQUEST_BYTES - 2,
                };
                Decl::prim(Prim::String, max, 2)
            }
        }),
        Some("boolean") => Some(Decl::prim(Prim::Bool, 0, 4)),
        Some("number") => Some(Decl::prim(Prim::Double, 0, 1)),
        Some("integer") => Some(Decl::prim(Prim::Int, 0, 1)),
        _ => None,
    }
}

const META: [&str; 3] = ["kind", "apiVersion", "metadata"];

/// Whether the root of a resource already declares `kind`, `apiVersion` and
/// `metadata.{name,generateName}` as `WithTypeAndObjectMeta` wants them.
fn has_type_and_object_meta(s: &JSONSchemaProps) -> bool {
    let is = |p: Option<&JSONSchemaProps>, t: &str| p.and_then(|p| p.type_.as_deref()) == Some(t);
    let props = s.properties.as_ref();
    let meta = props.and_then(|p| p.get("metadata"));
    let meta_props = meta.and_then(|m| m.properties.as_ref());
    is(props.and_then(|p| p.get("kind")), "string")
        && is(props.and_then(|p| p.get("apiVersion")), "string")
        && is(meta, "object")
        && is(meta_props.and_then(|p| p.get("name")), "string")
        && is(meta_props.and_then(|p| p.get("generateName")), "string")
}

/// `WithTypeAndObjectMeta`: the `kind`, `apiVersion` and `metadata.{name,generateName}` the API
/// server always declares at the root of a resource (in place of the schema's own).
fn type_and_object_meta() -> Vec<(String, JSONSchemaProps)> {
    let string = || JSONSchemaProps {
        type_: Some("string".into()),
        ..Default::default()
    };
    let metadata = JSONSchemaProps {
        type_: Some("object".into()),
        properties: Some(
            [("name".into(), string()), ("generateName".into(), string())]
                .into_iter()
                .collect(),
        ),
        ..Default::default()
    };
    vec![
        ("kind".into(), string()),
        ("apiVersion".into(), string()),
        ("metadata".into(), metadata),
    ]
}

/// CEL's words that a property name may not be used as unescaped.
const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// A property name as CEL names it (`apiservercel.Escape`): `__dash__` for `-`, `__dot__` for
/// `.`, `__slash__` for `/`, `__underscores__` for `__`, `__if__` for a reserved word; `None` when
/// it cannot be named (it starts with a digit or holds another character): such a property is
/// invisible to rules.
pub(in crate::crdgen) fn escape(name: &str) -> Option<String> {
    if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '_' if chars.peek() == Some(&'_') => {
                chars.next();
                out.push_str("__underscores__");
            }
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escapes_as_the_api_server_does() {
        assert_eq!(
            escape("a-b.c/d").as_deref(),
            Some("a__dash__b__dot__c__slash__d")
        );
        assert_eq!(escape("a__b").as_deref(), Some("a__underscores__b"));
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(escape("1a"), None);
        assert_eq!(escape("a b"), None);
        assert_eq!(escape("plain_name").as_deref(), Some("plain_name"));
    }
}
