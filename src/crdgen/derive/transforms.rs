//! The generator's transforms run over a root schema, each skipped where it would change nothing.
//!
//! `crd()`'s generator ends with eleven transforms (schemars' seven for OpenAPI 3, a second
//! `AddNullable`, the structural rewrite, kube-core's `OptionalEnum` and `OptionalIntOrString`),
//! and each walks the whole tree. Most act on a keyword that a given schema seldom holds (`$ref`,
//! `examples`, `prefixItems`, `unevaluatedProperties`...). One walk over the places they visit
//! (schemars' `transform_subschemas`) finds what the schema holds, and a transform whose keyword
//! is nowhere there is not run: it would find nothing to change. What a transform that does run
//! can add is taken into account for the ones after it:
//! - `ReplaceUnevaluatedProperties` moves a subtree no walk visits into `additionalProperties`
//!   (and adds `true` schemas): after it, every transform runs;
//! - `AddNullable` adds `const` (and `nullable`): `ReplaceConstValue` runs after it;
//! - a second `AddNullable` after one that removes `null` types finds none left (no transform in
//!   between adds a `type`, or a subschema the first did not visit);
//! - a transform this module does not know runs, and so does every one after it.
//!
//! `tests/crdgen/transforms.rs` checks [`run`](crate::crdgen::derive::transforms::run) against running every transform, on generated
//! schemas.

use schemars::Schema;
use schemars::generate::{GenTransform, SchemaGenerator, SchemaSettings};
use schemars::transform::{
    AddNullable, RemoveRefSiblings, ReplaceBoolSchemas, ReplaceConstValue, ReplacePrefixItems,
    ReplaceUnevaluatedProperties, SetSingleExample,
};
use serde_json::Value;

use crate::crdgen::derive::structural::StructuralRewriter;

/// Which implementation of kube-core's structural rewrite the generator runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rewriter {
    /// [`StructuralRewriter`]: one pass, the same output.
    Linear,
    /// kube-core's own (quadratic in depth): only to reproduce its panic message.
    KubeCore,
}

/// The `SchemaGenerator` kube-derive's `crd()` builds (same settings, same transforms in order).
pub fn generator(rewriter: Rewriter) -> SchemaGenerator {
    let settings = SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .with_transform(AddNullable::default());
    let settings = match rewriter {
        Rewriter::Linear => settings.with_transform(StructuralRewriter),
        Rewriter::KubeCore => settings.with_transform(kube_core::schema::StructuralSchemaRewriter),
    };
    settings
        .with_transform(kube_core::schema::OptionalEnum)
        .with_transform(kube_core::schema::OptionalIntOrString)
        .into_generator()
}

/// What a schema holds at the places the transforms visit.
#[derive(Debug, Default, Clone, Copy)]
struct Holds {
    unevaluated_properties: bool,
    /// A `true`/`false` subschema outside `additionalProperties` (which `ReplaceBoolSchemas`
    /// leaves alone when told to).
    bool_schema: bool,
    /// A `true`/`false` subschema anywhere.
    bool_schema_anywhere: bool,
    null_type: bool,
    reference: bool,
    examples: bool,
    constant: bool,
    prefix_items: bool,
    any_of: bool,
    int_or_string: bool,
}

impl Holds {
    fn of(schema: &Value) -> Holds {
        let mut holds = Holds::default();
        holds.visit(schema, false);
        holds
    }

    /// `schema` (a subschema where `transform_subschemas` would hand one to a transform), and
    /// below it; `in_ap`: under an `additionalProperties`.
    fn visit(&mut self, schema: &Value, in_ap: bool) {
        let map = match schema {
            Value::Bool(_) => {
                self.bool_schema_anywhere = true;
                self.bool_schema |= !in_ap;
                return;
            }
            Value::Object(map) => map,
            _ => return,
        };
        for (key, value) in map {
            match key.as_str() {
                "unevaluatedProperties" => self.unevaluated_properties = true,
                "$ref" => self.reference = true,
                "examples" => self.examples = true,
                "const" => self.constant = true,
                "anyOf" => self.any_of = true,
                "prefixItems" => self.prefix_items = true,
                "x-kubernetes-int-or-string" => self.int_or_string = true,
                "type" => {
                    self.null_type |= match value {
                        Value::String(t) => t == "null",
                        Value::Array(ts) => ts.iter().any(|t| t == "null"),
                        _ => false,
                    }
                }
                _ => {}
            }
            // The places of schemars' `transform_subschemas`.
            match key.as_str() {
                "not" | "if" | "then" | "else" | "contains" | "propertyNames"
                | "additionalItems" => self.visit(value, in_ap),
                "additionalProperties" => self.visit(value, true),
                "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                    if let Value::Array(items) = value {
                        items.iter().for_each(|v| self.visit(v, in_ap));
                    }
                }
                "items" => match value {
                    Value::Array(items) => items.iter().for_each(|v| self.visit(v, in_ap)),
                    other => self.visit(other, in_ap),
                },
                "properties" | "patternProperties" | "$defs" | "definitions" => {
                    if let Value::Object(children) = value {
                        children.values().for_each(|v| self.visit(v, in_ap));
                    }
                }
                _ => {}
            }
        }
    }
}

/// Run `chain` over `schema`, in order, each transform unless it would change nothing.
pub fn run<'a>(chain: impl IntoIterator<Item = &'a mut dyn GenTransform>, schema: &mut Schema) {
    let holds = Holds::of(schema.as_value());
    // Every transform runs from here on (one added what the first walk did not see).
    let mut all = false;
    // `const` added by an `AddNullable`.
    let mut added_const = false;
    // An `AddNullable` that removes `null` types has run.
    let mut nulls_removed = false;
    for t in chain {
        let needed = if all {
            true
        } else if t.is::<ReplaceUnevaluatedProperties>() {
            all = holds.unevaluated_properties;
            holds.unevaluated_properties
        } else if let Some(t) = t.downcast_ref::<ReplaceBoolSchemas>() {
            if t.skip_additional_properties {
                holds.bool_schema
            } else {
                holds.bool_schema_anywhere
            }
        } else if let Some(t) = t.downcast_ref::<AddNullable>() {
            let needed = holds.null_type && !nulls_removed;
            added_const |= needed && t.add_const_null;
            nulls_removed |= t.remove_null_type;
            needed
        } else if t.is::<RemoveRefSiblings>() {
            holds.reference
        } else if t.is::<SetSingleExample>() {
            holds.examples
        } else if t.is::<ReplaceConstValue>() {
            holds.constant || added_const
        } else if t.is::<ReplacePrefixItems>() {
            holds.prefix_items
        } else if t.is::<StructuralRewriter>() {
            // Ours: it adds none of the keywords above.
            true
        } else if t.is::<kube_core::schema::OptionalEnum>() {
            holds.any_of
        } else if t.is::<kube_core::schema::OptionalIntOrString>() {
            holds.int_or_string
        } else {
            all = true;
            true
        };
        if needed {
            t.transform(schema);
        }
    }
}
