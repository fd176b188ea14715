//! The scale lab's machinery, kind-agnostic: objects created in parallel, the time from a
//! spec change until the status reports it (`observedGeneration`), a process's memory from
//! `/proc`, the figures of a run ([`Figures`]) and the budgets a project keeps for them
//! ([`Budgets`], its `scale-budgets.yaml`). A generated project's `make scale-test` drives it
//! through [`e2e::scale_lab`](super::e2e::scale_lab); the runtime's benches use it directly.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, ListParams, Patch, PatchParams, WatchEvent, WatchParams};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The label of the objects a scale run creates (the harness lists and deletes by it).
pub const AT_SCALE: &str = "e2e.operator-rs.dev/at-scale";
/// The field manager of what a scale run applies.
pub const FIELD_MANAGER: &str = "scale";
/// How many requests a scale run keeps in flight (creations, changes, deletions).
pub const PARALLEL: usize = 16;
/// `SCALE_N`'s default: a run of a minute or so on a laptop.
pub const DEFAULT_N: usize = 100;
/// The project file of the budgets.
pub const BUDGETS_FILE: &str = "scale-budgets.yaml";

/// What the environment asks of the scale lab: `SCALE_TEST=1` runs it on a control plane of
/// its own (envtest, `KUBEBUILDER_ASSETS`) with `SCALE_N` objects of each kind (default
/// [`DEFAULT_N`]) and `SCALE_MANAGERS` manager processes (default 1); `None` when
/// `SCALE_TEST` is unset, empty or `0`.
///
/// # Errors
///
/// A `SCALE_N` or `SCALE_MANAGERS` that is not a positive number, with what was given.
pub fn requested() -> Result<Option<Request>, String> {
    let on = std::env::var("SCALE_TEST").unwrap_or_default();
    if on.is_empty() || on == "0" {
        return Ok(None);
    }
    let number = |name: &str, default: usize| -> Result<usize, String> {
        match std::env::var(name).ok().filter(|v| !v.is_empty()) {
            None => Ok(default),
            Some(v) => v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                format!("{name}={v:?}: must be a positive number of objects, e.g. {name}=200")
            }),
        }
    };
    let n = number("SCALE_N", DEFAULT_N)?;
    let managers = number("SCALE_MANAGERS", 1)?;
    Ok(Some(Request { n, managers }))
}

/// A scale run's size (see [`requested`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Objects of each kind.
    pub n: usize,
    /// Manager processes. Today they share the leader election: one reconciles, the others
    /// stand by (their memory is reported too); sharded managers will split the objects.
    pub managers: usize,
}

/// Server-side applies `objects`, [`PARALLEL`] at a time, labelled [`AT_SCALE`]; returns the
/// time it took.
///
/// # Panics
///
/// When the API server refuses one, with its answer.
pub async fn create_all<K>(api: &Api<K>, objects: impl Iterator<Item = K>) -> Duration
where
    K: Resource + Clone + Serialize + DeserializeOwned + fmt::Debug,
{
    let started = Instant::now();
    let params = &PatchParams::apply(FIELD_MANAGER).force();
    futures::stream::iter(objects)
        .map(|mut obj| async move {
            obj.labels_mut().insert(AT_SCALE.into(), "true".into());
            api.patch(&obj.name_any(), params, &Patch::Apply(&obj))
                .await
        })
        .buffer_unordered(PARALLEL)
        .try_collect::<Vec<_>>()
        .await
        .expect("creating the objects");
    started.elapsed()
}

/// The label selector of the objects of a scale run.
pub fn at_scale() -> ListParams {
    ListParams::default().labels(&format!("{AT_SCALE}=true"))
}

/// Changes the spec of every object of `names` with the merge patch `change(i)`
/// ([`PARALLEL`] at a time) and returns, for each, the time from sending its change until a
/// watch saw its status report the generation the change made (`status.observedGeneration`),
/// in the order the changes were sent.
///
/// # Panics
///
/// When a change is refused, leaves the generation as it was (the patch changed nothing the
/// API server counts), or is not observed within `timeout`.
pub async fn observed_after_change<K>(
    api: &Api<K>,
    names: &[String],
    change: impl Fn(usize) -> Value,
    timeout: Duration,
) -> Vec<Duration>
where
    K: Resource + Clone + Serialize + DeserializeOwned + fmt::Debug + Send + 'static,
{
    let list = api.list(&at_scale()).await.expect("listing the objects");
    let version = list.metadata.resource_version.unwrap_or_default();
    let before: BTreeMap<String, i64> = list
        .items
        .iter()
        .map(|obj| (obj.name_any(), obj.meta().generation.unwrap_or(0)))
        .collect();
    let params = WatchParams::default().labels(&format!("{AT_SCALE}=true"));
    // Every status the watch sees, by name: (when, observedGeneration).
    type Seen = BTreeMap<String, Vec<(Instant, i64)>>;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Seen::new()));
    let watch = {
        let (api, seen) = (api.clone(), seen.clone());
        let stream = api
            .watch(&params, &version)
            .await
            .expect("watching the objects");
        tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            while let Some(Ok(event)) = stream.next().await {
                if let WatchEvent::Modified(obj) | WatchEvent::Added(obj) = event {
                    let json = serde_json::to_value(&obj).unwrap_or_default();
                    if let Some(observed) = json["status"]["observedGeneration"].as_i64() {
                        let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
                        seen.entry(obj.name_any())
                            .or_default()
                            .push((Instant::now(), observed));
                    }
                }
            }
        })
    };
    let (patch, before) = (PatchParams::default(), &before);
    let sent: Vec<(Instant, i64)> = futures::stream::iter(names.iter().enumerate())
        .map(|(i, name)| {
            let (api, patch, change) = (api, &patch, &change);
            async move {
                let sent = Instant::now();
                let changed = api.patch(name, patch, &Patch::Merge(change(i))).await;
                let changed = changed.unwrap_or_else(|e| panic!("changing {name}: {e}"));
                let generation = changed.meta().generation.unwrap_or(0);
                let old = before.get(name).copied().unwrap_or(0);
                assert!(
                    generation > old,
                    "changing {name} left its generation at {old}: the change must touch its spec"
                );
                (sent, generation)
            }
        })
        .buffered(PARALLEL)
        .collect()
        .await;
    // Poll until the watch saw every change observed.
    let deadline = Instant::now() + timeout;
    let observed_at = |seen: &Seen| -> Option<Vec<Duration>> {
        let at = names.iter().zip(&sent).map(|(name, (sent, generation))| {
            let seen = seen.get(name)?;
            let (when, _) = seen.iter().find(|(_, o)| o >= generation)?;
            Some(when.saturating_duration_since(*sent))
        });
        at.collect()
    };
    loop {
        let done = observed_at(&seen.lock().unwrap_or_else(|e| e.into_inner()));
        if let Some(took) = done {
            watch.abort();
            return took;
        }
        let ended = watch.is_finished();
        if ended || Instant::now() > deadline {
            watch.abort();
            let seen = seen.lock().unwrap_or_else(|e| e.into_inner());
            let missing = names.iter().zip(&sent).find(|(name, (_, generation))| {
                let seen = seen.get(*name).map(Vec::as_slice).unwrap_or_default();
                !seen.iter().any(|(_, o)| o >= generation)
            });
            let (name, (_, generation)) = missing.expect("one is missing");
            panic!(
                "not every change of {} objects was observed within {timeout:?} (the watch {}): \
                 {name}'s status never reported generation {generation}",
                names.len(),
                if ended { "ended" } else { "ran" }
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The `p`-th percentile (0 to 100, nearest rank) of `samples`; zero for none.
///
/// ```
/// use std::time::Duration;
/// use operator_rs_runtime::testing::scale::percentile;
///
/// let ms = |n| Duration::from_millis(n);
/// let samples: Vec<_> = (1..=100).map(ms).collect();
/// assert_eq!(percentile(&samples, 99.0), ms(99));
/// assert_eq!(percentile(&samples, 50.0), ms(50));
/// assert_eq!(percentile(&[], 99.0), Duration::ZERO);
/// ```
pub fn percentile(samples: &[Duration], p: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted
        .get(rank.saturating_sub(1).min(sorted.len().saturating_sub(1)))
        .copied()
        .unwrap_or_default()
}

/// A memory figure of process `pid` from `/proc/<pid>/status`, in bytes: `VmHWM` (its
/// resident high-water mark), `VmRSS` (resident now); 0 where there is no such file or field.
pub fn memory(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let line = status.lines().find(|line| line.starts_with(field));
    let kib = line.and_then(|line| line.split_whitespace().nth(1)?.parse::<u64>().ok());
    kib.unwrap_or(0) * 1024
}

/// The figures of one kind's scale run, printed as a report ([`fmt::Display`]) and held to
/// [`Budgets`] with [`Figures::exceeded`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    /// The kind.
    pub kind: String,
    /// Objects of the kind.
    pub n: usize,
    /// Manager processes.
    pub managers: usize,
    /// Creating them (with no manager running).
    pub created: Duration,
    /// From the managers' start until every object is reconciled.
    pub settle: Duration,
    /// The 50th and 99th percentiles of the time from a spec change to its status reporting
    /// it (`observedGeneration`); `None` when the run changed no spec.
    pub observed_p50: Option<Duration>,
    /// See `observed_p50`.
    pub observed_p99: Option<Duration>,
    /// The resident memory of an idle manager (no object of the kind), in bytes.
    pub idle_memory: u64,
    /// The highest peak (`VmHWM`) of the managers once settled, in bytes.
    pub peak_memory: u64,
    /// Objects whose `resourceVersion` a restarted manager changed, once settled.
    pub restart_writes: usize,
    /// How long the restarted manager took to reconcile them all.
    pub restart: Duration,
    /// Deleting them all until none is left.
    pub deletion: Duration,
}

impl Figures {
    /// `(peak - idle) / n`: what each cached object costs.
    pub fn bytes_per_object(&self) -> u64 {
        self.peak_memory.saturating_sub(self.idle_memory) / self.n.max(1) as u64
    }

    /// The budgets of `budgets` (for this kind) these figures exceed, one line each (empty:
    /// within budget).
    pub fn exceeded(&self, budgets: &Budgets) -> Vec<String> {
        let budget = budgets.for_kind(&self.kind);
        let n = self.n;
        let mut over = Vec::new();
        let mut time = |what: &str, took: Duration, budget: Option<TimeBudget>| {
            if let Some(budget) = budget
                && took > budget.allowed(n)
            {
                over.push(format!(
                    "{what}: {took:.1?} > {:.1?} ({} s + {} ms x {n} objects)",
                    budget.allowed(n),
                    budget.seconds,
                    budget.ms_per_object
                ));
            }
        };
        time("settle", self.settle, budget.settle);
        time("deletion", self.deletion, budget.deletion);
        if let (Some(p99), Some(ms)) = (self.observed_p99, budget.p99_observed_ms)
            && p99 > Duration::from_secs_f64(ms / 1000.0)
        {
            over.push(format!("p99ObservedMs: {p99:.1?} > {ms} ms"));
        }
        if let Some(budget) = budget.peak_memory
            && self.peak_memory > budget.allowed(n)
        {
            let mib = |b: u64| b as f64 / 1024.0 / 1024.0;
            over.push(format!(
                "peakMemory: {:.1} MiB > {:.1} MiB ({} MiB + {} bytes x {n} objects; {} bytes \
                 per cached object over an idle manager's {:.1} MiB)",
                mib(self.peak_memory),
                mib(budget.allowed(n)),
                budget.mib,
                budget.bytes_per_object,
                self.bytes_per_object(),
                mib(self.idle_memory),
            ));
        }
        if let Some(max) = budget.restart_writes
            && self.restart_writes > max
        {
            over.push(format!(
                "restartWrites: a settled restart wrote {} objects > {max}",
                self.restart_writes
            ));
        }
        over
    }
}

impl fmt::Display for Figures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mib = |b: u64| b as f64 / 1024.0 / 1024.0;
        let (kind, n) = (&self.kind, self.n);
        let rate = n as f64 / self.settle.as_secs_f64().max(1e-9);
        writeln!(
            f,
            "scale-test {kind} x {n} ({} manager process(es)):",
            self.managers
        )?;
        writeln!(
            f,
            "- created in {:.1?} with no manager running",
            self.created
        )?;
        writeln!(f, "- settle: {:.1?} ({rate:.0}/s)", self.settle)?;
        match (self.observed_p50, self.observed_p99) {
            (Some(p50), Some(p99)) => writeln!(
                f,
                "- spec change to status observed: p50 {p50:.1?}, p99 {p99:.1?}"
            )?,
            _ => writeln!(
                f,
                "- spec change to status observed: not measured (no change given)"
            )?,
        }
        writeln!(
            f,
            "- memory: peak {:.1} MiB, idle {:.1} MiB, {} bytes per cached object",
            mib(self.peak_memory),
            mib(self.idle_memory),
            self.bytes_per_object()
        )?;
        writeln!(
            f,
            "- settled restart: {} writes, all reconciled in {:.1?}",
            self.restart_writes, self.restart
        )?;
        write!(f, "- deletion of all {n}: {:.1?}", self.deletion)
    }
}

/// A time budget: `seconds` plus `msPerObject` for each object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TimeBudget {
    /// The fixed part (process start, caches' first list).
    #[serde(default)]
    pub seconds: f64,
    /// The part that grows with the objects.
    #[serde(default)]
    pub ms_per_object: f64,
}

impl TimeBudget {
    /// The time allowed for `n` objects.
    pub fn allowed(&self, n: usize) -> Duration {
        Duration::from_secs_f64(self.seconds + self.ms_per_object * n as f64 / 1000.0)
    }
}

/// A memory budget: `mib` plus `bytesPerObject` for each object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryBudget {
    /// The fixed part (an idle manager), in MiB.
    #[serde(default)]
    pub mib: f64,
    /// The part that grows with the cached objects.
    #[serde(default)]
    pub bytes_per_object: f64,
}

impl MemoryBudget {
    /// The bytes allowed for `n` objects.
    pub fn allowed(&self, n: usize) -> u64 {
        (self.mib * 1024.0 * 1024.0 + self.bytes_per_object * n as f64) as u64
    }
}

/// One set of budgets: every field optional (unset: not checked).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Budget {
    /// From the manager's start until every object is reconciled.
    pub settle: Option<TimeBudget>,
    /// The 99th percentile of the time from a spec change to its status reporting it.
    pub p99_observed_ms: Option<f64>,
    /// The managers' peak resident memory (`VmHWM`).
    pub peak_memory: Option<MemoryBudget>,
    /// Objects a restarted manager may write once they are settled (level-based, idempotent
    /// reconciles: 0).
    pub restart_writes: Option<usize>,
    /// Deleting every object until none is left.
    pub deletion: Option<TimeBudget>,
    /// Per kind, in the file's top level only (see [`Budgets`]).
    #[serde(default)]
    kinds: BTreeMap<String, Budget>,
}

impl Budget {
    /// `self`, with what it leaves unset taken from `base`.
    fn over(&self, base: &Budget) -> Budget {
        Budget {
            settle: self.settle.or(base.settle),
            p99_observed_ms: self.p99_observed_ms.or(base.p99_observed_ms),
            peak_memory: self.peak_memory.or(base.peak_memory),
            restart_writes: self.restart_writes.or(base.restart_writes),
            deletion: self.deletion.or(base.deletion),
            kinds: BTreeMap::new(),
        }
    }
}

/// A project's `scale-budgets.yaml`: budgets for every kind (top level), and per kind
/// (`kinds: {<Kind>: {...}}`), which override them field by field.
///
/// ```
/// use operator_rs_runtime::testing::scale::Budgets;
///
/// let budgets = Budgets::parse("scale-budgets.yaml", "
/// settle: {seconds: 30, msPerObject: 50}
/// restartWrites: 0
/// kinds:
///   Memcached:
///     peakMemory: {mib: 64, bytesPerObject: 4096}
/// ").unwrap();
/// assert_eq!(budgets.for_kind("Memcached").peak_memory.unwrap().allowed(1024), 68 << 20);
/// assert_eq!(budgets.for_kind("Memcached").restart_writes, Some(0));
/// assert_eq!(budgets.for_kind("Guestbook").peak_memory, None);
///
/// let typo = Budgets::parse("scale-budgets.yaml", "settle: {second: 30}\n").unwrap_err();
/// assert!(typo.contains("scale-budgets.yaml:1:"), "{typo}");
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Budgets {
    /// The top level, with `kinds`.
    all: Budget,
}

/// An example of [`BUDGETS_FILE`], for error messages.
const BUDGETS_EXAMPLE: &str = "settle: {seconds: 30, msPerObject: 50}\n\
    p99ObservedMs: 5000\npeakMemory: {mib: 64, bytesPerObject: 16384}\nrestartWrites: 0\n\
    deletion: {seconds: 30, msPerObject: 50}\nkinds:\n  Memcached:\n    peakMemory: {mib: 96}";

impl Budgets {
    /// Reads `dir`'s [`BUDGETS_FILE`]; a project without one has no budget.
    ///
    /// # Errors
    ///
    /// When it cannot be read or is not budgets: `file:line:col`, what was wrong and a valid
    /// example.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let path = dir.join(BUDGETS_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::parse(&path.display().to_string(), &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// Parses the text of a budgets file named `file` (see [`Budgets::load`]).
    ///
    /// # Errors
    ///
    /// See [`Budgets::load`].
    pub fn parse(file: &str, text: &str) -> Result<Self, String> {
        let example = || {
            format!(
                "(every key optional, times as seconds plus milliseconds per object, e.g.:\n{BUDGETS_EXAMPLE})"
            )
        };
        let parsed = serde_saphyr::from_str::<Option<Budget>>(text);
        let all = parsed.map(Option::unwrap_or_default).map_err(|e| {
            let at = e
                .location()
                .map(|l| format!("{file}:{}:{}", l.line(), l.column()))
                .unwrap_or_else(|| file.to_string());
            format!("{at}: not scale budgets: {e}\n{}", example())
        })?;
        if let Some((kind, _)) = all.kinds.iter().find(|(_, b)| !b.kinds.is_empty()) {
            return Err(format!(
                "{file}: not scale budgets: `kinds` inside kinds.{kind}: kinds are listed at the \
                 top level only\n{}",
                example()
            ));
        }
        Ok(Self { all })
    }

    /// The budget of `kind`: its own fields, else the top level's.
    pub fn for_kind(&self, kind: &str) -> Budget {
        let own = self.all.kinds.get(kind).cloned().unwrap_or_default();
        own.over(&self.all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures() -> Figures {
        Figures {
            kind: "Memcached".into(),
            n: 100,
            managers: 1,
            settle: Duration::from_secs(8),
            observed_p50: Some(Duration::from_millis(100)),
            observed_p99: Some(Duration::from_millis(900)),
            idle_memory: 10 << 20,
            peak_memory: 20 << 20,
            restart_writes: 0,
            deletion: Duration::from_secs(4),
            ..Figures::default()
        }
    }

    #[test]
    fn figures_within_their_budgets_pass_and_each_exceeded_budget_is_named() {
        let budgets = Budgets::parse(
            "b.yaml",
            "settle: {seconds: 5, msPerObject: 50}\np99ObservedMs: 1000\n\
             peakMemory: {mib: 16, bytesPerObject: 50000}\nrestartWrites: 0\ndeletion: {seconds: 5}\n",
        )
        .unwrap();
        assert_eq!(figures().exceeded(&budgets), Vec::<String>::new());
        let mut worse = figures();
        worse.settle = Duration::from_secs(11);
        worse.restart_writes = 3;
        worse.peak_memory = 40 << 20;
        let over = worse.exceeded(&budgets);
        assert_eq!(over.len(), 3, "{over:?}"); // settle, peak memory, writes
        assert!(over[0].starts_with("settle: 11.0s > 10.0s"), "{over:?}");
        assert!(
            over.iter().any(|o| o.starts_with("restartWrites")),
            "{over:?}"
        );
    }

    #[test]
    fn a_kind_overrides_the_top_level_field_by_field() {
        let budgets = Budgets::parse(
            "b.yaml",
            "peakMemory: {mib: 10}\nrestartWrites: 0\nkinds:\n  Memcached:\n    peakMemory: {mib: 30}\n",
        )
        .unwrap();
        assert!(figures().exceeded(&budgets).is_empty());
        let mut other = figures();
        other.kind = "Guestbook".into();
        assert_eq!(other.exceeded(&budgets).len(), 1);
    }

    #[test]
    fn a_wrong_budget_file_says_where_and_shows_an_example() {
        let e = Budgets::parse("b.yaml", "restartWrites: 0\npeakMemoryMiB: 10\n").unwrap_err();
        assert!(e.starts_with("b.yaml:2:1: not scale budgets"), "{e}");
        assert!(
            e.contains("peakMemory: {mib: 64, bytesPerObject: 16384}"),
            "{e}"
        );
        let e = Budgets::parse("b.yaml", "kinds:\n  A:\n    kinds: {B: {}}\n").unwrap_err();
        assert!(e.contains("top level only"), "{e}");
        let e = Budgets::parse("b.yaml", "settle: fast\n").unwrap_err();
        assert!(e.starts_with("b.yaml:1:"), "{e}");
        assert_eq!(Budgets::parse("b.yaml", "").unwrap(), Budgets::default());
    }

    #[test]
    fn the_report_gives_every_figure() {
        let report = figures().to_string();
        for figure in [
            "settle: 8.0s",
            "p99 900.0ms",
            "peak 20.0 MiB",
            "104857 bytes per cached object",
            "0 writes",
            "deletion of all 100: 4.0s",
        ] {
            assert!(report.contains(figure), "{figure} not in\n{report}");
        }
    }
}
