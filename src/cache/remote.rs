//! The remote store: the same objects and records over plain HTTP, `GET`/`PUT`/`HEAD` on
//! `<url>/cas/<hex>` and `<url>/ac/<hex>` (the Bazel HTTP cache URL convention), so any
//! server that stores PUT bodies as-is serves it: nginx's `dav_methods PUT` (tested),
//! Apache mod_dav, rclone… (`cache-format/SPEC.md`, "Remote"). Not bazel-remote: it
//! checks CAS names as SHA-256 and ours are blake3.
//!
//! An `s3://BUCKET/PREFIX` remote is the same protocol on an S3-compatible object store,
//! with each request signed (`s3.rs`): only the URL and the authorization differ.
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

use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use ureq::http::{Method, Request, Response};
use ureq::{AsSendBody, Body};

use super::local::Kind;
use super::{Hash, RemoteOptions, s3};

/// A remote that does not accept a TCP connection within this is taken as down.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a request may go without progress (no answer yet, no byte read or written).
/// Idle rather than total: a pack of several megabytes on a slow link must still arrive,
/// while a server that stops answering is given up on.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a request's body may take to go up or come down, however steadily its bytes
/// move: a 1 GiB object at 2 MB/s, far beyond what a build moves. (Per body, not ureq's
/// global timeout: that one made a cold build filling a remote 1.6× slower, 0.45 → 0.71 s
/// for 100 plugins.)
const BODY_TIMEOUT: Duration = Duration::from_secs(600);
/// The slowest a downloaded body may come on average, past its first idle timeout's worth
/// of time: a server that trickles a byte every few seconds never trips the idle timeout,
/// and would otherwise hold a build for the whole body timeout, request after request.
const MIN_BODY_BYTES_PER_SECOND: f64 = 64.0 * 1024.0;
/// What all downloads in flight may hold at once: a server streaming endless bodies (with
/// no `Content-Length` to refuse them by) to every thread must not take the machine's
/// memory before the first of them reaches its own bound.
const MAX_IN_FLIGHT_BYTES: u64 = 2 << 30;
/// How much of an error answer is read for its S3 error code.
const ERROR_BODY_BYTES: u64 = 16 << 10;
/// Pauses before asking again after a 429, 500, 502, 503 or 504: the server is there but
/// busy (S3 answers 503 SlowDown, others 429, and expect a retry) or briefly failing. A
/// refused or timed-out connection is not retried: a remote that is down costs its one
/// warning at once.
const RETRY_PAUSES: [Duration; 2] = [Duration::from_millis(50), Duration::from_millis(250)];
/// A request (a read with its body, an upload with its answer) that takes longer than this,
/// beside the time its body's bytes take at [`SLOW_RATE`], is slow: a healthy remote answers
/// within milliseconds, and within a round trip or two from another continent.
const SLOW_REQUEST: Duration = Duration::from_millis(500);
/// The rate a body may come or go at, on top of [`SLOW_REQUEST`], without its request being
/// slow: a pack of megabytes over a link of a few megabytes a second is not a slow remote.
const SLOW_RATE: f64 = 1024.0 * 1024.0;
/// How long requests may take in all past their due ([`SLOW_REQUEST`], [`SLOW_RATE`]; all
/// threads together) before the remote is given up on, as a failing one: a remote answering
/// every lookup just inside the idle timeout stretched a 0.3 s build to 108 s without a
/// word, and one answering at once but sending bodies (or taking uploads) slowly holds a
/// build as long.
const SLOW_BUDGET: Duration = Duration::from_secs(15);

#[derive(Debug)]
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
    /// 401/403 and other 4xx, or a redirect (an upload follows none): this client may not
    /// write there (reads may still work).
    Refused(String),
    /// Connection error, timeout or 5xx.
    Failed(String),
}

pub(super) struct Remote {
    agent: ureq::Agent,
    /// The base URL entries hang from, without a trailing slash.
    base: String,
    /// The remote as configured (an `s3://` URL or `base`), for messages.
    shown: String,
    /// Whether `base` names this machine.
    loopback: bool,
    auth: Auth,
    read_only: bool,
    disabled: AtomicBool,
    writes_disabled: AtomicBool,
    /// How long a body may come slower than [`MIN_BODY_BYTES_PER_SECOND`] (the idle timeout).
    body_grace: Duration,
    /// The bytes of the downloads being read, all threads together.
    in_flight: AtomicU64,
    slow: SlowRequests,
    /// What requests took past `slow.request` so far, in microseconds.
    slow_spent_micros: AtomicU64,
}

/// A download's share of [`Remote::in_flight`], given back when it is dropped.
struct InFlight<'a> {
    counter: &'a AtomicU64,
    bytes: u64,
}

impl InFlight<'_> {
    /// Adds `bytes` to this download's share; returns what all downloads now hold.
    fn add(&mut self, bytes: u64) -> u64 {
        self.bytes += bytes;
        self.counter.fetch_add(bytes, Ordering::Relaxed) + bytes
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.counter.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// How requests prove who sends them.
enum Auth {
    None,
    /// `Authorization: Bearer <token>` (the whole header value).
    Bearer(String),
    /// An S3 bucket: its signed `Host` header and the base URL's path, and the signer
    /// (`None`: unsigned requests to a public bucket).
    S3 {
        host: String,
        path: String,
        signer: Option<s3::Signer>,
    },
}

/// The limits of one request, and of slow requests in all.
struct Timeouts {
    connect: Duration,
    /// Without an answer or a byte read or written.
    idle: Duration,
    /// For a whole body, up or down.
    body: Duration,
    slow: SlowRequests,
}

/// When requests are too slow to help a build ([`SLOW_REQUEST`], [`SLOW_BUDGET`]).
#[derive(Clone, Copy)]
struct SlowRequests {
    /// A request taking longer is slow.
    request: Duration,
    /// What slow requests may take in all past `request`.
    budget: Duration,
}

impl Remote {
    pub(super) fn new(options: &RemoteOptions) -> Result<Remote, String> {
        let slow = SlowRequests { request: SLOW_REQUEST, budget: SLOW_BUDGET };
        Remote::with_timeouts(
            options,
            Timeouts { connect: CONNECT_TIMEOUT, idle: IDLE_TIMEOUT, body: BODY_TIMEOUT, slow },
        )
    }

    fn with_timeouts(options: &RemoteOptions, timeouts: Timeouts) -> Result<Remote, String> {
        let Timeouts { connect, idle, body, slow } = timeouts;
        let is_s3 = options.url.starts_with("s3://");
        let (base, loopback, auth) = if is_s3 {
            if options.token.is_some() {
                return Err("a remote cache token is for http(s) remotes; an s3:// remote signs its requests \
                            with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
                    .into());
            }
            let bucket = s3::resolve(&options.url, &options.s3, parse_base_url)?;
            (bucket.base, bucket.loopback, Auth::S3 { host: bucket.host, path: bucket.path, signer: bucket.signer })
        } else {
            let (base, loopback) = parse_base_url(&options.url).map_err(|error| {
                // (The remote may be a bucket too.)
                if error.ends_with(EXPECTED_HTTP) { format!("{error} or s3://BUCKET[/PREFIX]") } else { error }
            })?;
            let auth = match &options.token {
                Some(token)
                    if !token.is_ascii() || token.bytes().any(|b| b.is_ascii_control()) || token.trim().is_empty() =>
                {
                    return Err("the remote cache token is empty, or holds control or non-ASCII characters \
                                (an HTTP header cannot carry them)"
                        .into());
                }
                Some(token) => Auth::Bearer(format!("Bearer {}", token.trim())),
                None => Auth::None,
            };
            (base, loopback, auth)
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
        // Every request in flight keeps its connection for the next one (ureq keeps 3 per
        // host by default): a new connection costs a round trip more, and TLS more still.
        let connections = 2 * super::remote_concurrency();
        let agent: ureq::Agent = config
            // A redirect from an https remote to http would carry entries unencrypted, where
            // they can be replaced (a record cannot be checked against its name).
            .https_only(is_https(&base))
            .max_idle_connections(connections)
            .max_idle_connections_per_host(connections)
            .http_status_as_error(false)
            .timeout_connect(Some(connect))
            // The whole head too: a server trickling its headers a byte at a time would reset
            // the wait of every read.
            .timeout_recv_response(Some(idle))
            .timeout_per_read(Some(idle))
            .timeout_per_write(Some(idle))
            .timeout_recv_body(Some(body))
            .timeout_send_body(Some(body))
            .user_agent(concat!("agent-bundle/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(Remote {
            agent,
            shown: if is_s3 { options.url.trim_end_matches('/').to_owned() } else { base.clone() },
            base,
            loopback,
            auth,
            read_only: options.read_only,
            disabled: AtomicBool::new(false),
            writes_disabled: AtomicBool::new(false),
            body_grace: idle,
            in_flight: AtomicU64::new(0),
            slow,
            slow_spent_micros: AtomicU64::new(0),
        })
    }

    pub(super) fn url(&self) -> &str {
        &self.shown
    }

    /// A token sent over plain http to another machine: anyone on the way can read it.
    pub(super) fn sends_token_in_clear(&self) -> bool {
        matches!(self.auth, Auth::Bearer(_)) && !self.loopback && !is_https(&self.base)
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

    /// Sends `method` for the entry, authorized, with `body` (only a `PUT` has one), again
    /// after a pause while the server answers that it is busy or briefly failing.
    fn send(&self, method: Method, kind: Kind, hash: &Hash, body: Option<&[u8]>) -> Result<Response<Body>, String> {
        let mut pauses = RETRY_PAUSES.iter();
        loop {
            let response = self.send_once(method.clone(), kind, hash, body)?;
            match (response.status().as_u16(), pauses.next()) {
                (429 | 500 | 502 | 503 | 504, Some(pause)) => {
                    // Read to the end, so the next attempt reuses the connection.
                    finish_reading(response);
                    std::thread::sleep(*pause);
                }
                _ => return Ok(response),
            }
        }
    }

    fn send_once(
        &self,
        method: Method,
        kind: Kind,
        hash: &Hash,
        body: Option<&[u8]>,
    ) -> Result<Response<Body>, String> {
        let entry = format!("/{}/{}", kind.dir(), hash.to_hex());
        let mut request = Request::builder().method(method.clone()).uri(format!("{}{entry}", self.base));
        if body.is_some() {
            request = request.header("content-type", "application/octet-stream");
        }
        match &self.auth {
            Auth::None => {}
            Auth::Bearer(authorization) => request = request.header("authorization", authorization),
            Auth::S3 { host, path, signer } => {
                request = request.header("host", host);
                if let Some(signer) = signer {
                    let uri = format!("{path}{entry}");
                    for (name, value) in signer.headers(method.as_str(), host, &uri, body, SystemTime::now()) {
                        request = request.header(name, value);
                    }
                }
            }
        }
        let built = |error: ureq::http::Error| format!("building a request: {error}");
        // A body-less request is sent without one (not as an empty body, which a GET may not carry).
        let sent = match body {
            Some(bytes) => self.run(request.body(bytes).map_err(built)?),
            None => self.run(request.body(()).map_err(built)?),
        };
        sent.map_err(described)
    }

    /// Sends `request`, following redirects only for a read of a plain HTTP remote (the
    /// token is not sent on): ureq would send an upload's next request as a GET, and an S3
    /// request is signed for its own host, with credentials in headers ureq passes on.
    fn run<B: AsSendBody>(&self, request: Request<B>) -> Result<Response<Body>, ureq::Error> {
        let follows = *request.method() != Method::PUT && !matches!(self.auth, Auth::S3 { .. });
        let mut request = self.agent.configure_request(request);
        if !follows {
            request = request.max_redirects(0);
        }
        self.agent.run(request.build())
    }

    /// An answer the protocol has no place for, described for a warning: the status, an S3
    /// error code when the body has one, and why S3 may answer 403 to a read.
    fn unexpected(&self, method: &Method, response: Response<Body>) -> String {
        let status = response.status().as_u16();
        // Without its query, which may hold credentials (a presigned URL).
        let location = response.headers().get("location").and_then(|to| to.to_str().ok());
        let location = location.and_then(|to| to.split('?').next());
        let s3 = matches!(self.auth, Auth::S3 { .. });
        if let Some(location) = location.filter(|_| response.status().is_redirection())
            && (s3 || *method == Method::PUT)
        {
            let who = if s3 { "S3 requests" } else { "uploads" };
            return format!(
                "HTTP {status} for {method}, to {location}: {who} follow no redirect (give the remote cache's URL as the server redirects it)"
            );
        }
        if !s3 {
            return format!("HTTP {status} for {method}");
        }
        let body = response.into_body().with_config().limit(ERROR_BODY_BYTES).read_to_string().unwrap_or_default();
        let code = s3::error_code(&body);
        let hint = if status == 403 && *method != Method::PUT && code.is_none_or(|code| code == "AccessDenied") {
            " (S3 also answers 403 for a missing key when the credentials may not s3:ListBucket)"
        } else {
            ""
        };
        let code = code.map(|code| format!(" {code}")).unwrap_or_default();
        format!("HTTP {status}{code} for {method}{hint}")
    }

    /// What the request begun at `started`, with `bytes` of body so far, took past its due:
    /// [`SlowRequests::request`], and the body's time at [`SLOW_RATE`].
    fn overdue(&self, started: Instant, bytes: usize) -> Duration {
        let due = self.slow.request + Duration::from_secs_f64(bytes as f64 / SLOW_RATE);
        started.elapsed().saturating_sub(due)
    }

    /// Counts what the request begun at `started`, with a body of `bytes`, took past its
    /// due: once slow requests took their whole budget, it fails, so the remote is given up on.
    fn charge(&self, started: Instant, bytes: usize) -> Result<(), String> {
        let past = self.overdue(started, bytes);
        if past.is_zero() {
            return Ok(());
        }
        let past = u64::try_from(past.as_micros()).unwrap_or(u64::MAX);
        let spent = self.slow_spent_micros.fetch_add(past, Ordering::Relaxed).saturating_add(past);
        if Duration::from_micros(spent) <= self.slow.budget { Ok(()) } else { Err(self.too_slow()) }
    }

    /// Whether the request begun at `started`, still going with `bytes` of body so far, took
    /// the slow budget past its end.
    fn out_of_budget(&self, started: Instant, bytes: usize) -> bool {
        Duration::from_micros(self.slow_spent_micros.load(Ordering::Relaxed)) + self.overdue(started, bytes)
            > self.slow.budget
    }

    fn too_slow(&self) -> String {
        format!(
            "its requests took over {:?} each (and their bodies over a second a MiB), {:?} past that in all: too \
             slow to help the build",
            self.slow.request, self.slow.budget
        )
    }

    /// `GET <url>/<cas|ac>/<hex>`. The bytes are NOT verified here.
    pub(super) fn get(&self, kind: Kind, hash: &Hash) -> Fetch {
        let started = Instant::now();
        let fetched = match self.send(Method::GET, kind, hash, None) {
            Err(error) => return Fetch::Failed(error),
            Ok(response) => match response.status().as_u16() {
                200 => match self.read_body(response, kind.max_bytes(), started) {
                    Ok(body) => Fetch::Hit(body),
                    Err(error) => return Fetch::Failed(error),
                },
                404 => {
                    finish_reading(response);
                    Fetch::Miss
                }
                _ => return Fetch::Failed(self.unexpected(&Method::GET, response)),
            },
        };
        let bytes = if let Fetch::Hit(body) = &fetched { body.len() } else { 0 };
        match self.charge(started, bytes) {
            Ok(()) => fetched,
            Err(error) => Fetch::Failed(error),
        }
    }

    /// Reads a `200`'s body: refused at once when its `Content-Length` is past `limit`, and
    /// given up on past `limit`, when it comes slower than [`MIN_BODY_BYTES_PER_SECOND`]
    /// after its grace, when the downloads in flight together pass [`MAX_IN_FLIGHT_BYTES`],
    /// when the request (begun at `started`) takes the slow budget past its end, or once the
    /// remote was switched off (another request failed meanwhile).
    fn read_body(&self, response: Response<Body>, limit: u64, started: Instant) -> Result<Vec<u8>, String> {
        let announced = response.headers().get("content-length").and_then(|value| value.to_str().ok()?.parse().ok());
        if let Some(bytes) = announced.filter(|bytes: &u64| *bytes > limit) {
            return Err(format!("the remote announced a body of {bytes} bytes, past the {limit} an entry may have"));
        }
        let body_started = Instant::now();
        let mut reader = response.into_body().into_with_config().limit(limit).reader();
        let mut body = Vec::with_capacity(announced.unwrap_or(0).min(1 << 20) as usize);
        let mut held = InFlight { counter: &self.in_flight, bytes: 0 };
        let mut chunk = vec![0; 64 << 10];
        loop {
            let read = reader.read(&mut chunk).map_err(|error| format!("reading a response: {error}"))?;
            if read == 0 {
                return Ok(body);
            }
            if self.disabled.load(Ordering::Relaxed) {
                return Err("reading a response: the remote was switched off meanwhile".into());
            }
            if self.out_of_budget(started, body.len()) {
                return Err(self.too_slow());
            }
            if held.add(read as u64) > MAX_IN_FLIGHT_BYTES {
                return Err(format!("reading a response: downloads in flight passed {MAX_IN_FLIGHT_BYTES} bytes"));
            }
            body.extend_from_slice(&chunk[..read]);
            let due = self.body_grace.as_secs_f64() + body.len() as f64 / MIN_BODY_BYTES_PER_SECOND;
            if body_started.elapsed().as_secs_f64() > due {
                return Err(format!(
                    "reading a response: {} bytes in {:.1} s, slower than {} KiB/s",
                    body.len(),
                    body_started.elapsed().as_secs_f64(),
                    MIN_BODY_BYTES_PER_SECOND / 1024.0
                ));
            }
        }
    }

    /// `HEAD <url>/<cas|ac>/<hex>`: whether the remote has the entry (unverified).
    pub(super) fn head(&self, kind: Kind, hash: &Hash) -> Probe {
        let started = Instant::now();
        let probed = match self.send(Method::HEAD, kind, hash, None) {
            Err(error) => return Probe::Failed(error),
            Ok(response) => match response.status().as_u16() {
                200 => Probe::Present,
                404 => Probe::Absent,
                _ => return Probe::Failed(self.unexpected(&Method::HEAD, response)),
            },
        };
        match self.charge(started, 0) {
            Ok(()) => probed,
            Err(error) => Probe::Failed(error),
        }
    }

    /// `PUT <url>/<cas|ac>/<hex>`.
    pub(super) fn put(&self, kind: Kind, hash: &Hash, bytes: &[u8]) -> Put {
        debug_assert!(!self.read_only, "a read-only remote never PUTs");
        if self.read_only {
            return Put::Refused("read-only".into());
        }
        let started = Instant::now();
        let put = match self.send(Method::PUT, kind, hash, Some(bytes)) {
            Err(error) => return Put::Failed(error),
            Ok(response) => match response.status().as_u16() {
                200..=299 => {
                    finish_reading(response);
                    Put::Stored
                }
                413 => Put::TooLarge,
                300..=499 => Put::Refused(self.unexpected(&Method::PUT, response)),
                _ => return Put::Failed(self.unexpected(&Method::PUT, response)),
            },
        };
        match self.charge(started, bytes.len()) {
            Ok(()) => put,
            Err(error) => Put::Failed(error),
        }
    }
}

/// `error` for a warning, with what to do about it where that is known.
fn described(error: ureq::Error) -> String {
    match error {
        ureq::Error::RequireHttpsOnly(to) => format!(
            "a redirect to {}: an https remote cache follows none to http (its entries would travel unencrypted)",
            to.split('?').next().unwrap_or_default()
        ),
        error if error.to_string().contains("UnknownIssuer") => format!(
            "{error}: the server's certificate is from a CA this client does not trust; for a private CA, \
             name its certificate (PEM) with --remote-cache-ca or AGENT_BUNDLE_REMOTE_CACHE_CA"
        ),
        error if error.to_string().contains("CaUsedAsEndEntity") => format!(
            "{error}: the server presents a CA's certificate as its own (a self-signed one made with \
             `CA:TRUE`, openssl's default); give the server a certificate with `basicConstraints = CA:FALSE`, \
             signed by the CA --remote-cache-ca names, or self-signed"
        ),
        error => error.to_string(),
    }
}

/// Reads the rest of an answer whose body says nothing (a 404 page, a PUT's reply), so its
/// connection goes back to the pool: a connection left unread is closed, and the next
/// request pays for a new one (a round trip, and TLS's more).
fn finish_reading(response: Response<Body>) {
    let _ = response.into_body().with_config().limit(ERROR_BODY_BYTES).read_to_vec();
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

/// Whether `url` is an https one (the scheme in any case, as a URL may spell it).
fn is_https(url: &str) -> bool {
    url.get(..8).is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
}

/// What an HTTP remote's URL (or an S3 endpoint's) looks like.
const EXPECTED_HTTP: &str = "expected http[s]://host[:port][/prefix]";

/// Checks a remote URL; returns it without a trailing slash, and whether it names this
/// machine (`localhost`, 127.0.0.0/8, `[::1]`).
fn parse_base_url(url: &str) -> Result<(String, bool), String> {
    let bad = |why: &str| {
        format!("bad remote cache URL {:?} (--remote-cache, or AGENT_BUNDLE_REMOTE_CACHE): {why}", without_secrets(url))
    };
    match url.split_once("://") {
        None if url.is_empty() => return Err(bad(EXPECTED_HTTP)),
        Some((_, "")) => return Err(bad("no host")),
        _ => {}
    }
    let uri: ureq::http::Uri = url.parse().map_err(|e| bad(&format!("{e}")))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return Err(bad(EXPECTED_HTTP));
    }
    // Anywhere, not only in the authority: a password holding a `/` ends the authority
    // before its `@` (`http://user:pa/ss@host`), and the URL would name the host `user`.
    if url.contains('@') {
        return Err(bad("credentials in the URL are not supported; pass a token instead"));
    }
    let authority = uri.authority().ok_or_else(|| bad("no host"))?;
    if authority.host().is_empty() {
        return Err(bad("no host"));
    }
    // As written: the client takes a port past 65535 for none, and asks the scheme's own.
    let after_host = authority.as_str().rsplit_once(']').map_or(authority.as_str(), |(_, rest)| rest);
    if let Some((_, port)) = after_host.rsplit_once(':')
        && !(crate::source::is_plain_decimal(port) && port.parse::<u16>().is_ok_and(|port| port != 0))
    {
        return Err(bad("the port must be a number from 1 to 65535"));
    }
    if uri.query().is_some() || url.contains('#') {
        return Err(bad("a query or fragment is not allowed"));
    }
    Ok((url.trim_end_matches('/').to_owned(), is_loopback(authority.host())))
}

/// Whether `host` (of a URL) names this machine: `localhost` (with or without the root's
/// `.`), 127.0.0.0/8 in any form the resolver reads (`127.1`, `[::ffff:127.0.0.1]`), or
/// `[::1]`. Anything it cannot tell is taken as another machine: the safe side, which
/// warns about a token in clear and goes through a proxy.
fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.trim_end_matches('.').eq_ignore_ascii_case("localhost") {
        return true;
    }
    let ip = host.parse::<std::net::IpAddr>().ok().or_else(|| short_ipv4(host).map(std::net::IpAddr::V4));
    ip.is_some_and(|ip| ip.to_canonical().is_loopback())
}

/// An IPv4 address written with fewer than four decimal parts, as `inet_aton` and so the
/// resolver read it: the last part fills the bytes left (`127.1` is 127.0.0.1). Parts with
/// a leading zero (octal there) or in hex are not read: `None`.
fn short_ipv4(host: &str) -> Option<std::net::Ipv4Addr> {
    let parts: Vec<&str> = host.split('.').collect();
    if parts.len() > 3 || !parts.iter().all(|part| crate::source::is_plain_decimal(part)) {
        return None;
    }
    let (last, leading) = parts.split_last()?;
    let mut address: u32 = 0;
    for part in leading {
        address = (address << 8) | u32::from(part.parse::<u8>().ok()?);
    }
    let rest_bits = 8 * (4 - leading.len() as u32);
    let last: u64 = last.parse().ok()?;
    if last >> rest_bits != 0 {
        return None;
    }
    Some(std::net::Ipv4Addr::from(((u64::from(address) << rest_bits) | last) as u32))
}

/// `url` with everything up to its last `@` (`user:password@`) replaced by `***@` and any
/// query or fragment by `?***` or `#***` (where tokens are put too), for messages that end
/// in a CI job's log. The credentials go first, up to the last `@` wherever it is: a
/// password may hold a `/`, a `?` or a `#`.
pub(super) fn without_secrets(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), url),
    };
    let rest = match rest.rfind('@') {
        Some(at) => format!("***{}", &rest[at..]),
        None => rest.to_owned(),
    };
    match rest.find(['?', '#']) {
        Some(at) => format!("{scheme}{}{}***", &rest[..at], &rest[at..=at]),
        None => format!("{scheme}{rest}"),
    }
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
            skip_request_head(&stream);
            answer(&mut stream);
        });
        url
    }

    /// A server that answers with `head`, then one byte every `pause`, `bytes` times (or until
    /// the client goes).
    fn serve_trickling(head: &'static [u8], bytes: usize, pause: Duration) -> String {
        serve_once(move |stream| {
            let _ = stream.write_all(head);
            for _ in 0..bytes {
                std::thread::sleep(pause);
                if stream.write_all(b"x").is_err() {
                    return;
                }
            }
        })
    }

    fn skip_request_head(stream: &std::net::TcpStream) {
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        while reader.read_line(&mut line).unwrap() > 2 {
            line.clear();
        }
    }

    fn remote(url: String, idle_ms: u64) -> Remote {
        remote_within(url, idle_ms, BODY_TIMEOUT)
    }

    fn remote_within(url: String, idle_ms: u64, body: Duration) -> Remote {
        let options = RemoteOptions { url, ..RemoteOptions::default() };
        let slow = SlowRequests { request: SLOW_REQUEST, budget: SLOW_BUDGET };
        let timeouts = Timeouts { connect: CONNECT_TIMEOUT, idle: Duration::from_millis(idle_ms), body, slow };
        Remote::with_timeouts(&options, timeouts).unwrap()
    }

    #[test]
    fn a_body_that_trickles_past_the_request_timeout_is_given_up_on() {
        let url = serve_trickling(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", 100, Duration::from_millis(50));
        // A byte every 50 ms never trips the idle timeout; the body's bound does.
        let trickled = remote_within(url, 1000, Duration::from_millis(500)).get(Kind::Object, &Hash::of(b"x"));
        assert!(matches!(trickled, Fetch::Failed(_)));
    }

    #[test]
    fn a_head_that_trickles_past_the_idle_timeout_is_given_up_on() {
        let url = serve_trickling(b"HTTP/1.1 200 OK\r\nX: ", 1200, Duration::from_millis(50));
        // A byte of one header every 50 ms never trips the idle timeout of each read; the
        // head's half a second does, long before the minute the server would trickle for.
        let started = std::time::Instant::now();
        let trickled = remote(url, 500).get(Kind::Object, &Hash::of(b"x"));
        assert!(matches!(trickled, Fetch::Failed(_)), "{trickled:?}");
        assert!(started.elapsed() < Duration::from_secs(30), "given up on, not waited out");
    }

    #[test]
    fn a_body_that_trickles_slower_than_the_least_rate_is_given_up_on_after_its_grace() {
        let url = serve_trickling(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", 1000, Duration::from_millis(20));
        let started = std::time::Instant::now();
        // Under the idle timeout between bytes, far from the body timeout: the rate says.
        let trickled = remote(url, 300).get(Kind::Object, &Hash::of(b"x"));
        assert!(matches!(&trickled, Fetch::Failed(error) if error.contains("slower than")), "{trickled:?}");
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }

    #[test]
    fn a_body_announced_past_the_bound_is_refused_before_it_is_read() {
        let url = serve_once(|stream| {
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10737418240\r\n\r\n");
            std::thread::sleep(Duration::from_secs(3));
        });
        let started = std::time::Instant::now();
        let huge = remote(url, 2000).get(Kind::Object, &Hash::of(b"x"));
        assert!(matches!(&huge, Fetch::Failed(error) if error.contains("announced a body of 10737418240")), "{huge:?}");
        assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
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
        const CHUNK: usize = 64 << 10;
        let url = serve_once(|stream| {
            write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", 5 * CHUNK).unwrap();
            for byte in b"hello" {
                std::thread::sleep(Duration::from_millis(150));
                stream.write_all(&vec![*byte; CHUNK]).unwrap();
            }
        });
        // 750 ms in all, past the grace, at about 400 KiB/s, never 150 ms without a byte.
        match remote(url, 400).get(Kind::Object, &Hash::of(b"x")) {
            Fetch::Hit(bytes) => assert!(bytes.len() == 5 * CHUNK && bytes.chunks(CHUNK).map(|c| c[0]).eq(*b"hello")),
            Fetch::Miss => panic!("a miss"),
            Fetch::Failed(error) => panic!("{error}"),
        }
    }

    /// S3 without `s3:ListBucket` answers a missing key with 403 AccessDenied: the failure
    /// says so, since every miss will look like this.
    #[test]
    fn an_s3_access_denied_read_names_the_list_bucket_permission() {
        let url = serve_once(|stream| {
            let body =
                "<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>";
            write!(stream, "HTTP/1.1 403 Forbidden\r\nContent-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        });
        let endpoint = url.trim_end_matches("/cache").to_owned();
        let s3 = super::s3::S3Settings {
            endpoint: Some(endpoint),
            access_key_id: Some("id".into()),
            secret_access_key: Some("secret".into()),
            ..Default::default()
        };
        let options = RemoteOptions { url: "s3://cache/ci".into(), s3, ..RemoteOptions::default() };
        let remote = Remote::new(&options).unwrap();
        assert_eq!(remote.url(), "s3://cache/ci");
        match remote.get(Kind::Action, &Hash::of(b"x")) {
            Fetch::Failed(error) => {
                assert!(
                    error.starts_with("HTTP 403 AccessDenied for GET") && error.contains("s3:ListBucket"),
                    "{error}"
                )
            }
            _ => panic!("a 403 is a failure"),
        }
    }

    /// A server answering every request with a 404 after `pause`.
    fn serve_slowly(pause: Duration) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/cache", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                std::thread::spawn(move || {
                    skip_request_head(&stream);
                    std::thread::sleep(pause);
                    let _ =
                        stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                });
            }
        });
        url
    }

    /// A remote whose slow mark is 100 ms and whose slow requests may take 450 ms past it.
    fn remote_with_a_small_budget(url: String) -> Remote {
        let options = RemoteOptions { url, ..RemoteOptions::default() };
        let slow = SlowRequests { request: Duration::from_millis(100), budget: Duration::from_millis(450) };
        let timeouts = Timeouts { connect: CONNECT_TIMEOUT, idle: IDLE_TIMEOUT, body: BODY_TIMEOUT, slow };
        Remote::with_timeouts(&options, timeouts).unwrap()
    }

    #[test]
    fn a_remote_whose_answers_are_all_slow_is_given_up_on_once_they_took_their_budget() {
        let remote = remote_with_a_small_budget(serve_slowly(Duration::from_millis(400)));
        // Each answer takes 300 ms and a little past the slow mark: the budget lasts one.
        assert!(matches!(remote.head(Kind::Object, &Hash::of(b"x")), Probe::Absent));
        match remote.get(Kind::Action, &Hash::of(b"x")) {
            Fetch::Failed(error) => assert!(error.contains("too slow"), "{error}"),
            other => panic!("{other:?}: the second slow answer is past the budget"),
        }
        // Uploads count too.
        let remote = remote_with_a_small_budget(serve_slowly(Duration::from_millis(400)));
        assert!(matches!(remote.put(Kind::Object, &Hash::of(b"x"), b"x"), Put::Refused(_)));
        assert!(
            matches!(remote.put(Kind::Object, &Hash::of(b"x"), b"x"), Put::Failed(error) if error.contains("too slow"))
        );
    }

    /// A body of megabytes coming at a few megabytes a second is no slow request.
    #[test]
    fn a_large_body_coming_steadily_is_not_slow() {
        let url = serve_once(|stream| {
            let chunk = vec![b'x'; 64 << 10];
            let _ = write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", 32 * chunk.len());
            for _ in 0..32 {
                std::thread::sleep(Duration::from_millis(20));
                if stream.write_all(&chunk).is_err() {
                    return;
                }
            }
        });
        // 640 ms in all: past the 100 ms mark by far more than the budget, but within the
        // time its 2 MiB may take at the slow rate.
        match remote_with_a_small_budget(url).get(Kind::Object, &Hash::of(b"x")) {
            Fetch::Hit(body) => assert_eq!(body.len(), 2 << 20),
            other => panic!("{other:?}"),
        }
    }

    /// A body that comes steadily (never idle, faster than the least rate) but long counts
    /// toward the budget as it comes, and is dropped once it took it.
    #[test]
    fn a_body_that_keeps_the_request_slow_past_the_budget_is_dropped() {
        let head = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n";
        let remote = remote_with_a_small_budget(serve_trickling(head, 1000, Duration::from_millis(5)));
        let started = Instant::now();
        match remote.get(Kind::Object, &Hash::of(b"x")) {
            Fetch::Failed(error) => assert!(error.contains("too slow"), "{error}"),
            other => panic!("{other:?}: a body taking 5 s is past a budget of 450 ms"),
        }
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }

    /// Answers each of `answers` on its own connection, in order; returns the URL.
    fn serve_in_turn(answers: &'static [&'static str]) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/cache", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for answer in answers {
                let (mut stream, _) = listener.accept().unwrap();
                skip_request_head(&stream);
                stream.write_all(answer.as_bytes()).unwrap();
            }
        });
        url
    }

    const BUSY: &str = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    const HELLO: &str = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";

    #[test]
    fn a_busy_server_is_asked_again_twice_then_given_up_on() {
        match remote(serve_in_turn(&[BUSY, BUSY, HELLO]), 1000).get(Kind::Object, &Hash::of(b"x")) {
            Fetch::Hit(bytes) => assert_eq!(bytes, b"hello"),
            Fetch::Miss => panic!("a miss"),
            Fetch::Failed(error) => panic!("{error}"),
        }
        match remote(serve_in_turn(&[BUSY, BUSY, BUSY, HELLO]), 1000).get(Kind::Object, &Hash::of(b"x")) {
            Fetch::Failed(error) => assert_eq!(error, "HTTP 503 for GET"),
            _ => panic!("three busy answers are a failure"),
        }
    }

    #[test]
    fn a_read_answered_with_a_status_it_cannot_follow_says_just_that() {
        let url = serve_once(|stream| {
            let _ = stream.write_all(b"HTTP/1.1 304 Not Modified\r\nContent-Length: 0\r\n\r\n");
        });
        match remote(url, 1000).get(Kind::Object, &Hash::of(b"x")) {
            Fetch::Failed(error) => assert_eq!(error, "HTTP 304 for GET"),
            _ => panic!("a 304 is a failure"),
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
        for loopback in ["http://[::ffff:127.0.0.1]/", "http://127.1/", "http://127.0.1:9/", "http://localhost./x"] {
            assert!(ok(loopback).1, "{loopback}");
        }
        for other in ["http://0127.0.0.1/", "http://128.1/", "http://127.256.1.1/", "http://[::ffff:10.0.0.1]/"] {
            assert!(!ok(other).1, "{other}");
        }
        let bad_ports = ["http://127.0.0.1:99999/x", "http://127.0.0.1:65536/x", "http://h:0/x", "http://h:+80/x"];
        for bad in ["ftp://x/y", "cache.example/x", "http://u:p@host/x", "http://h/x?y=1", "not a url", ""]
            .iter()
            .chain(&bad_ports)
        {
            assert!(parse_base_url(bad).is_err(), "{bad} should be rejected");
        }
        let error = parse_base_url("https://ci:hunter2@cache.example/x").unwrap_err();
        assert!(!error.contains("hunter2") && error.contains("https://***@cache.example/x"), "{error}");
        let error = parse_base_url("https://ci:hunt#er2@cache.example/x").unwrap_err();
        assert!(!error.contains("hunt") && error.contains("\"https://***@cache.example/x\""), "{error}");
        let error = parse_base_url("https://ci:hu?nter2@cache.example/x?token=abc").unwrap_err();
        assert!(!error.contains("hu") && error.contains("\"https://***@cache.example/x?***\""), "{error}");
        for slashed in ["http://user:hun/ter2@127.0.0.1:18080/cache", "http://u:a/b/c@host/x", "http://h/a@b"] {
            let error = parse_base_url(slashed).unwrap_err();
            assert!(error.contains("credentials in the URL") && !error.contains("ter2"), "{error}");
        }
        let error = parse_base_url("http://user:hun/ter2@127.0.0.1:18080/cache").unwrap_err();
        assert!(error.contains("\"http://***@127.0.0.1:18080/cache\""), "{error}");
        let error = parse_base_url("https://cache.example/x?token=hunter2").unwrap_err();
        assert!(!error.contains("hunter2") && error.contains("\"https://cache.example/x?***\""), "{error}");
        let error = parse_base_url("https://cache.example/x#hunter2").unwrap_err();
        assert!(!error.contains("hunter2") && error.contains("\"https://cache.example/x#***\""), "{error}");
        let error = parse_base_url("http://").unwrap_err();
        assert!(error.ends_with(": no host"), "{error}");
    }
}
