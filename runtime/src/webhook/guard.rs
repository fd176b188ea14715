//! The local-webhook guard: a second process that takes `--webhook-local-url`'s changes back
//! out of the cluster when the manager dies without doing it (SIGKILL, a panic, an abort, a
//! crash of the machine's OOM killer).
//!
//! Local mode points the cluster's webhook configurations (`failurePolicy: Fail`) and CRD
//! conversions at this process. If it died with them in place, every create of the kind in
//! the cluster would be refused until someone deleted them by hand. So before it writes
//! anything, the manager starts its own binary again, with the same arguments and
//! [`GUARD_ENV`] set, in a process group of its own (a Ctrl-C in the terminal does not reach
//! it), and sends it the [`Plan`] of what it is about to write on its stdin. The guard waits
//! for that pipe to close: the manager closes it after a clean shutdown with a final
//! [`RELEASED`] line, and the kernel closes it whatever way the manager ends. Without that
//! line, the guard removes everything in the plan (each step idempotent) and exits. The plan
//! may change while the manager runs (`make install` writes a CRD's conversion anew, which is
//! what stopping the manager must restore): the manager sends each new plan as another line,
//! and the last one counts.
//!
//! The operator's `main` needs nothing for this: [`Manager::new`](crate::manager::Manager::new)
//! runs the guard when it finds [`GUARD_ENV`], before it binds any port.

use std::io::{Read as _, Write as _};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

use std::collections::BTreeMap;

use kube::Client;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::install::{self, InstallError};

/// Set (to `1`) in the guard's environment.
pub const GUARD_ENV: &str = "OPERATOR_RS_LOCAL_WEBHOOK_GUARD";

/// The last line the manager sends after it removed what it wrote itself.
pub const RELEASED: &str = "released";

/// How long the guard keeps trying to clean up (the API server may be restarting too).
const CLEANUP_DEADLINE: Duration = Duration::from_secs(60);

/// What local mode writes to the cluster, and so what the guard removes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// `(kind, name)` of each Mutating/ValidatingWebhookConfiguration created.
    pub configurations: Vec<(String, String)>,
    /// The CRDs whose conversion is pointed at the manager.
    pub crds: Vec<String>,
    /// The field manager of those writes.
    pub field_manager: String,
    /// The `spec.conversion` each CRD of [`Plan::crds`] is given back when local mode ends:
    /// the one installed in the cluster (`make install`'s, calling the Service) before the
    /// manager pointed it at itself, or written since. A CRD not listed goes back to
    /// `strategy: None` (it converted through no Service).
    #[serde(default)]
    pub restore: BTreeMap<String, Value>,
}

impl Plan {
    /// Deletes the configurations and gives each CRD back its installed conversion
    /// ([`Plan::restore`]), or turns its conversion webhook off; each step is safe to run
    /// again, and on objects already gone.
    pub async fn remove(&self, client: &Client) -> Result<(), InstallError> {
        install::remove_identities(client, &self.configurations).await?;
        for crd in &self.crds {
            match self.restore.get(crd) {
                Some(conversion) => {
                    install::restore_conversion(client, crd, conversion, &self.field_manager)
                        .await?
                }
                None => install::clear_conversion(client, crd, &self.field_manager).await?,
            }
        }
        Ok(())
    }
}

/// The manager's handle on its guard: dropping it without [`Guard::release`] (the manager
/// unwinding, or exiting) makes the guard clean up.
#[derive(Debug)]
pub struct Guard {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Guard {
    /// Starts this binary again as the guard of `plan`, and hands it the plan.
    pub fn spawn(plan: &Plan) -> std::io::Result<Self> {
        use std::os::unix::process::CommandExt as _;
        let exe = std::env::current_exe()?;
        let mut child = Command::new(exe)
            .args(std::env::args_os().skip(1))
            .env(GUARD_ENV, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            // Its own process group: a Ctrl-C (SIGINT to the terminal's foreground group)
            // stops the manager, which cleans up itself, and never the guard.
            .process_group(0)
            .spawn()?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let mut guard = Self {
            child,
            stdin: Some(stdin),
        };
        if let Err(err) = guard.update(plan) {
            let _ = guard.child.kill();
            let _ = guard.child.wait();
            guard.stdin.take();
            return Err(err);
        }
        Ok(guard)
    }

    /// Hands the guard `plan` in place of the one it had.
    pub fn update(&mut self, plan: &Plan) -> std::io::Result<()> {
        let mut line = serde_json::to_string(plan).expect("a plan serializes");
        line.push('\n');
        let stdin = (self.stdin.as_mut()).ok_or_else(|| std::io::Error::other("guard released"))?;
        stdin.write_all(line.as_bytes())?;
        stdin.flush()
    }

    /// Tells the guard that the manager removed everything itself, and waits for it to exit.
    pub fn release(mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = writeln!(stdin, "{RELEASED}");
        }
        let _ = self.child.wait();
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // Closing the pipe without the released line: the guard cleans up. Not waited for,
        // so that a manager exiting on an error is not held up by the API server.
        self.stdin.take();
    }
}

/// Runs the guard (in the process [`Guard::spawn`] started): reads the plan, waits for the
/// manager to close the pipe, and cleans up unless it said [`RELEASED`].
pub async fn run(client: Client) -> ! {
    // Only the pipe's end ends the guard: a signal meant for the manager's name must not
    // leave the cluster behind.
    let _ignored = ignore_signals();
    let (input, read) = tokio::task::spawn_blocking(|| {
        let mut input = String::new();
        let read = std::io::stdin().read_to_string(&mut input).map(|_| ());
        (input, read.err())
    })
    .await
    .unwrap_or_default();
    let (plan, released) = read_plans(&input);
    let code = match (plan, released) {
        (_, true) => 0,
        (None, false) => {
            tracing::warn!(error = ?read, "local webhook guard: no plan received, nothing to remove");
            0
        }
        (Some(plan), false) => {
            tracing::warn!(
                configurations = plan.configurations.len(),
                crds = plan.crds.len(),
                "the manager exited without removing its local webhook configurations: removing them"
            );
            cleanup(&client, &plan).await
        }
    };
    std::process::exit(code)
}

/// The last plan of the guard's input, and whether the manager said [`RELEASED`].
fn read_plans(input: &str) -> (Option<Plan>, bool) {
    let plan = (input.lines().rev()).find_map(|l| serde_json::from_str::<Plan>(l).ok());
    (plan, input.lines().any(|l| l == RELEASED))
}

/// Removes `plan`, retrying until [`CLEANUP_DEADLINE`]; the exit status.
async fn cleanup(client: &Client, plan: &Plan) -> i32 {
    let deadline = tokio::time::Instant::now() + CLEANUP_DEADLINE;
    loop {
        match plan.remove(client).await {
            Ok(()) => {
                tracing::info!("local webhook configurations removed");
                return 0;
            }
            Err(err) if tokio::time::Instant::now() < deadline => {
                tracing::warn!(error = %err, "removing the local webhook configurations; retrying");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(err) => {
                tracing::error!(
                    error = %err,
                    configurations = ?plan.configurations,
                    crds = ?plan.crds,
                    "could not remove the local webhook configurations: delete them by hand"
                );
                return 1;
            }
        }
    }
}

fn ignore_signals() -> Vec<tokio::signal::unix::Signal> {
    use tokio::signal::unix::{SignalKind, signal};
    [
        SignalKind::interrupt(),
        SignalKind::terminate(),
        SignalKind::hangup(),
    ]
    .into_iter()
    .filter_map(|kind| signal(kind).ok())
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_is_one_line_of_json() {
        let plan = Plan {
            configurations: vec![(
                "ValidatingWebhookConfiguration".into(),
                "op-local-validating-webhook-configuration".into(),
            )],
            crds: vec!["cronjobs.batch.example.com".into()],
            field_manager: "op-local-webhooks".into(),
            restore: BTreeMap::new(),
        };
        let line = serde_json::to_string(&plan).unwrap();
        assert!(!line.contains('\n'));
        assert_eq!(serde_json::from_str::<Plan>(&line).unwrap(), plan);
    }

    #[test]
    fn the_last_plan_counts() {
        let first = Plan {
            crds: vec!["cronjobs.batch.example.com".into()],
            ..Plan::default()
        };
        let mut second = first.clone();
        let service = serde_json::json!({"strategy": "Webhook"});
        second
            .restore
            .insert("cronjobs.batch.example.com".into(), service);
        let lines = |plans: &[&Plan]| {
            (plans.iter())
                .map(|p| serde_json::to_string(p).unwrap() + "\n")
                .collect::<String>()
        };
        assert_eq!(
            read_plans(&lines(&[&first, &second])),
            (Some(second.clone()), false)
        );
        let released = lines(&[&first]) + RELEASED + "\n";
        assert_eq!(read_plans(&released), (Some(first), true));
        assert_eq!(read_plans(""), (None, false));
    }
}
