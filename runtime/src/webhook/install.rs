//! Writing the webhook server's address and CA into the cluster: the `clientConfig` of the
//! operator's Mutating/ValidatingWebhookConfigurations and the `spec.conversion` of its CRDs.
//!
//! - [`local_configurations`] and [`apply`]: `--webhook-local-url` creates its own copies of
//!   the configurations (named `<operator>-local-<name>`) pointing at a URL, and removes them
//!   on a clean shutdown ([`remove`]).
//! - [`set_conversion`], `restore_conversion` and [`clear_conversion`]: a CRD's conversion
//!   webhook; `conversion` reads it.
//! - [`inject_ca_bundle`]: self-managed certificates keep the `caBundle` of every
//!   configuration and CRD that calls the operator's Service current, as cert-manager's CA
//!   injector does for kubebuilder projects.

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::{Value, json};

/// Why the configurations could not be written.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The configurations' YAML does not parse.
    #[error("config/webhook/manifests.yaml does not parse: {0}")]
    Yaml(String),
    /// The API server refused a request.
    #[error("{what}: {source}")]
    Kube {
        /// What was being written.
        what: String,
        /// The API server's answer.
        source: kube::Error,
    },
}

fn kube_error(what: impl Into<String>) -> impl FnOnce(kube::Error) -> InstallError {
    let what = what.into();
    move |source| InstallError::Kube { what, source }
}

/// The PEM text of a CA as the base64 string a `caBundle` holds.
pub fn ca_bundle(ca_pem: &str) -> Value {
    serde_json::to_value(ByteString(ca_pem.as_bytes().to_vec())).expect("bytes serialize")
}

/// The configurations of `yaml` (the documents whose kind is a Mutating or Validating
/// WebhookConfiguration), renamed `<prefix><name>`, every webhook calling `base_url` + its
/// Service path, trusting `ca_pem`.
pub fn local_configurations(
    yaml: &str,
    prefix: &str,
    base_url: &str,
    ca_pem: &str,
) -> Result<Vec<Value>, InstallError> {
    let documents: Vec<Value> =
        serde_saphyr::from_multiple(yaml).map_err(|e| InstallError::Yaml(e.to_string()))?;
    let mut out = Vec::new();
    for mut doc in documents.into_iter().filter(|d| !d.is_null()) {
        let kind = doc["kind"].as_str().unwrap_or_default();
        if kind != "MutatingWebhookConfiguration" && kind != "ValidatingWebhookConfiguration" {
            continue;
        }
        let name = doc["metadata"]["name"].as_str().unwrap_or_default();
        doc["metadata"] = json!({ "name": format!("{prefix}{name}") });
        if let Some(webhooks) = doc["webhooks"].as_array_mut() {
            for webhook in webhooks {
                let path = webhook["clientConfig"]["service"]["path"]
                    .as_str()
                    .unwrap_or("/")
                    .to_owned();
                webhook["clientConfig"] = json!({
                    "url": format!("{}{path}", base_url.trim_end_matches('/')),
                    "caBundle": ca_bundle(ca_pem),
                });
            }
        }
        out.push(doc);
    }
    Ok(out)
}

/// Server-side applies `configurations` as `field_manager`.
pub async fn apply(
    client: &Client,
    configurations: &[Value],
    field_manager: &str,
) -> Result<(), InstallError> {
    let params = PatchParams::apply(field_manager).force();
    for doc in configurations {
        let name = doc["metadata"]["name"].as_str().unwrap_or_default();
        let what = format!(
            "applying {} {name}",
            doc["kind"].as_str().unwrap_or_default()
        );
        if doc["kind"] == "MutatingWebhookConfiguration" {
            let api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
            api.patch(name, &params, &Patch::Apply(doc))
                .await
                .map_err(kube_error(what))?;
        } else {
            let api: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
            api.patch(name, &params, &Patch::Apply(doc))
                .await
                .map_err(kube_error(what))?;
        }
    }
    Ok(())
}

/// The `(kind, name)` of each configuration of `configurations`, what [`remove_identities`] takes.
pub(crate) fn identities(configurations: &[Value]) -> Vec<(String, String)> {
    (configurations.iter())
        .map(|doc| {
            let field = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (field(&doc["kind"]), field(&doc["metadata"]["name"]))
        })
        .collect()
}

/// Deletes `configurations` (those already gone are fine): 0.1.0's form, kept for code written
/// against it.
#[deprecated(
    since = "0.2.0",
    note = "the manager removes the webhook configurations it installed itself; this goes in 0.3.0"
)]
pub async fn remove(client: &Client, configurations: &[Value]) -> Result<(), InstallError> {
    remove_identities(client, &identities(configurations)).await
}

/// Deletes the configurations named by `(kind, name)` (those already gone are fine).
pub(crate) async fn remove_identities(
    client: &Client,
    configurations: &[(String, String)],
) -> Result<(), InstallError> {
    for (kind, name) in configurations {
        let what = format!("deleting {kind} {name}");
        let result = if kind == "MutatingWebhookConfiguration" {
            let api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
            api.delete(name, &DeleteParams::default()).await.map(|_| ())
        } else {
            let api: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
            api.delete(name, &DeleteParams::default()).await.map(|_| ())
        };
        match result {
            Err(kube::Error::Api(status)) if status.is_not_found() => {}
            other => other.map_err(kube_error(what))?,
        }
    }
    Ok(())
}

/// Makes the CRD `crd_name` convert through the webhook at `client_config` (a
/// `WebhookClientConfig` as JSON), written as `field_manager`.
///
/// The whole `spec.conversion` is replaced (a JSON merge patch that also drops a `service`
/// set by another field manager): `make install` server-side applies the CRD with the
/// conversion patch of `config/crd`, whose `clientConfig.service` kubectl keeps owning, and a
/// server-side apply of `url` beside it is refused ("exactly one of url or service").
pub async fn set_conversion(
    client: &Client,
    crd_name: &str,
    client_config: Value,
    field_manager: &str,
) -> Result<(), InstallError> {
    let conversion = webhook_conversion(client_config, json!(["v1"]));
    patch_conversion(client, crd_name, conversion, field_manager).await
}

/// `spec.conversion` calling `client_config`, as a merge patch: the keys of a
/// `WebhookClientConfig` it lacks are `null`, so none another writer set is left beside it.
fn webhook_conversion(client_config: Value, review_versions: Value) -> Value {
    let mut client_config = client_config;
    for other in ["url", "service", "caBundle"] {
        if client_config.get(other).is_none() {
            client_config[other] = Value::Null;
        }
    }
    json!({
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": client_config,
            "conversionReviewVersions": review_versions,
        },
    })
}

/// Gives the CRD `crd_name` back `conversion` (a `spec.conversion` read with [`conversion`]
/// before local mode changed it), written as `field_manager`. A CRD already gone is fine.
pub(crate) async fn restore_conversion(
    client: &Client,
    crd_name: &str,
    conversion: &Value,
    field_manager: &str,
) -> Result<(), InstallError> {
    let webhook = &conversion["webhook"];
    let versions = match &webhook["conversionReviewVersions"] {
        Value::Array(versions) if !versions.is_empty() => Value::Array(versions.clone()),
        _ => json!(["v1"]),
    };
    let conversion = match conversion["strategy"].as_str() {
        Some("Webhook") => webhook_conversion(webhook["clientConfig"].clone(), versions),
        _ => json!({ "strategy": "None", "webhook": null }),
    };
    ignore_not_found(patch_conversion(client, crd_name, conversion, field_manager).await)
}

/// The `spec.conversion` of the CRD `crd_name` as the cluster holds it (`None` when the CRD
/// does not exist).
pub(crate) async fn conversion(
    client: &Client,
    crd_name: &str,
) -> Result<Option<Value>, InstallError> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = api
        .get_opt(crd_name)
        .await
        .map_err(kube_error(format!("reading CRD {crd_name}")))?;
    Ok(crd.map(|crd| serde_json::to_value(crd.spec.conversion).expect("a conversion serializes")))
}

fn ignore_not_found(result: Result<(), InstallError>) -> Result<(), InstallError> {
    match result {
        Err(InstallError::Kube {
            source: kube::Error::Api(status),
            ..
        }) if status.is_not_found() => Ok(()),
        other => other,
    }
}

/// Puts the CRD `crd_name` back to `strategy: None` (no conversion webhook, and no client
/// configuration left behind by any field manager). A CRD already gone is fine.
pub async fn clear_conversion(
    client: &Client,
    crd_name: &str,
    field_manager: &str,
) -> Result<(), InstallError> {
    let conversion = json!({ "strategy": "None", "webhook": null });
    ignore_not_found(patch_conversion(client, crd_name, conversion, field_manager).await)
}

async fn patch_conversion(
    client: &Client,
    crd_name: &str,
    conversion: Value,
    field_manager: &str,
) -> Result<(), InstallError> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let patch = json!({ "spec": { "conversion": conversion } });
    let params = PatchParams {
        field_manager: Some(field_manager.to_owned()),
        ..PatchParams::default()
    };
    api.patch(crd_name, &params, &Patch::Merge(&patch))
        .await
        .map_err(kube_error(format!(
            "setting the conversion of CRD {crd_name}"
        )))?;
    Ok(())
}

/// A Service the webhooks are called through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceRef {
    /// Its name.
    pub name: String,
    /// Its namespace.
    pub namespace: String,
}

impl ServiceRef {
    fn matches(&self, client_config: &Value) -> bool {
        let service = &client_config["service"];
        service["name"] == self.name.as_str() && service["namespace"] == self.namespace.as_str()
    }
}

/// Sets `caBundle` to `ca_pem` in every webhook of every Mutating/ValidatingWebhookConfiguration
/// and every CRD conversion that calls `service`. Returns how many objects it changed.
pub async fn inject_ca_bundle(
    client: &Client,
    service: &ServiceRef,
    ca_pem: &str,
) -> Result<usize, InstallError> {
    let bundle = ca_bundle(ca_pem);
    let mut changed = 0;
    changed += inject_into::<MutatingWebhookConfiguration>(client, service, &bundle).await?;
    changed += inject_into::<ValidatingWebhookConfiguration>(client, service, &bundle).await?;

    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in crds
        .list(&ListParams::default())
        .await
        .map_err(kube_error("listing CRDs"))?
    {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let mut value = serde_json::to_value(&crd).expect("a CRD serializes");
        let config = &mut value["spec"]["conversion"]["webhook"]["clientConfig"];
        if !service.matches(config) || config["caBundle"] == bundle {
            continue;
        }
        config["caBundle"] = bundle.clone();
        let crd: CustomResourceDefinition =
            serde_json::from_value(value).expect("a CRD deserializes");
        crds.replace(&name, &PostParams::default(), &crd)
            .await
            .map_err(kube_error(format!("writing the caBundle of CRD {name}")))?;
        changed += 1;
    }
    Ok(changed)
}

async fn inject_into<K>(
    client: &Client,
    service: &ServiceRef,
    bundle: &Value,
) -> Result<usize, InstallError>
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::ClusterResourceScope>
        + Clone
        + std::fmt::Debug
        + serde::Serialize
        + serde::de::DeserializeOwned,
{
    let api: Api<K> = Api::all(client.clone());
    let kind = K::kind(&());
    let mut changed = 0;
    for object in api
        .list(&ListParams::default())
        .await
        .map_err(kube_error(format!("listing {kind}s")))?
    {
        let name = object.meta().name.clone().unwrap_or_default();
        let mut value = serde_json::to_value(&object).expect("a configuration serializes");
        let mut touched = false;
        for webhook in value["webhooks"].as_array_mut().into_iter().flatten() {
            let config = &mut webhook["clientConfig"];
            if service.matches(config) && config["caBundle"] != *bundle {
                config["caBundle"] = bundle.clone();
                touched = true;
            }
        }
        if !touched {
            continue;
        }
        // A replace carries the resourceVersion read: a concurrent change makes it fail
        // (409), and the next check tries again.
        let object: K = serde_json::from_value(value).expect("a configuration deserializes");
        api.replace(&name, &PostParams::default(), &object)
            .await
            .map_err(kube_error(format!("writing the caBundle of {kind} {name}")))?;
        changed += 1;
    }
    Ok(changed)
}
