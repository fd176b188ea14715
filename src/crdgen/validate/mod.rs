//! What kube-apiserver checks when a CRD is created, checked before it is written: every CEL rule
//! of `x-kubernetes-validations` compiled against the schema it sits on ([`rules`]), and the
//! `x-kubernetes-*` list and map combinations ([`lists`]), and the
//! structural-schema rules ([`structural`]). A refusal names the
//! `#[x_kube(validation = ...)]` / `#[kube(validation = ...)]` attribute of the rule (or the kind
//! when the construct has no attribute of its own), the reason the API server gives, and the fix.

mod cost;
mod lists;
mod rules;
mod structural;

use std::cell::RefCell;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};

use super::error::{CrdgenError, Location};

thread_local! {
    /// Where each CEL rule the static reader evaluated was written.
    static RULE_SOURCES: RefCell<Vec<(String, Location)>> = const { RefCell::new(Vec::new()) };
}

/// Remember that `rule` was written at `loc` (called for every rule the reader evaluates).
pub(crate) fn record_rule(rule: &str, loc: Location) {
    RULE_SOURCES.with(|r| r.borrow_mut().push((rule.to_string(), loc)));
}

/// Forget the rules of a previous run.
pub(crate) fn clear_rules() {
    RULE_SOURCES.with(|r| r.borrow_mut().clear());
}

fn rule_source(rule: &str) -> Option<Location> {
    RULE_SOURCES.with(|r| {
        r.borrow()
            .iter()
            .find(|(text, _)| text == rule)
            .map(|(_, l)| l.clone())
    })
}

/// Where a schema node sits, as the API server sees it.
#[derive(Clone)]
pub(super) struct Place<'a> {
    /// The root schema of the version.
    pub root: &'a JSONSchemaProps,
    /// `.spec.items[*]`-style path, for messages.
    pub path: String,
    /// Whether `oldSelf` can be correlated here (no list above, other than a list-map).
    pub correlatable: bool,
}

/// A refusal found in one schema: its place, what the API server says, the fix, and the rule it
/// comes from (when it comes from one).
pub(super) struct Refusal {
    pub path: String,
    pub reason: String,
    pub fix: String,
    pub rule: Option<String>,
}

impl Refusal {
    /// A refusal of the construct at `place` itself (not of a rule).
    fn at(place: &Place<'_>, reason: String, fix: &str) -> Refusal {
        Refusal {
            path: place.path.clone(),
            reason,
            fix: fix.into(),
            rule: None,
        }
    }
}

/// Check one version's schema; the first refusal is the error.
pub(crate) fn check(
    schema: &JSONSchemaProps,
    version: &str,
    kind_loc: &Location,
) -> Result<(), CrdgenError> {
    let mut refusals = Vec::new();
    let root = Place {
        root: schema,
        path: String::new(),
        correlatable: true,
    };
    walk(schema, &root, &mut refusals);
    match refusals.into_iter().next() {
        None => Ok(()),
        Some(r) => {
            let loc = r
                .rule
                .as_deref()
                .and_then(rule_source)
                .unwrap_or_else(|| kind_loc.clone());
            let at = if r.path.is_empty() { "." } else { &r.path };
            Err(CrdgenError::Refused {
                loc,
                what: format!("version {version}, `{at}`: {}", r.reason),
                fix: r.fix,
            })
        }
    }
}

fn walk<'a>(s: &'a JSONSchemaProps, place: &Place<'a>, out: &mut Vec<Refusal>) {
    lists::check(s, place, out);
    structural::check(s, place, out);
    for r in s.x_kubernetes_validations.iter().flatten() {
        rules::check(r, s, place, out);
    }
    if let Some(props) = &s.properties {
        for (k, p) in props {
            let child = Place {
                path: format!("{}.{k}", place.path),
                ..place.clone()
            };
            walk(p, &child, out);
        }
    }
    if let Some(JSONSchemaPropsOrArray::Schema(i)) = &s.items {
        let child = Place {
            root: place.root,
            path: format!("{}[*]", place.path),
            correlatable: place.correlatable && s.x_kubernetes_list_type.as_deref() == Some("map"),
        };
        walk(i, &child, out);
    }
    if let Some(JSONSchemaPropsOrBool::Schema(a)) = &s.additional_properties {
        let child = Place {
            path: format!("{}.*", place.path),
            ..place.clone()
        };
        walk(a, &child, out);
    }
}
