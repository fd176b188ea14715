//! Shutdown: one process-wide signal that tells every controller to stop taking work.
//!
//! It fires on SIGTERM or SIGINT (see [`listen_for_signals`]), when this replica loses its
//! leader election Lease, or when the manager gives up for another reason. Controllers hand
//! [`Shutdown::wait`] to `Controller::graceful_shutdown_on`, so reconciles in flight finish
//! while no new ones start. A second signal during that drain exits the process at once
//! with status 1, like controller-runtime does.

use std::future::Future;

use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

/// A cloneable shutdown trigger; every clone sees the same state. A [`CancellationToken`]
/// (tokio-util's, which kube's and tower's stacks already build) with the manager's names.
#[derive(Clone, Debug, Default)]
pub struct Shutdown {
    token: CancellationToken,
}

impl Shutdown {
    /// A shutdown that has not been triggered yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts the shutdown. Idempotent.
    pub fn trigger(&self) {
        self.token.cancel();
    }

    /// Whether the shutdown has started.
    pub fn is_triggered(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Resolves once the shutdown has started (at once if it already has).
    ///
    /// The future owns what it needs, so it can go straight into
    /// `Controller::graceful_shutdown_on(ctx.shutdown.wait())`.
    pub fn wait(&self) -> impl Future<Output = ()> + Send + Sync + 'static {
        self.token.clone().cancelled_owned()
    }

    /// The token underneath, for code that takes a [`CancellationToken`] (child tokens,
    /// `run_until_cancelled`).
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }
}

/// Triggers `shutdown` on the first SIGTERM or SIGINT and exits the process with status 1
/// on the second one. The signal handlers are installed before this returns.
pub fn listen_for_signals(shutdown: Shutdown) -> std::io::Result<tokio::task::JoinHandle<()>> {
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM received, shutting down"),
            _ = int.recv() => tracing::info!("SIGINT received, shutting down"),
        }
        shutdown.trigger();
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        tracing::warn!("second signal received, exiting without waiting for reconciles");
        std::process::exit(1);
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn wait_resolves_only_after_trigger_for_every_clone() {
        let shutdown = Shutdown::new();
        let clone = shutdown.clone();
        let early = tokio::spawn(clone.wait());
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!early.is_finished(), "wait() resolved before trigger()");
        assert!(!shutdown.is_triggered());

        clone.trigger();
        tokio::time::timeout(Duration::from_secs(1), early)
            .await
            .expect("wait() did not resolve after trigger()")
            .unwrap();
        assert!(shutdown.is_triggered());
        // A waiter created after the trigger resolves at once.
        tokio::time::timeout(Duration::from_millis(100), shutdown.wait())
            .await
            .expect("late wait() did not resolve");
    }
}
