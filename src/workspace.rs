//! Monorepos: find every plugin project below a directory and build them all in parallel,
//! on one thread pool (and one cache), each publishing on its own.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ignore::gitignore::Gitignore;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

use crate::build::{self, BuildOptions, BuildOutput, Checked};
use crate::config::CONFIG_FILE_NAMES;
use crate::stamp::{FileState, now_ns, unchanged, write_json};
use crate::threads::{Threads, pool_of};

/// Where the last discovery below a directory is remembered.
const MEMO_FILE: &str = ".agent-bundle/workspace.json";

/// Project roots below `dir` (directories holding an `agent-bundle.config.*`), sorted.
/// `.gitignore`d paths (and `.ignore`d ones, as ripgrep does; not the user's global
/// excludes or `.git/info/exclude`, which no other checkout shares, so every machine finds
/// the same projects; outside a git repository, those of `dir` and below), the folders no
/// project reads inputs from either (`node_modules`, `target`, `.git`, caches…: the loader's)
/// and built artifacts are skipped.
///
/// The result is remembered in `dir/.agent-bundle/workspace.json` with the state of every
/// directory the walk listed and every ignore file that could apply; while they all hold,
/// the walk would find the same roots, and a check stats them instead of walking.
pub fn discover(dir: &Path) -> Discovery {
    let memo_path = dir.join(MEMO_FILE);
    if let Some(memo) =
        crate::stamp::read_state_file(&memo_path).and_then(|bytes| serde_json::from_slice::<Memo>(&bytes).ok())
        && memo.holds(dir)
    {
        return Discovery {
            roots: memo.roots.iter().map(|root| dir.join(root)).collect(),
            unreadable: memo.unreadable,
        };
    }
    let memo_dir = memo_path.parent().expect("the memo has a parent");
    let had_memo_dir = memo_dir.is_dir();
    let Walk { roots, seen, unreadable, .. } = walk(dir);
    if !had_memo_dir {
        // Creating the folder changes `dir` itself, after the walk saw it: the memo is saved
        // by the next discovery. Nothing is created where no project was found.
        if !roots.is_empty() {
            let _ = crate::stamp::create_ignored_state_folder(memo_dir);
        }
    } else if let Some(seen) = seen {
        let relative: Option<Vec<String>> =
            roots.iter().map(|root| root.strip_prefix(dir).ok()?.to_str().map(str::to_owned)).collect();
        if let Some(roots) = relative {
            let compiler = crate::actions::COMPILER.to_owned();
            let memo = Memo { compiler, seen, saved_at_ns: now_ns(), roots, unreadable: unreadable.clone() };
            // The memo is an optimization: failing to write it must not fail the build.
            let _ = write_json(&memo_path, &memo);
        }
    }
    Discovery { roots, unreadable }
}

/// The projects a search found, and what it could not look into.
pub struct Discovery {
    pub roots: Vec<PathBuf>,
    /// What the search says of what it could not read (a directory, whose projects are not
    /// found; an ignore file, whose ignored projects are), or would not (a config that is a
    /// link, a folder or a special file): each a warning.
    pub unreadable: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct Memo {
    compiler: String,
    /// Every directory the walk listed (as it was before being listed), every folder it
    /// skipped for holding a manifest, every ignore file in them, and the ignore files and
    /// repository markers of `dir`'s ancestors, present or not.
    seen: Vec<FileState>,
    saved_at_ns: i128,
    /// Relative to the walked directory.
    roots: Vec<String>,
    /// What the walk could not read (said again while the memo holds: each one's state is in
    /// `seen`, so being made readable walks again).
    unreadable: Vec<String>,
}

impl Memo {
    fn holds(&self, dir: &Path) -> bool {
        self.compiler == crate::actions::COMPILER
            && !self.seen.iter().any(|state| state.is_racy(self.saved_at_ns))
            // (Thousands of folders in a large workspace: one `statx` each, over every core.)
            && self.seen.par_chunks(128).all(|states| unchanged(states, dir))
    }
}

/// The files that decide what the walk skips, besides directory names.
const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];
/// What makes an ancestor a repository, whose ignore files then apply.
const REPOSITORY_MARKERS: [&str; 2] = [".git", ".jj"];

/// What a search below a directory found.
struct Walk {
    roots: Vec<PathBuf>,
    /// What they were found from (`None` when a path is not UTF-8 or not stat-able).
    seen: Option<Vec<FileState>>,
    /// Every directory the walk listed.
    dirs: Vec<Listed>,
    unreadable: Vec<String>,
}

/// A directory a search listed, with its state just after the listing.
pub struct Listed {
    pub dir: PathBuf,
    /// By absolute path; `None` when it is not UTF-8 or could not be stat-ed.
    state: Option<FileState>,
}

impl Listed {
    /// Whether nothing can have entered or left the directory since it was listed: its
    /// state still holds, and is old enough for its time to prove it.
    pub fn unchanged(&self) -> bool {
        self.state
            .as_ref()
            .is_some_and(|state| !state.is_racy(now_ns()) && unchanged(std::slice::from_ref(state), Path::new("/")))
    }
}

/// The project roots below `dir` (as [`discover`] finds them, without its memo) and every
/// directory the search listed: where a project can appear (watch mode watches them).
pub fn search(dir: &Path) -> (Discovery, Vec<Listed>) {
    let Walk { roots, mut dirs, unreadable, .. } = walk(dir);
    // The folders above, up to the repository's root: their ignore files apply too.
    if let Some(top) = repository_root(dir) {
        for ancestor in dir.ancestors().skip(1).take_while(|ancestor| ancestor.starts_with(top)) {
            let state = std::fs::symlink_metadata(ancestor)
                .ok()
                .and_then(|metadata| Some(FileState::of(ancestor.to_str()?.to_owned(), &metadata)));
            dirs.push(Listed { dir: ancestor.to_path_buf(), state });
        }
    }
    (Discovery { roots, unreadable }, dirs)
}

/// The root of the repository (git's or Jujutsu's) `dir` is in, if any.
fn repository_root(dir: &Path) -> Option<&Path> {
    dir.ancestors().find(|ancestor| REPOSITORY_MARKERS.iter().any(|marker| ancestor.join(marker).exists()))
}

/// The ignore rules of the folders above `dir` up to its `repository`'s root, the nearest
/// first (in a folder, `.ignore`'s before `.gitignore`'s, as ripgrep ranks them), each file
/// that cannot be read said in `unreadable`. None above the repository: a personal
/// `~/.ignore` is no checkout's. (Read here, not by the walker, which reads every folder's up
/// to `/`; so a rule below `dir` cannot take back what one of these ignores, where git lets
/// a deeper file do so.)
fn rules_above(dir: &Path, repository: Option<&Path>, unreadable: &mut Vec<String>) -> Vec<Gitignore> {
    let Some(top) = repository else { return Vec::new() };
    let folders = dir.ancestors().skip(1).take_while(|folder| folder.starts_with(top));
    let files = folders.flat_map(|folder| IGNORE_FILES.map(|name| folder.join(name)).into_iter().rev());
    let mut rules = Vec::new();
    for file in files.filter(|file| file.is_file()) {
        let (matcher, error) = Gitignore::new(&file);
        if let Some(error) = error {
            unreadable.push(cannot_read(why_unreadable(&error)));
        }
        rules.push(matcher);
    }
    rules
}

/// Whether `path` is ignored by `rules` (as [`rules_above`] orders them), as git tells it:
/// the nearest file above it with a rule matching the path itself decides. (What a folder's
/// being ignored does to the paths below it is the walk's: it never enters one.)
fn ignored_by(rules: &[Gitignore], path: &Path, is_dir: bool) -> bool {
    let above = rules.iter().filter(|rules| path.starts_with(rules.path()) && path != rules.path());
    above.map(|rules| rules.matched(path, is_dir)).find(|matched| !matched.is_none()).is_some_and(|m| m.is_ignore())
}

/// Whether `rules` ignore the workspace `dir` itself, or a folder between it and the
/// repository's root `top`: then they ignore everything in it.
fn ignores_workspace(rules: &[Gitignore], dir: &Path, top: &Path) -> bool {
    dir.ancestors()
        .take_while(|folder| *folder != top && folder.starts_with(top))
        .any(|folder| ignored_by(rules, folder, true))
}

/// Which ignore rule leaves the workspace `dir` out of its own search (it, or a folder
/// between it and the repository's root, is ignored), as the rule's file and text: what a
/// search that found nothing there says.
pub fn ignored_workspace(dir: &Path) -> Option<String> {
    let repository = repository_root(dir);
    let top = repository.unwrap_or(dir);
    let rules = rules_above(dir, repository, &mut Vec::new());
    dir.ancestors().take_while(|folder| *folder != top && folder.starts_with(top)).find_map(|folder| {
        let above = rules.iter().filter(|rules| folder.starts_with(rules.path()) && folder != rules.path());
        let glob = match above.map(|rules| rules.matched(folder, true)).find(|matched| !matched.is_none())? {
            ignore::Match::Ignore(glob) => glob,
            _ => return None,
        };
        let file = glob.from().map_or_else(|| "an ignore file".to_owned(), |file| file.display().to_string());
        Some(format!("{} is ignored by `{}` in {file}", folder.display(), glob.original()))
    })
}

/// A project config below `dir` that the ignore rules left out of a search that found none:
/// what that search says, lest a workspace whose projects git ignores read as empty. (Looked
/// for only then, and no further than a few thousand entries: a home folder is big.)
pub fn ignored_project(dir: &Path) -> Option<PathBuf> {
    const LOOKED_AT: usize = 5_000;
    let walker = ignore::WalkBuilder::new(dir)
        .standard_filters(false)
        .filter_entry(|entry| {
            !entry.file_type().is_some_and(|t| t.is_dir()) || !crate::loader::is_skipped_dir(entry.file_name())
        })
        .build();
    walker.flatten().take(LOOKED_AT).find_map(|entry| {
        let is_config = entry.file_type().is_some_and(|t| t.is_file())
            && entry.file_name().to_str().is_some_and(|name| crate::config::CONFIG_FILE_NAMES.contains(&name));
        is_config.then(|| entry.into_path())
    })
}

/// Whether a change at `path` can change what a search finds, given every project root it
/// found (`roots`) and whether it watches a directory (`watched`: those it lists, but for
/// the folders of the projects being built, whose own watches see inside them): a project's
/// root itself, a config file that appears where no project is or goes where one was, an
/// ignore file anywhere, a folder made in a watched one or a watched one removed or renamed,
/// or a manifest in a watched one (its folder becomes an artifact, or stops being one). A
/// file there (code the projects share) holds no project, and an edited config changes none.
pub fn changes_search(path: &Path, roots: &[PathBuf], watched: impl Fn(&Path) -> bool) -> bool {
    if roots.iter().any(|root| root == path) {
        // A project's folder itself: renamed, removed, or replaced by another.
        return true;
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    if CONFIG_FILE_NAMES.contains(&&*name) {
        let is_root = path.parent().is_some_and(|parent| roots.iter().any(|root| root == parent));
        return is_root != path.is_file();
    }
    let in_watched = path.parent().is_some_and(&watched);
    IGNORE_FILES.contains(&&*name)
        || watched(path)
        || (in_watched && name == crate::emit::MANIFEST_FILE)
        || (in_watched && std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.is_dir()))
}

fn walk(dir: &Path) -> Walk {
    let artifacts = Arc::new(Mutex::new(Vec::new()));
    let found_artifacts = artifacts.clone();
    // In a repository, git's rules: its ignore files apply, from its root down (the walker's
    // own, from `dir` down; `rules_above`, those of the folders above). Outside one (a CI
    // job's copy of the sources, an unpacked archive), the workspace's own ignore files apply
    // all the same, and none above it: a home folder's `.gitignore` of `*` (a dotfiles setup)
    // must not hide every project.
    // An ignore file that is no regular file (a FIFO) would hold the walker for good, deaf to
    // Ctrl-C: one of the walk's own folder or above it turns the ignore files off, one below
    // leaves its folder out; each is said.
    let repository = repository_root(dir);
    let top = repository.unwrap_or(dir);
    let irregular: Vec<PathBuf> =
        dir.ancestors().take_while(|folder| folder.starts_with(top)).filter_map(irregular_ignore_file).collect();
    let read_ignore_files = irregular.is_empty();
    let mut unreadable = Vec::new();
    let above = if read_ignore_files { rules_above(dir, repository, &mut unreadable) } else { Vec::new() };
    let ignores_all = ignores_workspace(&above, dir, top);
    // Repositories inside the workspace (a submodule): the rules above stop at them, as git's.
    let nested_repositories = Mutex::new(Vec::new());
    let ignored_above = move |path: &Path, is_dir: bool| {
        if above.is_empty() {
            return false;
        }
        let mut nested = nested_repositories.lock().expect("no panics while locked");
        if nested.iter().any(|root: &PathBuf| path.starts_with(root) && path != root) {
            return false;
        }
        let ignored = ignored_by(&above, path, is_dir);
        if !ignored && is_dir && REPOSITORY_MARKERS.iter().any(|marker| path.join(marker).exists()) {
            nested.push(path.to_path_buf());
        }
        ignored
    };
    let left_out = Arc::new(Mutex::new(Vec::new()));
    let found_left_out = left_out.clone();
    let walker = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .git_global(false)
        .git_exclude(false)
        .git_ignore(read_ignore_files)
        .ignore(read_ignore_files)
        // (Whether `dir` is in a repository is decided here: the walker would look for `.git`
        // alone, and above `dir` up to `/`.)
        .require_git(false)
        .parents(false)
        .filter_entry(move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            if ignores_all || ignored_above(entry.path(), is_dir) {
                return false;
            }
            if !is_dir || crate::loader::is_skipped_dir(entry.file_name()) {
                return !is_dir;
            }
            if read_ignore_files && let Some(file) = irregular_ignore_file(entry.path()) {
                found_left_out.lock().expect("no panics while locked").push(file);
                return false;
            }
            // Built artifacts hold no projects (a stray manifest makes no artifact: a project
            // holding one is found, and its build says what is wrong).
            let is_artifact = crate::emit::manifest::holds_artifact(entry.path());
            if is_artifact && let Ok(metadata) = entry.metadata() {
                found_artifacts.lock().expect("no panics while locked").push((entry.path().to_path_buf(), metadata));
            }
            !is_artifact
        })
        .build();
    let (mut roots, mut dirs) = (Vec::new(), Vec::new());
    let mut seen = Seen { dir, states: Vec::new(), complete: true };
    for file in &irregular {
        unreadable.push(cannot_read(format!("{} (not a regular file: no ignore file was read)", file.display())));
    }
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                // Remembered by its state (once: a folder the walker yielded before it failed
                // to list it is there already): made readable, it is walked again.
                match error_path(&error).map(|path| (path, std::fs::symlink_metadata(path))) {
                    Some((path, Ok(metadata))) if !seen.holds(path) => {
                        seen.add(path, |key| FileState::of(key, &metadata))
                    }
                    Some((_, Ok(_))) => {}
                    _ => seen.complete = false,
                }
                unreadable.push(cannot_read(why_unreadable(&error)));
                continue;
            }
        };
        let Some(file_type) = entry.file_type() else { continue };
        let config_named = CONFIG_FILE_NAMES.contains(&&*entry.file_name().to_string_lossy());
        if file_type.is_dir() && config_named {
            // (As `build --root` refuses it; searched all the same, as any folder.)
            unreadable.push(format!(
                "{} is a folder, which is never read as the config (the projects in it were searched for)",
                entry.path().display()
            ));
        }
        if file_type.is_dir() {
            // Stat-ed just after its listing (the walker lists a directory before yielding
            // it): a change in between is inside the memo's racy window, never trusted.
            let state = entry.metadata().ok().and_then(|metadata| {
                seen.add(entry.path(), |key| FileState::of(key, &metadata));
                Some(FileState::of(entry.path().to_str()?.to_owned(), &metadata))
            });
            seen.complete &= state.is_some();
            for file in IGNORE_FILES.map(|name| entry.path().join(name)) {
                // (One that is not there: the directory's own state says when it comes.)
                let Ok(metadata) = std::fs::symlink_metadata(&file) else { continue };
                seen.add_ignore_file(&file, Ok(metadata));
                // The walker passes over an ignore file it cannot read, and the projects it
                // ignores with it: said, as git says it (its state, just recorded, says when
                // it is made readable).
                if let Err(error) = open_without_waiting(&file) {
                    unreadable.push(cannot_read(format!("{} ({})", file.display(), error.kind())));
                }
            }
            dirs.push(Listed { dir: entry.into_path(), state });
        } else if config_named {
            if file_type.is_file() {
                roots.extend(entry.path().parent().map(Path::to_path_buf));
            } else if file_type.is_symlink() {
                // (As `build --root` refuses it: the loader follows no link.)
                unreadable
                    .push(cannot_read(format!("{} (a symbolic link, which no build follows)", entry.path().display())));
            } else {
                unreadable
                    .push(format!("{} is a special file, which is never read as the config", entry.path().display()));
            }
        }
    }
    for file in left_out.lock().expect("no panics while locked").iter() {
        unreadable.push(cannot_read(format!("{} (not a regular file: its folder was left out)", file.display())));
    }
    // (Such a walk is not remembered: nothing recorded says when the file is one again.)
    seen.complete &= irregular.is_empty() && left_out.lock().expect("no panics while locked").is_empty();
    for (path, metadata) in artifacts.lock().expect("no panics while locked").iter() {
        seen.add(path, |key| FileState::of(key, metadata));
        // Where a project can appear too: once its manifest goes, it is a folder like any.
        let state = path.to_str().map(|key| FileState::of(key.to_owned(), metadata));
        dirs.push(Listed { dir: path.clone(), state });
    }
    let canonical = dir.canonicalize().ok();
    for ancestor in canonical.iter().flat_map(|dir| dir.ancestors().skip(1)) {
        for path in IGNORE_FILES.map(|name| ancestor.join(name)) {
            seen.add_ignore_file(&path, std::fs::symlink_metadata(&path));
        }
        for name in REPOSITORY_MARKERS {
            let path = ancestor.join(name);
            seen.add(&path, |key| FileState::presence(key, &path));
        }
    }
    roots.sort();
    roots.dedup();
    Walk { roots, seen: seen.complete.then_some(seen.states), dirs, unreadable }
}

/// An ignore file in `folder` that is there and no regular file (through a link too).
fn irregular_ignore_file(folder: &Path) -> Option<PathBuf> {
    IGNORE_FILES
        .map(|name| folder.join(name))
        .into_iter()
        .find(|file| std::fs::metadata(file).is_ok_and(|m| !m.is_file()))
}

/// Opens `path` for reading without waiting for a FIFO's writer.
fn open_without_waiting(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)
}

/// `path (what went wrong)`, from the walker's nested error.
/// The warning of a directory the project search could not look into (a project below it
/// is missed), or an ignore file it could not read (the projects it ignores are built).
fn cannot_read(why: String) -> String {
    format!("cannot read {why}; the project search went on without it")
}

fn why_unreadable(error: &ignore::Error) -> String {
    match error {
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => why_unreadable(err),
        // (The I/O error's own text repeats the path: its kind says the rest.)
        ignore::Error::WithPath { path, err } => match err.io_error() {
            Some(io) => format!("{} ({})", path.display(), io.kind()),
            None => format!("{} ({err})", path.display()),
        },
        other => other.to_string(),
    }
}

/// The path the walker's error is about, if it names one.
fn error_path(error: &ignore::Error) -> Option<&Path> {
    match error {
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => error_path(err),
        ignore::Error::WithPath { path, .. } => Some(path),
        _ => None,
    }
}

/// States recorded by a walk of `dir`: below it by relative path, elsewhere by absolute path.
struct Seen<'a> {
    dir: &'a Path,
    states: Vec<FileState>,
    /// False once a path could not be recorded (not UTF-8, or not stat-able).
    complete: bool,
}

impl Seen<'_> {
    /// The key a state of `path` is recorded under.
    fn key<'p>(&self, path: &'p Path) -> Option<&'p str> {
        path.strip_prefix(self.dir).unwrap_or(path).to_str()
    }

    fn add(&mut self, path: &Path, state: impl FnOnce(String) -> FileState) {
        match self.key(path) {
            Some(key) => self.states.push(state(key.to_owned())),
            None => self.complete = false,
        }
    }

    /// Whether a state of `path` is recorded.
    fn holds(&self, path: &Path) -> bool {
        self.key(path).is_some_and(|key| self.states.iter().any(|state| state.path() == key))
    }

    /// Records the ignore file at `path`, as `metadata` (its `symlink_metadata`) found it, or
    /// that none is there. One behind a link is read through it, and its target may change
    /// with no state here: such a walk is not remembered.
    fn add_ignore_file(&mut self, path: &Path, metadata: std::io::Result<std::fs::Metadata>) {
        match metadata {
            Ok(metadata) => {
                self.complete &= !metadata.is_symlink();
                self.add(path, |key| FileState::of(key, &metadata));
            }
            Err(_) => self.add(path, FileState::absent),
        }
    }
}

/// A project's name: its path relative to the workspace directory `base` (`.` for the
/// workspace itself), as reports show it and `--filter` reads it.
pub fn project_name(base: &Path, root: &Path) -> String {
    match root.strip_prefix(base) {
        Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
        Ok(relative) => relative.display().to_string(),
        Err(_) => root.display().to_string(),
    }
}

/// Keeps the roots whose name ([`project_name`]) contains any of `filters`; all when empty.
/// A filter is read as a shell completes a folder's path, too: `./plugins/audit/` is
/// `plugins/audit`.
pub fn filter(roots: Vec<PathBuf>, base: &Path, filters: &[String]) -> Vec<PathBuf> {
    if filters.is_empty() {
        return roots;
    }
    let as_named = |filter: &str| {
        let named = filter.strip_prefix("./").unwrap_or(filter).trim_end_matches('/');
        // (`./` alone names no folder below: it stays as given, matching nothing.)
        if named.is_empty() { filter } else { named }.to_owned()
    };
    let filters: Vec<String> = filters.iter().map(|filter| as_named(filter)).collect();
    let kept = |root: &PathBuf| filters.iter().any(|filter| project_name(base, root).contains(filter.as_str()));
    roots.into_iter().filter(kept).collect()
}

/// The outcome of one project of a workspace build.
pub struct ProjectBuild<'a> {
    pub options: &'a BuildOptions,
    pub output: std::io::Result<BuildOutput>,
    pub elapsed: Duration,
}

impl ProjectBuild<'_> {
    pub fn succeeded(&self) -> bool {
        self.output.as_ref().is_ok_and(|o| o.published.is_some())
    }

    /// Whether Ctrl-C stopped it before it published (before its build, or its publish).
    pub fn interrupted(&self) -> bool {
        self.output.as_ref().is_err_and(|error| error.kind() == std::io::ErrorKind::Interrupted)
    }
}

/// Builds every project: first each one's stamp check, then the stale ones; a project
/// `refused` says why (by index) fails so, unbuilt. The checks touch only the local disk, so
/// they run on `threads.checks` threads; the builds' pool (larger with a remote cache) is
/// started only when a project is stale. `on_done` is called as each one finishes (from
/// worker threads). Results come back in `projects` order.
pub fn build_all<'a>(
    projects: &'a [BuildOptions],
    refused: &[Option<String>],
    threads: Threads,
    on_done: impl Fn(&ProjectBuild) + Sync,
) -> std::io::Result<Vec<ProjectBuild<'a>>> {
    enum Step<'a> {
        Done(Box<ProjectBuild<'a>>),
        Stale(&'a BuildOptions, build::Stale, Duration),
    }
    let checks = pool_of(threads.checks)?;
    let checked: Vec<Step> = checks.install(|| {
        projects
            .par_iter()
            .enumerate()
            .map(|(index, options)| {
                let started = Instant::now();
                let output = match build::check(options) {
                    _ if let Some(Some(why)) = refused.get(index) => Err(std::io::Error::other(why.clone())),
                    Ok(Checked::Stale(stale)) => return Step::Stale(options, stale, started.elapsed()),
                    Ok(Checked::UpToDate(output)) => Ok(*output),
                    Err(error) => Err(error),
                };
                let result = ProjectBuild { options, output, elapsed: started.elapsed() };
                on_done(&result);
                Step::Done(Box::new(result))
            })
            .collect()
    });
    let any_stale = checked.iter().any(|step| matches!(step, Step::Stale(..)));
    let builds = if any_stale && threads.builds != threads.checks {
        // (Its deep stacks go before the others are reserved.)
        drop(checks);
        pool_of(threads.builds)?
    } else {
        checks
    };
    Ok(builds.install(|| {
        checked
            .into_par_iter()
            .map(|step| match step {
                Step::Done(done) => *done,
                Step::Stale(options, stale, checking) => {
                    let started = Instant::now();
                    // Once stopped (Ctrl-C), no build starts; publishing checks again.
                    let output = if crate::interrupt::stops_here() {
                        Err(std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted before building"))
                    } else {
                        build::build_stale(options, stale, &|stages| stages())
                    };
                    let result = ProjectBuild { options, output, elapsed: checking + started.elapsed() };
                    on_done(&result);
                    result
                }
            })
            .collect()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::time::{Duration, SystemTime};

    /// Moves every directory's and ignore file's time out of the racy window, as time would.
    /// Sets every entry below `dir` (links themselves, not their targets) ten seconds back.
    fn age(dir: &Path) {
        let past = SystemTime::now() - Duration::from_secs(10);
        let seconds = past.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as libc::time_t;
        let times = [libc::timespec { tv_sec: seconds, tv_nsec: 0 }; 2];
        for entry in walkdir::WalkDir::new(dir).into_iter().map(Result::unwrap) {
            let path = std::ffi::CString::new(entry.path().as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a NUL-terminated path and two timespecs, read during the call only.
            let set =
                unsafe { libc::utimensat(libc::AT_FDCWD, path.as_ptr(), times.as_ptr(), libc::AT_SYMLINK_NOFOLLOW) };
            assert_eq!(set, 0, "{}", std::io::Error::last_os_error());
        }
    }

    fn project(dir: &Path, name: &str) {
        fs::create_dir_all(dir.join(name)).unwrap();
        fs::write(dir.join(name).join("agent-bundle.config.ts"), "export default {};\n").unwrap();
    }

    fn names(dir: &Path) -> Vec<String> {
        discover(dir).roots.iter().map(|root| root.strip_prefix(dir).unwrap().display().to_string()).collect()
    }

    #[test]
    fn only_folders_outside_the_projects_and_configs_or_ignore_files_change_a_search() {
        let dir = tempfile::tempdir().unwrap();
        let (root, plugin) = (dir.path(), dir.path().join("plugins/a"));
        fs::create_dir_all(plugin.join("src")).unwrap();
        fs::create_dir_all(root.join("shared")).unwrap();
        fs::write(root.join("shared/log.ts"), "").unwrap();
        fs::write(plugin.join("agent-bundle.config.ts"), "").unwrap();
        fs::write(plugin.join("src/agent-bundle.config.ts"), "").unwrap();
        // plugins/b was a project until its config went; plugins/c is one `--filter` leaves out.
        fs::create_dir_all(root.join("plugins/c/new")).unwrap();
        let roots = [plugin.clone(), root.join("plugins/b"), root.join("plugins/c")];
        // Where the search looked (`old` is gone since), but inside the project being built.
        let watched = ["", "plugins", "plugins/c", "shared", "old"].map(|dir| root.join(dir));
        let changes = |path: &str| changes_search(&root.join(path), &roots, |dir| watched.iter().any(|w| w == dir));
        assert!(!changes("shared/log.ts") && !changes("shared/gone.ts"), "shared code, there or not");
        assert!(changes("shared"), "a folder, where a project can appear");
        assert!(changes("old") && !changes("never-watched"), "a watched folder gone, not any path gone");
        assert!(!changes("plugins/a/src"), "inside a project being built");
        assert!(changes("plugins/c/new"), "inside a project left out");
        assert!(!changes("plugins/a/agent-bundle.config.ts"), "a project's config edited");
        assert!(changes("plugins/a/src/agent-bundle.config.ts"), "a config where no project is");
        assert!(changes("plugins/b/agent-bundle.config.ts"), "a project's config gone");
        assert!(changes("shared/.gitignore"));
        assert!(changes("shared/agent-bundle.manifest.json"), "a folder becoming an artifact, or a folder again");
        assert!(!changes("plugins/a/artifact/agent-bundle.manifest.json"), "a project's own publish");
    }

    #[test]
    fn work_inside_an_enclosing_repository_s_git_folder_keeps_the_memo() {
        let outer = tempfile::tempdir().unwrap();
        fs::create_dir(outer.path().join(".git")).unwrap();
        let dir = outer.path().join("workspace");
        project(&dir, "a");
        fs::create_dir_all(dir.join(".agent-bundle")).unwrap();
        age(&dir);
        assert_eq!(names(&dir), ["a"]);
        fs::write(outer.path().join(".git/index"), "").unwrap();
        let memo_path = dir.join(MEMO_FILE);
        let mut memo: Memo = serde_json::from_slice(&fs::read(&memo_path).unwrap()).unwrap();
        memo.roots.push("planted".into());
        write_json(&memo_path, &memo).unwrap();
        assert_eq!(names(&dir), ["a", "planted"], "answered from the memo");
        fs::write(outer.path().join(".gitignore"), "a/\n").unwrap();
        assert!(names(&dir).is_empty(), "an enclosing repository's .gitignore applies");
    }

    #[test]
    fn outside_a_repository_the_workspace_s_ignore_files_apply_and_none_above_it() {
        let outer = tempfile::tempdir().unwrap();
        // A dotfiles-style home folder: everything ignored, then taken back file by file.
        fs::write(outer.path().join(".gitignore"), "*\n").unwrap();
        let dir = outer.path().join("workspace");
        project(&dir, "a");
        project(&dir, "scratch/b");
        fs::write(dir.join(".gitignore"), "scratch/\n").unwrap();
        assert_eq!(names(&dir), ["a"]);
    }

    /// The folders above a workspace give their rules up to the repository's root (git's or
    /// Jujutsu's), the nearest first, and none above it (a personal `~/.ignore`).
    #[test]
    fn rules_above_apply_up_to_the_repository_s_root_only() {
        let home = tempfile::tempdir().unwrap();
        fs::write(home.path().join(".ignore"), "p9/\n").unwrap();
        for marker in [".git", ".jj"] {
            let repo = home.path().join(format!("repo{marker}"));
            let dir = repo.join("ws/plugins");
            for name in ["a", "p9", "scratch", "kept"] {
                project(&dir, name);
            }
            fs::create_dir(repo.join(marker)).unwrap();
            fs::write(repo.join(".gitignore"), "ws/plugins/scratch/\nws/plugins/kept/\n").unwrap();
            fs::write(repo.join("ws/.ignore"), "!plugins/kept/\n").unwrap();
            assert_eq!(names(&dir), ["a", "kept", "p9"], "in a repository marked by {marker}");
        }
    }

    /// As git tells them: a nearer file's rule about a folder takes back nothing its files
    /// match further up; a repository inside the workspace keeps the rules above out; a
    /// workspace those rules ignore holds nothing.
    #[test]
    fn rules_above_are_read_as_git_reads_them() {
        let repo = tempfile::tempdir().unwrap();
        let repo = repo.path();
        fs::create_dir(repo.join(".git")).unwrap();
        for name in ["ws/p/a", "ws/p/b", "ws/q/sub/a", "ws/q/c", "ignored/d"] {
            project(repo, name);
        }
        fs::write(repo.join(".gitignore"), "/ws/p/*/agent-bundle.config.ts\na/\nignored/\n").unwrap();
        fs::write(repo.join("ws/.gitignore"), "!p/\n").unwrap();
        fs::create_dir(repo.join("ws/q/sub/.git")).unwrap();
        assert!(names(&repo.join("ws/p")).is_empty(), "every config is ignored by the root's rule");
        assert_eq!(names(&repo.join("ws/q")), ["c", "sub/a"], "`a/` stops at the repository in `sub`");
        assert!(names(&repo.join("ignored")).is_empty(), "the workspace itself is ignored");
    }

    #[test]
    fn an_unreadable_directory_is_named_with_why() {
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let path = PathBuf::from("/w/plugins/secret");
        let error = ignore::Error::WithDepth {
            depth: 2,
            err: Box::new(ignore::Error::WithPath { path, err: Box::new(ignore::Error::Io(denied)) }),
        };
        assert_eq!(why_unreadable(&error), "/w/plugins/secret (permission denied)");
    }

    #[test]
    fn nothing_is_written_where_no_project_is_found_and_the_memo_starts_with_the_second_walk() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("empty")).unwrap();
        assert!(discover(dir.path()).roots.is_empty());
        assert!(!dir.path().join(".agent-bundle").exists());
        project(dir.path(), "a");
        assert_eq!(names(dir.path()), ["a"]);
        assert!(!dir.path().join(MEMO_FILE).exists(), "the first walk only makes the folder");
        assert_eq!(names(dir.path()), ["a"]);
        assert!(dir.path().join(MEMO_FILE).is_file());
    }

    #[test]
    fn the_memo_answers_while_its_states_hold_and_any_change_walks_again() {
        let dir = tempfile::tempdir().unwrap();
        let dir = dir.path();
        project(dir, "plugins/a");
        project(dir, "plugins/b");
        fs::create_dir_all(dir.join(".agent-bundle")).unwrap();
        age(dir);
        assert_eq!(names(dir), ["plugins/a", "plugins/b"]);

        // Answered from the memo: a planted root shows it was not walked for.
        let memo_path = dir.join(MEMO_FILE);
        let mut memo: Memo = serde_json::from_slice(&fs::read(&memo_path).unwrap()).unwrap();
        memo.roots.push("planted".into());
        write_json(&memo_path, &memo).unwrap();
        assert_eq!(names(dir), ["plugins/a", "plugins/b", "planted"]);

        project(dir, "plugins/c");
        assert_eq!(names(dir), ["plugins/a", "plugins/b", "plugins/c"], "a new project changes its parent");
        age(dir);
        names(dir);
        fs::write(dir.join(".gitignore"), "plugins/b/\n").unwrap();
        assert_eq!(names(dir), ["plugins/a", "plugins/c"], "a new .gitignore changes its directory");
        age(dir);
        names(dir);
        fs::write(dir.join(".gitignore"), "plugins/c/\n").unwrap();
        assert_eq!(names(dir), ["plugins/a", "plugins/b"], "an edited .gitignore is seen");
    }

    /// What git reads through a link, the memo follows too: an ignore file's target edited,
    /// or an ancestor's `.git` link that comes to resolve, makes no state of the walk change.
    #[test]
    fn ignore_files_and_repository_markers_behind_links_are_seen_as_git_sees_them() {
        let outer = tempfile::tempdir().unwrap();
        let (outer, dir) = (outer.path(), outer.path().join("ws"));
        project(&dir, "a");
        project(&dir, "b");
        fs::create_dir_all(dir.join(".agent-bundle")).unwrap();
        fs::write(dir.join("rules"), "# nothing ignored\n").unwrap();
        std::os::unix::fs::symlink("rules", dir.join(".gitignore")).unwrap();
        age(&dir);
        assert_eq!(names(&dir), ["a", "b"]);
        assert_eq!(names(&dir), ["a", "b"]);
        fs::write(dir.join("rules"), "b/\n").unwrap();
        assert_eq!(names(&dir), ["a"], "the link's target edited");

        // Not a repository while `.git` leads nowhere; the enclosing rules apply once it does.
        fs::remove_file(dir.join(".gitignore")).unwrap();
        fs::write(outer.join(".gitignore"), "ws/a/\n").unwrap();
        std::os::unix::fs::symlink(outer.join("git-dir"), outer.join(".git")).unwrap();
        age(outer);
        assert_eq!(names(&dir), ["a", "b"]);
        assert_eq!(names(&dir), ["a", "b"]);
        fs::create_dir(outer.join("git-dir")).unwrap();
        assert_eq!(names(&dir), ["b"], "the link resolves: a repository");
    }
}
