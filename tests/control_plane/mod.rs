//! The CLI's tests that take kube-apiserver's verdict drive it with kubectl (and, for the many
//! dry runs, a kube client in process): this is that kubectl over the runtime's envtest (`Envtest::shared()`: one etcd and kube-apiserver from
//! `$KUBEBUILDER_ASSETS` per test binary, started by the first test that asks, stopped when the
//! binary exits). The only way these tests start a control plane.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use operator_rs_runtime::testing::envtest::{ASSETS_VAR, Envtest};

/// The test binary's control plane, as kubectl reaches it.
pub struct ControlPlane {
    /// An admin kubeconfig (group `system:masters`).
    pub kubeconfig: PathBuf,
    env: &'static Envtest,
}

impl ControlPlane {
    /// The envtest behind it, for a test that wants a `kube::Client`.
    pub fn envtest(&self) -> &'static Envtest {
        self.env
    }
}

/// The binary's shared control plane (started on first use; it waits until kube-apiserver is
/// ready). `assets` is what [`assets`] returned: envtest reads the same `$KUBEBUILDER_ASSETS`.
pub fn start(assets: &Path) -> ControlPlane {
    let env = Envtest::shared().unwrap_or_else(|err| {
        panic!(
            "the control plane from {} does not start: {err}",
            assets.display()
        )
    });
    ControlPlane {
        kubeconfig: env.kubeconfig().to_path_buf(),
        env,
    }
}

/// The assets folder, or None after printing a visible `SKIPPED` line for `test`.
pub fn assets(test: &str) -> Option<PathBuf> {
    let assets = std::env::var_os(ASSETS_VAR).filter(|dir| !dir.is_empty());
    if let Some(dir) = assets {
        return Some(PathBuf::from(dir));
    }
    eprintln!(
        "SKIPPED {test}: {ASSETS_VAR} is unset (export {ASSETS_VAR}=$(/work/shared/k8s/install.sh))"
    );
    None
}

/// `kubectl <args>` with `object` (JSON) on stdin: `Err` with kubectl's message when it fails.
pub fn kubectl_with(
    cp: &ControlPlane,
    args: &[&str],
    object: &serde_json::Value,
) -> Result<String, String> {
    let mut child = kubectl_command(cp, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl runs");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(object.to_string().as_bytes())
        .unwrap();
    outcome(child.wait_with_output().unwrap())
}

/// Create `object` as a server-side dry run, with strict field validation as `kubectl create
/// --dry-run=server` sends it: `Err` with the API server's message when it refuses.
pub fn dry_run(cp: &ControlPlane, object: &serde_json::Value) -> Result<(), String> {
    let verdicts = dry_run_all(cp, std::slice::from_ref(object));
    verdicts.into_iter().next().expect("one verdict").map(drop)
}

/// [`dry_run`] of each of `objects` in turn, with the object the API server would have stored
/// (defaulted) when it accepts one.
///
/// In process (one kube client on a runtime of its own, each kind discovered once), not through
/// kubectl: the API server tests send thousands of objects, and starting a kubectl for each was
/// most of their CPU (about 85 s of the 130 s the binary took in CI).
pub fn dry_run_all(
    cp: &ControlPlane,
    objects: &[serde_json::Value],
) -> Vec<Result<serde_json::Value, String>> {
    use kube::api::{ApiResource, DynamicObject, GroupVersionKind, PostParams, TypeMeta};
    use kube::discovery::{ApiCapabilities, Scope, pinned_kind};
    use std::collections::HashMap;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(async {
        let client = match kube::Client::try_from(cp.env.config().clone()) {
            Ok(c) => c,
            Err(e) => return objects.iter().map(|_| Err(e.to_string())).collect(),
        };
        let mut kinds: HashMap<GroupVersionKind, (ApiResource, ApiCapabilities)> = HashMap::new();
        let mut out = Vec::new();
        for object in objects {
            let verdict = async {
                let types: TypeMeta =
                    serde_json::from_value(object.clone()).map_err(|e| e.to_string())?;
                let gvk = GroupVersionKind::try_from(&types).map_err(|e| e.to_string())?;
                if !kinds.contains_key(&gvk) {
                    let found = (pinned_kind(&client, &gvk).await).map_err(|e| e.to_string())?;
                    kinds.insert(gvk.clone(), found);
                }
                let (resource, caps) = &kinds[&gvk];
                let namespace = (caps.scope == Scope::Namespaced).then(|| {
                    let given = object["metadata"]["namespace"].as_str();
                    given.unwrap_or("default").to_owned()
                });
                let path =
                    <DynamicObject as kube::Resource>::url_path(resource, namespace.as_deref());
                let params = PostParams {
                    dry_run: true,
                    ..PostParams::default()
                };
                let body = serde_json::to_vec(object).unwrap();
                let mut request = kube::core::Request::new(path)
                    .create(&params, body)
                    .map_err(|e| e.to_string())?;
                let strict = format!("{}&fieldValidation=Strict", request.uri());
                *request.uri_mut() = strict.parse().expect("a URI");
                match client.request_text(request).await {
                    Ok(text) => serde_json::from_str(&text).map_err(|e| e.to_string()),
                    Err(kube::Error::Api(status)) => Err(status.message),
                    Err(e) => Err(e.to_string()),
                }
            };
            out.push(verdict.await);
        }
        out
    })
}

/// `kubectl <args>`: its stdout, or `Err` with its message.
pub fn kubectl(cp: &ControlPlane, args: &[&str]) -> Result<String, String> {
    outcome(kubectl_command(cp, args).output().expect("kubectl runs"))
}

fn kubectl_command(cp: &ControlPlane, args: &[&str]) -> Command {
    let mut command = Command::new("kubectl");
    command.arg("--kubeconfig").arg(&cp.kubeconfig).args(args);
    command
}

fn outcome(out: Output) -> Result<String, String> {
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}
