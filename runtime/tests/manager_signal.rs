//! SIGTERM stops the manager gracefully (on envtest's real API server). Alone in its own test binary: the signal goes to the
//! whole test process.

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use operator_rs_runtime::manager::Manager;
use operator_rs_runtime::manager::Registration;
use operator_rs_runtime::manager::Runtime;
use operator_rs_runtime::skip_unless_available;
use operator_rs_runtime::testing::envtest::Envtest;

use support::leases::Leases;
use support::{eventually, parse};

/// The default leader election Lease of this operator.
const LEASE: &str = "test-operator-leader";

static STARTED: AtomicBool = AtomicBool::new(false);
static FINISHED: AtomicBool = AtomicBool::new(false);

async fn controller(ctx: Runtime) -> anyhow::Result<()> {
    ctx.ready.set_ready();
    STARTED.store(true, Ordering::SeqCst);
    ctx.shutdown.wait().await;
    // A reconcile in flight that needs a moment to finish.
    tokio::time::sleep(Duration::from_millis(300)).await;
    FINISHED.store(true, Ordering::SeqCst);
    Ok(())
}

#[tokio::test]
async fn sigterm_drains_controllers_releases_the_lease_and_exits_cleanly() -> anyhow::Result<()> {
    skip_unless_available!(Ok(()));
    let env = Envtest::shared()?;
    let leases = Leases::new(env.client()?, &env.create_namespace("signal").await?);
    let namespace = format!("--leader-election-namespace={}", leases.namespace());
    let args = parse([
        "manager",
        "--metrics-bind-address=0",
        "--health-probe-bind-address=0",
        "--leader-elect",
        &namespace,
        "--leader-election-lease-duration=2s",
        "--leader-election-renew-deadline=1s",
    ])?;
    let manager = Manager::with_client("test-operator", args, env.client()?).await?;
    assert_eq!(
        (manager.metrics_addr(), manager.health_probe_addr()),
        (None, None),
        "0 disables"
    );
    let identity = manager.identity().to_owned();
    let run = tokio::spawn(manager.run(vec![Registration::new("signalled", controller)]));
    assert!(eventually(Duration::from_secs(5), || STARTED.load(Ordering::SeqCst)).await);
    assert_eq!(leases.holder(LEASE).await, Some(identity));

    // SAFETY: kill(2) on our own pid; the manager's handler is installed (a controller runs),
    // so the signal is caught instead of terminating the test process.
    let sent = unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
    assert_eq!(sent, 0);

    let result = tokio::time::timeout(Duration::from_secs(5), run)
        .await
        .expect("run returned")
        .unwrap();
    result.expect("SIGTERM is a clean exit");
    assert!(
        FINISHED.load(Ordering::SeqCst),
        "the reconcile in flight was cut short"
    );
    assert_eq!(
        leases.holder(LEASE).await,
        None,
        "the lease was not released"
    );
    Ok(())
}
