//! A kind under faults of a control plane of the test's own ([`fault`]): kube-apiserver or
//! etcd restarted, a leader killed, restarts over settled objects. Each prints its figures.

use std::fmt::Debug;
use std::time::{Duration, Instant};

use kube::api::{Api, ListParams};
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::scale::{AT_SCALE, assert_unchanged, changed, create_all, settled, versions};
use super::{E2e, E2eProject, TIMEOUT, TestObject, objects};
use crate::controller::ScopedApi;
use crate::testing::envtest::Envtest;

/// How many objects a fault test uses when `E2E_OBJECTS` is unset.
pub const FAULT_OBJECTS: usize = 20;
/// The Lease timing of [`Fault::LeaderFailover`]: a standby takes over at most this long
/// after the leader's last renewal.
const LEASE_SECONDS: u64 = 6;
const RENEW_SECONDS: u64 = 4;

/// The faults of [`fault`], each on a control plane of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// kube-apiserver restarts while a manager catches up on existing objects; more objects
    /// are created once it serves again. The manager must reconnect, reconcile them all and
    /// never exit.
    ApiServerRestart,
    /// etcd restarts under a manager whose objects are settled; more objects are created once
    /// the API server serves again. The manager must reconcile them all and never exit.
    EtcdRestart,
    /// Two managers with `--leader-elect`: only the leader reconciles. It is killed with
    /// SIGKILL (no release of the Lease): the standby must take over within the Lease
    /// duration and reconcile the objects created meanwhile.
    LeaderFailover,
    /// kube-apiserver and etcd restart under settled objects, then the manager restarts:
    /// neither may write to a settled object.
    SettledRestart,
}

/// Runs `fault` with `E2E_OBJECTS` (default [`FAULT_OBJECTS`]) objects of `K`, made by
/// `make` (which names them), in a namespace of their own when `namespaced`, on a control
/// plane of its own from `$KUBEBUILDER_ASSETS` (without it the test says so in one line and
/// returns), and prints its figures. `controller` is the name of `K`'s controller.
///
/// ```no_run
/// # use operator_rs_runtime::testing::e2e::{E2eProject, Project};
/// # struct This;
/// # impl E2eProject for This { const PROJECT: Project = Project { name: "", dir: "", manager: "", scratch: "", ready: operator_rs_runtime::testing::e2e::reconciled }; }
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use operator_rs_runtime::testing::e2e::{Fault, fault};
///
/// # async fn f() {
/// let make = |i| {
///     let mut map = ConfigMap::default();
///     map.metadata.name = Some(format!("e2e-{i}"));
///     map
/// };
/// fault::<This, _>(Fault::EtcdRestart, true, "configmap", make).await;
/// # }
/// ```
pub async fn fault<P, K>(
    fault: Fault,
    namespaced: bool,
    controller: &str,
    make: impl Fn(usize) -> K,
) where
    P: E2eProject,
    K: TestObject,
{
    if !Envtest::available() {
        return;
    }
    let n = objects().unwrap_or(FAULT_OBJECTS);
    // No kube-controller-manager: nothing here needs garbage collection.
    let env = Envtest::builder().controller_manager(false).start();
    let env = env.expect("starting a control plane from KUBEBUILDER_ASSETS");
    let mut e2e = E2e::<P>::on(&env).await;
    let namespace = match namespaced {
        true => Some(e2e.namespace().await),
        false => None,
    };
    let api = K::Scope::api::<K>(e2e.client.clone(), namespace.as_deref());
    let faults = Faults {
        env: &env,
        api: &api,
        list: &ListParams::default().labels(&format!("{AT_SCALE}=true")),
        controller,
        n,
        timeout: TIMEOUT + Duration::from_millis(50 * n as u64),
        make: &make,
    };
    let kind = K::kind(&());
    let figures = match fault {
        Fault::ApiServerRestart => faults.apiserver_restart(&mut e2e).await,
        Fault::EtcdRestart => faults.etcd_restart(&mut e2e).await,
        Fault::LeaderFailover => faults.leader_failover(&mut e2e).await,
        Fault::SettledRestart => faults.settled_restart(&mut e2e).await,
    };
    println!("{kind} x {n}, {fault:?}: {figures}");
}

/// One run of a [`Fault`]: its control plane, and the objects it works on.
struct Faults<'a, K, F> {
    env: &'a Envtest,
    api: &'a Api<K>,
    /// The objects of this test (labelled [`AT_SCALE`]).
    list: &'a ListParams,
    controller: &'a str,
    n: usize,
    timeout: Duration,
    make: &'a F,
}

impl<K, F> Faults<'_, K, F>
where
    K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + Debug,
    F: Fn(usize) -> K,
{
    /// Creates the objects `range` (labelled [`AT_SCALE`]).
    async fn create(&self, range: std::ops::Range<usize>) {
        create_all(self.api, range.map(self.make)).await;
    }

    /// Waits until the first `n` objects are all Ready.
    async fn all_ready<P: E2eProject>(&self, e2e: &mut E2e<P>, n: usize) {
        e2e.all_ready(self.api, self.list, n, self.timeout).await
    }

    /// How many of the objects are Ready now.
    async fn ready_now<P: E2eProject>(&self) -> usize {
        let items = self.api.list(self.list).await.map(|l| l.items);
        let items = items.unwrap_or_default();
        items.iter().filter(|o| E2e::<P>::is_ready(*o)).count()
    }

    async fn apiserver_restart<P: E2eProject>(&self, e2e: &mut E2e<P>) -> String {
        let n = self.n;
        self.create(0..n).await;
        e2e.run_manager().await;
        let ready = self.ready_now::<P>().await;
        let stopped = Instant::now();
        let restarted = self.env.restart_apiserver();
        restarted.expect("restarting kube-apiserver");
        let down = stopped.elapsed();
        self.create(n..2 * n).await;
        self.all_ready(e2e, 2 * n).await;
        let done = stopped.elapsed();
        e2e.assert_running().await;
        format!(
            "kube-apiserver restarted (down {down:.1?}) with {ready} of {n} Ready; {n} more \
             created after; all {} Ready {done:.1?} after the restart began, the manager \
             never exited",
            2 * n
        )
    }

    async fn etcd_restart<P: E2eProject>(&self, e2e: &mut E2e<P>) -> String {
        let n = self.n;
        self.create(0..n).await;
        e2e.run_manager().await;
        self.all_ready(e2e, n).await;
        let stopped = Instant::now();
        self.env.restart_etcd().expect("restarting etcd");
        let down = stopped.elapsed();
        self.create(n..2 * n).await;
        self.all_ready(e2e, 2 * n).await;
        let done = stopped.elapsed();
        e2e.assert_running().await;
        format!(
            "etcd restarted under {n} settled objects (API server back after {down:.1?}); \
             {n} more created after; all {} Ready {done:.1?} after the restart began, the \
             manager never exited",
            2 * n
        )
    }

    async fn leader_failover<P: E2eProject>(&self, e2e: &mut E2e<P>) -> String {
        let (n, controller) = (self.n, self.controller);
        let lease = format!("--leader-election-lease-duration={LEASE_SECONDS}s");
        let renew = format!("--leader-election-renew-deadline={RENEW_SECONDS}s");
        let args = ["--leader-elect", lease.as_str(), renew.as_str()];
        e2e.run_manager_with(&args).await;
        e2e.until_leader(self.timeout).await;
        let mut standby = e2e.replica("standby", &args).await;
        self.create(0..n).await;
        self.all_ready(e2e, n).await;
        standby.check().await;
        assert!(!standby.leads().await, "two leaders: {}", standby.tail());
        let by_leader = e2e.reconciles(controller).await;
        let by_standby = standby.reconciles(controller).await;
        assert_eq!(by_standby, 0, "the standby reconciled: {}", standby.tail());
        let all = by_leader >= n as u64;
        assert!(all, "{by_leader} reconciles of {n} objects");

        let leader = e2e.replace_manager(standby).await;
        leader.expect("the leader runs").kill();
        let killed = Instant::now();
        self.create(n..2 * n).await;
        e2e.until_leader(self.timeout).await;
        let takeover = killed.elapsed();
        self.all_ready(e2e, 2 * n).await;
        let done = killed.elapsed();
        let by_new_leader = e2e.reconciles(controller).await;
        e2e.assert_running().await;
        // The Lease was renewed at most a renew interval before the kill; the standby retries
        // about every second.
        let bound = Duration::from_secs(LEASE_SECONDS + 2);
        assert!(
            takeover <= bound,
            "the standby took over {takeover:.1?} after the leader was killed, over the Lease \
             duration ({LEASE_SECONDS}s)"
        );
        format!(
            "leader and standby (Lease {LEASE_SECONDS}s, renewed every {RENEW_SECONDS}s): the \
             leader reconciled {n} objects ({by_leader} reconciles), the standby none; the \
             leader was killed (SIGKILL) and {n} more created; the standby led {takeover:.1?} \
             after the kill and had all {} Ready {done:.1?} after it ({by_new_leader} \
             reconciles)",
            2 * n
        )
    }

    async fn settled_restart<P: E2eProject>(&self, e2e: &mut E2e<P>) -> String {
        let n = self.n;
        self.create(0..n).await;
        e2e.run_manager().await;
        self.all_ready(e2e, n).await;
        let observed = e2e.controller_manager();
        let before = settled(self.api, self.list, observed, self.timeout).await;
        let started = Instant::now();
        let restarted = self.env.restart_apiserver();
        restarted.expect("restarting kube-apiserver");
        self.env.restart_etcd().expect("restarting etcd");
        let down = started.elapsed();
        // The manager reconnected once it reconciles an object created now (not one of the
        // settled ones).
        let probe = e2e.apply(self.api, &(self.make)(2 * n)).await;
        e2e.ready(self.api, &probe.name_any()).await;
        let reconnected = started.elapsed();
        assert_unchanged(&changed(before, versions(self.api, self.list).await));
        let timeout = self.timeout;
        let resynced = e2e.resync(self.api, self.list, self.controller, n, timeout);
        let (resync, changed) = resynced.await;
        assert_unchanged(&changed);
        format!(
            "{n} settled objects: kube-apiserver then etcd restarted ({down:.1?}), the manager \
             reconciled a new object {reconnected:.1?} after the first restart began and wrote \
             none of the {n}; a restarted manager reconciled all {n} in {resync:.1?} and \
             wrote none"
        )
    }
}
