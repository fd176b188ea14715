//! Test support for the manager's integration tests: a fake API server that keeps
//! `coordination.k8s.io/v1` Leases in memory, served to `kube::Client`s through
//! `tower_test` mocks, and small polling helpers.
#![allow(dead_code)]

#[path = "../../src/manager/testing.rs"]
pub mod testing;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use http::{Method, Request, Response, StatusCode};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::client::Body;
use serde_json::{Value, json};

const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/";

/// One request the fake API server answered, or a marker a test put in the log.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub query: String,
    pub content_type: String,
    pub body: Value,
}

#[derive(Default)]
struct State {
    leases: BTreeMap<(String, String), Value>,
    log: Vec<Recorded>,
    failing: bool,
    resource_version: u64,
}

/// An in-memory Lease API; every client from [`FakeApiServer::client`] sees the same Leases.
#[derive(Clone, Default)]
pub struct FakeApiServer {
    state: Arc<Mutex<State>>,
}

impl FakeApiServer {
    pub fn new() -> Self {
        Self::default()
    }

    /// A client whose requests this server answers (each client is one mock connection).
    pub fn client(&self) -> kube::Client {
        let (service, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let state = self.state.clone();
        tokio::spawn(async move {
            while let Some((request, send)) = handle.next_request().await {
                let response = answer(&state, request).await;
                send.send_response(response);
            }
        });
        kube::Client::new(service, "default")
    }

    /// The Lease `namespace/name`, if it exists.
    pub fn lease(&self, namespace: &str, name: &str) -> Option<Lease> {
        let state = self.state.lock().unwrap();
        let lease = state.leases.get(&(namespace.to_owned(), name.to_owned()))?;
        Some(serde_json::from_value(lease.clone()).expect("stored lease parses"))
    }

    /// The holder of the Lease, if it exists and has one.
    pub fn holder(&self, namespace: &str, name: &str) -> Option<String> {
        self.lease(namespace, name)?.spec?.holder_identity
    }

    /// Writes a Lease held by `holder`, last renewed `renewed_ago`, valid for `duration_seconds`
    /// (what another replica, or a replica that took over, would have written).
    pub fn put_lease(
        &self,
        namespace: &str,
        name: &str,
        holder: &str,
        renewed_ago: Duration,
        duration_seconds: i32,
    ) {
        let renewed = Timestamp::try_from(SystemTime::now() - renewed_ago).unwrap();
        let mut state = self.state.lock().unwrap();
        state.resource_version += 1;
        let transitions = state
            .leases
            .get(&(namespace.to_owned(), name.to_owned()))
            .and_then(|l| l.pointer("/spec/leaseTransitions"))
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let lease = json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": name, "namespace": namespace, "resourceVersion": state.resource_version.to_string()},
            "spec": {
                "holderIdentity": holder,
                "acquireTime": MicroTime(renewed),
                "renewTime": MicroTime(renewed),
                "leaseDurationSeconds": duration_seconds,
                "leaseTransitions": transitions + 1,
            },
        });
        state
            .leases
            .insert((namespace.to_owned(), name.to_owned()), lease);
    }

    /// While `failing`, every request is answered with HTTP 500.
    pub fn set_failing(&self, failing: bool) {
        self.state.lock().unwrap().failing = failing;
    }

    /// Every request answered so far, and the markers, in order.
    pub fn log(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().log.clone()
    }

    /// Appends a marker (`method` = "MARK") to the request log.
    pub fn mark(&self, what: &str) {
        self.state.lock().unwrap().log.push(Recorded {
            method: "MARK".into(),
            path: what.into(),
            query: String::new(),
            content_type: String::new(),
            body: Value::Null,
        });
    }
}

fn status(code: StatusCode, reason: &str, message: &str) -> Response<Body> {
    let body = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": message, "reason": reason, "code": code.as_u16(),
    });
    respond(code, &body)
}

fn respond(code: StatusCode, body: &Value) -> Response<Body> {
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(Body::from(serde_json::to_vec(body).unwrap()))
        .unwrap()
}

/// RFC 7386 JSON merge patch; strategic-merge and apply patches of a Lease (no lists)
/// behave the same way.
fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                if value.is_null() {
                    target.remove(key);
                } else {
                    merge(target.entry(key.clone()).or_insert(Value::Null), value);
                }
            }
        }
        (target, patch) => *target = patch.clone(),
    }
}

async fn answer(state: &Mutex<State>, request: Request<Body>) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let body = body.collect_bytes().await.unwrap();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let path = parts.uri.path().to_owned();
    let content_type = parts
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();

    let mut state = state.lock().unwrap();
    state.log.push(Recorded {
        method: parts.method.to_string(),
        path: path.clone(),
        query: parts.uri.query().unwrap_or_default().to_owned(),
        content_type,
        body: body.clone(),
    });
    if state.failing {
        return status(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalError",
            "injected failure",
        );
    }
    let Some(rest) = path.strip_prefix(LEASES) else {
        return status(
            StatusCode::NOT_FOUND,
            "NotFound",
            "the fake serves only leases",
        );
    };
    let segments: Vec<&str> = rest.split('/').collect();
    state.resource_version += 1;
    let resource_version = state.resource_version.to_string();
    match (parts.method.clone(), segments.as_slice()) {
        (Method::GET, [ns, "leases", name]) => {
            match state.leases.get(&(ns.to_string(), name.to_string())) {
                Some(lease) => respond(StatusCode::OK, lease),
                None => status(StatusCode::NOT_FOUND, "NotFound", "lease not found"),
            }
        }
        (Method::POST, [ns, "leases"]) => {
            let name = body
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let key = (ns.to_string(), name.to_owned());
            if state.leases.contains_key(&key) {
                return status(
                    StatusCode::CONFLICT,
                    "AlreadyExists",
                    "lease already exists",
                );
            }
            let mut lease = body.clone();
            merge(
                &mut lease,
                &json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                        "metadata": {"namespace": ns, "resourceVersion": resource_version}}),
            );
            state.leases.insert(key, lease.clone());
            respond(StatusCode::CREATED, &lease)
        }
        (Method::PATCH, [ns, "leases", name]) => {
            let key = (ns.to_string(), name.to_string());
            let Some(lease) = state.leases.get_mut(&key) else {
                return status(StatusCode::NOT_FOUND, "NotFound", "lease not found");
            };
            merge(lease, &body);
            merge(
                lease,
                &json!({"metadata": {"resourceVersion": resource_version}}),
            );
            let lease = lease.clone();
            respond(StatusCode::OK, &lease)
        }
        _ => status(StatusCode::NOT_FOUND, "NotFound", "unsupported request"),
    }
}

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
