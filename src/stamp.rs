//! The no-op fast path, as make and ninja do it: a build whose inputs and artifact are
//! exactly as the last clean build left them (same paths, sizes, modification times and
//! inodes; same settings; same compiler) skips every stage, so a no-op costs about as much
//! as walking and stat-ing the inputs.
//!
//! The stamp lives in `<root>/.agent-bundle/stamp.json`, never in the artifact. It is only
//! written after a build that published without errors ([`Clean`]); its warnings are
//! recorded, and a no-op says them again, as it does the warning that a folder could not
//! be listed. A file modified within a second before the stamp was written is treated as
//! changed ("racily clean"): its time alone cannot prove it unchanged.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::cache::Hash;
use crate::diagnostics::Diagnostic;
use crate::emit::MANIFEST_FILE;
use crate::loader::{DiskFiles, OutsideDir, OutsideState, input_tree, is_at_or_below, is_outside, read_files};

/// The project's folder of local build state (never an input, never in the artifact).
pub const STATE_DIR: &str = ".agent-bundle";

pub fn stamp_path(root: &Path) -> PathBuf {
    root.join(STATE_DIR).join("stamp.json")
}
/// Why: file systems with coarse timestamps can give an edit made just before the stamp the
/// same time as the stamp itself; such files are always re-read.
const RACY_WINDOW_NS: i128 = 1_000_000_000;

/// What a build that published without errors leaves for a later one to answer from: the
/// hash of the manifest it published, and the warnings it said (which a build answered by
/// the stamp or the cache says again: they follow from the inputs alone).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clean {
    pub manifest: Hash,
    pub warnings: Vec<Diagnostic>,
}

/// What the last clean build saw and produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    compiler: String,
    settings: String,
    /// The input walk's directories (`loader::InputTree::dir_states`): while they hold, the
    /// inputs are exactly the files listed in `inputs`, and no walk is needed.
    input_dirs: Vec<FileState>,
    inputs: Vec<FileState>,
    outputs: Vec<FileState>,
    /// The BLAKE3 of the published manifest (hex): what ties `outputs` to a cache record.
    manifest: String,
    saved_at_ns: i128,
    pub summary: Summary,
    /// The folders the input walk could not list (their states are among `input_dirs`).
    unlistable: Vec<String>,
    /// What the walk may have lost (`Snapshot::losses`).
    losses: Vec<String>,
    /// The build's warnings ([`Clean::warnings`]).
    #[serde(default)]
    warnings: Vec<Diagnostic>,
}

/// Enough to report an up-to-date build without running it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub plugin: String,
    pub version: String,
    pub targets: Vec<String>,
    pub files: usize,
    /// The project folders its payloads were copied from (the manifest's `payloads`).
    pub payload_sources: Vec<String>,
}

impl Summary {
    /// Whether something a walk may have lost (`Snapshot::losses`) lies in one of the
    /// artifact's payloads, or among its routes: it would be missing from it, and only a
    /// compile says so.
    pub fn loses_any_of(&self, losses: &[String]) -> bool {
        // (A route passed over fails a compile too: `build::check_routes_whole`.)
        let in_payload = |key: &str| self.payload_sources.iter().any(|source| is_at_or_below(key, source));
        losses.iter().any(|key| in_payload(key) || crate::routes::may_hold_route(key))
    }
}

/// The state of one path: what `stat` says, enough to tell that it changed. Written as a
/// JSON array `[path, size, mtime_ns, ctime_ns, inode, mode]`: a workspace's memo holds
/// thousands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "StateRow", into = "StateRow")]
pub(crate) struct FileState {
    path: String,
    size: u64,
    /// Nanoseconds since the epoch, saturated outside 1677–2262. An `i64`: serde_json reads
    /// an `i128` through a string of its own, an allocation per number of thousands.
    mtime_ns: i64,
    /// Why the change time too: a copy or an unpacked archive that keeps the modification
    /// time (`cp -p`, `rsync -t`, `tar x`) writes new bytes of the same size under the old
    /// time, and only the change time, which nothing can set back, tells (as git's index).
    ctime_ns: i64,
    inode: u64,
    /// 0 when nothing is at the path: a real entry's mode always carries its type bits.
    mode: u32,
}

type StateRow = (String, u64, i64, i64, u64, u32);

impl From<StateRow> for FileState {
    fn from((path, size, mtime_ns, ctime_ns, inode, mode): StateRow) -> FileState {
        FileState { path, size, mtime_ns, ctime_ns, inode, mode }
    }
}

impl From<FileState> for StateRow {
    fn from(state: FileState) -> StateRow {
        (state.path, state.size, state.mtime_ns, state.ctime_ns, state.inode, state.mode)
    }
}

impl FileState {
    /// The path it is the state of (relative to where it was taken, or absolute).
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    pub(crate) fn of(path: String, metadata: &std::fs::Metadata) -> FileState {
        FileState {
            path,
            size: metadata.size(),
            mtime_ns: nanoseconds(metadata.mtime(), metadata.mtime_nsec()),
            ctime_ns: nanoseconds(metadata.ctime(), metadata.ctime_nsec()),
            inode: metadata.ino(),
            mode: metadata.mode(),
        }
    }

    /// Recorded by [`FileState::presence`]: a type and nothing else (no inode: a folder of
    /// mode 000 has a type and no permission bits too).
    fn is_presence(&self) -> bool {
        self.mode != 0 && self.mode & !libc::S_IFMT == 0 && self.inode == 0
    }

    /// The state of whatever is at `full` now (an absent path has mode 0).
    pub(crate) fn probe(path: String, full: &Path) -> FileState {
        match std::fs::symlink_metadata(full) {
            Ok(metadata) => FileState::of(path, &metadata),
            Err(_) => FileState::absent(path),
        }
    }

    /// What is at `full` now, taken as this was (without a path: an empty one allocates
    /// nothing).
    fn now_at(&self, full: &Path) -> FileState {
        if self.is_presence() {
            FileState::presence(String::new(), full)
        } else {
            FileState::probe(String::new(), full)
        }
    }

    /// Whether `other` records the same state (the paths aside).
    fn same_as(&self, other: &FileState) -> bool {
        // Every field named, so that one added later is compared (or said not to be) here too.
        let FileState { path: _, size, mtime_ns, ctime_ns, inode, mode } = self;
        (*size, *mtime_ns, *ctime_ns, *inode, *mode)
            == (other.size, other.mtime_ns, other.ctime_ns, other.inode, other.mode)
    }

    /// Nothing at the path.
    pub(crate) fn absent(path: String) -> FileState {
        FileState { path, size: 0, mtime_ns: 0, ctime_ns: 0, inode: 0, mode: 0 }
    }

    /// Only what kind of entry is at `full`, if any, through a link (as `Path::exists` sees
    /// it): for markers whose presence matters and whose contents change all the time (a
    /// repository's `.git`).
    pub(crate) fn presence(path: String, full: &Path) -> FileState {
        let mode = std::fs::metadata(full).map_or(0, |metadata| metadata.mode() & libc::S_IFMT);
        FileState { path, size: 0, mtime_ns: 0, ctime_ns: 0, inode: 0, mode }
    }

    /// Modified so shortly before `saved_at_ns` that its time alone cannot prove it unchanged.
    pub(crate) fn is_racy(&self, saved_at_ns: i128) -> bool {
        i128::from(self.mtime_ns) >= saved_at_ns - RACY_WINDOW_NS
    }
}

fn nanoseconds(seconds: i64, nanoseconds: i64) -> i64 {
    seconds.saturating_mul(1_000_000_000).saturating_add(nanoseconds)
}

/// Whether every recorded state (paths relative to `base`; a trailing `/` marks a
/// directory) is still what is on disk.
pub(crate) fn unchanged(states: &[FileState], base: &Path) -> bool {
    // One path buffer for all, no state made with a path (a no-op asks this of thousands).
    let mut full = base.to_path_buf();
    states.iter().all(|recorded| {
        full.as_mut_os_string().clear();
        full.push(base);
        full.push(recorded.path.trim_end_matches('/'));
        recorded.same_as(&recorded.now_at(&full))
    })
}

pub(crate) fn now_ns() -> i128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128)
}

const STATE_IGNORE: &str = "# agent-bundle's local build state, for this checkout only.\n*\n";

/// Makes the state folder `dir` in its project (or workspace) folder, which must be there
/// (one moved or removed while it was built is not made again to hold a stamp), and refuses
/// one that is a link.
pub(crate) fn ensure_state_folder(dir: &Path) -> io::Result<()> {
    match std::fs::create_dir(dir) {
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
        made => made?,
    }
    refuse_linked(dir)
}

/// Creates `dir`, a folder of local build state (`.agent-bundle/`), holding a `.gitignore`
/// that ignores it all: stamps and memos describe one checkout and must never be committed.
pub(crate) fn create_ignored_state_folder(dir: &Path) -> io::Result<()> {
    ensure_state_folder(dir)?;
    let ignore = dir.join(".gitignore");
    // Compared, not only found: an older build killed mid-write left it empty.
    if read_state_file(&ignore).as_deref() != Some(STATE_IGNORE.as_bytes()) {
        write_atomically(&ignore, STATE_IGNORE.as_bytes())?;
    }
    Ok(())
}

/// A state file's bytes, if a regular file is there: never through a link (the file or its
/// folder), never waiting on a FIFO someone left in its place (an open would wait for a
/// writer, and no signal ends it).
pub(crate) fn read_state_file(path: &Path) -> Option<std::sync::Arc<[u8]>> {
    refuse_linked(path.parent()?).ok()?;
    crate::loader::read_file(path).ok().flatten().map(|(bytes, _)| bytes)
}

/// Fails for a state folder that is a symbolic link: the state is this checkout's, and no
/// read, write or removal of it may reach wherever the link points.
fn refuse_linked(dir: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(metadata) if metadata.is_symlink() => {
            let message = format!("{} is a symbolic link: no state is kept through it", dir.display());
            Err(io::Error::new(io::ErrorKind::InvalidInput, message))
        }
        _ => Ok(()),
    }
}

/// Writes `value` as JSON at `path`, atomically.
pub(crate) fn write_json(path: &Path, value: &impl Serialize) -> io::Result<()> {
    write_atomically(path, &serde_json::to_vec(value).map_err(io::Error::other)?)
}

/// Writes `bytes` at `path` through a temporary file beside it (`<name>.<pid>.tmp`: one per
/// process, so two builds of one project never write into the same one) and a rename, so
/// the file is whole or absent even after a kill. The temporary files killed writers left
/// in the folder are removed first.
fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().expect("a state file has a parent");
    ensure_state_folder(dir)?;
    remove_abandoned_temporaries(dir);
    crate::output::replace_whole(path, bytes)
}

/// Removes the temporary files in `dir` whose writer is gone: its process has ended, or it
/// is older than a minute (a write takes microseconds; the process id may have been reused).
fn remove_abandoned_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(writer) = name.to_str().and_then(crate::output::temporary_writer) else { continue };
        let modified = entry.metadata().and_then(|metadata| metadata.modified());
        let old = modified.is_ok_and(|time| time.elapsed().is_ok_and(|age| age.as_secs() >= 60));
        if old || !process_runs(writer) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether process `pid` runs: it exists and is no zombie (a build killed along with its
/// parent waits for a reaper that a container may not have). Without `/proc`, only the
/// age of its file tells.
fn process_runs(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses and may hold any.
        Ok(stat) => stat.rsplit_once(')').is_none_or(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => !Path::new("/proc/self/stat").exists(),
    }
}

/// The files of the project, as they are now.
#[derive(Clone)]
pub struct Snapshot {
    files: Vec<(String, PathBuf)>,
    inputs: Vec<FileState>,
    dirs: Vec<FileState>,
    unlistable: Vec<String>,
    losses: Vec<String>,
}

impl Snapshot {
    /// Walks the project and stats every input.
    pub fn take(root: &Path, out_dir: &Path) -> io::Result<Snapshot> {
        let tree = input_tree(root, &[out_dir.to_path_buf()])?;
        let inputs = tree.files.iter().map(|(key, path)| state(key.clone(), path)).collect::<io::Result<_>>()?;
        let dirs = tree.dir_states().map(|(key, metadata)| FileState::of(key.clone(), metadata)).collect();
        let unlistable = tree.unlistable_keys();
        let losses = tree.losses();
        Ok(Snapshot { unlistable, files: tree.files, inputs, dirs, losses })
    }

    /// What the walk may have lost ([`InputTree::losses`](crate::loader::InputTree::losses)):
    /// what it passed over that is no input, a payload's or a route's perhaps.
    pub fn losses(&self) -> &[String] {
        &self.losses
    }

    /// The folders of the project this process may not list: nothing in them was read.
    pub fn unlistable(&self) -> &[String] {
        &self.unlistable
    }

    /// Reads the files this snapshot found (without walking the project again).
    pub fn read(&self) -> io::Result<DiskFiles> {
        read_files(&self.files)
    }

    /// The outside directories whose files it holds (a stamp listed them).
    pub fn outside_dirs(&self) -> impl Iterator<Item = String> + '_ {
        self.dirs.iter().map(|dir| dir.path.clone()).filter(|key| is_outside(key))
    }

    /// Adds the outside directories a build listed, and their files, as they were read (in
    /// place of what it held for them: the folders of a stamp can be listed again). Where no
    /// directory was, what was there instead is recorded: its change (a link replaced by a
    /// folder, an artifact's manifest gone) changes what the imports resolve to.
    pub fn add_outside(&mut self, listed: Vec<OutsideDir>) {
        for dir in listed {
            let state = match dir.state {
                OutsideState::Dir(metadata) | OutsideState::Unlistable(Some(metadata)) => {
                    FileState::of(dir.key.clone(), &metadata)
                }
                OutsideState::Unlistable(None) => FileState::absent(dir.key.clone()),
                OutsideState::Instead(instead) => instead,
                OutsideState::Forbidden => continue,
            };
            let in_dir = |path: &str| crate::loader::parent_key(path) == dir.key;
            self.dirs.retain(|state| state.path != dir.key);
            self.inputs.retain(|state| !in_dir(&state.path));
            self.dirs.push(state);
            self.inputs.extend(dir.files.iter().map(|(key, metadata)| FileState::of(key.clone(), metadata)));
        }
        self.inputs.sort_by(|a, b| a.path.cmp(&b.path));
    }
}

/// What [`check`] found of the last clean build's stamp.
pub enum Found {
    /// The project and its artifact still match it exactly.
    UpToDate(Stamp),
    /// Something changed since, or there is no stamp (for this compiler and settings): the
    /// inputs as they are now, and the stamp, if any, which may still vouch for the artifact
    /// ([`renew`]).
    Stale(Snapshot, Option<Stamp>),
}

/// The project's inputs as they are now, and what the previous stamp says of them and of
/// the artifact. When none of the walk's directories changed, the inputs are the files the
/// stamp lists (stat-ed, not walked for).
pub fn check(root: &Path, out_dir: &Path, settings: &str) -> io::Result<Found> {
    // (A stamp that recorded something passed over in a payload of its artifact was saved
    // while that came in: it vouches for nothing.)
    let saved = read_state_file(&stamp_path(root));
    let stamp = (saved.as_deref())
        .and_then(|bytes| serde_json::from_slice::<Stamp>(bytes).ok())
        .filter(|stamp| !stamp.summary.loses_any_of(&stamp.losses))
        .filter(|stamp| stamp.compiler == crate::actions::COMPILER && stamp.settings == settings);
    // Asked once: the no-op's first question, and whether a stale build need walk.
    let walk_unchanged = stamp.as_ref().is_some_and(|stamp| stamp.walk_unchanged(root));
    let stamp = match stamp {
        Some(stamp) if walk_unchanged && stamp.holds(root, out_dir) => return Ok(Found::UpToDate(stamp)),
        stamp => stamp,
    };
    let listed = stamp.as_ref().filter(|_| walk_unchanged).and_then(|stamp| stamp.listed_inputs(root));
    let (snapshot, walked) = match listed {
        Some(snapshot) => (snapshot, false),
        None => (Snapshot::take(root, out_dir)?, true),
    };
    let Some(stamp) = stamp else { return Ok(Found::Stale(snapshot, None)) };
    // A folder changed since, and the walk passed over what is no input in a payload: it
    // may be new there, which only a compile can tell (`build::check_payloads_whole`).
    if !stamp.describes(&snapshot, out_dir) || (walked && stamp.summary.loses_any_of(&snapshot.losses)) {
        return Ok(Found::Stale(snapshot, Some(stamp)));
    }
    if walked && let Some(saved) = &saved {
        record_walk(root, out_dir, (&stamp, saved), &snapshot);
    }
    Ok(Found::UpToDate(stamp))
}

/// Records in `stamp` the directories of a walk that found its inputs as it lists them, so
/// that the next no-op need not walk. The build's own writes leave the root's time inside the
/// racy window; once a walk finds the same files outside it, its directories are worth
/// recording. In a publisher's turn, and only while the stamp saved is still `stamp`, as its
/// bytes `saved` say (a build that published since saved its own).
fn record_walk(root: &Path, out_dir: &Path, (stamp, saved): (&Stamp, &[u8]), walk: &Snapshot) {
    let now = now_ns();
    if walk.dirs.is_empty() || walk.dirs.iter().any(|dir| dir.is_racy(now)) {
        return;
    }
    let Ok(_turn) = crate::emit::publish::take_turn(out_dir) else { return };
    if read_state_file(&stamp_path(root)).as_deref() != Some(saved) {
        return;
    }
    let (input_dirs, losses, unlistable) = (walk.dirs.clone(), walk.losses.clone(), walk.unlistable.clone());
    let refreshed = Stamp { input_dirs, losses, unlistable, saved_at_ns: now, ..stamp.clone() };
    // The stamp is an optimization: failing to write it must not fail the build.
    let _ = write_json(&stamp_path(root), &refreshed);
}

impl Stamp {
    /// The folders the input walk could not list.
    pub fn unlistable(&self) -> &[String] {
        &self.unlistable
    }

    /// The warnings of the build it records.
    pub fn warnings(&self) -> &[Diagnostic] {
        &self.warnings
    }

    /// The no-op's question once the walk is known to find the same inputs
    /// ([`Stamp::walk_unchanged`]), asked without building a snapshot (what a stale build
    /// needs): whether each input is in the state recorded, and the artifact as it was.
    fn holds(&self, root: &Path, out_dir: &Path) -> bool {
        self.trusted_as_recorded(out_dir) && unchanged(&self.inputs, root)
    }

    /// Whether a walk of `root` would list the files it lists: none of the directories it
    /// recorded changed since (and each is old enough for its time to prove it).
    fn walk_unchanged(&self, root: &Path) -> bool {
        !self.input_dirs.is_empty()
            && !self.input_dirs.iter().any(|dir| dir.is_racy(self.saved_at_ns))
            && unchanged(&self.input_dirs, root)
    }

    /// The inputs as the stamp lists them, stat-ed now, once the walk is known to find the
    /// same ones ([`Stamp::walk_unchanged`]).
    fn listed_inputs(&self, root: &Path) -> Option<Snapshot> {
        let files: Vec<(String, PathBuf)> = self.inputs.iter().map(|s| (s.path.clone(), root.join(&s.path))).collect();
        let inputs = files.iter().map(|(key, path)| state(key.clone(), path)).collect::<io::Result<_>>().ok()?;
        let (dirs, unlistable) = (self.input_dirs.clone(), self.unlistable.clone());
        Some(Snapshot { files, inputs, dirs, unlistable, losses: self.losses.clone() })
    }

    /// Whether `now`'s inputs are the ones recorded (none changed within the racy window) and
    /// the artifact is as published: checked by stat-ing what the stamp recorded, not by
    /// walking it again.
    fn describes(&self, now: &Snapshot, out_dir: &Path) -> bool {
        self.inputs == now.inputs && self.trusted_as_recorded(out_dir)
    }

    /// What both [`Stamp::holds`] and [`Stamp::describes`] ask beside the inputs' states: that
    /// none was recorded within the racy window (its time proves nothing), and the artifact
    /// is as published.
    fn trusted_as_recorded(&self, out_dir: &Path) -> bool {
        !self.inputs.iter().any(|input| input.is_racy(self.saved_at_ns)) && self.artifact_unchanged(out_dir)
    }

    fn artifact_unchanged(&self, out_dir: &Path) -> bool {
        !self.outputs.is_empty() && unchanged(&self.outputs, out_dir)
    }

    /// Whether the artifact at `out_dir` is still the one this stamp recorded, and that
    /// one's manifest hashes to `manifest`, whatever happened to the inputs since. Inputs
    /// touched but not changed (a branch switched and back) hash to the key of the same
    /// published manifest, and the artifact is then trusted as a no-op trusts it, without
    /// reading it again.
    fn vouches_for(&self, out_dir: &Path, manifest: &Hash) -> bool {
        self.manifest == manifest.to_hex() && self.artifact_unchanged(out_dir)
    }
}

/// The artifact is trusted as the last build left it when its manifest and every one of its
/// directories (whose times change when an entry is added, removed or renamed) are
/// unchanged. Why not every file: stat-ing thousands of wrappers would double the cost of
/// a no-op; a file edited in place is what `agent-bundle validate` is for.
fn artifact_states(out_dir: &Path) -> io::Result<Vec<FileState>> {
    if !out_dir.join(MANIFEST_FILE).is_file() {
        return Ok(Vec::new());
    }
    let mut states = vec![state(MANIFEST_FILE.to_owned(), &out_dir.join(MANIFEST_FILE))?];
    for entry in walkdir::WalkDir::new(out_dir).sort_by_file_name() {
        let entry = entry.map_err(io::Error::other)?;
        if entry.file_type().is_dir() {
            let relative = entry.path().strip_prefix(out_dir).expect("walkdir stays below its root");
            states.push(state(format!("{}/", relative.display()), entry.path())?);
        }
    }
    Ok(states)
}

/// Records a clean build: the inputs it read (`before`, taken before reading them, so an
/// edit during the build is never stamped as seen) and the artifact it published.
///
/// The directories are those of a second walk, after publishing: the build itself changes
/// the project root (the artifact's swap, the stamp's folder), and a walk that lists the
/// same files as `before` proves those changes added no input. If it lists others (an
/// edit during the build), no directories are recorded and the next build walks. Outside
/// directories keep the states they had when listed (the build changes none of them).
///
/// The artifact recorded is the one whose manifest hashes to `clean.manifest`, what this
/// build published: stamping is a publisher's turn (see `emit::publish::take_turn`),
/// and when another build of the project published in between, nothing is stamped.
pub fn save(
    root: &Path,
    out_dir: &Path,
    settings: &str,
    before: Snapshot,
    summary: Summary,
    clean: &Clean,
) -> io::Result<()> {
    let _turn = crate::emit::publish::take_turn(out_dir)?;
    let path = stamp_path(root);
    let published = read_state_file(&out_dir.join(MANIFEST_FILE)).map(|bytes| Hash::of(&bytes));
    if published.as_ref() != Some(&clean.manifest) {
        clear(root);
        return Ok(());
    }
    create_ignored_state_folder(path.parent().expect("the stamp has a parent"))?;
    let walked = |files: &[(String, PathBuf)]| -> Vec<(String, PathBuf)> {
        files.iter().filter(|(key, _)| !is_outside(key)).cloned().collect()
    };
    // The listing alone: the files' states are those taken before they were read.
    let after = input_tree(root, &[out_dir.to_path_buf()]).ok().filter(|after| after.files == walked(&before.files));
    // (Not a walk that found something new in a payload, which the check before the publish
    // did not see: the next build walks, and says so.)
    let after = after.map(|after| (after.losses(), after)).filter(|(losses, _)| !summary.loses_any_of(losses));
    let (input_dirs, unlistable, losses) = match after {
        Some((losses, after)) => {
            let outside = before.dirs.iter().filter(|dir| is_outside(&dir.path)).cloned();
            let listed = after.dir_states().map(|(key, metadata)| FileState::of(key.clone(), metadata));
            (listed.chain(outside).collect(), after.unlistable_keys(), losses)
        }
        None => (Vec::new(), before.unlistable, before.losses),
    };
    let saved_at_ns = now_ns();
    let stamp = Stamp {
        compiler: crate::actions::COMPILER.to_owned(),
        settings: settings.to_owned(),
        input_dirs,
        inputs: before.inputs,
        outputs: artifact_states(out_dir)?,
        manifest: clean.manifest.to_hex(),
        saved_at_ns,
        summary,
        unlistable,
        losses,
        warnings: clean.warnings.clone(),
    };
    write_json(&path, &stamp)
}

/// When `previous` vouches for the artifact at `out_dir` as the one whose manifest hashes
/// to `clean.manifest` (`Stamp::vouches_for`), records that only the inputs' states changed,
/// to those `now` holds (taken before they were read), with the warnings a build of them
/// says, and returns what the artifact holds.
/// Checked and recorded in one publisher's turn, so no publish comes in between; the build
/// wrote nothing, so unlike [`save`] no second walk is needed to prove it added no input.
pub fn renew(root: &Path, out_dir: &Path, previous: Stamp, clean: &Clean, now: Snapshot) -> Option<Summary> {
    let _turn = crate::emit::publish::take_turn(out_dir).ok()?;
    // (What the walk passed over in a payload now: only a compile says whether it is new.)
    if !previous.vouches_for(out_dir, &clean.manifest) || previous.summary.loses_any_of(&now.losses) {
        return None;
    }
    let stamp = Stamp {
        input_dirs: now.dirs,
        inputs: now.inputs,
        unlistable: now.unlistable,
        losses: now.losses,
        saved_at_ns: now_ns(),
        warnings: clean.warnings.clone(),
        ..previous
    };
    // The stamp is an optimization: failing to write it must not fail the build.
    let _ = write_json(&stamp_path(root), &stamp);
    Some(stamp.summary)
}

/// Forgets the stamp (after a build that did not end clean).
pub fn clear(root: &Path) {
    let path = stamp_path(root);
    if path.parent().is_some_and(|dir| refuse_linked(dir).is_ok()) {
        let _ = std::fs::remove_file(path);
    }
}

fn state(path: String, full: &Path) -> io::Result<FileState> {
    let metadata = std::fs::symlink_metadata(full).map_err(|error| {
        io::Error::new(error.kind(), format!("cannot read the state of {}: {error}", full.display()))
    })?;
    Ok(FileState::of(path, &metadata))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::time::Duration;

    fn summary() -> Summary {
        Summary {
            plugin: "p".into(),
            version: "1.0.0".into(),
            targets: vec!["claude".into()],
            files: 2,
            payload_sources: Vec::new(),
        }
    }

    /// A project whose inputs and directories are older than the racy window, with a built
    /// artifact.
    fn project() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("src")).unwrap();
        fs::write(dir.path().join("agent-bundle.config.ts"), "export default {};\n").unwrap();
        fs::write(dir.path().join("src/a.ts"), "export default 1;\n").unwrap();
        let out = dir.path().join("artifact");
        fs::create_dir_all(out.join("hooks")).unwrap();
        fs::write(out.join(MANIFEST_FILE), "{}").unwrap();
        fs::write(out.join("hooks/a.mjs"), "a").unwrap();
        let past = SystemTime::now() - Duration::from_secs(10);
        for path in ["agent-bundle.config.ts", "src/a.ts", "src", ""] {
            fs::File::open(dir.path().join(path)).unwrap().set_modified(past).unwrap();
        }
        (dir, out)
    }

    /// A build of the artifact at `out` without warnings.
    fn clean(out: &Path) -> Clean {
        Clean { manifest: Hash::of(&fs::read(out.join(MANIFEST_FILE)).unwrap()), warnings: Vec::new() }
    }

    fn saved(root: &Path) -> Stamp {
        serde_json::from_slice(&fs::read(stamp_path(root)).unwrap()).unwrap()
    }

    fn stamp(root: &Path, out: &Path) {
        save(root, out, "settings", Snapshot::take(root, out).unwrap(), summary(), &clean(out)).unwrap();
    }

    fn fresh(root: &Path, out: &Path) -> bool {
        matches!(check(root, out, "settings").unwrap(), Found::UpToDate(_))
    }

    #[test]
    fn an_untouched_project_and_artifact_are_up_to_date_and_other_settings_are_not() {
        let (dir, out) = project();
        stamp(dir.path(), &out);
        assert!(fresh(dir.path(), &out));
        assert!(matches!(check(dir.path(), &out, "other").unwrap(), Found::Stale(_, None)));
    }

    /// A link that came into a payload while the build published (the check before it did
    /// not see it): the stamp saved then records no folders, and a stamp that holds one
    /// vouches for nothing.
    #[test]
    fn what_came_into_a_payload_during_the_publish_is_never_stamped_as_whole() {
        let (dir, out) = project();
        let with_payload = Summary { payload_sources: vec!["src".into()], ..summary() };
        let before = Snapshot::take(dir.path(), &out).unwrap();
        std::os::unix::fs::symlink("a.ts", dir.path().join("src/link.ts")).unwrap();
        save(dir.path(), &out, "settings", before, with_payload, &clean(&out)).unwrap();
        assert!(saved(dir.path()).input_dirs.is_empty(), "the next build walks");
        assert!(!fresh(dir.path(), &out));

        let mut stamp = saved(dir.path());
        stamp.losses = vec!["src/link.ts".into()];
        stamp.input_dirs = Snapshot::take(dir.path(), &out).unwrap().dirs;
        write_json(&stamp_path(dir.path()), &stamp).unwrap();
        assert!(matches!(check(dir.path(), &out, "settings").unwrap(), Found::Stale(_, None)));
    }

    /// A project folder moved or removed while it was built gets no state folder (which
    /// would make it again, holding only a stamp).
    #[test]
    fn a_project_folder_gone_is_not_made_again_for_its_state() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("project");
        assert!(create_ignored_state_folder(&gone.join(STATE_DIR)).is_err());
        assert!(!gone.exists());
    }

    #[test]
    fn the_state_folder_ignores_itself_for_git() {
        let (dir, out) = project();
        stamp(dir.path(), &out);
        let ignore = fs::read_to_string(dir.path().join(".agent-bundle/.gitignore")).unwrap();
        assert_eq!(ignore.lines().last(), Some("*"));
        assert!(fresh(dir.path(), &out), "the stamp still holds");
        // Left empty by a build killed mid-write: written again by the next stamp.
        fs::write(dir.path().join(".agent-bundle/.gitignore"), "").unwrap();
        stamp(dir.path(), &out);
        assert_eq!(fs::read_to_string(dir.path().join(".agent-bundle/.gitignore")).unwrap(), ignore);
    }

    #[test]
    fn temporary_files_of_killed_writers_are_removed_and_a_running_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let spawn = |program: &str| std::process::Command::new(program).arg("10").spawn().unwrap();
        let (mut ended, mut zombie, mut running) = (spawn("true"), spawn("true"), spawn("sleep"));
        ended.wait().unwrap();
        let state = |pid: u32| fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        while !state(zombie.id()).contains(") Z") {
            std::thread::sleep(Duration::from_millis(5));
        }
        let temporary = |pid: u32| dir.path().join(format!("stamp.json.{pid}.tmp"));
        for pid in [ended.id(), zombie.id(), running.id()] {
            fs::write(temporary(pid), "").unwrap();
        }
        write_json(&dir.path().join("memo.json"), &1).unwrap();
        assert!(!temporary(ended.id()).exists(), "its writer has ended");
        assert!(!temporary(zombie.id()).exists(), "its writer has ended, not yet reaped");
        zombie.wait().unwrap();
        assert!(temporary(running.id()).exists(), "its writer may still rename it");
        let old = SystemTime::now() - Duration::from_secs(120);
        fs::File::options().write(true).open(temporary(running.id())).unwrap().set_modified(old).unwrap();
        write_json(&dir.path().join("memo.json"), &2).unwrap();
        assert!(!temporary(running.id()).exists(), "older than any write takes");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["memo.json"]);
        running.kill().unwrap();
        running.wait().unwrap();
    }

    #[test]
    fn while_no_directory_changed_the_stamp_lists_the_inputs_without_a_walk() {
        let (dir, out) = project();
        stamp(dir.path(), &out);
        assert!(!saved(dir.path()).walk_unchanged(dir.path()), "stamping changed the root just now");
        // Later (simulated by moving the root's time back), a walk finds the same files and
        // records the directories.
        let past = SystemTime::now() - Duration::from_secs(5);
        fs::File::open(dir.path()).unwrap().set_modified(past).unwrap();
        assert!(fresh(dir.path(), &out));
        assert!(saved(dir.path()).walk_unchanged(dir.path()), "no directory changed");
        let listed = saved(dir.path()).listed_inputs(dir.path()).expect("every input there");
        assert_eq!(
            listed.files.iter().map(|(key, _)| key.as_str()).collect::<Vec<_>>(),
            ["agent-bundle.config.ts", "src/a.ts"]
        );
        fs::write(dir.path().join("src/b.ts"), "").unwrap();
        assert!(!saved(dir.path()).walk_unchanged(dir.path()), "an added file changes its directory");
    }

    /// A folder of mode 000 (one this process may not list) is a type without permission
    /// bits: its state is still compared whole, not as a presence marker's.
    #[test]
    fn a_folder_of_mode_000_keeps_its_whole_state() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let locked = dir.path().join("locked");
        fs::create_dir(&locked).unwrap();
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
        let recorded = state("locked".into(), &locked).unwrap();
        assert!(!recorded.is_presence());
        assert!(unchanged(std::slice::from_ref(&recorded), dir.path()));
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!unchanged(&[recorded], dir.path()), "a change of mode is seen");
        let marker = FileState::presence("locked".into(), &locked);
        assert!(marker.is_presence() && unchanged(&[marker], dir.path()));
    }

    #[test]
    fn any_entry_added_or_removed_in_the_artifact_or_an_edited_input_is_seen() {
        let changes: [fn(&Path, &Path); 9] = [
            |_, out| fs::remove_file(out.join("hooks/a.mjs")).unwrap(),
            |_, out| fs::create_dir(out.join("hooks/new")).unwrap(),
            |_, out| fs::remove_dir_all(out).unwrap(),
            |root, _| fs::write(root.join("agent-bundle.config.ts"), "export default { };\n").unwrap(),
            |root, _| fs::write(root.join("src/b.ts"), "").unwrap(),
            |root, _| fs::remove_file(root.join("src/a.ts")).unwrap(),
            |root, _| {
                fs::create_dir_all(root.join("src/lib"))
                    .and_then(|()| fs::write(root.join("src/lib/c.ts"), ""))
                    .unwrap()
            },
            |root, _| fs::rename(root.join("src/a.ts"), root.join("a.ts")).unwrap(),
            // Same size, its old modification time kept (`cp -p`, `rsync -t`).
            |root, _| {
                let path = root.join("src/a.ts");
                let modified = fs::metadata(&path).unwrap().modified().unwrap();
                fs::write(&path, "export default 2;\n").unwrap();
                fs::File::options().write(true).open(&path).unwrap().set_modified(modified).unwrap();
            },
        ];
        for (i, change) in changes.iter().enumerate() {
            let (dir, out) = project();
            stamp(dir.path(), &out);
            change(dir.path(), &out);
            assert!(!fresh(dir.path(), &out), "change {i} went unseen");
        }
    }

    #[test]
    fn an_artifact_another_build_published_in_between_is_never_stamped() {
        let (dir, out) = project();
        stamp(dir.path(), &out);
        let before = Snapshot::take(dir.path(), &out).unwrap();
        let clean = clean(&out);
        fs::write(out.join(MANIFEST_FILE), "{\"another\":1}").unwrap();
        save(dir.path(), &out, "settings", before, summary(), &clean).unwrap();
        assert!(!stamp_path(dir.path()).exists(), "the earlier stamp is gone and no other was saved");
    }

    fn stale_stamp(root: &Path, out: &Path) -> Stamp {
        match check(root, out, "settings").unwrap() {
            Found::Stale(_, Some(stamp)) => stamp,
            _ => panic!("a stale project with a stamp"),
        }
    }

    #[test]
    fn a_stamp_vouches_only_for_its_own_untouched_artifact_whatever_the_inputs() {
        let (dir, out) = project();
        stamp(dir.path(), &out);
        let manifest = Hash::of(b"{}");
        fs::write(dir.path().join("src/a.ts"), "export default 2;\n").unwrap();
        let previous = stale_stamp(dir.path(), &out);
        assert!(previous.vouches_for(&out, &manifest));
        assert!(!previous.vouches_for(&out, &Hash::of(b"{\"other\":1}")), "another manifest");
        fs::write(out.join("hooks/b.mjs"), "b").unwrap();
        assert!(!previous.vouches_for(&out, &manifest), "an entry added to the artifact");
    }

    #[test]
    fn renewing_records_the_inputs_now_unless_the_artifact_changed() {
        let (dir, out) = project();
        stamp(dir.path(), &out);
        let clean = clean(&out);
        let past = SystemTime::now() - Duration::from_secs(5);
        fs::File::options().append(true).open(dir.path().join("src/a.ts")).unwrap().set_modified(past).unwrap();
        let (previous, now) = (stale_stamp(dir.path(), &out), Snapshot::take(dir.path(), &out).unwrap());
        assert_eq!(renew(dir.path(), &out, previous, &clean, now), Some(summary()));
        assert!(fresh(dir.path(), &out), "the renewed stamp answers");

        let earlier = past - Duration::from_secs(1);
        fs::File::options().append(true).open(dir.path().join("src/a.ts")).unwrap().set_modified(earlier).unwrap();
        let (previous, now) = (stale_stamp(dir.path(), &out), Snapshot::take(dir.path(), &out).unwrap());
        fs::remove_file(out.join("hooks/a.mjs")).unwrap();
        assert_eq!(renew(dir.path(), &out, previous, &clean, now), None);
        assert!(!fresh(dir.path(), &out), "nothing was renewed");
    }

    #[test]
    fn a_walk_finds_the_inputs_in_the_order_a_stamp_records_them() {
        let (dir, out) = project();
        // Walked, `src/a.ts` comes before `src-x.ts`; by key, after it.
        fs::write(dir.path().join("src-x.ts"), "export default 3;\n").unwrap();
        let past = SystemTime::now() - Duration::from_secs(10);
        for path in ["src-x.ts", ""] {
            fs::File::open(dir.path().join(path)).unwrap().set_modified(past).unwrap();
        }
        let mut before = Snapshot::take(dir.path(), &out).unwrap();
        before.add_outside(Vec::new());
        save(dir.path(), &out, "settings", before, summary(), &clean(&out)).unwrap();
        // The walk's directories no longer hold (an entry came and went): the check walks.
        fs::write(dir.path().join("scratch"), "").unwrap();
        fs::remove_file(dir.path().join("scratch")).unwrap();
        assert!(fresh(dir.path(), &out));
    }

    #[test]
    fn a_just_modified_input_is_never_trusted() {
        let (dir, out) = project();
        fs::write(dir.path().join("agent-bundle.config.ts"), "export default {};\n").unwrap();
        stamp(dir.path(), &out);
        assert!(!fresh(dir.path(), &out), "inside the racy window");
    }
}
