//! The control plane's processes and their lifecycle: etcd, kube-apiserver and (when its
//! binary is there) kube-controller-manager on free loopback ports, started in order and
//! waited for, restarted in place for fault tests, and stopped.

use std::ffi::OsString;
use std::future::Future;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::assets::Assets;
use super::cleanup;
use super::credentials::{self, SigningKeys};
use super::error::{Error, Result};
use super::process::{Process, free_ports};

/// How long a stopped process may take to exit on SIGTERM before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);
/// Attempts to start with fresh ports when one was taken between picking and binding it.
const PORT_ATTEMPTS: usize = 3;
/// Pause between readiness checks.
const POLL: Duration = Duration::from_millis(100);

/// The loopback ports of one control plane.
#[derive(Clone, Copy, Debug)]
struct Ports {
    etcd: u16,
    etcd_peer: u16,
    apiserver: u16,
    controller_manager: u16,
}

/// A running control plane: its folder, processes and admin credentials.
#[derive(Debug)]
pub(crate) struct ControlPlane {
    instance: u64,
    pub(crate) dir: PathBuf,
    pub(crate) admin_token: String,
    ports: Ports,
    etcd: Process,
    apiserver: Process,
    controller_manager: Option<Process>,
    timeout: Duration,
    stopped: bool,
}

/// Files in the control plane's folder.
pub(crate) mod files {
    /// The admin's kubeconfig.
    pub(crate) const ADMIN_KUBECONFIG: &str = "admin.kubeconfig";
    /// The API server's self-signed serving certificate and its CA (`--cert-dir`).
    pub(crate) const SERVING_CERT: &str = "certs/apiserver.crt";
    pub(crate) const TOKENS: &str = "tokens.csv";
    pub(crate) const SA_KEY: &str = "sa.key";
    pub(crate) const SA_PUB: &str = "sa.pub";
}

impl ControlPlane {
    /// Starts a control plane from `assets` in a new folder, waiting up to `timeout` for
    /// each process.
    pub(crate) fn start(
        assets: &Assets,
        controller_manager: bool,
        timeout: Duration,
        extra: &ExtraArgs,
    ) -> Result<Self> {
        let instance = cleanup::next_instance();
        let dir = cleanup::instance_dir(instance)?;
        let result = Self::start_in(assets, controller_manager, timeout, extra, instance, dir);
        if result.is_err() {
            cleanup::forget(instance);
        }
        result
    }

    fn start_in(
        assets: &Assets,
        controller_manager: bool,
        timeout: Duration,
        extra: &ExtraArgs,
        instance: u64,
        dir: PathBuf,
    ) -> Result<Self> {
        // Generated while etcd starts (an RSA key, which took seconds, used to be).
        let keys = std::thread::spawn(credentials::signing_keys);
        let admin_token = credentials::random_token();
        credentials::write_private(
            &dir.join(files::TOKENS),
            &credentials::admin_token_line(&admin_token),
        )?;
        let mut keys = Some(keys);
        let mut attempt = 1;
        loop {
            let [etcd, etcd_peer, apiserver, manager] = free_ports(4)?[..] else {
                unreachable!("four ports")
            };
            let ports = Ports {
                etcd,
                etcd_peer,
                apiserver,
                controller_manager: manager,
            };
            let mut plane = Self {
                instance,
                etcd: Process::new(
                    "etcd",
                    assets.etcd.clone(),
                    etcd_args(&dir, ports),
                    &dir,
                    instance,
                ),
                apiserver: Process::new(
                    "kube-apiserver",
                    assets.apiserver.clone(),
                    with_extra(apiserver_args(&dir, ports), &extra.apiserver),
                    &dir,
                    instance,
                ),
                controller_manager: (assets.controller_manager.clone())
                    .filter(|_| controller_manager)
                    .map(|binary| {
                        let args = with_extra(
                            controller_manager_args(&dir, ports),
                            &extra.controller_manager,
                        );
                        Process::new("kube-controller-manager", binary, args, &dir, instance)
                    }),
                dir: dir.clone(),
                admin_token: admin_token.clone(),
                ports,
                timeout,
                stopped: false,
            };
            match plane.boot(&mut keys) {
                Ok(()) => return Ok(plane),
                Err(Error::PortInUse { .. }) if attempt < PORT_ATTEMPTS => {
                    plane.stop_processes();
                    attempt += 1;
                }
                Err(error) => {
                    plane.stop_processes();
                    return Err(error);
                }
            }
        }
    }

    /// Starts the processes in order, writing the signing keys once they are generated.
    fn boot(
        &mut self,
        keys: &mut Option<std::thread::JoinHandle<Result<SigningKeys>>>,
    ) -> Result<()> {
        self.etcd.start()?;
        self.wait_for_etcd()?;
        if let Some(keys) = keys.take() {
            let keys = keys.join().expect("the signing key generation panicked")?;
            credentials::write_private(&self.dir.join(files::SA_KEY), &keys.private_pem)?;
            credentials::write_private(&self.dir.join(files::SA_PUB), &keys.public_pem)?;
        }
        self.apiserver.start()?;
        self.wait_for_apiserver()?;
        credentials::write_kubeconfig(
            &self.dir.join(files::ADMIN_KUBECONFIG),
            &self.server(),
            &self.dir.join(files::SERVING_CERT),
            "envtest-admin",
            &self.admin_token,
            "default",
        )?;
        if self.controller_manager.is_some() {
            self.start_controller_manager()?;
        }
        Ok(())
    }

    /// `https://127.0.0.1:<port>` of the API server.
    pub(crate) fn server(&self) -> String {
        format!("https://127.0.0.1:{}", self.ports.apiserver)
    }

    /// Whether kube-controller-manager runs.
    pub(crate) fn has_controller_manager(&self) -> bool {
        self.controller_manager.is_some()
    }

    /// The last lines of the API server's log.
    pub(crate) fn apiserver_log_tail(&self) -> String {
        self.apiserver.log_tail()
    }

    /// Whether [`ControlPlane::stop`] ran.
    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped
    }

    /// Stops kube-apiserver and starts it again on the same port over the same etcd.
    pub(crate) fn restart_apiserver(&mut self) -> Result<()> {
        self.apiserver.stop(STOP_GRACE);
        self.apiserver.start()?;
        self.wait_for_apiserver()
    }

    /// Stops etcd and starts it again on the same port with the same data; returns once the
    /// API server serves again.
    pub(crate) fn restart_etcd(&mut self) -> Result<()> {
        self.etcd.stop(STOP_GRACE);
        self.etcd.start()?;
        self.wait_for_etcd()?;
        self.wait_for_apiserver()
    }

    /// Stops every process and removes the folder. Idempotent.
    pub(crate) fn stop(&mut self) {
        self.stopped = true;
        self.stop_processes();
        cleanup::forget(self.instance);
    }

    fn stop_processes(&mut self) {
        if let Some(manager) = &mut self.controller_manager {
            manager.stop(STOP_GRACE);
        }
        self.apiserver.stop(STOP_GRACE);
        self.etcd.stop(STOP_GRACE);
    }

    fn start_controller_manager(&mut self) -> Result<()> {
        let port = self.ports.controller_manager;
        let manager = self
            .controller_manager
            .as_mut()
            .expect("a controller manager");
        manager.start()?;
        let url = format!("https://127.0.0.1:{port}");
        wait_until(manager, port, self.timeout, || {
            https_ok(&url, "/healthz", None)
        })
    }

    fn wait_for_etcd(&mut self) -> Result<()> {
        let port = self.ports.etcd;
        wait_until(&mut self.etcd, port, self.timeout, || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        })
    }

    fn wait_for_apiserver(&mut self) -> Result<()> {
        let port = self.ports.apiserver;
        let url = self.server();
        let token = self.admin_token.clone();
        wait_until(&mut self.apiserver, port, self.timeout, || {
            https_ok(&url, "/readyz", Some(&token))
        })
    }
}

/// Polls `ready` until it holds, `process` exits, or `timeout` passes.
fn wait_until(
    process: &mut Process,
    port: u16,
    timeout: Duration,
    mut ready: impl FnMut() -> bool,
) -> Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = process.exited() {
            return Err(process.exited_error(status, port));
        }
        if ready() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(process.not_ready_error(timeout));
        }
        std::thread::sleep(POLL);
    }
}

/// Whether `GET path` on `server` answers 200 (the serving certificate is not checked: it
/// may not be written yet when the first checks run).
fn https_ok(server: &str, path: &str, token: Option<&str>) -> bool {
    let Ok(uri) = server.parse::<http::Uri>() else {
        return false;
    };
    let mut config = kube::Config::new(uri);
    config.accept_invalid_certs = true;
    config.connect_timeout = Some(Duration::from_secs(2));
    config.read_timeout = Some(Duration::from_secs(2));
    if let Some(token) = token {
        config = credentials::with_token(&config, token);
    }
    block_on(async move {
        let Ok(client) = kube::Client::try_from(config) else {
            return false;
        };
        let request = http::Request::get(path)
            .body(Vec::new())
            .expect("a GET request");
        client.request_text(request).await.is_ok()
    })
}

/// Runs `future` to completion on a thread of its own (with its own runtime), so that it can
/// be called from anywhere, inside an async test's runtime included.
pub(crate) fn block_on<F>(future: F) -> F::Output
where
    F: Future + Send,
    F::Output: Send,
{
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a tokio runtime")
                    .block_on(future)
            })
            .join()
            .expect("the envtest readiness check panicked")
    })
}

fn etcd_args(dir: &Path, ports: Ports) -> Vec<OsString> {
    let client = format!("http://127.0.0.1:{}", ports.etcd);
    let peer = format!("http://127.0.0.1:{}", ports.etcd_peer);
    args([
        "--data-dir".into(),
        dir.join("etcd").into(),
        "--listen-client-urls".into(),
        client.clone().into(),
        "--advertise-client-urls".into(),
        client.into(),
        "--listen-peer-urls".into(),
        peer.clone().into(),
        "--initial-advertise-peer-urls".into(),
        peer.clone().into(),
        "--initial-cluster".into(),
        format!("default={peer}").into(),
        // Data is thrown away after the tests: no fsync (several times faster).
        "--unsafe-no-fsync".into(),
    ])
}

fn apiserver_args(dir: &Path, ports: Ports) -> Vec<OsString> {
    args([
        "--etcd-servers".into(),
        format!("http://127.0.0.1:{}", ports.etcd).into(),
        "--bind-address".into(),
        "127.0.0.1".into(),
        "--advertise-address".into(),
        "127.0.0.1".into(),
        "--secure-port".into(),
        ports.apiserver.to_string().into(),
        "--cert-dir".into(),
        dir.join("certs").into(),
        "--token-auth-file".into(),
        dir.join(files::TOKENS).into(),
        "--authorization-mode".into(),
        "RBAC".into(),
        "--service-account-issuer".into(),
        "https://kubernetes.default.svc".into(),
        "--service-account-key-file".into(),
        dir.join(files::SA_PUB).into(),
        "--service-account-signing-key-file".into(),
        dir.join(files::SA_KEY).into(),
        "--service-cluster-ip-range".into(),
        "10.96.0.0/16".into(),
        // No kube-proxy routes ClusterIPs here: the API server calls webhook (and aggregated
        // API) Services at their endpoints' addresses instead.
        "--enable-aggregator-routing=true".into(),
    ])
}

fn controller_manager_args(dir: &Path, ports: Ports) -> Vec<OsString> {
    let kubeconfig: OsString = dir.join(files::ADMIN_KUBECONFIG).into();
    args([
        "--kubeconfig".into(),
        kubeconfig.clone(),
        "--authentication-kubeconfig".into(),
        kubeconfig.clone(),
        "--authorization-kubeconfig".into(),
        kubeconfig,
        "--bind-address".into(),
        "127.0.0.1".into(),
        "--secure-port".into(),
        ports.controller_manager.to_string().into(),
        "--leader-elect=false".into(),
        "--controllers".into(),
        "*".into(),
        "--service-account-private-key-file".into(),
        dir.join(files::SA_KEY).into(),
        "--root-ca-file".into(),
        dir.join(files::SERVING_CERT).into(),
        "--use-service-account-credentials=false".into(),
    ])
}

/// Flags added after envtest's own (a flag given twice takes its last value), e.g. feature
/// gates: see [`Builder::apiserver_arg`](super::Builder::apiserver_arg).
#[derive(Clone, Debug, Default)]
pub(crate) struct ExtraArgs {
    pub(crate) apiserver: Vec<String>,
    pub(crate) controller_manager: Vec<String>,
}

fn with_extra(mut args: Vec<OsString>, extra: &[String]) -> Vec<OsString> {
    args.extend(extra.iter().map(OsString::from));
    args
}

fn args<const N: usize>(args: [OsString; N]) -> Vec<OsString> {
    args.into()
}
