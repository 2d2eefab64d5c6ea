//! The only place that reads the project from disk: it walks the project root and turns
//! every file into a salsa input, setting an input only when its bytes changed (setters do
//! not compare, and an unneeded write would invalidate everything that read the file).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, Metadata};
use std::io::{self, Read, Seek};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use salsa::Setter;

use crate::db::{Database, Project, Settings, SourceFile};
use crate::emit::MANIFEST_FILE;
use crate::stamp::FileState;

/// Files read from disk: project-relative path → (bytes, executable).
pub type DiskFiles = BTreeMap<String, (FileBytes, bool)>;

/// An input file's bytes, or why they could not be read. A project may hold files this
/// process cannot read (a `.env` of another user's, a container's data): the build reports
/// one only where it needs it, and builds without it elsewhere.
pub type FileBytes = Result<Arc<[u8]>, Unreadable>;

/// Why an input file could not be read: the system's message.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Unreadable(pub Arc<str>);

impl Unreadable {
    /// The error's message for the file `path`.
    pub fn message(&self, path: &str) -> String {
        format!("cannot read `{path}`: {}", self.0)
    }

    /// What to do about a file the build needs and does not read.
    pub fn help(&self) -> &'static str {
        if *self.0 == *TOO_LARGE {
            "no plugin needs a file this large: leave it out of the project, or out of the payload"
        } else {
            "the build needs this file: make it readable for the user running agent-bundle"
        }
    }
}

/// The most bytes a file may hold to be read (an input, a file of an artifact): past it, a
/// build that needs the file says so (AB4008). Why a bound: reading a file takes its size
/// in memory at once, and a sparse file claims whatever size it likes.
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// Why a file past [`MAX_FILE_BYTES`] is not read.
const TOO_LARGE: &str = "it holds more than 1 GiB, the most a file read by agent-bundle may";

/// Directory names never read as project inputs: version control, dependencies (a Python
/// virtual environment's too), build outputs, this tool's state. A payload holding one would
/// not arrive whole (AB4745).
const SKIPPED_DIRS: [&str; 6] = [".git", "node_modules", "target", crate::stamp::STATE_DIR, ".jj", ".venv"];
/// Caches a tool fills as it runs and rebuilds when they are gone (Python's bytecode, its
/// test runner's and type checkers' state): never inputs, and left out of a payload without
/// a word, as a package leaves them out. Read, they would rebuild the artifact whenever a
/// payload's script ran, and make it differ from machine to machine.
const CACHE_DIRS: [&str; 4] = ["__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"];

/// One project as the loader knows it: the salsa database holding its inputs, and what the
/// last walk listed, read and could not read; long-lived in watch mode, where each sync sets
/// only the inputs whose bytes changed.
pub struct LoadedProject {
    pub db: Database,
    pub root: PathBuf,
    project: Option<Project>,
    /// Project-relative paths whose input was added, changed or removed by the last sync.
    changed: Vec<String>,
    /// Project-relative keys of the directories the last walk listed (`""` is the root): a
    /// file is an input exactly when it lies directly in one of them.
    listed: BTreeSet<String>,
    /// The directories outside the root that modules import from, listed on demand, by key
    /// (`../shared`): their module files are inputs too.
    outside: BTreeMap<String, OutsideEntry>,
    /// Project-relative keys of the folders the last walk could not list.
    unlistable: BTreeSet<String>,
    /// The payload sources of the last compile (`note_payload_sources`).
    payload_sources: Vec<String>,
}

/// A listed outside directory.
struct OutsideEntry {
    /// Where it is; `None` for a key no project may read (see `outside_path`).
    path: Option<PathBuf>,
    /// Whether a directory was there.
    found: bool,
}

/// A directory outside the project root that its modules import from (in a monorepo, the
/// code its plugins share). No walk of the project reaches it: the build lists it when an
/// import points into it (`build::compile_reaching_out`), on its own, never recursively,
/// and only the module files directly in it become inputs.
#[derive(Clone)]
pub struct OutsideDir {
    /// Relative to the project root: `../shared`.
    pub key: String,
    /// What the listing found at its path.
    pub(crate) state: OutsideState,
    /// Its module files (key, state when read).
    pub files: Vec<(String, Metadata)>,
}

/// What was at an outside directory's path when it was listed.
#[derive(Clone)]
pub(crate) enum OutsideState {
    /// A directory a project may read, with its state before the listing.
    Dir(Metadata),
    /// A directory this process may not list or search (or may not reach: `None`): nothing
    /// in it is read, and its state says when that changes.
    Unlistable(Option<Metadata>),
    /// No such directory: what was there instead (a symbolic link, a file, an artifact, or
    /// nothing), for the stamp to see it change.
    Instead(FileState),
    /// Nothing looked at: a key no project may read (a skipped folder, the root's inside).
    Forbidden,
}

impl OutsideDir {
    /// Whether a directory a project may read was there.
    pub fn is_found(&self) -> bool {
        matches!(self.state, OutsideState::Dir(_))
    }

    /// Whether a directory was there that this process may not list.
    pub fn is_unlistable(&self) -> bool {
        matches!(self.state, OutsideState::Unlistable(_))
    }
}

/// Called with every directory whose entries decide the inputs, before a walk reads them:
/// each directory it lists, and each built artifact it skips (its manifest going makes it a
/// folder of inputs). Watch mode watches it first, so a change after the reading is never
/// missed.
pub type BeforeListing<'a> = &'a mut dyn FnMut(&Path);

impl LoadedProject {
    pub fn new(db: Database, root: PathBuf) -> Self {
        LoadedProject {
            db,
            root,
            project: None,
            changed: Vec::new(),
            listed: BTreeSet::new(),
            outside: BTreeMap::new(),
            unlistable: BTreeSet::new(),
            payload_sources: Vec::new(),
        }
    }

    /// Reads the project tree (skipping `exclude`, e.g. the output directory) into the inputs.
    pub fn load(
        &mut self,
        settings: Settings,
        exclude: &[PathBuf],
        before_listing: BeforeListing,
    ) -> io::Result<Project> {
        let tree = walk_inputs(&self.root, exclude, before_listing)?;
        self.unlistable = tree.unlistable_keys().into_iter().collect();
        self.listed = tree.listed.into_iter().map(|(key, _)| key).collect();
        let mut disk = read_files(&tree.files)?;
        // The outside directories found before are listed again with it: a read-whole
        // follows an error or lost events, so their files may have changed unseen, and
        // those that did not stay unchanged inputs (reported and re-run as nothing). The
        // others the build lists again if its imports still name them.
        let found: Vec<String> =
            self.outside.iter().filter(|(_, entry)| entry.found).map(|(key, _)| key.clone()).collect();
        self.outside.clear();
        for key in &found {
            self.list_outside(key, &mut disk, before_listing)?;
        }
        Ok(self.sync(disk, settings))
    }

    /// Takes outside directories as listed, each found or not (a stamp named them, or they
    /// were listed before it was made), so the build does not list them again;
    /// the next `sync` is given their files.
    pub fn assume_outside(&mut self, dirs: impl IntoIterator<Item = (String, bool)>) {
        for (key, found) in dirs {
            let path = outside_path(&self.root, &key);
            self.outside.insert(key, OutsideEntry { path, found });
        }
    }

    /// Whether the outside directory `key` was listed already (found or not).
    pub fn lists_outside(&self, key: &str) -> bool {
        self.outside.contains_key(key)
    }

    /// Whether the outside directory `key` was listed and nothing was there.
    pub fn found_nothing_at(&self, key: &str) -> bool {
        self.outside.get(key).is_some_and(|entry| !entry.found)
    }

    /// Lists the outside directories `keys` (again, for those listed already) and adds their
    /// module files to the inputs.
    pub fn reach_out(
        &mut self,
        keys: &[String],
        before_listing: BeforeListing,
    ) -> io::Result<(Project, Vec<OutsideDir>)> {
        let project = self.project.expect("a project is loaded before its imports are followed");
        let mut disk = self.inputs();
        let mut listed = Vec::new();
        for key in keys {
            listed.push(self.list_outside(key, &mut disk, before_listing)?);
        }
        let settings = project.settings(&self.db).clone();
        // What changed before, in the same build, still changed.
        let before = std::mem::take(&mut self.changed);
        let project = self.sync(disk, settings);
        self.changed.extend(before);
        self.changed.sort();
        self.changed.dedup();
        Ok((project, listed))
    }

    /// Lists the outside directory `key` into `disk` (replacing what it held there).
    fn list_outside(
        &mut self,
        key: &str,
        disk: &mut DiskFiles,
        before_listing: BeforeListing,
    ) -> io::Result<OutsideDir> {
        disk.retain(|file, _| parent_key(file) != key);
        let (dir, files) = list_outside_dir(&self.root, key, before_listing)?;
        self.assume_outside([(key.to_owned(), dir.is_found())]);
        disk.extend(files);
        Ok(dir)
    }

    /// Whether `path` is or holds a listed outside directory (found or not), or lies directly
    /// in one that was found: a change there can change the inputs.
    pub fn in_outside_dir(&self, path: &Path) -> bool {
        self.outside_dirs_at(path).next().is_some()
    }

    /// The keys of the listed outside directories that `path` is or holds (found or not),
    /// or lies directly in as what a listing reads there: a module file (`shared/log.js` is
    /// in `../shared` and may be `../shared/log.js`; an artifact published there is none),
    /// or a manifest, which makes the folder an artifact nothing is read from. Why the ones
    /// below it: a change of `shared` itself (renamed away and back, its mode) drops the
    /// watches below it, and its subfolders may be others now.
    fn outside_dirs_at<'a>(&'a self, path: &'a Path) -> impl Iterator<Item = &'a String> + 'a {
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
        let module = crate::bundle::is_importable_file(name)
            && !fs::symlink_metadata(path).is_ok_and(|metadata| metadata.is_dir());
        let manifest = name == MANIFEST_FILE;
        let holds = move |entry: &OutsideEntry| {
            entry.path.as_deref().is_some_and(|dir| {
                dir.starts_with(path) || (path.parent() == Some(dir) && ((entry.found && module) || manifest))
            })
        };
        self.outside.iter().filter(move |(_, entry)| holds(entry)).map(|(key, _)| key)
    }

    /// The inputs as files (none before the first load).
    pub fn inputs(&self) -> DiskFiles {
        let Some(project) = self.project else { return DiskFiles::new() };
        project
            .files(&self.db)
            .iter()
            .map(|(path, file)| (path.clone(), (file.bytes(&self.db).clone(), file.executable(&self.db))))
            .collect()
    }

    /// Re-reads only `changed` paths (files or directories, created, modified or removed),
    /// as reported by the file watcher; everything else keeps its input untouched. A path
    /// counts only where a full walk would find it: directly in a listed directory.
    pub fn refresh(
        &mut self,
        changed: &[PathBuf],
        settings: Settings,
        exclude: &[PathBuf],
        before_listing: BeforeListing,
    ) -> io::Result<Project> {
        if self.project.is_none() || self.listed.is_empty() {
            return self.load(settings, exclude, before_listing);
        }
        let mut disk = self.inputs();
        let mut outside = BTreeSet::new();
        for path in changed {
            let at: Vec<String> = self.outside_dirs_at(path).cloned().collect();
            if !at.is_empty() {
                outside.extend(at);
                continue;
            }
            let path = as_walked(&self.root, path);
            let Some(key) = relative_key(&self.root, path).filter(|key| !key.is_empty()) else {
                continue;
            };
            if lies_in_skipped_dir(Path::new(&key), exclude.iter().any(|e| path.starts_with(e))) {
                continue;
            }
            if !self.reads_at(&key, path) {
                // A built artifact, or a tagged cache, is watched, as a walk watches it (a
                // change in a payload or where routes are is one: watch mode forgot the
                // watches of what changed), for its mark may go.
                if self.skips_artifact_at(path) || is_tagged_cache(path) {
                    before_listing(path);
                }
                continue;
            }
            disk.retain(|existing, _| !is_at_or_below(existing, &key));
            self.listed.retain(|dir| !is_at_or_below(dir, &key));
            self.unlistable.retain(|dir| !is_at_or_below(dir, &key));
            if fs::symlink_metadata(path).is_ok_and(|metadata| metadata.is_dir()) {
                let skipped = path.file_name().is_some_and(is_skipped_dir)
                    || watched_tagged_cache(path, before_listing).is_some()
                    || is_watched_artifact(path, before_listing);
                if skipped {
                    continue;
                }
                if !may_list(path) {
                    self.unlistable.insert(key);
                    continue;
                }
                let tree = walk_inputs(path, exclude, before_listing)?;
                self.unlistable.extend(tree.unlistable.iter().map(|(sub, _)| joined(&key, sub)));
                for (sub, file) in read_files(&tree.files)? {
                    disk.insert(format!("{key}/{sub}"), file);
                }
                self.listed.extend(tree.listed.into_iter().map(|(sub, _)| joined(&key, &sub)));
            } else if let Some(file) = read_input(path)? {
                disk.insert(key, file);
            }
        }
        for key in outside {
            self.list_outside(&key, &mut disk, before_listing)?;
        }
        Ok(self.sync(disk, settings))
    }

    /// Whether a change at `path` (below the root) can change the inputs: `refresh` reads it.
    /// Watch mode asks before it builds, so that a nested project publishing its artifact
    /// (an event in a folder no walk lists) costs this project no build.
    pub fn may_change_inputs(&self, path: &Path) -> bool {
        let path = as_walked(&self.root, path);
        match relative_key(&self.root, path) {
            _ if self.listed.is_empty() => true,
            Some(key) => {
                key.is_empty()
                    || self.reads_at(&key, path)
                    || self.may_lie_in_payload(path)
                    || may_hide_route(&key, path)
                    || self.names_absent_handler(&key)
            }
            // A name that is not UTF-8 is no input anywhere, and a change in a payload.
            None => self.may_lie_in_payload(path),
        }
    }

    /// Whether `key` is, or leads to, a handler the last compile found nothing to read at:
    /// what comes there (a link, a pipe) is no input, but changes what the build says of it.
    fn names_absent_handler(&self, key: &str) -> bool {
        self.project.is_some_and(|project| {
            let absent = &crate::db::normalize(&self.db, project).absent_handlers;
            absent.iter().any(|handler| is_at_or_below(&handler.path, key))
        })
    }

    /// Whether `path` is, or was (it is gone), something in a payload that a walk passes over
    /// (a symbolic link, a special file, a folder never read, an artifact): it fails the
    /// build (`build::check_payloads_whole`), which only a compile can tell. A cache folder,
    /// and anything below one, is no loss (a link or a pipe of a cache's name is).
    fn may_lie_in_payload(&self, path: &Path) -> bool {
        let below_cache = || {
            let Some(folder) = path.strip_prefix(&self.root).ok().and_then(Path::parent) else { return false };
            let tagged = || self.root.join(folder).ancestors().take(folder.iter().count()).any(is_tagged_cache);
            folder.iter().any(is_cache_dir) || tagged()
        };
        let is_cache = |metadata: &fs::Metadata| metadata.is_dir() && is_cache_folder(path);
        let passed_over = |metadata: fs::Metadata| !(metadata.is_file() || is_cache(&metadata));
        self.lies_in_payload(path) && !below_cache() && fs::symlink_metadata(path).map_or(true, passed_over)
    }

    /// Whether `path` lies in a payload's source (as the last compile knew them).
    fn lies_in_payload(&self, path: &Path) -> bool {
        let Ok(relative) = path.strip_prefix(&self.root) else { return false };
        let key = relative.to_string_lossy();
        self.payload_sources.iter().any(|source| is_at_or_below(&key, source))
    }

    /// Whether `path` lies where a build must read everything: in a payload's source (as the
    /// last compile knew them), or where a route may be.
    pub fn must_be_read_whole(&self, path: &Path) -> bool {
        let route = relative_key(&self.root, path).is_some_and(|key| crate::routes::may_hold_route(&key));
        self.lies_in_payload(path) || route
    }

    /// Whether a change at `path` is one no input shows, where a build must read all: a
    /// link, a special file or a folder no walk reads, there now. (A file there is an input,
    /// whose bytes tell; what went changes what the build says anyway: it failed while that
    /// was there.)
    pub fn changed_unread(&self, path: &Path) -> bool {
        self.must_be_read_whole(path) && fs::symlink_metadata(path).is_ok() && !walk_reads(path)
    }

    /// Takes the payload sources of the last compile's model (project-relative folders).
    pub fn note_payload_sources(&mut self, sources: Vec<String>) {
        self.payload_sources = sources;
    }

    /// Whether `path` is a built artifact directly in a listed folder, which a walk skips and
    /// watch mode watches: one replaced by a new build (its watch went with the old folder)
    /// is watched again.
    pub fn skips_artifact_at(&self, path: &Path) -> bool {
        let Some(key) = relative_key(&self.root, path) else { return false };
        !key.is_empty() && self.listed.contains(parent_key(&key)) && holds_manifest_file(path)
    }

    /// Whether the path `key` counts where a walk would find it: directly in a listed
    /// directory, where inputs lay before (they may be gone now) or a walk reads what is
    /// there now. Nothing lies below a folder that was not listed: a walk lists a folder's
    /// parents first.
    fn reads_at(&self, key: &str, path: &Path) -> bool {
        let held_inputs = || {
            self.listed.contains(key)
                || self.unlistable.contains(key)
                || self.project.is_some_and(|project| project.files(&self.db).contains_key(key))
        };
        self.listed.contains(parent_key(key)) && (held_inputs() || walk_reads(path))
    }

    /// The folders of the project this process may not list, as of the last load or refresh.
    pub fn unlistable(&self) -> impl Iterator<Item = &String> {
        self.unlistable.iter()
    }

    /// The paths the last load or refresh found changed (all of them on the first load).
    pub fn changed(&self) -> &[String] {
        &self.changed
    }

    /// Makes the inputs equal to `disk`, touching only what differs.
    pub fn sync(&mut self, disk: DiskFiles, settings: Settings) -> Project {
        self.changed.clear();
        let Some(project) = self.project else {
            self.changed = disk.keys().cloned().collect();
            let files = disk
                .into_iter()
                .map(|(path, (bytes, executable))| (path.clone(), SourceFile::new(&self.db, path, bytes, executable)))
                .collect();
            let project = Project::new(&self.db, Arc::new(files), Arc::new(self.outside_keys()), settings);
            self.project = Some(project);
            return project;
        };
        let current = project.files(&self.db).clone();
        let mut files = BTreeMap::new();
        for (path, (bytes, executable)) in disk {
            let file = match current.get(&path) {
                Some(&file) => {
                    // Files a refresh did not re-read are the input's own bytes: no compare.
                    let new_bytes = match (file.bytes(&self.db), &bytes) {
                        (Ok(old), Ok(new)) => !Arc::ptr_eq(old, new) && old != new,
                        (old, new) => old != new,
                    };
                    let new_mode = file.executable(&self.db) != executable;
                    if new_bytes {
                        // (The setter gives back the old bytes, or why they could not be read.)
                        let _old = file.set_bytes(&mut self.db).to(bytes);
                    }
                    if new_mode {
                        file.set_executable(&mut self.db).to(executable);
                    }
                    if new_bytes || new_mode {
                        self.changed.push(path.clone());
                    }
                    file
                }
                None => {
                    self.changed.push(path.clone());
                    SourceFile::new(&self.db, path.clone(), bytes, executable)
                }
            };
            files.insert(path, file);
        }
        self.changed.extend(current.keys().filter(|path| !files.contains_key(*path)).cloned());
        self.changed.sort();
        if files.keys().ne(current.keys()) {
            project.set_files(&mut self.db).to(Arc::new(files));
        }
        if *project.settings(&self.db) != settings {
            project.set_settings(&mut self.db).to(settings);
        }
        let outside = self.outside_keys();
        if **project.outside_dirs(&self.db) != outside {
            project.set_outside_dirs(&mut self.db).to(Arc::new(outside));
        }
        project
    }

    /// The outside directories listed, found or not, by key.
    pub fn outside_keys(&self) -> BTreeSet<String> {
        self.outside.keys().cloned().collect()
    }
}

/// The listed files (project-relative key, path) by key, with their bytes (or why they
/// could not be read) and executable bit; a file that vanished meanwhile is left out.
pub fn read_files(files: &[(String, PathBuf)]) -> io::Result<DiskFiles> {
    let mut disk = DiskFiles::new();
    for (key, path) in files {
        if let Some(file) = read_input(path)? {
            disk.insert(key.clone(), file);
        }
    }
    Ok(disk)
}

/// What the input walk of a project found.
#[derive(Default)]
pub struct InputTree {
    /// Every input file (project-relative POSIX key, path): depth first, in name order.
    pub files: Vec<(String, PathBuf)>,
    /// Every directory the walk listed (key, metadata taken *before* it was listed).
    listed: Vec<(String, Metadata)>,
    /// Every directory skipped for holding a manifest (key, metadata).
    artifacts: Vec<(String, Metadata)>,
    /// Every folder skipped for being tagged as a cache, and its tag (key, metadata): the
    /// tag going, or made no tag, makes it a folder of inputs.
    tagged_caches: Vec<(String, Metadata)>,
    /// Every folder this process may not list (key, metadata): nothing in it is an input,
    /// until its mode changes.
    pub unlistable: Vec<(String, Metadata)>,
    /// Whether some directory's name is not UTF-8 (it has no key; nothing in it is an input).
    unnamed_dirs: bool,
    /// What the walk passed over that is no input (a symbolic link, a special file, a
    /// skipped folder, an artifact, a folder it may not list, a name not UTF-8), by key: what
    /// a payload would lose (`left_out_of_payload` walks one so), which only a compile can
    /// tell.
    pub passed_over: Vec<String>,
}

impl InputTree {
    /// What a build of the project walked may miss, by key: what it passed over, and the
    /// tagged caches where a route may be (no loss in a payload, a route lost there:
    /// `build::check_routes_whole`). Only a compile tells.
    pub fn losses(&self) -> Vec<String> {
        let caches = self.tagged_caches.iter().map(|(key, _)| key).filter(|key| crate::routes::may_hold_route(key));
        self.passed_over.iter().chain(caches).cloned().collect()
    }

    /// The directories whose states prove the walk would find the same files while they
    /// hold: a directory's time changes whenever an entry is added, removed or renamed (and
    /// its change time when its mode does). None when some directory has no key (it cannot
    /// be checked again).
    pub fn dir_states(&self) -> impl Iterator<Item = &(String, Metadata)> {
        let skipped = self.artifacts.iter().chain(&self.tagged_caches);
        self.listed.iter().chain(skipped).chain(&self.unlistable).filter(|_| !self.unnamed_dirs)
    }

    /// The keys of the folders this process may not list.
    pub fn unlistable_keys(&self) -> Vec<String> {
        self.unlistable.iter().map(|(key, _)| key.clone()).collect()
    }
}

/// Walks the inputs below `root`.
pub fn input_tree(root: &Path, exclude: &[PathBuf]) -> io::Result<InputTree> {
    walk_inputs(root, exclude, &mut |_| {})
}

fn walk_inputs(root: &Path, exclude: &[PathBuf], before_listing: BeforeListing) -> io::Result<InputTree> {
    let mut tree = InputTree::default();
    walk_dir(root, String::new(), exclude, before_listing, &mut tree)?;
    // By key, as stamps record them (the walk yields `src/a.ts` before `src-x.ts`).
    tree.files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(tree)
}

/// Lists `dir` (key `key`) and everything below it that can hold inputs. Its metadata is
/// taken before the listing, so a change during the listing leaves the recorded state
/// stale, never the reverse. A subdirectory that vanished meanwhile holds no input, nor
/// does one this process may not list (a container's data folder): the build goes on
/// without it, and says so.
fn walk_dir(
    dir: &Path,
    key: String,
    exclude: &[PathBuf],
    before_listing: BeforeListing,
    tree: &mut InputTree,
) -> io::Result<()> {
    // The error names the directory (keeping its kind: a vanished one is skipped below).
    let context = |error: io::Error| io::Error::new(error.kind(), format!("cannot list {}: {error}", dir.display()));
    let metadata = fs::symlink_metadata(dir).map_err(context)?;
    if !key.is_empty() && !may_list(dir) {
        tree.passed_over.push(key.clone());
        tree.unlistable.push((key, metadata));
        return Ok(());
    }
    before_listing(dir);
    let mut entries = fs::read_dir(dir).and_then(Iterator::collect::<io::Result<Vec<_>>>).map_err(context)?;
    entries.sort_unstable_by_key(fs::DirEntry::file_name);
    tree.listed.push((key.clone(), metadata));
    for entry in entries {
        let (path, file_type) = (entry.path(), entry.file_type().map_err(context)?);
        if exclude.contains(&path) {
            // The artifact being written: an output.
            continue;
        }
        let passed_over =
            |tree: &mut InputTree| tree.passed_over.push(joined(&key, &entry.file_name().to_string_lossy()));
        let Some(name) = entry.file_name().to_str().map(|name| joined(&key, name)) else {
            tree.unnamed_dirs |= file_type.is_dir();
            passed_over(tree);
            continue;
        };
        if file_type.is_file() {
            tree.files.push((name, path));
        } else if file_type.is_dir() && is_cache_dir(&entry.file_name()) {
            // A tool's cache by its name: nothing a payload would miss.
        } else if file_type.is_dir()
            && !is_skipped_dir(&entry.file_name())
            && let Some(states) = watched_tagged_cache(&path, before_listing)
        {
            // Nothing a payload would miss either (a route would: `InputTree::losses`).
            let tag = format!("{name}/{CACHE_TAG}");
            tree.tagged_caches.extend([(name, states.0), (tag, states.1)]);
        } else if !file_type.is_dir() || is_skipped_dir(&entry.file_name()) {
            // Symbolic links and special files are not inputs; skipped folders hold none.
            passed_over(tree);
        } else if is_watched_artifact(&path, before_listing) {
            passed_over(tree);
            if let Ok(metadata) = entry.metadata() {
                tree.artifacts.push((name, metadata));
            }
        } else {
            match walk_dir(&path, name, exclude, before_listing, tree) {
                Err(error) if error.kind() == io::ErrorKind::NotFound => {}
                result => result?,
            }
        }
    }
    Ok(())
}

/// What lies below the payload source `source` (a project-relative folder) that the walk
/// does not take as an input, so no artifact carries it, with why: the walk of the payload's
/// folder itself (`InputTree::passed_over`), so the two never disagree. By key. (A source it
/// cannot walk holds no files either, which normalizing says.)
pub fn left_out_of_payload(root: &Path, source: &str, exclude: &[PathBuf]) -> Vec<(String, &'static str)> {
    passed_over_below(root, source, exclude, false)
}

/// What a walk of the project folder `folder` passes over, by key with why, sorted; the
/// tagged caches in it too when they are a loss there.
fn passed_over_below(root: &Path, folder: &str, exclude: &[PathBuf], caches_lost: bool) -> Vec<(String, &'static str)> {
    let walked = root.join(folder);
    let Ok(tree) = input_tree(&walked, exclude) else { return Vec::new() };
    let caches = tree.tagged_caches.iter().map(|(key, _)| key).filter(|key| caches_lost && !key.ends_with(CACHE_TAG));
    let mut left_out: Vec<_> = tree
        .passed_over
        .iter()
        .map(|key| (joined(folder, key), why_passed_over(&walked.join(key))))
        .chain(caches.map(|key| (joined(folder, key), "a cache folder, tagged by a CACHEDIR.TAG")))
        .collect();
    left_out.sort_unstable();
    left_out
}

/// What at or below the project folder `folder` (`src/events`) the walk of the project
/// does not read, with why: each folder on the way to it that it passes over (a link that
/// leads to it, a folder it may not list, an artifact, a tagged cache), then what a walk of
/// `folder` passes over, tagged caches too (no loss in a payload). Empty where there is no
/// such folder.
pub fn left_out_of_folder(root: &Path, folder: &str, exclude: &[PathBuf]) -> Vec<(String, &'static str)> {
    match passed_over_on_the_way(root, folder) {
        Ok(Some(passed_over)) => vec![passed_over],
        Ok(None) => passed_over_below(root, folder, exclude, true),
        Err(()) => Vec::new(),
    }
}

/// Why the walk passes over a link (what a caller tells apart: a link is followed nowhere).
pub const A_SYMBOLIC_LINK: &str = "a symbolic link";
/// The walk's reason for a folder it passes over since it may not list it.
pub const A_FOLDER_NOT_LISTED: &str = "a folder this process may not list";

/// The first folder at or above the project folder `folder` that the walk passes over (a
/// link that leads to it, a folder it may not list, an artifact, a tagged cache), with why;
/// `Err` where there is no such folder.
pub fn passed_over_on_the_way(root: &Path, folder: &str) -> Result<Option<(String, &'static str)>, ()> {
    let mut key = String::new();
    for part in folder.split('/') {
        key = joined(&key, part);
        let path = root.join(&key);
        let why = match fs::symlink_metadata(&path) {
            // (Through a link that leads to no such folder, nothing is lost.)
            Ok(metadata) if metadata.is_symlink() && root.join(folder).is_dir() => A_SYMBOLIC_LINK,
            Ok(metadata) if metadata.is_dir() && !may_list(&path) => A_FOLDER_NOT_LISTED,
            Ok(metadata) if metadata.is_dir() && holds_manifest_file(&path) => {
                "a built artifact, holding an agent-bundle.manifest.json"
            }
            Ok(metadata) if metadata.is_dir() && is_tagged_cache(&path) => "a cache folder, tagged by a CACHEDIR.TAG",
            Ok(metadata) if metadata.is_dir() => continue,
            _ => return Err(()),
        };
        return Ok(Some((key, why)));
    }
    Ok(None)
}

/// Why the walk passed over what is at `path` (see `InputTree::passed_over`; a name that is
/// not UTF-8 has its key, and `path`, written with U+FFFD, so nothing is at `path`).
fn why_passed_over(path: &Path) -> &'static str {
    match fs::symlink_metadata(path) {
        Err(_) if path.to_string_lossy().contains('\u{FFFD}') => "a name that is not UTF-8",
        Err(_) => "an entry that went while the build read it",
        Ok(metadata) if metadata.is_symlink() => A_SYMBOLIC_LINK,
        Ok(metadata) if !metadata.is_dir() => "a special file: a FIFO, a socket or a device",
        _ if path.file_name().is_some_and(is_skipped_dir) => "a folder agent-bundle never reads",
        _ if holds_manifest_file(path) => "a built artifact, holding an agent-bundle.manifest.json",
        _ => A_FOLDER_NOT_LISTED,
    }
}

/// Whether what is, or was, at `key` (`path`) is something a walk passes over where a route
/// may be: a link, a special file, a folder it never enters or may not list (a tagged cache
/// too, no loss in a payload), gone: it fails the build (`build::check_routes_whole`).
fn may_hide_route(key: &str, path: &Path) -> bool {
    crate::routes::may_hold_route(key) && !walk_reads(path)
}

/// Whether this process may list the folder at `path` and look into what it holds (read and
/// search permission): one it may not holds no input it could read.
fn may_list(path: &Path) -> bool {
    let Ok(path) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else { return false };
    // SAFETY: a NUL-terminated path, read during the call only.
    let denied =
        unsafe { libc::faccessat(libc::AT_FDCWD, path.as_ptr(), libc::R_OK | libc::X_OK, libc::AT_EACCESS) } != 0;
    !(denied && io::Error::last_os_error().kind() == io::ErrorKind::PermissionDenied)
}

/// Whether a walk of the folder holding `path` reads what is there now: a file, or a folder
/// other than one that never holds inputs or a built artifact (a file named `target` is an
/// input). Nothing there, a link or a special file: nothing to read.
fn walk_reads(path: &Path) -> bool {
    match fs::symlink_metadata(path) {
        Ok(metadata) if metadata.is_dir() => !is_never_entered(path) && !holds_manifest_file(path),
        Ok(metadata) => metadata.is_file(),
        Err(_) => false,
    }
}

/// The path whose change a change at `path` is, as a walk of `root` sees it: a manifest
/// or a cache's tag appearing, going or changing makes its folder an artifact or a cache, or
/// a folder of inputs (the root's own is a file like any: the project is never skipped).
fn as_walked<'a>(root: &Path, path: &'a Path) -> &'a Path {
    let marks_folder = |name: &std::ffi::OsStr| name == MANIFEST_FILE || name == CACHE_TAG;
    match path.parent() {
        Some(folder) if folder != root && path.file_name().is_some_and(marks_folder) => folder,
        _ => path,
    }
}

/// Whether the folder at `path` is a built artifact, shown to `before_listing` then (and
/// checked again after it: a manifest removed in between is never missed).
fn is_watched_artifact(path: &Path, before_listing: BeforeListing) -> bool {
    if !holds_manifest_file(path) {
        return false;
    }
    before_listing(path);
    holds_manifest_file(path)
}

/// A folder holding a manifest file is a built artifact: an output, never an input. (By the
/// file alone, whatever it holds: publishing, watch mode and the workspace search ask more,
/// `emit::manifest::holds_artifact`, a head a build writes, before replacing or skipping a
/// folder as theirs.)
fn holds_manifest_file(dir: &Path) -> bool {
    // Not through a link: the stamp records the states of entries, never of link targets.
    std::fs::symlink_metadata(dir.join(MANIFEST_FILE)).is_ok_and(|metadata| metadata.is_file())
}

/// `sub` (a key relative to `key`) as a key relative to the root.
fn joined(key: &str, sub: &str) -> String {
    match (key.is_empty(), sub.is_empty()) {
        (true, _) => sub.to_owned(),
        (_, true) => key.to_owned(),
        _ => format!("{key}/{sub}"),
    }
}

/// The key of the folder holding `key` (`""`, the root, for a key at the top).
pub(crate) fn parent_key(key: &str) -> &str {
    key.rsplit_once('/').map_or("", |(parent, _)| parent)
}

/// Whether the key `path` is `key` itself or lies below it.
pub(crate) fn is_at_or_below(path: &str, key: &str) -> bool {
    path.strip_prefix(key).is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The project-relative POSIX key of `path`; `None` when it is outside `root` or not UTF-8.
/// (A backslash is part of a name here, as the walk keeps it.)
fn relative_key(root: &Path, path: &Path) -> Option<String> {
    path.strip_prefix(root).ok()?.to_str().map(str::to_owned)
}

/// Whether a project-relative key lies above the project root.
pub fn is_outside(key: &str) -> bool {
    key == ".." || key.starts_with("../")
}

/// The path of the outside key `key` (the root is canonical, so `..` is its parent); `None`
/// when it climbs above `/`, passes through a folder that never holds inputs, or comes back
/// into the root (whose files have keys of their own: a file must not be two modules).
fn outside_path(root: &Path, key: &str) -> Option<PathBuf> {
    let mut path = root.to_path_buf();
    for part in key.split('/') {
        if part != ".." {
            path.push(part);
        } else if !path.pop() {
            return None;
        }
    }
    let skipped = Path::new(key).components().any(|part| is_skipped_dir(part.as_os_str()));
    (!path.starts_with(root) && !skipped).then_some(path)
}

/// Lists the outside directory `key` of the project at `root` and reads its module files.
pub fn list_outside_dir(root: &Path, key: &str, before_listing: BeforeListing) -> io::Result<(OutsideDir, DiskFiles)> {
    match outside_path(root, key) {
        Some(path) => {
            // A link on the way (`../linked/shared`, `linked` one) is followed; the folder
            // holding it says when it is pointed elsewhere.
            let beside_root = path.ancestors().take_while(|folder| !root.starts_with(folder));
            for link in beside_root.filter(|folder| folder.is_symlink()) {
                if let Some(holder) = link.parent() {
                    before_listing(holder);
                }
            }
            read_outside(&path, key, before_listing)
        }
        None => {
            let dir = OutsideDir { key: key.to_owned(), state: OutsideState::Forbidden, files: Vec::new() };
            Ok((dir, DiskFiles::new()))
        }
    }
}

/// Lists the outside directory at `path` (key `key`) and reads its module files.
fn read_outside(path: &Path, key: &str, before_listing: BeforeListing) -> io::Result<(OutsideDir, DiskFiles)> {
    let mut dir = OutsideDir { key: key.to_owned(), state: OutsideState::Forbidden, files: Vec::new() };
    let mut disk = DiskFiles::new();
    let context = |error: io::Error| io::Error::new(error.kind(), format!("cannot list {}: {error}", path.display()));
    // Nothing a project may read there, or nothing it may list: the nearest folder that
    // exists says when that changes (`../shared/util` with no `../shared` yet: `..` does; an
    // artifact's manifest going: the artifact, watched above; a folder one may not read
    // cannot be watched itself).
    let watch_above = |before_listing: BeforeListing| {
        if let Some(ancestor) = path.ancestors().skip(1).find(|ancestor| ancestor.is_dir()) {
            before_listing(ancestor);
        }
    };
    let metadata = match fs::symlink_metadata(path) {
        Ok(metadata) if metadata.is_dir() && !is_watched_artifact(path, before_listing) => Some(metadata),
        // Below a folder this process may not search: no state to take, nothing to list.
        Err(error) if error.kind() == io::ErrorKind::PermissionDenied => None,
        // A file or a loop where a folder would be on the way: nothing is there.
        Err(error)
            if !matches!(error.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory)
                && error.raw_os_error() != Some(libc::ELOOP) =>
        {
            return Err(context(error));
        }
        instead => {
            // What the stamp records: a link, a file, an artifact, or nothing.
            dir.state = OutsideState::Instead(match instead {
                Ok(metadata) => FileState::of(key.to_owned(), &metadata),
                Err(_) => FileState::absent(key.to_owned()),
            });
            watch_above(before_listing);
            return Ok((dir, disk));
        }
    };
    let listable = metadata.as_ref().is_some_and(|_| may_list(path));
    if !listable {
        watch_above(before_listing);
    }
    // (Asked again once watched, so that a change of mode meanwhile is not missed.)
    let metadata = match metadata {
        Some(metadata) if listable || may_list(path) => metadata,
        unlistable => {
            dir.state = OutsideState::Unlistable(unlistable);
            return Ok((dir, disk));
        }
    };
    before_listing(path);
    for entry in fs::read_dir(path).map_err(context)? {
        let entry = entry.map_err(context)?;
        let Some(name) =
            entry.file_name().to_str().filter(|name| crate::bundle::is_importable_file(name)).map(str::to_owned)
        else {
            continue;
        };
        if !entry.file_type()?.is_file() {
            continue;
        }
        // Taken first, for a file it may not read: its state says when that changes. (Gone
        // since the listing: nothing to read, as below.)
        let before = match entry.metadata() {
            Ok(before) => before,
            Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => return Err(context(error)),
        };
        let read = match read_file_and_state(&entry.path()) {
            Ok(read) => read.map(|(bytes, metadata)| (Ok(bytes), metadata)),
            Err(error) => Some((Err(not_read(error)?), before)),
        };
        if let Some((bytes, metadata)) = read {
            let file_key = format!("{key}/{name}");
            // (A file not read is no executable, as in the walk: SPEC §5.1.)
            let executable = bytes.is_ok() && is_executable(&metadata);
            disk.insert(file_key.clone(), (bytes, executable));
            dir.files.push((file_key, metadata));
        }
    }
    dir.files.sort_by(|a, b| a.0.cmp(&b.0));
    dir.state = OutsideState::Dir(metadata);
    Ok((dir, disk))
}

/// A file's bytes and executable bit; `None` when it vanished meanwhile or is not a file
/// (a symbolic link is not followed: the walk never takes one for an input either).
pub fn read_file(path: &Path) -> io::Result<Option<(Arc<[u8]>, bool)>> {
    let read = read_file_and_state(path)?;
    Ok(read.map(|(bytes, metadata)| (bytes, is_executable(&metadata))))
}

/// An input file as [`read_file`] reads it; one this process may not read is kept as
/// [`Unreadable`]. Other errors (an I/O error, too many open files) fail the reading: they
/// say nothing of the file, and a build that goes on without it would not read it again.
fn read_input(path: &Path) -> io::Result<Option<(FileBytes, bool)>> {
    match read_file(path) {
        Ok(file) => Ok(file.map(|(bytes, executable)| (Ok(bytes), executable))),
        Err(error) => Ok(Some((Err(not_read(error)?), false))),
    }
}

/// Why a file is not read, when the error is the file's own (this process may not read it,
/// it is too large): it is an input all the same. Other errors (an I/O error, too many open
/// files) fail the reading.
fn not_read(error: io::Error) -> io::Result<Unreadable> {
    match error.kind() {
        io::ErrorKind::PermissionDenied => Ok(Unreadable(io::ErrorKind::PermissionDenied.to_string().into())),
        io::ErrorKind::FileTooLarge => Ok(Unreadable(TOO_LARGE.into())),
        _ => Err(error),
    }
}

fn is_executable(metadata: &Metadata) -> bool {
    metadata.permissions().mode() & 0o111 != 0
}

/// A file's bytes and its state just before they were read (an edit after it leaves the
/// state stale, never the reverse).
fn read_file_and_state(path: &Path) -> io::Result<Option<(Arc<[u8]>, Metadata)>> {
    // Gone, a symbolic link (`O_NOFOLLOW`), or a socket: no file to read.
    let absent = |error: io::Error| match error.raw_os_error() {
        _ if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Some(libc::ELOOP | libc::ENXIO) => Ok(None),
        _ => Err(io::Error::new(error.kind(), format!("cannot read {}: {error}", path.display()))),
    };
    // Non-blocking: opening a FIFO would wait for a writer (a watch session meets whatever
    // appears in a project); reads of a regular file ignore the flag.
    let flags = libc::O_NOFOLLOW | libc::O_NONBLOCK;
    let mut file = match fs::OpenOptions::new().read(true).custom_flags(flags).open(path) {
        Ok(file) => file,
        Err(error) => return absent(error),
    };
    let metadata = match file.metadata() {
        Ok(metadata) => metadata,
        Err(error) => return absent(error),
    };
    if !metadata.is_file() {
        return Ok(None);
    }
    if metadata.len() > MAX_FILE_BYTES {
        let message = format!("cannot read {}: {TOO_LARGE}", path.display());
        return Err(io::Error::new(io::ErrorKind::FileTooLarge, message));
    }
    // One read of the size `fstat` gave (thousands of small files: `fs::read` would add a
    // seek and a second read each), into the shared buffer itself (a `Vec` made into an
    // `Arc` is copied: twice a large payload's size at once); a file that shrank meanwhile is
    // read again whole, from the same open file.
    // SAFETY: zeroed bytes are initialized `u8`s.
    let mut bytes: Arc<[u8]> = unsafe { Arc::new_zeroed_slice(metadata.len() as usize).assume_init() };
    let buffer = Arc::get_mut(&mut bytes).expect("a buffer just made is not shared");
    match file.read_exact(buffer) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => {
            let mut whole = Vec::new();
            let mut read_again = |file: &mut fs::File| file.take(MAX_FILE_BYTES + 1).read_to_end(&mut whole);
            if let Err(error) = file.rewind().and_then(|()| read_again(&mut file)) {
                return absent(error);
            }
            if whole.len() as u64 > MAX_FILE_BYTES {
                let message = format!("cannot read {}: {TOO_LARGE}", path.display());
                return Err(io::Error::new(io::ErrorKind::FileTooLarge, message));
            }
            bytes = whole.into();
        }
        Err(error) => return absent(error),
    }
    Ok(Some((bytes, metadata)))
}

/// Whether a directory of this name never holds inputs (nor projects): version control,
/// dependencies, build outputs, caches, and this tool's state and staging folders.
pub fn is_skipped_dir(name: &std::ffi::OsStr) -> bool {
    let text = name.to_string_lossy();
    SKIPPED_DIRS.contains(&text.as_ref())
        || is_cache_dir(name)
        || (text.starts_with('.') && text.contains(".agent-bundle-"))
}

/// Whether the walk never enters the folder at `path`: one of a name it skips, or a tagged
/// cache.
fn is_never_entered(path: &Path) -> bool {
    path.file_name().is_some_and(is_skipped_dir) || is_tagged_cache(path)
}

/// Whether the folder at `path` is a cache, skipped and no loss to a payload: named as a
/// tool's (`__pycache__`, …) or tagged as one (`CACHEDIR.TAG`: this tool's own cache, put in
/// the project with `--cache-dir`, would otherwise be read as inputs, and change with every
/// build).
fn is_cache_folder(path: &Path) -> bool {
    match path.file_name() {
        Some(name) if is_cache_dir(name) => true,
        // A folder never read, tagged or not (tools tag a `.venv`), is a payload's loss.
        Some(name) if is_skipped_dir(name) => false,
        _ => is_tagged_cache(path),
    }
}

/// The file that tags a folder as a cache (<https://bford.info/cachedir/>).
const CACHE_TAG: &str = "CACHEDIR.TAG";

/// When the folder at `path` is tagged as a cache ([`is_tagged_cache`]), its state and its
/// tag's, once shown to `before_listing` (watch mode watches it, for its tag may go) and
/// checked again.
fn watched_tagged_cache(path: &Path, before_listing: BeforeListing) -> Option<(Metadata, Metadata)> {
    if !is_tagged_cache(path) {
        return None;
    }
    before_listing(path);
    let folder = fs::symlink_metadata(path).ok()?;
    let tag = fs::symlink_metadata(path.join(CACHE_TAG)).ok()?;
    is_tagged_cache(path).then_some((folder, tag))
}

/// Whether the folder at `path` holds a `CACHEDIR.TAG` with its signature
/// (<https://bford.info/cachedir/>), a regular file (a pipe would hold the read).
fn is_tagged_cache(path: &Path) -> bool {
    const SIGNATURE: &[u8] = b"Signature: 8a477f597d28d172789f06886806bc55";
    crate::output::begins_with(&path.join(CACHE_TAG), SIGNATURE) == Some(true)
}

/// Whether a directory of this name is a tool's cache (`__pycache__`, …): skipped, and no
/// loss to a payload.
fn is_cache_dir(name: &std::ffi::OsStr) -> bool {
    CACHE_DIRS.iter().any(|cache| name == *cache)
}

/// The name of the first folder on the project-relative path `key` that the input walk
/// never enters (`target`, `node_modules`, …), if any: a module there is never an input.
pub(crate) fn skipped_folder_in(key: &str) -> Option<&str> {
    skipped_folder_key(key).map(|folder| folder.rsplit('/').next().unwrap_or(folder))
}

/// The key of that folder: `key` up to its name.
pub(crate) fn skipped_folder_key(key: &str) -> Option<&str> {
    let (folders, _) = key.rsplit_once('/')?;
    let mut end = 0;
    for name in folders.split('/') {
        end += name.len();
        if is_skipped_dir(std::ffi::OsStr::new(name)) {
            return Some(&folders[..end]);
        }
        end += 1;
    }
    None
}

/// Why a module at `key` is not there for the build, when it lies in a folder the input walk
/// never enters.
pub fn skipped_folder_help(key: &str) -> Option<String> {
    skipped_folder_in(key).map(|folder| {
        format!(
            "`{key}` lies in a folder named `{folder}`, which the build never reads (folders named {} \
             hold no sources): move the module out of it",
            SKIPPED_DIRS.iter().chain(&CACHE_DIRS).copied().collect::<Vec<_>>().join(", ")
        )
    })
}

/// Whether a project-relative path lies in a directory that is never an input (its own
/// name is judged by what it is: see `walk_reads`).
pub fn lies_in_skipped_dir(relative: &Path, excluded: bool) -> bool {
    excluded || relative.parent().is_some_and(|parent| parent.components().any(|part| is_skipped_dir(part.as_os_str())))
}

/// What a root that holds no config the walk would read holds instead (the build's AB4001
/// says it): read here, before the walk, so that a root without a project is never walked.
#[derive(Debug, Default)]
pub struct MissingConfig {
    /// The first config name at the root that holds something never read as a config, and
    /// what that is.
    pub unread: Option<(String, &'static str)>,
    /// The nearest folder above the root that holds a config (the root may be a folder of
    /// that project's).
    pub project_above: Option<PathBuf>,
    /// The root's folders that hold a config (a workspace's projects), sorted.
    pub projects: Vec<String>,
    /// The root's files that look like a config of another name and mention agent-bundle
    /// (`plugin.config.ts`), sorted.
    pub other_configs: Vec<String>,
    /// The root's files named as the config is but for a script's extension no config name
    /// has (`agent-bundle.config.cts`), sorted.
    pub misnamed_configs: Vec<String>,
}

/// `None` when `root` holds a config of one of `names` the walk would read; otherwise what
/// is at those names, and, when `look_around`, what above and in the root a build may have
/// meant. (Every build asks, a no-op too: one `lstat` when the config is there.)
pub fn missing_config(root: &Path, names: &[&str], look_around: bool) -> Option<MissingConfig> {
    let holds_config = |dir: &Path| names.iter().any(|name| ConfigEntry::at(&dir.join(name)) == ConfigEntry::Readable);
    if holds_config(root) {
        return None;
    }
    let unread = names.iter().find_map(|name| match ConfigEntry::at(&root.join(name)) {
        ConfigEntry::Unread(what) => Some(((*name).to_owned(), what)),
        _ => None,
    });
    let mut found = MissingConfig { unread, ..MissingConfig::default() };
    if look_around {
        found.project_above = root.ancestors().skip(1).find(|dir| holds_config(dir)).map(Path::to_path_buf);
        // (Only a config known to be there: a folder it may not read holds none it knows of.)
        let holds_known_config = |dir: &Path| {
            names.iter().any(|name| fs::symlink_metadata(dir.join(name)).is_ok_and(|metadata| metadata.is_file()))
        };
        (found.projects, found.other_configs, found.misnamed_configs) = configs_nearby(root, &holds_known_config);
    }
    Some(found)
}

/// What a root without a config of the usual names holds that a build may mean: projects in
/// its folders (a workspace), and configs of other names (`--config`). One listing of it.
fn configs_nearby(root: &Path, holds_config: &dyn Fn(&Path) -> bool) -> (Vec<String>, Vec<String>, Vec<String>) {
    let Ok(entries) = fs::read_dir(root) else { return Default::default() };
    let mut projects = Vec::new();
    let mut other_configs = Vec::new();
    let mut misnamed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        match entry.file_type() {
            // (Not where a workspace search never looks: `node_modules`, `.git`, …)
            Ok(kind) if kind.is_dir() && !is_skipped_dir(&entry.file_name()) && holds_config(&entry.path()) => {
                projects.push(name)
            }
            Ok(kind) if kind.is_file() && is_misnamed_config(&name) => misnamed.push(name),
            Ok(kind) if kind.is_file() && is_config_like(&name) && names_agent_bundle(&entry) => {
                other_configs.push(name)
            }
            _ => {}
        }
    }
    projects.sort_unstable();
    other_configs.sort_unstable();
    misnamed.sort_unstable();
    (projects, other_configs, misnamed)
}

/// Whether a file is named as the config is, but for a script's extension none is read by
/// (`agent-bundle.config.cts`; not a `.bak` or `.json`).
fn is_misnamed_config(name: &str) -> bool {
    let extension = name.strip_prefix("agent-bundle.config.");
    extension.is_some_and(|extension| ["cts", "cjs", "tsx", "jsx"].contains(&extension))
}

/// Whether a file name looks like a TypeScript or JavaScript config (`plugin.config.ts`): of
/// an extension a config may have.
fn is_config_like(name: &str) -> bool {
    let extensions = crate::config::CONFIG_FILE_NAMES.map(|config| &config[config.rfind('.').unwrap_or(0)..]);
    let stem = extensions.iter().find_map(|extension| name.strip_suffix(extension));
    stem.is_some_and(|stem| stem.ends_with(".config") || stem.ends_with("-config"))
}

/// Whether the file `entry`, of a config's size, mentions agent-bundle (a `vite.config.ts`
/// does not).
fn names_agent_bundle(entry: &fs::DirEntry) -> bool {
    let small = entry.metadata().is_ok_and(|metadata| metadata.len() <= 1 << 20);
    small
        && read_file(&entry.path())
            .ok()
            .flatten()
            .is_some_and(|(bytes, _)| memchr::memmem::find(&bytes, b"agent-bundle").is_some())
}

/// What is at a config file's name, as the walk would take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ConfigEntry {
    /// A regular file, or something this process cannot tell (the walk decides then).
    Readable,
    Missing,
    /// What is there instead, never read as a config (a link is not followed).
    Unread(&'static str),
}

impl ConfigEntry {
    fn at(path: &Path) -> ConfigEntry {
        match fs::symlink_metadata(path) {
            Ok(metadata) if metadata.is_file() => ConfigEntry::Readable,
            Ok(metadata) if metadata.is_symlink() => ConfigEntry::Unread(A_SYMBOLIC_LINK),
            Ok(metadata) if metadata.is_dir() => ConfigEntry::Unread("a folder"),
            Ok(_) => ConfigEntry::Unread("a special file"),
            Err(error) if matches!(error.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => {
                ConfigEntry::Missing
            }
            Err(_) => ConfigEntry::Readable,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for file in files {
            let path = dir.path().join(file);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, file.as_bytes()).unwrap();
        }
        dir
    }

    #[test]
    fn the_walk_lists_input_directories_only_each_watched_before_it_is_listed() {
        let dir = tree(&[
            "agent-bundle.config.ts",
            "src/a.ts",
            "src/lib/b.ts",
            "node_modules/pkg/index.js",
            "target/debug/x",
            "old/agent-bundle.manifest.json",
            "old/hooks/w.mjs",
            "out/hooks/w.mjs",
        ]);
        fs::create_dir(dir.path().join("src/empty")).unwrap();
        std::os::unix::fs::symlink("a.ts", dir.path().join("src/link.ts")).unwrap();
        let exclude = [dir.path().join("out")];
        let mut seen = Vec::new();
        let tree = walk_inputs(dir.path(), &exclude, &mut |path| {
            let key = path.strip_prefix(dir.path()).unwrap().to_str().unwrap().to_owned();
            if key == "src/lib" {
                // Created once the directory is watched: the listing must still find it.
                fs::write(path.join("late.ts"), "").unwrap();
            }
            seen.push(key);
        })
        .unwrap();
        assert_eq!(seen, ["", "old", "src", "src/empty", "src/lib"], "the artifact too: its manifest may go");
        let listed: Vec<&str> = tree.listed.iter().map(|(key, _)| key.as_str()).collect();
        assert_eq!(listed, ["", "src", "src/empty", "src/lib"]);
        let files: Vec<&str> = tree.files.iter().map(|(key, _)| key.as_str()).collect();
        assert_eq!(
            files,
            ["agent-bundle.config.ts", "src/a.ts", "src/lib/b.ts", "src/lib/late.ts"],
            "depth first, by name"
        );
        let states: Vec<&str> = tree.dir_states().map(|(key, _)| key.as_str()).collect();
        assert_eq!(states, ["", "src", "src/empty", "src/lib", "old"], "a skipped artifact is a state too");
    }

    /// The walk and the payload check pass over the same things: what one skips, the other
    /// says a payload loses (else a build answered without compiling would differ from one
    /// that compiles).
    #[test]
    fn the_walk_passes_over_what_a_payload_would_lose() {
        let dir = tree(&[
            "src/a.ts",
            "dist/p/kept.js",
            "dist/p/sub/kept.js",
            "dist/p/node_modules/dep/index.js",
            "dist/p/.git/HEAD",
            "dist/p/built/agent-bundle.manifest.json",
            "dist/p/.venv/lib/site.py",
            "dist/p/__pycache__/kept.cpython-311.pyc",
            "dist/p/sub/.pytest_cache/v/lastfailed",
            "dist/p/.cache/v1/objects/ab",
            "dist/p/tagless/CACHEDIR.TAG",
            "node_modules/top/index.js",
        ]);
        let signature = "Signature: 8a477f597d28d172789f06886806bc55\n# a cache\n";
        fs::write(dir.path().join("dist/p/.cache/CACHEDIR.TAG"), signature).unwrap();
        fs::write(dir.path().join("dist/p/.venv/CACHEDIR.TAG"), signature).unwrap();
        let payload = dir.path().join("dist/p");
        std::os::unix::fs::symlink("kept.js", payload.join("link.js")).unwrap();
        let fifo = std::ffi::CString::new(payload.join("sub/pipe").as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let not_utf8: &std::ffi::OsStr = std::os::unix::ffi::OsStrExt::from_bytes(b"bad\xff");
        fs::write(payload.join(not_utf8), "").unwrap();
        let walked = input_tree(dir.path(), &[]).unwrap();
        let left_out: Vec<String> =
            left_out_of_payload(dir.path(), "dist/p", &[]).into_iter().map(|(key, _)| key).collect();
        let mut passed_over: Vec<String> =
            walked.passed_over.iter().filter(|key| key.starts_with("dist/p/")).cloned().collect();
        passed_over.sort();
        assert_eq!(passed_over, left_out);
        assert!(walked.passed_over.contains(&"node_modules".to_owned()), "the top folder's too");
        let files: Vec<&str> = walked.files.iter().map(|(key, _)| key.as_str()).collect();
        assert_eq!(
            files,
            ["dist/p/kept.js", "dist/p/sub/kept.js", "dist/p/tagless/CACHEDIR.TAG", "src/a.ts"],
            "caches, named or tagged, are never inputs (a tag without its signature tags nothing)"
        );
        assert_eq!(
            left_out,
            [
                "dist/p/.git",
                "dist/p/.venv",
                "dist/p/bad\u{fffd}",
                "dist/p/built",
                "dist/p/link.js",
                "dist/p/node_modules",
                "dist/p/sub/pipe"
            ]
        );
    }

    #[test]
    fn a_folder_whose_manifest_is_a_link_is_no_artifact() {
        let dir = tree(&["agent-bundle.config.ts", "tools/vendor/v.txt", "manifest.json"]);
        let manifest = dir.path().join("tools/vendor").join(MANIFEST_FILE);
        std::os::unix::fs::symlink(dir.path().join("manifest.json"), manifest).unwrap();
        let tree = input_tree(dir.path(), &[]).unwrap();
        let keys: Vec<&str> = tree.files.iter().map(|(key, _)| key.as_str()).collect();
        assert_eq!(keys, ["agent-bundle.config.ts", "manifest.json", "tools/vendor/v.txt"]);
    }

    #[test]
    fn an_outside_key_is_a_path_beside_the_root_never_in_it_or_in_a_skipped_folder() {
        let root = Path::new("/work/repo/plugins/a");
        assert_eq!(outside_path(root, "../../shared"), Some(PathBuf::from("/work/repo/shared")));
        assert_eq!(outside_path(root, "../b/src"), Some(PathBuf::from("/work/repo/plugins/b/src")));
        assert_eq!(outside_path(root, ".."), Some(PathBuf::from("/work/repo/plugins")));
        assert_eq!(outside_path(root, "../a/src"), None, "back inside the root");
        assert_eq!(outside_path(root, "../../node_modules/pkg"), None);
        assert_eq!(outside_path(root, "../../../../../x"), None, "above /");
    }

    #[test]
    fn an_outside_folder_is_listed_alone_and_only_its_modules_are_read() {
        let dir =
            tree(&["shared/a.ts", "shared/b.mjs", "shared/notes.md", "shared/sub/c.ts", "p/agent-bundle.config.ts"]);
        std::os::unix::fs::symlink("a.ts", dir.path().join("shared/link.ts")).unwrap();
        let root = dir.path().join("p");
        let mut loaded = LoadedProject::new(Database::new(), root.clone());
        loaded.load(Settings::default(), &[], &mut |_| {}).unwrap();
        let mut watched = Vec::new();
        let keys = ["../shared".to_owned(), "../missing".to_owned()];
        let (project, listed) = loaded.reach_out(&keys, &mut |d| watched.push(d.to_owned())).unwrap();
        let inputs: Vec<&String> = project.files(&loaded.db).keys().collect();
        assert_eq!(inputs, ["../shared/a.ts", "../shared/b.mjs", "agent-bundle.config.ts"]);
        assert_eq!(watched, [dir.path().join("shared"), dir.path().to_owned()], "a missing folder's parent too");
        assert!(listed[0].is_found() && !listed[1].is_found());
        assert!(loaded.found_nothing_at("../missing") && loaded.lists_outside("../shared"));
        assert_eq!(**project.outside_dirs(&loaded.db), BTreeSet::from(keys.clone()));

        // An event in it re-lists it (an event in a folder below it does not).
        fs::write(dir.path().join("shared/a.ts"), "edited").unwrap();
        fs::write(dir.path().join("shared/sub/c.ts"), "edited").unwrap();
        let changed = [dir.path().join("shared/a.ts"), dir.path().join("shared/sub/c.ts")];
        assert!(loaded.in_outside_dir(&changed[0]) && !loaded.in_outside_dir(&changed[1]));
        // Nor does anything in it but module files (an artifact published there, say, or a
        // folder named as one), and its manifest: the folder is an artifact then.
        fs::create_dir(dir.path().join("shared/folder.ts")).unwrap();
        let others =
            ["shared/notes.md", "shared/artifact", "shared/.artifact.agent-bundle-staging", "shared/folder.ts"];
        assert!(others.iter().all(|other| !loaded.in_outside_dir(&dir.path().join(other))));
        assert!(loaded.in_outside_dir(&dir.path().join("shared").join(MANIFEST_FILE)));
        loaded.refresh(&changed[..1], Settings::default(), &[], &mut |_| {}).unwrap();
        assert_eq!(loaded.changed(), ["../shared/a.ts"]);

        // A missing folder that appears inside a listed one: its event is both folders'.
        loaded.reach_out(&["../shared/new".to_owned()], &mut |_| {}).unwrap();
        fs::create_dir(dir.path().join("shared/new")).unwrap();
        fs::write(dir.path().join("shared/new/d.ts"), "new").unwrap();
        loaded.refresh(&[dir.path().join("shared/new")], Settings::default(), &[], &mut |_| {}).unwrap();
        assert_eq!(loaded.changed(), ["../shared/new/d.ts"]);

        // Reading the project whole again lists the folders found again, as they are now.
        fs::write(dir.path().join("shared/b.mjs"), "edited meanwhile").unwrap();
        loaded.load(Settings::default(), &[], &mut |_| {}).unwrap();
        assert_eq!(loaded.changed(), ["../shared/b.mjs"], "the others are unchanged inputs");
        assert!(loaded.lists_outside("../shared") && !loaded.lists_outside("../missing"));
    }

    #[test]
    fn an_outside_folder_holding_an_artifact_is_watched_and_never_read() {
        let dir = tree(&["vendor/agent-bundle.manifest.json", "vendor/a.ts", "p/agent-bundle.config.ts"]);
        let mut loaded = LoadedProject::new(Database::new(), dir.path().join("p"));
        loaded.load(Settings::default(), &[], &mut |_| {}).unwrap();
        let mut watched = Vec::new();
        let (project, _) = loaded.reach_out(&["../vendor".to_owned()], &mut |d| watched.push(d.to_owned())).unwrap();
        assert!(!project.files(&loaded.db).contains_key("../vendor/a.ts"));
        assert_eq!(watched, [dir.path().join("vendor"), dir.path().to_owned()], "its manifest may go");
        // Its manifest going is a change of the folder: it is read then.
        let manifest = dir.path().join("vendor").join(MANIFEST_FILE);
        assert!(loaded.in_outside_dir(&manifest));
        fs::remove_file(&manifest).unwrap();
        loaded.refresh(&[manifest], Settings::default(), &[], &mut |_| {}).unwrap();
        assert_eq!(loaded.changed(), ["../vendor/a.ts"]);
    }

    /// A file the build cannot read is no executable, in an outside folder as in the walk
    /// (SPEC §5.1): its mode is not part of the artifact key.
    #[test]
    fn a_file_not_read_is_no_executable_wherever_it_is() {
        let dir = tree(&["shared/big.ts", "p/big.ts"]);
        for file in ["shared/big.ts", "p/big.ts"] {
            let big = fs::File::create(dir.path().join(file)).unwrap();
            big.set_len(MAX_FILE_BYTES + 1).unwrap();
            big.set_permissions(fs::Permissions::from_mode(0o755)).unwrap();
        }
        let (_, outside) = list_outside_dir(&dir.path().join("p"), "../shared", &mut |_| {}).unwrap();
        let walked = read_files(&[("big.ts".to_owned(), dir.path().join("p/big.ts"))]).unwrap();
        for disk in [outside, walked] {
            let (bytes, executable) = disk.into_values().next().unwrap();
            assert!(bytes.is_err() && !executable);
        }
    }

    #[test]
    fn a_walk_error_names_the_directory() {
        let dir = tree(&["file"]);
        let error = walk_inputs(&dir.path().join("file"), &[], &mut |_| {}).err().unwrap();
        assert!(
            error.to_string().starts_with(&format!("cannot list {}: ", dir.path().join("file").display())),
            "{error}"
        );
    }

    #[test]
    fn a_refresh_reads_what_a_walk_would_find_and_no_more() {
        let dir = tree(&["agent-bundle.config.ts", "src/a.ts", "old/agent-bundle.manifest.json"]);
        let mut loaded = LoadedProject::new(Database::new(), dir.path().to_owned());
        loaded.load(Settings::default(), &[], &mut |_| {}).unwrap();
        let root = dir.path();
        let write = |file: &str| {
            fs::create_dir_all(root.join(file).parent().unwrap()).unwrap();
            fs::write(root.join(file), "x").unwrap();
        };

        write("old/hooks/w.mjs");
        write("node_modules/pkg/index.js");
        write("src/new/deep/c.ts");
        std::os::unix::fs::symlink("a.ts", root.join("src/link.ts")).unwrap();
        let mut watched = Vec::new();
        let changed =
            ["old/hooks/w.mjs", "node_modules/pkg/index.js", "src/link.ts", "src/new"].map(|path| root.join(path));
        let project = loaded.refresh(&changed, Settings::default(), &[], &mut |d| watched.push(d.to_owned())).unwrap();
        let inputs: Vec<&String> = project.files(&loaded.db).keys().collect();
        assert_eq!(inputs, ["agent-bundle.config.ts", "src/a.ts", "src/new/deep/c.ts"]);
        assert_eq!(watched, [root.join("src/new"), root.join("src/new/deep")]);
        assert_eq!(loaded.changed(), ["src/new/deep/c.ts"]);

        fs::remove_dir_all(root.join("src/new")).unwrap();
        write("src/new");
        loaded.refresh(&[root.join("src/new")], Settings::default(), &[], &mut |_| {}).unwrap();
        assert_eq!(loaded.changed(), ["src/new", "src/new/deep/c.ts"], "a folder replaced by a file");
        assert!(!loaded.listed.contains("src/new/deep"));
    }

    #[test]
    fn a_refresh_judges_names_and_manifests_as_a_walk_does() {
        let dir = tree(&["agent-bundle.config.ts", "src/a.ts", "vendored/x.js"]);
        let root = dir.path();
        let mut loaded = LoadedProject::new(Database::new(), root.to_owned());
        loaded.load(Settings::default(), &[], &mut |_| {}).unwrap();
        let mut refresh = |changed: &[&str]| {
            let changed: Vec<PathBuf> = changed.iter().map(|path| root.join(path)).collect();
            let project = loaded.refresh(&changed, Settings::default(), &[], &mut |_| {}).unwrap();
            let inputs: Vec<String> = project.files(&loaded.db).keys().cloned().collect();
            let walked: Vec<String> = input_tree(root, &[]).unwrap().files.into_iter().map(|(key, _)| key).collect();
            assert_eq!(inputs, walked, "after {changed:?}");
            inputs
        };
        // A backslash is part of a name; a file named as a skipped folder is an input; a
        // manifest makes its folder an artifact, but for the root's, a file like any.
        let manifest = "vendored/agent-bundle.manifest.json";
        for file in ["src\\a.ts", "src/target", "src/.git", "src/node_modules/p.js", manifest, MANIFEST_FILE] {
            fs::create_dir_all(root.join(file).parent().unwrap()).unwrap();
            fs::write(root.join(file), "x").unwrap();
        }
        let inputs = refresh(&["src\\a.ts", "src/target", "src/.git", "src/node_modules", manifest, MANIFEST_FILE]);
        let expected = ["agent-bundle.config.ts", MANIFEST_FILE, "src/.git", "src/a.ts", "src/target", "src\\a.ts"];
        assert_eq!(inputs, expected);
        // The manifest gone: a folder of inputs again; a skipped name as a folder: skipped.
        fs::remove_file(root.join(manifest)).unwrap();
        fs::remove_file(root.join("src/target")).unwrap();
        fs::create_dir(root.join("src/target")).unwrap();
        fs::write(root.join("src/target/out.js"), "x").unwrap();
        let inputs = refresh(&[manifest, "src/target"]);
        let expected = ["agent-bundle.config.ts", MANIFEST_FILE, "src/.git", "src/a.ts", "src\\a.ts", "vendored/x.js"];
        assert_eq!(inputs, expected);
    }

    #[test]
    fn only_a_change_a_refresh_would_read_may_change_the_inputs() {
        let dir = tree(&["agent-bundle.config.ts", "src/a.ts", "inner/out/agent-bundle.manifest.json"]);
        let root = dir.path();
        let mut loaded = LoadedProject::new(Database::new(), root.to_owned());
        assert!(loaded.may_change_inputs(&root.join("inner/out")), "before a load everything may");
        loaded.load(Settings::default(), &[], &mut |_| {}).unwrap();
        let may = |path: &str| loaded.may_change_inputs(&root.join(path));
        assert!(!may("src/new.ts") && !may("target"), "nothing there now, no input before");
        fs::write(root.join("src/new.ts"), "").unwrap();
        fs::create_dir(root.join("inner/new")).unwrap();
        fs::create_dir(root.join("target")).unwrap();
        assert!(may("") && may("src/a.ts") && may("src/new.ts") && may("inner/new"));
        assert!(!may("inner/out") && !may("inner/out/hooks/w.mjs") && !may("src/new/deep/c.ts") && !may("target"));
        // An input replaced by an artifact folder: the input is gone.
        fs::remove_file(root.join("src/a.ts")).unwrap();
        fs::create_dir(root.join("src/a.ts")).unwrap();
        fs::write(root.join("src/a.ts").join(MANIFEST_FILE), "{}").unwrap();
        assert!(may("src/a.ts"));
    }

    /// In a payload, a folder the walk passes over may fail the build (it would not arrive
    /// whole); a cache, made or gone as the payload's scripts run, changes nothing.
    #[test]
    fn a_cache_in_a_payload_changes_nothing() {
        let dir = tree(&["agent-bundle.config.ts", "scripts/check.py"]);
        let root = dir.path();
        let mut loaded = LoadedProject::new(Database::new(), root.to_owned());
        loaded.load(Settings::default(), &[], &mut |_| {}).unwrap();
        loaded.note_payload_sources(vec!["scripts".to_owned()]);
        fs::create_dir_all(root.join("scripts/__pycache__")).unwrap();
        fs::write(root.join("scripts/__pycache__/check.cpython-311.pyc"), "").unwrap();
        fs::create_dir_all(root.join("scripts/.venv/bin")).unwrap();
        std::os::unix::fs::symlink("check.py", root.join("scripts/.ruff_cache")).unwrap();
        let may = |path: &str| loaded.may_change_inputs(&root.join(path));
        assert!(!may("scripts/__pycache__") && !may("scripts/__pycache__/check.cpython-311.pyc"));
        assert!(!may("scripts/__pycache__/gone.pyc"), "nor what went from it");
        assert!(may("scripts/.venv"), "a dependency folder in a payload is refused");
        assert!(may("scripts/.ruff_cache"), "a link of a cache's name is a loss");
        assert!(may("scripts/.mypy_cache"), "gone, it may have been one");
    }
}
