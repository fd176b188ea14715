//! Leader election on real Leases (envtest): acquire, renew, lose, hand over.

use crate::support;

use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Client;
use operator_rs_runtime::manager::{LeaderConfig, LeaderElector, LostLeadership, Metrics};
use operator_rs_runtime::skip_unless_available;
use operator_rs_runtime::testing::envtest::Envtest;

use support::leases::Leases;
use support::still_pending_after;

const LEASE: &str = "test-lease";
/// Short timings so the tests run in seconds: renew every 1s, expire after 2s.
const DURATION: Duration = Duration::from_secs(2);

fn config(identity: &str, namespace: &str) -> LeaderConfig {
    LeaderConfig {
        lease_name: LEASE.into(),
        namespace: namespace.into(),
        identity: identity.into(),
        lease_duration: DURATION,
        renew_deadline: Duration::from_secs(1),
    }
}

/// The shared control plane, a namespace of the test's own, and its Leases.
async fn setup(prefix: &str) -> anyhow::Result<(&'static Envtest, Leases)> {
    let env = Envtest::shared()?;
    let namespace = env.create_namespace(prefix).await?;
    Ok((env, Leases::new(env.client()?, &namespace)))
}

async fn elector(client: Client, leases: &Leases, identity: &str) -> LeaderElector {
    let status = Metrics::new().leader_status(LEASE);
    LeaderElector::new(client, config(identity, leases.namespace()), status)
        .await
        .unwrap()
}

async fn acquired(elector: &LeaderElector) {
    tokio::time::timeout(Duration::from_secs(5), elector.acquire())
        .await
        .expect("acquired");
}

#[tokio::test]
async fn acquires_a_missing_lease_and_keeps_renewing_it() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, leases) = setup("acquire").await?;
    let a = elector(env.client()?, &leases, "a").await;
    let created = leases
        .get(LEASE)
        .await
        .expect("the Lease is created on start");
    assert_eq!(created.spec.unwrap_or_default().holder_identity, None);
    assert!(!a.is_leader());

    acquired(&a).await;
    assert!(a.is_leader());
    let spec = leases.get(LEASE).await.unwrap().spec.unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some("a"));
    assert_eq!(spec.lease_duration_seconds, Some(2));
    assert_eq!(spec.lease_transitions, Some(1));
    let first_renewal = leases.renew_time(LEASE).await;

    // Holding for longer than the lease duration: renewals keep it ours.
    assert!(
        still_pending_after(Duration::from_millis(2500), a.hold()).await,
        "lost the lease"
    );
    assert!(
        leases.renew_time(LEASE).await > first_renewal,
        "the lease was not renewed"
    );
    assert_eq!(leases.holder(LEASE).await.as_deref(), Some("a"));
    assert!(a.is_leader());

    // The API server's record of who wrote what: the holder was taken by server-side apply,
    // under a field manager derived from the identity.
    let lease = leases.get(LEASE).await.unwrap();
    let managers: Vec<(String, String)> = (lease.metadata.managed_fields.iter().flatten())
        .map(|m| {
            let manager = m.manager.clone().unwrap_or_default();
            (manager, m.operation.clone().unwrap_or_default())
        })
        .collect();
    assert!(
        managers.contains(&("kube-lease-manager-a".into(), "Apply".into())),
        "acquired without server-side apply as kube-lease-manager-a: {managers:?}"
    );
    let holder_owner = (lease.metadata.managed_fields.iter().flatten())
        .find(|m| {
            let fields = m
                .fields_v1
                .as_ref()
                .map(|f| f.0.to_string())
                .unwrap_or_default();
            fields.contains("f:holderIdentity")
        })
        .and_then(|m| m.manager.clone());
    assert_eq!(holder_owner.as_deref(), Some("kube-lease-manager-a"));
    Ok(())
}

#[tokio::test]
async fn a_leader_that_finds_another_holder_steps_down() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, leases) = setup("takeover").await?;
    let a = elector(env.client()?, &leases, "a").await;
    acquired(&a).await;

    // Another replica took the lease (e.g. this one was paused past its expiry).
    leases.put(LEASE, "b", Duration::ZERO, 2).await;
    let lost = tokio::time::timeout(Duration::from_secs(3), a.hold())
        .await
        .expect("noticed the takeover");
    assert!(matches!(lost, LostLeadership::TakenOver), "{lost}");
    assert!(!a.is_leader());
    assert_eq!(
        leases.holder(LEASE).await.as_deref(),
        Some("b"),
        "the new holder is left alone"
    );
    Ok(())
}

/// What a manager's `config/rbac` grants on Leases.
const LEASE_RBAC: &str = "apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: leader-election-role}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, create, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: leader-election-rolebinding}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: leader-election-role}
subjects: []
";

#[tokio::test]
async fn a_leader_whose_renewal_fails_steps_down_before_its_lease_expires() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, leases) = setup("failing").await?;
    // The leader runs with exactly the RBAC a manager ships...
    let replica = env
        .service_account(leases.namespace(), "replica", LEASE_RBAC)
        .await?;
    let a = elector(replica.client()?, &leases, "a").await;
    acquired(&a).await;
    let last_renewal = leases.renew_time(LEASE).await;

    // ... until it is revoked: every renewal now fails with 403.
    let binding = format!("leader-election-rolebinding-{}-replica", leases.namespace());
    leases.revoke(&binding).await;
    let lost = tokio::time::timeout(Duration::from_secs(3), a.hold())
        .await
        .expect("noticed the failure");
    assert!(matches!(lost, LostLeadership::RenewFailed(_)), "{lost}");
    assert!(!a.is_leader());
    // Stepping down must happen before a standby may take the lease over.
    let stepped_down_after = Timestamp::now().duration_since(last_renewal);
    assert!(
        stepped_down_after < SignedDuration::try_from(DURATION)?,
        "stepped down {stepped_down_after:?} after the last renewal"
    );
    Ok(())
}

#[tokio::test]
async fn a_standby_takes_over_when_the_leader_stops_renewing() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, leases) = setup("standby").await?;
    let a = elector(env.client()?, &leases, "a").await;
    let b = elector(env.client()?, &leases, "b").await;
    acquired(&a).await;

    // While a renews, b waits.
    {
        let hold_a = a.hold();
        tokio::pin!(hold_a);
        tokio::select! {
            _ = &mut hold_a => panic!("a lost the lease"),
            _ = b.acquire() => panic!("b acquired a held lease"),
            _ = tokio::time::sleep(Duration::from_millis(2500)) => {}
        }
    }
    assert_eq!(leases.holder(LEASE).await.as_deref(), Some("a"));
    let a_last_renewal = leases.renew_time(LEASE).await;

    // a dies (nobody polls it any more): b takes over once a's lease expired.
    tokio::time::timeout(Duration::from_secs(6), b.acquire())
        .await
        .expect("b took over");
    assert!(b.is_leader());
    assert_eq!(leases.holder(LEASE).await.as_deref(), Some("b"));
    let waited = Timestamp::now().duration_since(a_last_renewal);
    assert!(
        waited >= SignedDuration::from_millis(1900),
        "b took over {waited:?} after a's last renewal, before the lease expired"
    );
    let transitions = leases
        .get(LEASE)
        .await
        .unwrap()
        .spec
        .unwrap()
        .lease_transitions;
    assert_eq!(transitions, Some(2));
    Ok(())
}

#[tokio::test]
async fn a_released_lease_is_handed_over() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, leases) = setup("release").await?;
    let a = elector(env.client()?, &leases, "a").await;
    acquired(&a).await;
    let b = elector(env.client()?, &leases, "b").await;
    assert!(still_pending_after(Duration::from_millis(300), b.acquire()).await);

    a.release().await.unwrap();
    assert!(!a.is_leader());
    let spec = leases.get(LEASE).await.unwrap().spec.unwrap_or_default();
    assert_eq!(spec.holder_identity, None, "release clears the holder");

    tokio::time::timeout(Duration::from_secs(4), b.acquire())
        .await
        .expect("b acquired");
    assert_eq!(leases.holder(LEASE).await.as_deref(), Some("b"));
    Ok(())
}
