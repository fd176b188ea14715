//! Bind addresses on the command line, as controller-runtime's flags take them: `:8080` (all
//! interfaces), `host:port`, `[v6]:port`; `0` (or empty) turns the server off. Shared by the
//! manager's servers (metrics, probes) and the webhook server.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use anyhow::Context as _;

/// Parses a bind address as controller-runtime does; `None` for `0` or empty (disabled).
pub async fn parse_bind_address(value: &str) -> anyhow::Result<Option<SocketAddr>> {
    let value = value.trim();
    if value.is_empty() || value == "0" {
        return Ok(None);
    }
    if let Some(port) = value.strip_prefix(':') {
        let port: u16 = port
            .parse()
            .with_context(|| format!("bad port in `{value}`"))?;
        return Ok(Some(SocketAddr::new(
            IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            port,
        )));
    }
    if let Ok(addr) = value.parse() {
        return Ok(Some(addr));
    }
    let mut addrs = tokio::net::lookup_host(value)
        .await
        .with_context(|| format!("`{value}` is not an address like :8080 or 127.0.0.1:8080"))?;
    addrs
        .next()
        .map(Some)
        .with_context(|| format!("`{value}` resolves to no address"))
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
        assert!(parse_bind_address(":http").await.is_err());
        assert!(parse_bind_address("8080").await.is_err());
    }
}
