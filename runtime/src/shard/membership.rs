//! Membership on Leases: each replica holds its own `coordination.k8s.io/v1` Lease in the
//! manager's namespace (`<operator>-shard-<identity>`, labelled with the operator), renewed
//! like the leader Lease and deleted on a graceful stop; the members are the replicas whose
//! Lease is live (renewed within its duration). Each Lease publishes the ring its holder
//! works in (annotations), which [`super::handover`] reads.
//!
//! RBAC: `coordination.k8s.io` `leases`: get, list, create, patch, delete (in that namespace).

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};

use super::handover::Peer;
use super::ring::Ring;

/// The label naming the operator whose shard a Lease is.
pub const OPERATOR_LABEL: &str = "shard.operator-rs.io/operator";
/// The annotation of the ring a replica works in: its members, comma-separated.
pub const RING_ANNOTATION: &str = "shard.operator-rs.io/ring";
/// The annotation of that ring's generation (hex), for people and the tests' audit.
pub const GENERATION_ANNOTATION: &str = "shard.operator-rs.io/generation";

/// Why a Lease request failed: the API server's answer, or none in time.
#[derive(Debug)]
pub(crate) enum LeaseError {
    Api(kube::Error),
    Timeout(Duration),
}

impl std::fmt::Display for LeaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Api(err) => write!(f, "{err}"),
            Self::Timeout(after) => write!(f, "no answer within {after:?}"),
        }
    }
}

/// `request`, failed if it takes longer than `limit`.
async fn bounded<T>(
    limit: Duration,
    request: impl Future<Output = kube::Result<T>>,
) -> Result<T, LeaseError> {
    match tokio::time::timeout(limit, request).await {
        Ok(answer) => answer.map_err(LeaseError::Api),
        Err(_) => Err(LeaseError::Timeout(limit)),
    }
}

/// One replica's Lease, and the way to read the others'.
pub(crate) struct MemberLease {
    api: Api<Lease>,
    operator: String,
    pub(crate) name: String,
    identity: String,
    duration: Duration,
    vnodes: u16,
}

/// A name of at most 63 characters made of `[a-z0-9-]`, starting and ending alphanumeric.
fn dns_label(text: &str) -> String {
    let mut out: String = (text.chars())
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    out.truncate(63);
    out.trim_matches('-').to_owned()
}

impl MemberLease {
    pub(crate) fn new(
        api: Api<Lease>,
        operator: &str,
        identity: &str,
        duration: Duration,
        vnodes: u16,
    ) -> Self {
        let mut name = format!("{}-shard-{}", dns_label(operator), dns_label(identity));
        name.truncate(253);
        Self {
            api,
            operator: dns_label(operator),
            name: name.trim_end_matches('-').to_owned(),
            identity: identity.to_owned(),
            duration,
            vnodes,
        }
    }

    /// How long a request may take: a quarter of the Lease's duration (at least 1s), so a
    /// replica whose renewals hang notices it well before its Lease expires.
    pub(crate) fn request_timeout(&self) -> Duration {
        (self.duration / 4).max(Duration::from_secs(1))
    }

    /// Creates or renews the Lease (server-side apply), publishing `ring` if given.
    pub(crate) async fn renew(&self, ring: Option<&Ring>) -> Result<Lease, LeaseError> {
        let mut annotations = serde_json::Map::new();
        if let Some(ring) = ring {
            annotations.insert(RING_ANNOTATION.into(), ring.members().join(",").into());
            annotations.insert(
                GENERATION_ANNOTATION.into(),
                format!("{:016x}", ring.generation()).into(),
            );
        }
        let lease = serde_json::json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self.name,
                "labels": { OPERATOR_LABEL: self.operator },
                "annotations": annotations,
            },
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": self.duration.as_secs().max(1),
                "renewTime": MicroTime(Timestamp::now()),
            },
        });
        let params = PatchParams::apply(&format!("shard-{}", self.operator)).force();
        let patch = Patch::Apply(lease);
        let request = self.api.patch(&self.name, &params, &patch);
        bounded(self.request_timeout(), request).await
    }

    /// The live members (this replica's Lease included once renewed), each with the ring it
    /// published; read from the API server itself (a quorum read).
    pub(crate) async fn members(&self) -> kube::Result<Vec<Peer>> {
        let selector = format!("{OPERATOR_LABEL}={}", self.operator);
        let leases = self
            .api
            .list(&ListParams::default().labels(&selector))
            .await?;
        let now = Timestamp::now();
        Ok((leases.items.iter())
            .filter(|lease| is_live(lease, now))
            .filter_map(|lease| {
                let spec = lease.spec.as_ref()?;
                let identity = spec.holder_identity.clone()?;
                let ring = (lease.metadata.annotations.as_ref())
                    .and_then(|a| a.get(RING_ANNOTATION))
                    .map(|members| {
                        let members: Vec<&str> = members.split(',').collect();
                        Ring::new(&members, self.vnodes)
                    });
                Some(Peer {
                    identity,
                    published: ring,
                })
            })
            .collect())
    }

    /// Deletes the Lease: the others see this replica gone at once.
    pub(crate) async fn release(&self) -> kube::Result<()> {
        self.api
            .delete(&self.name, &DeleteParams::default())
            .await?;
        Ok(())
    }
}

/// Whether `lease` was renewed within its duration, at `now`.
pub(crate) fn is_live(lease: &Lease, now: Timestamp) -> bool {
    let Some(spec) = &lease.spec else {
        return false;
    };
    let (Some(renewed), Some(seconds)) = (&spec.renew_time, spec.lease_duration_seconds) else {
        return false;
    };
    let expiry = renewed.0 + jiff_seconds(seconds);
    spec.holder_identity.is_some() && expiry > now
}

fn jiff_seconds(seconds: i32) -> k8s_openapi::jiff::SignedDuration {
    k8s_openapi::jiff::SignedDuration::from_secs(i64::from(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::coordination::v1::LeaseSpec;

    fn lease(renewed_ago: i64, duration: i32, holder: Option<&str>) -> Lease {
        let now = Timestamp::now();
        Lease {
            spec: Some(LeaseSpec {
                holder_identity: holder.map(str::to_owned),
                lease_duration_seconds: Some(duration),
                renew_time: Some(MicroTime(now - jiff_seconds(renewed_ago as i32))),
                ..LeaseSpec::default()
            }),
            ..Lease::default()
        }
    }

    #[test]
    fn a_lease_is_live_within_its_duration_and_with_a_holder() {
        let now = Timestamp::now();
        assert!(is_live(&lease(3, 15, Some("a")), now));
        assert!(!is_live(&lease(16, 15, Some("a")), now));
        assert!(!is_live(&lease(1, 15, None), now), "released");
        assert!(!is_live(&Lease::default(), now));
    }

    #[test]
    fn lease_names_are_dns_names_of_operator_and_identity() {
        assert_eq!(dns_label("My_Host_42"), "my-host-42");
        assert_eq!(dns_label("_x_"), "x");
        assert_eq!(dns_label(&"a".repeat(80)).len(), 63);
    }
}
