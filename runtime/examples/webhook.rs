//! Webhooks: a defaulter that labels every ConfigMap it is called for, and a validator that
//! refuses ConfigMaps holding a key `password`, served by the manager over HTTPS.
//!
//! The API server calls them once webhook configurations name them: in a project,
//! `operator-rs create webhook` writes those from markers, and `--webhook-local-url
//! https://<host>:9443` (with `Webhooks::new` given them) points the cluster at a manager
//! running outside it. `cargo run -p operator-rs-runtime --example webhook --
//! --leader-elect=false --webhook-cert-dir <dir with tls.crt and tls.key>` serves them at
//! `/mutate--v1-configmap` and `/validate--v1-configmap`.

use clap::Parser;
use k8s_openapi::api::core::v1::ConfigMap;
use operator_rs_runtime::manager::{Manager, ManagerArgs};
use operator_rs_runtime::webhook::{
    self, FieldError, Rejection, Request, Warnings, Webhook, Webhooks,
};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    manager: ManagerArgs,
}

/// Labels every ConfigMap with who saw it.
struct Labeller;

impl webhook::Defaulter<ConfigMap> for Labeller {
    async fn apply_defaults(&self, obj: &mut ConfigMap, _req: &Request) -> Result<(), Rejection> {
        let labels = obj.metadata.labels.get_or_insert_default();
        labels.insert("example.com/seen-by".into(), "webhook-example".into());
        Ok(())
    }
}

/// Refuses a ConfigMap with a `password` key: that belongs in a Secret.
struct NoPasswords;

impl NoPasswords {
    fn check(obj: &ConfigMap) -> Result<Warnings, Rejection> {
        if obj
            .data
            .as_ref()
            .is_some_and(|d| d.contains_key("password"))
        {
            return Err(Rejection::fields([FieldError::forbidden(
                "data.password",
                "a password belongs in a Secret",
            )]));
        }
        Ok(Vec::new())
    }
}

impl webhook::Validator<ConfigMap> for NoPasswords {
    async fn validate_create(
        &self,
        obj: &ConfigMap,
        _req: &Request,
    ) -> Result<Warnings, Rejection> {
        Self::check(obj)
    }

    async fn validate_update(
        &self,
        _old: &ConfigMap,
        new: &ConfigMap,
        _req: &Request,
    ) -> Result<Warnings, Rejection> {
        Self::check(new)
    }

    async fn validate_delete(
        &self,
        _obj: &ConfigMap,
        _req: &Request,
    ) -> Result<Warnings, Rejection> {
        Ok(Vec::new())
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    // No configurations of the operator's own here (a project's `config/webhook/manifests.yaml`).
    let webhooks = Webhooks::new("").with(vec![
        Webhook::defaulting::<ConfigMap>(Labeller),
        Webhook::validating::<ConfigMap>(NoPasswords),
    ]);
    let manager = Manager::new("webhook-example", cli.manager)
        .await?
        .webhooks(webhooks);
    Ok(manager.run(Vec::new()).await?)
}
