//! Telemetry: the process-wide `tracing` subscriber.
//!
//! Log levels come from `RUST_LOG` (an `EnvFilter`, default `info`; an invalid
//! directive is skipped rather than fatal). `--log-format` picks `text` (human, the
//! default) or `json` (one object per line with the span context, for log shippers).

use clap::ValueEnum;
use tracing_subscriber::filter::{EnvFilter, LevelFilter};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Log output format, from `--log-format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Installs the global subscriber. Does nothing if one is already installed (tests).
pub fn init(format: LogFormat) {
    let filter = EnvFilter::builder()
        .with_default_directive(LevelFilter::INFO.into())
        .from_env_lossy();
    let registry = tracing_subscriber::registry().with(filter);
    let result = match format {
        LogFormat::Text => registry.with(tracing_subscriber::fmt::layer()).try_init(),
        LogFormat::Json => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .flatten_event(true)
                    .with_current_span(true)
                    .with_span_list(false),
            )
            .try_init(),
    };
    if result.is_err() {
        tracing::debug!("a tracing subscriber is already installed");
    }
}
