//! Health probes: `/healthz` (liveness) and `/readyz` (readiness) on the probe address.
//!
//! - `/healthz` answers 200 while the process serves HTTP (like controller-runtime's `healthz.Ping`).
//! - `/readyz` answers 200 once every controller this replica runs has called
//!   [`ReadyHandle::set_ready`] (its caches have synced), 503 until then.
//! - A replica waiting for the leader election Lease (a standby) runs no controllers and is
//!   ready, as in controller-runtime, where caches sync on every replica and only the
//!   controllers wait for leadership. Otherwise a rolling update of a Deployment could never
//!   finish: its new pods would wait for the old leader to let go and never become ready.
//!   When a standby becomes leader, `/readyz` answers 503 again until its controllers synced.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use futures::{Stream, StreamExt};
use kube::runtime::watcher;

#[derive(Debug, Default)]
struct State {
    standby: AtomicBool,
    pending: AtomicUsize,
}

/// Readiness of the whole manager: the union of its controllers' [`ReadyHandle`]s.
#[derive(Clone, Debug, Default)]
pub struct Readiness {
    state: Arc<State>,
}

impl Readiness {
    /// Ready until a controller is registered with [`Readiness::handle`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers one more controller that must report ready.
    pub fn handle(&self) -> ReadyHandle {
        self.state.pending.fetch_add(1, Ordering::SeqCst);
        ReadyHandle {
            ready: Arc::new(AtomicBool::new(false)),
            readiness: self.clone(),
        }
    }

    /// Marks this replica as a leader election standby (ready, runs nothing) or not.
    pub fn set_standby(&self, standby: bool) {
        self.state.standby.store(standby, Ordering::SeqCst);
    }

    /// Whether `/readyz` answers 200.
    pub fn is_ready(&self) -> bool {
        self.state.standby.load(Ordering::SeqCst) || self.state.pending.load(Ordering::SeqCst) == 0
    }
}

/// One controller's readiness; clones share it.
#[derive(Clone, Debug)]
pub struct ReadyHandle {
    ready: Arc<AtomicBool>,
    readiness: Readiness,
}

impl ReadyHandle {
    /// A handle that belongs to no manager (unit tests).
    pub fn detached() -> Self {
        Readiness::new().handle()
    }

    /// Reports that this controller's stores have synced. Idempotent.
    pub fn set_ready(&self) {
        if !self.ready.swap(true, Ordering::SeqCst) {
            self.readiness.state.pending.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Splits this controller's readiness into `parts` handles, one per watch stream it
    /// caches: the controller is ready once every part is.
    pub fn split(self, parts: usize) -> Vec<ReadyHandle> {
        let handles = (0..parts).map(|_| self.readiness.handle()).collect();
        self.set_ready();
        handles
    }

    /// Whether [`ReadyHandle::set_ready`] was called.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }
}

/// Passes a reflected watch stream through and reports `ready` when the stream yields its
/// first `InitDone`: the store it feeds then holds a complete first list.
///
/// ```ignore
/// let objects = watcher(api, watcher::Config::default())
///     .default_backoff()
///     .reflect(writer);
/// let objects = ready_when_listed(objects, ctx.ready.clone()).applied_objects();
/// ```
///
/// Prefer it to a task awaiting `store.wait_until_ready()`: in kube-runtime 5.0 that future
/// keeps only the waker of the task that polled it last, and the `Controller` built on the same
/// store waits on it too, so one of the two may never wake up.
pub fn ready_when_listed<K, S>(stream: S, ready: ReadyHandle) -> impl Stream<Item = S::Item>
where
    S: Stream<Item = Result<watcher::Event<K>, watcher::Error>>,
{
    stream.inspect(move |event| {
        if let Ok(watcher::Event::InitDone) = event {
            ready.set_ready();
        }
    })
}

/// The router serving `GET /healthz` and `GET /readyz`.
pub fn router(readiness: Readiness) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/readyz",
            get(move || {
                let ready = readiness.is_ready();
                async move {
                    if ready {
                        (StatusCode::OK, "ok")
                    } else {
                        (
                            StatusCode::SERVICE_UNAVAILABLE,
                            "controllers have not synced yet",
                        )
                    }
                }
            }),
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manager::testing::http_get;

    #[tokio::test]
    async fn probes_answer_healthz_and_readyz_after_every_controller_synced() {
        let readiness = Readiness::new();
        let first = readiness.handle();
        let second = readiness.handle();

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move { axum::serve(listener, router(readiness)).await });

        let healthz = http_get(addr, "/healthz").await;
        assert_eq!((healthz.status, healthz.body.as_str()), (200, "ok"));
        assert_eq!(http_get(addr, "/readyz").await.status, 503);

        first.set_ready();
        first.clone().set_ready(); // idempotent, also through clones
        assert_eq!(
            http_get(addr, "/readyz").await.status,
            503,
            "second controller not synced"
        );

        second.set_ready();
        let readyz = http_get(addr, "/readyz").await;
        assert_eq!((readyz.status, readyz.body.as_str()), (200, "ok"));
        assert_eq!(http_get(addr, "/nope").await.status, 404);
        server.abort();
    }

    #[tokio::test]
    async fn a_controller_is_ready_once_every_stream_it_caches_has_listed() {
        use k8s_openapi::api::core::v1::{ConfigMap, Secret};
        use kube::runtime::{WatchStreamExt, reflector};

        let readiness = Readiness::new();
        let mut parts = readiness.handle().split(2).into_iter();
        let (maps, secrets) = (parts.next().unwrap(), parts.next().unwrap());
        assert!(!readiness.is_ready());

        let (store, writer) = reflector::store::<ConfigMap>();
        // Like a Controller on the same store: it must still wake up.
        let controller = {
            let store = store.clone();
            tokio::spawn(async move { store.wait_until_ready().await.is_ok() })
        };
        let events = futures::stream::iter([
            Ok(watcher::Event::Init),
            Ok(watcher::Event::InitApply(ConfigMap {
                metadata: kube::api::ObjectMeta {
                    name: Some("settings".into()),
                    ..Default::default()
                },
                ..Default::default()
            })),
            Ok(watcher::Event::InitDone),
        ]);
        let stream = ready_when_listed(events.reflect(writer), maps.clone());
        let mut stream = std::pin::pin!(stream);
        stream.next().await;
        stream.next().await;
        assert!(!maps.is_ready(), "ready before the list completed");
        stream.next().await;
        assert!(maps.is_ready());
        assert_eq!(store.len(), 1, "ready before the store had the list");
        assert!(controller.await.unwrap());
        assert!(!readiness.is_ready(), "the second stream has not listed");

        let events = futures::stream::iter([
            Ok(watcher::Event::<Secret>::Init),
            Ok(watcher::Event::InitDone),
        ]);
        ready_when_listed(events, secrets)
            .applied_objects()
            .for_each(|_| async {})
            .await;
        assert!(readiness.is_ready());
    }

    #[test]
    fn a_standby_is_ready_and_a_new_leader_is_not_until_synced() {
        let readiness = Readiness::new();
        readiness.set_standby(true);
        assert!(readiness.is_ready());

        let handle = readiness.handle();
        assert!(readiness.is_ready(), "standby stays ready");
        readiness.set_standby(false);
        assert!(!readiness.is_ready());
        handle.set_ready();
        assert!(readiness.is_ready());
        assert!(handle.is_ready());
        assert!(!ReadyHandle::detached().is_ready());
    }
}
