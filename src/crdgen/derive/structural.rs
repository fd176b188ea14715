//! kube-core's `StructuralSchemaRewriter` in one pass over the JSON, with byte-identical output.
//!
//! kube-core's rewriter deserializes every node into its private `SchemaObject` model and
//! serializes it back, at every level of the tree, after rewriting the level below: a node at
//! depth `d` is deserialized `d` times, so the pass is quadratic in depth (60 % of `generate crds`
//! on deep schemas). This module visits each node once and applies, in place, exactly what the
//! round trip and the rewrite do to it:
//! - a node that does not deserialize into that model (a `description` that is not a string, a
//!   `required: null`, a subschema that is neither a bool nor an object...) is left as it is, and
//!   makes every ancestor that holds it where the model expects a schema invalid too;
//! - otherwise the node is normalized as the round trip normalizes it (nulls of the model's
//!   optional keywords dropped, `required` sorted and deduplicated, empty `required`/`properties`/
//!   `patternProperties` dropped), its `oneOf`/`anyOf` variants' properties, types and enum values
//!   hoisted, `additionalProperties: bool` beside properties rewritten, and `uniqueItems` dropped.
//!
//! Where kube-core panics (two variants defining one property differently, conflicting variant
//! types), [`rewrite`] returns [`Conflict`]; the caller reruns kube-core's own pass to get its
//! exact panic. `tests/crdgen/structural.rs` checks this module against kube-core's on generated
//! schemas and on every fixture.

use serde_json::{Map, Value};

/// kube-core's rewriter would panic on this schema (its message comes from rerunning it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conflict;

/// The keywords kube-core's model reads as `Option`s: a `null` there is dropped by the round trip.
const OPTIONAL_KEYWORDS: &[&str] = &[
    "description",
    "type",
    "format",
    "enum",
    "anyOf",
    "oneOf",
    "items",
    "additionalItems",
    "maxItems",
    "minItems",
    "uniqueItems",
    "contains",
    "maxProperties",
    "minProperties",
    "additionalProperties",
    "propertyNames",
];
const ARRAY_KEYWORDS: &[&str] = &[
    "items",
    "additionalItems",
    "maxItems",
    "minItems",
    "uniqueItems",
    "contains",
];
const OBJECT_KEYWORDS: &[&str] = &[
    "maxProperties",
    "minProperties",
    "required",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
];
const INSTANCE_TYPES: &[&str] = &[
    "null", "boolean", "object", "array", "number", "string", "integer",
];

/// Rewrite `schema` (the root, and every subschema schemars' `transform_subschemas` reaches) as
/// kube-core's `StructuralSchemaRewriter` does.
pub fn rewrite(schema: &mut Value) -> Result<(), Conflict> {
    visit(schema).map(|_| ())
}

/// [`rewrite`] as a schemars transform, for the generator `crd()` uses. On a [`Conflict`] it
/// panics with [`Conflict`] as the payload.
#[derive(Debug, Clone, Default)]
pub struct StructuralRewriter;

impl schemars::transform::Transform for StructuralRewriter {
    fn transform(&mut self, schema: &mut schemars::Schema) {
        if let Some(map) = schema.as_object_mut()
            && visit_object(map).is_err()
        {
            std::panic::panic_any(Conflict);
        }
    }
}

/// Rewrite one node; `Ok(true)` when it deserializes as kube-core's `Schema` (a bool, or an object
/// its model accepts), which its parent needs to know.
fn visit(v: &mut Value) -> Result<bool, Conflict> {
    match v {
        Value::Bool(_) => Ok(true),
        Value::Object(map) => visit_object(map),
        _ => Ok(false),
    }
}

/// Rewrite the subschemas schemars visits under `key`; whether they are valid where kube-core's
/// model expects schemas (`None`: the model does not read this keyword as schemas).
fn visit_children(key: &str, value: &mut Value) -> Result<Option<bool>, Conflict> {
    Ok(match key {
        "not" | "if" | "then" | "else" => {
            visit(value)?;
            None
        }
        "contains" | "additionalProperties" | "propertyNames" | "additionalItems" => {
            Some(value.is_null() | visit(value)?)
        }
        "allOf" | "prefixItems" | "anyOf" | "oneOf" => {
            let valid = match value {
                Value::Array(items) => all_valid(items.iter_mut())?,
                Value::Null => true,
                _ => false,
            };
            matches!(key, "anyOf" | "oneOf").then_some(valid)
        }
        "items" => Some(match value {
            Value::Array(items) => all_valid(items.iter_mut())?,
            Value::Null => true,
            other => visit(other)?,
        }),
        "properties" | "patternProperties" | "$defs" | "definitions" => {
            let valid = match value {
                Value::Object(map) => all_valid(map.values_mut())?,
                _ => false,
            };
            matches!(key, "properties" | "patternProperties").then_some(valid)
        }
        _ => None,
    })
}

/// Visit every schema (all of them, even after an invalid one); whether all were valid.
fn all_valid<'a>(items: impl Iterator<Item = &'a mut Value>) -> Result<bool, Conflict> {
    let mut valid = true;
    for v in items {
        valid &= visit(v)?;
    }
    Ok(valid)
}

fn visit_object(map: &mut Map<String, Value>) -> Result<bool, Conflict> {
    let mut valid = true;
    for (key, value) in map.iter_mut() {
        if let Some(children_valid) = visit_children(key, value)? {
            valid &= children_valid;
        }
    }
    if !(valid && own_keywords_valid(map)) {
        return Ok(false);
    }
    normalize(map);
    if map.contains_key("oneOf") {
        let mut one_of = take_array(map, "oneOf");
        hoist_properties(&mut one_of, map, true)?;
        hoist_enum_values(&mut one_of, map)?;
        if !one_of.is_empty() {
            map.insert("oneOf".into(), Value::Array(one_of));
        }
    }
    if map.contains_key("anyOf") {
        let mut any_of = take_array(map, "anyOf");
        hoist_properties(&mut any_of, map, false)?;
        map.insert("anyOf".into(), Value::Array(any_of));
    }
    if map.contains_key("properties") {
        match map.get("additionalProperties") {
            Some(Value::Bool(true)) => {
                map.remove("additionalProperties");
                // kube-core inserts it into its `extensions`, but serializes its catch-all copy
                // of the original keys after them: a value already there wins.
                map.entry("x-kubernetes-preserve-unknown-fields")
                    .or_insert(Value::Bool(true));
            }
            Some(Value::Bool(false)) => {
                map.remove("additionalProperties");
            }
            _ => {}
        }
    }
    map.remove("uniqueItems");
    Ok(true)
}

fn take_array(map: &mut Map<String, Value>, key: &str) -> Vec<Value> {
    match map.remove(key) {
        Some(Value::Array(a)) => a,
        _ => unreachable!("{key} was checked to be an array"),
    }
}

/// The node's own keywords have the types kube-core's model gives them.
fn own_keywords_valid(map: &Map<String, Value>) -> bool {
    let nullable_u32 =
        |v: &Value| v.is_null() || v.as_u64().is_some_and(|n| u32::try_from(n).is_ok());
    let nullable_str = |v: &Value| v.is_null() || v.is_string();
    let instance_type = |v: &Value| v.as_str().is_some_and(|s| INSTANCE_TYPES.contains(&s));
    map.iter().all(|(key, v)| match key.as_str() {
        "description" | "format" => nullable_str(v),
        "type" => {
            v.is_null()
                || instance_type(v)
                || v.as_array().is_some_and(|a| a.iter().all(instance_type))
        }
        "enum" => v.is_null() || v.is_array(),
        "maxItems" | "minItems" | "maxProperties" | "minProperties" => nullable_u32(v),
        "uniqueItems" => v.is_null() || v.is_boolean(),
        "required" => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
        _ => true,
    })
}

/// What the round trip through kube-core's model does to a valid node.
fn normalize(map: &mut Map<String, Value>) {
    for key in OPTIONAL_KEYWORDS {
        if map.get(*key).is_some_and(Value::is_null) {
            map.remove(*key);
        }
    }
    if let Some(Value::Array(required)) = map.get_mut("required") {
        required.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        required.dedup();
        if required.is_empty() {
            map.remove("required");
        }
    }
    for key in ["properties", "patternProperties"] {
        if map
            .get(key)
            .and_then(Value::as_object)
            .is_some_and(Map::is_empty)
        {
            map.remove(key);
        }
    }
}

fn has_any(map: &Map<String, Value>, keys: &[&str]) -> bool {
    keys.iter().any(|k| map.contains_key(*k))
}

/// `hoist_subschema_properties`: variants' properties move to the node (a property defined twice
/// must be identical), their types merge into the node's, their `additionalProperties` go; bare
/// variants lose their type and metadata. `push_description`: a variant's description moves to its
/// only property (`oneOf`), or is dropped (`anyOf`).
fn hoist_properties(
    variants: &mut [Value],
    node: &mut Map<String, Value>,
    push_description: bool,
) -> Result<(), Conflict> {
    // Properties given an empty metadata by the hoisting: kube-core's model then compares unequal
    // to the same property without one, though both serialize alike.
    let mut empty_metadata: Vec<String> = Vec::new();
    for variant in variants.iter_mut() {
        let Value::Object(v) = variant else { continue };
        if has_any(v, OBJECT_KEYWORDS) {
            let description = v.remove("description");
            let mut props = match v.remove("properties") {
                Some(Value::Object(p)) => p,
                _ => Map::new(),
            };
            let mut phantom_name = None;
            if let Some(description) = description
                && props.len() == 1
                && let Some((name, Value::Object(only))) = props.iter_mut().next()
            {
                if push_description {
                    only.insert("description".into(), description);
                } else if !has_metadata(only) {
                    phantom_name = Some(name.clone());
                }
            }
            let target = node
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(target) = target else {
                unreachable!("properties was checked to be an object")
            };
            for (name, prop) in props {
                let phantom = phantom_name.as_ref() == Some(&name);
                match target.get(&name) {
                    None => {
                        if phantom {
                            empty_metadata.push(name.clone());
                        }
                        target.insert(name, prop);
                    }
                    Some(existing) => {
                        let existing_phantom = empty_metadata.contains(&name);
                        if *existing != prop
                            || metadata_present(existing, existing_phantom)
                                != metadata_present(&prop, phantom)
                        {
                            return Err(Conflict);
                        }
                    }
                }
            }
            v.remove("additionalProperties");
            if let Some(t) = v.remove("type") {
                merge_type(node, t)?;
            }
        } else if !v.contains_key("enum")
            && !has_any(v, &["anyOf", "oneOf"])
            && !has_any(v, ARRAY_KEYWORDS)
        {
            v.remove("type");
            v.remove("description");
            v.remove("default");
        }
    }
    if node
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        node.remove("properties");
    }
    Ok(())
}

fn has_metadata(schema: &Map<String, Value>) -> bool {
    schema.contains_key("description") || schema.contains_key("default")
}

fn metadata_present(schema: &Value, phantom: bool) -> bool {
    phantom || schema.as_object().is_some_and(has_metadata)
}

/// `merge_metadata`: a variant's type becomes the node's, or must equal it.
fn merge_type(node: &mut Map<String, Value>, t: Value) -> Result<(), Conflict> {
    match node.get("type") {
        None => {
            node.insert("type".into(), t);
            Ok(())
        }
        Some(existing) if *existing == t => Ok(()),
        Some(_) => Err(Conflict),
    }
}

/// `hoist_subschema_enum_values`: `oneOf` variants with an `enum` are removed, their values
/// appended to the node's `enum` and their type merged into the node's.
fn hoist_enum_values(
    variants: &mut Vec<Value>,
    node: &mut Map<String, Value>,
) -> Result<(), Conflict> {
    let mut result = Ok(());
    variants.retain(|variant| {
        let Some(Value::Array(values)) = variant.get("enum") else {
            return true;
        };
        if let Some(t) = variant.get("type")
            && result.is_ok()
        {
            result = merge_type(node, t.clone());
        }
        let common = node
            .entry("enum")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(common) = common {
            common.extend(values.iter().cloned());
        }
        false
    });
    result
}
