//! What kube-apiserver checks when a CRD is created, checked before it is written: the
//! structural-schema rules ([`structural`]), the `x-kubernetes-*` list and map combinations
//! ([`lists`]), and every `x-kubernetes-validations` entry ([`rules`]): its rule compiled against
//! the schema it sits on and its cost estimated within the API server's budgets ([`cel`]). A refusal names the attribute that
//! wrote the refused construct (the `#[x_kube(validation = ...)]` / `#[kube(validation = ...)]`
//! of a rule, the `#[schemars(extend(..))]` / `regex(..)` of an extension or a pattern, the
//! `#[serde(default ..)]` of a default, the `#[kube(printcolumn / selectable / scale /
//! deprecated ..)]` item of a version's other fields; else the field its path leads to, whose
//! type wrote it ([`crate::crdgen::read::locate`]); else the kind), the reason the API server gives, and the
//! fix.

mod approval;
pub mod cel;
use cel::{cost, decl};
mod defaults;
mod goregex;
mod lists;
mod rules;
pub mod source_checks;
mod structural;
mod version;
pub use approval::problem as api_approval_problem;
pub use version::{DEPRECATION_WARNING_RULE, deprecation_warning_problem};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinitionVersion, JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use serde_json::Value;

use super::error::{CrdgenError, Location};
use crate::crdgen::read::locate::Part;
use crate::crdgen::read::sources::Sources;

/// Where a schema node sits, as the API server sees it.
#[derive(Clone)]
pub(super) struct Place {
    /// `.spec.items[*]`-style path, for messages.
    pub path: String,
    /// The root of the resource.
    pub root: bool,
    /// Inside the `apiVersion`, `kind` or `metadata` of the resource or of an embedded resource.
    pub in_resource_meta: bool,
    /// Defaults are forbidden here (the resource's own metadata, maps inside resource meta).
    pub no_defaults: bool,
    /// The most times a value here can occur in one object (`None`: unbounded, a list or map
    /// above has no `maxItems` / `maxProperties`).
    pub cardinality: Option<u64>,
    /// The list above that makes `oldSelf` unusable here (a list that is not a list-map).
    pub uncorrelatable: Option<String>,
}

impl Place {
    fn root() -> Place {
        Place {
            path: String::new(),
            root: true,
            in_resource_meta: false,
            no_defaults: false,
            cardinality: Some(1),
            uncorrelatable: None,
        }
    }
}

/// A refusal found in one schema: its place, what the API server says, the fix, and what wrote
/// the refused construct: a rule (by its text), or an attribute (by the keyword and value it set).
pub(super) struct Refusal {
    pub path: String,
    pub reason: String,
    pub fix: String,
    pub rule: Option<String>,
    pub written: Option<(&'static str, Value)>,
}

impl Refusal {
    /// A refusal of the construct at `place` itself (not of a rule).
    fn at(place: &Place, reason: String, fix: &str) -> Refusal {
        Refusal {
            path: place.path.clone(),
            reason,
            fix: fix.into(),
            rule: None,
            written: None,
        }
    }

    /// The refused construct was written by the attribute that set `key` to `value`.
    fn by(mut self, key: &'static str, value: &Value) -> Refusal {
        self.written = Some((key, value.clone()));
        self
    }
}

/// The API server's verdict on one version's schema by itself: `Err` with the first refused
/// construct's path and reason. For tests that hold it against the real API server's verdict.
#[doc(hidden)]
pub fn verdict(schema: &JSONSchemaProps) -> Result<(), String> {
    let mut found = Vec::new();
    let mut total = cost::Total::default();
    walk(schema, &Place::root(), &mut found, &mut total);
    if let Some(r) = found.into_iter().next().or_else(|| total_refusal(&total)) {
        return Err(format!(
            "`{}`: {}",
            if r.path.is_empty() { "." } else { &r.path },
            r.reason
        ));
    }
    Ok(())
}

/// The refusal of a schema whose rules cost too much together.
fn total_refusal(total: &cost::Total) -> Option<Refusal> {
    if total.total <= cost::CRD_COST_LIMIT {
        return None;
    }
    let (_, rule) = total.most.clone().unwrap_or_default();
    Some(Refusal {
        path: String::new(),
        reason: format!(
            "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of {} (the most expensive rule is `{rule}`)",
            cost::factor(total.total, cost::CRD_COST_LIMIT)
        ),
        fix: "bound the lists, maps and strings the rules read (`#[schemars(length(max = N))]`), or drop rules".into(),
        rule: Some(rule),
        written: None,
    })
}

/// Check one version's schema; the first refusal is the error. It points at what wrote the
/// refused construct: its rule or schemars attribute (where `sources` says it was written), else
/// what `field_at` finds on its path (the `#[serde(default ..)]` of a refused default, the field
/// whose type wrote the rest), else the kind.
pub(crate) fn check(
    schema: &JSONSchemaProps,
    version: &str,
    kind_loc: &Location,
    sources: &Sources,
    field_at: &dyn Fn(&str, Part) -> Option<Location>,
) -> Result<(), CrdgenError> {
    let mut found = Vec::new();
    let mut total = cost::Total::default();
    walk(schema, &Place::root(), &mut found, &mut total);
    let first = found.into_iter().next().or_else(|| total_refusal(&total));
    match first {
        None => Ok(()),
        Some(r) => {
            let loc = r
                .rule
                .as_deref()
                .and_then(|rule| sources.rule(rule))
                .or_else(|| r.written.as_ref().and_then(|(k, v)| sources.attr(k, v)))
                .cloned()
                .or_else(|| {
                    let default = matches!(&r.written, Some(("default", _)));
                    let part = if default { Part::Default } else { Part::Field };
                    field_at(&r.path, part)
                })
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

/// Check what one version sets beside its schema (printer columns, selectable fields, scale,
/// deprecation warning), refused at the `#[kube(...)]` item that wrote the refused part (at the
/// kind when none did).
pub(crate) fn check_version(
    v: &CustomResourceDefinitionVersion,
    kind_loc: &Location,
    written: &crate::crdgen::derive::crd::VersionAttrs,
) -> Result<(), CrdgenError> {
    use version::Written;
    match version::check(v) {
        None => Ok(()),
        Some((what, fix, by)) => {
            let loc = match by {
                Written::PrintColumn(n) => written.printcolumns.get(n),
                Written::Selectable(n) => written.selectable.get(n),
                Written::Scale => written.scale.as_ref(),
                Written::Deprecated => written.deprecated.as_ref(),
            };
            Err(CrdgenError::Refused {
                loc: loc.unwrap_or(kind_loc).clone(),
                what: format!("version {}: {what}", v.name),
                fix: fix.into(),
            })
        }
    }
}

/// What kube-apiserver refuses in a CRD outside its versions: the API approval of a protected
/// group (set with `#[kube(annotation("api-approved.kubernetes.io", "<url>"))]`).
pub(crate) fn check_crd_meta(
    crd: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    kind_loc: &Location,
) -> Result<(), CrdgenError> {
    match approval::problem(crd) {
        None => Ok(()),
        Some(what) => Err(CrdgenError::Refused {
            loc: kind_loc.clone(),
            what,
            fix: format!(
                "use a group of your own domain, or record the approval on the kind, e.g. `#[kube(annotation(\"{}\", \"https://github.com/kubernetes/enhancements/pull/1111\"))]` (or a reason starting with \"unapproved\", e.g. \"unapproved, experimental\")",
                approval::API_APPROVED
            ),
        }),
    }
}

/// How many times a child can occur per occurrence of `s` (`extractMaxElements`).
fn fan_out(s: &JSONSchemaProps) -> Option<u64> {
    match s.type_.as_deref() {
        Some("object") if s.additional_properties.is_some() => {
            s.max_properties.map(|n| n.max(0) as u64)
        }
        Some("array") => s.max_items.map(|n| n.max(0) as u64),
        _ => Some(1),
    }
}

fn walk(s: &JSONSchemaProps, place: &Place, out: &mut Vec<Refusal>, total: &mut cost::Total) {
    lists::check(s, place, out);
    structural::check(s, place, out);
    if let Some(rules) = &s.x_kubernetes_validations {
        let embedded = s.x_kubernetes_embedded_resource == Some(true);
        let d = decl::decl(s, place.root || embedded);
        for r in rules {
            rules::check(r, s, d.as_ref(), place, out, total);
        }
    }
    let times = |n: Option<u64>| match (place.cardinality, n) {
        (Some(a), Some(b)) => Some(cost::times(a, b)),
        _ => None,
    };
    if let Some(props) = &s.properties {
        let embedded = s.x_kubernetes_embedded_resource == Some(true);
        for (k, p) in props {
            let meta = (place.root || embedded)
                && matches!(k.as_str(), "apiVersion" | "kind" | "metadata");
            let child = Place {
                path: format!("{}.{k}", place.path),
                root: false,
                in_resource_meta: place.in_resource_meta || meta,
                no_defaults: place.no_defaults || (place.root && meta),
                cardinality: times(fan_out(s)),
                uncorrelatable: place.uncorrelatable.clone(),
            };
            walk(p, &child, out, total);
        }
    }
    if let Some(JSONSchemaPropsOrArray::Schema(i)) = &s.items {
        let list_map = s.x_kubernetes_list_type.as_deref() == Some("map");
        let here = if place.path.is_empty() {
            ".".to_string()
        } else {
            place.path.clone()
        };
        let child = Place {
            path: format!("{}[*]", place.path),
            root: false,
            in_resource_meta: place.in_resource_meta,
            no_defaults: place.no_defaults,
            cardinality: times(fan_out(s)),
            uncorrelatable: place
                .uncorrelatable
                .clone()
                .or_else(|| (!list_map).then_some(here)),
        };
        walk(i, &child, out, total);
    }
    if let Some(JSONSchemaPropsOrBool::Schema(a)) = &s.additional_properties {
        let child = Place {
            path: format!("{}.*", place.path),
            root: false,
            in_resource_meta: place.in_resource_meta,
            no_defaults: place.no_defaults || place.in_resource_meta,
            cardinality: times(fan_out(s)),
            uncorrelatable: place.uncorrelatable.clone(),
        };
        walk(a, &child, out, total);
    }
}
