//! Sharded managers' writes in the API server's audit log: which replica wrote which object in
//! which ring generation, to show that no object was ever written by two replicas of one ring
//! ([`crate::shard`]'s promise), for any operator, whatever its objects hold; and whether the
//! replicas have all published a ring ([`ring_published`]).
//!
//! A replica works in the ring it last published in its shard Lease: it stops on the ranges it
//! loses (its writes to them complete) before it publishes a ring, and starts on the ranges it
//! gains only after. So each write of a replica belongs to the generation of that replica's last
//! Lease patch completed before the write was received: [`ShardWrites::read`] attributes every
//! write so, from the Lease patches and the writes [`audit_policy`] has the API server log.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use k8s_openapi::api::coordination::v1::Lease;
use kube::ResourceExt;
use kube::api::{Api, ListParams};
use serde_json::Value;

use crate::shard::{DEFAULT_VNODES, GENERATION_ANNOTATION, OPERATOR_LABEL, Ring};

/// Whether each replica of `members` (their identities) holds a shard Lease in `leases`'
/// namespace publishing the ring of exactly `members` (default virtual nodes): the ring they
/// all work in once their handovers are done. One read.
pub async fn ring_published(leases: &Api<Lease>, members: &[&str]) -> bool {
    let generation = format!("{:016x}", Ring::new(members, DEFAULT_VNODES).generation());
    let Ok(list) = leases
        .list(&ListParams::default().labels(OPERATOR_LABEL))
        .await
    else {
        return false;
    };
    members.iter().all(|member| {
        list.items.iter().any(|lease| {
            let holder = lease
                .spec
                .as_ref()
                .and_then(|s| s.holder_identity.as_deref());
            holder == Some(member)
                && lease.annotations().get(GENERATION_ANNOTATION) == Some(&generation)
        })
    })
}

/// An audit policy (`kube-apiserver --audit-policy-file`) logging what [`ShardWrites::read`]
/// reads: the bodies of shard Lease patches, the writes (create, patch, update; of the status
/// too) of the resource `resource` of API group `group` (`""`: the core group) with their
/// bodies, and its lists and watches (their URIs: whether they carry a `shardSelector`).
///
/// ```
/// let policy = operator_rs_runtime::testing::shard_audit::audit_policy("", "configmaps");
/// assert!(policy.contains("configmaps/status"));
/// ```
pub fn audit_policy(group: &str, resource: &str) -> String {
    format!(
        r#"apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Request
  resources: [{{group: "coordination.k8s.io", resources: ["leases"]}}]
  verbs: ["patch"]
- level: Request
  resources: [{{group: "{group}", resources: ["{resource}", "{resource}/status"]}}]
  verbs: ["create", "patch", "update"]
- level: Metadata
  resources: [{{group: "{group}", resources: ["{resource}"]}}]
  verbs: ["list", "watch"]
- level: None
"#
    )
}

/// One write of a replica, as the audit log holds it.
#[derive(Clone, Debug)]
pub struct Write {
    /// `namespace/name` (`name` for a cluster-scoped object).
    pub object: String,
    /// The user name of the replica that wrote it.
    pub replica: String,
    /// The ring generation it belongs to (`none`: before the replica published one).
    pub generation: String,
    /// The audit event (its `requestObject` holds the body).
    pub event: Value,
}

/// The replicas' successful writes of one resource, each attributed to a ring generation.
#[derive(Clone, Debug, Default)]
pub struct ShardWrites {
    /// Every write, in the order the API server received them.
    pub writes: Vec<Write>,
}

impl ShardWrites {
    /// The writes of the resource `resource` (plural, its subresources included) by users
    /// whose names start with `replicas` (`system:serviceaccount:<namespace>:` when each replica
    /// runs under a ServiceAccount of its own), read from the audit log at `log` written under
    /// [`audit_policy`].
    pub fn read(log: &Path, resource: &str, replicas: &str) -> std::io::Result<Self> {
        let text = std::fs::read_to_string(log)?;
        let mut events: Vec<Value> = (text.lines())
            .filter_map(|line| serde_json::from_str(line).ok())
            .filter(|e: &Value| e["stage"] == "ResponseComplete")
            .filter(|e| (e["user"]["username"].as_str()).is_some_and(|u| u.starts_with(replicas)))
            .filter(|e| (200..300).contains(&e["responseStatus"]["code"].as_u64().unwrap_or(0)))
            .collect();
        let at = |e: &Value, key: &str| e[key].as_str().unwrap_or_default().to_owned();
        // Lease patches at their completion, writes at their receipt (RFC 3339 with
        // microseconds: ordered as text); a Lease patch before a write of the same instant.
        events.sort_by_key(|e| {
            let lease = e["objectRef"]["resource"] == "leases";
            let time = at(
                e,
                if lease {
                    "stageTimestamp"
                } else {
                    "requestReceivedTimestamp"
                },
            );
            (time, !lease)
        });
        let mut published: BTreeMap<String, String> = BTreeMap::new();
        let mut writes = Vec::new();
        for event in events {
            let replica = event["user"]["username"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let object = &event["objectRef"];
            let verb = event["verb"].as_str().unwrap_or_default();
            if object["resource"] == "leases" {
                let body = &event["requestObject"]["metadata"];
                if body["labels"][OPERATOR_LABEL].is_string() {
                    let generation = body["annotations"][GENERATION_ANNOTATION].as_str();
                    published.insert(replica, generation.unwrap_or("none").to_owned());
                }
            } else if object["resource"] == resource
                && matches!(verb, "create" | "patch" | "update")
            {
                let name = object["name"].as_str().unwrap_or_default();
                let object = match object["namespace"].as_str() {
                    Some(namespace) => format!("{namespace}/{name}"),
                    None => name.to_owned(),
                };
                let generation = published.get(&replica).cloned();
                writes.push(Write {
                    object,
                    replica,
                    generation: generation.unwrap_or_else(|| "none".into()),
                    event,
                });
            }
        }
        Ok(Self { writes })
    }

    /// The replicas that wrote each object in each generation.
    pub fn writers(&self) -> BTreeMap<(&str, &str), BTreeSet<&str>> {
        let mut writers: BTreeMap<(&str, &str), BTreeSet<&str>> = BTreeMap::new();
        for w in &self.writes {
            writers
                .entry((w.object.as_str(), w.generation.as_str()))
                .or_default()
                .insert(w.replica.as_str());
        }
        writers
    }

    /// Each object written by two replicas or more in one generation, said in a line: none when
    /// the sharding held.
    pub fn overlaps(&self) -> Vec<String> {
        (self.writers().into_iter())
            .filter(|(_, who)| who.len() > 1)
            .map(|((object, generation), who)| {
                format!("{object} written in generation {generation} by {who:?}")
            })
            .collect()
    }

    /// The generations written in.
    pub fn generations(&self) -> BTreeSet<&str> {
        self.writes.iter().map(|w| w.generation.as_str()).collect()
    }

    /// The objects each replica wrote in `generation`.
    pub fn objects_by_replica(&self, generation: &str) -> BTreeMap<&str, BTreeSet<&str>> {
        let mut by: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for w in self.writes.iter().filter(|w| w.generation == generation) {
            by.entry(w.replica.as_str())
                .or_default()
                .insert(w.object.as_str());
        }
        by
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(user: &str, at: &str, generation: Option<&str>) -> String {
        let annotations = match generation {
            Some(g) => serde_json::json!({ GENERATION_ANNOTATION: g }),
            None => serde_json::json!({}),
        };
        serde_json::json!({
            "stage": "ResponseComplete", "verb": "patch",
            "user": {"username": user}, "responseStatus": {"code": 200},
            "objectRef": {"resource": "leases", "namespace": "n", "name": "x"},
            "requestReceivedTimestamp": at, "stageTimestamp": at,
            "requestObject": {"metadata": {"labels": {OPERATOR_LABEL: "op"}, "annotations": annotations}},
        })
        .to_string()
    }

    fn write(user: &str, at: &str, name: &str) -> String {
        serde_json::json!({
            "stage": "ResponseComplete", "verb": "patch",
            "user": {"username": user}, "responseStatus": {"code": 200},
            "objectRef": {"resource": "things", "namespace": "n", "name": name},
            "requestReceivedTimestamp": at, "stageTimestamp": at,
        })
        .to_string()
    }

    #[test]
    fn writes_belong_to_the_writers_last_published_ring() {
        let log = [
            lease("sa:a", "2026-01-01T00:00:01.000000Z", Some("g1")),
            write("sa:a", "2026-01-01T00:00:02.000000Z", "x"),
            // b joins: a hands x over (publishes g2 first), then b writes it.
            lease("sa:a", "2026-01-01T00:00:03.000000Z", Some("g2")),
            lease("sa:b", "2026-01-01T00:00:03.500000Z", Some("g2")),
            write("sa:b", "2026-01-01T00:00:04.000000Z", "x"),
            write("other", "2026-01-01T00:00:04.000000Z", "x"),
            // A write not of the replicas' resource.
            write("sa:a", "2026-01-01T00:00:04.000000Z", "y").replace("things", "others"),
        ]
        .join("\n");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        std::fs::write(&path, &log).unwrap();
        let writes = ShardWrites::read(&path, "things", "sa:").unwrap();
        assert_eq!(writes.writes.len(), 2, "{writes:?}");
        assert!(writes.overlaps().is_empty(), "{:?}", writes.overlaps());
        assert_eq!(writes.generations(), BTreeSet::from(["g1", "g2"]));
        // a still writing x after it published g2: two writers of x in g2.
        let overlapping = format!(
            "{log}\n{}",
            write("sa:a", "2026-01-01T00:00:05.000000Z", "x")
        );
        std::fs::write(&path, overlapping).unwrap();
        let writes = ShardWrites::read(&path, "things", "sa:").unwrap();
        assert_eq!(
            writes.overlaps(),
            ["n/x written in generation g2 by {\"sa:a\", \"sa:b\"}"]
        );
    }
}
