//! `crdgen::transforms::run` (each transform skipped where it would change nothing) against running
//! every transform of the generator's chain, on generated schemas: the same JSON out, or a panic of
//! both. The generator favours what the transforms act on (`const`, `examples`, `$ref`,
//! `prefixItems`, `unevaluatedProperties`, `null` types, bool subschemas, `anyOf` of an optional,
//! `x-kubernetes-int-or-string`), at any place and depth, and keywords where no transform looks.

use crate::schema_gen;

use operator_rs::crdgen::transforms::{self, Rewriter};
use proptest::prelude::*;
use schema_gen::{named, pick, quietly, schemas};
use serde_json::{Value, json};

/// Every transform of the generator's chain, in order.
fn every(schema: &Value, rewriter: Rewriter) -> Option<Value> {
    let mut s = schemars::Schema::try_from(schema.clone()).ok()?;
    quietly(|| {
        for t in transforms::generator(rewriter).transforms_mut() {
            t.transform(&mut s);
        }
        s.to_value()
    })
}

/// The chain through [`transforms::run`].
fn skipping(schema: &Value, rewriter: Rewriter) -> Option<Value> {
    let mut s = schemars::Schema::try_from(schema.clone()).ok()?;
    quietly(|| {
        transforms::run(transforms::generator(rewriter).transforms_mut(), &mut s);
        s.to_value()
    })
}

fn assert_same(schema: &Value) {
    for rewriter in [Rewriter::Linear, Rewriter::KubeCore] {
        let want = every(schema, rewriter).map(|v| serde_json::to_string_pretty(&v).unwrap());
        let got = skipping(schema, rewriter).map(|v| serde_json::to_string_pretty(&v).unwrap());
        assert_eq!(
            got,
            want,
            "{rewriter:?}, input:\n{}",
            serde_json::to_string_pretty(schema).unwrap()
        );
    }
}

/// Small schemas the recursion starts from.
fn leaf() -> BoxedStrategy<Value> {
    pick(vec![
        json!({}),
        json!(true),
        json!(false),
        json!({"type": "string"}),
        json!({"type": "null"}),
        json!({"type": ["integer", "null"]}),
        json!({"type": ["null"]}),
        json!({"const": "A", "type": "string"}),
        json!({"enum": [null], "nullable": true}),
        json!({"type": "null", "const": null}),
        json!({"x-kubernetes-int-or-string": true}),
        json!({"x-kubernetes-int-or-string": true, "nullable": true}),
        json!({"$ref": "#/components/schemas/X"}),
        json!({"$ref": "#/components/schemas/X", "description": "r"}),
        json!({"examples": [1, 2]}),
        json!({"examples": "not a list"}),
        json!({"type": "array", "prefixItems": [{"type": "string"}], "items": false}),
        json!("not a schema"),
        json!(null),
    ])
}

/// One keyword and its value, `inner` giving subschemas.
fn keyword(inner: BoxedStrategy<Value>) -> BoxedStrategy<(String, Value)> {
    let map = named(inner.clone());
    let list = prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array);
    // `Option<T>`'s schema: T, or null.
    let optional = inner
        .clone()
        .prop_map(|t| json!([t, {"type": "null"}]))
        .boxed();
    let kw = |k: &'static str, s: BoxedStrategy<Value>| s.prop_map(move |v| (k.to_string(), v));
    prop_oneof![
        4 => kw("type", pick(vec![json!("object"), json!("string"), json!(["string", "null"]), json!("null"), json!(["null"]), json!(null)])),
        2 => kw("description", pick(vec![json!("d1"), json!("d2")])),
        1 => kw("default", pick(vec![json!(null), json!({"const": 1, "type": "null"}), json!(["null"])])),
        2 => kw("const", pick(vec![json!("A"), json!(null), json!({"k": 1})])),
        1 => kw("examples", pick(vec![json!([1]), json!([]), json!("x"), json!([{"const": 2}])])),
        1 => kw("$ref", pick(vec![json!("#/components/schemas/Y"), json!(1)])),
        1 => kw("enum", pick(vec![json!(["a", "b"]), json!([null])])),
        2 => kw("required", pick(vec![json!(["a"]), json!(["b", "a"]), json!([])])),
        1 => kw("nullable", pick(vec![json!(true), json!(false)])),
        1 => kw("x-kubernetes-int-or-string", pick(vec![json!(true), json!(false)])),
        6 => kw("properties", map.clone()),
        1 => kw("patternProperties", map.clone()),
        1 => kw("$defs", map),
        3 => kw("additionalProperties", prop_oneof![pick(vec![json!(true), json!(false)]), inner.clone()].boxed()),
        2 => kw("unevaluatedProperties", prop_oneof![pick(vec![json!(true), json!(false)]), inner.clone()].boxed()),
        2 => kw("items", prop_oneof![3 => inner.clone(), 1 => list.clone()].boxed()),
        1 => kw("prefixItems", list.clone().boxed()),
        3 => kw("oneOf", list.clone().boxed()),
        4 => kw("anyOf", prop_oneof![list.clone().boxed(), optional].boxed()),
        1 => kw("allOf", list.boxed()),
        1 => kw("not", inner.clone()),
        1 => kw("if", inner.clone()),
        1 => kw("propertyNames", inner.clone()),
        1 => kw("contains", inner.clone()),
        1 => kw("additionalItems", inner),
    ]
    .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 5_000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// The root is an object (as every schema schemars hands a transform), anything below.
    #[test]
    fn same_as_every_transform(s in schemas(leaf(), keyword)) {
        assert_same(&s);
    }
}

/// A transform's keyword that only another transform brings to where it acts, each pinned down.
#[test]
fn what_one_transform_adds_the_next_ones_see() {
    for s in [
        // `unevaluatedProperties` becomes `additionalProperties`, with its `const` and its bool
        // schemas, and `true` for the properties of its subschemas.
        json!({"unevaluatedProperties": {"const": 1, "properties": {"x": true}},
               "allOf": [{"properties": {"y": {}}}]}),
        // `type: null` alone: `AddNullable` writes `const: null`, which `ReplaceConstValue` turns
        // into `enum: [null]`, which `OptionalEnum` then hoists out of the `anyOf`.
        json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
        // A bool schema under `additionalProperties` only: `ReplaceBoolSchemas` does not go there.
        json!({"type": "object", "additionalProperties": {"properties": {"a": true}}}),
        // Nothing for any of them.
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
    ] {
        assert_same(&s);
    }
}

/// Each skipped transform would indeed have changed something were its keyword there: the
/// schemas above, without the skipping, are not left as they are.
#[test]
fn the_keywords_looked_for_are_ones_the_transforms_change() {
    for s in [
        json!({"unevaluatedProperties": false}),
        json!({"properties": {"a": true}}),
        json!({"type": ["string", "null"]}),
        json!({"$ref": "#/x", "description": "d"}),
        json!({"examples": [1]}),
        json!({"const": 1}),
        json!({"prefixItems": [{}]}),
        json!({"anyOf": [{"type": "string"}, {"enum": [null], "nullable": true}]}),
        json!({"properties": {"a": {"x-kubernetes-int-or-string": true}}}),
    ] {
        let out = every(&s, Rewriter::Linear).expect("no panic");
        assert_ne!(out, s, "{s}");
        assert_same(&s);
    }
}
