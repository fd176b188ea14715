//! Bind addresses on the command line, as controller-runtime's flags take them: `:8080` (all
//! interfaces), `host:port`, `[v6]:port`; `0` (or empty) turns the server off. Shared by the
//! manager's servers (metrics, probes) and the webhook server.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// A bind address [`parse_bind_address`] refuses.
#[derive(Debug, thiserror::Error)]
pub enum AddressError {
    /// `:<port>` whose port is not a number from 0 to 65535.
    #[error("bad port in `{value}` (a number up to 65535, as in :8080)")]
    Port {
        /// The address as given.
        value: String,
        /// Why the port does not parse.
        source: std::num::ParseIntError,
    },
    /// Neither `:port`, `ip:port` nor a `host:port` that resolves.
    #[error("`{value}` is not an address like :8080 or 127.0.0.1:8080")]
    Unresolved {
        /// The address as given.
        value: String,
        /// The resolver's answer.
        source: std::io::Error,
    },
    /// `host:port` resolved, to no address at all.
    #[error("`{value}` resolves to no address")]
    NoAddress {
        /// The address as given.
        value: String,
    },
}

/// Parses a bind address as controller-runtime does; `None` for `0` or empty (disabled).
pub async fn parse_bind_address(value: &str) -> Result<Option<SocketAddr>, AddressError> {
    let value = value.trim();
    if value.is_empty() || value == "0" {
        return Ok(None);
    }
    if let Some(port) = value.strip_prefix(':') {
        let port: u16 = port.parse().map_err(|source| AddressError::Port {
            value: value.to_owned(),
            source,
        })?;
        return Ok(Some(SocketAddr::new(
            IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            port,
        )));
    }
    if let Ok(addr) = value.parse() {
        return Ok(Some(addr));
    }
    let mut addrs =
        tokio::net::lookup_host(value)
            .await
            .map_err(|source| AddressError::Unresolved {
                value: value.to_owned(),
                source,
            })?;
    match addrs.next() {
        Some(addr) => Ok(Some(addr)),
        None => Err(AddressError::NoAddress {
            value: value.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bind_addresses_accept_go_style() {
        let any = |port| Some(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port));
        assert_eq!(parse_bind_address(":8080").await.unwrap(), any(8080));
        assert_eq!(parse_bind_address("0").await.unwrap(), None);
        assert_eq!(parse_bind_address("").await.unwrap(), None);
        assert_eq!(
            parse_bind_address("127.0.0.1:9090").await.unwrap(),
            Some("127.0.0.1:9090".parse().unwrap())
        );
        assert_eq!(
            parse_bind_address("[::1]:80").await.unwrap(),
            Some("[::1]:80".parse().unwrap())
        );
        assert_eq!(
            parse_bind_address("localhost:81")
                .await
                .unwrap()
                .map(|a| a.port()),
            Some(81)
        );
        assert!(matches!(
            parse_bind_address(":http").await,
            Err(AddressError::Port { .. })
        ));
        assert!(matches!(
            parse_bind_address("8080").await,
            Err(AddressError::Unresolved { .. })
        ));
    }
}
