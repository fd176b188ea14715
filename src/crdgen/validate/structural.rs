//! kube-apiserver's structural-schema rules (`apiextensions-apiserver/pkg/apis/apiextensions/
//! validation` and `.../schema`): every specified node has a type (unless it is
//! `x-kubernetes-int-or-string` or preserves unknown fields), `items` is one schema, value
//! validations (`anyOf`/`oneOf`/`allOf`/`not`) carry no types (but IntOrString's pattern), and a
//! `default` validates against its schema.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use serde_json::Value;

use super::{Place, Refusal};

pub(super) fn check(s: &JSONSchemaProps, place: &Place<'_>, out: &mut Vec<Refusal>) {
    let mut refuse = |reason: String, fix: &str| out.push(Refusal::at(place, reason, fix));
    if s.type_.as_deref().is_none_or(str::is_empty)
        && s.x_kubernetes_int_or_string != Some(true)
        && s.x_kubernetes_preserve_unknown_fields != Some(true)
    {
        refuse(
            "type: must not be empty for specified object fields (the schema is not structural; a bare serde_json::Value?)".into(),
            "give the field a concrete type, or keep any JSON with `#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]` (add `\"type\" = \"object\"` to accept objects only)",
        );
    }
    if let Some(JSONSchemaPropsOrArray::Schemas(_)) = &s.items {
        refuse(
            "items must be a schema object and not an array (a tuple or fixed-size array?)".into(),
            "use a Vec of one type, or a struct with named fields",
        );
    }
    let int_or_string = s.x_kubernetes_int_or_string == Some(true);
    for (i, branch) in value_validations(s) {
        if let Some(path) = typed_inside(branch, int_or_string && i < 2) {
            refuse(
                format!("{path}: type must be empty inside anyOf/oneOf/allOf/not to be structural"),
                "make the enum's variants share one structure (kube's structural rewrite hoists only tagged/untagged variants with properties)",
            );
        }
    }
    if let Some(d) = &s.default
        && let Err(why) = matches_schema(&d.0, s, "default")
    {
        refuse(
            why,
            "make the `#[serde(default)]` / `Default` value a valid value of the field's schema",
        );
    }
}

/// The value-validation branches of a node (index, schema): `anyOf`, `allOf`, `oneOf`, `not`.
fn value_validations(s: &JSONSchemaProps) -> Vec<(usize, &JSONSchemaProps)> {
    let mut v: Vec<(usize, &JSONSchemaProps)> = Vec::new();
    for list in [&s.any_of, &s.all_of, &s.one_of].into_iter().flatten() {
        v.extend(list.iter().enumerate());
    }
    if let Some(n) = &s.not {
        v.push((usize::MAX, n));
    }
    v
}

/// The first place under a value-validation branch that has a type (`exempt`: the branch may
/// have one at its top, as IntOrString's `anyOf: [{type: integer}, {type: string}]`).
fn typed_inside(s: &JSONSchemaProps, exempt: bool) -> Option<String> {
    if s.type_.is_some() && !exempt {
        return Some("anyOf/oneOf/allOf/not".into());
    }
    for (k, p) in s.properties.iter().flatten() {
        if let Some(at) = typed_inside(p, false) {
            return Some(format!("properties[{k}].{at}"));
        }
    }
    if let Some(JSONSchemaPropsOrArray::Schema(i)) = &s.items
        && let Some(at) = typed_inside(i, false)
    {
        return Some(format!("items.{at}"));
    }
    if let Some(JSONSchemaPropsOrBool::Schema(a)) = &s.additional_properties
        && let Some(at) = typed_inside(a, false)
    {
        return Some(format!("additionalProperties.{at}"));
    }
    None
}

/// Whether `v` is a valid value of `s` (type, nullability, enum), recursively.
fn matches_schema(v: &Value, s: &JSONSchemaProps, at: &str) -> Result<(), String> {
    if v.is_null() {
        // A null in a default is refused where the schema has an enum, even a nullable one with
        // null among its values (kube-apiserver 1.36 says "Unsupported value: null").
        return if s.nullable == Some(true) && s.enum_.is_none() {
            Ok(())
        } else {
            Err(format!(
                "{at}: null is not allowed (the schema is not nullable)"
            ))
        };
    }
    if let Some(values) = &s.enum_
        && !values.iter().any(|e| e.0 == *v)
    {
        return Err(format!("{at}: unsupported value {v}, not one of the enum"));
    }
    let ok = match s.type_.as_deref() {
        Some("string") => v.is_string(),
        Some("integer") => v.is_i64() || v.is_u64(),
        Some("number") => v.is_number(),
        Some("boolean") => v.is_boolean(),
        Some("array") => v.is_array(),
        Some("object") => v.is_object(),
        _ => true,
    };
    if !ok {
        return Err(format!(
            "{at}: {v} is not of type {}",
            s.type_.as_deref().unwrap_or_default()
        ));
    }
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let sub = s.properties.as_ref().and_then(|p| p.get(k)).or(
                    match &s.additional_properties {
                        Some(JSONSchemaPropsOrBool::Schema(a)) => Some(&**a),
                        _ => None,
                    },
                );
                if let Some(sub) = sub {
                    matches_schema(x, sub, &format!("{at}.{k}"))?;
                }
            }
        }
        Value::Array(a) => {
            if let Some(JSONSchemaPropsOrArray::Schema(i)) = &s.items {
                for (n, x) in a.iter().enumerate() {
                    matches_schema(x, i, &format!("{at}[{n}]"))?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}
