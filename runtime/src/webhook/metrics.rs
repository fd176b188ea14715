//! Webhook metrics with controller-runtime's names, registered in the manager's registry:
//!
//! | metric | type | labels | meaning |
//! |---|---|---|---|
//! | `controller_runtime_webhook_requests_total` | counter | `webhook` (the path), `code` (HTTP status) | requests served |
//! | `controller_runtime_webhook_latency_seconds` | histogram | `webhook` | time to answer a request |
//! | `controller_runtime_webhook_requests_in_flight` | gauge | `webhook` | requests being answered |

use std::time::Instant;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

/// Prometheus' default buckets, which controller-runtime's webhook latency uses.
const LATENCY_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WebhookLabels {
    webhook: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    webhook: String,
    code: String,
}

type LatencyFamily = Family<WebhookLabels, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS)
}

/// The webhook metric families; clones share them.
#[derive(Clone, Debug)]
pub struct WebhookMetrics {
    requests: Family<RequestLabels, Counter>,
    latency: LatencyFamily,
    in_flight: Family<WebhookLabels, Gauge>,
}

impl WebhookMetrics {
    /// Creates the families and registers them in `registry`.
    pub fn register(registry: &mut Registry) -> Self {
        let metrics = Self {
            requests: Family::default(),
            latency: LatencyFamily::new_with_constructor(latency_histogram as fn() -> Histogram),
            in_flight: Family::default(),
        };
        registry.register(
            "controller_runtime_webhook_requests",
            "Total number of admission requests by HTTP status code",
            metrics.requests.clone(),
        );
        registry.register_with_unit(
            "controller_runtime_webhook_latency",
            "Histogram of the latency of processing admission requests",
            Unit::Seconds,
            metrics.latency.clone(),
        );
        registry.register(
            "controller_runtime_webhook_requests_in_flight",
            "Current number of admission requests being served",
            metrics.in_flight.clone(),
        );
        metrics
    }

    /// Starts measuring one request to `webhook`; [`RequestTimer::finish`] records it.
    pub fn request_started(&self, webhook: &str) -> RequestTimer {
        let labels = WebhookLabels {
            webhook: webhook.to_owned(),
        };
        self.in_flight.get_or_create(&labels).inc();
        RequestTimer {
            metrics: self.clone(),
            labels,
            started: Instant::now(),
        }
    }

    /// Requests to `webhook` answered with `code` so far.
    pub fn requests(&self, webhook: &str, code: u16) -> u64 {
        self.requests
            .get_or_create(&RequestLabels {
                webhook: webhook.to_owned(),
                code: code.to_string(),
            })
            .get()
    }

    /// Requests to `webhook` being answered now.
    pub fn in_flight(&self, webhook: &str) -> i64 {
        self.in_flight
            .get_or_create(&WebhookLabels {
                webhook: webhook.to_owned(),
            })
            .get()
    }
}

/// Measures one request; dropping it unfinished (the connection went away) only ends its
/// in-flight count.
#[derive(Debug)]
pub struct RequestTimer {
    metrics: WebhookMetrics,
    labels: WebhookLabels,
    started: Instant,
}

impl RequestTimer {
    /// Records the request as answered with the HTTP status `code`.
    pub fn finish(self, code: u16) {
        let WebhookMetrics {
            requests, latency, ..
        } = &self.metrics;
        latency
            .get_or_create(&self.labels)
            .observe(self.started.elapsed().as_secs_f64());
        requests
            .get_or_create(&RequestLabels {
                webhook: self.labels.webhook.clone(),
                code: code.to_string(),
            })
            .inc();
    }
}

impl Drop for RequestTimer {
    fn drop(&mut self) {
        self.metrics.in_flight.get_or_create(&self.labels).dec();
    }
}
