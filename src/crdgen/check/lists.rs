//! The `x-kubernetes-*` list and map combinations kube-apiserver refuses
//! (`ValidateCustomResourceDefinitionOpenAPISchema` and `validateMapListKeysMapSet`): a list type
//! other than atomic, set or map, or on a non-array; list-map keys without `list-type: map` (and
//! the reverse), keys that are not properties of object items, not scalars, duplicated,
//! nullable, or neither required nor defaulted; nullable items of a set or map list; set items
//! that are objects without `map-type: atomic` or lists without `list-type: atomic`; a map type
//! other than granular or atomic, or on a non-object.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray,
};
use serde_json::Value;

use super::{Place, Refusal};

const LIST_TYPE: &str = "x-kubernetes-list-type";
const MAP_KEYS: &str = "x-kubernetes-list-map-keys";
const MAP_TYPE: &str = "x-kubernetes-map-type";

/// One node's refusals, a port of the upstream checks named in the module's doc, kept as one
/// function so it reads beside them.
pub(super) fn check(s: &JSONSchemaProps, place: &Place, out: &mut Vec<Refusal>) {
    let list_type = s.x_kubernetes_list_type.as_deref();
    let lt = || Value::String(list_type.unwrap_or_default().into());
    let keys_value = || Value::from(s.x_kubernetes_list_map_keys.clone().unwrap_or_default());
    let mut refuse = |reason: String, fix: &str, key: &'static str, value: Value| {
        out.push(Refusal::at(place, reason, fix).by(key, &value))
    };
    let items = match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(i)) => Some(&**i),
        _ => None,
    };
    if let Some(t) = list_type {
        if s.type_.as_deref() != Some("array") {
            refuse(
                format!(
                    "type must be array if x-kubernetes-list-type is specified (it is `{t}` on a {})",
                    s.type_.as_deref().unwrap_or("node without a type")
                ),
                "move `x-kubernetes-list-type` to a Vec field",
                LIST_TYPE,
                lt(),
            );
        } else if !matches!(t, "atomic" | "set" | "map") {
            refuse(
                format!(
                    "x-kubernetes-list-type: Unsupported value: \"{t}\": supported values: \"atomic\", \"map\", \"set\""
                ),
                "use one of atomic, set, map",
                LIST_TYPE,
                lt(),
            );
        }
    }
    if t_is(list_type, "set")
        && let Some(i) = items
    {
        match i.type_.as_deref() {
            Some("array") if i.x_kubernetes_list_type.as_deref().is_some_and(|t| t != "atomic") => refuse(
                "items.x-kubernetes-list-type must be atomic as item of a list with x-kubernetes-list-type=set".into(),
                "make the inner lists `x-kubernetes-list-type: atomic`, or the outer list atomic",
                LIST_TYPE,
                lt(),
            ),
            Some("object") if i.x_kubernetes_map_type.as_deref() != Some("atomic") => refuse(
                "items.x-kubernetes-map-type must be atomic as item of a list with x-kubernetes-list-type=set (set items that are objects are compared whole)".into(),
                "key the list on a field instead (`x-kubernetes-list-type: map` with `x-kubernetes-list-map-keys`), or make the item struct `#[schemars(extend(\"x-kubernetes-map-type\" = \"atomic\"))]`",
                LIST_TYPE,
                lt(),
            ),
            _ => {}
        }
    }
    let keys = s.x_kubernetes_list_map_keys.as_deref().unwrap_or_default();
    if !keys.is_empty() && !t_is(list_type, "map") {
        refuse(
            "x-kubernetes-list-type must be map if x-kubernetes-list-map-keys is non-empty".into(),
            "set `\"x-kubernetes-list-type\" = \"map\"` next to the keys, or drop the keys",
            MAP_KEYS,
            keys_value(),
        );
    }
    if t_is(list_type, "map") {
        if keys.is_empty() {
            refuse(
                "x-kubernetes-list-map-keys must not be empty if x-kubernetes-list-type is map"
                    .into(),
                "add `\"x-kubernetes-list-map-keys\" = [\"name\"]` next to the list type",
                LIST_TYPE,
                lt(),
            );
        }
        match items {
            None => refuse(
                "items must have a single schema if x-kubernetes-list-type is map".into(),
                "use a Vec of structs",
                LIST_TYPE,
                lt(),
            ),
            Some(i) if i.type_.as_deref() != Some("object") => refuse(
                format!(
                    "items.type must be object if parent array's x-kubernetes-list-type is map (it is {})",
                    i.type_.as_deref().unwrap_or("empty")
                ),
                "use a Vec of structs, or `x-kubernetes-list-type: atomic` / `set`",
                LIST_TYPE,
                lt(),
            ),
            Some(i) => map_keys(i, keys, &mut refuse, keys_value()),
        }
    }
    if matches!(list_type, Some("set" | "map"))
        && let Some(i) = items
        && i.nullable == Some(true)
    {
        refuse(
            format!(
                "items.nullable: cannot be nullable when x-kubernetes-list-type is {}",
                list_type.unwrap_or_default()
            ),
            "make the items non-optional (`Vec<T>`, not `Vec<Option<T>>`)",
            LIST_TYPE,
            lt(),
        );
    }
    if let Some(m) = s.x_kubernetes_map_type.as_deref() {
        let mt = Value::String(m.into());
        if s.type_.as_deref() != Some("object") {
            refuse(
                format!(
                    "type must be object if x-kubernetes-map-type is specified (it is `{m}` on a {})",
                    s.type_.as_deref().unwrap_or("node without a type")
                ),
                "move `x-kubernetes-map-type` to a map or struct field",
                MAP_TYPE,
                mt,
            );
        } else if m != "granular" && m != "atomic" {
            refuse(
                format!(
                    "x-kubernetes-map-type: Unsupported value: \"{m}\": supported values: \"atomic\", \"granular\""
                ),
                "use granular or atomic",
                MAP_TYPE,
                mt,
            );
        }
    }
}

fn t_is(t: Option<&str>, v: &str) -> bool {
    t == Some(v)
}

/// The keys of a list-map over object items `i`.
fn map_keys(
    i: &JSONSchemaProps,
    keys: &[String],
    refuse: &mut impl FnMut(String, &str, &'static str, Value),
    keys_value: Value,
) {
    for (n, key) in keys.iter().enumerate() {
        let Some(prop) = i.properties.as_ref().and_then(|p| p.get(key)) else {
            refuse(
                format!(
                    "x-kubernetes-list-map-keys: entries must all be names of item properties (`{key}` is not one)"
                ),
                "name a field of the item struct (as serialized, after renames) in `x-kubernetes-list-map-keys`",
                MAP_KEYS,
                keys_value.clone(),
            );
            continue;
        };
        if keys[..n].contains(key) {
            refuse(
                format!(
                    "x-kubernetes-list-map-keys must not contain duplicate entries (`{key}` is listed twice)"
                ),
                "list each key once",
                MAP_KEYS,
                keys_value.clone(),
            );
        }
        if matches!(prop.type_.as_deref(), Some("array" | "object")) {
            refuse(
                format!(
                    "items.properties[{key}].type must be a scalar type if parent array's x-kubernetes-list-type is map"
                ),
                "key the list on a string, integer, number or boolean field",
                MAP_KEYS,
                keys_value.clone(),
            );
        }
        let required = i.required.as_ref().is_some_and(|r| r.contains(key));
        if !required && prop.default.is_none() {
            refuse(
                format!(
                    "items.properties[{key}].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"
                ),
                "make the key field non-optional (not an `Option`, no `#[serde(default)]`, no `skip_serializing_if`), or give it a default",
                MAP_KEYS,
                keys_value.clone(),
            );
        }
        if prop.nullable == Some(true) {
            refuse(
                format!(
                    "items.properties[{key}].nullable: this property is in x-kubernetes-list-map-keys, so it cannot be nullable"
                ),
                "make the key field non-optional",
                MAP_KEYS,
                keys_value.clone(),
            );
        }
    }
}
