//! Serving an axum router over TLS (HTTP/1.1), one task per connection.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::io::AsyncWriteExt as _;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;

use crate::shutdown::Shutdown;

/// How long a client may take to finish the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The first byte of every TLS connection: a handshake record.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// What a client speaking plain HTTP to a TLS port gets (Go's net/http answer), instead of a
/// connection closed without a word.
const PLAIN_HTTP_ANSWER: &[u8] = b"HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain\r\n\
    Connection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";

/// Serves `router` over TLS on `listener` until `shutdown`; connections still open then are
/// dropped. A client speaking plain HTTP is answered `400 Bad Request` and disconnected.
pub async fn serve_tls(
    listener: TcpListener,
    router: Router,
    tls: Arc<ServerConfig>,
    shutdown: Shutdown,
) {
    let acceptor = TlsAcceptor::from(tls);
    let stop = shutdown.wait();
    tokio::pin!(stop);
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    tracing::warn!(error = %err, "accepting an HTTPS connection failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let (acceptor, router) = (acceptor.clone(), router.clone());
        connections.spawn(connection(acceptor, router, stream, peer));
        // Reap finished connections so the set does not grow.
        while connections.try_join_next().is_some() {}
    }
    connections.abort_all();
}

async fn connection(acceptor: TlsAcceptor, router: Router, stream: TcpStream, peer: SocketAddr) {
    let handshake = async {
        let mut first = [0u8; 1];
        if stream.peek(&mut first).await? == 1 && first[0] != TLS_HANDSHAKE_RECORD {
            let mut stream = stream;
            stream.write_all(PLAIN_HTTP_ANSWER).await?;
            stream.shutdown().await?;
            return Err(std::io::Error::other("not TLS (plain HTTP?)"));
        }
        acceptor.accept(stream).await
    };
    let tls = match tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(err)) => {
            tracing::debug!(%peer, error = %err, "TLS handshake failed");
            return;
        }
        Err(_) => {
            tracing::debug!(%peer, "TLS handshake timed out");
            return;
        }
    };
    let service = TowerToHyperService::new(router);
    if let Err(err) = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(tls), service)
        .await
    {
        tracing::debug!(%peer, error = %err, "HTTPS connection ended");
    }
}
