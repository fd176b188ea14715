//! The chart's values: one typed model from which `values.yaml` (the defaults, commented from
//! the fields' docs) and `values.schema.json` (every object closed: an unknown key or a wrong
//! type in `--set` is refused by Helm) are both derived. Keys are kubebuilder's helm/v2-alpha
//! names where it has them.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A free-form Kubernetes object (resources, affinity, security contexts): any mapping.
type Object = BTreeMap<String, Value>;

/// The values of the chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Values {
    /// The controller manager's Deployment.
    pub manager: Manager,
    /// The manager's RBAC.
    pub rbac: Rbac,
    /// Per-kind admin, editor and viewer roles, to help cluster admins grant users access to the
    /// custom resources (the manager does not use them).
    pub rbac_helpers: Toggle,
    /// The CustomResourceDefinitions.
    pub crd: Crd,
    /// The metrics endpoint.
    pub metrics: Metrics,
    /// The admission and conversion webhooks.
    pub webhook: Webhook,
    /// The webhook serving certificate from cert-manager (install cert-manager first); disabled,
    /// the manager makes and rotates its own (--webhook-cert-mode self-managed).
    pub cert_manager: Toggle,
    /// A ServiceMonitor for the Prometheus Operator (install its CRDs first).
    pub prometheus: Toggle,
    /// NetworkPolicies letting metrics traffic in only from namespaces labelled
    /// `metrics: enabled` (webhook traffic: `webhook: enabled`); needs a CNI that enforces them.
    pub network_policy: Toggle,
}

/// The manager's RBAC.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rbac {
    /// Grant the manager Roles in the namespaces it watches (manager.watchNamespaces, else the
    /// release's) instead of a ClusterRole, and watch only those; rules a Role cannot hold
    /// (cluster-scoped resources, URLs) stay in a ClusterRole. A namespace-scoped project's
    /// chart (`init --namespaced`) is always namespaced.
    pub namespaced: bool,
}

/// Something turned on or off.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Toggle {
    pub enabled: bool,
}

/// The manager.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Manager {
    /// Replicas; one is active at a time while leader election is on.
    #[schemars(range(min = 0))]
    pub replicas: u32,
    /// The manager's image (`make helm-deploy IMG=...` sets repository and tag).
    pub image: Image,
    /// Run the controllers only while holding the leader-election Lease (--leader-elect).
    pub leader_elect: bool,
    /// Watch only these namespaces (--watch-namespace); empty: every namespace the manager's
    /// scope allows. Each needs the manager's Role there.
    pub watch_namespaces: Vec<String>,
    /// The health probes' port (--health-probe-bind-address).
    pub health_probe: Port,
    /// More flags for the manager.
    pub args: Vec<String>,
    /// Environment variables, by name (merged by name with the chart's own: POD_NAME and
    /// POD_NAMESPACE come from the downward API and cannot be set here).
    pub env: BTreeMap<String, String>,
    /// Secrets to pull the image with.
    pub image_pull_secrets: Vec<LocalObjectReference>,
    /// The pod's securityContext.
    pub pod_security_context: Object,
    /// The manager container's securityContext.
    pub security_context: Object,
    /// The manager container's resources.
    pub resources: Object,
    /// The pod's nodeSelector.
    pub node_selector: BTreeMap<String, String>,
    /// The pod's tolerations.
    pub tolerations: Vec<Object>,
    /// The pod's affinity.
    pub affinity: Object,
}

/// An image, repository and tag apart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Image {
    pub repository: String,
    /// A tag, or a digest (`sha256:...`).
    pub tag: String,
    pub pull_policy: PullPolicy,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub enum PullPolicy {
    Always,
    IfNotPresent,
    Never,
}

/// A name of a Secret in the release's namespace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LocalObjectReference {
    pub name: String,
}

/// A port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Port {
    #[schemars(range(min = 1, max = 65535))]
    pub port: u16,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Crd {
    /// Install the CRDs with the chart (in templates/, so that upgrades update them).
    pub enabled: bool,
    /// Keep the CRDs, and so every custom resource, when the release is uninstalled
    /// (`helm.sh/resource-policy: keep`).
    pub keep: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Metrics {
    /// Serve /metrics (--metrics-bind-address); disabled: no endpoint, no Service.
    pub enabled: bool,
    /// HTTPS, to clients the API server authenticates and allows GET /metrics (the
    /// metrics-reader ClusterRole); false: plain HTTP (--metrics-secure=false).
    pub secure: bool,
    #[schemars(range(min = 1, max = 65535))]
    pub port: u16,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Webhook {
    /// Serve the webhooks and install their configurations.
    pub enabled: bool,
    #[schemars(range(min = 1, max = 65535))]
    pub port: u16,
}

/// The values of the CRD-only chart (`generate chart --crds-chart`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CrdsValues {
    pub crd: CrdKeep,
    /// Conversion by the manager's webhook, for kinds that have one (as the main chart's
    /// `webhook.enabled`: install both in the same namespace).
    pub webhook: Toggle,
    /// The CA of the main chart's cert-manager Certificate injected into the conversion webhook.
    pub cert_manager: Toggle,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CrdKeep {
    /// Keep the CRDs, and so every custom resource, when the release is uninstalled
    /// (`helm.sh/resource-policy: keep`).
    pub keep: bool,
}

/// The environment variables the chart sets itself (the downward API).
pub const RESERVED_ENV: &[&str] = &["POD_NAME", "POD_NAMESPACE", "WATCH_NAMESPACE"];

/// `values.schema.json`: the JSON schema of [`Values`], every object closed, plus the user's own
/// top-level keys (`extra`: what values.yaml holds that the model does not), each typed as its
/// value is.
pub fn schema(extra: &serde_json::Map<String, Value>) -> Value {
    let mut json = schema_of::<Values>();
    if let Some(env) = json.pointer_mut("/properties/manager/properties/env") {
        env["propertyNames"] = serde_json::json!({"not": {"enum": RESERVED_ENV}});
    }
    if let Some(props) = json.get_mut("properties").and_then(Value::as_object_mut) {
        for (k, v) in extra {
            props.insert(k.clone(), type_of(v));
        }
    }
    json
}

/// The JSON schema (draft 07) of `T`, self-contained (no `$ref`), every object closed.
pub fn schema_of<T: JsonSchema>() -> Value {
    let settings = schemars::generate::SchemaSettings::draft07();
    let generator = settings.into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let mut json = serde_json::to_value(&schema).expect("a schema serializes");
    // Definitions inlined: one self-contained document Helm reads without $ref resolution.
    let defs = json
        .as_object_mut()
        .and_then(|o| o.remove("definitions"))
        .unwrap_or(Value::Null);
    inline_refs(&mut json, &defs);
    if let Some(o) = json.as_object_mut() {
        o.insert(
            "$schema".into(),
            Value::String("http://json-schema.org/draft-07/schema#".into()),
        );
        o.remove("title");
    }
    json
}

fn inline_refs(v: &mut Value, defs: &Value) {
    match v {
        Value::Object(o) => {
            if let Some(Value::String(r)) = o.get("$ref") {
                let name = r.rsplit('/').next().unwrap_or_default();
                if let Some(def) = defs.get(name) {
                    let mut def = def.clone();
                    inline_refs(&mut def, defs);
                    o.remove("$ref");
                    if let Value::Object(d) = def {
                        for (k, val) in d {
                            o.entry(k).or_insert(val);
                        }
                    }
                    return;
                }
            }
            for val in o.values_mut() {
                inline_refs(val, defs);
            }
            // A field's doc beside a `$ref` comes as `allOf: [<the type>]`: one schema, flattened.
            if let Some(Value::Array(one)) = o.get("allOf")
                && one.len() == 1
                && let Some(Value::Object(inner)) = one.first().cloned()
            {
                o.remove("allOf");
                for (k, val) in inner {
                    o.entry(k).or_insert(val);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| inline_refs(x, defs)),
        _ => {}
    }
}

/// The schema of a user's own value: its JSON type, nothing more.
fn type_of(v: &Value) -> Value {
    let t = match v {
        Value::Null => return serde_json::json!({}),
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    serde_json::json!({ "type": t })
}

/// The keys of `values.yaml` as the model knows them (top level).
pub fn model_keys() -> Vec<String> {
    let schema = schema(&serde_json::Map::new());
    schema["properties"]
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

/// Each field's doc comment, by its path in the values (`manager.image`), from the schema.
pub fn descriptions(schema: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    fn walk(s: &Value, path: &str, out: &mut BTreeMap<String, String>) {
        if let Some(d) = s.get("description").and_then(Value::as_str)
            && !path.is_empty()
        {
            out.insert(path.to_string(), d.to_string());
        }
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            for (k, v) in props {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                walk(v, &p, out);
            }
        }
    }
    walk(schema, "", &mut out);
    out
}
