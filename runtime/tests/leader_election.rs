//! Leader election against a fake Lease API: acquire, renew, lose, hand over.

mod support;

use std::time::{Duration, Instant};

use k8s_openapi::jiff::{SignedDuration, Timestamp};

use operator_rs_runtime::manager::LeaderConfig;
use operator_rs_runtime::manager::LeaderElector;
use operator_rs_runtime::manager::LostLeadership;
use operator_rs_runtime::manager::Metrics;

use support::{FakeApiServer, still_pending_after};

const LEASE: &str = "test-lease";
const NS: &str = "ops";
/// Short timings so the tests run in seconds: renew every 1s, expire after 2s.
const DURATION: Duration = Duration::from_secs(2);

fn config(identity: &str) -> LeaderConfig {
    LeaderConfig {
        lease_name: LEASE.into(),
        namespace: NS.into(),
        identity: identity.into(),
        lease_duration: DURATION,
        renew_deadline: Duration::from_secs(1),
    }
}

async fn elector(api: &FakeApiServer, identity: &str) -> LeaderElector {
    let status = Metrics::new().leader_status(LEASE);
    LeaderElector::new(api.client(), config(identity), status)
        .await
        .unwrap()
}

fn renew_time(api: &FakeApiServer) -> Timestamp {
    api.lease(NS, LEASE)
        .unwrap()
        .spec
        .unwrap()
        .renew_time
        .unwrap()
        .0
}

#[tokio::test]
async fn acquires_a_missing_lease_and_keeps_renewing_it() {
    let api = FakeApiServer::new();
    let a = elector(&api, "a").await;
    let created = api.lease(NS, LEASE).expect("the Lease is created on start");
    assert_eq!(created.spec.unwrap_or_default().holder_identity, None);
    assert!(!a.is_leader());

    tokio::time::timeout(Duration::from_secs(5), a.acquire())
        .await
        .expect("acquired");
    assert!(a.is_leader());
    let spec = api.lease(NS, LEASE).unwrap().spec.unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some("a"));
    assert_eq!(spec.lease_duration_seconds, Some(2));
    assert_eq!(spec.lease_transitions, Some(1));
    let first_renewal = renew_time(&api);

    // Holding for longer than the lease duration: renewals keep it ours.
    assert!(
        still_pending_after(Duration::from_millis(2500), a.hold()).await,
        "lost the lease"
    );
    assert!(
        renew_time(&api) > first_renewal,
        "the lease was not renewed"
    );
    assert_eq!(api.holder(NS, LEASE).as_deref(), Some("a"));
    assert!(a.is_leader());
    let log = api.log();
    assert!(log.iter().any(|r| r.method == "POST"), "no create: {log:?}");
    assert!(
        log.iter()
            .any(|r| r.method == "PATCH" && r.content_type.contains("apply-patch")),
        "acquired without server-side apply: {log:?}"
    );
    assert!(
        log.iter()
            .filter(|r| r.method == "PATCH")
            .all(|r| r.query.contains("fieldManager=kube-lease-manager-a")),
        "the field manager is not derived from the identity: {log:?}"
    );
}

#[tokio::test]
async fn a_leader_that_finds_another_holder_steps_down() {
    let api = FakeApiServer::new();
    let a = elector(&api, "a").await;
    tokio::time::timeout(Duration::from_secs(5), a.acquire())
        .await
        .expect("acquired");

    // Another replica took the lease (e.g. this one was paused past its expiry).
    api.put_lease(NS, LEASE, "b", Duration::ZERO, 2);
    let lost = tokio::time::timeout(Duration::from_secs(3), a.hold())
        .await
        .expect("noticed the takeover");
    assert!(matches!(lost, LostLeadership::TakenOver), "{lost}");
    assert!(!a.is_leader());
    assert_eq!(
        api.holder(NS, LEASE).as_deref(),
        Some("b"),
        "the new holder is left alone"
    );
}

#[tokio::test]
async fn a_leader_whose_renewal_fails_steps_down_before_its_lease_expires() {
    let api = FakeApiServer::new();
    let a = elector(&api, "a").await;
    tokio::time::timeout(Duration::from_secs(5), a.acquire())
        .await
        .expect("acquired");
    let acquired = Instant::now();

    api.set_failing(true);
    let lost = tokio::time::timeout(Duration::from_secs(3), a.hold())
        .await
        .expect("noticed the failure");
    assert!(matches!(lost, LostLeadership::RenewFailed(_)), "{lost}");
    assert!(!a.is_leader());
    // Stepping down must happen before a standby may take the lease over.
    assert!(
        acquired.elapsed() < DURATION,
        "stepped down after {:?}",
        acquired.elapsed()
    );
}

#[tokio::test]
async fn a_standby_takes_over_when_the_leader_stops_renewing() {
    let api = FakeApiServer::new();
    let a = elector(&api, "a").await;
    let b = elector(&api, "b").await;
    tokio::time::timeout(Duration::from_secs(5), a.acquire())
        .await
        .expect("a acquired");

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
    assert_eq!(api.holder(NS, LEASE).as_deref(), Some("a"));
    let a_last_renewal = renew_time(&api);

    // a dies (nobody polls it any more): b takes over once a's lease expired.
    tokio::time::timeout(Duration::from_secs(6), b.acquire())
        .await
        .expect("b took over");
    assert!(b.is_leader());
    assert_eq!(api.holder(NS, LEASE).as_deref(), Some("b"));
    let waited = Timestamp::now().duration_since(a_last_renewal);
    assert!(
        waited >= SignedDuration::from_millis(1900),
        "b took over {waited:?} after a's last renewal, before the lease expired"
    );
    let transitions = api
        .lease(NS, LEASE)
        .unwrap()
        .spec
        .unwrap()
        .lease_transitions;
    assert_eq!(transitions, Some(2));
}

#[tokio::test]
async fn a_released_lease_is_handed_over() {
    let api = FakeApiServer::new();
    let a = elector(&api, "a").await;
    tokio::time::timeout(Duration::from_secs(5), a.acquire())
        .await
        .expect("a acquired");
    let b = elector(&api, "b").await;
    assert!(still_pending_after(Duration::from_millis(300), b.acquire()).await);

    a.release().await.unwrap();
    assert!(!a.is_leader());
    let spec = api.lease(NS, LEASE).unwrap().spec.unwrap_or_default();
    assert_eq!(spec.holder_identity, None, "release clears the holder");

    tokio::time::timeout(Duration::from_secs(4), b.acquire())
        .await
        .expect("b acquired");
    assert_eq!(api.holder(NS, LEASE).as_deref(), Some("b"));
}
