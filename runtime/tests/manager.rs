//! The whole manager over a fake API server: probes, metrics, leader election, shutdown.

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use operator_rs_runtime::manager::ControllerContext;
use operator_rs_runtime::manager::Manager;
use operator_rs_runtime::manager::ManagerArgs;
use operator_rs_runtime::manager::Registration;

use support::testing::http_get;
use support::{FakeApiServer, eventually, parse};

/// The default leader election Lease of this operator.
const LEASE: &str = "test-operator-leader";
const NS: &str = "ops";

/// What a test controller did; one per test, since a `Registration` takes a plain `fn`.
struct Probe {
    started: AtomicBool,
    synced: AtomicBool,
    sync_now: AtomicBool,
    finished: AtomicBool,
    dropped: AtomicBool,
}

impl Probe {
    const fn new() -> Self {
        Self {
            started: AtomicBool::new(false),
            synced: AtomicBool::new(false),
            sync_now: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            dropped: AtomicBool::new(false),
        }
    }

    fn get(flag: &AtomicBool) -> bool {
        flag.load(Ordering::SeqCst)
    }
}

/// Sets `probe.dropped` when the controller's future is dropped, finished or not.
struct DropFlag(&'static Probe);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
    }
}

/// A controller with one reconcile in flight for its whole life: it reports ready once the
/// test says its caches synced, and needs 300ms to finish after the shutdown.
async fn draining_controller(probe: &'static Probe, ctx: ControllerContext) -> anyhow::Result<()> {
    let _dropped = DropFlag(probe);
    probe.started.store(true, Ordering::SeqCst);
    let timer = ctx.metrics.reconcile_started();
    while !probe.sync_now.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    ctx.ready.set_ready();
    probe.synced.store(true, Ordering::SeqCst);
    ctx.shutdown.wait().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(timer);
    probe.finished.store(true, Ordering::SeqCst);
    Ok(())
}

fn args(extra: &[&str]) -> ManagerArgs {
    let mut argv = vec![
        "manager",
        "--metrics-bind-address=127.0.0.1:0",
        "--health-probe-bind-address=127.0.0.1:0",
        "--leader-election-namespace=ops",
        "--leader-election-lease-duration=2s",
        "--leader-election-renew-deadline=1s",
        "--graceful-shutdown-timeout=5s",
    ];
    argv.extend_from_slice(extra);
    parse(argv).unwrap()
}

fn metric_line(text: &str, series: &str) -> Option<String> {
    text.lines()
        .find(|l| l.starts_with(series))
        .map(str::to_owned)
}

static PLAIN: Probe = Probe::new();

#[tokio::test]
async fn without_leader_election_runs_controllers_serves_probes_and_drains_on_shutdown() {
    let api = FakeApiServer::new();
    let manager = Manager::with_client("test-operator", args(&["--concurrency=7"]), api.client())
        .await
        .unwrap();
    let (probes, metrics) = (
        manager.health_probe_addr().unwrap(),
        manager.metrics_addr().unwrap(),
    );
    let shutdown = manager.shutdown();
    let registration = Registration::new("plain", |ctx| draining_controller(&PLAIN, ctx));
    let run = tokio::spawn(manager.run(vec![registration]));

    assert!(eventually(Duration::from_secs(2), || Probe::get(&PLAIN.started)).await);
    assert_eq!(http_get(probes, "/healthz").await.status, 200);
    assert_eq!(
        http_get(probes, "/readyz").await.status,
        503,
        "ready before the caches synced"
    );
    PLAIN.sync_now.store(true, Ordering::SeqCst);
    assert!(eventually(Duration::from_secs(2), || Probe::get(&PLAIN.synced)).await);
    assert_eq!(http_get(probes, "/readyz").await.status, 200);

    let text = http_get(metrics, "/metrics").await.body;
    assert_eq!(
        metric_line(
            &text,
            "controller_runtime_max_concurrent_reconciles{controller=\"plain\"}"
        )
        .as_deref(),
        Some("controller_runtime_max_concurrent_reconciles{controller=\"plain\"} 7")
    );
    assert!(
        !text.contains("leader_election_master_status{"),
        "no election, no leader gauge"
    );

    shutdown.trigger();
    let result = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .expect("run returned")
        .unwrap();
    result.expect("a graceful shutdown is a success");
    assert!(
        Probe::get(&PLAIN.finished),
        "the reconcile in flight was cut short"
    );
    assert!(
        api.log().is_empty(),
        "no election, no API calls: {:?}",
        api.log()
    );
    assert!(
        tokio::net::TcpStream::connect(probes).await.is_err(),
        "the probe server outlived the manager"
    );
}

static ELECTED: Probe = Probe::new();

#[tokio::test]
async fn with_leader_election_only_the_leader_runs_controllers_and_it_releases_the_lease_on_shutdown()
 {
    let api = FakeApiServer::new();
    // Another replica leads and stops renewing: its lease expires 2s from now.
    api.put_lease(NS, LEASE, "other", Duration::ZERO, 2);
    let manager = Manager::with_client("test-operator", args(&["--leader-elect"]), api.client())
        .await
        .unwrap();
    let (probes, metrics) = (
        manager.health_probe_addr().unwrap(),
        manager.metrics_addr().unwrap(),
    );
    let identity = manager.identity().to_owned();
    let shutdown = manager.shutdown();
    let registration = Registration::new("elected", |ctx| draining_controller(&ELECTED, ctx));
    let run = tokio::spawn(manager.run(vec![registration]));

    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(!Probe::get(&ELECTED.started), "a standby ran a controller");
    assert_eq!(
        http_get(probes, "/readyz").await.status,
        200,
        "a standby is ready"
    );
    let text = http_get(metrics, "/metrics").await.body;
    let gauge = ["leader_election_master_status{name=\"", LEASE, "\"}"].concat();
    assert_eq!(metric_line(&text, &gauge), Some(format!("{gauge} 0")));

    assert!(
        eventually(Duration::from_secs(5), || Probe::get(&ELECTED.started)).await,
        "did not take over the expired lease"
    );
    assert_eq!(api.holder(NS, LEASE), Some(identity));
    assert_eq!(
        http_get(probes, "/readyz").await.status,
        503,
        "a new leader is ready once synced"
    );
    ELECTED.sync_now.store(true, Ordering::SeqCst);
    assert!(eventually(Duration::from_secs(2), || Probe::get(&ELECTED.synced)).await);
    assert_eq!(http_get(probes, "/readyz").await.status, 200);
    let text = http_get(metrics, "/metrics").await.body;
    assert_eq!(metric_line(&text, &gauge), Some(format!("{gauge} 1")));

    shutdown.trigger();
    tokio::time::sleep(Duration::from_millis(100)).await;
    api.mark("shutdown");
    let result = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .expect("run returned")
        .unwrap();
    result.expect("a graceful shutdown is a success");
    assert!(
        Probe::get(&ELECTED.finished),
        "the reconcile in flight was cut short"
    );
    assert_eq!(api.holder(NS, LEASE), None, "the lease was not released");

    // The release came after the reconcile in flight finished (300ms after the shutdown).
    let log = api.log();
    let marked = log.iter().position(|r| r.method == "MARK").unwrap();
    let release = log
        .iter()
        .rposition(|r| {
            r.method == "PATCH"
                && r.body.pointer("/spec/holderIdentity") == Some(&serde_json::Value::Null)
        })
        .expect("a release patch");
    assert!(release > marked, "released before draining: {log:?}");
}

static DEPOSED: Probe = Probe::new();

#[tokio::test]
async fn a_leader_that_loses_its_lease_stops_its_controllers_at_once_and_fails() {
    let api = FakeApiServer::new();
    let manager = Manager::with_client("test-operator", args(&["--leader-elect"]), api.client())
        .await
        .unwrap();
    let registration = Registration::new("deposed", |ctx| draining_controller(&DEPOSED, ctx));
    let run = tokio::spawn(manager.run(vec![registration]));
    assert!(eventually(Duration::from_secs(5), || Probe::get(&DEPOSED.started)).await);

    api.put_lease(NS, LEASE, "usurper", Duration::ZERO, 2);
    let result = tokio::time::timeout(Duration::from_secs(4), run)
        .await
        .expect("run returned")
        .unwrap();
    let err = result.expect_err("losing the lease is an error (the pod restarts)");
    assert!(
        format!("{err:#}").contains("leader election lost"),
        "{err:#}"
    );
    assert!(Probe::get(&DEPOSED.dropped), "the controller still runs");
    assert!(
        !Probe::get(&DEPOSED.finished),
        "the controller was drained instead of stopped"
    );
    assert_eq!(api.holder(NS, LEASE).as_deref(), Some("usurper"));
}

static QUITTER: Probe = Probe::new();

#[tokio::test]
async fn a_controller_that_returns_early_stops_the_manager_with_an_error() {
    let api = FakeApiServer::new();
    let manager = Manager::with_client("test-operator", args(&[]), api.client())
        .await
        .unwrap();
    let registrations = vec![
        Registration::new("quitter", |_ctx| async { Ok(()) }),
        Registration::new("sibling", |ctx| {
            QUITTER.sync_now.store(true, Ordering::SeqCst);
            draining_controller(&QUITTER, ctx)
        }),
    ];
    let result = tokio::time::timeout(Duration::from_secs(5), manager.run(registrations))
        .await
        .expect("run returned");
    let err = result.expect_err("a controller must not stop on its own");
    assert!(
        format!("{err:#}").contains("controller quitter exited before shutdown"),
        "{err:#}"
    );
    assert!(
        Probe::get(&QUITTER.finished),
        "the other controller was not drained"
    );
}

async fn stops_at_once(ctx: ControllerContext) -> anyhow::Result<()> {
    ctx.ready.set_ready();
    ctx.shutdown.wait().await;
    Ok(())
}

#[tokio::test]
async fn controllers_that_stop_as_soon_as_the_shutdown_fires_are_a_clean_exit() {
    // The controllers finish at the same moment the manager sees the shutdown: that race
    // must never be mistaken for a controller quitting on its own.
    for round in 0..20 {
        let api = FakeApiServer::new();
        let args = parse([
            "manager",
            "--metrics-bind-address=0",
            "--health-probe-bind-address=0",
        ])
        .unwrap();
        let manager = Manager::with_client("test-operator", args, api.client())
            .await
            .unwrap();
        let shutdown = manager.shutdown();
        let registrations = (0..3)
            .map(|_| Registration::new("instant", stops_at_once))
            .collect();
        let run = tokio::spawn(manager.run(registrations));
        tokio::time::sleep(Duration::from_millis(5)).await;
        shutdown.trigger();
        let result = tokio::time::timeout(Duration::from_secs(5), run)
            .await
            .expect("run returned")
            .unwrap();
        assert!(result.is_ok(), "round {round}: {:#}", result.unwrap_err());
    }
}
