//! Maintenance of a local cache directory: the `agent-bundle cache` subcommands.
//!
//! All of it is safe while builds use the same directory: entries are single files
//! removed by one `unlink`, so a build sees an entry whole or not at all, and an entry that
//! disappears under a reader is a miss.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::local::{self, Kind, TMP_DIR, VERSION_DIR};
use super::{CacheStats, Hash, record};

/// The file `record_build` writes, under `<dir>/v1/`.
const LAST_BUILD_FILE: &str = "last-build.json";
const LAST_BUILD_FORMAT: &str = "agent-bundle-last-build/1";
/// The running estimate of the entries' bytes that keeps the cache bounded (§7.4).
const USAGE_FILE: &str = "usage.json";
const USAGE_FORMAT: &str = "agent-bundle-usage/1";
/// A cache over its bound is collected down to this share of it, so that the next builds
/// have room and a full cache is not collected after every build (ccache does the same).
const BOUND_TARGET_PERCENT: u64 = 80;
/// Temporary files older than this are litter from a killed process.
const STALE_TEMP_AGE: Duration = Duration::from_secs(3600);

/// The default cache directory: `$AGENT_BUNDLE_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/agent-bundle/cache`, else `~/.cache/agent-bundle/cache`.
/// What to do where [`default_dir`] finds none.
pub const NO_DEFAULT_DIR: &str =
    "no cache directory: pass --cache-dir, or set AGENT_BUNDLE_CACHE_DIR, XDG_CACHE_HOME (absolute) or HOME";

pub fn default_dir() -> Option<PathBuf> {
    default_dir_from(|name| std::env::var_os(name))
}

pub(super) fn default_dir_from(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var("AGENT_BUNDLE_CACHE_DIR") {
        return Some(dir);
    }
    // The XDG spec says a relative value is to be ignored.
    if let Some(xdg) = var("XDG_CACHE_HOME").filter(|p| p.is_absolute()) {
        return Some(xdg.join("agent-bundle").join("cache"));
    }
    var("HOME").map(|home| home.join(".cache").join("agent-bundle").join("cache"))
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirStats {
    pub objects: u64,
    pub object_bytes: u64,
    pub actions: u64,
    pub action_bytes: u64,
    /// The counters of the last build that called [`record_build`] on this directory.
    pub last_build: Option<CacheStats>,
}

/// Counts the entries of a cache directory (an absent directory is an empty cache).
pub fn dir_stats(dir: &Path) -> io::Result<DirStats> {
    let mut stats = DirStats::default();
    for entry in entries(dir)? {
        match entry.kind {
            Kind::Object => {
                stats.objects += 1;
                stats.object_bytes += entry.size;
            }
            Kind::Action => {
                stats.actions += 1;
                stats.action_bytes += entry.size;
            }
        }
    }
    stats.last_build = read_last_build(&dir.join(VERSION_DIR).join(LAST_BUILD_FILE));
    Ok(stats)
}

/// Records a build's counters in `<dir>/v1/last-build.json` (atomically).
pub fn record_build(dir: &Path, stats: &CacheStats) -> io::Result<()> {
    let root = dir.join(VERSION_DIR);
    // Never through a link where the store's folders go (a store refused for one).
    for folder in [&root, &root.join(TMP_DIR)] {
        if !local::own_folder(folder)? {
            local::create_folders(folder)?;
            // (Removed under the process: made again with its tag.)
            local::write_cachedir_tag(dir);
        }
    }
    // Canonical like the records: keys sorted, no whitespace, one trailing newline.
    let mut fields: Vec<(&str, String)> =
        stat_fields(stats).into_iter().map(|(name, value)| (name, value.to_string())).collect();
    fields.push(("format", format!("\"{LAST_BUILD_FORMAT}\"")));
    fields.sort();
    let body: Vec<String> = fields.iter().map(|(name, value)| format!("\"{name}\":{value}")).collect();
    let json = format!("{{{}}}\n", body.join(","));
    local::write_atomic(&root, &root.join(LAST_BUILD_FILE), json.as_bytes())
}

fn stat_fields(stats: &CacheStats) -> [(&'static str, u64); 7] {
    [
        ("action_hits", stats.action_hits),
        ("action_misses", stats.action_misses),
        ("bytes_written", stats.bytes_written),
        ("object_hits", stats.object_hits),
        ("object_misses", stats.object_misses),
        ("remote_errors", stats.remote_errors),
        ("remote_hits", stats.remote_hits),
    ]
}

fn read_last_build(path: &Path) -> Option<CacheStats> {
    let value: serde_json::Value =
        serde_json::from_slice(&super::local::read_regular(path, local::MAX_STATE_BYTES)?).ok()?;
    if value.get("format")?.as_str()? != LAST_BUILD_FORMAT {
        return None;
    }
    let get = |name: &str| value.get(name).and_then(serde_json::Value::as_u64);
    Some(CacheStats {
        action_hits: get("action_hits")?,
        action_misses: get("action_misses")?,
        object_hits: get("object_hits")?,
        object_misses: get("object_misses")?,
        remote_hits: get("remote_hits")?,
        remote_errors: get("remote_errors")?,
        bytes_written: get("bytes_written")?,
    })
}

/// Keeps a cache directory within `max_bytes` after a build that added `written` bytes to
/// it, cheaply: a running estimate in `v1/usage.json` grows by what builds write, and only
/// when it passes the bound does a [`gc`] scan the entries, evicting least recently used
/// ones down to 80% of the bound and resetting the estimate to what is left. Without an
/// estimate (a cache made before it existed) the entries are counted once. Processes take
/// turns with a lock on `v1/`. Returns the collection's report if one ran.
pub fn bound(dir: &Path, max_bytes: u64, written: u64) -> io::Result<Option<GcReport>> {
    let root = dir.join(VERSION_DIR);
    let _turn = fs::File::open(&root).ok().filter(|directory| directory.lock().is_ok());
    let estimate = match read_usage(&root) {
        Some(bytes) => bytes.saturating_add(written),
        None => {
            let stats = dir_stats(dir)?;
            stats.object_bytes + stats.action_bytes
        }
    };
    if estimate <= max_bytes {
        write_usage(&root, estimate)?;
        return Ok(None);
    }
    let target = (u128::from(max_bytes) * u128::from(BOUND_TARGET_PERCENT) / 100) as u64;
    gc(dir, &GcOptions { max_bytes: Some(target), max_age: None }).map(Some)
}

/// Starts the estimate of a cache directory that has no entries yet.
pub(super) fn start_usage(dir: &Path) -> io::Result<()> {
    write_usage(&dir.join(VERSION_DIR), 0)
}

fn read_usage(root: &Path) -> Option<u64> {
    let usage = super::local::read_regular(&root.join(USAGE_FILE), local::MAX_STATE_BYTES)?;
    let value: serde_json::Value = serde_json::from_slice(&usage).ok()?;
    if value.get("format")?.as_str()? != USAGE_FORMAT {
        return None;
    }
    value.get("bytes")?.as_u64()
}

fn write_usage(root: &Path, bytes: u64) -> io::Result<()> {
    let json = format!("{{\"bytes\":{bytes},\"format\":\"{USAGE_FORMAT}\"}}\n");
    local::write_atomic(root, &root.join(USAGE_FILE), json.as_bytes())
}

#[derive(Clone, Debug, Default)]
pub struct GcOptions {
    /// Remove least recently used entries until the entries total at most this.
    pub max_bytes: Option<u64>,
    /// Remove entries not used for longer than this.
    pub max_age: Option<Duration>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GcReport {
    pub removed_entries: u64,
    pub removed_bytes: u64,
    pub kept_entries: u64,
    pub kept_bytes: u64,
}

/// Evicts entries, least recently used (oldest mtime) first, down to the age and/or size
/// bound. An action record is removed with any object it names, so no record is left
/// pointing at a removed object; records that do not decode go too. Temporary files of
/// killed processes older than an hour are cleaned up.
///
/// Safe while a build runs: an entry used (its mtime bumped) after the scan is kept.
pub fn gc(dir: &Path, options: &GcOptions) -> io::Result<GcReport> {
    refuse_foreign_folders(dir)?;
    let now = SystemTime::now();
    let mut all = entries(dir)?;
    // Oldest first; ties broken by path for a deterministic order.
    all.sort_by(|a, b| a.modified.cmp(&b.modified).then_with(|| a.path.cmp(&b.path)));

    let mut remove = vec![false; all.len()];
    if let Some(max_age) = options.max_age {
        // A read moves an entry's time at most once a day, so its time may be up to a day
        // before its last use: only past the age and that day is it surely unused so long.
        let unused_for = max_age.saturating_add(local::TOUCH_GRANULARITY);
        for (i, entry) in all.iter().enumerate() {
            let age = now.duration_since(entry.modified).unwrap_or(Duration::ZERO);
            remove[i] = age > unused_for;
        }
    }
    if let Some(max_bytes) = options.max_bytes {
        let mut kept: u64 = all.iter().zip(&remove).filter(|(_, r)| !**r).map(|(e, _)| e.size).sum();
        for (i, entry) in all.iter().enumerate() {
            if kept <= max_bytes {
                break;
            }
            if !remove[i] {
                remove[i] = true;
                kept -= entry.size;
            }
        }
    }
    // No dangling records: a kept record whose objects are removed (or missing) goes too.
    let kept_objects: HashSet<Hash> =
        all.iter().zip(&remove).filter(|(e, r)| e.kind == Kind::Object && !**r).map(|(e, _)| e.hash).collect();
    for (i, entry) in all.iter().enumerate() {
        if entry.kind == Kind::Action && !remove[i] {
            let complete = super::local::read_regular(&entry.path, Kind::Action.max_bytes())
                .and_then(|bytes| record::decode(&bytes))
                .is_some_and(|record| record.outputs.values().all(|h| kept_objects.contains(h)));
            remove[i] = !complete;
        }
    }

    let mut report = GcReport::default();
    // Records before objects: a reader never finds a record whose objects this run removed
    // while the record itself is still there.
    let order = (0..all.len())
        .filter(|&i| all[i].kind == Kind::Action)
        .chain((0..all.len()).filter(|&i| all[i].kind == Kind::Object));
    for i in order {
        let entry = &all[i];
        let removed = remove[i] && remove_unless_used(entry);
        if removed {
            report.removed_entries += 1;
            report.removed_bytes += entry.size;
        } else {
            report.kept_entries += 1;
            report.kept_bytes += entry.size;
        }
    }
    let root = dir.join(VERSION_DIR);
    remove_stale_temps(&root.join(TMP_DIR), now);
    if root.is_dir() {
        // (A gc of a directory that holds no cache creates none.)
        write_usage(&root, report.kept_bytes).map_err(|error| {
            let help = match error.kind() {
                io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                    " (a gc removes entries: make the cache writable for this user)"
                }
                _ => "",
            };
            let message =
                format!("cannot record the cache's size in {}: {error}{help}", root.join(USAGE_FILE).display());
            io::Error::new(error.kind(), message)
        })?;
    }
    Ok(report)
}

/// Removes an entry unless it was used (mtime bumped) since it was scanned.
fn remove_unless_used(entry: &Entry) -> bool {
    match fs::metadata(&entry.path).and_then(|m| m.modified()) {
        Ok(modified) if modified > entry.modified => false,
        Ok(_) => fs::remove_file(&entry.path).is_ok(),
        Err(_) => false,
    }
}

/// Removes the temporary files of killed processes (older than an hour) from `tmp`.
pub(super) fn remove_stale_temps(tmp: &Path, now: SystemTime) {
    if !local::own_folder(tmp).unwrap_or(false) {
        return;
    }
    let Ok(read) = fs::read_dir(tmp) else { return };
    for item in read.flatten() {
        let old = item
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|m| now.duration_since(m).is_ok_and(|age| age > STALE_TEMP_AGE));
        if old {
            let _ = fs::remove_file(item.path());
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    pub checked: u64,
    /// Entries that failed verification; they have been removed.
    pub corrupt: Vec<PathBuf>,
    /// Entries that could not be read (their permissions, say): neither checked nor removed.
    pub unreadable: Vec<PathBuf>,
}

/// Checks every entry (objects against their names, records against their trailers and
/// the canonical encoding) and removes those that fail, as well as stray files whose names
/// are not entry names.
pub fn verify(dir: &Path) -> io::Result<VerifyReport> {
    refuse_foreign_folders(dir)?;
    let mut report = VerifyReport::default();
    let root = dir.join(VERSION_DIR);
    for kind in [Kind::Object, Kind::Action] {
        let listing = files(&root, kind)?;
        // A shard folder it may not list is unread, said, and the others are checked.
        report.unreadable.extend(listing.unlisted.into_iter().map(|(shard, _)| shard));
        for (path, hash) in listing.files {
            let Some(hash) = hash else {
                // Not an entry, whatever it holds (a FIFO, a link, a folder): removed unread.
                report.checked += 1;
                let _ = super::local::remove_stray(&path);
                report.corrupt.push(path);
                continue;
            };
            // (A file larger than any entry is none, and is not read: a sparse one claims any size.)
            if fs::symlink_metadata(&path).is_ok_and(|metadata| metadata.len() > kind.max_bytes()) {
                report.checked += 1;
                let _ = fs::remove_file(&path);
                report.corrupt.push(path);
                continue;
            }
            let bytes = match super::local::read_regular(&path, kind.max_bytes()) {
                Some(bytes) => bytes,
                None if fs::symlink_metadata(&path).is_err() => continue, // removed meanwhile
                None => {
                    report.unreadable.push(path);
                    continue;
                }
            };
            report.checked += 1;
            let valid = match kind {
                Kind::Object => Hash::of(&bytes) == hash,
                Kind::Action => record::decode(&bytes).is_some(),
            };
            if !valid {
                let _ = fs::remove_file(&path);
                report.corrupt.push(path);
            }
        }
    }
    report.corrupt.sort();
    report.unreadable.sort();
    Ok(report)
}

struct Entry {
    path: PathBuf,
    kind: Kind,
    hash: Hash,
    size: u64,
    modified: SystemTime,
}

/// An error when a folder of the store's own is a link or a file: maintenance would reach
/// through it, or report a store it did not look at.
fn refuse_foreign_folders(dir: &Path) -> io::Result<()> {
    local::store_folders(dir).iter().try_for_each(|folder| local::own_folder(folder).map(drop))
}

/// Every well-named entry of the store (an absent store has none).
fn entries(dir: &Path) -> io::Result<Vec<Entry>> {
    let root = dir.join(VERSION_DIR);
    let mut out = Vec::new();
    for kind in [Kind::Object, Kind::Action] {
        let listing = files(&root, kind)?;
        // Counting or collecting without a shard would report what is not so.
        if let Some((shard, why)) = listing.unlisted.first() {
            return Err(io::Error::other(format!("cannot read {}: {why}", shard.display())));
        }
        for (path, hash) in listing.files {
            // (A file past its kind's bound is no entry: `verify` removes it, and it counts for
            // nothing, or a sparse one would make the size bound evict every real entry.)
            let meta = fs::metadata(&path).ok().filter(|meta| meta.len() <= kind.max_bytes());
            let (Some(hash), Some(meta)) = (hash, meta) else {
                continue;
            };
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            out.push(Entry { path, kind, hash, size: meta.len(), modified });
        }
    }
    Ok(out)
}

/// What a listing of one kind of entry found.
#[derive(Default)]
struct Listing {
    /// The files under `<root>/<cas|ac>/<shard>/`, with the hash their name and shard spell
    /// (`None` for a stray name).
    files: Vec<(PathBuf, Option<Hash>)>,
    /// The shard folders this process may not list, with why.
    unlisted: Vec<(PathBuf, String)>,
}

/// The files under `<root>/<cas|ac>/<shard>/`, and the shards it could not list.
fn files(root: &Path, kind: Kind) -> io::Result<Listing> {
    let base = root.join(kind.dir());
    let mut out = BTreeMap::new();
    let mut unlisted = Vec::new();
    // (A shard that is a link is no folder of entries: `verify` removes the link alone.)
    if !local::own_folder(root)? || !local::own_folder(&base)? {
        return Ok(Listing::default());
    }
    let shards = match fs::read_dir(&base) {
        Ok(read) => read,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Listing::default()),
        Err(e) => return Err(io::Error::new(e.kind(), format!("cannot read {}: {e}", base.display()))),
    };
    for shard in shards {
        let shard = shard?;
        let shard_name = shard.file_name();
        let is_shard = shard_name.to_str().is_some_and(|name| {
            name.len() == 2 && name.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        });
        if !shard.file_type()?.is_dir() || !is_shard {
            // Beside the shards: no entry (`verify` removes it with the strays, unread).
            out.insert(shard.path(), None);
            continue;
        }
        let read = match fs::read_dir(shard.path()) {
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue, // removed meanwhile
            Err(e) => {
                unlisted.push((shard.path(), e.to_string()));
                continue;
            }
        };
        for item in read.flatten() {
            // A folder, a link or a FIFO where an entry goes is no entry, whatever its name.
            let is_file = item.file_type().is_ok_and(|t| t.is_file());
            let name = item.file_name();
            let hash = name
                .to_str()
                .and_then(|n| Hash::from_canonical_hex(n.as_bytes()))
                .filter(|h| is_file && shard_name.to_str() == Some(&h.to_hex()[..2]));
            out.insert(item.path(), hash);
        }
    }
    Ok(Listing { files: out.into_iter().collect(), unlisted })
}
