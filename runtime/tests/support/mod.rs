//! Support of the integration tests, which run on envtest's real control plane: polling
//! helpers, Leases, ConfigMaps, the manager's flags, and clients that hold answers back.
#![allow(dead_code)]

#[path = "../../src/manager/testing.rs"]
pub mod testing;

pub mod gate;
pub mod leases;
pub mod proxy;

use std::future::Future;
use std::time::{Duration, Instant};

/// Polls `condition` every 20ms until it holds or `timeout` passes; returns whether it held.
pub async fn eventually(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Polls the async `condition` every 50ms until it holds or `timeout` passes; returns whether
/// it held.
pub async fn eventually_async<F, Fut>(timeout: Duration, mut condition: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if condition().await {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether the object `name` of `api` is gone (404) within `timeout`.
pub async fn gone<K>(api: &kube::Api<K>, name: &str, timeout: Duration) -> bool
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    eventually_async(timeout, || async {
        matches!(api.get_opt(name).await, Ok(None))
    })
    .await
}

/// A ConfigMap `name` with `data`.
pub fn config_map(name: &str, data: &[(&str, &str)]) -> k8s_openapi::api::core::v1::ConfigMap {
    let mut map = k8s_openapi::api::core::v1::ConfigMap::default();
    map.metadata.name = Some(name.into());
    map.data = Some(
        data.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    map
}

/// The pids of the processes whose command line mentions `path`.
pub fn processes_mentioning(path: &std::path::Path) -> Vec<u32> {
    let needle = path.to_string_lossy().into_owned();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(&needle))
        })
        .collect()
}

/// Whether `future` is still pending after `duration`.
pub async fn still_pending_after<F: Future>(duration: Duration, future: F) -> bool {
    tokio::time::timeout(duration, future).await.is_err()
}

/// The manager's flags parsed from `argv`, as an operator's command line flattens them.
pub fn parse<I, T>(argv: I) -> Result<operator_rs_runtime::manager::ManagerArgs, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        manager: operator_rs_runtime::manager::ManagerArgs,
    }
    Cli::try_parse_from(argv).map(|cli| cli.manager)
}

/// The name libtest knows test `test` of module `module` (`module_path!()`) by: the module's
/// path without the crate's name, as `--exact` wants it when a test binary re-runs itself.
pub fn test_path(module: &str, test: &str) -> String {
    match module.split_once("::") {
        Some((_crate, path)) => format!("{path}::{test}"),
        None => test.to_owned(),
    }
}
