//! A manager binary under test, run as a process of this machine against a cluster: started
//! with its flags and environment ([`ManagerProcessBuilder`]), waited for until ready, watched
//! for exits and RBAC refusals in its log, measured (memory, metrics), and stopped as
//! Kubernetes stops a pod.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use kube::Client;

use super::http::{http_get, metric_sum, scrape_metrics};
use crate::testing::local_webhooks::free_address;
use crate::testing::refusal::Refusal;

/// How long an RBAC refusal must last to count as a missing rule: a kube-apiserver that has
/// just restarted refuses what roles grant until its authorizer has loaded them.
pub const REFUSAL_SETTLE: Duration = Duration::from_secs(5);

/// How long [`ManagerProcessBuilder::start`] waits for `/readyz` by default.
pub const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// How a [`ManagerProcess`] starts: its binary, name, kubeconfig, flags, environment, log.
#[derive(Clone, Debug)]
pub struct ManagerProcessBuilder {
    binary: PathBuf,
    name: String,
    kubeconfig: Option<PathBuf>,
    args: Vec<String>,
    env: Vec<(String, String)>,
    log: Option<PathBuf>,
    ready_timeout: Duration,
    metrics_token: Option<String>,
}

impl ManagerProcessBuilder {
    /// Its name in messages and its `POD_NAME` (its leader election identity); `manager` by
    /// default.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The kubeconfig it runs with (`--kubeconfig`), e.g. a ServiceAccount's
    /// ([`ServiceAccountAccess::kubeconfig`](crate::testing::envtest::ServiceAccountAccess::kubeconfig)).
    /// Without one it finds its cluster as a deployed manager does.
    pub fn kubeconfig(mut self, path: impl Into<PathBuf>) -> Self {
        self.kubeconfig = Some(path.into());
        self
    }

    /// One more flag, after those of the harness (`--kubeconfig`, `--metrics-bind-address`,
    /// `--health-probe-bind-address` on free loopback ports).
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// More flags (see [`ManagerProcessBuilder::arg`]).
    pub fn args(mut self, args: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// One more environment variable (it inherits the test's; `RUST_LOG` is `info` unless
    /// set).
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// The file its stdout and stderr go to; `<temp dir>/<name>-<pid of the test>.log` by
    /// default.
    pub fn log(mut self, path: impl Into<PathBuf>) -> Self {
        self.log = Some(path.into());
        self
    }

    /// The bearer token its metrics are scraped with, over HTTPS as Prometheus scrapes them (a
    /// ServiceAccount's allowed `GET /metrics`: [`metrics_reader`](crate::testing::metrics::metrics_reader)).
    /// Without one, [`ManagerProcess::metric`] scrapes plain HTTP (a manager started with
    /// `--metrics-secure=false`).
    pub fn metrics_token(mut self, token: impl Into<String>) -> Self {
        self.metrics_token = Some(token.into());
        self
    }

    /// How long it may take to answer `/readyz` with 200 ([`READY_TIMEOUT`] by default).
    pub fn ready_timeout(mut self, timeout: Duration) -> Self {
        self.ready_timeout = timeout;
        self
    }

    /// Starts it and returns once it answers `/readyz` with 200. `admin` (a client of the
    /// cluster's admin) reviews the refusals in its log ([`ManagerProcess::check`]). It gets
    /// SIGTERM when the test process dies, even killed outright (Linux): a leftover manager
    /// would go on acting on the cluster.
    ///
    /// # Panics
    ///
    /// With its log, when it cannot start, exits, is refused a request by RBAC, or is not
    /// ready in time.
    pub async fn start(self, admin: Client) -> ManagerProcess {
        let log = self.log.unwrap_or_else(|| {
            let file = format!("{}-{}.log", self.name, std::process::id());
            std::env::temp_dir().join(file)
        });
        let file = std::fs::File::create(&log)
            .unwrap_or_else(|e| panic!("creating the manager log {}: {e}", log.display()));
        let free = || free_address().unwrap_or_else(|e| panic!("{e}"));
        let (metrics, probes) = (free(), free());
        let webhooks = self.args.iter().find_map(|arg| {
            let address = arg.strip_prefix("--webhook-bind-address=")?;
            address.parse().ok()
        });
        let mut command = Command::new(&self.binary);
        if let Some(kubeconfig) = &self.kubeconfig {
            command.arg(format!("--kubeconfig={}", kubeconfig.display()));
        }
        command
            .arg(format!("--metrics-bind-address={metrics}"))
            .arg(format!("--health-probe-bind-address={probes}"))
            .args(&self.args)
            .env("POD_NAME", &self.name)
            .env(
                "RUST_LOG",
                std::env::var("RUST_LOG").unwrap_or("info".into()),
            )
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdout(file.try_clone().expect("a second handle of the log file"))
            .stderr(file);
        #[cfg(target_os = "linux")]
        // SAFETY: prctl is async-signal-safe, as code between fork and exec must be.
        unsafe {
            use std::os::unix::process::CommandExt;
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let binary = self.binary.display();
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("starting the manager {binary}: {e}"));
        let mut manager = ManagerProcess {
            name: self.name,
            child,
            log,
            searched: 0,
            admin,
            metrics,
            metrics_token: self.metrics_token,
            probes,
            webhooks,
        };
        let deadline = Instant::now() + self.ready_timeout;
        while !manager.ready().await {
            manager.check().await;
            let tail = manager.tail();
            assert!(
                Instant::now() < deadline,
                "the manager is not ready: {tail}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        manager
    }
}

/// A manager binary running on this machine: started by [`ManagerProcessBuilder`], waited for
/// until ready, watched for exits and RBAC refusals in its log, measured, and stopped as
/// Kubernetes stops a pod.
///
/// ```no_run
/// # async fn f() {
/// use operator_rs_runtime::testing::e2e::ManagerProcess;
///
/// let admin = kube::Client::try_default().await.unwrap();
/// // In a test of the manager's crate: env!("CARGO_BIN_EXE_manager").
/// let mut manager = ManagerProcess::builder("target/debug/manager")
///     .kubeconfig("target/manager.kubeconfig")
///     .args(["--leader-elect", "--webhook-bind-address=0"])
///     .env("RUST_LOG", "debug")
///     .start(admin)
///     .await;
/// manager.check().await; // still running, no RBAC refusal
/// assert!(manager.leads().await);
/// assert!(manager.stop(), "it exits by itself on SIGTERM");
/// # }
/// ```
pub struct ManagerProcess {
    name: String,
    child: Child,
    log: PathBuf,
    /// How much of its log was searched for RBAC refusals.
    searched: u64,
    /// The admin's client, to review refusals.
    admin: Client,
    metrics: SocketAddr,
    /// The bearer token its metrics are scraped with (HTTPS); plain HTTP without one.
    metrics_token: Option<String>,
    probes: SocketAddr,
    webhooks: Option<SocketAddr>,
}

impl std::fmt::Debug for ManagerProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManagerProcess")
            .field("name", &self.name)
            .field("pid", &self.child.id())
            .field("log", &self.log)
            .field("metrics", &self.metrics)
            .field("probes", &self.probes)
            .field("webhooks", &self.webhooks)
            .finish_non_exhaustive()
    }
}

impl ManagerProcess {
    /// How to start the manager binary `binary` (`env!("CARGO_BIN_EXE_manager")` in a test of
    /// its crate).
    pub fn builder(binary: impl Into<PathBuf>) -> ManagerProcessBuilder {
        ManagerProcessBuilder {
            binary: binary.into(),
            name: "manager".into(),
            kubeconfig: None,
            args: Vec::new(),
            env: Vec::new(),
            log: None,
            ready_timeout: READY_TIMEOUT,
            metrics_token: None,
        }
    }

    /// Its name (its `POD_NAME`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its log file.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// Where it serves metrics.
    pub fn metrics_address(&self) -> SocketAddr {
        self.metrics
    }

    /// Where it serves its health probes (`/healthz`, `/readyz`).
    pub fn probes_address(&self) -> SocketAddr {
        self.probes
    }

    /// Where it serves webhooks, if it was given `--webhook-bind-address=<ip:port>`.
    pub fn webhooks_address(&self) -> Option<SocketAddr> {
        self.webhooks
    }

    /// Whether it answers `/readyz` with 200 now.
    pub async fn ready(&self) -> bool {
        let ready = http_get(self.probes, "/readyz").await;
        ready.is_some_and(|(status, _)| status == 200)
    }

    /// Panics with its log if it exited, or if the API server refused it a request for want
    /// of an RBAC rule (a 403 naming its ServiceAccount that a SubjectAccessReview confirms
    /// for [`REFUSAL_SETTLE`]; see [`Refusal`]).
    pub async fn check(&mut self) {
        while let Some((refused, refusal)) = self.next_refusal() {
            let persists = refusal.persists(&self.admin, REFUSAL_SETTLE).await;
            if !persists.unwrap_or(true) {
                continue;
            }
            panic!(
                "the API server refused the manager ({}) a request: config/rbac lacks a rule \
                 (add a `+kubebuilder:rbac` marker and run `make manifests`):\n{refused}\n{}",
                self.name,
                self.tail()
            );
        }
        if let Ok(Some(exit)) = self.child.try_wait() {
            let name = &self.name;
            panic!("the manager ({name}) exited ({exit}): {}", self.tail());
        }
    }

    /// The next line of its log where the API server refused it a request by RBAC.
    fn next_refusal(&mut self) -> Option<(String, Refusal)> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = std::fs::File::open(&self.log).ok()?;
        file.seek(SeekFrom::Start(self.searched)).ok()?;
        let mut new = Vec::new();
        file.read_to_end(&mut new).ok()?;
        // Complete lines only: the manager may be writing the last one.
        let complete = new.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        for line in new[..complete].split_inclusive(|b| *b == b'\n') {
            self.searched += line.len() as u64;
            let line = String::from_utf8_lossy(line);
            if let Some(refusal) = Refusal::parse(&line) {
                return Some((line.trim_end().to_string(), refusal));
            }
        }
        None
    }

    /// Stops it like Kubernetes does: SIGTERM, then SIGKILL after 10 seconds. Returns whether
    /// it exited by itself with status 0.
    pub fn stop(mut self) -> bool {
        self.signal("-TERM");
        let deadline = Instant::now() + Duration::from_secs(10);
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        let exited = matches!(self.child.try_wait(), Ok(Some(status)) if status.success());
        let _ = self.child.kill();
        let _ = self.child.wait();
        exited
    }

    /// Kills it outright (`kill -9`), as a node failure would.
    pub fn kill(mut self) {
        self.signal("-KILL");
        let _ = self.child.wait();
    }

    fn signal(&self, signal: &str) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args([signal, &pid]).status();
    }

    /// The end of its log (about 4,000 bytes), after the log's path.
    pub fn tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let start = log.len().saturating_sub(4000);
        let start = (start..log.len())
            .find(|&i| log.is_char_boundary(i))
            .unwrap_or(0);
        format!("{}:\n{}", self.log.display(), &log[start..])
    }

    /// A memory figure from `/proc/<pid>/status` (`VmHWM`: its peak, `VmRSS`: now), in MiB; 0
    /// where there is no such file (see [`scale::memory`](crate::testing::scale::memory)).
    pub fn memory(&self, field: &str) -> f64 {
        crate::testing::scale::memory(self.pid(), field) as f64 / 1024.0 / 1024.0
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The sum of its metrics series that start with `series` (0 when none, or when its
    /// metrics do not answer); see [`metric_sum`].
    pub async fn metric(&self, series: &str) -> f64 {
        let text = match &self.metrics_token {
            Some(token) => {
                let scraped =
                    crate::testing::metrics::scrape(self.metrics, "/metrics", Some(token));
                (scraped.await.ok())
                    .filter(|s| s.status == 200)
                    .map(|s| s.body)
            }
            None => scrape_metrics(self.metrics).await,
        };
        text.map_or(0.0, |text| metric_sum(&text, series))
    }

    /// How many reconciles its controller `name` finished (either result).
    pub async fn reconciles(&self, name: &str) -> u64 {
        let series = format!("controller_runtime_reconcile_total{{controller=\"{name}\"");
        self.metric(&series).await as u64
    }

    /// Whether it holds the leader election Lease.
    pub async fn leads(&self) -> bool {
        self.metric("leader_election_master_status").await == 1.0
    }
}
