//! The remote cache against a real server: Debian's nginx with its WebDAV module on
//! loopback, started by `scripts/nginx-cache-server.sh` (one per test, on a free port).
//! nginx requires `Authorization: Bearer secret` for PUT, so the tests also check that the
//! token is sent and that a refused upload degrades cleanly.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent_bundle::cache::{ActionRecord, Cache, CacheOptions, Hash, KeyBuilder, RemoteOptions, dir_stats};

use crate::support::daemon::{Daemon, free_port};

const TOKEN: &str = "secret";

/// A running nginx serving the cache layout; stopped on drop.
pub(crate) struct Nginx {
    daemon: Daemon,
    tls: bool,
}

const NGINX_MISSING: &str =
    "the remote cache tests need a real nginx, which is not installed: run `apt-get install -y nginx`";

impl Nginx {
    pub(crate) fn start() -> Nginx {
        Nginx { daemon: Daemon::start("nginx-cache-server.sh", &[], NGINX_MISSING), tls: false }
    }

    /// nginx serving https with a certificate from a throwaway CA ([`Nginx::ca_file`]).
    pub(crate) fn start_tls() -> Nginx {
        Nginx { daemon: Daemon::start("nginx-cache-server.sh", &["--tls"], NGINX_MISSING), tls: true }
    }

    pub(crate) fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}/cache", self.daemon.port)
    }

    pub(crate) fn port(&self) -> u16 {
        self.daemon.port
    }

    /// The CA that signed an https server's certificate.
    pub(crate) fn ca_file(&self) -> PathBuf {
        self.daemon.path("tls/ca.pem")
    }

    /// Where nginx keeps `<url>/<kind>/<hex>`.
    fn stored(&self, kind: &str, hash: &Hash) -> PathBuf {
        self.daemon.path("store/cache").join(kind).join(hash.to_hex())
    }

    /// The connections (nginx's serial numbers) the requests of the log came on.
    fn connections(&self) -> std::collections::BTreeSet<String> {
        self.requests("HTTP/1.1\"");
        let log = fs::read_to_string(self.daemon.path("logs/access.log")).unwrap_or_default();
        log.lines().filter_map(|line| line.split("connection=").nth(1).map(str::to_owned)).collect()
    }

    /// How many requests in nginx's access log contain `method_and_path`, e.g.
    /// `"PUT /cache/cas/<hex> "`. nginx logs a request just after answering it, so this
    /// waits a little for the count to settle.
    pub(crate) fn requests(&self, method_and_path: &str) -> usize {
        let count = || {
            let log = fs::read_to_string(self.daemon.path("logs/access.log")).unwrap_or_default();
            log.lines().filter(|line| line.contains(method_and_path)).count()
        };
        let mut last = count();
        for _ in 0..10 {
            std::thread::sleep(Duration::from_millis(20));
            let now = count();
            if now == last && now > 0 {
                break;
            }
            last = now;
        }
        last
    }

    /// Every file in the store with its bytes.
    pub(crate) fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        self.daemon.snapshot()
    }
}

fn cache(dir: &Path, url: &str, token: Option<&str>, read_only: bool) -> Cache {
    cache_trusting(dir, url, token, read_only, None)
}

/// [`cache`], verifying an https server against `ca_file` when given.
fn cache_trusting(dir: &Path, url: &str, token: Option<&str>, read_only: bool, ca_file: Option<PathBuf>) -> Cache {
    Cache::open(&CacheOptions {
        dir: Some(dir.to_owned()),
        remote: Some(RemoteOptions {
            url: url.to_owned(),
            token: token.map(str::to_owned),
            read_only,
            ca_file,
            s3: Default::default(),
        }),
    })
    .unwrap()
}

fn key(name: &str) -> Hash {
    KeyBuilder::new("test-action").field("name", name.as_bytes()).finish()
}

fn record(outputs: &[(&str, Hash)]) -> ActionRecord {
    ActionRecord {
        outputs: outputs.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        values: BTreeMap::from([("exports".to_owned(), "default".to_owned())]),
    }
}

/// The local entry files under a cache directory.
fn local_path(dir: &Path, kind: &str, hash: &Hash) -> PathBuf {
    let hex = hash.to_hex();
    dir.join("v1").join(kind).join(&hex[..2]).join(hex)
}

#[test]
fn two_caches_share_one_remote() {
    let nginx = Nginx::start();
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());

    let writer = cache(dir_a.path(), &nginx.url(), Some(TOKEN), false);
    let objects: Vec<Vec<u8>> = vec![b"export const a = 1;\n".to_vec(), vec![7u8; 300_000], Vec::new()];
    let hashes: Vec<Hash> = objects.iter().map(|bytes| writer.put_object(bytes)).collect();
    let actions = [
        (key("one"), record(&[("a.js", hashes[0])])),
        (key("two"), record(&[("big", hashes[1]), ("empty", hashes[2])])),
    ];
    for (key, record) in &actions {
        writer.put_action(key, record);
    }
    writer.finish_uploads();
    assert_eq!(writer.take_warnings(), Vec::<String>::new());
    assert_eq!(writer.stats().remote_errors, 0);
    // The server holds the same bytes as the local store (one format, two transports).
    for (hash, bytes) in hashes.iter().zip(&objects) {
        assert_eq!(&fs::read(nginx.stored("cas", hash)).unwrap(), bytes);
    }
    for (key, _) in &actions {
        assert_eq!(fs::read(nginx.stored("ac", key)).unwrap(), fs::read(local_path(dir_a.path(), "ac", key)).unwrap());
    }

    // Another machine: nothing local, everything from the remote.
    let before = dir_stats(dir_b.path()).unwrap();
    assert_eq!((before.objects, before.actions), (0, 0));
    let reader = cache(dir_b.path(), &nginx.url(), Some(TOKEN), false);
    for (key, record) in &actions {
        assert_eq!(reader.get_action(key).as_ref(), Some(record));
    }
    for (hash, bytes) in hashes.iter().zip(&objects) {
        assert_eq!(&*reader.get_object(hash).unwrap(), &bytes[..]);
    }
    let stats = reader.stats();
    assert_eq!((stats.action_hits, stats.object_hits, stats.remote_hits), (2, 3, 5));
    assert_eq!((stats.action_misses, stats.object_misses, stats.remote_errors), (0, 0, 0));
    assert!(reader.take_warnings().is_empty());

    // ...and now has them locally: a cache whose remote is gone still hits.
    let after = dir_stats(dir_b.path()).unwrap();
    assert_eq!((after.objects, after.actions), (3, 2));
    let offline = cache(dir_b.path(), &format!("http://127.0.0.1:{}/cache", free_port()), None, false);
    for (key, record) in &actions {
        assert_eq!(offline.get_action(key).as_ref(), Some(record));
    }
    for hash in &hashes {
        assert!(offline.get_object(hash).is_some());
    }
    assert_eq!(offline.stats().remote_hits, 0);
    assert!(offline.take_warnings().is_empty(), "local hits never touch the remote");

    // A third process re-putting the large object probes with HEAD and sends no bytes.
    let dir_c = tempfile::tempdir().unwrap();
    let third = cache(dir_c.path(), &nginx.url(), Some(TOKEN), false);
    assert_eq!(third.put_object(&objects[1]), hashes[1]);
    let big = format!("/cache/cas/{} ", hashes[1]);
    assert_eq!(nginx.requests(&format!("HEAD {big}")), 2, "the first writer's (404) and this one");
    assert_eq!(nginx.requests(&format!("PUT {big}")), 1, "uploaded once, by the first writer");
    assert!(third.take_warnings().is_empty());

    // A miss on both sides is a plain miss (404), not a remote error.
    assert_eq!(reader.get_action(&key("absent")), None);
    assert_eq!(reader.get_object(&Hash::of(b"absent")), None);
    assert_eq!(reader.stats().remote_errors, 0);
    assert!(reader.take_warnings().is_empty());
}

/// Misses (404 pages) and stored uploads leave their connection reusable: a new one costs a
/// round trip more (and TLS more still).
#[test]
fn requests_one_after_another_share_one_connection() {
    let nginx = Nginx::start();
    let dir = tempfile::tempdir().unwrap();
    let cache = cache(dir.path(), &nginx.url(), Some(TOKEN), false);
    for name in ["a", "b", "c"] {
        assert_eq!(cache.get_action(&key(name)), None);
    }
    cache.put_object(b"one");
    cache.put_object(b"two");
    assert_eq!(cache.get_action(&key("d")), None);
    assert_eq!(nginx.requests("\" 404 "), 4);
    assert_eq!(nginx.connections().len(), 1, "{:?}", nginx.connections());
}

#[test]
fn a_read_only_cache_never_writes() {
    let nginx = Nginx::start();
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let writer = cache(dir_a.path(), &nginx.url(), Some(TOKEN), false);
    let shared = writer.put_object(b"shared");
    writer.put_action(&key("shared"), &record(&[("o", shared)]));
    // Two projects sharing a module make the same record: it goes up once.
    writer.scoped().put_action(&key("shared"), &record(&[("o", shared)]));
    writer.finish_uploads();
    assert_eq!(nginx.requests(&format!("PUT /cache/ac/{} ", key("shared"))), 1);
    let before = nginx.snapshot();
    assert_eq!(before.len(), 2);

    let read_only = cache(dir_b.path(), &nginx.url(), Some(TOKEN), true);
    let own = read_only.put_object(b"only local");
    read_only.put_action(&key("own"), &record(&[("o", own)]));
    read_only.finish_uploads();
    assert_eq!(nginx.snapshot(), before, "the store is unchanged");
    // It still reads from the remote, and stores locally what it makes and fetches.
    assert_eq!(read_only.get_action(&key("shared")), Some(record(&[("o", shared)])));
    assert_eq!(&*read_only.get_object(&shared).unwrap(), b"shared");
    assert!(read_only.get_action(&key("own")).is_some());
    assert_eq!(read_only.stats().remote_hits, 2);
    assert!(read_only.take_warnings().is_empty());
    assert_eq!(nginx.snapshot(), before);
}

#[test]
fn an_upload_without_the_token_is_refused_once_and_reads_go_on() {
    let nginx = Nginx::start();
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let writer = cache(dir_a.path(), &nginx.url(), Some(TOKEN), false);
    let shared = writer.put_object(b"shared");
    let before = nginx.snapshot();

    let no_token = cache(dir_b.path(), &nginx.url(), None, false);
    no_token.put_object(b"one");
    no_token.put_object(b"two");
    no_token.put_action(&key("k"), &ActionRecord::default());
    no_token.finish_uploads();
    let warnings = no_token.take_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("401"), "{warnings:?}");
    assert_eq!(no_token.stats().remote_errors, 1, "no more uploads after the refusal");
    assert_eq!(nginx.snapshot(), before);
    // Reads still use the remote; local writes still happen.
    assert_eq!(&*no_token.get_object(&shared).unwrap(), b"shared");
    assert!(no_token.get_action(&key("k")).is_some());
    assert!(no_token.take_warnings().is_empty());
}

#[test]
fn an_upload_redirected_elsewhere_is_refused_once_and_reads_follow_the_redirect() {
    let nginx = Nginx::start();
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let shared = cache(dir_a.path(), &nginx.url(), Some(TOKEN), false).put_object(b"shared");
    let before = nginx.snapshot();

    let moved = format!("http://127.0.0.1:{}/moved", nginx.daemon.port);
    let redirected = cache(dir_b.path(), &moved, Some(TOKEN), false);
    redirected.put_object(b"one");
    redirected.put_object(b"two");
    redirected.finish_uploads();
    let warnings = redirected.take_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("HTTP 302 for PUT, to http://127.0.0.1:"), "{warnings:?}");
    assert!(warnings[0].contains("/cache/cas/") && warnings[0].contains("no redirect"), "{warnings:?}");
    assert_eq!(redirected.stats().remote_errors, 1, "no more uploads after the refusal");
    assert_eq!(nginx.snapshot(), before);
    assert_eq!(nginx.requests("\"GET /cache/cas/"), 0, "an upload never becomes a read");
    assert_eq!(&*redirected.get_object(&shared).unwrap(), b"shared");
    assert!(redirected.take_warnings().is_empty());
}

#[test]
fn an_https_remote_redirecting_reads_to_http_is_not_followed() {
    let nginx = Nginx::start_tls();
    let dir = tempfile::tempdir().unwrap();
    let downgraded = nginx.url().replace("/cache", "/downgraded");
    let cache = cache_trusting(dir.path(), &downgraded, None, true, Some(nginx.ca_file()));
    assert_eq!(cache.get_action(&key("a")), None);
    assert_eq!(cache.get_object(&Hash::of(b"elsewhere")), None);
    let warnings = cache.take_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("a redirect to http://127.0.0.1:"), "{warnings:?}");
    assert!(warnings[0].contains("follows none to http"), "{warnings:?}");
    assert_eq!(cache.stats().remote_errors, 1, "the remote is off after the refusal");
    assert_eq!(nginx.requests("\"GET /cache/"), 0, "no request went unencrypted");
}

#[test]
fn a_record_goes_up_only_after_its_objects_and_a_too_large_one_is_said_once() {
    let nginx = Nginx::start();
    let dir = tempfile::tempdir().unwrap();
    let small = format!("http://127.0.0.1:{}/small", nginx.port());
    let cache = cache(dir.path(), &small, Some(TOKEN), false);
    let (large, larger) = (cache.put_object(&[1; 4096]), cache.put_object(&[2; 8192]));
    let fits = cache.put_object(b"fits");
    cache.put_action(&key("large"), &record(&[("o", large), ("p", fits)]));
    cache.put_action(&key("larger"), &record(&[("o", larger)]));
    cache.put_action(&key("fits"), &record(&[("o", fits)]));
    cache.finish_uploads();
    let warnings = cache.take_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("4096-byte upload") && warnings[0].contains("client_max_body_size"), "{warnings:?}");
    assert_eq!(cache.stats().remote_errors, 0, "a 413 is not a failure of the remote");
    for (name, uploaded) in [("large", false), ("larger", false), ("fits", true)] {
        let stored = nginx.daemon.path("store/small/ac").join(key(name).to_hex()).exists();
        assert_eq!(stored, uploaded, "the record {name}");
    }
    assert_eq!(nginx.requests("\"PUT /small/ac/"), 1, "no record naming a missing object is even sent");
}

#[test]
fn a_certificate_from_an_unknown_ca_says_how_to_trust_it() {
    let nginx = Nginx::start_tls();
    let dir = tempfile::tempdir().unwrap();
    let cache = cache(dir.path(), &nginx.url(), None, true);
    assert_eq!(cache.get_action(&key("a")), None);
    let warnings = cache.take_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("UnknownIssuer") && warnings[0].contains("--remote-cache-ca"), "{warnings:?}");
}

#[test]
fn a_dead_remote_costs_one_warning_then_the_cache_is_local_only() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{}/cache", free_port()); // nothing listens there
    let cache = cache(dir.path(), &url, Some(TOKEN), false);
    let started = Instant::now();
    assert_eq!(cache.get_action(&key("a")), None);
    let object = cache.put_object(b"made locally");
    cache.put_action(&key("a"), &record(&[("o", object)]));
    cache.finish_uploads();
    assert_eq!(cache.get_object(&Hash::of(b"elsewhere")), None);
    for i in 0..20 {
        cache.put_object(format!("object {i}").as_bytes());
    }
    assert_eq!(cache.get_action(&key("a")), Some(record(&[("o", object)])));
    assert_eq!(&*cache.get_object(&object).unwrap(), b"made locally");
    assert!(started.elapsed() < Duration::from_secs(5), "connection refused is immediate, and asked once");

    let warnings = cache.take_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains(&url) && warnings[0].contains("local cache only"), "{warnings:?}");
    assert!(!warnings[0].contains(TOKEN));
    let stats = cache.stats();
    assert_eq!(stats.remote_errors, 1);
    assert_eq!((stats.action_hits, stats.action_misses, stats.object_hits, stats.object_misses), (1, 1, 1, 1));
    assert!(cache.take_warnings().is_empty());
}

#[test]
fn a_failing_remote_5xx_costs_one_warning() {
    let nginx = Nginx::start();
    // A file where nginx must create a directory: every PUT under it is a 500.
    fs::write(nginx.daemon.path("store/broken"), b"").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{}/broken", nginx.daemon.port);
    let cache = cache(dir.path(), &url, Some(TOKEN), false);
    let a = cache.put_object(b"a");
    cache.put_object(b"b");
    cache.put_action(&key("k"), &record(&[("a", a)]));
    cache.finish_uploads();
    let warnings = cache.take_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("500"), "{warnings:?}");
    assert_eq!(cache.stats().remote_errors, 1);
    assert!(cache.get_action(&key("k")).is_some(), "local hits are unaffected");
}

#[test]
fn a_corrupt_remote_entry_is_rejected_never_served() {
    let nginx = Nginx::start();
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let writer = cache(dir_a.path(), &nginx.url(), Some(TOKEN), false);
    let bytes = b"export default function hook() { return { allow: true }; }\n";
    let object = writer.put_object(bytes);
    let truncated = writer.put_object(b"a longer object that the server will cut short");
    writer.put_action(&key("k"), &record(&[("o", object)]));
    writer.finish_uploads();

    // Flip a byte of the object and of the record on the server; truncate another object.
    for (kind, hash) in [("cas", &object), ("ac", &key("k"))] {
        let path = nginx.stored(kind, hash);
        let mut stored = fs::read(&path).unwrap();
        stored[10] ^= 0x20;
        fs::write(&path, stored).unwrap();
    }
    let path = nginx.stored("cas", &truncated);
    fs::write(&path, &fs::read(&path).unwrap()[..10]).unwrap();

    let reader = cache(dir_b.path(), &nginx.url(), Some(TOKEN), false);
    assert_eq!(reader.get_object(&object), None);
    assert_eq!(reader.get_object(&truncated), None);
    assert_eq!(reader.get_action(&key("k")), None);
    assert!(!local_path(dir_b.path(), "cas", &object).exists(), "never stored locally");
    assert!(!local_path(dir_b.path(), "ac", &key("k")).exists());
    let stats = reader.stats();
    assert_eq!((stats.remote_hits, stats.remote_errors, stats.object_misses, stats.action_misses), (0, 3, 2, 1));
    let warnings = reader.take_warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("corrupt"), "{warnings:?}");

    // The remote stays usable, and a later writer heals the entry.
    let dir_c = tempfile::tempdir().unwrap();
    let healer = cache(dir_c.path(), &nginx.url(), Some(TOKEN), false);
    healer.put_object(bytes);
    assert!(healer.take_warnings().is_empty());
    assert_eq!(&*reader.get_object(&object).unwrap(), &bytes[..]);
    assert_eq!(reader.stats().remote_hits, 1);
}

#[test]
fn a_large_object_served_corrupt_is_uploaded_again_without_asking_first() {
    let nginx = Nginx::start();
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let writer = cache(dir_a.path(), &nginx.url(), Some(TOKEN), false);
    // Past the size from which an upload asks with HEAD first.
    let bytes: Vec<u8> = (0..100 * 1024).map(|i| (i % 251) as u8).collect();
    let object = writer.put_object(&bytes);
    let stored = nginx.stored("cas", &object);
    let mut corrupt = fs::read(&stored).unwrap();
    corrupt[1000] ^= 0x20;
    fs::write(&stored, corrupt).unwrap();

    let reader = cache(dir_b.path(), &nginx.url(), Some(TOKEN), false);
    assert_eq!(reader.get_object(&object), None);
    assert_eq!(reader.put_object(&bytes), object);
    assert_eq!(fs::read(&stored).unwrap(), bytes, "the remote's copy is repaired");
    let path = format!("/cache/cas/{object} ");
    assert_eq!(nginx.requests(&format!("HEAD {path}")), 1, "only the first writer asked");
    assert_eq!(nginx.requests(&format!("PUT {path}")), 2);
}
