//! The plumbing every controller shares, on a mock API server: the finalizer, cleanup that a
//! forbidden event does not block, backoff, bounded error labels, and owned caches still
//! listing. (The same plumbing runs against a real API server in `tests/controller.rs`.)

use std::sync::Arc;
use std::time::Duration;

use http::Method;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::{reflector, watcher};
use serde_json::json;

use super::*;
use crate::testing::{ApiServerVerifier, mock_context};

const FINALIZER: &str = "example.com/finalizer";
const PATH: &str = "/api/v1/namespaces/default/configmaps/test";

/// Applies by reading an owned cache of ConfigMaps (`owned`), or fails with a conflict.
struct Logic {
    owned: bool,
}

impl Reconciler for Logic {
    type Kind = ConfigMap;

    async fn apply(&self, obj: Arc<ConfigMap>, ctx: &Context<ConfigMap>) -> Result<Action> {
        if self.owned {
            let key = ObjectRef::from_obj(obj.as_ref());
            ctx.owned::<ConfigMap>(&key)?;
            return Ok(Action::requeue(Duration::from_secs(60)));
        }
        let api = kube::Api::<ConfigMap>::default_namespaced(ctx.client());
        api.replace("test", &Default::default(), &obj).await?;
        Ok(Action::await_change())
    }
}

fn object(finalizers: &[&str], deleting: bool) -> ConfigMap {
    let mut obj = ConfigMap::default();
    obj.metadata.name = Some("test".into());
    obj.metadata.namespace = Some("default".into());
    if !finalizers.is_empty() {
        obj.metadata.finalizers = Some(finalizers.iter().map(|f| f.to_string()).collect());
    }
    if deleting {
        obj.metadata.deletion_timestamp = Some(Time(Timestamp::now()));
    }
    obj
}

async fn reconcile(
    logic: Logic,
    finalizer: Option<&'static str>,
    obj: ConfigMap,
    server: impl AsyncFnOnce(&mut ApiServerVerifier),
) -> (Result<Action>, Context<ConfigMap>) {
    let (manager, verifier) = mock_context();
    let ctx = Context::for_tests(manager);
    let reconcile = ReconcileLoop::new(logic, finalizer);
    let result = verifier
        .run(server, reconcile.reconcile(Arc::new(obj), &ctx))
        .await;
    (result, ctx)
}

#[tokio::test]
async fn adds_the_finalizer_before_anything_else() {
    let reply = serde_json::to_value(object(&[FINALIZER], false)).unwrap();
    let logic = Logic { owned: false };
    let (result, _) = reconcile(logic, Some(FINALIZER), object(&[], false), async |server| {
        let patch = server.patch(PATH, reply).await;
        assert_eq!(patch.content_type, "application/json-patch+json");
        assert_eq!(
            patch.body,
            json!([
                {"op": "test", "path": "/metadata/finalizers", "value": null},
                {"op": "add", "path": "/metadata/finalizers", "value": [FINALIZER]},
            ])
        );
    })
    .await;
    assert_eq!(result.unwrap(), Action::await_change());
}

#[tokio::test]
async fn cleanup_removes_the_finalizer_then_sends_its_event_even_when_it_is_forbidden() {
    let obj = object(&[FINALIZER], true);
    let reply = serde_json::to_value(&obj).unwrap();
    let (result, _) = reconcile(
        Logic { owned: false },
        Some(FINALIZER),
        obj,
        async |server| {
            // The finalizer first: the event is sent once the reconcile is done.
            let patch = server.patch(PATH, reply).await;
            assert_eq!(
                patch.body,
                json!([
                    {"op": "test", "path": "/metadata/finalizers/0", "value": FINALIZER},
                    {"op": "remove", "path": "/metadata/finalizers/0"},
                ])
            );
            // The namespace is being terminated: events can no longer be created in it.
            let event = server.event(403).await;
            assert_eq!(event.body["reason"], "Deleting");
        },
    )
    .await;
    assert_eq!(result.unwrap(), Action::await_change());
}

#[tokio::test]
async fn an_object_gone_while_its_finalizer_is_removed_is_done() {
    let obj = object(&[FINALIZER], true);
    let (result, _) = reconcile(
        Logic { owned: false },
        Some(FINALIZER),
        obj,
        async |server| {
            server.fail(Method::PATCH, PATH, 404).await;
            server.event(201).await;
        },
    )
    .await;
    assert_eq!(result.unwrap(), Action::await_change());
}

#[tokio::test]
async fn errors_back_off_exponentially_count_under_a_bounded_label_and_reset_on_success() {
    let obj = Arc::new(object(&[], false));
    let (result, ctx) = reconcile(
        Logic { owned: false },
        None,
        (*obj).clone(),
        async |server| {
            server.fail(Method::PUT, PATH, 409).await;
        },
    )
    .await;
    let error = result.unwrap_err();
    assert_eq!(error.metric_label(), "kube");
    let delays: Vec<_> = (0..10)
        .map(|_| error_policy(obj.clone(), &error, &ctx))
        .collect();
    let secs = |s| Action::requeue(Duration::from_secs(s));
    assert_eq!(delays[..4], [secs(1), secs(2), secs(4), secs(8)]);
    assert_eq!(delays[9], Action::requeue(BACKOFF_CAP));
    assert_eq!(ctx.metrics().errors("kube"), 10);

    // A successful reconcile resets the backoff.
    ctx.reset_failures(&ObjectRef::from_obj(obj.as_ref()));
    assert_eq!(error_policy(obj, &error, &ctx), secs(1));
}

#[tokio::test]
async fn an_owned_cache_still_listing_requeues_shortly_without_an_error() {
    let (manager, verifier) = mock_context();
    let (store, mut writer) = reflector::store::<ConfigMap>();
    writer.apply_watcher_event(&watcher::Event::Init);
    let ctx = Context::for_tests(manager).with_cache(store);
    let reconcile = ReconcileLoop::new(Logic { owned: true }, None);
    let obj = Arc::new(object(&[], false));
    let action = verifier
        .run(async |_server| {}, reconcile.reconcile(obj.clone(), &ctx))
        .await;
    assert_eq!(action.unwrap(), Action::requeue(CACHE_WAIT));
    assert_eq!(ctx.metrics().errors("cache_not_ready"), 0);

    // Listed: the reconcile reads the cache and goes on.
    writer.apply_watcher_event(&watcher::Event::InitDone);
    let action = reconcile.reconcile(obj, &ctx).await;
    assert_eq!(action.unwrap(), Action::requeue(Duration::from_secs(60)));
}

#[tokio::test]
async fn reading_a_cache_that_was_never_registered_says_how_to_register_it() {
    let (manager, _verifier) = mock_context();
    let ctx = Context::<ConfigMap>::for_tests(manager);
    let error = ctx.cache::<ConfigMap>().unwrap_err();
    assert_eq!(error.metric_label(), "no_cache");
    assert!(
        error
            .to_string()
            .contains("Controller::owns::<ConfigMap>()"),
        "{error}"
    );
}

/// Never finishes; sets its flag when dropped (cancelled).
struct Stuck(Arc<std::sync::atomic::AtomicBool>);

impl Reconciler for Stuck {
    type Kind = ConfigMap;

    async fn apply(&self, _obj: Arc<ConfigMap>, _ctx: &Context<ConfigMap>) -> Result<Action> {
        struct Cancelled(Arc<std::sync::atomic::AtomicBool>);
        impl Drop for Cancelled {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let _cancelled = Cancelled(self.0.clone());
        std::future::pending().await
    }
}

// Real time, a short deadline: tokio's paused clock needs its `test-util` feature, which would
// give this workspace's tokio other features than a generated project's (tests/generated_workflow.rs).
#[tokio::test]
async fn a_reconcile_past_its_deadline_is_cancelled_counted_and_backed_off() {
    let deadline = Duration::from_millis(200);
    let (mut manager, _verifier) = mock_context();
    manager.reconcile_timeout = Some(deadline);
    let ctx = Context::for_tests(manager);
    let cancelled = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reconcile = ReconcileLoop::new(Stuck(cancelled.clone()), None);
    let obj = Arc::new(object(&[], false));
    let started = tokio::time::Instant::now();
    let running = reconcile.reconcile(obj.clone(), &ctx);
    let error = running.await.unwrap_err();
    let took = started.elapsed();
    assert!(matches!(error, Error::Timeout(limit) if limit == deadline));
    assert!((deadline..deadline * 10).contains(&took), "{took:?}");
    assert!(
        cancelled.load(std::sync::atomic::Ordering::SeqCst),
        "not cancelled"
    );
    assert_eq!(ctx.metrics().reconciles("error"), 1);
    assert_eq!(ctx.metrics().active_workers(), 0);
    // The error policy retries it with the backoff, and counts it as a timeout.
    assert_eq!(
        error_policy(obj, &error, &ctx),
        Action::requeue(BACKOFF_BASE)
    );
    assert_eq!(ctx.metrics().errors("timeout"), 1);
}
