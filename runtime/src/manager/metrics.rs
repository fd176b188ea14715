//! Metrics: the Prometheus registry and the `/metrics` endpoint (OpenMetrics text format,
//! which Prometheus scrapes natively).
//!
//! Names follow controller-runtime so existing dashboards and alerts carry over:
//!
//! | metric | type | labels | meaning |
//! |---|---|---|---|
//! | `controller_runtime_reconcile_total` | counter | `controller`, `result` (`success`/`error`) | finished reconciles |
//! | `controller_runtime_reconcile_errors_total` | counter | `controller`, `reason` | reconcile errors by kind (bounded: an error variant, never its text) |
//! | `controller_runtime_reconcile_time_seconds` | histogram | `controller` | reconcile duration |
//! | `controller_runtime_max_concurrent_reconciles` | gauge | `controller` | the `--concurrency` in force |
//! | `controller_runtime_active_workers` | gauge | `controller` | reconciles running now |
//! | `leader_election_master_status` | gauge | `name` (the Lease) | 1 while this replica leads; only with `--leader-elect` |
//! | `process_resident_memory_bytes` | gauge | | resident memory of the manager (Linux) |
//!
//! The webhook server's series are in [`crate::webhook::metrics`].
//!
//! Differences from controller-runtime: `result` has no `requeue`/`requeue_after` values, and
//! `controller_runtime_reconcile_errors_total` has the extra `reason` label (sum it away to get
//! controller-runtime's series).
//!
//! A reconcile counts as `result="success"` unless its [`ReconcileTimer`] was marked with
//! [`ReconcileTimer::set_error`]; [`ControllerMetrics::record_error`] (called from the error
//! policy) only counts the reason.

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

use crate::shard::ShardMetrics;
use crate::webhook::metrics::WebhookMetrics;

/// `Content-Type` of the `/metrics` response.
pub const CONTENT_TYPE_OPENMETRICS: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Upper bounds (seconds) of the reconcile duration buckets.
const DURATION_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabels {
    controller: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    controller: &'static str,
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    controller: &'static str,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LeaseLabels {
    name: String,
}

type DurationFamily = Family<ControllerLabels, Histogram, fn() -> Histogram>;

fn duration_histogram() -> Histogram {
    Histogram::new(DURATION_BUCKETS)
}

/// All metrics of the manager, cheap to clone.
#[derive(Clone, Debug)]
pub struct Metrics {
    registry: Arc<Registry>,
    reconciles: Family<ResultLabels, Counter>,
    errors: Family<ErrorLabels, Counter>,
    durations: DurationFamily,
    max_concurrency: Family<ControllerLabels, Gauge>,
    active: Family<ControllerLabels, Gauge>,
    leader: Family<LeaseLabels, Gauge>,
    webhooks: WebhookMetrics,
    /// A sharded manager's (registered only by [`Metrics::sharded`]).
    shard: Option<ShardMetrics>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A fresh registry with every metric family registered.
    pub fn new() -> Self {
        Self::build(false)
    }

    /// [`Metrics::new`] with a sharded manager's metrics (`operator_rs_shard_*`) too.
    pub(crate) fn sharded() -> Self {
        Self::build(true)
    }

    fn build(sharded: bool) -> Self {
        let reconciles = Family::<ResultLabels, Counter>::default();
        let errors = Family::<ErrorLabels, Counter>::default();
        let durations =
            DurationFamily::new_with_constructor(duration_histogram as fn() -> Histogram);
        let max_concurrency = Family::<ControllerLabels, Gauge>::default();
        let active = Family::<ControllerLabels, Gauge>::default();
        let leader = Family::<LeaseLabels, Gauge>::default();

        let mut registry = Registry::default();
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            reconciles.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller and reason",
            errors.clone(),
        );
        registry.register_with_unit(
            "controller_runtime_reconcile_time",
            "Length of time per reconciliation per controller",
            Unit::Seconds,
            durations.clone(),
        );
        registry.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            max_concurrency.clone(),
        );
        registry.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            active.clone(),
        );
        registry.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master",
            leader.clone(),
        );
        registry.register_collector(Box::new(ProcessCollector));
        let webhooks = WebhookMetrics::register(&mut registry);
        let shard = sharded.then(|| ShardMetrics::register(&mut registry));

        Self {
            registry: Arc::new(registry),
            reconciles,
            errors,
            durations,
            max_concurrency,
            active,
            leader,
            webhooks,
            shard,
        }
    }

    /// A sharded manager's metrics, if these are one's.
    pub(crate) fn shard(&self) -> Option<ShardMetrics> {
        self.shard.clone()
    }

    /// The webhook server's metrics (see [`crate::webhook::metrics`]).
    pub fn webhooks(&self) -> WebhookMetrics {
        self.webhooks.clone()
    }

    /// The handles of one controller; its series start at zero so dashboards show them at once.
    pub fn controller(&self, name: &'static str, concurrency: u16) -> ControllerMetrics {
        for result in ["success", "error"] {
            drop(self.reconciles.get_or_create(&ResultLabels {
                controller: name,
                result,
            }));
        }
        drop(
            self.durations
                .get_or_create(&ControllerLabels { controller: name }),
        );
        self.max_concurrency
            .get_or_create(&ControllerLabels { controller: name })
            .set(i64::from(concurrency));
        let labels = ControllerLabels { controller: name };
        ControllerMetrics {
            controller: name,
            reconciles: self.reconciles.clone(),
            errors: self.errors.clone(),
            durations: self.durations.clone(),
            active: self.active.get_or_create(&labels).clone(),
        }
    }

    /// The `leader_election_master_status{name=lease}` gauge, created at 0.
    pub fn leader_status(&self, lease: &str) -> Gauge {
        self.leader
            .get_or_create(&LeaseLabels {
                name: lease.to_owned(),
            })
            .clone()
    }

    /// Everything in OpenMetrics text format.
    pub fn encode(&self) -> String {
        let mut out = String::with_capacity(4096);
        prometheus_client::encoding::text::encode(&mut out, &self.registry)
            .expect("writing to a String cannot fail");
        out
    }
}

/// The metric handles of one controller (see the module docs for the series).
#[derive(Clone, Debug)]
pub struct ControllerMetrics {
    controller: &'static str,
    reconciles: Family<ResultLabels, Counter>,
    errors: Family<ErrorLabels, Counter>,
    durations: DurationFamily,
    /// Reconciles running now.
    active: Gauge,
}

impl ControllerMetrics {
    /// Starts timing one reconcile, which counts as active until the timer is dropped; dropping
    /// it observes the duration and counts the reconcile.
    pub fn reconcile_started(&self) -> ReconcileTimer {
        self.active.inc();
        ReconcileTimer {
            metrics: self.clone(),
            started: Instant::now(),
            result: "success",
        }
    }

    /// Counts one reconcile error. `reason` must come from a small fixed set (an error
    /// variant such as `"KubeError"`), never from the error's text.
    pub fn record_error(&self, reason: &'static str) {
        self.errors
            .get_or_create(&ErrorLabels {
                controller: self.controller,
                reason,
            })
            .inc();
    }

    /// Reconciles counted so far with `result` (`"success"` or `"error"`).
    pub fn reconciles(&self, result: &'static str) -> u64 {
        self.reconciles
            .get_or_create(&ResultLabels {
                controller: self.controller,
                result,
            })
            .get()
    }

    /// Reconciles running now.
    pub fn active_workers(&self) -> i64 {
        self.active.get()
    }

    /// Errors counted so far with `reason`.
    pub fn errors(&self, reason: &'static str) -> u64 {
        self.errors
            .get_or_create(&ErrorLabels {
                controller: self.controller,
                reason,
            })
            .get()
    }
}

/// Times one reconcile; see [`ControllerMetrics::reconcile_started`].
#[must_use = "the reconcile is measured when the timer is dropped"]
#[derive(Debug)]
pub struct ReconcileTimer {
    metrics: ControllerMetrics,
    started: Instant,
    result: &'static str,
}

impl ReconcileTimer {
    /// Counts this reconcile as `result="error"` instead of `"success"`.
    pub fn set_error(&mut self) {
        self.result = "error";
    }
}

impl Drop for ReconcileTimer {
    fn drop(&mut self) {
        self.metrics.active.dec();
        let controller = self.metrics.controller;
        self.metrics
            .durations
            .get_or_create(&ControllerLabels { controller })
            .observe(self.started.elapsed().as_secs_f64());
        self.metrics
            .reconciles
            .get_or_create(&ResultLabels {
                controller,
                result: self.result,
            })
            .inc();
    }
}

/// `process_resident_memory_bytes` (from `/proc/self/status`) and `process_cpu_seconds_total`
/// (from `/proc/self/stat`), read at scrape time, as Prometheus's process collector names them
/// (the Grafana dashboards `operator-rs generate dashboards` writes chart both).
#[derive(Debug)]
struct ProcessCollector;

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        if let Some(rss) = resident_memory_bytes() {
            let gauge = ConstGauge::new(rss as i64);
            let metric = encoder.encode_descriptor(
                "process_resident_memory_bytes",
                "Resident memory size in bytes",
                None,
                gauge.metric_type(),
            )?;
            debug_assert!(matches!(gauge.metric_type(), MetricType::Gauge));
            gauge.encode(metric)?;
        }
        if let Some(cpu) = cpu_seconds() {
            let counter = ConstCounter::new(cpu);
            let metric = encoder.encode_descriptor(
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds",
                None,
                counter.metric_type(),
            )?;
            counter.encode(metric)?;
        }
        Ok(())
    }
}

/// User and system CPU time of this process, in seconds, if `/proc` is there (Linux's clock
/// ticks are USER_HZ, 100 a second, on every architecture).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // After the command name (in parentheses, which may hold spaces): state is field 3, utime
    // and stime fields 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// Resident set size of this process, if `/proc` is there.
pub fn resident_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The router serving `GET /metrics`.
pub fn router(metrics: Metrics) -> Router {
    Router::new().route(
        "/metrics",
        get(move || {
            let body = metrics.encode();
            async move { ([(CONTENT_TYPE, CONTENT_TYPE_OPENMETRICS)], body).into_response() }
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manager::testing::http_get;
    use std::collections::BTreeMap;

    /// One parsed sample line: `name{labels} value`.
    #[derive(Debug)]
    struct Sample {
        name: String,
        labels: BTreeMap<String, String>,
        value: f64,
    }

    /// A small parser for the text exposition format: `# TYPE` lines and samples.
    fn parse(text: &str) -> (BTreeMap<String, String>, Vec<Sample>) {
        let mut types = BTreeMap::new();
        let mut samples = Vec::new();
        assert_eq!(text.lines().last(), Some("# EOF"), "missing # EOF:\n{text}");
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').expect("# TYPE name kind");
                assert!(
                    types.insert(name.to_owned(), kind.to_owned()).is_none(),
                    "duplicate TYPE for {name}"
                );
            } else if line.starts_with('#') {
                assert!(
                    line.starts_with("# HELP ") || line.starts_with("# UNIT ") || line == "# EOF",
                    "bad comment line {line:?}"
                );
            } else {
                let (series, value) = line.rsplit_once(' ').expect("sample line has a value");
                let value: f64 = value
                    .parse()
                    .unwrap_or_else(|_| panic!("bad value in {line:?}"));
                let (name, labels) = match series.split_once('{') {
                    Some((name, rest)) => {
                        let body = rest.strip_suffix('}').expect("labels end with }");
                        let labels = body
                            .split(',')
                            .filter(|p| !p.is_empty())
                            .map(|pair| {
                                let (k, v) = pair.split_once('=').expect("label k=v");
                                let v = v.strip_prefix('"').and_then(|v| v.strip_suffix('"'));
                                (k.to_owned(), v.expect("quoted label value").to_owned())
                            })
                            .collect();
                        (name.to_owned(), labels)
                    }
                    None => (series.to_owned(), BTreeMap::new()),
                };
                assert!(
                    types.keys().any(|family| name.starts_with(family.as_str())),
                    "sample {name} before its # TYPE"
                );
                samples.push(Sample {
                    name,
                    labels,
                    value,
                });
            }
        }
        (types, samples)
    }

    fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        samples
            .iter()
            .find(|s| {
                s.name == name
                    && s.labels.len() == labels.len()
                    && labels
                        .iter()
                        .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
            })
            .map(|s| s.value)
    }

    #[tokio::test]
    async fn metrics_endpoint_serves_parseable_controller_runtime_metrics() {
        let metrics = Metrics::new();
        let widget = metrics.controller("widget", 4);
        let _idle = metrics.controller("gadget", 2);
        metrics.leader_status("test-lease").set(1);

        drop(widget.reconcile_started());
        let mut failed = widget.reconcile_started();
        failed.set_error();
        drop(failed);
        widget.record_error("KubeError");
        // One reconcile still running when scraped.
        let running = widget.reconcile_started();
        assert_eq!(widget.active_workers(), 1);
        assert_eq!(widget.reconciles("success"), 1);
        assert_eq!(widget.reconciles("error"), 1);
        assert_eq!(widget.errors("KubeError"), 1);

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move { axum::serve(listener, router(metrics)).await });

        let response = http_get(addr, "/metrics").await;
        assert_eq!(response.status, 200);
        assert_eq!(
            response.header("content-type"),
            Some(CONTENT_TYPE_OPENMETRICS)
        );
        let (types, samples) = parse(&response.body);
        let summary: Vec<&str> = response
            .body
            .lines()
            .filter(|l| l.starts_with("# TYPE"))
            .collect();

        for (family, kind) in [
            ("controller_runtime_reconcile", "counter"),
            ("controller_runtime_reconcile_errors", "counter"),
            ("controller_runtime_reconcile_time_seconds", "histogram"),
            ("controller_runtime_max_concurrent_reconciles", "gauge"),
            ("controller_runtime_active_workers", "gauge"),
            ("leader_election_master_status", "gauge"),
        ] {
            assert_eq!(
                types.get(family).map(String::as_str),
                Some(kind),
                "{family}: {summary:?}"
            );
        }

        let total = "controller_runtime_reconcile_total";
        let m = [("controller", "widget")];
        assert_eq!(
            value(&samples, total, &[m[0], ("result", "success")]),
            Some(1.0)
        );
        assert_eq!(
            value(&samples, total, &[m[0], ("result", "error")]),
            Some(1.0)
        );
        // A controller that has not reconciled yet is already visible, at zero.
        let g = ("controller", "gadget");
        assert_eq!(
            value(&samples, total, &[g, ("result", "success")]),
            Some(0.0)
        );
        assert_eq!(
            value(
                &samples,
                "controller_runtime_reconcile_errors_total",
                &[m[0], ("reason", "KubeError")]
            ),
            Some(1.0)
        );
        assert_eq!(
            value(
                &samples,
                "controller_runtime_max_concurrent_reconciles",
                &[g]
            ),
            Some(2.0)
        );
        let active = "controller_runtime_active_workers";
        assert_eq!(value(&samples, active, &m), Some(1.0));
        assert_eq!(value(&samples, active, &[g]), Some(0.0));
        assert_eq!(
            value(
                &samples,
                "leader_election_master_status",
                &[("name", "test-lease")]
            ),
            Some(1.0)
        );

        // Histogram: count matches the two reconciles, buckets are cumulative up to +Inf.
        let hist = "controller_runtime_reconcile_time_seconds";
        assert_eq!(value(&samples, &format!("{hist}_count"), &m), Some(2.0));
        let buckets: Vec<(f64, f64)> = samples
            .iter()
            .filter(|s| {
                s.name == format!("{hist}_bucket")
                    && s.labels.get("controller").map(String::as_str) == Some("widget")
            })
            .map(|s| {
                let le = &s.labels["le"];
                let le = if le == "+Inf" {
                    f64::INFINITY
                } else {
                    le.parse().unwrap()
                };
                (le, s.value)
            })
            .collect();
        assert_eq!(buckets.len(), DURATION_BUCKETS.len() + 1);
        assert!(
            buckets
                .windows(2)
                .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1)
        );
        assert_eq!(buckets.last(), Some(&(f64::INFINITY, 2.0)));

        if cfg!(target_os = "linux") {
            let rss = value(&samples, "process_resident_memory_bytes", &[]).expect("rss sample");
            assert!(rss > 1024.0 * 1024.0, "implausible RSS {rss}");
            let cpu = value(&samples, "process_cpu_seconds_total", &[]).expect("cpu sample");
            assert!((0.0..3600.0).contains(&cpu), "implausible CPU time {cpu}");
            // It counts: 50 ms of work later, it has grown.
            let busy = std::time::Instant::now();
            let mut x = 0u64;
            while busy.elapsed() < std::time::Duration::from_millis(50) {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
            assert!(cpu_seconds().unwrap() > cpu, "CPU time did not grow");
        }
        drop(running);
        assert_eq!(widget.active_workers(), 0);
        server.abort();
    }

    #[test]
    fn shard_metrics_are_only_in_a_sharded_managers_registry() {
        assert!(!Metrics::new().encode().contains("operator_rs_shard"));
        let metrics = Metrics::sharded();
        metrics.shard().unwrap().objects("stamp").set(7);
        let sharded = metrics.encode();
        assert!(sharded.contains("operator_rs_shard_objects{controller=\"stamp\"} 7"));
        for name in [
            "members",
            "ranges",
            "objects",
            "handovers",
            "handover_duration_seconds",
        ] {
            let family = format!("# TYPE operator_rs_shard_{name} ");
            assert!(sharded.contains(&family), "{family} missing:\n{sharded}");
        }
    }
}
