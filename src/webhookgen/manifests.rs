//! Rendering the markers as controller-gen does: `---` before each document, keys in
//! alphabetical order (serde_json's map is sorted), block sequences at their key's indentation
//! (serde-saphyr prints them so).

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

use super::Located;

/// `config/webhook/manifests.yaml` for `markers` (at least one).
pub fn render(markers: &[Located]) -> Result<String> {
    let mut out = String::new();
    for (mutating, kind, name) in [
        (
            true,
            "MutatingWebhookConfiguration",
            "mutating-webhook-configuration",
        ),
        (
            false,
            "ValidatingWebhookConfiguration",
            "validating-webhook-configuration",
        ),
    ] {
        let webhooks: Vec<Value> = markers
            .iter()
            .filter(|m| m.marker.mutating == mutating)
            .map(webhook)
            .collect();
        if webhooks.is_empty() {
            continue;
        }
        let document = json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": name},
            "webhooks": webhooks,
        });
        let yaml =
            serde_saphyr::to_string(&document).context("serializing the webhook configurations")?;
        out.push_str("---\n");
        out.push_str(&yaml);
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    Ok(out)
}

fn webhook(located: &Located) -> Value {
    let m = &located.marker;
    let client_config = match (&m.path, &m.url) {
        (_, Some(url)) => json!({"url": url}),
        (path, None) => json!({
            "service": {"name": "webhook-service", "namespace": "system", "path": path},
        }),
    };
    let mut webhook = Map::new();
    webhook.insert(
        "admissionReviewVersions".into(),
        json!(m.admission_review_versions),
    );
    webhook.insert("clientConfig".into(), client_config);
    webhook.insert("failurePolicy".into(), json!(m.failure_policy));
    if let Some(policy) = &m.match_policy {
        webhook.insert("matchPolicy".into(), json!(policy));
    }
    webhook.insert("name".into(), json!(m.name));
    if let Some(policy) = &m.reinvocation_policy {
        webhook.insert("reinvocationPolicy".into(), json!(policy));
    }
    webhook.insert(
        "rules".into(),
        json!([{
            "apiGroups": m.groups,
            "apiVersions": m.versions,
            "operations": m.operations,
            "resources": m.resources,
        }]),
    );
    webhook.insert("sideEffects".into(), json!(m.side_effects));
    if let Some(timeout) = m.timeout_seconds {
        webhook.insert("timeoutSeconds".into(), json!(timeout));
    }
    Value::Object(webhook)
}
