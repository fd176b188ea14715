//! A client whose responses to the requests a test picks are held back until it opens the
//! gate, and which records every request it sends: to order what a manager sees (one
//! namespace's list answered late, say) on a real control plane.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::sync::watch;

/// Which requests (by their path and query) wait for the gate.
type Hold = dyn Fn(&str) -> bool + Send + Sync;

/// The gate of the clients [`Gate::client`] builds.
#[derive(Clone)]
pub struct Gate {
    hold: Arc<Hold>,
    open: watch::Sender<bool>,
    sent: Arc<Mutex<Vec<String>>>,
}

impl Gate {
    /// A closed gate holding back the answers to the requests `hold` picks.
    pub fn new(hold: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        Self {
            hold: Arc::new(hold),
            open: watch::Sender::new(false),
            sent: Arc::default(),
        }
    }

    /// A client of `config` behind this gate.
    pub fn client(&self, config: kube::Config) -> Result<kube::Client, kube::Error> {
        let gate = self.clone();
        let layer = tower::layer::layer_fn(move |inner| Gated {
            inner,
            gate: gate.clone(),
        });
        Ok(kube::client::ClientBuilder::try_from(config)?
            .with_layer(&layer)
            .build())
    }

    /// Lets every held answer through, and those to come.
    pub fn open(&self) {
        self.open.send_replace(true);
    }

    /// Whether a request whose path and query `which` picks was sent.
    pub fn sent(&self, which: impl Fn(&str) -> bool) -> bool {
        self.sent.lock().unwrap().iter().any(|r| which(r))
    }
}

/// A client's service behind a [`Gate`]: the request is sent at once, its answer held.
struct Gated<S> {
    inner: S,
    gate: Gate,
}

type Answer<S, B> = Pin<
    Box<
        dyn Future<
                Output = Result<
                    <S as tower::Service<http::Request<B>>>::Response,
                    <S as tower::Service<http::Request<B>>>::Error,
                >,
            > + Send,
    >,
>;

impl<S, B> tower::Service<http::Request<B>> for Gated<S>
where
    S: tower::Service<http::Request<B>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Answer<S, B>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let which = request
            .uri()
            .path_and_query()
            .map(|p| p.as_str().to_owned())
            .unwrap_or_default();
        let held = (self.gate.hold)(&which);
        self.gate.sent.lock().unwrap().push(which);
        let mut open = self.gate.open.subscribe();
        let answer = self.inner.call(request);
        Box::pin(async move {
            if held {
                let _ = open.wait_for(|open| *open).await;
            }
            answer.await
        })
    }
}
