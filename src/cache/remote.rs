//! The remote store: the same objects and records over plain HTTP, `GET`/`PUT`/`HEAD` on
//! `<url>/cas/<hex>` and `<url>/ac/<hex>` (the Bazel HTTP cache URL convention), so any
//! server that stores PUT bodies as-is serves it: nginx's `dav_methods PUT` (tested),
//! Apache mod_dav, rclone… (`cache-format/SPEC.md`, "Remote"). Not bazel-remote: it
//! checks CAS names as SHA-256 and ours are blake3.
//!
//! This module only speaks HTTP and classifies answers; verification, the one warning and
//! the statistics are the caller's (`Cache`).
//!
//! HTTP client: `ureq` 3 with rustls (ring) for `https://` and nothing else. It is
//! blocking (the build already runs stages on rayon threads; an async runtime would be dead
//! weight), keeps connections alive in a pool shared by threads, has connect and idle
//! timeouts, and honours `*_PROXY`/`NO_PROXY` (never for a loopback host).
//! Measured on the 2-core machine: plain ureq adds 7 small crates (~15 s of a clean release
//! build, ~0.7 MB of binary); TLS adds 8 more (rustls, ring, Mozilla's roots in
//! webpki-roots, …): 36 s of the 336 s of crate compiling in a clean release build (3 min
//! on the two cores, `cargo build --timings`). reqwest, even its blocking API, brings hyper
//! and tokio. A remote behind a private CA is trusted with `ca_file` (those certificates
//! only).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::local::Kind;
use super::{Hash, RemoteOptions};

/// A remote that does not accept a TCP connection within this is taken as down.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a request may go without progress (no answer yet, no byte read or written).
/// Idle rather than total: a pack of several megabytes on a slow link must still arrive,
/// while a server that stops answering is given up on.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest body accepted from the remote (an action record is far smaller).
const MAX_OBJECT_BYTES: u64 = 1 << 30;
const MAX_RECORD_BYTES: u64 = 16 << 20;

pub(super) enum Fetch {
    Hit(Vec<u8>),
    /// 404: a plain miss.
    Miss,
    /// Connection error, timeout, 5xx or any other unexpected answer.
    Failed(String),
}

pub(super) enum Probe {
    Present,
    Absent,
    Failed(String),
}

pub(super) enum Put {
    Stored,
    /// 413: the server does not take bodies this large; not a failure of the remote.
    TooLarge,
    /// 401/403 and other 4xx: this client may not write (reads may still work).
    Refused(String),
    /// Connection error, timeout or 5xx.
    Failed(String),
}

pub(super) struct Remote {
    agent: ureq::Agent,
    /// The base URL without a trailing slash.
    base: String,
    /// Whether `base` names this machine.
    loopback: bool,
    authorization: Option<String>,
    read_only: bool,
    disabled: AtomicBool,
    writes_disabled: AtomicBool,
}

impl Remote {
    pub(super) fn new(options: &RemoteOptions) -> Result<Remote, String> {
        Remote::with_timeouts(options, CONNECT_TIMEOUT, IDLE_TIMEOUT)
    }

    fn with_timeouts(options: &RemoteOptions, connect: Duration, idle: Duration) -> Result<Remote, String> {
        let (base, loopback) = parse_base_url(&options.url)?;
        let authorization = match &options.token {
            Some(token) if token.bytes().any(|b| b.is_ascii_control()) || token.trim().is_empty() => {
                return Err("the remote cache token is empty or contains control characters".into());
            }
            Some(token) => Some(format!("Bearer {}", token.trim())),
            None => None,
        };
        let mut config = ureq::Agent::config_builder();
        if loopback {
            // A proxy from the environment is for the outside world, never for this host.
            config = config.proxy(None);
        }
        if let Some(file) = &options.ca_file {
            let roots = ureq::tls::RootCerts::new_with_certs(&read_certificates(file)?);
            config = config.tls_config(ureq::tls::TlsConfig::builder().root_certs(roots).build());
        }
        let agent: ureq::Agent = config
            .http_status_as_error(false)
            .timeout_connect(Some(connect))
            .timeout_per_read(Some(idle))
            .timeout_per_write(Some(idle))
            .user_agent(concat!("agent-bundle/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(Remote {
            agent,
            base,
            loopback,
            authorization,
            read_only: options.read_only,
            disabled: AtomicBool::new(false),
            writes_disabled: AtomicBool::new(false),
        })
    }

    pub(super) fn url(&self) -> &str {
        &self.base
    }

    /// A token sent over plain http to another machine: anyone on the way can read it.
    pub(super) fn sends_token_in_clear(&self) -> bool {
        self.authorization.is_some()
            && !self.loopback
            && self.base.get(..7).is_some_and(|s| s.eq_ignore_ascii_case("http://"))
    }

    pub(super) fn is_enabled(&self) -> bool {
        !self.disabled.load(Ordering::Relaxed)
    }

    pub(super) fn is_writable(&self) -> bool {
        !self.read_only && !self.writes_disabled.load(Ordering::Relaxed)
    }

    /// Disables the remote; true for the one caller that did it first.
    pub(super) fn disable(&self) -> bool {
        !self.disabled.swap(true, Ordering::Relaxed)
    }

    /// Disables uploads; true for the one caller that did it first.
    pub(super) fn disable_writes(&self) -> bool {
        !self.writes_disabled.swap(true, Ordering::Relaxed)
    }

    fn entry_url(&self, kind: Kind, hash: &Hash) -> String {
        format!("{}/{}/{}", self.base, kind.dir(), hash.to_hex())
    }

    /// `GET <url>/<cas|ac>/<hex>`. The bytes are NOT verified here.
    pub(super) fn get(&self, kind: Kind, hash: &Hash) -> Fetch {
        let mut request = self.agent.get(self.entry_url(kind, hash));
        if let Some(authorization) = &self.authorization {
            request = request.header("Authorization", authorization);
        }
        let response = match request.call() {
            Ok(response) => response,
            Err(error) => return Fetch::Failed(error.to_string()),
        };
        match response.status().as_u16() {
            200 => {
                let limit = match kind {
                    Kind::Object => MAX_OBJECT_BYTES,
                    Kind::Action => MAX_RECORD_BYTES,
                };
                match response.into_body().with_config().limit(limit).read_to_vec() {
                    Ok(bytes) => Fetch::Hit(bytes),
                    Err(error) => Fetch::Failed(format!("reading a response: {error}")),
                }
            }
            404 => Fetch::Miss,
            status => Fetch::Failed(format!("HTTP {status} for GET")),
        }
    }

    /// `HEAD <url>/<cas|ac>/<hex>`: whether the remote has the entry (unverified).
    pub(super) fn head(&self, kind: Kind, hash: &Hash) -> Probe {
        let mut request = self.agent.head(self.entry_url(kind, hash));
        if let Some(authorization) = &self.authorization {
            request = request.header("Authorization", authorization);
        }
        match request.call() {
            Err(error) => Probe::Failed(error.to_string()),
            Ok(response) => match response.status().as_u16() {
                200 => Probe::Present,
                404 => Probe::Absent,
                status => Probe::Failed(format!("HTTP {status} for HEAD")),
            },
        }
    }

    /// `PUT <url>/<cas|ac>/<hex>`.
    pub(super) fn put(&self, kind: Kind, hash: &Hash, bytes: &[u8]) -> Put {
        debug_assert!(!self.read_only, "a read-only remote never PUTs");
        if self.read_only {
            return Put::Refused("read-only".into());
        }
        let mut request = self.agent.put(self.entry_url(kind, hash)).header("Content-Type", "application/octet-stream");
        if let Some(authorization) = &self.authorization {
            request = request.header("Authorization", authorization);
        }
        match request.send(bytes) {
            Err(error) => Put::Failed(error.to_string()),
            Ok(response) => match response.status().as_u16() {
                200..=299 => Put::Stored,
                413 => Put::TooLarge,
                status @ 400..=499 => Put::Refused(format!("HTTP {status} for PUT")),
                status => Put::Failed(format!("HTTP {status} for PUT")),
            },
        }
    }
}

/// The certificates in the PEM file `path` (anything else in it is ignored).
fn read_certificates(path: &Path) -> Result<Vec<ureq::tls::Certificate<'static>>, String> {
    let bad = |why: String| format!("remote cache CA file {}: {why}", path.display());
    let pem = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    let mut certificates = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        if let ureq::tls::PemItem::Certificate(certificate) = item.map_err(|e| bad(e.to_string()))? {
            certificates.push(certificate);
        }
    }
    if certificates.is_empty() {
        return Err(bad("no PEM certificate in it".into()));
    }
    Ok(certificates)
}

/// Checks a remote URL; returns it without a trailing slash, and whether it names this
/// machine (`localhost`, 127.0.0.0/8, `[::1]`).
fn parse_base_url(url: &str) -> Result<(String, bool), String> {
    let bad = |why: &str| format!("bad remote cache URL {url:?}: {why}");
    let uri: ureq::http::Uri = url.parse().map_err(|e| bad(&format!("{e}")))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return Err(bad("expected http[s]://host[:port][/prefix]"));
    }
    let authority = uri.authority().ok_or_else(|| bad("no host"))?;
    if authority.as_str().contains('@') {
        return Err(bad("credentials in the URL are not supported; pass a token instead"));
    }
    if authority.host().is_empty() {
        return Err(bad("no host"));
    }
    if uri.query().is_some() || url.contains('#') {
        return Err(bad("a query or fragment is not allowed"));
    }
    let host = authority.host().trim_start_matches('[').trim_end_matches(']');
    let loopback =
        host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    Ok((url.trim_end_matches('/').to_owned(), loopback))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;

    /// A one-connection HTTP server on loopback: reads the request head, then runs `answer`.
    fn serve_once(answer: impl FnOnce(&mut std::net::TcpStream) + Send + 'static) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/cache", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap() > 2 {
                line.clear();
            }
            answer(&mut stream);
        });
        url
    }

    fn remote(url: String, idle_ms: u64) -> Remote {
        let options = RemoteOptions { url, ..RemoteOptions::default() };
        Remote::with_timeouts(&options, CONNECT_TIMEOUT, Duration::from_millis(idle_ms)).unwrap()
    }

    #[test]
    fn a_server_that_stops_answering_is_given_up_on_after_the_idle_timeout() {
        let url = serve_once(|_| std::thread::sleep(Duration::from_secs(3)));
        let started = std::time::Instant::now();
        assert!(matches!(remote(url, 200).get(Kind::Object, &Hash::of(b"x")), Fetch::Failed(_)));
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }

    #[test]
    fn a_slow_body_that_keeps_coming_arrives_whole() {
        let url = serve_once(|stream| {
            stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n").unwrap();
            for byte in b"hello" {
                std::thread::sleep(Duration::from_millis(150));
                stream.write_all(&[*byte]).unwrap();
            }
        });
        // 750 ms in all, never more than 150 ms without a byte.
        match remote(url, 400).get(Kind::Object, &Hash::of(b"x")) {
            Fetch::Hit(bytes) => assert_eq!(bytes, b"hello"),
            Fetch::Miss => panic!("a miss"),
            Fetch::Failed(error) => panic!("{error}"),
        }
    }

    #[test]
    fn remote_urls_are_checked() {
        let ok = |url: &str| parse_base_url(url).unwrap();
        assert_eq!(ok("http://127.0.0.1:8080/cache/"), ("http://127.0.0.1:8080/cache".into(), true));
        assert_eq!(ok("http://cache.example"), ("http://cache.example".into(), false));
        assert_eq!(ok("https://cache.example/x/"), ("https://cache.example/x".into(), false));
        assert!(ok("http://LocalHost:9/x").1);
        assert!(ok("http://[::1]:9/x").1);
        assert!(ok("http://127.8.0.1/").1);
        assert!(!ok("http://10.0.0.1/").1);
        for bad in ["ftp://x/y", "cache.example/x", "http://u:p@host/x", "http://h/x?y=1", "not a url", ""] {
            assert!(parse_base_url(bad).is_err(), "{bad} should be rejected");
        }
    }
}
