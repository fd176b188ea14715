//! `src/crdgen/k8s_schemas.rs` against k8s-openapi itself: for every type of k8s-openapi that
//! implements `JsonSchema`, the schema and the default `generate crds` takes from the record must
//! equal what the real type gives (`subschema_for::<T>()` on kube-derive's generator settings, the
//! definitions it leaves in the generator, and `serde_json::to_value(T::default())`).
//!
//! `UPDATE_K8S_SCHEMAS=1 cargo test --test crdgen k8s_schemas` rewrites the record from the real types
//! (after `scripts/gen-k8s-types.py` has listed them in `tests/crdgen/k8s_schemas/types.rs`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use operator_rs::crdgen::k8s_table;
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::Value;

/// One real type: its path, `subschema_for::<T>()`, and its default.
struct Real {
    path: &'static str,
    schema: fn(&mut SchemaGenerator) -> Schema,
    default: Option<fn() -> Value>,
}

fn schema_of<T: JsonSchema>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

fn default_of<T: Default + serde::Serialize>() -> Value {
    serde_json::to_value(T::default()).expect("a k8s-openapi default serializes")
}

macro_rules! k8s_types {
    ($($first:ident $(:: $seg:ident)* $(with $default:ident)?;)*) => {
        fn real_types() -> Vec<Real> {
            vec![$(Real {
                path: concat!(stringify!($first) $(, "::", stringify!($seg))*),
                schema: schema_of::<$first $(:: $seg)*>,
                default: k8s_types!(@default $first $(:: $seg)* $(, $default)?),
            }),*]
        }
    };
    (@default $first:ident $(:: $seg:ident)*) => { None };
    (@default $first:ident $(:: $seg:ident)*, default) => { Some(default_of::<$first $(:: $seg)*>) };
}

include!("k8s_schemas/types.rs");

/// The generator settings of kube-derive's `crd()`, as `crd.rs` builds them (the transforms run
/// on the root only, so they do not matter to `subschema_for`).
fn inlining() -> SchemaGenerator {
    SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator()
}

/// Without inlining: each type's own schema, with references to the types it holds.
fn recording() -> SchemaGenerator {
    SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = false;
            s.meta_schema = None;
        })
        .into_generator()
}

const RECORD: &str = "src/crdgen/k8s/schemas.rs";

#[test]
fn the_record_gives_what_every_real_type_gives() {
    let types = real_types();
    if std::env::var_os("UPDATE_K8S_SCHEMAS").is_some() {
        write_record(&types);
    }
    let mut differ = vec![];
    for t in &types {
        let mut real_g = inlining();
        let real = (t.schema)(&mut real_g);
        let mut ours_g = inlining();
        let Some(ours) = k8s_table::lookup(t.path) else {
            differ.push(format!("{}: not in the record", t.path));
            continue;
        };
        let schema = ours.schema(&mut ours_g);
        if schema != real {
            differ.push(format!("{}: the schema differs", t.path));
        }
        if ours_g.definitions() != real_g.definitions() {
            differ.push(format!(
                "{}: the definitions left in the generator differ",
                t.path
            ));
        }
        let real_default = t.default.map(|d| d());
        if ours.default() != real_default {
            differ.push(format!("{}: the default differs", t.path));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} types differ from k8s-openapi (run UPDATE_K8S_SCHEMAS=1 cargo test --test crdgen k8s_schemas):\n{}",
        differ.len(),
        types.len(),
        differ.join("\n")
    );
    // The check above is not empty: the record holds every type, some of them recursive.
    assert!(types.len() > 700, "{} types", types.len());
    let jsp = "k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps";
    let mut g = inlining();
    k8s_table::lookup(jsp).unwrap().schema(&mut g);
    assert!(
        !g.definitions().is_empty(),
        "JSONSchemaProps holds itself: a definition is expected"
    );
}

#[test]
fn a_path_that_is_not_a_type_is_not_found() {
    assert!(k8s_table::lookup("k8s_openapi::api::core::v1::NoSuchSpec").is_none());
    assert!(k8s_table::lookup("k8s_openapi::api::core::v1").is_none());
    assert!(k8s_table::lookup("").is_none());
}

/// Writes `src/crdgen/k8s_schemas.rs` from the real types.
fn write_record(types: &[Real]) {
    let mut g = recording();
    let mut entries = BTreeMap::new();
    for t in types {
        let s = (t.schema)(&mut g).to_value();
        let recorded = match s.as_object().and_then(|o| o.get("$ref")) {
            Some(Value::String(r)) if s.as_object().is_some_and(|o| o.len() == 1) => {
                let name = r
                    .strip_prefix("#/components/schemas/")
                    .expect("schemars' OpenAPI 3 reference");
                format!("Named({name:?})")
            }
            _ => panic!(
                "{} is inlined by schemars (`inline_schema()`): k8s_table.rs records only named \
                 types; give `Recorded` a variant for it",
                t.path
            ),
        };
        let default = match t.default {
            Some(d) => format!("Some({:?})", d().to_string()),
            None => "None".into(),
        };
        entries.insert(t.path, (recorded, default));
    }
    let mut out = String::from(
        "//! Every k8s-openapi type's schema as schemars records it without inlining, and its\n\
         //! default: the data behind `k8s_table`.\n\
         //!\n\
         //! GENERATED by `UPDATE_K8S_SCHEMAS=1 cargo test --test crdgen k8s_schemas` from the real types\n\
         //! (listed by `scripts/gen-k8s-types.py`); do not edit by hand.\n\n\
         use super::{Entry, Recorded::*};\n\n",
    );
    out.push_str(
        "/// By path, sorted.\n#[rustfmt::skip]\npub(super) static TYPES: &[Entry] = &[\n",
    );
    for (path, (recorded, default)) in &entries {
        writeln!(
            out,
            "    Entry {{ path: {path:?}, schema: {recorded}, default: {default} }},"
        )
        .unwrap();
    }
    out.push_str("];\n\n/// Each referenced type's own schema, by name, sorted.\n#[rustfmt::skip]\npub(super) static DEFINITIONS: &[(&str, &str)] = &[\n");
    for (name, schema) in g.definitions() {
        writeln!(out, "    ({name:?}, {:?}),", schema.to_string()).unwrap();
    }
    out.push_str("];\n");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(RECORD);
    std::fs::write(&path, out).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    panic!("{RECORD} rewritten: run the test again without UPDATE_K8S_SCHEMAS to check it");
}
