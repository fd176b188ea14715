//! Webhooks: admission (defaulting, validation) and conversion, served by the manager over
//! HTTPS, like controller-runtime's webhook server.
//!
//! An operator implements [`Defaulter`], [`Validator`] or [`Spoke`] for its
//! kinds, lists them as [`Webhook`]s in a [`Webhooks`] and hands that to
//! [`Manager::webhooks`](crate::manager::Manager::webhooks). Every replica serves them on
//! `--webhook-bind-address` (default `:9443`):
//!
//! - a defaulter at `/mutate-<group with dashes>-<version>-<kind>`, a validator at
//!   `/validate-...` (kubebuilder's paths; [`Webhook::at_path`] changes one);
//! - every conversion at `/convert`, as kubebuilder's CRD patches expect.
//!
//! Certificates ([`WebhookArgs`]): by default `tls.crt` and `tls.key` from
//! `--webhook-cert-dir` (a Secret cert-manager writes, mounted there), reloaded when they
//! change. `--webhook-cert-mode self-managed` makes and rotates them itself, in a Secret, and
//! keeps the `caBundle` of its webhook configurations and CRDs current.
//! `--webhook-local-url https://host:port` runs the manager outside the cluster: it makes a
//! CA and a certificate for `host`, and points the cluster's webhook configurations and CRD
//! conversions at itself until it stops, or, if it dies, until its guard takes them back.
//!
//! Submodules: [`admission`] (the defaulter and validator traits, requests and rejections) and
//! [`conversion`] (hub and spokes); their items are re-exported here.

pub mod admission;
pub mod conversion;
pub(crate) mod guard;
// Plumbing the manager runs from `WebhookArgs` and `Manager::webhooks`. 0.1.0 made these
// modules public: they stay reachable at those paths for code written against it, hidden from
// the docs; what an operator needs of them is re-exported here.
#[doc(hidden)]
pub mod install;
#[doc(hidden)]
pub mod local;
#[doc(hidden)]
pub mod metrics;
#[doc(hidden)]
pub mod self_managed;
#[doc(hidden)]
pub mod server;
pub(crate) mod setup;

/// 0.1.0's path of the served certificate and its reloading, now the crate's private `tls`
/// (shared with the metrics endpoint): kept for code written against 0.1.0.
#[doc(hidden)]
pub mod tls {
    pub use crate::tls::{CertError, CertFiles, CertStore, certs, watch_files};
}
/// 0.1.0's path of making certificates, now private: kept for code written against 0.1.0.
#[doc(hidden)]
pub mod certs {
    pub use crate::tls::certs::{
        CertificateAuthority, CertsError, ServingCert, needs_renewal, now,
    };
}

use std::path::PathBuf;
use std::time::Duration;

use kube::Resource;
use kube::core::DynamicObject;
use kube::core::admission::AdmissionReview;
use kube::core::conversion::ConversionReview;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

#[allow(deprecated)]
pub use admission::{CustomDefaulter, CustomValidator};
pub use admission::{
    Defaulter, FieldError, FieldErrorType, Rejection, Request, Validator, Warnings,
};
pub use conversion::{ConversionError, Spoke, round_trip, via_json};
pub use setup::StartError;

use admission::Handler;
use conversion::{Conversions, SpokeEntry};

/// Default of `--webhook-cert-dir`, controller-runtime's.
pub const DEFAULT_CERT_DIR: &str = "/tmp/k8s-webhook-server/serving-certs";

/// Where every conversion is served.
pub const CONVERSION_PATH: &str = "/convert";

/// The webhook server's flags, named like controller-runtime's options; part of
/// [`ManagerArgs`](crate::manager::ManagerArgs).
#[derive(Clone, Debug, clap::Args)]
pub struct WebhookArgs {
    /// Address of the webhook server (HTTPS); `0` disables it.
    #[arg(long, default_value = ":9443")]
    pub webhook_bind_address: String,

    /// Folder holding the serving certificate and key (cert-manager's Secret, mounted).
    #[arg(long, default_value = DEFAULT_CERT_DIR)]
    pub webhook_cert_dir: PathBuf,

    /// File name of the serving certificate (PEM) in `--webhook-cert-dir`.
    #[arg(long, default_value = "tls.crt")]
    pub webhook_cert_name: String,

    /// File name of the serving key (PEM) in `--webhook-cert-dir`.
    #[arg(long, default_value = "tls.key")]
    pub webhook_key_name: String,

    /// Where the serving certificate comes from: `files` in `--webhook-cert-dir` (cert-manager),
    /// or `self-managed`: made and rotated by the manager in a Secret, with the `caBundle` of
    /// its webhook configurations and CRDs kept current (for clusters without cert-manager).
    #[arg(long, value_enum, default_value_t = CertMode::Files)]
    pub webhook_cert_mode: CertMode,

    /// Self-managed mode: the Service in front of the webhook server (default:
    /// `<operator name>-webhook-service`).
    #[arg(long)]
    pub webhook_service_name: Option<String>,

    /// Self-managed mode: the namespace of that Service and of the Secret [default: the pod's
    /// namespace, else the kubeconfig's].
    #[arg(long)]
    pub webhook_service_namespace: Option<String>,

    /// Self-managed mode: the Secret holding the CA and the serving certificate (default:
    /// `<operator name>-webhook-server-cert`).
    #[arg(long)]
    pub webhook_secret_name: Option<String>,

    /// Self-managed mode: how often the certificate and the `caBundle`s are checked (and
    /// renewed when a third of their lifetime is left).
    #[arg(long, default_value = "10m", value_parser = crate::duration::parse_duration)]
    pub webhook_cert_check_interval: Duration,

    /// Local development against any cluster: serve at this URL (`https://<host>:<port>`,
    /// reachable from the API server) with a certificate made for `<host>`, and point the
    /// cluster's webhook configurations and CRD conversions at it until the manager stops.
    /// `make run` sets it (`WEBHOOK_LOCAL_URL`) for projects with webhooks.
    #[arg(long, value_name = "URL", env = "WEBHOOK_LOCAL_URL")]
    pub webhook_local_url: Option<String>,
}

/// Where the serving certificate comes from (`--webhook-cert-mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CertMode {
    /// `tls.crt` and `tls.key` in `--webhook-cert-dir`, reloaded when they change.
    Files,
    /// Made and rotated by the manager, in a Secret.
    SelfManaged,
}

enum Endpoint {
    Admission { path: String, handler: Handler },
    Conversion(SpokeEntry),
}

/// One webhook: a kind's defaulter or validator, or one spoke of a kind's conversion.
pub struct Webhook {
    endpoint: Endpoint,
}

impl std::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.endpoint {
            Endpoint::Admission { path, .. } => write!(f, "Webhook({path})"),
            Endpoint::Conversion(spoke) => write!(f, "Webhook({CONVERSION_PATH}: {spoke:?})"),
        }
    }
}

impl Webhook {
    /// The defaulting (mutating) webhook of kind `K`, at `/mutate-<group>-<version>-<kind>`.
    pub fn defaulting<K>(defaulter: impl Defaulter<K>) -> Self
    where
        K: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + 'static,
    {
        Self {
            endpoint: Endpoint::Admission {
                path: default_path::<K>("mutate"),
                handler: admission::defaulting_handler::<K, _>(defaulter),
            },
        }
    }

    /// The validating webhook of kind `K`, at `/validate-<group>-<version>-<kind>`.
    pub fn validating<K>(validator: impl Validator<K>) -> Self
    where
        K: Resource<DynamicType = ()> + DeserializeOwned + Send + Sync + 'static,
    {
        Self {
            endpoint: Endpoint::Admission {
                path: default_path::<K>("validate"),
                handler: admission::validating_handler::<K, _>(validator),
            },
        }
    }

    /// The conversion between the spoke `S` and its hub `H` (the kind's storage version),
    /// served at `/convert` with every other conversion.
    pub fn conversion<H, S>() -> Self
    where
        H: Resource<DynamicType = ()> + Serialize + DeserializeOwned,
        S: Spoke<H> + Resource<DynamicType = ()> + Serialize + DeserializeOwned,
    {
        Self {
            endpoint: Endpoint::Conversion(SpokeEntry::new::<H, S>()),
        }
    }

    /// Serves an admission webhook at `path` instead (kubebuilder's `--defaulting-path`);
    /// it must match the `path=` of its `+kubebuilder:webhook` marker.
    pub fn at_path(mut self, path: impl Into<String>) -> Self {
        if let Endpoint::Admission { path: current, .. } = &mut self.endpoint {
            *current = path.into();
        }
        self
    }

    /// Where it is served.
    pub fn path(&self) -> &str {
        match &self.endpoint {
            Endpoint::Admission { path, .. } => path,
            Endpoint::Conversion(_) => CONVERSION_PATH,
        }
    }

    /// Answers one AdmissionReview or ConversionReview as the server would: for unit tests
    /// of a webhook (a review in, the review with its response out).
    pub async fn review(&self, review: Value) -> Value {
        match &self.endpoint {
            Endpoint::Admission { handler, .. } => answer_admission(handler, review).await,
            Endpoint::Conversion(spoke) => {
                let mut conversions = Conversions::default();
                conversions
                    .add(spoke.clone())
                    .expect("one spoke is always consistent");
                answer_conversion(&conversions, review)
            }
        }
    }
}

/// kubebuilder's path: `/<prefix>-<group with dots as dashes>-<version>-<lowercase kind>`.
pub fn default_path<K: Resource<DynamicType = ()>>(prefix: &str) -> String {
    format!(
        "/{prefix}-{}-{}-{}",
        K::group(&()).replace('.', "-"),
        K::version(&()),
        K::kind(&()).to_lowercase()
    )
}

/// Answers an AdmissionReview (as JSON); a body that is not one gets an invalid response.
pub(crate) async fn answer_admission(handler: &Handler, review: Value) -> Value {
    let response = match serde_json::from_value::<AdmissionReview<DynamicObject>>(review) {
        Ok(review) => match review.try_into() {
            Ok(request) => handler(request).await,
            Err(err) => kube::core::admission::AdmissionResponse::invalid(err),
        },
        Err(err) => kube::core::admission::AdmissionResponse::invalid(format!(
            "the body is not an AdmissionReview: {err}"
        )),
    };
    serde_json::to_value(response.into_review()).expect("a review serializes")
}

/// Answers a ConversionReview (as JSON).
pub(crate) fn answer_conversion(conversions: &Conversions, review: Value) -> Value {
    let review = match serde_json::from_value::<ConversionReview>(review) {
        Ok(review) => conversions.review(review),
        Err(err) => {
            kube::core::conversion::ConversionResponse::invalid(kube::core::Status::failure(
                &format!("the body is not a ConversionReview: {err}"),
                "BadRequest",
            ))
            .into_review()
        }
    };
    serde_json::to_value(review).expect("a review serializes")
}

/// Every webhook of an operator, with the configurations `operator-rs generate webhooks`
/// wrote from its markers (`config/webhook/manifests.yaml`, for `--webhook-local-url`).
#[derive(Debug, Default)]
pub struct Webhooks {
    webhooks: Vec<Webhook>,
    configurations: String,
}

impl Webhooks {
    /// No webhooks yet; `configurations` is the text of `config/webhook/manifests.yaml`
    /// (`include_str!` it).
    pub fn new(configurations: impl Into<String>) -> Self {
        Self {
            webhooks: Vec::new(),
            configurations: configurations.into(),
        }
    }

    /// Adds `webhooks`.
    pub fn with(mut self, webhooks: impl IntoIterator<Item = Webhook>) -> Self {
        self.webhooks.extend(webhooks);
        self
    }

    /// The webhooks, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = &Webhook> {
        self.webhooks.iter()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.webhooks.is_empty()
    }

    /// The text of the webhook configurations.
    pub fn configurations(&self) -> &str {
        &self.configurations
    }
}
