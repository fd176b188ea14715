//! A local envtest releases server for the tests of `operator-rs envtest`: an HTTP/1.1 server
//! on a loopback port (std's TcpListener, one thread), serving an index and archives as
//! controller-tools publishes them, or failing as a network does (404, a body cut short), and
//! recording every request; plus `.tar.gz` archives laid out as envtest's.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the server answers on a path.
#[derive(Clone, Debug)]
pub enum Reply {
    /// 200 with this body.
    Body(Vec<u8>),
    /// 200 announcing the whole body's length, then only its first `sent` bytes, then the
    /// connection closes.
    Truncated { body: Vec<u8>, sent: usize },
    /// 302 to this path.
    Redirect(String),
}

/// A running server; stops when dropped.
pub struct Server {
    pub addr: SocketAddr,
    routes: Arc<Mutex<BTreeMap<String, Reply>>>,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl Server {
    pub fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().unwrap();
        let server = Server {
            addr,
            routes: Arc::default(),
            requests: Arc::default(),
            stop: Arc::default(),
        };
        let (routes, requests, stop) = (
            server.routes.clone(),
            server.requests.clone(),
            server.stop.clone(),
        );
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    return;
                }
                if let Ok(stream) = stream {
                    let _ = serve(stream, &routes, &requests);
                }
            }
        });
        server
    }

    /// `http://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn route(&self, path: &str, reply: Reply) {
        self.routes.lock().unwrap().insert(path.to_string(), reply);
    }

    /// The paths requested so far.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop, which then sees the flag and returns (closing the port).
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}

fn serve(
    stream: TcpStream,
    routes: &Mutex<BTreeMap<String, Reply>>,
    requests: &Mutex<Vec<String>>,
) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header == "\r\n" || header == "\n" {
            break;
        }
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .to_string();
    requests.lock().unwrap().push(path.clone());
    let reply = routes.lock().unwrap().get(&path).cloned();
    let mut out = stream;
    match reply {
        Some(Reply::Body(body)) => {
            write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )?;
            out.write_all(&body)?;
        }
        Some(Reply::Truncated { body, sent }) => {
            write!(
                out,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            )?;
            out.write_all(&body[..sent])?;
        }
        Some(Reply::Redirect(to)) => {
            write!(
                out,
                "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )?;
        }
        None => {
            let body = "404 page not found\n";
            write!(
                out,
                "HTTP/1.1 404 Not Found\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )?;
        }
    }
    out.flush()?;
    out.shutdown(std::net::Shutdown::Both)
}

/// A `.tar.gz` holding `files` (name, content) under `controller-tools/envtest/`, as
/// controller-tools packs envtest's binaries.
pub fn archive(files: &[(&str, &[u8])]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    for dir in ["controller-tools/", "controller-tools/envtest/"] {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Directory);
        header.set_mode(0o755);
        header.set_size(0);
        tar.append_data(&mut header, dir, std::io::empty()).unwrap();
    }
    for (name, content) in files {
        let mut header = tar::Header::new_gnu();
        header.set_mode(0o755);
        header.set_size(content.len() as u64);
        tar.append_data(
            &mut header,
            format!("controller-tools/envtest/{name}"),
            *content,
        )
        .unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

/// A fake envtest archive: the three binaries as small scripts naming themselves and `version`.
pub fn fake_archive(version: &str) -> Vec<u8> {
    let script = |name: &str| format!("#!/bin/sh\necho {name} {version}\n").into_bytes();
    archive(&[
        ("etcd", &script("etcd")),
        ("kube-apiserver", &script("kube-apiserver")),
        ("kubectl", &script("kubectl")),
    ])
}

/// SHA-512 of `bytes`, lowercase hex (what the index's `hash` holds).
pub fn sha512(bytes: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA512, bytes);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// This machine as the index names platforms (`linux`, `amd64`).
pub fn platform() -> (String, String) {
    let platform = operator_rs::envtest::index::Platform::current();
    (platform.os, platform.arch)
}

/// `envtest-v<version>-<os>-<arch>.tar.gz` for this machine.
pub fn archive_name(version: &str) -> String {
    let (os, arch) = platform();
    format!("envtest-v{version}-{os}-{arch}.tar.gz")
}

/// An index in controller-tools' format: each (version, archive name, sha512, selfLink).
pub fn index(entries: &[(&str, &str, &str, &str)]) -> String {
    let mut releases: BTreeMap<&str, Vec<(&str, &str, &str)>> = BTreeMap::new();
    for (version, name, hash, link) in entries {
        releases
            .entry(version)
            .or_default()
            .push((name, hash, link));
    }
    let mut text = String::from("releases:\n");
    for (version, files) in releases {
        text.push_str(&format!("  v{version}:\n"));
        for (name, hash, link) in files {
            text.push_str(&format!(
                "    {name}:\n      hash: {hash}\n      selfLink: {link}\n"
            ));
        }
    }
    text
}

/// The entries of `dir` (names), sorted: to show a store holds nothing half-written.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}
