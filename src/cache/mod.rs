//! The content-addressed build cache: work that survives across processes and machines.
//!
//! Correctness rules (every change to this module keeps them; `cache-format/SPEC.md` §6):
//!
//! 1. **Entries are immutable.** An entry is only ever created whole, by renaming a
//!    complete temporary file into place; no code writes into an existing entry file.
//!    Two writers of one name write the same bytes (objects) or equally valid records
//!    (actions), so the last rename winning is harmless.
//! 2. **An entry depends only on its declared inputs.** A stage that consults the cache
//!    reads nothing that is not a field of its key (no environment, no clock, no other
//!    file), so a hit returns exactly what running the stage would have produced.
//! 3. **The key covers everything that can change the bytes, and nothing that cannot.**
//!    Every option and tool version (the compiler version is a field the caller adds, as
//!    is the host table revision) and the content hash of every input are fields; absolute
//!    paths, timestamps, user names and machine names are never fields, so two checkouts
//!    at different paths, or two machines, share entries.
//! 4. **Every read verifies.** An object is served only if the blake3 of its bytes equals
//!    its name; a record only if the blake3 trailer it carries matches its body and the
//!    body is canonical. Bytes from the remote are verified the same way *before* they are
//!    used or stored locally.
//! 5. **A corrupt or truncated entry is a miss, never served.** A local one is removed
//!    when found, so the next put rewrites it; `verify` finds and removes them in bulk.
//! 6. **Writes are atomic and safe with several processes writing at once:** a unique
//!    temporary file under `v1/tmp/` (same file system), written fully, then `rename`d
//!    over the final name. Readers never see a partial entry.
//! 7. **The cache never fails a build.** Every IO or network error degrades to a miss or a
//!    dropped put; an unreachable or failing remote costs one warning
//!    ([`Cache::take_warnings`]) and is then disabled for the rest of the process (a
//!    refused upload, 401/403 or a redirect, stops only the uploads: reads go on).
//! 8. **Objects before records.** A caller puts a stage's output objects before the
//!    record that names them (locally and remotely), so a reader that sees a record can
//!    normally fetch its objects; if it cannot, that is a miss and the stage runs.
//! 9. **Use bumps the mtime.** A hit sets the entry's mtime to now (cheaply, at most once
//!    a day per entry), so `gc` evicts least recently used entries first.
//!
//! salsa memoizes inside one process; this cache is what a *new* process (or another
//! machine) reuses. A stage computes an **action key** from the hashes of its complete
//! inputs ([`KeyBuilder`]); a hit on the key gives an [`ActionRecord`] naming the stage's
//! output **objects** (blobs stored by the blake3 of their bytes), and the stage does not
//! run. The on-disk layout, the record encoding and the key derivation are specified byte
//! for byte in `cache-format/SPEC.md`, with test vectors in `cache-format/vectors.json`
//! that the unit tests read, so another tool can read and write the same cache.

mod aws_profile;
mod local;
mod maintenance;
mod record;
mod remote;
mod s3;
#[cfg(test)]
mod tests;
mod uploads;

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

pub use maintenance::{
    DirStats, GcOptions, GcReport, NO_DEFAULT_DIR, VerifyReport, bound, default_dir, dir_stats, gc, record_build,
    verify,
};

use local::{Kind, LocalStore};
use remote::{Fetch, Probe, Put, Remote};
pub use s3::S3Settings;

/// Objects at least this large are probed with `HEAD` before an upload, to skip sending
/// bytes the remote already has; smaller ones are simply PUT (one round trip either way).
const PROBE_BEFORE_UPLOAD: usize = 64 * 1024;

/// The blake3 context string of action keys (`cache-format/SPEC.md`, "Action keys").
/// Changing it invalidates every key: do it only with a new format version.
const KEY_CONTEXT: &str = "agent-bundle 2026-12-02 cache action key v1";

/// `bytes` as lowercase hex digits, two a byte: how the cache format and SigV4 write a digest.
pub(crate) fn lowercase_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        hex.push(DIGITS[usize::from(byte >> 4)] as char);
        hex.push(DIGITS[usize::from(byte & 15)] as char);
    }
    hex
}

/// A blake3 hash: the name of an object (hash of its bytes) or an action key.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Hash(pub [u8; 32]);

impl Hash {
    /// The blake3 of `bytes` (the name of an object with these bytes).
    pub fn of(bytes: &[u8]) -> Hash {
        Hash(*blake3::hash(bytes).as_bytes())
    }

    /// 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        lowercase_hex(&self.0)
    }

    /// Parses exactly 64 *lowercase* hex digits (the only form the format writes).
    fn from_canonical_hex(text: &[u8]) -> Option<Hash> {
        if text.len() != 64 {
            return None;
        }
        let digit = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        let mut bytes = [0u8; 32];
        for (i, pair) in text.chunks_exact(2).enumerate() {
            bytes[i] = digit(pair[0])? << 4 | digit(pair[1])?;
        }
        Some(Hash(bytes))
    }
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl FromStr for Hash {
    type Err = String;

    /// Accepts 64 hex digits in either case (for people typing keys); the cache itself
    /// only ever writes and reads the lowercase form.
    fn from_str(text: &str) -> Result<Hash, String> {
        Hash::from_canonical_hex(text.to_ascii_lowercase().as_bytes())
            .ok_or_else(|| format!("not a cache hash (64 hex digits expected): {text:?}"))
    }
}

/// Builds an action key: blake3 in derive-key mode with a fixed context string, over
/// length-prefixed fields.
///
/// The hashed stream is `u64le(len(kind)) ‖ kind`, then for each field in call order
/// `u64le(len(name)) ‖ name ‖ u64le(len(value)) ‖ value`, so field boundaries are
/// unambiguous (`("ab","c")` and `("a","bc")` differ). The caller adds the compiler version,
/// options and input content hashes as fields, always in the same order.
#[derive(Clone, Debug)]
pub struct KeyBuilder {
    hasher: blake3::Hasher,
}

impl KeyBuilder {
    /// Starts a key for an action of `kind` (e.g. `"module-chunk"`).
    pub fn new(kind: &str) -> KeyBuilder {
        let mut builder = KeyBuilder { hasher: blake3::Hasher::new_derive_key(KEY_CONTEXT) };
        builder.put(kind.as_bytes());
        builder
    }

    /// Adds one named field; both the name and the value are length-prefixed.
    pub fn field(mut self, name: &str, bytes: &[u8]) -> KeyBuilder {
        self.put(name.as_bytes());
        self.put(bytes);
        self
    }

    pub fn finish(self) -> Hash {
        Hash(*self.hasher.finalize().as_bytes())
    }

    fn put(&mut self, bytes: &[u8]) {
        self.hasher.update(&(bytes.len() as u64).to_le_bytes());
        self.hasher.update(bytes);
    }
}

/// What an action produced: named output objects plus small inline strings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ActionRecord {
    pub outputs: BTreeMap<String, Hash>,
    pub values: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Default)]
pub struct CacheOptions {
    /// The local cache directory; `None` = no local cache.
    pub dir: Option<PathBuf>,
    pub remote: Option<RemoteOptions>,
}

#[derive(Clone, Default)]
pub struct RemoteOptions {
    /// `http[s]://host:port/prefix`, entries at `<url>/cas/<hex>` and `<url>/ac/<hex>`; or
    /// `s3://bucket/prefix`, entries at the keys `prefix/cas/<hex>` and `prefix/ac/<hex>`.
    pub url: String,
    /// Sent as `Authorization: Bearer <token>` on every request.
    pub token: Option<String>,
    /// Never PUT (for untrusted builds, e.g. pull requests).
    pub read_only: bool,
    /// PEM certificates to trust for an `https://` remote instead of Mozilla's roots (a
    /// cache behind a private CA).
    pub ca_file: Option<PathBuf>,
    /// Endpoint, region and credentials of an `s3://` remote.
    pub s3: S3Settings,
}

impl fmt::Debug for RemoteOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteOptions")
            .field("url", &remote::without_secrets(&self.url))
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("read_only", &self.read_only)
            .field("ca_file", &self.ca_file)
            .field("s3", &self.s3)
            .finish()
    }
}

/// Counters of one process's use of a [`Cache`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub action_hits: u64,
    pub action_misses: u64,
    pub object_hits: u64,
    pub object_misses: u64,
    /// Actions and objects served by the remote (also counted as hits).
    pub remote_hits: u64,
    /// Failed remote requests and corrupt remote entries.
    pub remote_errors: u64,
    /// Bytes written to the local store (new objects and records).
    pub bytes_written: u64,
}

impl CacheStats {
    /// What was counted since `earlier` (a watch session reports each build's own use).
    pub fn since(&self, earlier: &CacheStats) -> CacheStats {
        CacheStats {
            action_hits: self.action_hits.saturating_sub(earlier.action_hits),
            action_misses: self.action_misses.saturating_sub(earlier.action_misses),
            object_hits: self.object_hits.saturating_sub(earlier.object_hits),
            object_misses: self.object_misses.saturating_sub(earlier.object_misses),
            remote_hits: self.remote_hits.saturating_sub(earlier.remote_hits),
            remote_errors: self.remote_errors.saturating_sub(earlier.remote_errors),
            bytes_written: self.bytes_written.saturating_sub(earlier.bytes_written),
        }
    }
}

#[derive(Default)]
struct Counters {
    action_hits: AtomicU64,
    action_misses: AtomicU64,
    object_hits: AtomicU64,
    object_misses: AtomicU64,
    remote_hits: AtomicU64,
    remote_errors: AtomicU64,
    bytes_written: AtomicU64,
}

/// How many requests to a remote a process keeps in flight: they wait on the network, not
/// on the CPU. Measured on 100 projects with 10 ms per request: a cold build that fills
/// the remote took 19 s with 2 at a time and 2.3 s with 32, a second machine's build
/// 1.26 s and 0.18 s; on loopback the extra threads cost nothing.
pub fn remote_concurrency() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    (cores * 16).clamp(16, 64)
}

/// A poisoned lock only means another thread panicked; the data (a set, a list) is fine.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}

/// The cache a build uses: a local store and an optional remote; shared by threads.
pub struct Cache {
    shared: Arc<Shared>,
    /// This cache's counters: a whole run's, or one project's ([`Cache::scoped`]).
    counters: Arc<Counters>,
    /// The run's counters, which a scoped cache bumps too.
    outer: Option<Arc<Counters>>,
}

/// What every scope of one cache shares: the stores, the warnings, what was uploaded.
struct Shared {
    /// Made by [`Cache::disabled`].
    off: bool,
    local: Option<LocalStore>,
    remote: Option<Remote>,
    warnings: Mutex<Vec<String>>,
    /// Objects this process knows the remote has (uploaded or downloaded), so each is
    /// PUT at most once per process.
    remote_objects: Mutex<HashSet<Hash>>,
    /// Action records this process has sent to the remote: two projects that share a
    /// module make the same record, and one upload of it is enough. Apart from
    /// `remote_objects`, which is filled only once an object is known to be there (a record
    /// is marked before its upload, which runs later on another thread).
    uploaded_actions: Mutex<HashSet<Hash>>,
    /// Objects the remote served corrupt or answered missing: a `HEAD` may still say it has
    /// them (a corrupt file, a stale cache in front of the store), so they are uploaded
    /// again without asking.
    unserved_by_remote: Mutex<HashSet<Hash>>,
    warned_local_write: AtomicBool,
    warned_remote_corrupt: AtomicBool,
    warned_too_large: AtomicBool,
    /// Action records on their way to the remote.
    uploads: uploads::Uploads,
}

type Counter = fn(&Counters) -> &AtomicU64;

impl fmt::Debug for Cache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cache")
            .field("local", &self.shared.local.as_ref().map(LocalStore::root))
            .field("remote", &self.shared.remote.as_ref().map(Remote::url))
            .finish_non_exhaustive()
    }
}

impl Cache {
    /// Opens the local store (creating its layout) and configures the remote. A bad remote
    /// URL is an `Err`; an unusable local directory is a warning (the cache goes on without
    /// it), and an unreachable remote is found out, and warned about, on first use.
    pub fn open(options: &CacheOptions) -> Result<Cache, String> {
        let remote = options.remote.as_ref().map(Remote::new).transpose()?;
        let mut unusable = None;
        let local = options.dir.as_ref().and_then(|dir| {
            let fresh = !dir.join(local::VERSION_DIR).exists();
            match LocalStore::open(dir) {
                Ok(store) => {
                    if fresh {
                        // Known to be empty: its size bound need not count entries later.
                        let _ = maintenance::start_usage(dir);
                    }
                    // What killed builds left; one listing of a folder that is mostly empty.
                    maintenance::remove_stale_temps(&store.root().join(local::TMP_DIR), SystemTime::now());
                    Some(store)
                }
                Err(error) => {
                    unusable = Some(format!(
                        "cannot use the build cache at {}: {error}; building without a local cache",
                        dir.display()
                    ));
                    None
                }
            }
        });
        let shared = local.as_ref().and(options.dir.as_deref()).and_then(local::writable_by_others);
        let cache = Cache::with(local, remote);
        // Like every cache failure, an unusable directory costs a warning, never the build.
        if let Some(warning) = unusable.or(shared) {
            cache.warn(warning);
        }
        if let Some(warning) = options.remote.as_ref().and_then(|remote| remote.s3.warning.clone()) {
            cache.warn(warning);
        }
        if let Some(remote) = cache.shared.remote.as_ref().filter(|remote| remote.sends_token_in_clear()) {
            cache.warn(format!(
                "the remote cache token goes to {} unencrypted (http:// to another machine); prefer https://",
                remote.url()
            ));
        }
        Ok(cache)
    }

    /// A cache that misses every lookup and drops every put (`--no-cache`).
    pub fn disabled() -> Cache {
        let mut cache = Cache::with(None, None);
        Arc::get_mut(&mut cache.shared).expect("a new cache is not shared yet").off = true;
        cache
    }

    /// Made by [`Cache::disabled`] (`--no-cache`): a build then trusts no state a previous
    /// build left, its stamp included, and runs every stage. (Not so for a cache whose
    /// directory turned out unusable: the project's stamp is still good.)
    pub fn is_off(&self) -> bool {
        self.shared.off
    }

    fn with(local: Option<LocalStore>, remote: Option<Remote>) -> Cache {
        let shared = Shared {
            off: false,
            local,
            remote,
            warnings: Mutex::new(Vec::new()),
            remote_objects: Mutex::new(HashSet::new()),
            uploaded_actions: Mutex::new(HashSet::new()),
            unserved_by_remote: Mutex::new(HashSet::new()),
            warned_local_write: AtomicBool::new(false),
            warned_remote_corrupt: AtomicBool::new(false),
            warned_too_large: AtomicBool::new(false),
            uploads: uploads::Uploads::default(),
        };
        Cache { shared: Arc::new(shared), counters: Arc::default(), outer: None }
    }

    /// The same cache with counters of its own (one project of a workspace build), which
    /// also count in this cache's.
    pub fn scoped(&self) -> Cache {
        Cache { shared: Arc::clone(&self.shared), counters: Arc::default(), outer: Some(Arc::clone(&self.counters)) }
    }

    fn count(&self, counter: Counter, by: u64) {
        bump(counter(&self.counters), by);
        if let Some(outer) = &self.outer {
            bump(counter(outer), by);
        }
    }

    /// Whether a remote is configured: its lookups and uploads wait on the network.
    pub fn has_remote(&self) -> bool {
        self.shared.remote.is_some()
    }

    /// Neither a local store nor a remote (`--no-cache`): lookups are not even counted.
    fn is_disabled(&self) -> bool {
        self.shared.local.is_none() && self.shared.remote.is_none()
    }

    /// The folder of the local store in use: `None` without one (none asked for, or one that
    /// could not be used, whose folder is then never written).
    pub fn local_dir(&self) -> Option<&Path> {
        self.shared.local.as_ref().and_then(|local| local.root().parent())
    }

    /// The record of action `key`: local, else remote (then stored locally). Verified.
    pub fn get_action(&self, key: &Hash) -> Option<ActionRecord> {
        let found = self.probe_action(key);
        if found.is_none() {
            self.count_action_miss();
        }
        found
    }

    /// [`Cache::get_action`] for one of several lookups that answer one question (the
    /// artifact of a fresh checkout, found through the folders it reads): a hit counts, a
    /// miss is left to the caller, which counts one ([`Cache::count_action_miss`]) if no
    /// lookup answered.
    pub fn probe_action(&self, key: &Hash) -> Option<ActionRecord> {
        if self.is_disabled() {
            return None;
        }
        let found = self.find_action(key);
        if found.is_some() {
            self.count(|c| &c.action_hits, 1);
        }
        found
    }

    /// Counts the miss of a question [`Cache::probe_action`] lookups could not answer.
    pub fn count_action_miss(&self) {
        if !self.is_disabled() {
            self.count(|c| &c.action_misses, 1);
        }
    }

    fn find_action(&self, key: &Hash) -> Option<ActionRecord> {
        if let Some(record) = self.shared.local.as_ref().and_then(|local| local.get_record(key)) {
            return Some(record);
        }
        let remote = self.active_remote()?;
        let bytes = self.fetch(remote, Kind::Action, key)?;
        let Some(record) = record::decode(&bytes) else {
            self.remote_corrupt(Kind::Action, key);
            return None;
        };
        self.count(|c| &c.remote_hits, 1);
        self.store_locally(Kind::Action, key, &bytes);
        Some(record)
    }

    /// Stores `record` under `key` locally and on the remote (unless read-only). Put the
    /// objects it names first. Failures never fail the build.
    ///
    /// The remote's copy is uploaded off this thread ([`Cache::finish_uploads`] waits for
    /// it), and only when every object it names is known to be on the remote (an object
    /// the server refused, too large, is not): a reader that finds the record finds them
    /// too, instead of missing an object and making and uploading it all again.
    pub fn put_action(&self, key: &Hash, record: &ActionRecord) {
        let bytes = record::encode(record);
        self.store_locally(Kind::Action, key, &bytes);
        if self.writable_remote().is_some()
            && self.remote_has_objects_of(record)
            && lock(&self.shared.uploaded_actions).insert(*key)
        {
            let (cache, key) = (self.handle(), *key);
            self.shared.uploads.run(move || {
                if let Some(remote) = cache.writable_remote() {
                    cache.upload(remote, Kind::Action, &key, &bytes);
                }
            });
        }
    }

    /// Whether every object `record` names is known to be on the remote.
    fn remote_has_objects_of(&self, record: &ActionRecord) -> bool {
        let on_remote = lock(&self.shared.remote_objects);
        record.outputs.values().all(|object| on_remote.contains(object))
    }

    /// Waits for every upload under way; later ones are made on their caller's thread.
    /// Call it before the process exits, and before reading the warnings or statistics
    /// of a build that uploads.
    pub fn finish_uploads(&self) {
        self.shared.uploads.finish();
    }

    /// Another handle on this cache, counting into the same scope.
    fn handle(&self) -> Cache {
        Cache { shared: Arc::clone(&self.shared), counters: Arc::clone(&self.counters), outer: self.outer.clone() }
    }

    /// The object named `hash`, verified against it: local, else remote (then stored
    /// locally).
    pub fn get_object(&self, hash: &Hash) -> Option<Arc<[u8]>> {
        if self.is_disabled() {
            return None;
        }
        let found = self.find_object(hash);
        let counter: Counter = if found.is_some() { |c| &c.object_hits } else { |c| &c.object_misses };
        self.count(counter, 1);
        found.map(Arc::from)
    }

    fn find_object(&self, hash: &Hash) -> Option<Vec<u8>> {
        if let Some(bytes) = self.shared.local.as_ref().and_then(|local| local.get_object(hash)) {
            return Some(bytes);
        }
        let remote = self.active_remote()?;
        let bytes = self.fetch(remote, Kind::Object, hash)?;
        if Hash::of(&bytes) != *hash {
            self.remote_corrupt(Kind::Object, hash);
            lock(&self.shared.unserved_by_remote).insert(*hash);
            return None;
        }
        self.count(|c| &c.remote_hits, 1);
        lock(&self.shared.remote_objects).insert(*hash);
        self.store_locally(Kind::Object, hash, &bytes);
        Some(bytes)
    }

    /// Stores `bytes` as an object and returns its name. Idempotent: the local write is
    /// skipped when the object is present, and each object is uploaded at most once per
    /// process (a large one only if a `HEAD` says the remote lacks it, or it did not serve
    /// it: missing or corrupt).
    pub fn put_object(&self, bytes: &[u8]) -> Hash {
        let hash = Hash::of(bytes);
        self.store_locally(Kind::Object, &hash, bytes);
        if let Some(remote) = self.writable_remote() {
            let known = lock(&self.shared.remote_objects).contains(&hash);
            if !known && self.ensure_uploaded(remote, &hash, bytes) {
                lock(&self.shared.remote_objects).insert(hash);
            }
        }
        hash
    }

    /// This cache's counters so far: the run's, or one scope's.
    pub fn stats(&self) -> CacheStats {
        let c = &self.counters;
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        CacheStats {
            action_hits: get(&c.action_hits),
            action_misses: get(&c.action_misses),
            object_hits: get(&c.object_hits),
            object_misses: get(&c.object_misses),
            remote_hits: get(&c.remote_hits),
            remote_errors: get(&c.remote_errors),
            bytes_written: get(&c.bytes_written),
        }
    }

    /// Warnings since the last call (at most one per kind of trouble per process).
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.shared.warnings))
    }

    pub(crate) fn warn(&self, message: String) {
        lock(&self.shared.warnings).push(message);
    }

    fn active_remote(&self) -> Option<&Remote> {
        self.shared.remote.as_ref().filter(|remote| remote.is_enabled())
    }

    fn writable_remote(&self) -> Option<&Remote> {
        self.active_remote().filter(|remote| remote.is_writable())
    }

    /// Writes an entry locally; a failure is one warning, never an error.
    fn store_locally(&self, kind: Kind, hash: &Hash, bytes: &[u8]) {
        let Some(local) = &self.shared.local else { return };
        match local.put(kind, hash, bytes) {
            Ok(written) => self.count(|c| &c.bytes_written, written),
            Err(error) => {
                if !self.shared.warned_local_write.swap(true, Ordering::Relaxed) {
                    self.warn(format!(
                        "could not write to the build cache at {}: {error}; the build goes on without storing its results",
                        local.root().display()
                    ));
                }
            }
        }
    }

    fn fetch(&self, remote: &Remote, kind: Kind, hash: &Hash) -> Option<Vec<u8>> {
        match remote.get(kind, hash) {
            Fetch::Hit(bytes) => Some(bytes),
            Fetch::Miss => {
                if kind == Kind::Object {
                    lock(&self.shared.unserved_by_remote).insert(*hash);
                }
                None
            }
            Fetch::Failed(error) => {
                self.remote_failed(remote, &error);
                None
            }
        }
    }

    fn ensure_uploaded(&self, remote: &Remote, hash: &Hash, bytes: &[u8]) -> bool {
        if bytes.len() >= PROBE_BEFORE_UPLOAD && !lock(&self.shared.unserved_by_remote).contains(hash) {
            match remote.head(Kind::Object, hash) {
                Probe::Present => return true,
                Probe::Absent => {}
                Probe::Failed(error) => {
                    self.remote_failed(remote, &error);
                    return false;
                }
            }
        }
        self.upload(remote, Kind::Object, hash, bytes)
    }

    /// A connection error, timeout or 5xx: one warning, then the remote is off for good.
    fn remote_failed(&self, remote: &Remote, error: &str) {
        self.count(|c| &c.remote_errors, 1);
        if remote.disable() {
            let going_on = if self.shared.local.is_some() { "with the local cache only" } else { "without a cache" };
            // (For as long as this process runs: a watch session's too, until it is restarted.)
            self.warn(format!(
                "remote cache {} is unreachable or failing ({error}); continuing {going_on} until agent-bundle \
                 restarts",
                remote.url()
            ));
        }
    }

    /// Uploads one entry; true when the remote has it afterwards.
    fn upload(&self, remote: &Remote, kind: Kind, hash: &Hash, bytes: &[u8]) -> bool {
        match remote.put(kind, hash, bytes) {
            Put::Stored => true,
            Put::TooLarge => {
                self.too_large(remote, bytes.len());
                false
            }
            Put::Refused(error) => {
                self.count(|c| &c.remote_errors, 1);
                if remote.disable_writes() {
                    self.warn(format!(
                        "remote cache {} refused an upload ({error}); reading from it, but no longer writing to it",
                        remote.url()
                    ));
                }
                false
            }
            Put::Failed(error) => {
                self.remote_failed(remote, &error);
                false
            }
        }
    }

    /// A 413 for an upload of `bytes` bytes: not a failure of the remote, but said once, since
    /// every machine then misses the object (and the records naming it) for good.
    fn too_large(&self, remote: &Remote, bytes: usize) {
        if !self.shared.warned_too_large.swap(true, Ordering::Relaxed) {
            self.warn(format!(
                "remote cache {} refused a {bytes}-byte upload as too large (HTTP 413); it and the records \
                 naming it are kept locally only: raise the server's body size limit (nginx: \
                 client_max_body_size, 1m by default; 0 for none)",
                remote.url()
            ));
        }
    }

    fn remote_corrupt(&self, kind: Kind, hash: &Hash) {
        self.count(|c| &c.remote_errors, 1);
        if !self.shared.warned_remote_corrupt.swap(true, Ordering::Relaxed) {
            let what = match kind {
                Kind::Object => "object",
                Kind::Action => "action record",
            };
            self.warn(format!(
                "remote cache {} served a corrupt {what} {hash}; it was ignored",
                self.shared.remote.as_ref().map_or("", |r| r.url())
            ));
        }
    }
}
