//! Grafana dashboards of the manager's metrics, as kubebuilder's grafana plugin writes them:
//! `grafana/controller-runtime-metrics.json` (reconciles, errors, reconcile time, workers, and the
//! webhooks' requests when the project has webhooks), `grafana/controller-resources-metrics.json`
//! (CPU and memory) and, from `grafana/custom-metrics/config.yaml` (written once, then the
//! user's), `grafana/custom-metrics/custom-metrics-dashboard.json`. Each is a typed model
//! serialized to Grafana's dashboard JSON; every query names its metric with a `{job=~"$job"}`
//! selector, the names the runtime's `/metrics` serves.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::project::Project;
use crate::workspace::{GeneratedFile, GeneratorOutput, SourceTree};

/// The custom metrics' configuration.
pub const CONFIG: &str = "grafana/custom-metrics/config.yaml";

/// A Grafana dashboard (the fields Grafana's schema needs; it fills in the rest on import).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Dashboard {
    title: String,
    uid: String,
    tags: Vec<String>,
    timezone: &'static str,
    schema_version: u32,
    version: u32,
    editable: bool,
    refresh: &'static str,
    time: TimeRange,
    templating: Templating,
    panels: Vec<Panel>,
}

#[derive(Debug, Clone, Serialize)]
struct TimeRange {
    from: &'static str,
    to: &'static str,
}

#[derive(Debug, Clone, Serialize)]
struct Templating {
    list: Vec<Variable>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Variable {
    name: &'static str,
    label: &'static str,
    #[serde(rename = "type")]
    kind: &'static str,
    query: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    datasource: Option<Datasource>,
    #[serde(skip_serializing_if = "Option::is_none")]
    refresh: Option<u32>,
    include_all: bool,
    multi: bool,
}

#[derive(Debug, Clone, Serialize)]
struct Datasource {
    #[serde(rename = "type")]
    kind: &'static str,
    uid: &'static str,
}

const PROMETHEUS: Datasource = Datasource {
    kind: "prometheus",
    uid: "${datasource}",
};

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Panel {
    id: u32,
    #[serde(rename = "type")]
    kind: &'static str,
    title: String,
    description: String,
    datasource: Datasource,
    grid_pos: GridPos,
    field_config: FieldConfig,
    targets: Vec<Target>,
}

#[derive(Debug, Clone, Serialize)]
struct GridPos {
    h: u32,
    w: u32,
    x: u32,
    y: u32,
}

#[derive(Debug, Clone, Serialize)]
struct FieldConfig {
    defaults: FieldDefaults,
    overrides: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, Serialize)]
struct FieldDefaults {
    unit: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Target {
    datasource: Datasource,
    expr: String,
    legend_format: String,
    ref_id: String,
}

/// One panel's content before layout: title, description, unit and its queries (expression,
/// legend).
struct PanelSpec {
    title: String,
    description: String,
    unit: String,
    queries: Vec<(String, String)>,
}

fn spec(title: &str, description: &str, unit: &str, queries: Vec<(String, &str)>) -> PanelSpec {
    PanelSpec {
        title: title.into(),
        description: description.into(),
        unit: unit.into(),
        queries: (queries.into_iter())
            .map(|(e, l)| (e, l.to_string()))
            .collect(),
    }
}

/// `metric{job=~"$job"}`.
fn sel(metric: &str) -> String {
    format!("{metric}{{job=~\"$job\"}}")
}

fn dashboard(project: &str, name: &str, title: &str, panels: Vec<PanelSpec>) -> Dashboard {
    let panels = (panels.into_iter().enumerate())
        .map(|(i, p)| Panel {
            id: i as u32 + 1,
            kind: "timeseries",
            title: p.title,
            description: p.description,
            datasource: PROMETHEUS,
            grid_pos: GridPos {
                h: 8,
                w: 12,
                x: (i as u32 % 2) * 12,
                y: (i as u32 / 2) * 8,
            },
            field_config: FieldConfig {
                defaults: FieldDefaults { unit: p.unit },
                overrides: Vec::new(),
            },
            targets: (p.queries.into_iter().enumerate())
                .map(|(j, (expr, legend))| Target {
                    datasource: PROMETHEUS,
                    expr,
                    legend_format: legend,
                    ref_id: ((b'A' + j as u8) as char).to_string(),
                })
                .collect(),
        })
        .collect();
    Dashboard {
        title: format!("{project}: {title}"),
        uid: uid(project, name),
        tags: vec![project.to_string(), "operator-rs".into()],
        timezone: "browser",
        schema_version: 39,
        version: 1,
        editable: true,
        refresh: "30s",
        time: TimeRange {
            from: "now-1h",
            to: "now",
        },
        templating: Templating {
            list: vec![
                Variable {
                    name: "datasource",
                    label: "Data source",
                    kind: "datasource",
                    query: "prometheus".into(),
                    datasource: None,
                    refresh: None,
                    include_all: false,
                    multi: false,
                },
                Variable {
                    name: "job",
                    label: "Job",
                    kind: "query",
                    query: format!("label_values({}, job)", "process_resident_memory_bytes{}"),
                    datasource: Some(PROMETHEUS),
                    refresh: Some(2),
                    include_all: true,
                    multi: true,
                },
            ],
        },
        panels,
    }
}

/// A dashboard uid: at most 40 characters, stable for the project.
fn uid(project: &str, name: &str) -> String {
    let digest = crate::fromcrd::sha256_hex(format!("{project}/{name}").as_bytes());
    format!("{}-{}", &name[..name.len().min(23)], &digest[..16])
}

/// One metric of `grafana/custom-metrics/config.yaml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct CustomMetric {
    metric: String,
    #[serde(rename = "type")]
    kind: MetricType,
    #[serde(default)]
    unit: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum MetricType {
    Counter,
    Gauge,
    Histogram,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CustomConfig {
    #[serde(default)]
    custom_metrics: Vec<CustomMetric>,
}

const CONFIG_TEMPLATE: &str = "# The metrics of your own (registered on the manager's registry) charted by\n\
# grafana/custom-metrics/custom-metrics-dashboard.json: `operator-rs generate dashboards` writes it\n\
# from this list. `type` is counter (charted as a rate), gauge or histogram (p50, p90, p99).\n\
# customMetrics:\n\
#   - metric: memcached_deployments_created_total\n\
#     type: counter\n\
#   - metric: memcached_reconcile_backlog\n\
#     type: gauge\n\
#     unit: none\n\
customMetrics: []\n";

/// Whether `name` is a Prometheus metric name.
fn metric_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// The dashboards of `project` (and the custom metrics' configuration, when missing).
pub fn generate(tree: &dyn SourceTree, project: &Project) -> Result<GeneratorOutput> {
    let name = &project.project_name;
    let mut out = GeneratorOutput::default();
    let json = |d: &Dashboard| serde_json::to_string_pretty(d).expect("JSON serializes") + "\n";

    let mut runtime = vec![
        spec(
            "Reconciles per second",
            "Reconciles by controller and result (success, error, requeue, requeue_after).",
            "ops",
            vec![(
                format!(
                    "sum by (controller, result) (rate({}[5m]))",
                    sel("controller_runtime_reconcile_total")
                ),
                "{{controller}} {{result}}",
            )],
        ),
        spec(
            "Reconcile errors per second",
            // From the reconciles' `result` (served from the first reconcile on), not from
            // controller_runtime_reconcile_errors_total, which has no series before an error.
            "Reconciles that returned an error, by controller.",
            "ops",
            vec![(
                "sum by (controller) (rate(controller_runtime_reconcile_total{job=~\"$job\", result=\"error\"}[5m]))".to_string(),
                "{{controller}}",
            )],
        ),
        spec(
            "Reconcile time",
            "How long reconciles take: p50, p90 and p99 by controller.",
            "s",
            [
                ("0.5", "{{controller}} p50"),
                ("0.9", "{{controller}} p90"),
                ("0.99", "{{controller}} p99"),
            ]
            .map(|(q, legend)| {
                (
                    format!(
                        "histogram_quantile({q}, sum by (controller, le) (rate({}[5m])))",
                        sel("controller_runtime_reconcile_time_seconds_bucket")
                    ),
                    legend,
                )
            })
            .to_vec(),
        ),
        spec(
            "Workers busy",
            "Reconciles running now, and the most each controller runs at once (--concurrency).",
            "none",
            vec![
                (
                    format!(
                        "sum by (controller) ({})",
                        sel("controller_runtime_active_workers")
                    ),
                    "{{controller}} active",
                ),
                (
                    format!(
                        "sum by (controller) ({})",
                        sel("controller_runtime_max_concurrent_reconciles")
                    ),
                    "{{controller}} max",
                ),
            ],
        ),
    ];
    if project.resources.iter().any(|r| r.webhooks.is_some()) {
        runtime.push(spec(
            "Webhook requests per second",
            "Admission and conversion requests served, by webhook path and HTTP code.",
            "reqps",
            vec![(
                format!(
                    "sum by (webhook, code) (rate({}[5m]))",
                    sel("controller_runtime_webhook_requests_total")
                ),
                "{{webhook}} {{code}}",
            )],
        ));
    }
    out.files.push(GeneratedFile {
        path: PathBuf::from("grafana/controller-runtime-metrics.json"),
        contents: json(&dashboard(
            name,
            "controller-runtime-metrics",
            "Controller Runtime Metrics",
            runtime,
        )),
    });
    let resources = vec![
        spec(
            "CPU",
            "CPU time the manager uses, in cores.",
            "none",
            vec![(
                format!("rate({}[5m])", sel("process_cpu_seconds_total")),
                "{{pod}}",
            )],
        ),
        spec(
            "Memory",
            "The manager's resident memory.",
            "bytes",
            vec![(sel("process_resident_memory_bytes"), "{{pod}}")],
        ),
    ];
    out.files.push(GeneratedFile {
        path: PathBuf::from("grafana/controller-resources-metrics.json"),
        contents: json(&dashboard(
            name,
            "controller-resources-metrics",
            "Controller Resources Metrics",
            resources,
        )),
    });

    let config_rel = Path::new(CONFIG);
    let config_text = match tree.read(config_rel)? {
        Some(text) => text,
        None => {
            out.files.push(GeneratedFile {
                path: config_rel.to_path_buf(),
                contents: CONFIG_TEMPLATE.into(),
            });
            CONFIG_TEMPLATE.into()
        }
    };
    let config: CustomConfig = serde_saphyr::from_str(&config_text).with_context(|| {
        format!(
            "{CONFIG}: not a list of custom metrics; e.g.\n  customMetrics:\n  - metric: memcached_deployments_created_total\n    type: counter"
        )
    })?;
    for (i, m) in config.custom_metrics.iter().enumerate() {
        if !metric_name(&m.metric) {
            bail!(
                "{CONFIG}: customMetrics[{i}].metric {:?} is not a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*), e.g. memcached_deployments_created_total",
                m.metric
            );
        }
    }
    let custom_rel = Path::new("grafana/custom-metrics/custom-metrics-dashboard.json");
    if config.custom_metrics.is_empty() {
        if tree.read(custom_rel)?.is_some() {
            out.stale.push(custom_rel.to_path_buf());
        }
    } else {
        let panels = (config.custom_metrics.iter())
            .map(|m| {
                let (expr, unit) = match m.kind {
                    MetricType::Counter => (
                        format!("sum by (job) (rate({}[5m]))", sel(&m.metric)),
                        "ops",
                    ),
                    MetricType::Gauge => (format!("sum by (job) ({})", sel(&m.metric)), "none"),
                    MetricType::Histogram => (
                        format!(
                            "histogram_quantile(0.99, sum by (job, le) (rate({}[5m])))",
                            sel(&format!("{}_bucket", m.metric))
                        ),
                        "s",
                    ),
                };
                spec(
                    &m.metric,
                    &format!("{} ({:?})", m.metric, m.kind).to_lowercase(),
                    m.unit.as_deref().unwrap_or(unit),
                    vec![(expr, "{{job}}")],
                )
            })
            .collect();
        out.files.push(GeneratedFile {
            path: custom_rel.to_path_buf(),
            contents: json(&dashboard(name, "custom-metrics", "Custom Metrics", panels)),
        });
    }
    Ok(out)
}
