//! The HTTPS server: one route per admission webhook, `/convert` for every conversion, the
//! metrics of each request, and TLS with the [`CertStore`]'s current certificate
//! ([`serve_tls`], shared with the metrics endpoint).

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;
use tokio::net::TcpListener;

use super::conversion::Conversions;
use super::metrics::WebhookMetrics;
use super::{CONVERSION_PATH, Endpoint, Webhooks, answer_admission, answer_conversion};
use crate::shutdown::Shutdown;
use crate::tls::CertStore;
pub use crate::tls::serve_tls;

/// Why the webhooks cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// Two webhooks claim one path.
    #[error("two webhooks are served at {0}: give one another path (Webhook::at_path)")]
    DuplicatePath(String),
    /// The conversions disagree.
    #[error("{0}")]
    Conversion(String),
}

/// The routes of `webhooks`, each counted in `metrics`.
pub fn router(webhooks: &Webhooks, metrics: &WebhookMetrics) -> Result<Router, ServerError> {
    let mut router = Router::new();
    let mut paths = BTreeSet::new();
    let mut conversions = Conversions::default();
    for webhook in webhooks.iter() {
        match &webhook.endpoint {
            Endpoint::Admission { path, handler } => {
                if path == CONVERSION_PATH || !paths.insert(path.clone()) {
                    return Err(ServerError::DuplicatePath(path.clone()));
                }
                let (handler, metrics, label) = (handler.clone(), metrics.clone(), path.clone());
                router = router.route(
                    path,
                    post(move |body: Bytes| async move {
                        let handler = handler.clone();
                        served(&metrics, &label, body, |review| async move {
                            answer_admission(&handler, review).await
                        })
                        .await
                    }),
                );
            }
            Endpoint::Conversion(spoke) => {
                conversions
                    .add(spoke.clone())
                    .map_err(ServerError::Conversion)?;
            }
        }
    }
    if !conversions.is_empty() {
        let (conversions, metrics) = (Arc::new(conversions), metrics.clone());
        router = router.route(
            CONVERSION_PATH,
            post(move |body: Bytes| async move {
                served(&metrics, CONVERSION_PATH, body, |review| async move {
                    answer_conversion(&conversions, review)
                })
                .await
            }),
        );
    }
    Ok(router)
}

/// Answers one request with `answer`, counting it under `webhook`.
async fn served<F, Fut>(metrics: &WebhookMetrics, webhook: &str, body: Bytes, answer: F) -> Response
where
    F: FnOnce(Value) -> Fut,
    Fut: Future<Output = Value>,
{
    let timer = metrics.request_started(webhook);
    let response = match serde_json::from_slice::<Value>(&body) {
        Ok(review) => {
            let answer = answer(review).await;
            (
                StatusCode::OK,
                [(CONTENT_TYPE, "application/json")],
                answer.to_string(),
            )
                .into_response()
        }
        Err(err) => (
            StatusCode::BAD_REQUEST,
            format!("the body is not JSON: {err}"),
        )
            .into_response(),
    };
    timer.finish(response.status().as_u16());
    response
}

/// Serves `webhooks` on `listener` with the certificate in `store`; see [`router`].
pub async fn serve(
    listener: TcpListener,
    webhooks: &Webhooks,
    metrics: &WebhookMetrics,
    store: &CertStore,
    shutdown: Shutdown,
) -> Result<(), ServerError> {
    let router = router(webhooks, metrics)?;
    serve_tls(listener, router, store.server_config(), shutdown).await;
    Ok(())
}
