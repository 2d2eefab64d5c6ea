//! The local store: `<dir>/v1/{cas,ac,tmp}` (`cache-format/SPEC.md`, "Layout").
//!
//! Every read verifies: what fails its hash is removed, what is short or oversize is a miss
//! (left for `verify` and `gc`); every write is a temporary file under `v1/tmp/` renamed
//! into place.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{ActionRecord, Hash, record};

/// The layout version directory under the cache directory.
pub(super) const VERSION_DIR: &str = "v1";
pub(super) const OBJECTS_DIR: &str = "cas";
pub(super) const ACTIONS_DIR: &str = "ac";
pub(super) const TMP_DIR: &str = "tmp";

/// A hit bumps an entry's mtime only when it is older than this, so a hot entry costs
/// no metadata write on every read. Why a day: a warm build reads thousands of entries, and
/// a metadata write per entry cost more than the rest of the warm build (measured); least
/// recently used to the day is precise enough for `gc`, whose age bounds are days.
pub(super) const TOUCH_GRANULARITY: Duration = Duration::from_secs(24 * 60 * 60);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Object,
    Action,
}

impl Kind {
    pub(super) fn dir(self) -> &'static str {
        match self {
            Kind::Object => OBJECTS_DIR,
            Kind::Action => ACTIONS_DIR,
        }
    }

    /// The largest entry of this kind, in the store or from a remote (a record is far
    /// smaller than an object): a larger file is none, and is never read (a sparse one
    /// claims any size it likes).
    pub(super) fn max_bytes(self) -> u64 {
        match self {
            Kind::Object => 1 << 30,
            Kind::Action => 16 << 20,
        }
    }
}

/// The largest of the store's own small files (`last-build.json`, `usage.json`) read back.
pub(super) const MAX_STATE_BYTES: u64 = 1 << 20;

#[derive(Debug)]
pub(super) struct LocalStore {
    /// `<dir>/v1`
    root: PathBuf,
}

impl LocalStore {
    /// Creates the layout (and a `CACHEDIR.TAG`) if missing. A store whose own folders are
    /// not folders of its own (a link to elsewhere) is refused: its writes, and the removal
    /// of stale temporary files, would reach whatever they point to.
    pub(super) fn open(dir: &Path) -> io::Result<LocalStore> {
        let root = dir.join(VERSION_DIR);
        if !own_folder(&root)?
            && let Some(foreign) = foreign_entry(dir)?
        {
            // (Its tag would mark the user's own files as a cache's for backups to skip.)
            return Err(io::Error::other(format!(
                "it holds {foreign}, and a cache folder holds the cache alone: name an empty or new folder"
            )));
        }
        for folder in store_folders(dir) {
            // Checked before it is made (making it would follow a link there) and after.
            if !own_folder(&folder)? {
                create_folders(&folder)?;
                own_folder(&folder)?;
            }
        }
        write_cachedir_tag(dir);
        Ok(LocalStore { root })
    }

    pub(super) fn root(&self) -> &Path {
        &self.root
    }

    pub(super) fn path(&self, kind: Kind, hash: &Hash) -> PathBuf {
        entry_path(&self.root, kind, hash)
    }

    /// The verified object, or `None` (a corrupt one is removed).
    pub(super) fn get_object(&self, hash: &Hash) -> Option<Vec<u8>> {
        let path = self.path(Kind::Object, hash);
        let (file, bytes, modified) = read_entry(&path, Kind::Object.max_bytes())?;
        if Hash::of(&bytes) != *hash {
            remove_corrupt(&path);
            return None;
        }
        touch(&file, modified);
        Some(bytes)
    }

    /// The verified record, or `None` (a corrupt one is removed).
    pub(super) fn get_record(&self, key: &Hash) -> Option<ActionRecord> {
        let path = self.path(Kind::Action, key);
        let (file, bytes, modified) = read_entry(&path, Kind::Action.max_bytes())?;
        let Some(record) = record::decode(&bytes) else {
            remove_corrupt(&path);
            return None;
        };
        touch(&file, modified);
        Some(record)
    }

    /// Stores an entry unless an equal one is present (then it is only touched). Returns
    /// the number of bytes written.
    pub(super) fn put(&self, kind: Kind, hash: &Hash, bytes: &[u8]) -> io::Result<u64> {
        let path = self.path(kind, hash);
        if let Some((file, meta)) = open_entry(&path)
            && meta.len() == bytes.len() as u64
        {
            // An object's name is the hash of its bytes, so a present file of the right
            // length is taken as present (a corrupt one is caught, and removed, by the
            // next read). A record is small: compare it whole.
            let same = match kind {
                Kind::Object => true,
                Kind::Action => read_regular(&path, kind.max_bytes()).is_some_and(|old| old == bytes),
            };
            if same {
                touch(&file, meta.modified().ok());
                return Ok(0);
            }
        }
        write_atomic(&self.root, &path, bytes)?;
        Ok(bytes.len() as u64)
    }
}

pub(super) fn entry_path(root: &Path, kind: Kind, hash: &Hash) -> PathBuf {
    let hex = hash.to_hex();
    root.join(kind.dir()).join(&hex[..2]).join(hex)
}

/// Reads a whole entry file; `None` if it is missing, unreadable or larger than `max`. One
/// read of the size `fstat` gave: entries are immutable, so a shorter file is a broken one
/// (a miss), and a longer one fails verification.
fn read_entry(path: &Path, max: u64) -> Option<(File, Vec<u8>, Option<SystemTime>)> {
    let (mut file, meta) = open_entry(path)?;
    if meta.len() > max {
        return None;
    }
    let mut bytes = vec![0; meta.len() as usize];
    file.read_exact(&mut bytes).ok()?;
    Some((file, bytes, meta.modified().ok()))
}

/// The bytes of the store's file at `path`, if it is a regular file (see [`open_entry`]) of
/// at most `max` bytes.
pub(super) fn read_regular(path: &Path, max: u64) -> Option<Vec<u8>> {
    read_entry(path, max).map(|(_, bytes, _)| bytes)
}

/// An entry file, opened for reading, if it is one: never a link (followed elsewhere) or a
/// FIFO (an open would wait for a writer), nor in a shard that is a link, whatever a hand or
/// a tool left in the store.
fn open_entry(path: &Path) -> Option<(File, fs::Metadata)> {
    if !in_own_shard(path) {
        return None;
    }
    let flags = libc::O_NOFOLLOW | libc::O_NONBLOCK;
    let file = OpenOptions::new().read(true).custom_flags(flags).open(path).ok()?;
    let meta = file.metadata().ok().filter(fs::Metadata::is_file)?;
    Some((file, meta))
}

/// Marks an entry as used now (for LRU gc). Best effort: a read-only cache stays usable.
fn touch(file: &File, modified: Option<SystemTime>) {
    let now = SystemTime::now();
    let stale = modified.is_none_or(|m| now.duration_since(m).is_ok_and(|age| age >= TOUCH_GRANULARITY));
    if stale {
        let _ = file.set_modified(now);
    }
}

fn remove_corrupt(path: &Path) {
    let _ = fs::remove_file(path);
}

/// Writes `bytes` at `dest` atomically: a unique temporary file in `<root>/tmp`, then a
/// rename. Several processes may do this for the same `dest` at once.
pub(super) fn write_atomic(root: &Path, dest: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp_dir = root.join(TMP_DIR);
    let (tmp, mut file) = match create_temp(&tmp_dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // The store was removed under the process (a watch session's): made again, with
            // its tag, which keeps a cache in a project out of the build's inputs.
            create_folders(&tmp_dir)?;
            if let Some(dir) = root.parent() {
                write_cachedir_tag(dir);
            }
            create_temp(&tmp_dir)?
        }
        other => other?,
    };
    let result = file.write_all(bytes).and_then(|()| {
        drop(file);
        rename_into_place(&tmp, dest)
    });
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Whether the shard folder of the entry at `path` is a folder, not a link to one: what lies
/// behind a link is not the store's (`verify` removes such a link; `gc` never counts what
/// it leads to).
fn in_own_shard(path: &Path) -> bool {
    path.parent().is_none_or(|shard| fs::symlink_metadata(shard).is_ok_and(|metadata| metadata.is_dir()))
}

fn rename_into_place(tmp: &Path, dest: &Path) -> io::Result<()> {
    // The folder it goes in (a shard), a link or no folder, is replaced by one of the store's own.
    if let Some(shard) = dest.parent()
        && fs::symlink_metadata(shard).is_ok_and(|metadata| !metadata.is_dir())
    {
        remove_stray(shard)?;
    }
    match fs::rename(tmp, dest) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // The shard directory does not exist yet (or the layout was wiped).
            if let Some(parent) = dest.parent() {
                create_folders(parent)?;
            }
            fs::rename(tmp, dest)
        }
        // A folder where the entry goes (a file cannot replace one): it is no entry.
        Err(_) if fs::symlink_metadata(dest).is_ok_and(|metadata| metadata.is_dir()) => {
            remove_stray(dest)?;
            fs::rename(tmp, dest)
        }
        other => other,
    }
}

/// The folders of the store at `dir` that are its own (`cache-format/SPEC.md` §3), each
/// before those in it: where one is a link, or anything but a folder, nothing goes through it.
pub(super) fn store_folders(dir: &Path) -> [PathBuf; 4] {
    let root = dir.join(VERSION_DIR);
    [root.clone(), root.join(OBJECTS_DIR), root.join(ACTIONS_DIR), root.join(TMP_DIR)]
}

/// Whether the store's folder at `path` is there (`false`: nothing is), and a folder, never
/// a link to one: what lies behind a link is not the store's to read, write or remove.
pub(super) fn own_folder(path: &Path) -> io::Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(metadata) if metadata.is_dir() => Ok(true),
        Ok(_) => Err(io::Error::other(format!(
            "{} is not a folder of the cache's own (a link, or a file): remove it",
            path.display()
        ))),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(error),
    }
}

/// The first entry of the folder `dir` that no cache has (any but its tag and version
/// folders, `v1`, `v2`, …, the `lost+found` of a volume mounted there for it, and what a
/// repository keeps an empty folder with), if it is there.
fn foreign_entry(dir: &Path) -> io::Result<Option<String>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    for entry in entries {
        let name = entry?.file_name();
        let name = name.to_string_lossy();
        let versioned = name.strip_prefix('v').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        // (What a repository keeps an empty folder with, `.gitkeep` or `.gitignore`, is no
        // file of the user's.)
        let kept = name.starts_with(".git") || name == ".keep";
        if !["CACHEDIR.TAG", "lost+found"].contains(&&*name) && !versioned && !kept {
            return Ok(Some(format!("`{name}`")));
        }
    }
    Ok(None)
}

/// Makes the folder at `path` and those missing above it, never writable by users outside
/// its group whatever the umask (see [`writable_by_others`]).
pub(super) fn create_folders(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    fs::DirBuilder::new().recursive(true).mode(0o775).create(path)
}

/// Why the store at `dir` is not this user's alone, if it is not: a folder of it owned by
/// another user, or that any user may write in. What they put there ends up in this user's
/// artifacts (a record is trusted for what it says a build published), as git refuses a
/// repository another user owns. (A group's write is a team's choice.)
pub(super) fn writable_by_others(dir: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: `geteuid` reads the process's own id and cannot fail.
    let user = unsafe { libc::geteuid() };
    let own = store_folders(dir);
    // (The cache folder itself may be a link the user chose: what it leads to is checked.)
    let folders = std::iter::once((dir.to_path_buf(), fs::metadata(dir))).chain(own.map(|f| {
        let metadata = fs::symlink_metadata(&f);
        (f, metadata)
    }));
    folders.into_iter().find_map(|(folder, metadata)| {
        let metadata = metadata.ok()?;
        let why = match (metadata.uid() != user, metadata.mode() & 0o002 != 0) {
            (true, _) => format!("is owned by another user (uid {})", metadata.uid()),
            (false, true) => "may be written by any user".to_owned(),
            (false, false) => return None,
        };
        Some(format!(
            "the build cache's folder {} {why}: what another user puts in the cache ends up in your \
             artifacts; use a cache folder of your own (--cache-dir)",
            folder.display()
        ))
    })
}

/// Removes what is in the store where no entry can be (a folder with all it holds, a link,
/// a FIFO), never following a link.
pub(super) fn remove_stray(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path)? {
        metadata if metadata.is_dir() => fs::remove_dir_all(path),
        _ => fs::remove_file(path),
    }
}

fn create_temp(dir: &Path) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("{}-{n}-{nanos:08x}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).mode(0o644).open(&path) {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Marks the directory as a cache for backup tools (https://bford.info/cachedir/).
pub(super) fn write_cachedir_tag(dir: &Path) {
    const TAG: &str =
        "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by agent-bundle.\n";
    let tag = dir.join("CACHEDIR.TAG");
    // Its size, not only its presence: an older build killed mid-write left it empty. (A
    // stat, as before: every build opens the cache, the no-op too.)
    if !fs::metadata(&tag).is_ok_and(|metadata| metadata.len() >= TAG.len() as u64) {
        let _ = write_atomic(&dir.join(VERSION_DIR), &tag, TAG.as_bytes());
    }
}
