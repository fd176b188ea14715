//! The Leases of one namespace on the real API server, as the leader election tests read and
//! write them.

use std::time::{Duration, SystemTime};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::rbac::v1::RoleBinding;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use serde_json::json;

/// The Leases of `namespace`, through an admin client.
pub struct Leases {
    api: Api<Lease>,
    client: Client,
    namespace: String,
}

impl Leases {
    pub fn new(client: Client, namespace: &str) -> Self {
        Self {
            api: Api::namespaced(client.clone(), namespace),
            client,
            namespace: namespace.into(),
        }
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The Lease `name`, if it exists.
    pub async fn get(&self, name: &str) -> Option<Lease> {
        self.api.get_opt(name).await.expect("reading a Lease")
    }

    /// The names of every Lease of the namespace.
    pub async fn names(&self) -> Vec<String> {
        let leases = self
            .api
            .list(&ListParams::default())
            .await
            .expect("listing Leases");
        leases
            .items
            .into_iter()
            .filter_map(|l| l.metadata.name)
            .collect()
    }

    /// The holder of the Lease, if it exists and has one.
    pub async fn holder(&self, name: &str) -> Option<String> {
        self.get(name).await?.spec?.holder_identity
    }

    /// When the Lease was last renewed.
    pub async fn renew_time(&self, name: &str) -> Timestamp {
        let spec = self.get(name).await.and_then(|l| l.spec);
        spec.and_then(|s| s.renew_time).expect("a renewed Lease").0
    }

    /// Writes the Lease as another replica would: held by `holder`, last renewed
    /// `renewed_ago`, valid for `duration_seconds`.
    pub async fn put(
        &self,
        name: &str,
        holder: &str,
        renewed_ago: Duration,
        duration_seconds: i32,
    ) {
        let renewed = Timestamp::try_from(SystemTime::now() - renewed_ago).unwrap();
        let transitions = (self.get(name).await)
            .and_then(|l| l.spec?.lease_transitions)
            .unwrap_or(0);
        let patch = json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": name, "namespace": self.namespace},
            "spec": {
                "holderIdentity": holder,
                "acquireTime": MicroTime(renewed),
                "renewTime": MicroTime(renewed),
                "leaseDurationSeconds": duration_seconds,
                "leaseTransitions": transitions + 1,
            },
        });
        let params = PatchParams::apply(&format!("replica-{holder}")).force();
        self.api
            .patch(name, &params, &Patch::Apply(&patch))
            .await
            .expect("writing a Lease");
    }

    /// Deletes the RoleBinding `binding` of the namespace.
    pub async fn revoke(&self, binding: &str) {
        let bindings: Api<RoleBinding> = Api::namespaced(self.client.clone(), &self.namespace);
        bindings
            .delete(binding, &DeleteParams::default())
            .await
            .expect("deleting a RoleBinding");
    }
}
