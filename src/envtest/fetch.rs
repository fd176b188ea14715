//! Reading what the envtest index names: an `http(s)://` URL (hyper's client, redirects
//! followed, the system's root certificates), a `file://` URL or a path. The index is read
//! whole; an archive is streamed into a file with its SHA-512 computed on the way, and a body
//! shorter than its `Content-Length` is refused as truncated.

use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use http_body_util::{BodyExt, Empty};
use hyper::body::{Bytes, Incoming};
use hyper::{Response, Uri};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connect, HttpConnector};
use hyper_util::rt::TokioExecutor;

use crate::cluster::block_on;

/// How long a server may take to answer a request, or to send the next part of a body.
const STALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Redirects followed before giving up (GitHub's release downloads take one).
const MAX_REDIRECTS: usize = 10;

/// Where something is: a URL to GET, or a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    Http(String),
    File(PathBuf),
}

impl Location {
    /// `http://`, `https://`, `file://` or a path; a relative path or URL is taken relative to
    /// `base` (the index that names it), else to the current folder.
    pub fn parse(text: &str, base: Option<&Location>) -> Location {
        if text.starts_with("http://") || text.starts_with("https://") {
            return Location::Http(text.to_string());
        }
        if let Some(path) = text.strip_prefix("file://") {
            return Location::File(PathBuf::from(path));
        }
        match base {
            Some(Location::Http(url)) if !text.starts_with('/') => {
                let folder = url.rfind('/').map_or(url.as_str(), |at| &url[..=at]);
                Location::Http(format!("{folder}{text}"))
            }
            Some(Location::File(index)) => {
                let folder = index.parent().unwrap_or(Path::new(""));
                Location::File(folder.join(text))
            }
            _ => Location::File(PathBuf::from(text)),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Http(url) => write!(f, "{url}"),
            Location::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// The whole text at `location`.
pub fn read_text(location: &Location) -> Result<String> {
    let mut bytes = Vec::new();
    copy(location, &mut bytes, |_| {})?;
    String::from_utf8(bytes).map_err(|_| anyhow!("{location} is not UTF-8 text"))
}

/// What a download wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Downloaded {
    pub bytes: u64,
    /// Lowercase hex.
    pub sha512: String,
}

/// Copies what `location` holds into `out`, and says how many bytes and their SHA-512.
pub fn download(location: &Location, out: &mut impl Write) -> Result<Downloaded> {
    let mut digest = ring::digest::Context::new(&ring::digest::SHA512);
    let bytes = copy(location, out, |chunk| digest.update(chunk))?;
    let sha512 = digest
        .finish()
        .as_ref()
        .iter()
        .fold(String::new(), |mut hex, b| {
            hex.push_str(&format!("{b:02x}"));
            hex
        });
    Ok(Downloaded { bytes, sha512 })
}

/// Streams `location` into `out`, handing each chunk to `seen` too; the number of bytes.
fn copy(location: &Location, out: &mut impl Write, mut seen: impl FnMut(&[u8])) -> Result<u64> {
    match location {
        Location::File(path) => {
            let mut file =
                std::fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
            let mut buf = vec![0; 1 << 16];
            let mut total = 0;
            loop {
                let n =
                    (file.read(&mut buf)).with_context(|| format!("reading {}", path.display()))?;
                if n == 0 {
                    return Ok(total);
                }
                seen(&buf[..n]);
                out.write_all(&buf[..n]).context("writing the download")?;
                total += n as u64;
            }
        }
        Location::Http(url) => block_on(get_http(url, out, &mut seen))?,
    }
}

/// GET `url` into `out`, following redirects.
async fn get_http(url: &str, out: &mut impl Write, seen: &mut impl FnMut(&[u8])) -> Result<u64> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(Some(STALL_TIMEOUT));
    // Without root certificates on the system, plain HTTP still works, and HTTPS says why not.
    match hyper_rustls::HttpsConnectorBuilder::new().with_native_roots() {
        Ok(tls) => {
            let connector = tls.https_or_http().enable_http1().wrap_connector(http);
            let client = Client::builder(TokioExecutor::new()).build(connector);
            get_with(&client, url, out, seen).await
        }
        Err(no_roots) => {
            if url.starts_with("https://") {
                bail!(
                    "no root certificates on this system to check {url} with ({no_roots}): install \
                     them (Debian: apt-get install ca-certificates), or give a local --index"
                );
            }
            let client = Client::builder(TokioExecutor::new()).build(http);
            get_with(&client, url, out, seen).await
        }
    }
}

async fn get_with<C>(
    client: &Client<C, Empty<Bytes>>,
    url: &str,
    out: &mut impl Write,
    seen: &mut impl FnMut(&[u8]),
) -> Result<u64>
where
    C: Connect + Clone + Send + Sync + 'static,
{
    let mut uri: Uri = url
        .parse()
        .with_context(|| format!("`{url}` is not a URL"))?;
    for _ in 0..=MAX_REDIRECTS {
        let response = tokio::time::timeout(STALL_TIMEOUT, client.get(uri.clone()))
            .await
            .map_err(|_| anyhow!("{uri} did not answer within {STALL_TIMEOUT:?}"))?
            .map_err(|e| anyhow!("GET {uri}: {}", error_chain(&e)))?;
        let status = response.status();
        if status.is_redirection() {
            let location = (response.headers().get(hyper::header::LOCATION))
                .and_then(|l| l.to_str().ok())
                .ok_or_else(|| anyhow!("{uri} answered {status} without a Location"))?;
            uri = redirect(&uri, location)?;
            continue;
        }
        if !status.is_success() {
            bail!("{uri} answered HTTP {status}");
        }
        return body_into(response, &uri, out, seen).await;
    }
    bail!("{url}: more than {MAX_REDIRECTS} redirects")
}

/// Where a redirect from `from` to `location` goes.
fn redirect(from: &Uri, location: &str) -> Result<Uri> {
    let target = if location.contains("://") {
        location.to_string()
    } else {
        let scheme = from.scheme_str().unwrap_or("http");
        let authority = from.authority().map_or("", |a| a.as_str());
        format!("{scheme}://{authority}{location}")
    };
    target
        .parse()
        .with_context(|| format!("{from} redirected to `{location}`, which is not a URL"))
}

async fn body_into(
    response: Response<Incoming>,
    uri: &Uri,
    out: &mut impl Write,
    seen: &mut impl FnMut(&[u8]),
) -> Result<u64> {
    let expected: Option<u64> = (response.headers().get(hyper::header::CONTENT_LENGTH))
        .and_then(|v| v.to_str().ok()?.parse().ok());
    let of = expected.map_or(String::new(), |n| format!(" of {n}"));
    let mut body = response.into_body();
    let mut total = 0u64;
    loop {
        let frame = tokio::time::timeout(STALL_TIMEOUT, body.frame())
            .await
            .map_err(|_| {
                anyhow!("{uri} sent nothing for {STALL_TIMEOUT:?} after {total}{of} bytes")
            })?;
        let Some(frame) = frame else { break };
        let frame = frame.map_err(|e| {
            anyhow!(
                "the download of {uri} broke off after {total}{of} bytes (truncated): {}",
                error_chain(&e)
            )
        })?;
        if let Ok(chunk) = frame.into_data() {
            seen(&chunk);
            out.write_all(&chunk).context("writing the download")?;
            total += chunk.len() as u64;
        }
    }
    if let Some(expected) = expected.filter(|&n| n != total) {
        bail!("the download of {uri} ended after {total} of {expected} bytes (truncated)");
    }
    Ok(total)
}

/// An error with its causes, `a: b: c` (hyper's own message is only the outermost).
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_taken_relative_to_the_index_that_names_them() {
        let web = Location::Http("https://example.com/a/index.yaml".into());
        let file = Location::File("/srv/envtest/index.yaml".into());
        assert_eq!(
            Location::parse("x.tar.gz", Some(&web)),
            Location::Http("https://example.com/a/x.tar.gz".into())
        );
        assert_eq!(
            Location::parse("x.tar.gz", Some(&file)),
            Location::File("/srv/envtest/x.tar.gz".into())
        );
        assert_eq!(
            Location::parse("file:///tmp/x.tar.gz", Some(&web)),
            Location::File("/tmp/x.tar.gz".into())
        );
        assert_eq!(
            Location::parse("http://h/x", Some(&file)),
            Location::Http("http://h/x".into())
        );
        assert_eq!(
            Location::parse("i.yaml", None),
            Location::File("i.yaml".into())
        );
    }

    #[test]
    fn redirects_resolve_against_the_url_they_came_from() {
        let from: Uri = "https://github.com/a/b".parse().unwrap();
        assert_eq!(
            redirect(&from, "/c/d").unwrap().to_string(),
            "https://github.com/c/d"
        );
        assert_eq!(
            redirect(&from, "https://objects.example/x?y=1")
                .unwrap()
                .to_string(),
            "https://objects.example/x?y=1"
        );
    }
}
