//! Sharded managers on a real control plane: replicas of `examples/sharded.rs`, each a process
//! of its own under its own ServiceAccount, split the ConfigMaps of a namespace; the API
//! server's audit log shows every object written by exactly one replica per ring generation
//! through a scale-up 1 -> 3, a kill -9, a scale-up 2 -> 3, a rolling restart (each replica in
//! turn stopped gracefully and replaced by a new one, as a Deployment's rolling update does) and
//! a graceful stop 3 -> 2; with
//! `ShardedListAndWatch` on (the server filters, `shardSelector` in the replicas' watches) and
//! off (the client filters, no selector sent). Owned objects follow their owner: each replica
//! keeps an owned ConfigMap per object it reconciles, labelled with the owner's bucket, and
//! watches them by a label selector of its buckets, moved at each handover; owned ConfigMaps
//! made before, without the label, are labelled by their owner's replica.
//!
//! Slow (two control planes, minutes on 2 cores): CI runs it in a lane of its own
//! (`OPERATOR_RS_TESTS_ELSEWHERE=sharding` skips it elsewhere). 300 objects; 3,000 with
//! `OPERATOR_RS_SHARD_SCALE=1`. It prints each step's time and the peak memory of one manager
//! reconciling every object against that of replicas sharing them three ways.

mod support;

#[path = "../examples/sharded.rs"]
#[allow(dead_code)]
mod example;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams};
use kube::{Client, Resource, ResourceExt};
use operator_rs_runtime::shard::{BUCKET_LABEL, DEFAULT_VNODES, Ring, bucket, fnv1a64};
use operator_rs_runtime::testing::envtest::Envtest;
use operator_rs_runtime::testing::shard_audit::{self, ShardWrites};

use support::eventually_async;

/// Seconds a replica's shard Lease lives after its last renewal, and the renew period.
const LEASE_SECONDS: u64 = 8;
const RENEW_MILLIS: u64 = 500;

/// The environment variable that makes [`replica`] a replica: its flags, one per line.
const REPLICA_ARGS: &str = "SHARD_TEST_REPLICA_ARGS";

/// Not a test: a replica process the scenarios start by running this binary on this test alone.
#[tokio::test]
async fn replica() -> anyhow::Result<()> {
    let Ok(args) = std::env::var(REPLICA_ARGS) else {
        return Ok(());
    };
    let argv = std::iter::once("sharded").chain(args.lines());
    example::run(example::Cli::parse_from(argv)).await
}

/// Whether another CI job runs this binary (`.ci/run` names it in `OPERATOR_RS_TESTS_ELSEWHERE`,
/// as the workspace's slow tests are: `tests/common::runs_elsewhere`).
fn runs_elsewhere() -> bool {
    let elsewhere = std::env::var("OPERATOR_RS_TESTS_ELSEWHERE").unwrap_or_default();
    let skip = elsewhere.split(',').any(|t| t.trim() == "sharding");
    if skip {
        eprintln!(
            "SKIPPED here: sharding runs in .ci/run's parallel job (OPERATOR_RS_TESTS_ELSEWHERE)"
        );
    }
    skip
}

fn objects() -> usize {
    if std::env::var("OPERATOR_RS_SHARD_SCALE").is_ok_and(|v| v == "1") {
        3_000
    } else {
        eprintln!("300 objects (OPERATOR_RS_SHARD_SCALE=1: 3,000)");
        300
    }
}

#[tokio::test]
async fn replicas_split_and_hand_over_with_the_servers_shard_selector() -> anyhow::Result<()> {
    scenario(true).await
}

#[tokio::test]
async fn replicas_split_and_hand_over_filtering_on_the_client() -> anyhow::Result<()> {
    scenario(false).await
}

/// The RBAC of one replica: its Leases and the ConfigMaps it stamps.
const RBAC: &str = "
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: sharded}
rules:
- {apiGroups: [coordination.k8s.io], resources: [leases], verbs: [get, list, watch, create, patch, delete]}
- {apiGroups: [''], resources: [configmaps], verbs: [get, list, watch, create, patch]}
- {apiGroups: [''], resources: [events], verbs: [create, patch]}
- {apiGroups: [events.k8s.io], resources: [events], verbs: [create, patch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: sharded}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: sharded}
subjects: []
";

/// One replica process.
struct Replica {
    child: Child,
}

impl Replica {
    fn start(env: &Envtest, namespace: &str, name: &str, kubeconfig: &Path, metrics: &str) -> Self {
        let args = [
            format!("--kubeconfig={}", kubeconfig.display()),
            format!("--metrics-bind-address={metrics}"),
            "--metrics-secure=false".into(),
            "--health-probe-bind-address=0".into(),
            format!("--leader-election-namespace={namespace}"),
            format!("--watch-namespace={namespace}"),
            format!("--shard-lease-seconds={LEASE_SECONDS}"),
            format!("--shard-renew-millis={RENEW_MILLIS}"),
            "--leader-elect".into(),
            // A leader whose renewals fail exits (its pod restarts): long enough for a loaded
            // machine (2 cores shared with other jobs).
            "--leader-election-lease-duration=30s".into(),
            "--leader-election-renew-deadline=15s".into(),
        ];
        let log = std::fs::File::create(env.dir().join(format!("{name}.log"))).unwrap();
        let child = Command::new(std::env::current_exe().unwrap())
            .args(["replica", "--exact", "--nocapture"])
            .env(REPLICA_ARGS, args.join("\n"))
            .env("POD_NAME", name)
            .env("RUST_LOG", "info")
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        Self { child }
    }

    /// Its peak resident memory so far (VmHWM), in KiB.
    fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()));
        (status.unwrap_or_default().lines())
            .find_map(|l| {
                l.strip_prefix("VmHWM:")?
                    .trim()
                    .strip_suffix("kB")?
                    .trim()
                    .parse()
                    .ok()
            })
            .unwrap_or(0)
    }

    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, and waits for it to exit; whether it exited 0.
    fn stop(mut self) -> bool {
        // SAFETY: kill(2) on a child of ours that has not been waited for.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        self.child.wait().unwrap().success()
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether every ConfigMap is stamped by its owner in the ring of `members`, with that ring's
/// generation, and so is its owned ConfigMap (`<name>-owned`), which carries its bucket, as
/// does every ConfigMap made for it before (`<name>-extra`); the owners by name.
async fn settled(api: &Api<ConfigMap>, members: &[&str]) -> Option<BTreeMap<String, String>> {
    let ring = Ring::new(members, DEFAULT_VNODES);
    let generation = format!("{:016x}", ring.generation());
    let list = api.list(&ListParams::default()).await.ok()?;
    let by_name: BTreeMap<String, &ConfigMap> =
        list.items.iter().map(|m| (m.name_any(), m)).collect();
    let stamped = |map: &ConfigMap, owner: &str| {
        let data = map.data.clone().unwrap_or_default();
        data.get("shard-owner").map(String::as_str) == Some(owner)
            && data.get("shard-generation") == Some(&generation)
    };
    let mut owners = BTreeMap::new();
    for map in &list.items {
        if map.labels().get("shard-example").map(String::as_str) != Some("true") {
            continue;
        }
        let hash = fnv1a64(&map.uid()?);
        let owner = ring.owner(hash)?;
        let owned = by_name.get(&format!("{}-owned", map.name_any()))?;
        let labelled = |child: &ConfigMap| child.labels().get(BUCKET_LABEL) == Some(&bucket(hash));
        if !stamped(map, owner) || !stamped(owned, owner) || !labelled(owned) {
            return None;
        }
        if let Some(extra) = by_name.get(&format!("{}-extra", map.name_any()))
            && !labelled(extra)
        {
            return None;
        }
        owners.insert(map.name_any(), owner.to_owned());
    }
    Some(owners)
}

/// Children of `parents` (every third), owned by them (controller), made by another client
/// and without a bucket label: their owners' replicas label them.
async fn extras(api: &Api<ConfigMap>, parents: &[ConfigMap]) -> anyhow::Result<usize> {
    let made: Vec<()> = futures::stream::iter(parents.iter().step_by(3))
        .map(|parent| async move {
            let mut child = support::config_map(&format!("{}-extra", parent.name_any()), &[]);
            let label = (example::OWNED_LABEL.to_owned(), "true".to_owned());
            child.metadata.labels = Some([label].into());
            child.metadata.owner_references = Some(vec![parent.controller_owner_ref(&()).unwrap()]);
            api.create(&PostParams::default(), &child).await.map(drop)
        })
        .buffer_unordered(16)
        .try_collect()
        .await?;
    Ok(made.len())
}

/// Waits until [`settled`] with `members`; how long it took.
async fn settle(
    api: &Api<ConfigMap>,
    members: &[&str],
    what: &str,
) -> (Duration, BTreeMap<String, String>) {
    let start = Instant::now();
    let deadline = start + Duration::from_secs(180);
    loop {
        if let Some(owners) = settled(api, members).await {
            let took = start.elapsed();
            eprintln!("{what}: settled in {took:?}");
            return (took, owners);
        }
        assert!(
            Instant::now() < deadline,
            "{what}: the objects were not all reconciled by their owners in {members:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until each Lease of `members` publishes their ring's generation; how long it took.
async fn published(leases: &Api<Lease>, members: &[&str]) -> Duration {
    let start = Instant::now();
    let done = eventually_async(Duration::from_secs(60), || {
        shard_audit::ring_published(leases, members)
    })
    .await;
    assert!(done, "the ring of {members:?} was never published");
    start.elapsed()
}

async fn scenario(server_side: bool) -> anyhow::Result<()> {
    operator_rs_runtime::skip_unless_available!(Ok(()));
    if runs_elsewhere() {
        return Ok(());
    }
    let scratch = tempfile::tempdir()?;
    let policy = scratch.path().join("audit-policy.yaml");
    std::fs::write(&policy, shard_audit::audit_policy("", "configmaps"))?;
    let audit_log: PathBuf = scratch.path().join("audit.log");
    let mut builder = Envtest::builder()
        .controller_manager(false)
        .apiserver_arg(format!("--audit-policy-file={}", policy.display()))
        .apiserver_arg(format!("--audit-log-path={}", audit_log.display()));
    if server_side {
        builder = builder.apiserver_arg("--feature-gates=ShardedListAndWatch=true");
    }
    let env = builder.start()?;
    let admin: Client = env.client()?;
    let namespace = env.create_namespace("shard").await?;
    let api: Api<ConfigMap> = Api::namespaced(admin.clone(), &namespace);
    let leases: Api<Lease> = Api::namespaced(admin.clone(), &namespace);

    let n = objects();
    let started = Instant::now();
    let parents: Vec<ConfigMap> = futures::stream::iter(0..n)
        .map(|i| {
            let api = api.clone();
            async move {
                let mut map = support::config_map(&format!("object-{i}"), &[]);
                map.metadata.labels =
                    Some([("shard-example".to_owned(), "true".to_owned())].into());
                api.create(&PostParams::default(), &map).await
            }
        })
        .buffer_unordered(16)
        .try_collect()
        .await?;
    let unlabelled = extras(&api, &parents).await?;
    eprintln!(
        "created {n} ConfigMaps and {unlabelled} owned by them without a bucket label in {:?}",
        started.elapsed()
    );

    let mut kubeconfigs = BTreeMap::new();
    let names = ["replica-0", "replica-1", "replica-2", "replica-3"];
    let successors = ["replica-4", "replica-5", "replica-6"];
    for name in names.into_iter().chain(successors) {
        let access = env.service_account(&namespace, name, RBAC).await?;
        kubeconfigs.insert(name, access.kubeconfig().to_owned());
    }
    let start = |name: &str| Replica::start(&env, &namespace, name, &kubeconfigs[name], "0");

    // One replica reconciles every object; then three split them (scale 1 -> 3).
    let metrics = operator_rs_runtime::testing::local_webhooks::free_address()?;
    let r0 = Replica::start(
        &env,
        &namespace,
        "replica-0",
        &kubeconfigs["replica-0"],
        &metrics.to_string(),
    );
    settle(&api, &["replica-0"], "1 replica").await;
    let single = r0.peak_rss_kib();
    let r1 = start("replica-1");
    let r2 = start("replica-2");
    let three = ["replica-0", "replica-1", "replica-2"];
    let (_, owners) = settle(&api, &three, "3 replicas").await;
    let (p1, p2) = (r1.peak_rss_kib(), r2.peak_rss_kib());
    eprintln!(
        "peak RSS (VmHWM) with {n} objects: one manager {single} KiB; replicas started into a \
         ring of 3: {p1} KiB and {p2} KiB ({:.2}x and {:.2}x)",
        p1 as f64 / single as f64,
        p2 as f64 / single as f64
    );
    for member in three {
        let mine = owners.values().filter(|o| *o == member).count();
        assert!(
            mine * 5 >= n && mine * 2 <= n,
            "{member} reconciles {mine} of {n}"
        );
    }
    // replica-0's metrics: the ring, its ranges, the objects it caches, its handovers.
    let mine = owners.values().filter(|o| *o == "replica-0").count();
    let scraped = eventually_async(Duration::from_secs(10), || async {
        let text = get_metrics(metrics).await;
        let value = |name: &str| metric(&text, name);
        value("operator_rs_shard_members") == Some(3.0)
            && value("operator_rs_shard_objects{controller=\"stamp\"}") == Some(mine as f64)
            && value("operator_rs_shard_ranges").is_some_and(|r| r >= 1.0)
            && value("operator_rs_shard_handovers_total").is_some_and(|h| h >= 1.0)
            && value("operator_rs_shard_handover_duration_seconds_count").is_some_and(|h| h >= 1.0)
    })
    .await;
    assert!(
        scraped,
        "replica-0's shard metrics:\n{}",
        get_metrics(metrics).await
    );

    // kill -9: the others take its objects over once its Lease expired.
    r2.kill();
    let killed = Instant::now();
    let two = ["replica-0", "replica-1"];
    let handover = published(&leases, &two).await;
    assert!(
        handover <= Duration::from_millis(LEASE_SECONDS * 1000 + RENEW_MILLIS + 3_000),
        "a killed replica's ranges were taken over after {handover:?}"
    );
    let (_, before) = settle(&api, &two, "kill -9 of replica-2").await;
    eprintln!(
        "kill -9: new ring published after {handover:?}, all reconciled after {:?}",
        killed.elapsed()
    );

    // Scale 2 -> 3: about a third of the objects move, all to the new replica.
    let r3 = start("replica-3");
    let scaled = ["replica-0", "replica-1", "replica-3"];
    let (_, after) = settle(&api, &scaled, "scale 2 -> 3").await;
    let moved = before
        .iter()
        .filter(|(name, owner)| after[*name] != **owner)
        .count();
    assert!(moved * 5 >= n && moved * 2 <= n, "{moved} of {n} moved");
    assert!(
        before
            .iter()
            .all(|(name, owner)| after[name] == *owner || after[name] == "replica-3")
    );

    // A rolling restart: each replica in turn stopped gracefully, then a new one (a new pod:
    // a new identity) started, and every object reconciled by its owner before the next.
    let restart = Instant::now();
    let mut members = scaled.to_vec();
    let mut running = vec![r0, r1, r3];
    for (old, new) in scaled.into_iter().zip(successors) {
        let replica = running.remove(0);
        assert!(replica.stop(), "{old} exited non-zero after SIGTERM");
        members.retain(|m| *m != old);
        settle(&api, &members, &format!("rolling restart: {old} stopped")).await;
        running.push(start(new));
        members.push(new);
        settle(&api, &members, &format!("rolling restart: {new} started")).await;
    }
    eprintln!("rolling restart of 3 replicas: {:?}", restart.elapsed());

    // Graceful stop 3 -> 2: its Lease goes at once, no waiting for it to expire.
    let two = &successors[..2];
    let last = running.pop().unwrap();
    let stopping = Instant::now();
    assert!(last.stop(), "replica-6 exited non-zero after SIGTERM");
    published(&leases, two).await;
    let handover = stopping.elapsed();
    assert!(
        handover < Duration::from_secs(LEASE_SECONDS),
        "a gracefully stopped replica's ranges were taken over after {handover:?}"
    );
    settle(&api, two, "graceful stop of replica-6").await;

    // Each replica's owned watch (its selector, as the audit log shows it) receives the owned
    // ConfigMaps of its buckets only: about half of them each, all of those of its owners.
    let final_ring = Ring::new(&successors[..2], DEFAULT_VNODES);
    let children = api
        .list(&ListParams::default().labels(&format!("{}=true", example::OWNED_LABEL)))
        .await?
        .items;
    let parent_hash: BTreeMap<String, u64> = (parents.iter())
        .map(|p| (p.name_any(), fnv1a64(&p.uid().unwrap())))
        .collect();
    let mut received_total = 0;
    for member in &successors[..2] {
        let ranges = final_ring.owned(member);
        let selector = owned_selector(&ranges);
        let received = api
            .list(&ListParams::default().labels(&selector))
            .await?
            .items;
        let names: BTreeSet<String> = received.iter().map(|c| c.name_any()).collect();
        let buckets = ranges.buckets();
        for child in &children {
            let name = child.name_any();
            let parent = (name.strip_suffix("-owned")).or_else(|| name.strip_suffix("-extra"));
            let hash = parent_hash[parent.unwrap()];
            let in_bucket = buckets.contains(&bucket(hash));
            assert_eq!(names.contains(&child.name_any()), in_bucket, "{child:?}");
            assert!(
                !ranges.contains(hash) || in_bucket,
                "{member} misses {child:?}"
            );
        }
        eprintln!(
            "{member}'s owned watch receives {} of {} owned ConfigMaps",
            received.len(),
            children.len()
        );
        assert!(
            received.len() * 10 <= children.len() * 7,
            "{member}: {}",
            received.len()
        );
        received_total += received.len();
    }
    assert!(
        received_total * 10 <= children.len() * 11,
        "{received_total} received"
    );

    eprintln!("graceful stop: new ring published after {handover:?}");
    assert!(
        running.into_iter().all(Replica::stop),
        "a replica exited non-zero after SIGTERM"
    );

    audit(&audit_log, &namespace, server_side, &final_ring);
    Ok(())
}

/// The label selector of a replica's owned watch for `ranges`.
fn owned_selector(ranges: &operator_rs_runtime::shard::Ranges) -> String {
    let buckets = ranges.bucket_selector().unwrap();
    format!("{}=true,{buckets}", example::OWNED_LABEL)
}

/// The value of the query parameter `key` of `uri`, percent-decoded (`+` as a space).
fn query_param(uri: &str, key: &str) -> Option<String> {
    let query = uri.split_once('?')?.1;
    let raw = query
        .split('&')
        .find_map(|p| p.strip_prefix(&format!("{key}=")))?;
    let bytes = raw.as_bytes();
    let (mut out, mut i) = (Vec::new(), 0);
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// `GET /metrics` over plain HTTP (`--metrics-secure=false`).
async fn get_metrics(addr: std::net::SocketAddr) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut stream) = tokio::net::TcpStream::connect(addr).await else {
        return String::new();
    };
    let request = "GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n";
    let mut body = String::new();
    if stream.write_all(request.as_bytes()).await.is_ok() {
        let _ = stream.read_to_string(&mut body).await;
    }
    body
}

/// The value of the sample `name` (with its labels, as written) in `text`.
fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        line.strip_prefix(name)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

/// Every ConfigMap written by exactly one replica per ring generation (each write attributed
/// to the ring its writer last published: `testing::shard_audit`), stamped by that replica;
/// the replicas' watches of ConfigMaps carry a `shardSelector` exactly when the server filters.
fn audit(log: &Path, namespace: &str, server_side: bool, final_ring: &Ring) {
    let replicas = format!("system:serviceaccount:{namespace}:");
    let writes = ShardWrites::read(log, "configmaps", &replicas).unwrap();
    assert!(
        !writes.writes.is_empty(),
        "no write of a replica in the audit log"
    );
    let mut labelled = 0;
    for w in &writes.writes {
        let body = &w.event["requestObject"];
        if body.get("data").is_none() && w.object.ends_with("-extra") {
            // The label of an owned ConfigMap made without it, by its owner's replica.
            assert!(
                body["metadata"]["labels"][BUCKET_LABEL].is_string(),
                "{}",
                w.event
            );
            labelled += 1;
            continue;
        }
        let owner = body["data"]["shard-owner"].as_str();
        assert_eq!(
            owner,
            Some(w.replica.trim_start_matches(&replicas)),
            "{}",
            w.event
        );
    }
    assert!(labelled > 0, "no owned ConfigMap was labelled");
    let overlaps = writes.overlaps();
    assert!(overlaps.is_empty(), "{}", overlaps.join("\n"));
    // A generation is its members' ring: {0}, {0,1,2}, {0,1}, {0,1,3}, the rolling restart's
    // six rings, then {4,5} (and {0,1} or {0,2} if one of the two joined first).
    let generations = writes.generations();
    assert!(
        generations.len() >= 8,
        "ring generations written in: {generations:?}"
    );
    let text = std::fs::read_to_string(log).unwrap();
    let (mut selected, mut unselected) = (0, BTreeSet::new());
    // Each replica's owned watches' label selectors, in order.
    let mut owned_watches: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in text.lines() {
        let event: serde_json::Value = serde_json::from_str(line).unwrap();
        let user = event["user"]["username"].as_str().unwrap_or_default();
        if event["objectRef"]["namespace"] != namespace || !user.starts_with(&replicas) {
            continue;
        }
        // Every watch (lists also go without: the controller's start check).
        let uri = event["requestURI"].as_str().unwrap_or_default();
        let labels = query_param(uri, "labelSelector").unwrap_or_default();
        if event["verb"] == "watch"
            && event["stage"] == "ResponseStarted"
            && labels.starts_with(example::OWNED_LABEL)
            && !labels.contains('!')
        {
            let replica = user.trim_start_matches(&replicas).to_owned();
            owned_watches
                .entry(replica)
                .or_default()
                .push(labels.clone());
        }
        // The reconciled kind's watches (the owned kind's are selected by label).
        if event["verb"] == "watch" && labels.starts_with("shard-example=true") {
            if uri.contains("shardSelector=") {
                selected += 1;
            } else {
                unselected.insert(user.trim_start_matches(&replicas).to_owned());
            }
        }
    }
    // The owned watch follows the ring: replica-0 alone watched every labelled object, then its
    // buckets in each ring it joined; the last two replicas' last ones, theirs in the last ring.
    let ring_of = |members: &[&str]| Ring::new(members, DEFAULT_VNODES);
    let watched = |replica: &str| owned_watches.get(replica).cloned().unwrap_or_default();
    let alone = format!("{}=true,{BUCKET_LABEL}", example::OWNED_LABEL);
    assert!(
        watched("replica-0").contains(&alone),
        "{:?}",
        watched("replica-0")
    );
    for members in [
        &["replica-0", "replica-1", "replica-2"][..],
        &["replica-0", "replica-1"],
    ] {
        let expected = owned_selector(&ring_of(members).owned("replica-0"));
        assert!(watched("replica-0").contains(&expected), "{members:?}");
    }
    for member in final_ring.members() {
        let expected = owned_selector(&final_ring.owned(member));
        assert_eq!(watched(member).last(), Some(&expected), "{member}");
    }
    eprintln!(
        "audit: {} writes ({labelled} labels), {} (object, generation) pairs, one writer each; {} generations; watches with shardSelector: {selected}, without (by): {unselected:?}; owned watches: {}",
        writes.writes.len(),
        writes.writers().len(),
        generations.len(),
        owned_watches.values().map(Vec::len).sum::<usize>()
    );
    if server_side {
        // Only replica-0, alone at first, watched without one: it owned the whole space.
        assert!(selected > 0, "no watch carried a shardSelector");
        assert!(
            unselected.iter().all(|r| r == "replica-0"),
            "watches without a shardSelector by {unselected:?}"
        );
    } else {
        assert_eq!(
            selected, 0,
            "a shardSelector was sent to a server that ignores it"
        );
    }
}
