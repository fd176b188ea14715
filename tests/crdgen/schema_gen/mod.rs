//! What the property tests of schema passes share: JSON schemas generated from leaves and keywords
//! (any depth, the root an object as schemars hands every transform), and running a pass that
//! may panic without the panic's message.
#![allow(dead_code)]

use std::panic::AssertUnwindSafe;

use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// `f`'s result, or `None` when it panics (the panic's message is not printed).
pub fn quietly<T>(f: impl FnOnce() -> T) -> Option<T> {
    operator_rs::crdgen::catch_quietly(AssertUnwindSafe(f)).ok()
}

/// One of `values`.
pub fn pick(values: Vec<Value>) -> BoxedStrategy<Value> {
    prop::sample::select(values).boxed()
}

/// Objects of up to six keywords (`keyword` given the strategy of their subschemas), down to six
/// levels, from `leaf`; the root is always an object.
pub fn schemas(
    leaf: BoxedStrategy<Value>,
    keyword: fn(BoxedStrategy<Value>) -> BoxedStrategy<(String, Value)>,
) -> impl Strategy<Value = Value> {
    leaf.prop_recursive(6, 96, 6, move |inner| {
        prop::collection::vec(keyword(inner), 0..7)
            .prop_map(|kws| Value::Object(kws.into_iter().collect::<Map<_, _>>()))
            .boxed()
    })
    .prop_map(|s| {
        if s.is_object() {
            s
        } else {
            json!({"items": s})
        }
    })
}

/// Objects of up to three of the names `a`, `b`, `c`, each with a value of `inner`.
pub fn named(inner: BoxedStrategy<Value>) -> BoxedStrategy<Value> {
    let names = prop::sample::select(vec!["a", "b", "c"]);
    prop::collection::vec((names, inner), 0..4)
        .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()))
        .boxed()
}
