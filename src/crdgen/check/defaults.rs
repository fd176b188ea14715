//! A schema's `default` validated as kube-apiserver validates it when a CRD is created
//! (`apiextensions-apiserver/pkg/apiserver/schema/defaulting/validation.go`): a value of the
//! schema's type, enum and nullability, within its lengths, bounds, pattern and counts, with its
//! required properties and no unknown fields, recursively; and passing the CEL rules of every
//! node it fills, evaluated with the `cel` crate's interpreter (a rule it cannot evaluate, for a
//! function it lacks, is left to the API server rather than refused).

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use serde_json::Value;

/// Whether `v` is a valid default of `s` as the API server validates defaults: its OpenAPI
/// validations and CEL rules, recursively, with no field the schema does not know.
pub(super) fn check(v: &Value, s: &JSONSchemaProps, at: &str) -> Result<(), String> {
    if v.is_null() {
        // A null default is refused where the schema has an enum, even a nullable one with null
        // among its values (kube-apiserver 1.36 says "Unsupported value: null").
        return if s.nullable == Some(true) && s.enum_.is_none() {
            Ok(())
        } else {
            Err(format!(
                "{at}: null is not allowed (the schema is not nullable)"
            ))
        };
    }
    if let Some(values) = &s.enum_
        && !values.iter().any(|e| e.0 == *v)
    {
        return Err(format!("{at}: Unsupported value: {v}, not one of the enum"));
    }
    let ok = match s.type_.as_deref() {
        Some("string") => v.is_string(),
        // An integer over int64's range is read as a float64 by kube-apiserver, and refused.
        Some("integer") => v.is_i64(),
        Some("number") => v.is_number(),
        Some("boolean") => v.is_boolean(),
        Some("array") => v.is_array(),
        Some("object") => v.is_object(),
        _ => true,
    };
    if !ok {
        let why = if v.is_u64() {
            " (it is over 9223372036854775807, the largest int64, and kube-apiserver reads it as a float)"
        } else {
            ""
        };
        return Err(format!(
            "{at}: Invalid value: {v}: must be of type {}{why}",
            s.type_.as_deref().unwrap_or_default()
        ));
    }
    match v {
        Value::String(text) => {
            let len = text.chars().count() as i64;
            if let Some(max) = s.max_length
                && len > max
            {
                return Err(format!("{at}: Too long: may not be more than {max} bytes"));
            }
            if let Some(min) = s.min_length
                && len < min
            {
                return Err(format!(
                    "{at}: Invalid value: {v}: should be at least {min} chars long"
                ));
            }
            if let Some(p) = &s.pattern
                && super::goregex::matches(p, text) == Some(false)
            {
                return Err(format!(
                    "{at}: Invalid value: {v}: in body should match '{p}'"
                ));
            }
        }
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or_default();
            let excl_max = s.exclusive_maximum == Some(true);
            let excl_min = s.exclusive_minimum == Some(true);
            if let Some(m) = s.maximum
                && (x > m || (excl_max && x == m))
            {
                let how = if excl_max {
                    "less than"
                } else {
                    "less than or equal to"
                };
                return Err(format!(
                    "{at}: Invalid value: {v}: in body should be {how} {m}"
                ));
            }
            if let Some(m) = s.minimum
                && (x < m || (excl_min && x == m))
            {
                let how = if excl_min {
                    "greater than"
                } else {
                    "greater than or equal to"
                };
                return Err(format!(
                    "{at}: Invalid value: {v}: in body should be {how} {m}"
                ));
            }
            if let Some(m) = s.multiple_of
                && m > 0.0
                && ((x / m).round() * m - x).abs() > 1e-9 * x.abs().max(1.0)
            {
                return Err(format!(
                    "{at}: Invalid value: {v}: in body should be a multiple of {m}"
                ));
            }
        }
        Value::Array(items) => {
            if let Some(max) = s.max_items
                && items.len() as i64 > max
            {
                return Err(format!(
                    "{at}: Too many: {}: must have at most {max} items",
                    items.len()
                ));
            }
            if let Some(min) = s.min_items
                && (items.len() as i64) < min
            {
                return Err(format!(
                    "{at}: Invalid value: should have at least {min} items"
                ));
            }
            if let Some(JSONSchemaPropsOrArray::Schema(i)) = &s.items {
                for (n, x) in items.iter().enumerate() {
                    check(x, i, &format!("{at}[{n}]"))?;
                }
            }
        }
        Value::Object(m) => {
            if let Some(max) = s.max_properties
                && m.len() as i64 > max
            {
                return Err(format!(
                    "{at}: Too many: {}: must have at most {max} properties",
                    m.len()
                ));
            }
            if let Some(min) = s.min_properties
                && (m.len() as i64) < min
            {
                return Err(format!(
                    "{at}: Invalid value: should have at least {min} properties"
                ));
            }
            for r in s.required.iter().flatten() {
                let has_default = s
                    .properties
                    .as_ref()
                    .and_then(|p| p.get(r))
                    .is_some_and(|p| p.default.is_some());
                if !m.contains_key(r) && !has_default {
                    return Err(format!("{at}.{r}: Required value"));
                }
            }
            let known = s.x_kubernetes_preserve_unknown_fields == Some(true)
                || s.x_kubernetes_embedded_resource == Some(true);
            for (k, x) in m {
                let sub = s.properties.as_ref().and_then(|p| p.get(k)).or(
                    match &s.additional_properties {
                        Some(JSONSchemaPropsOrBool::Schema(a)) => Some(&**a),
                        _ => None,
                    },
                );
                match sub {
                    Some(sub) => check(x, sub, &format!("{at}.{k}"))?,
                    None if known
                        || matches!(
                            s.additional_properties,
                            Some(JSONSchemaPropsOrBool::Bool(true))
                        ) => {}
                    None => {
                        return Err(format!(
                            "{at}: Invalid value: {v}: must not have unknown fields"
                        ));
                    }
                }
            }
        }
        _ => {}
    }
    if let Some(rule) = failed_rule(v, s) {
        return Err(format!("{at}: Invalid value: {v}: failed rule: {rule}"));
    }
    Ok(())
}

/// The first rule of `s` that the default `v` fails (rules using `oldSelf` do not run on
/// defaults).
fn failed_rule<'s>(v: &Value, s: &'s JSONSchemaProps) -> Option<&'s str> {
    let rules = s.x_kubernetes_validations.as_ref()?;
    let value = to_cel(v);
    for r in rules {
        if r.rule.contains("oldSelf") {
            continue;
        }
        let Ok(program) = cel::Program::compile(&r.rule) else {
            continue;
        };
        let mut ctx = cel::Context::default();
        ctx.add_variable_from_value("self", value.clone());
        if let Ok(cel::Value::Bool(false)) = program.execute(&ctx) {
            return Some(&r.rule);
        }
    }
    None
}

/// A JSON value as a CEL value (integers as `int`, as the API server reads them).
fn to_cel(v: &Value) -> cel::Value {
    match v {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => cel::Value::Int(i),
            (None, Some(u)) => cel::Value::UInt(u),
            _ => cel::Value::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        Value::Array(a) => cel::Value::List(Arc::new(a.iter().map(to_cel).collect())),
        Value::Object(m) => cel::Value::from(
            m.iter()
                .map(|(k, x)| (k.clone(), to_cel(x)))
                .collect::<HashMap<String, cel::Value>>(),
        ),
    }
}
