//! The linear structural rewrite (`crdgen::structural`) against kube-core's own
//! `StructuralSchemaRewriter`, on generated schemas: the same JSON out (compared as text), or a
//! panic of kube-core's exactly where ours reports a conflict. The generator favours what the
//! rewrite acts on (`oneOf`/`anyOf` variants sharing properties, types and enums, descriptions,
//! `additionalProperties: bool`, `uniqueItems`, unsorted `required`) and what kube-core's model
//! refuses (nulls, wrong types, out-of-range counts), at any depth.

use crate::schema_gen;

use operator_rs::crdgen::structural;
use proptest::prelude::*;
use schema_gen::{named, pick, quietly, schemas};
use schemars::transform::Transform;
use serde_json::{Value, json};

/// kube-core's pass on `schema`; `None` when it panics.
fn kube_core(schema: &Value) -> Option<Value> {
    let mut s = schemars::Schema::try_from(schema.clone()).ok()?;
    quietly(|| kube_core::schema::StructuralSchemaRewriter.transform(&mut s))?;
    Some(s.to_value())
}

/// Ours on `schema`; `None` on a conflict.
fn linear(schema: &Value) -> Option<Value> {
    let mut v = schema.clone();
    structural::rewrite(&mut v).ok().map(|()| v)
}

fn assert_same(schema: &Value) {
    let want = kube_core(schema).map(|v| serde_json::to_string_pretty(&v).unwrap());
    let got = linear(schema).map(|v| serde_json::to_string_pretty(&v).unwrap());
    assert_eq!(
        got,
        want,
        "input:\n{}",
        serde_json::to_string_pretty(schema).unwrap()
    );
}

/// Small schemas the recursion starts from.
fn leaf() -> BoxedStrategy<Value> {
    pick(vec![
        json!({}),
        json!(true),
        json!(false),
        json!({"type": "string"}),
        json!({"type": "string", "description": "s"}),
        json!({"type": "string", "enum": ["a", "b"]}),
        json!({"type": "integer", "enum": [1]}),
        json!({"enum": ["c"]}),
        json!({"type": "integer", "format": "int32"}),
        json!({"enum": [null], "nullable": true}),
        json!({"x-kubernetes-int-or-string": true}),
        json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true}),
        json!("not a schema"),
        json!(null),
    ])
}

/// One keyword and its value, `inner` giving subschemas.
fn keyword(inner: BoxedStrategy<Value>) -> BoxedStrategy<(String, Value)> {
    let map = named(inner.clone());
    let list = prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array);
    let kw = |k: &'static str, s: BoxedStrategy<Value>| s.prop_map(move |v| (k.to_string(), v));
    let scalar_or =
        |s: BoxedStrategy<Value>, odd: Vec<Value>| prop_oneof![4 => s, 1 => pick(odd)].boxed();
    prop_oneof![
        4 => kw("type", pick(vec![json!("object"), json!("object"), json!("string"), json!("integer"), json!(["string", "null"]), json!(null), json!("Object"), json!(3)])),
        3 => kw("description", pick(vec![json!("d1"), json!("d2"), json!(null), json!(7)])),
        1 => kw("default", pick(vec![json!(null), json!(1), json!("x"), json!({"b": 1, "a": [2]})])),
        1 => kw("format", pick(vec![json!("int32"), json!("uint8"), json!(null), json!(1)])),
        2 => kw("enum", pick(vec![json!(["a", "b"]), json!([1, null]), json!(null), json!("x")])),
        2 => kw("required", pick(vec![json!(["b", "a", "b"]), json!([]), json!(["a"]), json!(null), json!(["a", 1])])),
        1 => kw("maxItems", pick(vec![json!(3), json!(-1), json!(1.0), json!(null), json!(4294967296u64)])),
        1 => kw("minProperties", pick(vec![json!(0), json!(4294967295u64), json!("1")])),
        1 => kw("uniqueItems", pick(vec![json!(true), json!(false), json!(null), json!("yes")])),
        1 => kw("nullable", pick(vec![json!(true)])),
        1 => kw("x-kubernetes-preserve-unknown-fields", pick(vec![json!(true), json!(false), json!(null)])),
        6 => kw("properties", scalar_or(map.clone(), vec![json!(null), json!([]), json!({})])),
        1 => kw("patternProperties", map.clone()),
        1 => kw("$defs", map),
        3 => kw("additionalProperties", prop_oneof![pick(vec![json!(true), json!(false), json!(null), json!("x")]), inner.clone()].boxed()),
        2 => kw("items", prop_oneof![3 => inner.clone(), 1 => list.clone(), 1 => pick(vec![json!(null), json!(3)])].boxed()),
        5 => kw("oneOf", scalar_or(list.clone().boxed(), vec![json!(null), json!({})])),
        4 => kw("anyOf", scalar_or(list.clone().boxed(), vec![json!(null), json!("x")])),
        1 => kw("allOf", list.boxed()),
        1 => kw("not", inner.clone()),
        1 => kw("propertyNames", inner.clone()),
        1 => kw("contains", inner.clone()),
        1 => kw("additionalItems", inner),
    ]
    .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 20_000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// The root is an object (as every schema schemars hands a transform), anything below.
    #[test]
    fn same_as_kube_core(s in schemas(leaf(), keyword)) {
        assert_same(&s);
    }
}

/// The cases kube-core's model treats specially, each pinned down once.
#[test]
fn edge_cases() {
    for s in [
        // A tagged enum: variants' properties, types and descriptions hoisted.
        json!({"oneOf": [
            {"type": "object", "description": "A", "properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"type": "object", "description": "B", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
        ]}),
        // A documented plain enum: values hoisted, the variants removed.
        json!({"oneOf": [
            {"type": "string", "enum": ["A"], "description": "a"},
            {"type": "string", "enum": ["B"], "description": "b"},
        ]}),
        // Conflicting variant types: kube-core panics.
        json!({"oneOf": [{"type": "string", "enum": ["A"]}, {"type": "integer", "enum": [1]}]}),
        // The same property twice, once with an empty metadata from an anyOf description: unequal
        // in kube-core's model (panic) though equal as JSON.
        json!({"anyOf": [
            {"type": "object", "description": "A", "properties": {"x": {"type": "string"}}},
            {"type": "object", "properties": {"x": {"type": "string"}}},
        ]}),
        // Both documented: equal, merged.
        json!({"anyOf": [
            {"type": "object", "description": "A", "properties": {"x": {"type": "string"}}},
            {"type": "object", "description": "B", "properties": {"x": {"type": "string"}}},
        ]}),
        // additionalProperties true beside properties, with an explicit preserve-unknown false.
        json!({"type": "object", "properties": {"a": {}}, "additionalProperties": true,
               "x-kubernetes-preserve-unknown-fields": false}),
        // A description that is not a string deep down: every ancestor is left alone.
        json!({"properties": {"a": {"properties": {"b": {"description": 3}}, "required": ["z", "y"]}},
               "required": ["b", "a"], "uniqueItems": true}),
        // required: null is refused by the model; nulls elsewhere are dropped.
        json!({"required": null, "format": null}),
        json!({"format": null, "default": null, "enum": null, "properties": {}}),
    ] {
        assert_same(&s);
    }
}
