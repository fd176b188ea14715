//! Plain-HTTP requests to a manager under test on this machine: its health probes and its
//! metrics, with hyper's client (already in every operator's tree through kube's client; a
//! request builds, sends and parses with hyper, not by hand over a socket).
//!
//! [`scrape_metrics`] reads `/metrics` served as plain HTTP (`--metrics-secure=false`); a
//! [`ManagerProcess`](super::ManagerProcess) given a token scrapes HTTPS with it, as Prometheus
//! does ([`crate::testing::metrics::scrape`]).

use std::net::SocketAddr;
use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

/// How long one request may take, connecting included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The status code and body of `GET http://{addr}{path}`, or `None` when nothing answers (no
/// listener yet, a connection reset, a timeout).
///
/// ```no_run
/// # async fn f() {
/// use operator_rs_runtime::testing::e2e::http_get;
///
/// let probes = "127.0.0.1:8081".parse().unwrap();
/// let ready = http_get(probes, "/readyz").await.is_some_and(|(status, _)| status == 200);
/// # }
/// ```
pub async fn http_get(addr: SocketAddr, path: &str) -> Option<(u16, String)> {
    let client = Client::builder(TokioExecutor::new()).build_http::<Empty<Bytes>>();
    let uri = format!("http://{addr}{path}").parse().ok()?;
    let request = async {
        let response = client.get(uri).await.ok()?;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await.ok()?.to_bytes();
        Some((status, String::from_utf8_lossy(&body).into_owned()))
    };
    tokio::time::timeout(REQUEST_TIMEOUT, request).await.ok()?
}

/// The Prometheus text a manager serves on its metrics address `addr` (`GET /metrics`), or
/// `None` when it does not answer 200.
///
/// ```no_run
/// # async fn f() {
/// use operator_rs_runtime::testing::e2e::{metric_sum, scrape_metrics};
///
/// let text = scrape_metrics("127.0.0.1:8080".parse().unwrap()).await.unwrap_or_default();
/// let leads = metric_sum(&text, "leader_election_master_status") == 1.0;
/// # }
/// ```
pub async fn scrape_metrics(addr: SocketAddr) -> Option<String> {
    match http_get(addr, "/metrics").await? {
        (200, text) => Some(text),
        _ => None,
    }
}

/// The sum of the samples of the Prometheus text `text` whose series (name and labels) starts
/// with `series` (0 when none does).
///
/// ```
/// use operator_rs_runtime::testing::e2e::metric_sum;
///
/// let text = "# TYPE controller_runtime_reconcile_total counter\n\
///     controller_runtime_reconcile_total{controller=\"memcached\",result=\"success\"} 3\n\
///     controller_runtime_reconcile_total{controller=\"memcached\",result=\"error\"} 1\n\
///     controller_runtime_reconcile_total{controller=\"other\",result=\"success\"} 7\n";
/// let series = "controller_runtime_reconcile_total{controller=\"memcached\"";
/// assert_eq!(metric_sum(text, series), 4.0);
/// assert_eq!(metric_sum(text, "absent_total"), 0.0);
/// ```
pub fn metric_sum(text: &str, series: &str) -> f64 {
    let lines = text.lines().filter(|line| line.starts_with(series));
    lines
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A server that answers one request with `response`, returning what it was sent.
    async fn serve_once(response: &'static str) -> (SocketAddr, tokio::task::JoinHandle<String>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let served = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut request = vec![0; 4096];
            let n = stream.read(&mut request).await.unwrap();
            stream.write_all(response.as_bytes()).await.unwrap();
            String::from_utf8_lossy(&request[..n]).into_owned()
        });
        (addr, served)
    }

    #[tokio::test]
    async fn a_get_returns_status_and_body_and_sends_the_path() {
        let response = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
        let (addr, served) = serve_once(response).await;
        assert_eq!(http_get(addr, "/readyz").await, Some((200, "ok".into())));
        let request = served.await.unwrap();
        assert!(request.starts_with("GET /readyz HTTP/1.1\r\n"), "{request}");
    }

    #[tokio::test]
    async fn a_chunked_body_is_read_whole() {
        let response = "HTTP/1.1 500 Internal Server Error\r\ntransfer-encoding: chunked\r\n\r\n\
                        3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        let (addr, _served) = serve_once(response).await;
        assert_eq!(http_get(addr, "/x").await, Some((500, "abcde".into())));
    }

    #[tokio::test]
    async fn metrics_other_than_200_are_none_and_no_listener_is_none() {
        let response = "HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n";
        let (addr, _served) = serve_once(response).await;
        assert_eq!(scrape_metrics(addr).await, None);
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = closed.local_addr().unwrap();
        drop(closed);
        assert_eq!(http_get(addr, "/readyz").await, None);
    }
}
