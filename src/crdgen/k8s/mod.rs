//! The recorded Kubernetes schemas, a leaf of crdgen (it imports nothing of it): every type of
//! k8s-openapi that implements `JsonSchema`, by its Rust path: its schema as the real
//! type gives it to a `SchemaGenerator`, and its serialized `Default`.
//!
//! The schemas are data recorded from the real types (`schemas`, generated and checked
//! type by type against k8s-openapi by `tests/crdgen/k8s_schemas.rs`), not calls into k8s-openapi's
//! `schemars` feature: compiling that feature (and every type's `Serialize` for the defaults)
//! made about a quarter of operator-rs's cold build and 8 MB of its binary.
//!
//! The record keeps each type in the form schemars gives it without inlining: the types it
//! holds are `{"$ref": "#/components/schemas/<name>", ...}` with their siblings (a field's
//! description). [`K8sType::schema`](crate::crdgen::k8s::K8sType::schema) inlines them as schemars does with `inline_subschemas`:
//! the referenced type's schema with the siblings written over it, and a reference (plus a
//! definition in the generator) where a type contains itself.

use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value};

mod schemas;

/// How a type's schema was recorded: every k8s-openapi type is one schemars keeps as a definition
/// (`inline_schema()` is false; `tests/crdgen/k8s_schemas.rs` refuses to record one that is not), so the
/// record holds its name in [`schemas::DEFINITIONS`].
pub(crate) enum Recorded {
    Named(&'static str),
}

/// One k8s-openapi type in the record.
pub(crate) struct Entry {
    /// Its Rust path, `k8s_openapi::api::core::v1::PodSpec`.
    pub path: &'static str,
    pub schema: Recorded,
    /// `serde_json::to_value(T::default())`, as JSON, where the type has `Default`.
    pub default: Option<&'static str>,
}

/// Where schemars (OpenAPI 3 settings) points its references.
const REF_PREFIX: &str = "#/components/schemas/";

/// One k8s-openapi type.
#[derive(Clone, Copy)]
pub struct K8sType(&'static Entry);

/// The k8s-openapi type at `path` (`k8s_openapi::api::core::v1::PodSpec`), if there is one.
pub fn lookup(path: &str) -> Option<K8sType> {
    let types = schemas::TYPES;
    types
        .binary_search_by(|e| e.path.cmp(path))
        .ok()
        .map(|i| K8sType(&types[i]))
}

impl K8sType {
    /// `g.subschema_for::<T>()`, as the real type gives it.
    pub fn schema(self, g: &mut SchemaGenerator) -> Schema {
        let Recorded::Named(name) = self.0.schema;
        let value = Inliner { g, pending: vec![] }.named(name);
        Schema::try_from(value).unwrap_or_default()
    }

    /// `serde_json::to_value(T::default())`, where `T: Default`.
    pub fn default(self) -> Option<Value> {
        self.0.default.map(parse)
    }
}

fn parse(json: &str) -> Value {
    serde_json::from_str(json)
        .expect("k8s/schemas.rs holds valid JSON (tests/crdgen/k8s_schemas.rs)")
}

fn definition(name: &str) -> &'static str {
    let defs = schemas::DEFINITIONS;
    match defs.binary_search_by(|(n, _)| (*n).cmp(name)) {
        Ok(i) => defs[i].1,
        Err(_) => panic!("k8s/schemas.rs references `{name}` without recording it"),
    }
}

/// Inlines recorded references the way `SchemaGenerator::subschema_for` does with
/// `inline_subschemas`.
struct Inliner<'g> {
    g: &'g mut SchemaGenerator,
    /// The types being inlined (schemars' `pending_schema_ids`).
    pending: Vec<&'static str>,
}

impl Inliner<'_> {
    /// The schema of the type named `name` (`T::json_schema`), its references inlined.
    fn named(&mut self, name: &'static str) -> Value {
        let recorded = definition(name);
        self.pending.push(name);
        let v = self.inline(parse(recorded));
        self.pending.pop();
        v
    }

    fn inline(&mut self, v: Value) -> Value {
        match v {
            Value::Object(map) => self.object(map),
            Value::Array(items) => {
                Value::Array(items.into_iter().map(|i| self.inline(i)).collect())
            }
            other => other,
        }
    }

    fn object(&mut self, mut map: Map<String, Value>) -> Value {
        let target = match map.get("$ref") {
            Some(Value::String(r)) => r.strip_prefix(REF_PREFIX).map(definition_name),
            _ => None,
        };
        let Some(name) = target else {
            return Value::Object(map.into_iter().map(|(k, v)| (k, self.inline(v))).collect());
        };
        map.remove("$ref");
        let mut base = if self.pending.contains(&name) {
            self.reference(name)
        } else {
            self.named(name)
        };
        // The siblings of the reference were inserted over the referenced schema.
        if let Value::Object(b) = &mut base {
            for (k, v) in map {
                let v = self.inline(v);
                b.insert(k, v);
            }
        }
        base
    }

    /// A type within itself: schemars refers to its definition, written once.
    fn reference(&mut self, name: &'static str) -> Value {
        if !self.g.definitions().contains_key(name) {
            self.g.definitions_mut().insert(name.into(), false.into());
            let schema = self.named(name);
            self.g.definitions_mut().insert(name.into(), schema);
        }
        let path = &self.g.settings().definitions_path;
        let path = path.strip_prefix('#').unwrap_or(path);
        let path = path.strip_suffix('/').unwrap_or(path);
        serde_json::json!({ "$ref": format!("#{path}/{name}") })
    }
}

/// The recorded name behind a reference (`'static`, for the pending list).
fn definition_name(encoded: &str) -> &'static str {
    let defs = schemas::DEFINITIONS;
    match defs.binary_search_by(|(n, _)| (*n).cmp(encoded)) {
        Ok(i) => defs[i].0,
        Err(_) => panic!("k8s/schemas.rs references `{encoded}` without recording it"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_is_sorted_for_binary_search() {
        let t = schemas::TYPES;
        assert!(t.windows(2).all(|w| w[0].path < w[1].path));
        let d = schemas::DEFINITIONS;
        assert!(d.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
