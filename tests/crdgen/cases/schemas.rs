//! Schemas the API server refuses or accepts, one refusal class each (and the borderline
//! accepted neighbour of each), and CEL rules whose estimated cost our estimator must give to the
//! unit. `tests/crdgen/refusals.rs` holds our verdicts to the reasons below;
//! `tests/apiserver/crds.rs` holds them to the real API server's.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, JSONSchemaProps,
};
use serde_json::{Value, json};

/// A schema for `.spec` and, for a refusal, words our reason must contain.
pub struct SchemaCase {
    pub name: &'static str,
    pub spec: Value,
    pub refusal: Option<&'static str>,
}

/// The root a CRD of kube-derive has, with `spec` as given.
pub fn root(spec: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec
        },
        "required": ["spec"]
    })
}

fn obj(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

fn rule(node: Value, rule: Value) -> Value {
    let mut node = node;
    node["x-kubernetes-validations"] = json!([rule]);
    node
}

fn refused(name: &'static str, spec: Value, says: &'static str) -> SchemaCase {
    SchemaCase {
        name,
        spec,
        refusal: Some(says),
    }
}

fn accepted(name: &'static str, spec: Value) -> SchemaCase {
    SchemaCase {
        name,
        spec,
        refusal: None,
    }
}

fn item() -> Value {
    json!({"type": "object", "properties": {
        "name": {"type": "string"}, "port": {"type": "integer"}, "label": {"type": "string"}
    }, "required": ["name", "port"]})
}

fn list_of(items: Value, ext: Value) -> Value {
    let mut l = json!({"type": "array", "items": items});
    for (k, v) in ext.as_object().unwrap() {
        l[k] = v.clone();
    }
    l
}

pub fn schema_cases() -> Vec<SchemaCase> {
    let s = || json!({"type": "string"});
    let bounded = || json!({"type": "string", "maxLength": 10});
    vec![
        // Structural and OpenAPI rules.
        refused(
            "unique_items",
            obj(json!({"a": {"type": "array", "uniqueItems": true, "items": s()}})),
            "uniqueItems cannot be set to true",
        ),
        refused(
            "properties_and_additional_false",
            obj(
                json!({"a": {"type": "object", "properties": {"b": s()}, "additionalProperties": false}}),
            ),
            "additionalProperties and properties are mutual exclusive (`#[serde(deny_unknown_fields)]`",
        ),
        // A `#[serde(flatten)]` map beside named fields: its value schema, not `false`.
        refused(
            "properties_and_additional_schema",
            obj(
                json!({"a": {"type": "object", "properties": {"b": s()}, "additionalProperties": s()}}),
            ),
            "additionalProperties and properties are mutual exclusive (a map beside named fields: a `#[serde(flatten)]` map field",
        ),
        accepted(
            "properties_and_additional_true",
            obj(
                json!({"a": {"type": "object", "properties": {"b": s()}, "additionalProperties": true}}),
            ),
        ),
        refused(
            "type_null",
            obj(json!({"a": {"type": "null"}})),
            "type cannot be set to null",
        ),
        refused(
            "type_unknown",
            obj(json!({"a": {"type": "text"}})),
            "Unsupported value: \"text\"",
        ),
        refused(
            "type_missing",
            obj(json!({"a": {"description": "any"}})),
            "must not be empty for specified object fields",
        ),
        accepted(
            "type_missing_preserved",
            obj(json!({"a": {"x-kubernetes-preserve-unknown-fields": true}})),
        ),
        refused(
            "items_missing",
            obj(json!({"a": {"type": "array"}})),
            "items: Required value",
        ),
        refused(
            "preserve_false",
            obj(json!({"a": {"type": "object", "x-kubernetes-preserve-unknown-fields": false}})),
            "must be true or undefined",
        ),
        refused(
            "int_or_string_preserved",
            obj(
                json!({"a": {"x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true}}),
            ),
            "must be false if x-kubernetes-int-or-string is true",
        ),
        accepted(
            "int_or_string_with_type",
            obj(json!({"a": {"type": "string", "x-kubernetes-int-or-string": true}})),
        ),
        refused(
            "embedded_not_object",
            obj(json!({"a": {"type": "string", "x-kubernetes-embedded-resource": true}})),
            "type must be object if x-kubernetes-embedded-resource is true",
        ),
        refused(
            "embedded_without_properties",
            obj(json!({"a": {"type": "object", "x-kubernetes-embedded-resource": true}})),
            "properties must not be empty if x-kubernetes-embedded-resource",
        ),
        accepted(
            "embedded_preserved",
            obj(
                json!({"a": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}),
            ),
        ),
        refused(
            "pattern_invalid",
            obj(json!({"a": {"type": "string", "pattern": "a**"}})),
            "pattern must be a valid regular expression",
        ),
        refused(
            "pattern_repeat_count",
            obj(json!({"a": {"type": "string", "pattern": "a{1001}"}})),
            "invalid repeat count",
        ),
        accepted(
            "pattern_lazy",
            obj(json!({"a": {"type": "string", "pattern": "^a*?b(a*)*$"}})),
        ),
        accepted(
            "pattern_named_group",
            obj(json!({"a": {"type": "string", "pattern": "^(?P<x>[a-z]+)$"}})),
        ),
        refused(
            "one_of_description",
            obj(
                json!({"a": {"type": "object", "properties": {"b": s()}, "oneOf": [{"required": ["b"], "description": "b"}]}}),
            ),
            "oneOf[0].description: must be empty to be structural",
        ),
        refused(
            "one_of_type",
            obj(
                json!({"a": {"type": "object", "properties": {"b": s()}, "oneOf": [{"type": "object", "required": ["b"]}]}}),
            ),
            "oneOf[0].type: must be empty",
        ),
        accepted(
            "one_of_required",
            obj(
                json!({"a": {"type": "object", "properties": {"b": s(), "c": s()}, "oneOf": [{"required": ["b"]}, {"required": ["c"]}]}}),
            ),
        ),
        // kube-apiserver 1.36 does not hold value validations to the properties the structure
        // declares, whatever `validateStructuralCompleteness` suggests.
        accepted(
            "one_of_unknown_property",
            obj(
                json!({"a": {"type": "object", "properties": {"b": s()}, "oneOf": [{"properties": {"c": {"minLength": 1}}}]}}),
            ),
        ),
        accepted(
            "any_of_int_or_string",
            obj(
                json!({"a": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}}),
            ),
        ),
        // Defaults.
        refused(
            "default_too_long",
            obj(json!({"a": {"type": "string", "maxLength": 3, "default": "toolong"}})),
            "Too long",
        ),
        refused(
            "default_pattern",
            obj(json!({"a": {"type": "string", "pattern": "^y$", "default": "x"}})),
            "should match",
        ),
        refused(
            "default_maximum",
            obj(json!({"a": {"type": "integer", "maximum": 3, "default": 5}})),
            "less than or equal to 3",
        ),
        // An integer default over int64 (a u64 field's `u64::MAX`): kube-apiserver reads it as a
        // float64 and refuses it; int64's largest is taken.
        refused(
            "default_over_int64",
            obj(json!({"a": {"type": "integer", "default": 9_223_372_036_854_775_808_u64}})),
            "must be of type integer (it is over 9223372036854775807",
        ),
        refused(
            "default_u64_max_in_a_list",
            obj(
                json!({"a": {"type": "array", "items": {"type": "integer"}, "default": [u64::MAX]}}),
            ),
            "must be of type integer (it is over 9223372036854775807",
        ),
        accepted(
            "default_int64_max",
            obj(json!({"a": {"type": "integer", "default": i64::MAX}})),
        ),
        accepted(
            "default_over_int64_as_a_number",
            obj(json!({"a": {"type": "number", "default": u64::MAX}})),
        ),
        refused(
            "default_unknown_field",
            obj(json!({"a": {"type": "object", "properties": {"b": s()}, "default": {"z": 1}}})),
            "must not have unknown fields",
        ),
        refused(
            "default_required_missing",
            obj(
                json!({"a": {"type": "object", "properties": {"b": s()}, "required": ["b"], "default": {}}}),
            ),
            "default.b: Required value",
        ),
        refused(
            "default_not_in_enum",
            obj(json!({"a": {"type": "string", "enum": ["x"], "default": "y"}})),
            "not one of the enum",
        ),
        refused(
            "default_wrong_type",
            obj(json!({"a": {"type": "integer", "default": "1"}})),
            "must be of type integer",
        ),
        refused(
            "default_null_inside",
            obj(json!({"a": {"type": "object", "properties": {"b": s()}, "default": {"b": null}}})),
            "null is not allowed",
        ),
        accepted(
            "default_valid",
            obj(
                json!({"a": {"type": "object", "properties": {"b": {"type": "string", "maxLength": 3, "pattern": "^[a-z]+$"}}, "required": ["b"], "default": {"b": "abc"}}}),
            ),
        ),
        refused(
            "default_fails_rule",
            obj(
                json!({"a": {"type": "string", "default": "x", "x-kubernetes-validations": [{"rule": "self == 'y'"}]}}),
            ),
            "failed rule: self == 'y'",
        ),
        accepted(
            "default_passes_rule",
            obj(
                json!({"a": {"type": "string", "default": "y", "x-kubernetes-validations": [{"rule": "self == 'y'"}]}}),
            ),
        ),
        refused(
            "default_int_rule",
            obj(
                json!({"a": {"type": "integer", "default": 0, "x-kubernetes-validations": [{"rule": "self > 0"}]}}),
            ),
            "failed rule",
        ),
        refused(
            "default_child_rule",
            obj(
                json!({"a": {"type": "object", "properties": {"b": {"type": "integer", "x-kubernetes-validations": [{"rule": "self >= 1"}]}}, "default": {"b": 0}}}),
            ),
            "failed rule",
        ),
        refused(
            "default_list_rule",
            obj(
                json!({"a": {"type": "array", "items": s(), "default": ["a", "b"], "x-kubernetes-validations": [{"rule": "self.size() <= 1"}]}}),
            ),
            "failed rule",
        ),
        accepted(
            "default_transition_rule",
            obj(
                json!({"a": {"type": "string", "default": "x", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}),
            ),
        ),
        accepted(
            "default_object_rule",
            obj(
                json!({"a": {"type": "object", "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}}, "default": {"min": 1, "max": 2}, "x-kubernetes-validations": [{"rule": "self.min <= self.max"}]}}),
            ),
        ),
        refused(
            "default_object_rule_fails",
            obj(
                json!({"a": {"type": "object", "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}}, "default": {"min": 3, "max": 2}, "x-kubernetes-validations": [{"rule": "self.min <= self.max"}]}}),
            ),
            "failed rule",
        ),
        // Lists and maps.
        refused(
            "list_type_on_object",
            obj(json!({"a": {"type": "object", "x-kubernetes-list-type": "atomic"}})),
            "type must be array if x-kubernetes-list-type is specified",
        ),
        refused(
            "list_type_unknown",
            obj(json!({"a": list_of(s(), json!({"x-kubernetes-list-type": "bag"}))})),
            "Unsupported value: \"bag\"",
        ),
        refused(
            "map_type_on_list",
            obj(json!({"a": list_of(s(), json!({"x-kubernetes-map-type": "atomic"}))})),
            "type must be object if x-kubernetes-map-type is specified",
        ),
        refused(
            "map_type_unknown",
            obj(json!({"a": {"type": "object", "x-kubernetes-map-type": "merged"}})),
            "Unsupported value: \"merged\"",
        ),
        refused(
            "set_of_objects",
            obj(json!({"a": list_of(item(), json!({"x-kubernetes-list-type": "set"}))})),
            "x-kubernetes-map-type must be atomic",
        ),
        accepted(
            "set_of_atomic_objects",
            obj(
                json!({"a": list_of({let mut i = item(); i["x-kubernetes-map-type"] = json!("atomic"); i}, json!({"x-kubernetes-list-type": "set"}))}),
            ),
        ),
        refused(
            "set_of_sets",
            obj(
                json!({"a": list_of(list_of(s(), json!({"x-kubernetes-list-type": "set"})), json!({"x-kubernetes-list-type": "set"}))}),
            ),
            "x-kubernetes-list-type must be atomic",
        ),
        accepted(
            "set_of_lists",
            obj(
                json!({"a": list_of(list_of(s(), json!({})), json!({"x-kubernetes-list-type": "set"}))}),
            ),
        ),
        refused(
            "set_of_nullable",
            obj(
                json!({"a": list_of(json!({"type": "string", "nullable": true}), json!({"x-kubernetes-list-type": "set"}))}),
            ),
            "cannot be nullable when x-kubernetes-list-type is set",
        ),
        refused(
            "map_without_keys",
            obj(json!({"a": list_of(item(), json!({"x-kubernetes-list-type": "map"}))})),
            "x-kubernetes-list-map-keys must not be empty",
        ),
        refused(
            "keys_without_map",
            obj(json!({"a": list_of(item(), json!({"x-kubernetes-list-map-keys": ["name"]}))})),
            "must be map if x-kubernetes-list-map-keys is non-empty",
        ),
        refused(
            "map_of_scalars",
            obj(
                json!({"a": list_of(s(), json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}))}),
            ),
            "must be object if parent array's x-kubernetes-list-type is map",
        ),
        refused(
            "key_not_a_property",
            obj(
                json!({"a": list_of(item(), json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["nope"]}))}),
            ),
            "entries must all be names of item properties",
        ),
        refused(
            "key_duplicated",
            obj(
                json!({"a": list_of(item(), json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "name"]}))}),
            ),
            "must not contain duplicate entries",
        ),
        refused(
            "key_optional",
            obj(
                json!({"a": list_of(item(), json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["label"]}))}),
            ),
            "must have a default or be a required property",
        ),
        accepted(
            "key_defaulted",
            obj(
                json!({"a": list_of({let mut i = item(); i["properties"]["label"]["default"] = json!("x"); i}, json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["label"]}))}),
            ),
        ),
        refused(
            "key_nullable",
            obj(
                json!({"a": list_of({let mut i = item(); i["properties"]["name"]["nullable"] = json!(true); i}, json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}))}),
            ),
            "so it cannot be nullable",
        ),
        refused(
            "key_object",
            obj(
                json!({"a": list_of(json!({"type": "object", "required": ["k"], "properties": {"k": obj(json!({"x": s()}))}}), json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]}))}),
            ),
            "must be a scalar type",
        ),
        accepted(
            "key_int_or_string",
            obj(
                json!({"a": list_of(json!({"type": "object", "required": ["k"], "properties": {"k": {"x-kubernetes-int-or-string": true}}}), json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]}))}),
            ),
        ),
        // The fields of a validation rule.
        refused(
            "rule_empty",
            rule(obj(json!({"a": s()})), json!({"rule": " "})),
            "a rule is not specified",
        ),
        refused(
            "message_blank",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "true", "message": " "}),
            ),
            "only whitespace",
        ),
        refused(
            "message_two_lines",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "true", "message": "a\nb"}),
            ),
            "must not contain line breaks",
        ),
        refused(
            "rule_two_lines",
            rule(obj(json!({"a": s()})), json!({"rule": "true &&\ntrue"})),
            "then a message must be specified",
        ),
        accepted(
            "rule_two_lines_message",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "true &&\ntrue", "message": "m"}),
            ),
        ),
        refused(
            "message_expression_blank",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "true", "messageExpression": " "}),
            ),
            "messageExpression that is only whitespace",
        ),
        refused(
            "reason_unknown",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "true", "reason": "FieldValueWrong"}),
            ),
            "is not supported",
        ),
        accepted(
            "reason_known",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "true", "reason": "FieldValueForbidden"}),
            ),
        ),
        refused(
            "field_path_unknown",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "true", "fieldPath": ".b"}),
            ),
            "must be a valid path",
        ),
        refused(
            "field_path_relative",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "true", "fieldPath": "a"}),
            ),
            "must be a valid path",
        ),
        refused(
            "field_path_index",
            rule(
                obj(json!({"a": list_of(s(), json!({}))})),
                json!({"rule": "true", "fieldPath": ".a[0]"}),
            ),
            "must be a valid path",
        ),
        accepted(
            "field_path_quoted",
            rule(
                obj(json!({"a.b": obj(json!({"c": s()}))})),
                json!({"rule": "true", "fieldPath": "['a.b'].c"}),
            ),
        ),
        accepted(
            "field_path_map_key",
            rule(
                obj(json!({"m": {"type": "object", "additionalProperties": s()}})),
                json!({"rule": "true", "fieldPath": ".m.anykey"}),
            ),
        ),
        // CEL: compilation against the schema.
        refused(
            "cel_syntax",
            rule(obj(json!({"a": s()})), json!({"rule": "self.a =="})),
            "does not compile",
        ),
        refused(
            "cel_undefined_field",
            rule(obj(json!({"a": s()})), json!({"rule": "self.b == 'x'"})),
            "undefined field 'b'",
        ),
        refused(
            "cel_undeclared",
            rule(obj(json!({"a": s()})), json!({"rule": "object.a == 'x'"})),
            "undeclared reference to 'object'",
        ),
        refused(
            "cel_unknown_function",
            rule(obj(json!({"a": s()})), json!({"rule": "self.a.frob()"})),
            "undeclared reference to 'frob'",
        ),
        refused(
            "cel_no_math",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "math.greatest(1, 2) == 2"}),
            ),
            "undeclared reference to 'math'",
        ),
        refused(
            "cel_no_bind",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "cel.bind(x, self.a, x == 'a')"}),
            ),
            "undeclared reference",
        ),
        refused(
            "cel_select_scalar",
            rule(obj(json!({"a": s()})), json!({"rule": "self.a.size > 1"})),
            "does not support field selection",
        ),
        refused(
            "cel_int_vs_double",
            rule(
                obj(json!({"n": {"type": "integer"}})),
                json!({"rule": "self.n == 1.0"}),
            ),
            "found no matching overload for '_==_' applied to '(int, double)'",
        ),
        accepted(
            "cel_int_below_double",
            rule(
                obj(json!({"n": {"type": "integer"}})),
                json!({"rule": "self.n < 1.5"}),
            ),
        ),
        refused(
            "cel_string_vs_int",
            rule(
                obj(json!({"l": list_of(s(), json!({}))})),
                json!({"rule": "self.l[0] == 1"}),
            ),
            "applied to '(string, int)'",
        ),
        refused(
            "cel_string_reverse",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "self.a.reverse() == 'a'"}),
            ),
            "found no matching overload for 'reverse'",
        ),
        refused(
            "cel_mixed_list",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "[1, 'a'].size() > 0"}),
            ),
            "expected type 'int' but found 'string'",
        ),
        refused(
            "cel_bad_regex",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "self.a.matches('[')"}),
            ),
            "invalid matches argument",
        ),
        refused(
            "cel_bad_duration",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "duration('1x') > duration('1s')"}),
            ),
            "invalid duration argument",
        ),
        refused(
            "cel_string_null",
            rule(obj(json!({"a": s()})), json!({"rule": "self.a == null"})),
            "found no matching overload for '_==_'",
        ),
        accepted(
            "cel_object_null",
            rule(
                obj(json!({"o": obj(json!({"x": s()}))})),
                json!({"rule": "self.o != null"}),
            ),
        ),
        refused(
            "cel_two_objects",
            rule(
                obj(json!({"o": obj(json!({"x": s()})), "p": obj(json!({"x": s()}))})),
                json!({"rule": "self.o == self.p"}),
            ),
            "found no matching overload for '_==_'",
        ),
        refused(
            "cel_preserved_field",
            rule(
                obj(json!({"o": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}})),
                json!({"rule": "self.o.x == 1"}),
            ),
            "undefined field 'x'",
        ),
        refused(
            "cel_no_exists_one_camel",
            rule(
                obj(json!({"l": list_of(s(), json!({"maxItems": 3}))})),
                json!({"rule": "self.l.existsOne(x, x == 'a')"}),
            ),
            "undeclared reference to 'existsOne'",
        ),
        accepted(
            "cel_two_var_all",
            rule(
                obj(json!({"l": list_of(bounded(), json!({"maxItems": 3}))})),
                json!({"rule": "self.l.all(i, v, v.size() > i)"}),
            ),
        ),
        accepted(
            "cel_optional",
            rule(
                obj(json!({"o": obj(json!({"x": s()}))})),
                json!({"rule": "self.o.?x.orValue('') == ''"}),
            ),
        ),
        accepted(
            "cel_int_or_string",
            rule(
                obj(json!({"i": {"x-kubernetes-int-or-string": true}})),
                json!({"rule": "type(self.i) == string ? self.i.matches('^[0-9]+%$') : self.i >= 0"}),
            ),
        ),
        refused(
            "cel_not_bool",
            rule(obj(json!({"a": s()})), json!({"rule": "self.a"})),
            "must evaluate to a bool",
        ),
        refused(
            "cel_dyn_not_bool",
            rule(
                obj(json!({"i": {"x-kubernetes-int-or-string": true}})),
                json!({"rule": "self.i"}),
            ),
            "must evaluate to a bool",
        ),
        refused(
            "cel_on_untyped_node",
            obj(
                json!({"a": rule(json!({"x-kubernetes-preserve-unknown-fields": true}), json!({"rule": "true"}))}),
            ),
            "sits on a node CEL has no type for",
        ),
        refused(
            "cel_on_list_of_untyped",
            obj(
                json!({"a": rule(list_of(json!({"x-kubernetes-preserve-unknown-fields": true}), json!({})), json!({"rule": "self.size() > 0"}))}),
            ),
            "sits on a node CEL has no type for",
        ),
        accepted(
            "cel_on_typed_preserved",
            obj(
                json!({"a": rule(json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true}), json!({"rule": "self == oldSelf"}))}),
            ),
        ),
        // oldSelf.
        refused(
            "old_self_in_list",
            obj(
                json!({"l": list_of(rule(bounded(), json!({"rule": "self == oldSelf"})), json!({}))}),
            ),
            "uncorrelatable",
        ),
        refused(
            "old_self_in_set",
            obj(
                json!({"l": list_of(rule(bounded(), json!({"rule": "self == oldSelf"})), json!({"x-kubernetes-list-type": "set"}))}),
            ),
            "uncorrelatable",
        ),
        accepted(
            "old_self_in_list_map",
            obj(
                json!({"l": list_of({let mut i = item(); i["properties"]["name"] = rule(bounded(), json!({"rule": "self == oldSelf"})); i}, json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}))}),
            ),
        ),
        accepted(
            "old_self_in_atomic_map",
            obj(
                json!({"o": {"type": "object", "x-kubernetes-map-type": "atomic", "properties": {"a": rule(s(), json!({"rule": "self == oldSelf"}))}}}),
            ),
        ),
        accepted(
            "old_self_in_map_values",
            obj(
                json!({"m": {"type": "object", "additionalProperties": rule(bounded(), json!({"rule": "self == oldSelf"}))}}),
            ),
        ),
        refused(
            "old_self_in_unbounded_map_values",
            obj(
                json!({"m": {"type": "object", "additionalProperties": rule(s(), json!({"rule": "self == oldSelf"}))}}),
            ),
            "estimated rule cost exceeds budget",
        ),
        refused(
            "optional_old_self_unused",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "true", "optionalOldSelf": true}),
            ),
            "may not be set if oldSelf is not used",
        ),
        refused(
            "optional_old_self_false_unused",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "true", "optionalOldSelf": false}),
            ),
            "may not be set if oldSelf is not used",
        ),
        accepted(
            "optional_old_self_used",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "oldSelf.hasValue() ? oldSelf.value().a == self.a : true", "optionalOldSelf": true}),
            ),
        ),
        refused(
            "optional_old_self_not_optional",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "oldSelf.a == self.a", "optionalOldSelf": true}),
            ),
            "applied to '(optional_type(string), string)'",
        ),
        // Message expressions.
        refused(
            "message_expression_not_string",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "true", "messageExpression": "1"}),
            ),
            "must evaluate to a string",
        ),
        refused(
            "message_expression_undefined",
            rule(
                obj(json!({"a": s()})),
                json!({"rule": "true", "messageExpression": "self.b"}),
            ),
            "undefined field 'b'",
        ),
        refused(
            "message_expression_cost",
            obj(
                json!({"a": rule(s(), json!({"rule": "self.size() > 0", "messageExpression": "'got ' + string(self)"}))}),
            ),
            "estimated messageExpression cost exceeds budget",
        ),
        refused(
            "message_expression_join_cost",
            obj(
                json!({"a": rule(list_of(s(), json!({})), json!({"rule": "self.size() > 0", "messageExpression": "'got ' + self.join(',')"}))}),
            ),
            "estimated messageExpression cost exceeds budget",
        ),
        accepted(
            "message_expression_field",
            obj(
                json!({"a": rule(s(), json!({"rule": "self.size() > 0", "messageExpression": "'got ' + self"}))}),
            ),
        ),
        accepted(
            "message_expression_bounded",
            obj(
                json!({"a": rule(list_of(bounded(), json!({"maxItems": 10})), json!({"rule": "self.size() > 0", "messageExpression": "'got ' + self.join(',')"}))}),
            ),
        ),
        // Costs.
        refused(
            "cost_nested_loops",
            obj(
                json!({"l": rule(list_of(s(), json!({})), json!({"rule": "self.all(x, self.all(y, x == y))"}))}),
            ),
            "estimated rule cost exceeds budget",
        ),
        refused(
            "cost_in_unbounded_list",
            obj(
                json!({"l": list_of(rule(s(), json!({"rule": "self.startsWith('a') && self.endsWith('b') && self.contains('c')"})), json!({}))}),
            ),
            "runs up to",
        ),
        accepted(
            "cost_in_bounded_list",
            obj(
                json!({"l": list_of(rule(bounded(), json!({"rule": "self.startsWith('a') && self.endsWith('b') && self.contains('c')"})), json!({"maxItems": 100}))}),
            ),
        ),
        refused(
            "cost_total",
            obj((0..12)
                .map(|i| {
                    (
                        format!("f{i}"),
                        rule(
                            list_of(
                                json!({"type": "string", "maxLength": 1000}),
                                json!({"maxItems": 22000}),
                            ),
                            json!({"rule": "self.all(x, x.contains('a'))"}),
                        ),
                    )
                })
                .collect::<serde_json::Map<_, _>>()
                .into()),
            "estimated rule cost total for entire OpenAPIv3 schema",
        ),
    ]
}

/// The node under a list (`maxItems` K) that holds each cost case's rule.
pub fn cost_node() -> Value {
    json!({"type": "object", "properties": {
        "s": {"type": "string"},
        "b": {"type": "string", "maxLength": 10},
        "e": {"type": "string", "enum": ["a", "bb"]},
        "n": {"type": "integer"},
        "f": {"type": "number"},
        "ok": {"type": "boolean"},
        "l": {"type": "array", "items": {"type": "string"}},
        "lb": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 10}},
        "li": {"type": "array", "items": {"type": "integer"}},
        "m": {"type": "object", "additionalProperties": {"type": "string"}},
        "mb": {"type": "object", "maxProperties": 4, "additionalProperties": {"type": "string", "maxLength": 8}},
        "o": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
        "lo": {"type": "array", "maxItems": 3, "items": {"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 5}, "v": {"type": "integer"}}, "required": ["name"]}},
        "ios": {"x-kubernetes-int-or-string": true},
        "ts": {"type": "string", "format": "date-time"},
        "d": {"type": "string", "format": "duration"},
        "by": {"type": "string", "format": "byte"},
        "q": {"type": "string", "maxLength": 20}
    }, "required": ["s", "n"]})
}

/// Rules on [`cost_node`] (and a few on other nodes) whose cost must be the API server's.
pub fn cost_rules() -> Vec<(Value, &'static str)> {
    let on_node = [
        "self.n > 0",
        "self.s == 'abc'",
        "self.b.startsWith('ab')",
        "self.s.startsWith('ab')",
        "self.s.contains('x')",
        "self.b.matches('^[a-z]+$')",
        "self.s.matches('^[a-z]+$')",
        "self.l.all(x, x.size() < 10)",
        "self.l.exists(x, x == 'a')",
        "self.lb.all(x, x.startsWith('a'))",
        "self.l.map(x, x + 'a').size() > 0",
        "self.l.filter(x, x.startsWith('a')).size() > 0",
        "self.l.exists_one(x, x == 'a')",
        "'a' in self.l",
        "'a' in self.m",
        "self.m.all(k, self.m[k] == 'v')",
        "self.mb.all(k, k.size() > 1)",
        "has(self.o.x) ? self.o.x.size() > 0 : true",
        "self.lo.all(i, i.name.size() <= 5 && i.v >= 0)",
        "self.lo.map(i, i.name).isSorted()",
        "self.li.sum() > 0",
        "self.li.max() < 10",
        "self.l.indexOf('a') >= 0",
        "self.s.indexOf('a') >= 0",
        "self.b.lowerAscii() == 'a'",
        "self.s.upperAscii() == 'A'",
        "self.s.split(',').size() < 3",
        "self.b.replace('a', 'bb') == ''",
        "self.lb.join(',') == ''",
        "self.b.find('[0-9]+') == ''",
        "self.b.findAll('x').size() > 0",
        "isURL(self.s) && url(self.s).getHost() == 'x'",
        "quantity(self.q).isGreaterThan(quantity('1Gi'))",
        "isQuantity(self.q)",
        "isIP(self.q) && ip(self.q).family() == 4",
        "cidr(self.q).containsIP('10.0.0.1')",
        "cidr(self.q).containsCIDR(cidr('10.0.0.0/8'))",
        "semver(self.q).isLessThan(semver('1.0.0'))",
        "format.dns1123Label().validate(self.b).hasValue()",
        "sets.contains(self.lb, ['a'])",
        "sets.equivalent(self.lb, self.lb)",
        "self.lb.slice(0, 2).size() == 2",
        "self.lb.distinct().size() == self.lb.size()",
        "self.lb.sort() == self.lb",
        "self.lb.reverse().size() > 0",
        "lists.range(3).size() == 3",
        "self.lb.all(i, v, v.size() > i)",
        "self.mb.exists(k, v, v == k)",
        "self.lb.transformList(i, v, v + 'x').size() > 0",
        "self.mb.transformMap(k, v, v.size()).size() > 0",
        "self.?o.?x.orValue('') == ''",
        "self.ts > timestamp('2020-01-01T00:00:00Z')",
        "self.d < duration('1h')",
        "self.ios == 1 || self.ios == '1%'",
        "type(self.ios) == string ? self.ios.matches('^[0-9]+%$') : true",
        "string(self.n) == '1'",
        "self.l.all(x, self.l.all(y, x == y))",
        "self.e == 'a'",
        "size(self.by) < 10",
        "self.s + self.b == 'x'",
        "self.lb + ['x'] == ['x']",
        "self.mb.size() <= 4 && self.m.size() >= 0",
        "self.lo.exists(i, i.name == self.b)",
        "self.l[0] == 'a'",
        "self.m['k'] == 'v'",
        "[1, 2, 3].all(x, x > 0)",
        "{'a': 1}.size() == 1",
        "self.b.substring(1) == 'x'",
        "self.b.trim().size() > 0",
        "self.b.charAt(0) == 'a'",
        "'%s'.format([self.b]) == ''",
        "strings.quote(self.b) == ''",
        "self.lb.first().orValue('') == ''",
        "self.lb.sortBy(x, x.size()).size() > 0",
        "self.f > 1.5",
        "dyn(self.n) == 1",
        "self.ok",
        "self.n % 2 == 0 && self.n / 2 > 1 && -self.n < 0",
        "self.ts + duration('1h') > self.ts",
        "self.lb.exists_one(x, x == 'a') || self.lb.size() == 0",
        "self.lo.filter(i, i.v > 0).map(i, i.name).join('') == ''",
        "!(self.b in ['a', 'b'])",
    ];
    let mut out: Vec<(Value, &'static str)> = on_node.iter().map(|r| (cost_node(), *r)).collect();
    out.push((json!({"type": "string"}), "self.startsWith('a')"));
    out.push((
        json!({"type": "string", "maxLength": 63}),
        "self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",
    ));
    out.push((
        json!({"type": "array", "items": {"type": "string"}}),
        "self.all(x, x.startsWith('a'))",
    ));
    out.push((
        json!({"type": "object", "additionalProperties": {"type": "integer"}}),
        "self.all(k, k.startsWith('a'))",
    ));
    out
}

/// The version schemas of the published CRDs of `fixtures/crdgen-validate/`, each named by its
/// file and version.
pub fn published_schemas() -> Vec<(String, JSONSchemaProps)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/crdgen-validate");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for p in files {
        let crd: CustomResourceDefinition =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let file = p.file_stem().unwrap().to_string_lossy().into_owned();
        for v in crd.spec.versions {
            let schema = v.schema.and_then(|s| s.open_api_v3_schema).unwrap();
            out.push((format!("{file} {}", v.name), schema));
        }
    }
    out
}

/// A node bounded by `n` (a string of `maxLength` n, or a list of `maxItems` n short strings)
/// holding a rule with this message expression: the bound scales the message's cost.
pub fn message_node(n: u64, list: bool, message: &str) -> Value {
    let rule = json!([{"rule": "true", "messageExpression": message}]);
    if list {
        json!({"type": "array", "maxItems": n, "items": {"type": "string", "maxLength": 10},
               "x-kubernetes-validations": rule})
    } else {
        json!({"type": "string", "maxLength": n, "x-kubernetes-validations": rule})
    }
}

/// Message expressions whose cost must be the API server's: (on a list?, expression).
pub fn message_costs() -> Vec<(bool, &'static str)> {
    vec![
        (false, "'got ' + self"),
        (false, "self + self"),
        (false, "self.upperAscii()"),
        (false, "self.replace('a', 'bb')"),
        (false, "'%s'.format([self])"),
        (false, "strings.quote(self)"),
        (false, "self.split(',').join('-')"),
        (false, "self.substring(1) + '!'"),
        (false, "self.lowerAscii() + string(self.size())"),
        (true, "self.join(',')"),
        (true, "self.map(x, x + '!').join('')"),
        (
            true,
            "'items: ' + self.filter(x, x.startsWith('a')).join(', ')",
        ),
    ]
}

/// Rules on [`cost_node`] that kube-apiserver's type checker accepts (`true`) or refuses.
pub fn type_rules() -> Vec<(&'static str, bool)> {
    vec![
        ("self.n + 1.0 > 0", false),
        ("self.n + 1 > 0", true),
        ("self.f + 1 > 0", false),
        ("self.s + 1 == 'a'", false),
        ("self.s.size() + self.l.size() > 0", true),
        ("self.l.contains('a')", false),
        ("self.s in self.l", true),
        ("self.n in self.l", false),
        ("self.m.k == 'v'", true),
        ("self.m.k == 1", false),
        ("self.o.x.startsWith(1)", false),
        ("self.lo[0].name == 'a'", true),
        ("self.lo[0].nope == 'a'", false),
        ("self.lo.all(i, i.v > 'a')", false),
        ("self.ts < now()", false),
        ("self.d > duration('1s')", true),
        ("self.d > 1", false),
        ("self.ts.getDayOfWeek() == 1", true),
        ("int(self.s) > 0", true),
        ("int(self.o) > 0", false),
        ("double(self.n) > 0.5", true),
        ("string(self.f) == '1'", true),
        ("bytes(self.s).size() > 0", true),
        ("self.by == b'a'", true),
        ("self.by == 'a'", false),
        ("self.e in ['a', 'bb']", true),
        ("self.ios in [1, 'a']", false),
        ("[self.ios, 1].size() > 0", false),
        ("[self.ios, self.ios].size() > 0", true),
        ("self.lb.map(x, x.size()).sum() > 0", true),
        ("self.l.map(x, x).sum() > 0", false),
        ("self.li.min() > 'a'", false),
        ("self.lb.isSorted()", true),
        ("self.lo.isSorted()", false),
        ("self.lo.sort().size() > 0", false),
        ("self.lo.indexOf(self.lo[0]) > 0", true),
        ("self.mb.all(k, v, v.size() > k.size())", true),
        ("self.l.all(i, v, i > 'a')", false),
        ("self.lb.exists_one(x, x.size())", false),
        ("self.l.all(x, x)", false),
        ("has(self.s)", true),
        ("has(self.o.x.y)", false),
        ("self.?s.hasValue()", true),
        ("self.?nope.hasValue()", false),
        ("optional.of(self.s).value() == 'a'", true),
        ("optional.none().orValue(1) == 1", true),
        ("self.lb[?0].orValue('') == ''", true),
        ("self.m[?'k'].hasValue()", true),
        ("url(self.s).getQuery()['a'][0] == 'b'", true),
        ("quantity(self.q) > quantity('1')", false),
        ("quantity(self.q) == quantity('1')", true),
        ("quantity(self.q).add(1).isInteger()", true),
        ("ip(self.q).isLoopback()", true),
        ("cidr(self.q).ip().family() == 4", true),
        ("semver(self.q, true).major() == 1", true),
        ("isSemver(self.q, true)", true),
        ("format.named('dns1123Label').hasValue()", true),
        (
            "format.dns1123Label().validate(self.b).orValue([]).size() == 0",
            true,
        ),
        ("self.b.matches(self.b)", true),
        ("matches(self.b, '^a')", true),
        ("self.b.find('a', 'b') == ''", false),
        ("self.b.split(',', 2).size() == 2", true),
        ("self.b.indexOf('a', 1) > 0", true),
        ("self.b.lastIndexOf(1) > 0", false),
        ("self.lb.join(1) == ''", false),
        ("self.li.join(',') == ''", false),
        ("self.lb.flatten().size() > 0", false),
        ("[[1], [2]].flatten().size() == 2", true),
        ("lists.range(3).size() > 0", true),
        ("sets.contains(self.lb, self.li)", false),
        ("self.lb.transformMap(i, v, v.size()).size() > 0", true),
        ("self.mb.transformMapEntry(k, v, {k: v}).size() > 0", true),
        ("self.mb.transformList(k, v, v).size() > 0", true),
        ("dyn(self.o).nope == 1", true),
        ("type(self) == map", true),
        ("self.ios.size() > 0", true),
        ("int(self.ios) > 0", true),
        ("self.ok == true && !self.ok", true),
        ("self.ok || 1", false),
        ("self.n > 0 ? 'a' : 1", false),
        ("(self.n > 0 ? self.s : self.b).size() > 0", true),
        ("self.n.size() > 0", false),
        ("size(self.n) > 0", false),
        ("-self.s == 'a'", false),
        ("self.n % 2.0 == 0", false),
        ("self.f % 2.0 == 0.0", false),
        ("1u + 2u == 3u", true),
        ("self.ts - self.ts > duration('0s')", true),
        ("self.ts - duration('1h') < self.ts", true),
        ("self.d + self.d > self.d", true),
        ("timestamp('2020-01-01') > self.ts", false),
        ("self.b.charAt(0) == 1", false),
        ("'%d'.format([self.n]) == '1'", true),
        ("self.b.format(self.lb) == ''", true),
        ("self.b.upperAscii(1) == ''", false),
        ("self.b.trim() == self.b.lowerAscii()", true),
        ("self.lo.map(i, i.name).exists(n, n == 1)", false),
        ("self.lo.filter(i, i.v > 0).all(i, i.name.size() > 0)", true),
        ("self.mb.exists(k, k == 1)", false),
        ("{'a': 1, 'b': 'c'}.size() > 0", false),
        ("{'a': 1, 2: 3}.size() > 0", false),
        // Properties named like CEL's reserved words: declared escaped (`__namespace__`), and
        // selected by their own name too.
        ("self.namespace == 'a'", true),
        ("self.__namespace__ == 'a'", true),
        ("has(self.namespace) && self.namespace.size() > 0", true),
        ("self.namespace == 1", false),
        ("self.if > 0", true),
        ("self.__if__ > 0", true),
        ("self.?namespace.orValue('') == ''", true),
        ("self.package == 'a'", false),
    ]
}

/// A type case's CRD schema: the rule on [`cost_node`] at `.spec.t`, run once.
pub fn type_case(rule: &str) -> Value {
    let mut node = cost_node();
    node["properties"]["namespace"] = json!({"type": "string"});
    node["properties"]["if"] = json!({"type": "integer"});
    node["x-kubernetes-validations"] = json!([{"rule": rule}]);
    root(json!({"type": "object", "properties": {"t": node}}))
}
