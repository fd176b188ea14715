//! The whole manager on a real API server (envtest): probes, metrics, leader election with
//! real Leases (one replica in this process, another in a child process), shutdown.

use crate::support;

use std::io::BufRead;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use operator_rs_runtime::manager::Manager;
use operator_rs_runtime::manager::ManagerArgs;
use operator_rs_runtime::manager::Registration;
use operator_rs_runtime::manager::Runtime;
use operator_rs_runtime::skip_unless_available;
use operator_rs_runtime::testing::envtest::Envtest;

use support::leases::Leases;
use support::testing::http_get;
use support::{eventually, parse};

/// The default leader election Lease of this operator.
const LEASE: &str = "test-operator-leader";

/// The shared control plane and the Leases of a namespace of the test's own.
async fn setup(prefix: &str) -> anyhow::Result<(&'static Envtest, Leases)> {
    let env = Envtest::shared()?;
    let namespace = env.create_namespace(prefix).await?;
    Ok((env, Leases::new(env.client()?, &namespace)))
}

/// What a test controller did; one per test, since a `Registration` takes a plain `fn`.
struct Probe {
    started: AtomicBool,
    synced: AtomicBool,
    sync_now: AtomicBool,
    finished: AtomicBool,
    dropped: AtomicBool,
    /// Where the Lease is, to record its holder when the reconcile in flight finishes.
    lease_namespace: Mutex<Option<String>>,
    holder_at_finish: Mutex<Option<Option<String>>>,
}

impl Probe {
    const fn new() -> Self {
        Self {
            started: AtomicBool::new(false),
            synced: AtomicBool::new(false),
            sync_now: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            dropped: AtomicBool::new(false),
            lease_namespace: Mutex::new(None),
            holder_at_finish: Mutex::new(None),
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
async fn draining_controller(probe: &'static Probe, ctx: Runtime) -> anyhow::Result<()> {
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
    let namespace = probe.lease_namespace.lock().unwrap().clone();
    if let Some(namespace) = namespace {
        let holder = Leases::new(ctx.client.clone(), &namespace)
            .holder(LEASE)
            .await;
        *probe.holder_at_finish.lock().unwrap() = Some(holder);
    }
    probe.finished.store(true, Ordering::SeqCst);
    Ok(())
}

fn args(namespace: &str, extra: &[&str]) -> ManagerArgs {
    let namespace = format!("--leader-election-namespace={namespace}");
    let mut argv = vec![
        "manager",
        "--metrics-bind-address=127.0.0.1:0",
        // Plain HTTP: these tests read the metrics; tests/metrics_auth.rs covers the security.
        "--metrics-secure=false",
        "--health-probe-bind-address=127.0.0.1:0",
        &namespace,
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
async fn without_leader_election_runs_controllers_serves_probes_and_drains_on_shutdown()
-> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, leases) = setup("plain").await?;
    let args = args(leases.namespace(), &["--concurrency=7"]);
    let manager = Manager::with_client("test-operator", args, env.client()?).await?;
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
    assert_eq!(
        leases.names().await,
        Vec::<String>::new(),
        "no election, no Lease"
    );
    assert!(
        tokio::net::TcpStream::connect(probes).await.is_err(),
        "the probe server outlived the manager"
    );
    Ok(())
}

static ELECTED: Probe = Probe::new();

#[tokio::test]
async fn with_leader_election_only_the_leader_runs_controllers_and_it_releases_the_lease_on_shutdown()
-> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, leases) = setup("elected").await?;
    *ELECTED.lease_namespace.lock().unwrap() = Some(leases.namespace().to_owned());
    // Another replica leads and stops renewing: its lease expires 2s from now.
    leases.put(LEASE, "other", Duration::ZERO, 2).await;
    let args = args(leases.namespace(), &["--leader-elect"]);
    let manager = Manager::with_client("test-operator", args, env.client()?).await?;
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
    assert_eq!(leases.holder(LEASE).await, Some(identity.clone()));
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
    let result = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .expect("run returned")
        .unwrap();
    result.expect("a graceful shutdown is a success");
    assert!(
        Probe::get(&ELECTED.finished),
        "the reconcile in flight was cut short"
    );
    assert_eq!(
        leases.holder(LEASE).await,
        None,
        "the lease was not released"
    );
    // The release came after the reconcile in flight finished (300ms after the shutdown).
    assert_eq!(
        *ELECTED.holder_at_finish.lock().unwrap(),
        Some(Some(identity)),
        "released before draining"
    );
    Ok(())
}

static DEPOSED: Probe = Probe::new();

#[tokio::test]
async fn a_leader_that_loses_its_lease_stops_its_controllers_at_once_and_fails()
-> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, leases) = setup("deposed").await?;
    let args = args(leases.namespace(), &["--leader-elect"]);
    let manager = Manager::with_client("test-operator", args, env.client()?).await?;
    let registration = Registration::new("deposed", |ctx| draining_controller(&DEPOSED, ctx));
    let run = tokio::spawn(manager.run(vec![registration]));
    assert!(eventually(Duration::from_secs(5), || Probe::get(&DEPOSED.started)).await);

    leases.put(LEASE, "usurper", Duration::ZERO, 2).await;
    let result = tokio::time::timeout(Duration::from_secs(4), run)
        .await
        .expect("run returned")
        .unwrap();
    let err = result.expect_err("losing the lease is an error (the pod restarts)");
    assert!(
        matches!(err, operator_rs_runtime::manager::Error::LeadershipLost(_)),
        "{err}"
    );
    assert!(err.to_string().contains("leader election lost"), "{err}");
    assert!(Probe::get(&DEPOSED.dropped), "the controller still runs");
    assert!(
        !Probe::get(&DEPOSED.finished),
        "the controller was drained instead of stopped"
    );
    assert_eq!(leases.holder(LEASE).await.as_deref(), Some("usurper"));
    Ok(())
}

static QUITTER: Probe = Probe::new();

#[tokio::test]
async fn a_controller_that_returns_early_stops_the_manager_with_an_error() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, leases) = setup("quitter").await?;
    let manager = Manager::with_client(
        "test-operator",
        args(leases.namespace(), &[]),
        env.client()?,
    )
    .await?;
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
        matches!(
            err,
            operator_rs_runtime::manager::Error::ControllerExited {
                controller: "quitter"
            }
        ),
        "{err}"
    );
    assert_eq!(err.to_string(), "controller quitter exited before shutdown");
    assert!(
        Probe::get(&QUITTER.finished),
        "the other controller was not drained"
    );
    Ok(())
}

async fn stops_at_once(ctx: Runtime) -> anyhow::Result<()> {
    ctx.ready.set_ready();
    ctx.shutdown.wait().await;
    Ok(())
}

#[tokio::test]
async fn controllers_that_stop_as_soon_as_the_shutdown_fires_are_a_clean_exit() -> anyhow::Result<()>
{
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    // The controllers finish at the same moment the manager sees the shutdown: that race
    // must never be mistaken for a controller quitting on its own.
    for round in 0..20 {
        let args = parse([
            "manager",
            "--metrics-bind-address=0",
            "--health-probe-bind-address=0",
        ])
        .unwrap();
        let manager = Manager::with_client("test-operator", args, env.client()?).await?;
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
    Ok(())
}

/// Markers the replica in a child process prints.
const REPLICA_STARTED: &str = "REPLICA CONTROLLERS STARTED";
const REPLICA_EXITED: &str = "REPLICA EXITED:";

/// A second replica, as a process of its own: the manager from `KUBECONFIG` (envtest's
/// kubeconfig file), electing in `REPLICA_NAMESPACE` under the identity `POD_NAME`.
#[tokio::test]
#[ignore = "run by two_replicas_only_the_leader_runs_controllers_and_the_standby_takes_over"]
async fn helper_replica() {
    let namespace = std::env::var("REPLICA_NAMESPACE").expect("REPLICA_NAMESPACE");
    let kubeconfig = format!(
        "--kubeconfig={}",
        std::env::var("KUBECONFIG").expect("KUBECONFIG")
    );
    let manager_args = args(&namespace, &["--leader-elect", &kubeconfig]);
    let manager = Manager::new("test-operator", manager_args).await.unwrap();
    let controller = Registration::new("replica", |ctx: Runtime| async move {
        ctx.ready.set_ready();
        println!("{REPLICA_STARTED}");
        ctx.shutdown.wait().await;
        Ok(())
    });
    match manager.run(vec![controller]).await {
        Ok(()) => println!("{REPLICA_EXITED} ok"),
        Err(err) => println!("{REPLICA_EXITED} {err:#}"),
    }
}

/// The replica in a child process, killed when dropped; its output comes line by line.
struct Replica {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Replica {
    fn spawn(env: &Envtest, namespace: &str, identity: &str) -> Self {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .arg(crate::support::test_path(module_path!(), "helper_replica"))
            .args(["--exact", "--ignored", "--nocapture"])
            .env("KUBECONFIG", env.kubeconfig())
            .env("REPLICA_NAMESPACE", namespace)
            .env("POD_NAME", identity)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
        Self {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Whether it printed a line containing `marker` within `timeout`.
    async fn printed(&mut self, marker: &str, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            while let Ok(line) = self.lines.try_recv() {
                self.seen.push(line);
            }
            if self.seen.iter().any(|line| line.contains(marker)) {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

static FIRST: Probe = Probe::new();
static THIRD: Probe = Probe::new();

#[tokio::test]
async fn two_replicas_only_the_leader_runs_controllers_and_the_standby_takes_over()
-> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let (env, leases) = setup("replicas").await?;
    let namespace = leases.namespace().to_owned();
    FIRST.sync_now.store(true, Ordering::SeqCst);
    THIRD.sync_now.store(true, Ordering::SeqCst);

    // This process leads...
    let args_here = || args(&namespace, &["--leader-elect"]);
    let first = Manager::with_client("test-operator", args_here(), env.client()?).await?;
    let identity = first.identity().to_owned();
    let stop_first = first.shutdown();
    let registration = Registration::new("first", |ctx| draining_controller(&FIRST, ctx));
    let first = tokio::spawn(first.run(vec![registration]));
    assert!(eventually(Duration::from_secs(10), || Probe::get(&FIRST.synced)).await);
    assert_eq!(leases.holder(LEASE).await, Some(identity.clone()));

    // ... and the other replica waits, running nothing, for longer than a lease lasts.
    let mut replica = Replica::spawn(env, &namespace, "replica-b");
    assert!(
        replica
            .printed("waiting for leadership", Duration::from_secs(30))
            .await,
        "the replica did not start: {:?}",
        replica.seen
    );
    assert!(
        !replica
            .printed(REPLICA_STARTED, Duration::from_secs(3))
            .await,
        "a standby ran its controllers: {:?}",
        replica.seen
    );
    assert_eq!(leases.holder(LEASE).await, Some(identity.clone()));

    // The leader stops: it releases the Lease and the standby takes over at once, well
    // before the released Lease would have expired.
    stop_first.trigger();
    tokio::time::timeout(Duration::from_secs(10), first).await???;
    let released = std::time::Instant::now();
    assert!(
        replica
            .printed(REPLICA_STARTED, Duration::from_secs(5))
            .await,
        "the standby did not take over: {:?}",
        replica.seen
    );
    assert!(released.elapsed() < Duration::from_secs(5));
    assert_eq!(leases.holder(LEASE).await.as_deref(), Some("replica-b"));

    // A new replica here waits; the leader there is deposed (another holder writes the
    // Lease): it stops with an error, and this one takes over once that Lease expires.
    let third = Manager::with_client("test-operator", args_here(), env.client()?).await?;
    let stop_third = third.shutdown();
    let registration = Registration::new("third", |ctx| draining_controller(&THIRD, ctx));
    let third = tokio::spawn(third.run(vec![registration]));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!Probe::get(&THIRD.started), "a standby ran a controller");

    leases.put(LEASE, "usurper", Duration::ZERO, 2).await;
    assert!(
        replica
            .printed(REPLICA_EXITED, Duration::from_secs(5))
            .await,
        "the deposed replica kept running: {:?}",
        replica.seen
    );
    let exit = replica
        .seen
        .iter()
        .find(|l| l.contains(REPLICA_EXITED))
        .unwrap();
    assert!(exit.contains("leader election lost"), "{exit}");
    assert!(
        eventually(Duration::from_secs(8), || Probe::get(&THIRD.started)).await,
        "the standby did not take over the expired Lease"
    );
    assert_eq!(leases.holder(LEASE).await, Some(identity));

    stop_third.trigger();
    tokio::time::timeout(Duration::from_secs(10), third).await???;
    Ok(())
}
