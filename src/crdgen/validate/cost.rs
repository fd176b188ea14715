//! kube-apiserver's static cost limits for CEL rules, and its size estimates for unbounded lists,
//! maps and strings (`k8s.io/apiserver/pkg/cel/common`): what is not bounded by `maxItems`,
//! `maxProperties` or `maxLength` is assumed as large as a 3 MiB request allows.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};

/// `StaticEstimatedCostLimit`: the most one rule may cost.
pub(super) const RULE_COST_LIMIT: f64 = 10_000_000.0;
/// The largest request kube-apiserver accepts, which bounds every unbounded size.
const MAX_REQUEST_BYTES: f64 = 3.0 * 1024.0 * 1024.0;

/// The smallest JSON a value of this schema serializes to.
fn min_size(s: &JSONSchemaProps) -> f64 {
    match s.type_.as_deref() {
        Some("string") => 2.0,
        Some("boolean") => 4.0,
        Some("object") | Some("array") => 2.0,
        _ => 1.0,
    }
}

/// The most items a list of this schema can hold.
pub(super) fn max_items(s: &JSONSchemaProps) -> f64 {
    if let Some(n) = s.max_items {
        return n as f64;
    }
    let item = match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(i)) => min_size(i),
        _ => 1.0,
    };
    ((MAX_REQUEST_BYTES - 2.0) / (item + 1.0)).floor()
}

/// The most entries a map of this schema can hold.
pub(super) fn max_properties(s: &JSONSchemaProps) -> f64 {
    if let Some(n) = s.max_properties {
        return n as f64;
    }
    let value = match &s.additional_properties {
        Some(JSONSchemaPropsOrBool::Schema(v)) => min_size(v),
        _ => 1.0,
    };
    // `"":v,` per entry: an empty key, a colon, the value, a comma.
    ((MAX_REQUEST_BYTES - 2.0) / (value + 4.0)).floor()
}

/// The longest string of this schema.
pub(super) fn max_length(s: &JSONSchemaProps) -> f64 {
    s.max_length
        .map(|n| n as f64)
        .unwrap_or(MAX_REQUEST_BYTES - 2.0)
}
