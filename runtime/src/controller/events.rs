//! Publishing Kubernetes events (`events.k8s.io/v1`) about reconciled objects.
//!
//! Like kube's `Recorder`, a repeat of an event (same type, action, reason, related object,
//! about the same object) within [`SERIES_TTL`] of the last one is not a new Event: the first
//! becomes a series (`series.count`, `series.lastObservedTime`). Unlike it, what is kept of each
//! recent event is a hash of what identifies it, its name and its count, not two copies of the
//! whole Event: kube's cache held about 2.5 KiB an event, 8 MiB once a catch-up had published
//! one event for each of 3,000 objects.
//!
//! An event nothing waits for (the default `cleanup`'s `Deleting`) is queued
//! ([`Events::publish_later`]) and sent in the background, as client-go's recorder sends every
//! event: at most [`LATER_IN_FLIGHT`] at a time, each once no reconcile of the controller has
//! run for [`LATER_QUIET`] (or after [`LATER_MAX_DELAY`]). Deleting many objects then waits only for their
//! finalizers' removal (the writes a deletion needs), not for as many Event writes competing
//! with them on the API server; the events follow. At most [`LATER_QUEUE`] wait (like
//! client-go's queue of 1,000, more are dropped, with a warning).

use std::collections::{HashMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as K8sEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Client;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::events::{Event, EventType, Reporter};
use serde_json::json;
use tokio::sync::watch;
use tracing::warn;

/// How long after its last occurrence an event still takes repeats as a series (kube's and
/// client-go's figure).
pub const SERIES_TTL: SignedDuration = SignedDuration::from_mins(6);

/// How many queued events ([`Events::publish_later`]) are sent at once.
pub(crate) const LATER_IN_FLIGHT: usize = 2;
/// How long the controller must have had no reconcile in flight before a queued event is sent:
/// during a mass deletion a reconcile starts every few milliseconds, so the events wait for its
/// end; after a single deletion the event follows within this.
pub(crate) const LATER_QUIET: Duration = Duration::from_millis(200);
/// How long a queued event waits for the controller to be quiet at most.
pub(crate) const LATER_MAX_DELAY: Duration = Duration::from_secs(300);
/// How many events may wait in the queue.
pub(crate) const LATER_QUEUE: usize = 20_000;

/// What is kept of an event published recently.
struct Recent {
    /// The Event's name (in the namespace of the object it is about).
    name: String,
    /// How often it occurred.
    count: i32,
    last: Timestamp,
}

/// Publishes the events of one controller as `reporter`. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Events(Arc<Inner>);

struct Inner {
    client: Client,
    reporter: Reporter,
    recent: Mutex<HashMap<u64, Recent>>,
    later: Mutex<Later>,
    /// Reconciles in flight ([`Events::busy`]), and when one last started or ended.
    busy: watch::Sender<(usize, Instant)>,
}

/// The events queued by [`Events::publish_later`], oldest first (with when), how many tasks
/// send them, and whether the queue overflowed since it last had room.
#[derive(Default)]
struct Later {
    queue: VecDeque<(Instant, Event, ObjectReference)>,
    senders: usize,
    overflowed: bool,
}

/// A reconcile in flight: queued events wait until none is ([`Events::busy`]).
pub(crate) struct Busy(Events);

impl Drop for Busy {
    fn drop(&mut self) {
        (self.0.0.busy).send_modify(|(n, at)| (*n, *at) = (n.saturating_sub(1), Instant::now()));
    }
}

impl Events {
    pub(crate) fn new(client: Client, reporter: Reporter) -> Self {
        Self(Arc::new(Inner {
            client,
            reporter,
            recent: Mutex::default(),
            later: Mutex::default(),
            busy: watch::channel((0, Instant::now())).0,
        }))
    }

    /// Marks a reconcile in flight until the guard drops.
    pub(crate) fn busy(&self) -> Busy {
        (self.0.busy).send_modify(|(n, at)| (*n, *at) = (*n + 1, Instant::now()));
        Busy(self.clone())
    }

    /// Queues `event` about `regarding`, to be published once [`Events::send_later`] runs
    /// (after the reconcile that queued it). A failure is logged, as [`Events::publish`]'s
    /// callers that ignore it do.
    pub(crate) fn publish_later(&self, event: Event, regarding: ObjectReference) {
        let mut later = self.0.later.lock().expect("events lock");
        if later.queue.len() >= LATER_QUEUE {
            if !later.overflowed {
                warn!(
                    queued = LATER_QUEUE,
                    reason = event.reason,
                    "too many events queued: dropping"
                );
            }
            later.overflowed = true;
            return;
        }
        later.overflowed = false;
        later.queue.push_back((Instant::now(), event, regarding));
    }

    /// Starts sending the queued events, [`LATER_IN_FLIGHT`] at a time at most, in the
    /// background.
    pub(crate) fn send_later(&self) {
        let mut later = self.0.later.lock().expect("events lock");
        while later.senders < LATER_IN_FLIGHT.min(later.queue.len()) {
            later.senders += 1;
            let events = self.clone();
            tokio::spawn(async move { events.sender().await });
        }
    }

    /// Waits until no reconcile has been in flight for [`LATER_QUIET`], or `deadline`.
    async fn quiet(&self, deadline: Instant) {
        let mut busy = self.0.busy.subscribe();
        loop {
            let (in_flight, since) = *busy.borrow_and_update();
            let now = Instant::now();
            let quiet_for = now.saturating_duration_since(since);
            if now >= deadline || (in_flight == 0 && quiet_for >= LATER_QUIET) {
                return;
            }
            let mut wait = deadline - now;
            if in_flight == 0 {
                wait = wait.min(LATER_QUIET - quiet_for);
            }
            // A reconcile starting or ending wakes it; else the quiet period or the deadline.
            let _ = tokio::time::timeout(wait, busy.changed()).await;
        }
    }

    /// Publishes queued events until none is left.
    async fn sender(&self) {
        loop {
            let next = {
                let mut later = self.0.later.lock().expect("events lock");
                let next = later.queue.pop_front();
                if next.is_none() {
                    later.senders -= 1;
                }
                next
            };
            let Some((queued, event, regarding)) = next else {
                return;
            };
            self.quiet(queued + LATER_MAX_DELAY).await;
            if let Err(error) = self.publish(&event, &regarding).await {
                let object = regarding.name.unwrap_or_default();
                warn!(%error, object, reason = event.reason, "cannot publish event");
            }
        }
    }

    /// Records `event` about `regarding`: a new Event, or the next of its series.
    pub(crate) async fn publish(
        &self,
        event: &Event,
        regarding: &ObjectReference,
    ) -> Result<(), kube::Error> {
        let now = Timestamp::now();
        let key = key(event, regarding);
        let repeat = {
            let mut recent = self.0.recent.lock().expect("events lock");
            recent.retain(|_, seen| seen.last + SERIES_TTL > now);
            recent.get_mut(&key).map(|seen| {
                seen.count += 1;
                seen.last = now;
                (seen.name.clone(), seen.count)
            })
        };
        let namespace = regarding.namespace.as_deref().unwrap_or("default");
        let events = Api::<K8sEvent>::namespaced(self.0.client.clone(), namespace);
        if let Some((name, count)) = repeat {
            let series = EventSeries {
                count,
                last_observed_time: MicroTime(now),
            };
            let patch = Patch::Merge(json!({ "series": series }));
            match events.patch(&name, &PatchParams::default(), &patch).await {
                // Gone (events expire): the repeat starts a new Event.
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                result => return result.map(drop),
            }
        }
        let created = self.event(event, regarding, now);
        let name = created.metadata.name.clone().unwrap_or_default();
        events.create(&PostParams::default(), &created).await?;
        let recent = Recent {
            name,
            count: 1,
            last: now,
        };
        self.0
            .recent
            .lock()
            .expect("events lock")
            .insert(key, recent);
        Ok(())
    }

    /// A new Event, named like kube's (`<object>.<time in hex>`).
    fn event(&self, event: &Event, regarding: &ObjectReference, now: Timestamp) -> K8sEvent {
        let reporter = &self.0.reporter;
        let object = regarding.name.as_ref().unwrap_or(&reporter.controller);
        let instance = reporter.instance.as_ref().unwrap_or(&reporter.controller);
        K8sEvent {
            action: Some(event.action.clone()),
            reason: Some(event.reason.clone()),
            event_time: Some(MicroTime(now)),
            regarding: Some(regarding.clone()),
            related: event.secondary.clone(),
            note: event.note.clone(),
            metadata: ObjectMeta {
                namespace: regarding.namespace.clone(),
                name: Some(format!("{object}.{:x}", now.as_nanosecond())),
                ..ObjectMeta::default()
            },
            reporting_controller: Some(reporter.controller.clone()),
            reporting_instance: Some(instance.clone()),
            type_: Some(type_name(event.type_).into()),
            ..K8sEvent::default()
        }
    }

    /// How many events are kept for series (for the tests).
    #[cfg(test)]
    pub(crate) fn recent(&self) -> usize {
        self.0.recent.lock().expect("events lock").len()
    }
}

fn type_name(type_: EventType) -> &'static str {
    match type_ {
        EventType::Normal => "Normal",
        EventType::Warning => "Warning",
    }
}

/// What makes two events the same, hashed: what kube's `Recorder` compares (the reporter is
/// the same for all events of one [`Events`]).
fn key(event: &Event, regarding: &ObjectReference) -> u64 {
    let mut hasher = DefaultHasher::new();
    type_name(event.type_).hash(&mut hasher);
    (&event.action, &event.reason).hash(&mut hasher);
    for object in std::iter::once(regarding).chain(event.secondary.as_ref()) {
        let ObjectReference {
            api_version,
            kind,
            name,
            namespace,
            uid,
            ..
        } = object;
        (api_version, kind, name, namespace, uid).hash(&mut hasher);
    }
    hasher.finish()
}

#[cfg(all(test, feature = "testing"))]
mod tests {
    use super::*;
    use crate::testing::mock_context;

    fn reference(name: &str) -> ObjectReference {
        ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("ConfigMap".into()),
            name: Some(name.into()),
            namespace: Some("default".into()),
            uid: Some(format!("uid-{name}")),
            ..ObjectReference::default()
        }
    }

    fn event(reason: &str) -> Event {
        Event {
            type_: EventType::Normal,
            reason: reason.into(),
            note: Some("a note".into()),
            action: "Reconcile".into(),
            secondary: None,
        }
    }

    #[test]
    fn events_are_the_same_by_type_reason_action_and_object_not_by_note() {
        let (a, b) = (reference("a"), reference("b"));
        assert_eq!(key(&event("Created"), &a), key(&event("Created"), &a));
        let mut renoted = event("Created");
        renoted.note = Some("another note".into());
        assert_eq!(key(&renoted, &a), key(&event("Created"), &a));
        assert_ne!(key(&event("Created"), &a), key(&event("Created"), &b));
        assert_ne!(key(&event("Created"), &a), key(&event("Scaled"), &a));
        let mut warning = event("Created");
        warning.type_ = EventType::Warning;
        assert_ne!(key(&warning, &a), key(&event("Created"), &a));
    }

    /// A first event is created; its repeat patches the series of the first; one whose Event
    /// has expired on the server is created anew.
    #[tokio::test]
    async fn a_repeat_becomes_a_series_of_the_first() {
        let (ctx, server) = mock_context();
        let events = Events::new(ctx.client, ctx.reporter);
        let regarding = reference("a");
        let path = "/apis/events.k8s.io/v1/namespaces/default/events";
        let stored = json!({"eventTime": "2026-01-01T00:00:00.000000Z", "metadata": {}});
        let published = server
            .run(
                async |server| {
                    let post = http::Method::POST;
                    let created = server.expect(post.clone(), path, 201, stored.clone()).await;
                    assert_eq!(created.body["reason"], "Created");
                    assert_eq!(created.body["regarding"]["name"], "a");
                    assert_eq!(created.body["reportingController"], "test");
                    let name = created.body["metadata"]["name"]
                        .as_str()
                        .unwrap()
                        .to_owned();
                    let repeat = server.patch(&format!("{path}/{name}"), created.body).await;
                    assert_eq!(repeat.body["series"]["count"], 2);
                    assert!(repeat.body.get("note").is_none(), "{}", repeat.body);
                    let expired = format!("{path}/{name}");
                    server.fail(http::Method::PATCH, &expired, 404).await;
                    server.expect(post, path, 201, stored).await;
                },
                async {
                    for _ in 0..3 {
                        events.publish(&event("Created"), &regarding).await?;
                    }
                    Ok::<_, kube::Error>(())
                },
            )
            .await;
        published.unwrap();
        assert_eq!(events.recent(), 1);
    }
}
