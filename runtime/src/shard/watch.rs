//! Watching one shard: a watch restarted with each new set of watched ranges, narrowed on the
//! server (`shardSelector`, KEP-5866) where it serves it and always filtered on the client with
//! the same hash, so the cache holds exactly the shard whichever the server does.

use futures::stream::{self, BoxStream};
use futures::{Stream, StreamExt};
use http::Request;
use kube::Client;
use kube::client::Body;
use kube::runtime::watcher::{self, Event};
use tokio::sync::watch;

use super::ring::Ranges;

/// A client sending `shardSelector=<selector>` with every list and watch (a GET whose query has
/// `watch=` or `limit=`, which is how kube's watcher and `list` ask), other requests unchanged.
pub fn selecting(client: Client, selector: String) -> Client {
    let default_namespace = client.default_namespace().to_owned();
    let service = tower::service_fn(move |mut request: Request<Body>| {
        let client = client.clone();
        let uri = request.uri().clone();
        let query = uri.query().unwrap_or("");
        if request.method() == http::Method::GET
            && (query.contains("watch=") || query.contains("limit="))
        {
            let encoded: String = url_encode(&selector);
            let path = uri.path();
            let joined = if query.is_empty() {
                format!("{path}?shardSelector={encoded}")
            } else {
                format!("{path}?{query}&shardSelector={encoded}")
            };
            if let Ok(new) = joined.parse() {
                *request.uri_mut() = new;
            }
        }
        async move { client.send(request).await }
    });
    Client::new(service, default_namespace)
}

/// Percent-encodes everything but unreserved characters (RFC 3986).
fn url_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The events of `make(ranges)` for the current watched ranges, started anew (a fresh list)
/// each time `watched` changes, and only of objects whose `hash` is in them.
///
/// A reflector swaps its store at each list's end, so after a change the cache holds exactly
/// the new ranges' objects, and the controller gets each of them again.
pub fn restarting<K, E, F, H>(
    watched: watch::Receiver<Ranges>,
    make: F,
    hash: H,
) -> impl Stream<Item = Result<Event<K>, E>> + Send
where
    K: Send + 'static,
    E: Send + 'static,
    F: FnMut(&Ranges) -> BoxStream<'static, Result<Event<K>, E>> + Send + 'static,
    H: Fn(&K) -> Option<u64> + Clone + Send + Sync + 'static,
{
    stream::unfold(
        (
            watched,
            make,
            None::<BoxStream<'static, Result<Event<K>, E>>>,
        ),
        move |(mut watched, mut make, current)| {
            let hash = hash.clone();
            async move {
                let mut current = current;
                loop {
                    let Some(events) = current.as_mut() else {
                        let ranges = watched.borrow_and_update().clone();
                        let hash = hash.clone();
                        let filtered = make(&ranges).filter(move |event| {
                            let keep = match event {
                                Ok(
                                    Event::Apply(obj) | Event::InitApply(obj) | Event::Delete(obj),
                                ) => hash(obj).is_some_and(|h| ranges.contains(h)),
                                _ => true,
                            };
                            futures::future::ready(keep)
                        });
                        current = Some(filtered.boxed());
                        continue;
                    };
                    tokio::select! {
                        changed = watched.changed() => {
                            if changed.is_err() {
                                return None;
                            }
                            current = None;
                        }
                        event = events.next() => {
                            let event = event?;
                            return Some((event, (watched, make, current)));
                        }
                    }
                }
            }
        },
    )
}

/// What to watch for no range at all: an empty list, then nothing.
pub fn nothing<K: Send + 'static>() -> BoxStream<'static, Result<Event<K>, watcher::Error>> {
    stream::iter([Ok(Event::Init), Ok(Event::InitDone)])
        .chain(stream::pending())
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_are_percent_encoded() {
        assert_eq!(
            url_encode("shardRange(a, '0x1') || b"),
            "shardRange%28a%2C%20%270x1%27%29%20%7C%7C%20b"
        );
    }

    #[tokio::test]
    async fn a_change_of_ranges_restarts_the_list_and_filters_by_hash() {
        let (tx, rx) = watch::channel(Ranges::from_pairs(vec![(0, 10)]));
        let events = restarting::<u64, (), _, _>(
            rx,
            |_ranges| {
                stream::iter([
                    Event::Init,
                    Event::InitApply(5),
                    Event::InitApply(15),
                    Event::InitDone,
                ])
                .map(Ok)
                .chain(stream::pending())
                .boxed()
            },
            |n: &u64| Some(*n),
        );
        let mut events = Box::pin(events);
        let mut first = Vec::new();
        for _ in 0..3 {
            first.push(events.next().await.unwrap().unwrap());
        }
        assert!(matches!(
            first[..],
            [Event::Init, Event::InitApply(5), Event::InitDone]
        ));
        tx.send(Ranges::from_pairs(vec![(10, 20)])).unwrap();
        let mut second = Vec::new();
        for _ in 0..3 {
            second.push(events.next().await.unwrap().unwrap());
        }
        assert!(matches!(
            second[..],
            [Event::Init, Event::InitApply(15), Event::InitDone]
        ));
    }
}
