//! A mock API server for reconcile unit tests: it checks the requests a reconcile makes and
//! answers them (the `ApiServerVerifier` pattern of kube-rs/controller-rs).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use http::{Method, Request, Response};
use kube::client::Body;
use kube::{Client, Resource};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::manager::Runtime;

/// A request on its way to the mock API server, with where its answer goes.
type Exchange = (Request<Body>, oneshot::Sender<Response<Body>>);

/// The client's side of the mock: a `tower::Service` that hands each request to the
/// [`ApiServerVerifier`] and waits for its answer. (tower-test's `mock::pair` does the same,
/// but it turns on tokio's `test-util` in every project's test build, so that `cargo test`
/// and `cargo run` would build tokio and all that builds on it, kube's client included, twice.)
#[derive(Clone)]
struct MockService(mpsc::UnboundedSender<Exchange>);

impl tower::Service<Request<Body>> for MockService {
    type Response = Response<Body>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = std::io::Result<Response<Body>>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let (answer, answered) = oneshot::channel();
        let sent = self.0.send((request, answer));
        Box::pin(async move {
            let gone = || std::io::Error::other("the mock API server is gone");
            sent.map_err(|_| gone())?;
            answered.await.map_err(|_| gone())
        })
    }
}

/// Where events are created (for objects in, or cluster-scoped objects reported in, `default`).
const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/default/events";

/// A request as the mock API server received it.
#[derive(Debug)]
pub struct Received {
    /// `fieldManager=...&force=true`, or empty.
    pub query: String,
    /// The `Content-Type` header, or empty.
    pub content_type: String,
    /// The JSON body, or `Value::Null`.
    pub body: Value,
}

/// Plays the API server for a controller under test.
pub struct ApiServerVerifier(mpsc::UnboundedReceiver<Exchange>);

/// A controller context whose client talks to the returned [`ApiServerVerifier`].
pub fn mock_context() -> (Runtime, ApiServerVerifier) {
    let (requests, received) = mpsc::unbounded_channel();
    let ctx = Runtime::for_tests(Client::new(MockService(requests), "default"));
    (ctx, ApiServerVerifier(received))
}

impl ApiServerVerifier {
    /// Runs `reconcile` while `scenario` plays the API server, then asserts that no request
    /// came beyond those the scenario answered.
    ///
    /// ```
    /// use operator_rs_runtime::testing::mock_context;
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let (ctx, server) = mock_context();
    /// let pods = kube::Api::<k8s_openapi::api::core::v1::Pod>::default_namespaced(ctx.client);
    /// let params = Default::default();
    /// let deleted = server.run(
    ///     async |server| {
    ///         server.fail(http::Method::DELETE, "/api/v1/namespaces/default/pods/p", 404).await;
    ///     },
    ///     pods.delete("p", &params),
    /// );
    /// assert!(deleted.await.is_err());
    /// # }
    /// ```
    pub async fn run<T>(
        mut self,
        scenario: impl AsyncFnOnce(&mut Self),
        reconcile: impl Future<Output = T>,
    ) -> T {
        let reconcile = tokio::time::timeout(Duration::from_secs(5), reconcile);
        let (result, ()) = tokio::join!(reconcile, scenario(&mut self));
        let result =
            result.expect("reconcile hung: did it make a request the scenario does not answer?");
        self.expect_nothing().await;
        result
    }

    /// Waits for the next request, checks its method and path, answers it with `code` and
    /// `reply`, and returns it for further checks.
    pub async fn expect(
        &mut self,
        method: Method,
        path: &str,
        code: u16,
        reply: Value,
    ) -> Received {
        let next = tokio::time::timeout(Duration::from_secs(1), self.0.recv());
        let (request, send) = (next.await)
            .unwrap_or_else(|_| panic!("no request came, expected {method} {path}"))
            .expect("the client is gone");
        assert_eq!(
            (request.method(), request.uri().path()),
            (&method, path),
            "unexpected request {request:?}"
        );
        let query = request.uri().query().unwrap_or_default().to_string();
        let content_type = (request.headers().get(http::header::CONTENT_TYPE))
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let bytes = request
            .into_body()
            .collect_bytes()
            .await
            .expect("request body");
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let reply = serde_json::to_vec(&reply).expect("reply");
        let response = Response::builder().status(code).body(Body::from(reply));
        // The client may have given up (a timeout of the reconcile): nothing to answer then.
        let _ = send.send(response.expect("response"));
        Received {
            query,
            content_type,
            body,
        }
    }

    /// [`expect`](Self::expect)s a PATCH of `obj`'s status subresource and answers 200 with
    /// `obj`.
    pub async fn patch_status<K>(&mut self, obj: &K) -> Received
    where
        K: Resource<DynamicType = ()> + Serialize,
    {
        let base = K::url_path(&(), obj.meta().namespace.as_deref());
        let path = format!(
            "{base}/{}/status",
            obj.meta().name.as_deref().unwrap_or_default()
        );
        let reply = serde_json::to_value(obj).expect("the object serializes");
        self.patch(&path, reply).await
    }

    /// [`expect`](Self::expect)s a PATCH of `path` and answers 200 with `reply`.
    pub async fn patch(&mut self, path: &str, reply: Value) -> Received {
        self.expect(Method::PATCH, path, 200, reply).await
    }

    /// [`expect`](Self::expect)s the creation of an event in the namespace `default` and
    /// answers `code`: 201, or an error such as 403.
    pub async fn event(&mut self, code: u16) -> Received {
        let reply = if code < 300 { json!({}) } else { status(code) };
        (self.expect(Method::POST, EVENTS, code, reply)).await
    }

    /// [`expect`](Self::expect)s a request and answers it with the error `code`.
    pub async fn fail(&mut self, method: Method, path: &str, code: u16) -> Received {
        (self.expect(method, path, code, status(code))).await
    }

    /// Asserts that no request comes.
    pub async fn expect_nothing(mut self) {
        let next = tokio::time::timeout(Duration::from_millis(100), self.0.recv()).await;
        if let Ok(Some((request, _))) = next {
            panic!("unexpected request {request:?}");
        }
    }
}

/// The `Status` body of an API error.
fn status(code: u16) -> Value {
    let reason = match code {
        403 => "Forbidden",
        404 => "NotFound",
        409 => "Conflict",
        _ => "InternalError",
    };
    json!({
        "apiVersion": "v1",
        "kind": "Status",
        "status": "Failure",
        "reason": reason,
        "code": code,
        "message": format!("{reason} (test)"),
    })
}
