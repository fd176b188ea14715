//! TLS for the manager's HTTPS servers (the webhook server, the secure metrics endpoint):
//! the served certificate and its reloading ([`CertStore`], [`watch_files`]), making
//! certificates ([`certs`]), and serving an axum router over TLS ([`serve_tls`]).
//!
//! It knows nothing of the manager or the webhooks; both use it.

pub mod certs;
mod server;
mod store;

pub use server::serve_tls;
pub use store::{CertError, CertFiles, CertStore, watch_files};
