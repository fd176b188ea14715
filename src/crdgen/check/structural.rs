//! kube-apiserver's structural-schema and OpenAPI rules for one node
//! (`apiextensions-apiserver/pkg/apiserver/schema/validation.go`, `complete.go` and
//! `ValidateCustomResourceDefinitionOpenAPISchema`): every specified node has a known type
//! (unless int-or-string or preserving unknown fields), `items` is one schema, no `uniqueItems`,
//! no `properties` beside a non-`true` `additionalProperties`, no unsupported keyword, a valid
//! `pattern`, the root an object that is not nullable, `kind`/`apiVersion`/`metadata` of the
//! right types, embedded resources consistent, value validations (`anyOf`/`oneOf`/`allOf`/`not`)
//! free of everything structural, and a `default` only outside the resource's metadata and valid
//! there ([`super::defaults`]).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use serde_json::Value;

use super::{Place, Refusal};

const TYPES: &[&str] = &["array", "boolean", "integer", "number", "object", "string"];

/// One node's refusals, in the order of the upstream validation this ports (named in the module's
/// doc): a port of long Go functions, kept as one function so it reads beside them.
pub(super) fn check(s: &JSONSchemaProps, place: &Place, out: &mut Vec<Refusal>) {
    let mut refuse = |reason: String, fix: &str| out.push(Refusal::at(place, reason, fix));
    let ty = s.type_.as_deref().unwrap_or_default();
    let int_or_string = s.x_kubernetes_int_or_string == Some(true);
    let preserve = s.x_kubernetes_preserve_unknown_fields == Some(true);
    let embedded = s.x_kubernetes_embedded_resource == Some(true);
    if ty == "null" {
        refuse(
            "type cannot be set to null, use nullable as an alternative".into(),
            "use an `Option` field (nullable) instead of a null type",
        );
    } else if !ty.is_empty() && !TYPES.contains(&ty) {
        refuse(
            format!(
                "type: Unsupported value: \"{ty}\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\""
            ),
            "use one of the OpenAPI v3 types",
        );
    }
    if embedded && ty != "object" {
        refuse(
            "type must be object if x-kubernetes-embedded-resource is true".into(),
            "use `x-kubernetes-embedded-resource` on an object",
        );
    } else if ty.is_empty() && !int_or_string && !preserve {
        let what = if place.root {
            "at the root"
        } else if place.path.ends_with("[*]") {
            "for specified array items"
        } else {
            "for specified object fields"
        };
        refuse(
            format!(
                "type: must not be empty {what} (the schema is not structural; a bare serde_json::Value?)"
            ),
            "give the field a concrete type, or keep any JSON with `#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]` (add `\"type\" = \"object\"` to accept objects only)",
        );
    }
    if place.root {
        if !ty.is_empty() && ty != "object" {
            refuse(
                format!("type must be object at the root (it is {ty})"),
                "make the root an object",
            );
        }
        if s.nullable == Some(true) {
            refuse(
                "nullable cannot be true at the root".into(),
                "drop nullable at the root",
            );
        }
    }
    if ty == "array" && s.items.is_none() {
        refuse(
            "items: Required value: must be specified for an array".into(),
            "give the list an item type",
        );
    }
    if let Some(JSONSchemaPropsOrArray::Schemas(_)) = &s.items {
        refuse(
            "items must be a schema object and not an array (a tuple or fixed-size array?)".into(),
            "use a Vec of one type, or a struct with named fields",
        );
    }
    if s.unique_items == Some(true) {
        refuse(
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
                .into(),
            "drop uniqueItems (use `x-kubernetes-list-type: set` for a list of unique scalars)",
        );
    }
    match &s.additional_properties {
        Some(JSONSchemaPropsOrBool::Bool(true)) | None => {}
        Some(JSONSchemaPropsOrBool::Bool(false))
            if s.properties.as_ref().is_some_and(|p| !p.is_empty()) =>
        {
            refuse(
                "additionalProperties and properties are mutual exclusive (`#[serde(deny_unknown_fields)]` writes `additionalProperties: false`)".into(),
                "drop `#[serde(deny_unknown_fields)]` (the API server prunes unknown fields anyway), or use a map without named fields",
            )
        }
        Some(_) if s.properties.as_ref().is_some_and(|p| !p.is_empty()) => refuse(
            "additionalProperties and properties are mutual exclusive (a map beside named fields: a `#[serde(flatten)]` map field, or `additionalProperties` written in an attribute)".into(),
            "give the map a field of its own instead of flattening it (e.g. `pub extra: BTreeMap<String, String>`), or keep unknown fields with `#[schemars(extend(\"x-kubernetes-preserve-unknown-fields\" = true))]`",
        ),
        Some(_) if place.root => refuse(
            "additionalProperties must not be used at the root".into(),
            "use named fields at the root",
        ),
        Some(_) if embedded => refuse(
            "additionalProperties must not be used if x-kubernetes-embedded-resource is set".into(),
            "use named fields in an embedded resource",
        ),
        Some(_) => {}
    }
    let unsupported = [
        ("$ref", s.ref_path.is_some()),
        ("id", s.id.is_some()),
        ("additionalItems", s.additional_items.is_some()),
        ("patternProperties", s.pattern_properties.is_some()),
        ("definitions", s.definitions.is_some()),
        ("dependencies", s.dependencies.is_some()),
    ];
    for (k, present) in unsupported {
        if present {
            refuse(
                format!("{k} is not supported"),
                "inline the schema; CRD schemas are self-contained",
            );
        }
    }
    if s.x_kubernetes_preserve_unknown_fields == Some(false) {
        refuse(
            "x-kubernetes-preserve-unknown-fields must be true or undefined".into(),
            "drop `x-kubernetes-preserve-unknown-fields: false`",
        );
    }
    if int_or_string && preserve {
        refuse(
            "x-kubernetes-preserve-unknown-fields must be false if x-kubernetes-int-or-string is true".into(),
            "drop one of the two",
        );
    }
    if int_or_string && embedded {
        refuse(
            "x-kubernetes-embedded-resource must be false if x-kubernetes-int-or-string is true"
                .into(),
            "drop one of the two",
        );
    }
    if embedded && !preserve && s.properties.as_ref().is_none_or(|p| p.is_empty()) {
        refuse(
            "properties must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields".into(),
            "give the embedded resource fields, or preserve its unknown fields",
        );
    }
    if embedded && place.in_resource_meta {
        refuse(
            "x-kubernetes-embedded-resource must not be used inside of resource meta".into(),
            "drop it from apiVersion/kind/metadata",
        );
    }
    if place.root || embedded {
        let props = s.properties.as_ref();
        for k in ["kind", "apiVersion"] {
            if let Some(p) = props.and_then(|p| p.get(k))
                && p.type_.as_deref() != Some("string")
            {
                refuse(
                    format!("properties[{k}].type must be string"),
                    "declare it as a String",
                );
            }
        }
        if let Some(m) = props.and_then(|p| p.get("metadata"))
            && m.type_.as_deref() != Some("object")
        {
            refuse(
                "properties[metadata].type must be object".into(),
                "declare metadata as an object",
            );
        }
    }
    if let Some(p) = &s.pattern
        && let Some(why) = super::goregex::error(p)
    {
        out.push(
            Refusal::at(
                place,
                format!("pattern must be a valid regular expression, but isn't: {why}"),
                &format!("write it as Go's regexp parses it: {}", why.rule()),
            )
            .by("pattern", &Value::String(p.clone())),
        );
        return;
    }
    let mut refuse = |reason: String, fix: &str| out.push(Refusal::at(place, reason, fix));
    for (name, branch) in value_validations(s) {
        let skip_top_type = int_or_string && is_int_or_string_branch(s, &name);
        if let Some((at, what)) = structural_inside(branch, skip_top_type, true) {
            refuse(
                format!("{name}{at}: {what} to be structural"),
                "make the enum's variants share one structure (kube's structural rewrite hoists only tagged/untagged variants with properties), and keep doc comments off the variants' inner schemas",
            );
        }
    }
    if let Some(d) = &s.default {
        let why = if place.no_defaults {
            Some("default must not be set in the metadata of the resource (nor in maps inside resource metadata)".to_string())
        } else {
            super::defaults::check(&d.0, s, "default").err()
        };
        if let Some(why) = why {
            out.push(
                Refusal::at(
                    place,
                    why,
                    "make the `#[serde(default)]` / `Default` value a valid value of the field's schema (its type, enum, bounds, pattern and required fields)",
                )
                .by("default", &d.0),
            );
        }
    }
}

/// IntOrString's `anyOf: [{type: integer}, {type: string}]` (or the same as the first `allOf`)
/// may carry types.
fn is_int_or_string_branch(s: &JSONSchemaProps, name: &str) -> bool {
    let pair = |v: &[JSONSchemaProps]| {
        v.len() == 2
            && v[0].type_.as_deref() == Some("integer")
            && v[1].type_.as_deref() == Some("string")
    };
    (name.starts_with("anyOf") && s.any_of.as_deref().is_some_and(pair))
        || (name.starts_with("allOf[0]")
            && s.all_of
                .as_deref()
                .and_then(|a| a.first())
                .and_then(|f| f.any_of.as_deref())
                .is_some_and(pair))
}

/// The value-validation branches of a node (`anyOf[0]`..., `not`).
fn value_validations(s: &JSONSchemaProps) -> Vec<(String, &JSONSchemaProps)> {
    let mut v = Vec::new();
    for (name, list) in [
        ("anyOf", &s.any_of),
        ("allOf", &s.all_of),
        ("oneOf", &s.one_of),
    ] {
        for (i, b) in list.iter().flatten().enumerate() {
            v.push((format!("{name}[{i}]"), b));
        }
    }
    if let Some(n) = &s.not {
        v.push(("not".into(), &**n));
    }
    v
}

/// The first structural keyword under a value-validation branch (`skip_top_type`: IntOrString's
/// branches may have a type at their top), as (path, what the API server says).
fn structural_inside(
    s: &JSONSchemaProps,
    skip_top_type: bool,
    top: bool,
) -> Option<(String, String)> {
    let checks: [(&str, bool, &str); 12] = [
        (
            "type",
            s.type_.is_some() && !(top && skip_top_type),
            "must be empty",
        ),
        (
            "additionalProperties",
            s.additional_properties.is_some(),
            "must be undefined",
        ),
        ("default", s.default.is_some(), "must be undefined"),
        (
            "title",
            s.title.as_deref().is_some_and(|t| !t.is_empty()),
            "must be empty",
        ),
        (
            "description",
            s.description.as_deref().is_some_and(|t| !t.is_empty()),
            "must be empty",
        ),
        ("nullable", s.nullable == Some(true), "must be false"),
        (
            "x-kubernetes-preserve-unknown-fields",
            s.x_kubernetes_preserve_unknown_fields == Some(true),
            "must be false",
        ),
        (
            "x-kubernetes-embedded-resource",
            s.x_kubernetes_embedded_resource == Some(true),
            "must be false",
        ),
        (
            "x-kubernetes-int-or-string",
            s.x_kubernetes_int_or_string == Some(true),
            "must be false",
        ),
        (
            "x-kubernetes-list-map-keys",
            s.x_kubernetes_list_map_keys
                .as_ref()
                .is_some_and(|k| !k.is_empty()),
            "must be empty",
        ),
        (
            "x-kubernetes-list-type",
            s.x_kubernetes_list_type.is_some(),
            "must be undefined",
        ),
        (
            "x-kubernetes-validations",
            s.x_kubernetes_validations
                .as_ref()
                .is_some_and(|v| !v.is_empty()),
            "must be empty",
        ),
    ];
    for (k, bad, what) in checks {
        if bad {
            return Some((format!(".{k}"), what.into()));
        }
    }
    if s.x_kubernetes_map_type.is_some() {
        return Some((".x-kubernetes-map-type".into(), "must be undefined".into()));
    }
    if s.properties
        .as_ref()
        .is_some_and(|p| p.contains_key("metadata"))
    {
        return Some((
            ".properties[metadata]".into(),
            "must not be specified in a nested context".into(),
        ));
    }
    for (k, p) in s.properties.iter().flatten() {
        if let Some((at, what)) = structural_inside(p, false, false) {
            return Some((format!(".properties[{k}]{at}"), what));
        }
    }
    if let Some(JSONSchemaPropsOrArray::Schema(i)) = &s.items
        && let Some((at, what)) = structural_inside(i, false, false)
    {
        return Some((format!(".items{at}"), what));
    }
    for (name, b) in value_validations(s) {
        if let Some((at, what)) = structural_inside(b, false, false) {
            return Some((format!(".{name}{at}"), what));
        }
    }
    None
}
