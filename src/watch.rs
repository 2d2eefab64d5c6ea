//! Watch mode: one long-lived database per project, rebuilt on file events.
//!
//! Exactly the directories the input walk lists are watched, each on its own: the ones
//! that hold inputs or can gain some, never `node_modules`, `target` or an artifact (a
//! recursive watch would put an inotify watch on every directory below the root). Each is
//! watched before it is listed, so no file created after its listing goes unseen. Events
//! are debounced; events that arrive while a build runs wait in the channel and are
//! coalesced into one follow-up build. Only the changed paths are re-read and only inputs
//! whose bytes changed are set, so salsa re-runs exactly what depends on them. Every
//! successful build is published atomically; a failed one leaves the last good artifact in
//! place.
//!
//! A batch collects events for at most `MAX_BATCH`, so a file written without pause never
//! holds an edit back. When the kernel drops events (its queue overflowed) or a watcher
//! fails, every project reads itself whole again (and a workspace searches again). A
//! project's root removed or replaced is read whole once it is back, its parent watched
//! while it is gone. Symbolic links and special files (a FIFO, a socket) are never inputs:
//! the loader opens without following links and without blocking.
//!
//! A workspace session also watches the directories its project search lists outside the
//! projects it builds (inside one `--filter` leaves out too), and searches again when one
//! changes (or a config or ignore file anywhere): a project that appears gets its first
//! build, one that disappears is dropped. The search
//! lists first and watches after, so it walks again only when a directory it just watched
//! changed since its listing (or is too new for its time to prove it did not). Projects
//! share watches (one inside another, a folder two import from): each watch records the
//! projects that need it, and one dropped releases only those no other project needs.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use rayon::prelude::*;

use crate::build::{self, BuildOptions, BuildOutput};
use crate::db::Database;
use crate::emit::publish::PublishStats;
use crate::loader::{LoadedProject, lies_in_skipped_dir};
use crate::output::OutputFile;
use crate::stamp::Clean;
use crate::workspace::Listed;

/// Why: editors save in bursts (write, rename, chmod); 30 ms of quiet catches a burst
/// without making a single save feel slow.
pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(30);

/// The longest a batch collects events after its first: a file written more often than the
/// debounce (a log in the project) must not hold an edit back for ever.
const MAX_BATCH: Duration = Duration::from_millis(250);

/// What one build of the watch loop did.
pub struct WatchBuild<'a> {
    /// The project built (one of the session's).
    pub options: &'a BuildOptions,
    /// What the build did, or why it could not read or publish the project (the session
    /// reads the whole project again at its next change, and goes on).
    pub output: io::Result<BuildOutput>,
    /// Whether this is the session's first build of the project (it reads everything).
    pub initial: bool,
    /// Project-relative inputs whose content changed since the last build that reported
    /// (empty for the first build, for one that could not read or publish the project, and
    /// for one with nothing to say).
    pub changed: Vec<String>,
    /// Whether an artifact is in place at the end of the build: what a failed build keeps.
    pub artifact_in_place: bool,
    /// Whether the artifact (or a part of it) went since the last build: published again.
    pub artifact_went: bool,
    /// Whether the artifact's path leads elsewhere since the last build (its link pointed
    /// elsewhere, removed or made): published there.
    pub artifact_moved: bool,
    /// Whether something that is no input changed where a build must read all (a link came
    /// or went in a payload, or where routes are).
    pub unread_changed: bool,
    /// How many queries salsa executed (the rest were reused).
    pub queries_executed: usize,
    /// Whether the build has nothing to say: what changed is read by no stage (no query ran
    /// again), nothing was published, and it says what the build before it said (see
    /// [`Session::said`]), a failure too. Saying so would be a change too, where the
    /// session's output goes into the project (through `tee`), and start build after build.
    /// (What it read is left for the next build that speaks to report.)
    pub nothing_to_say: bool,
    pub elapsed: Duration,
}

impl WatchBuild<'_> {
    /// What the build published, if it did.
    pub fn published(&self) -> Option<&PublishStats> {
        self.output.as_ref().ok()?.published.as_ref()
    }

    /// Whether the build has nothing to say ([`WatchBuild::nothing_to_say`]).
    pub fn has_nothing_to_say(&self) -> bool {
        self.nothing_to_say
    }
}

/// The write end of the pipe the signal handler reports on (-1 until a session starts).
static INTERRUPT_PIPE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_interrupt(signal: libc::c_int) {
    let fd = INTERRUPT_PIPE.load(Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: write(2) is async-signal-safe; one byte into a pipe never blocks here.
        unsafe { libc::write(fd, [1u8].as_ptr().cast(), 1) };
    }
    // SAFETY: signal(2) is async-signal-safe. A second such signal kills the process, as
    // during a build: a session slow to end (its last stamps) never ignores it.
    unsafe { libc::signal(signal, libc::SIG_DFL) };
}

/// Makes Ctrl-C stop the loop between builds instead of killing the process mid-publish,
/// and `kill` (SIGTERM) or a closed terminal (SIGHUP) too: the handler writes to a pipe,
/// and a thread waiting on it sends [`Change::Interrupt`]. So an idle session sleeps until
/// an event or a signal, instead of waking to poll a flag.
fn install_interrupt_handler(sender: mpsc::Sender<Change>) -> io::Result<()> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two descriptors it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the read end is this process's own new descriptor, owned by the file now.
    let mut read_end = unsafe { <fs::File as std::os::fd::FromRawFd>::from_raw_fd(fds[0]) };
    std::thread::Builder::new().name("interrupt".into()).spawn(move || {
        let _ = std::io::Read::read(&mut read_end, &mut [0u8]);
        let _ = sender.send(Change::Interrupt);
    })?;
    INTERRUPT_PIPE.store(fds[1], Ordering::SeqCst);
    let handler: extern "C" fn(libc::c_int) = on_interrupt;
    for signal in crate::interrupt::SIGNALS {
        // SAFETY: the handler only loads an atomic and writes to a pipe, both async-signal-safe.
        unsafe { libc::signal(signal, handler as libc::sighandler_t) };
    }
    Ok(())
}

/// The projects of a watch session.
pub enum Projects<'a> {
    /// One project, for the whole session.
    One(BuildOptions),
    /// What a search finds, searched again whenever a project may have come or gone.
    Found(Box<dyn Fn() -> Found + 'a>),
}

/// What a project search found.
pub struct Found {
    /// The selected projects, sorted by root.
    pub projects: Vec<BuildOptions>,
    /// Every project root found, selected or not: what lies below one is that project's.
    pub roots: Vec<PathBuf>,
    /// Every directory the search listed: where a project can appear.
    pub dirs: Vec<crate::workspace::Listed>,
}

/// Builds every project, then rebuilds each on every change to its inputs until Ctrl-C;
/// `report` is called after each round of builds (the first one, then one per batch of
/// events) with its builds, in project order, the roots of the projects a workspace search
/// no longer finds (dropped this round), and how long the round took. Projects build in
/// parallel on `pool`, each in its own long-lived database.
pub fn watch(
    projects: Projects<'_>,
    debounce: Duration,
    pool: &rayon::ThreadPool,
    mut report: impl FnMut(&[WatchBuild<'_>], &[PathBuf], Duration),
) -> io::Result<()> {
    let (sender, events) = mpsc::channel::<Change>();
    install_interrupt_handler(sender.clone())?;
    let inputs = Mutex::new(Watches::<SessionId>::new(watcher(sender.clone())?));
    let (mut sessions, mut search) = match projects {
        Projects::One(options) => (vec![Session::new(options)], None),
        Projects::Found(find) => {
            let mut search = Search { find, watches: Watches::new(watcher(sender)?), roots: Vec::new() };
            (search.run()?.into_iter().map(Session::new).collect(), Some(search))
        }
    };

    let mut batch = Batch::default();
    loop {
        let mut dropped = Vec::new();
        if let Some(search) = search.as_mut()
            && (batch.rescan || batch.search || batch.paths.iter().any(|path| search.changes_at(path)))
        {
            dropped = sync_sessions(search.run()?, &mut sessions, &inputs);
        }
        if batch.rescan {
            sessions.iter_mut().for_each(Session::read_all_again);
        }
        watch_swapped_artifacts_again(&batch.paths, &sessions, &inputs);
        let changed: Vec<Vec<PathBuf>> = sessions.iter().map(|session| session.changes_among(&batch.paths)).collect();
        let due = |session: &Session, paths: &Vec<PathBuf>| !session.built || session.rescan || !paths.is_empty();
        if sessions.iter().zip(&changed).any(|(session, paths)| due(session, paths)) {
            let started = Instant::now();
            forget_changed(&sessions, &changed, &inputs);
            let builds: Vec<_> = pool.install(|| {
                sessions
                    .par_iter_mut()
                    .zip(&changed)
                    .filter(|(session, paths)| due(session, paths))
                    .map(|(session, paths)| session.build(paths, &inputs))
                    .collect()
            });
            if let Some(error) = inputs.lock().expect("no panics while locked").failure.take() {
                return Err(error);
            }
            report(&builds, &dropped, started.elapsed());
        } else if !dropped.is_empty() {
            report(&[], &dropped, Duration::ZERO);
        }
        // Checked after the builds, which watched the folders they found: a project that
        // landed in one before its watch is found here, one after it brings its own event.
        if search.as_ref().is_some_and(|search| changed.iter().flatten().any(|path| search.finds_new_project(path))) {
            batch = Batch { search: true, ..Batch::default() };
            continue;
        }
        match next_batch(&events, debounce) {
            Some(mut next) => {
                inputs.lock().expect("no panics while locked").name_under_every_path(&mut next.paths);
                batch = next;
            }
            None => {
                pool.install(|| sessions.par_iter_mut().for_each(|session| session.stamp()));
                return Ok(());
            }
        }
    }
}

/// Stops watching the directories at or below what changed (see `Watches::forget_below`):
/// each session that builds for a path watches again what it reads there now, and the
/// others keep their watches there (a project inside another, a folder two import from).
fn forget_changed(sessions: &[Session], changed: &[Vec<PathBuf>], inputs: &Mutex<Watches<SessionId>>) {
    let mut inputs = inputs.lock().expect("no panics while locked");
    let forgotten = inputs.forget_below(&changed.concat());
    let reads_again = |holder: SessionId, dir: &Path| {
        let paths = sessions.iter().zip(changed).find(|(session, _)| session.id == holder).map(|(_, paths)| paths);
        paths.is_some_and(|paths| paths.iter().any(|path| dir.starts_with(path)))
    };
    inputs.restore(forgotten, |holder, dir| !reads_again(holder, dir));
}

/// Watches anew each built artifact among `paths` that a project's walk skips and watches
/// (another build swapped it in, and its watch went with the folder it replaced).
fn watch_swapped_artifacts_again(paths: &[PathBuf], sessions: &[Session], inputs: &Mutex<Watches<SessionId>>) {
    for path in paths {
        let skipping: Vec<SessionId> =
            sessions.iter().filter(|session| session.skips_artifact_at(path)).map(|session| session.id).collect();
        if !skipping.is_empty() {
            inputs.lock().expect("no panics while locked").watch_again(path, skipping);
        }
    }
}

/// Makes the sessions the projects a search `found`: a new one gets a session (and its
/// first build), a gone one loses its session and the watches no other one needs. Returns
/// the gone ones' roots.
fn sync_sessions(
    found: Vec<BuildOptions>,
    sessions: &mut Vec<Session>,
    inputs: &Mutex<Watches<SessionId>>,
) -> Vec<PathBuf> {
    let (gone, kept): (Vec<Session>, Vec<Session>) =
        std::mem::take(sessions).into_iter().partition(|s| !found.iter().any(|options| options.root == s.options.root));
    *sessions = kept;
    let mut inputs = inputs.lock().expect("no panics while locked");
    for session in &gone {
        inputs.release(session.id);
    }
    drop(inputs);
    let gone: Vec<PathBuf> = gone.into_iter().map(|session| session.options.root).collect();
    let new: Vec<Session> = found
        .into_iter()
        .filter(|options| !sessions.iter().any(|s| s.options.root == options.root))
        .map(Session::new)
        .collect();
    sessions.extend(new);
    sessions.sort_by(|a, b| a.options.root.cmp(&b.options.root));
    gone
}

/// What a watcher (or Ctrl-C) reports.
enum Change {
    Path(PathBuf),
    /// Events were lost (the kernel's queue overflowed) or the watcher failed: anything may
    /// have changed.
    Rescan,
    /// Ctrl-C (or SIGTERM, SIGHUP): the session ends.
    Interrupt,
}

/// The changes of one round of builds.
#[derive(Default)]
struct Batch {
    /// Sorted, without repeats.
    paths: Vec<PathBuf>,
    rescan: bool,
    /// Whether a workspace searches for its projects again (one appeared inside another).
    search: bool,
}

/// The next batch of changes: the first event, and every one that follows within
/// `debounce` of the last, for at most [`MAX_BATCH`]; `None` once Ctrl-C was pressed or the
/// watchers are gone.
fn next_batch(events: &mpsc::Receiver<Change>, debounce: Duration) -> Option<Batch> {
    let first = events.recv().ok()?;
    let deadline = Instant::now() + MAX_BATCH;
    let mut batch = Batch::default();
    let mut next = Some(first);
    while let Some(change) = next {
        match change {
            Change::Path(path) => batch.paths.push(path),
            Change::Rescan => batch.rescan = true,
            Change::Interrupt => return None,
        }
        // What comes after the deadline waits in the channel for the next batch.
        let left = deadline.saturating_duration_since(Instant::now());
        next = if left.is_zero() { None } else { events.recv_timeout(debounce.min(left)).ok() };
    }
    batch.paths.sort();
    batch.paths.dedup();
    Some(batch)
}

/// A watcher sending the paths of every creation, modification and removal to `sender`,
/// and a rescan when it lost events.
fn watcher(sender: mpsc::Sender<Change>) -> io::Result<RecommendedWatcher> {
    notify::recommended_watcher(move |result: notify::Result<notify::Event>| match result {
        Ok(event) if event.need_rescan() => {
            let _ = sender.send(Change::Rescan);
        }
        Ok(event) if matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_)) => {
            for path in event.paths {
                let _ = sender.send(Change::Path(path));
            }
        }
        Ok(_) => {}
        Err(_) => {
            let _ = sender.send(Change::Rescan);
        }
    })
    .map_err(io::Error::other)
}

/// A workspace's project search, and the watches on the directories it lists outside the
/// projects it builds (inside them, the projects' own watches see a config file appear).
struct Search<'a> {
    find: Box<dyn Fn() -> Found + 'a>,
    watches: Watches<()>,
    /// Every project root the last search found.
    roots: Vec<PathBuf>,
}

/// Why a bound: while something keeps creating folders outside the projects, each search
/// adds watches; the events of what a last one missed bring the next search.
const SEARCH_PASSES: usize = 3;

impl Search<'_> {
    /// Whether a change at `path` can change what the search finds.
    fn changes_at(&self, path: &Path) -> bool {
        crate::workspace::changes_search(path, &self.roots, |dir| self.watches.is_watched(dir))
    }

    /// Whether the folder at `path`, inside a project, holds a project the last search did
    /// not find: one moved or copied in whole, whose config file made no event of its own.
    fn finds_new_project(&self, path: &Path) -> bool {
        let is_new_folder = !self.roots.iter().any(|root| root == path)
            && self.roots.iter().any(|root| path.starts_with(root))
            && fs::symlink_metadata(path).is_ok_and(|metadata| metadata.is_dir());
        is_new_folder && crate::workspace::search(path).0.roots.iter().any(|root| !self.roots.contains(root))
    }

    /// Searches, and watches where the search looked. A directory it had not watched yet
    /// may have changed between its listing and its watch: then it searches again.
    fn run(&mut self) -> io::Result<Vec<BuildOptions>> {
        let mut pass = 0;
        loop {
            pass += 1;
            let Found { projects, roots, dirs } = (self.find)();
            // Inside a project it builds, the project's own watches see a config appear; inside
            // one `--filter` leaves out, no session watches: the search does.
            let built = |dir: &Path| projects.iter().any(|project| dir.starts_with(&project.root));
            let outside: Vec<Listed> = dirs.into_iter().filter(|listed| !built(&listed.dir)).collect();
            self.roots = roots;
            // Stale watches go first: a renamed directory keeps its watch (see `forget_below`).
            let keep: BTreeSet<&PathBuf> = outside.iter().map(|listed| &listed.dir).collect();
            let stale: Vec<PathBuf> = self.watches.dirs.keys().filter(|dir| !keep.contains(dir)).cloned().collect();
            self.watches.forget_below(&stale);
            let new: Vec<&Listed> = outside.iter().filter(|listed| !self.watches.is_watched(&listed.dir)).collect();
            for listed in &new {
                self.watches.add((), &listed.dir);
            }
            if let Some(error) = self.watches.failure.take() {
                return Err(error);
            }
            if new.iter().all(|listed| listed.unchanged()) || pass == SEARCH_PASSES {
                return Ok(projects);
            }
        }
    }
}

/// What tells a project's session from every other of the process, whose watches it holds.
type SessionId = usize;

static NEXT_SESSION_ID: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One project of a watch session: its database and inputs, kept between builds.
struct Session {
    id: SessionId,
    options: BuildOptions,
    /// Whether the project had its first build (a failed one too: after that it builds
    /// again at its next change).
    built: bool,
    /// Whether the next build reads the whole project: the first, and any after an error
    /// (the inputs may be half read).
    read_whole: bool,
    /// Whether the watchers lost events: the project builds, read whole, in this round.
    rescan: bool,
    loaded: LoadedProject,
    /// Outputs: the artifact, what a publish makes beside it, and the files the session's
    /// output goes to.
    exclude: Vec<PathBuf>,
    log: Arc<Mutex<Vec<String>>>,
    /// Inputs that changed in builds that could not read or publish the project, or had
    /// nothing to say: the next build that reports reports them.
    unreported: BTreeSet<String>,
    /// What the last build left to stamp, and the artifact it published, when it published
    /// without an error.
    clean: Option<(Clean, BTreeMap<String, OutputFile>)>,
    /// Each file the last publish left in the artifact, with its size: what a change seen
    /// in the artifact is checked against.
    published: Vec<(PathBuf, u64)>,
    /// The manifest the last publish wrote (`restore_manifest`).
    manifest: Option<Arc<[u8]>>,
    /// What the last build said: a build that says otherwise is reported (one that
    /// publishes after a failure says it went through: it may be the session's recovery).
    said: Option<Said>,
}

/// What a build said: its diagnostics and whether it published, or why it could not read or
/// publish the project.
#[derive(PartialEq)]
enum Said {
    Built { published: bool, diagnostics: Vec<crate::diagnostics::Diagnostic> },
    Failed(String),
}

/// What a session with its artifact at `out_dir` never reads: the artifact, what a publish
/// makes beside it, and the files the session's output goes to.
fn outputs(out_dir: &Path) -> Vec<PathBuf> {
    let publishing = crate::emit::publish::byproducts(out_dir);
    std::iter::once(out_dir.to_owned()).chain(publishing).chain(own_output_files()).collect()
}

/// The regular files this process writes its output to (`watch > watch.log`, in the
/// project): read as inputs, each line a build printed would start another build.
fn own_output_files() -> Vec<PathBuf> {
    let target = |fd: u8| std::fs::read_link(format!("/proc/self/fd/{fd}")).ok();
    [1, 2].into_iter().filter_map(target).filter(|path| path.is_file()).collect()
}

impl Session {
    fn new(options: BuildOptions) -> Self {
        let log = Arc::new(Mutex::new(Vec::new()));
        let db = Database::with_query_log(log.clone()).with_cache(options.cache.clone());
        let exclude = outputs(&options.out_dir);
        let loaded = LoadedProject::new(db, options.root.clone());
        let unreported = BTreeSet::new();
        Session {
            id: NEXT_SESSION_ID.fetch_add(1, Ordering::Relaxed),
            options,
            built: false,
            read_whole: true,
            rescan: false,
            loaded,
            exclude,
            log,
            unreported,
            clean: None,
            published: Vec::new(),
            manifest: None,
            said: None,
        }
    }

    /// Leaves the stamp a clean build would have, if the last build was clean and nothing
    /// changed since (its inputs, its artifact): the next `build` is then a no-op. Failing
    /// to is no failure (the stamp is an optimization).
    fn stamp(&self) {
        if let Some((clean, files)) = &self.clean {
            let _ = build::stamp_last_build(&self.options, &self.loaded, clean, files);
        }
    }

    fn artifact_in_place(&self) -> bool {
        crate::emit::manifest::holds_artifact(&self.options.out_dir)
    }

    /// Whether a file the last publish left in the artifact is gone or resized (a file
    /// deleted there, a folder of it removed): publishing again repairs it. The artifact's
    /// own swaps and the removal of the one it replaced leave it whole. Another build's
    /// publish (its manifest in place of this session's) is no damage: two sessions of
    /// other options on one artifact would take turns repairing it for ever; the next
    /// change publishes again. (A manifest written over with what names no build is.)
    fn artifact_damaged(&self) -> bool {
        let manifest = self.options.out_dir.join(crate::emit::MANIFEST_FILE);
        let replaced = fs::read(manifest).is_ok_and(|now| {
            crate::emit::manifest::is_written(&now) && self.manifest.as_ref().is_some_and(|ours| *now != **ours)
        });
        !replaced
            && self
                .published
                .iter()
                .any(|(path, size)| !fs::symlink_metadata(path).is_ok_and(|m| m.is_file() && m.len() == *size))
    }

    fn read_all_again(&mut self) {
        (self.read_whole, self.rescan) = (true, true);
    }

    /// The paths of `batch` that can be this project's inputs (below its root, or in an
    /// outside directory its modules import from), the root itself (removed, replaced,
    /// renamed: it is read whole again), and the artifact if it is gone or replaced (it is
    /// published again, or refused; its own swaps, which leave it in place, are not a change).
    fn changes_among(&self, batch: &[PathBuf]) -> Vec<PathBuf> {
        let root = &self.options.root;
        let input = |path: &PathBuf| match path.strip_prefix(root) {
            Ok(relative) => {
                !lies_in_skipped_dir(relative, self.is_output(path))
                    && (self.read_whole || self.loaded.may_change_inputs(path))
            }
            Err(_) => self.loaded.in_outside_dir(path),
        };
        // Gone, or replaced by something else (an empty folder is published into; one holding
        // files of someone's, once they go), or a part of it gone (asked once a batch).
        let out_dir = &self.options.out_dir;
        let artifact_gone =
            |path: &PathBuf| (out_dir.starts_with(path) || path.starts_with(out_dir)) && !self.artifact_in_place();
        let damaged = std::cell::OnceCell::new();
        let artifact_damaged =
            |path: &PathBuf| path.starts_with(out_dir) && *damaged.get_or_init(|| self.artifact_damaged());
        let changes = |path: &&PathBuf| {
            input(path) || artifact_gone(path) || artifact_damaged(path) || self.artifact_moves_at(path)
        };
        batch.iter().filter(changes).cloned().collect()
    }

    /// Whether `path` is the artifact's path as named, and leads elsewhere now than where
    /// the session publishes (a link pointed elsewhere, removed or made). Asked of an event
    /// there only, so a session pays nothing for it otherwise.
    fn artifact_moves_at(&self, path: &Path) -> bool {
        path == self.options.out_dir_as_named && crate::emit::publish::artifact_dir(path) != self.options.out_dir
    }

    /// Publishes where the artifact's path leads now, if that changed; the artifact where it
    /// led before is left as it is, no longer the session's. Its watches start over as a new
    /// session's do (the old artifact's folders and parent are no longer its own): it reads
    /// the project whole, watching again what it reads, since what it leaves out changed.
    fn follow_artifact_again(&mut self, watches: &Mutex<Watches<SessionId>>) -> bool {
        let out_dir = crate::emit::publish::artifact_dir(&self.options.out_dir_as_named);
        if out_dir == self.options.out_dir {
            return false;
        }
        watches.lock().expect("no panics while locked").release(self.id);
        self.exclude = outputs(&out_dir);
        self.options.out_dir = out_dir;
        (self.published, self.manifest, self.read_whole) = (Vec::new(), None, true);
        true
    }

    /// Whether `path` is a built artifact inside the project that its walk skips and watches
    /// (not its own, whose swaps are no change).
    fn skips_artifact_at(&self, path: &Path) -> bool {
        !self.is_output(path) && self.loaded.skips_artifact_at(path)
    }

    /// Whether `path` is or lies in what the session writes: the project's artifact, what a
    /// publish leaves beside it, and this process's own output files.
    fn is_output(&self, path: &Path) -> bool {
        self.exclude.iter().any(|e| path.starts_with(e))
    }

    /// Records what `output` published: each file with its size, and the manifest.
    fn note_published(&mut self, output: &BuildOutput) {
        let out_dir = &self.options.out_dir;
        self.published =
            output.compiled.files.iter().map(|(path, file)| (out_dir.join(path), file.bytes.len() as u64)).collect();
        self.manifest = output.compiled.files.get(crate::emit::MANIFEST_FILE).map(|file| file.bytes.clone());
    }

    /// Watches every folder of the artifact the last publish wrote, so that a part of it
    /// deleted is published again. (Unwatched before each build: a publish swaps the folders
    /// away, and the watcher, which keys its watches by path, would drop the new ones when it
    /// saw the old ones go.)
    fn watch_artifact(&self, watches: &Mutex<Watches<SessionId>>) {
        let out_dir = &self.options.out_dir;
        let mut folders: BTreeSet<&Path> = self.published.iter().filter_map(|(path, _)| path.parent()).collect();
        // (And the folders between them and the artifact's root.)
        for folder in folders.clone() {
            folders.extend(folder.ancestors().take_while(|dir| dir.starts_with(out_dir)));
        }
        let mut watches = watches.lock().expect("no panics while locked");
        for folder in folders {
            watches.add(self.id, folder);
        }
    }

    /// Puts back the manifest the last publish wrote when it alone of the artifact's marks
    /// went (`publish::restore_manifest`).
    fn restore_manifest(&self) {
        if let Some(manifest) = &self.manifest {
            crate::emit::publish::restore_manifest(&self.options.out_dir, manifest, &self.published);
        }
    }

    /// Reads the project (all of it on its first build, else only `changed`), then builds
    /// and publishes it. Every directory the reading lists is watched first.
    fn build(&mut self, changed: &[PathBuf], watches: &Mutex<Watches<SessionId>>) -> WatchBuild<'_> {
        let started = Instant::now();
        self.log.lock().expect("query log lock").clear();
        let settings = self.options.settings();
        let id = self.id;
        let mut watch = |dir: &Path| watches.lock().expect("no panics while locked").add(id, dir);
        let initial = !self.built;
        let artifact_moved = changed.contains(&self.options.out_dir_as_named) && self.follow_artifact_again(watches);
        let out_dir = &self.options.out_dir;
        let root = &self.options.root;
        // (The artifact itself, what it holds, or a folder between it and the project.)
        let artifact_went = changed
            .iter()
            .any(|path| path.starts_with(out_dir) || (out_dir.starts_with(path) && !root.starts_with(path)));
        if artifact_went {
            self.restore_manifest();
        }
        let unread_changed = changed.iter().any(|path| self.loaded.changed_unread(path));
        if changed.contains(root) || !root.is_dir() {
            // Its watches were forgotten with it; what is there now may be another folder.
            // Gone with no event of its own (a folder above it renamed: the watches follow
            // the folders and name them as they were): reading it whole says so.
            self.read_whole = true;
        }
        let project = if self.read_whole {
            self.loaded.load(settings, &self.exclude, &mut watch)
        } else {
            self.loaded.refresh(changed, settings, &self.exclude, &mut watch)
        };
        let read = project.is_ok();
        let cache_before = self.options.cache.stats();
        let artifact_watches =
            watches.lock().expect("no panics while locked").forget_below(std::slice::from_ref(&self.options.out_dir));
        let last = self.clean.take().map(|(_, files)| files);
        let output = project.and_then(|project| {
            build::compile_and_publish(&mut self.loaded, project, &self.options, &mut watch, last.as_ref())
                .map(|(output, _)| output)
        });
        if read && !initial {
            self.unreported.extend(self.loaded.changed().iter().cloned());
        }
        // The session's cache counts for as long as it runs; a report counts one build.
        let output = output.map(|mut output| {
            output.work.cache = output.work.cache.since(&cache_before);
            output
        });
        (self.built, self.read_whole, self.rescan) = (true, output.is_err(), false);
        self.clean = output.as_ref().ok().and_then(|output| Some((output.clean()?, output.compiled.files.clone())));
        let output = output.map(|mut output| {
            build::note_unlistable(&mut output.compiled, self.loaded.unlistable());
            build::note_artifact_path(&mut output.compiled, &self.options.out_dir);
            output
        });
        if !root.is_dir()
            && let Some(parent) = root.parent()
        {
            // Gone with its watch: its parent says when it comes back.
            watch(parent);
        }
        // The artifact's parent says when it is removed, where no input walk watches it:
        // outside the project, or in a folder the walk skips (`target/plugin`); the folder of
        // its name, when a link there is pointed elsewhere or removed.
        for artifact in [&self.options.out_dir, &self.options.out_dir_as_named] {
            if let Some(parent) = artifact.parent() {
                watch(parent);
            }
        }
        if let Ok(output) = &output
            && output.published.is_some()
        {
            self.note_published(output);
        }
        if self.artifact_in_place() {
            self.watch_artifact(watches);
        } else if self.options.out_dir.is_dir() {
            // A folder of someone's files where the artifact goes: emptied, it takes a publish.
            watch(&self.options.out_dir);
        }
        // Another project's walk watches this artifact too (this one lies inside it).
        watches.lock().expect("no panics while locked").restore(artifact_watches, |holder, _| holder != id);
        let said = match &output {
            Ok(output) => {
                Said::Built { published: output.published.is_some(), diagnostics: output.compiled.diagnostics.clone() }
            }
            Err(error) => Said::Failed(error.to_string()),
        };
        let says_what_last_said = self.said.as_ref() == Some(&said);
        self.said = Some(said);
        let queries_executed = self.log.lock().expect("query log lock").len();
        let published_anew = output.as_ref().ok().and_then(|o| o.published.as_ref()).is_some_and(PublishStats::changed);
        let nothing_to_say = says_what_last_said
            && !initial
            && !artifact_went
            && !artifact_moved
            && !unread_changed
            && queries_executed == 0
            && !published_anew;
        // What it read is reported by the build that speaks (one that could not read or
        // publish leaves it to the next).
        let changed = if output.is_ok() && !nothing_to_say {
            std::mem::take(&mut self.unreported).into_iter().collect()
        } else {
            Vec::new()
        };
        WatchBuild {
            options: &self.options,
            changed,
            artifact_in_place: self.artifact_in_place(),
            artifact_went,
            artifact_moved,
            unread_changed,
            output,
            initial,
            queries_executed,
            nothing_to_say,
            elapsed: started.elapsed(),
        }
    }
}

/// The directories being watched, each without its subdirectories, with the holders that
/// need each watch (the projects' sessions; the project search has watches of its own): a
/// folder can be two projects' (one inside the other, a folder both import from), and a
/// project that goes must leave the other's watches in place.
struct Watches<Holder> {
    watcher: RecommendedWatcher,
    dirs: BTreeMap<PathBuf, BTreeSet<Holder>>,
    /// Each watched directory's device and inode, and the watched paths of each: inotify
    /// watches an inode once, and reports its events under one of the paths it is watched
    /// by (a folder a project reaches through a link and by its own path), so each is said
    /// under all of them, and stopping the watch of one stops none of the others'.
    inodes: BTreeMap<PathBuf, Inode>,
    by_inode: BTreeMap<Inode, BTreeSet<PathBuf>>,
    /// The first directory that could not be watched: the session stops rather than miss
    /// the edits made there.
    failure: Option<io::Error>,
}

/// Which folder a path leads to: its device and inode, and its birth time where the file
/// system keeps one (ext4 gives a folder made again at once the inode number it had).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Inode(u64, u64, Option<std::time::SystemTime>);

impl Inode {
    fn of(dir: &Path) -> Option<Inode> {
        let metadata = fs::metadata(dir).ok()?;
        Some(Inode(metadata.dev(), metadata.ino(), metadata.created().ok()))
    }
}

/// Directories no longer watched, each with the holders that needed it.
type Forgotten<Holder> = Vec<(PathBuf, BTreeSet<Holder>)>;

impl<Holder: Ord + Copy> Watches<Holder> {
    fn new(watcher: RecommendedWatcher) -> Self {
        Watches { watcher, dirs: BTreeMap::new(), inodes: BTreeMap::new(), by_inode: BTreeMap::new(), failure: None }
    }

    fn is_watched(&self, dir: &Path) -> bool {
        self.dirs.contains_key(dir)
    }

    /// Watches `dir` for `holder`.
    fn add(&mut self, holder: Holder, dir: &Path) {
        let mut holders = BTreeSet::from([holder]);
        if self.dirs.contains_key(dir) {
            let inode = Inode::of(dir);
            if inode.is_some() && inode.as_ref() == self.inodes.get(dir) {
                self.dirs.get_mut(dir).expect("watched").insert(holder);
                return;
            }
            // Removed and made again since (no build read it): its watch went with the folder
            // it was on.
            holders.extend(self.unwatch(dir.to_owned()).into_iter().flat_map(|(_, holders)| holders));
        }
        if self.failure.is_some() {
            return;
        }
        match self.watcher.watch(dir, RecursiveMode::NonRecursive) {
            Ok(()) => {
                self.dirs.insert(dir.to_owned(), holders);
                if let Some(inode) = Inode::of(dir) {
                    self.inodes.insert(dir.to_owned(), inode);
                    self.by_inode.entry(inode).or_default().insert(dir.to_owned());
                }
            }
            // Gone before it could be watched: its removal is an event of its parent.
            Err(_) if !dir.is_dir() => {}
            // A folder this process may not list: nothing in it is read, and a change of its
            // mode (which may make it readable) is an event of its parent, watched instead.
            Err(notify::Error { kind: notify::ErrorKind::Io(error), .. })
                if error.kind() == io::ErrorKind::PermissionDenied =>
            {
                if let Some(parent) = dir.parent() {
                    self.add(holder, parent);
                }
            }
            Err(error) => self.failure = Some(watch_error(dir, &error)),
        }
    }

    /// Watches again each directory `forgotten` for those of its holders that `keeps`: what
    /// is at its path now.
    fn restore(&mut self, forgotten: Forgotten<Holder>, keeps: impl Fn(Holder, &Path) -> bool) {
        for (dir, holders) in forgotten {
            for holder in holders.into_iter().filter(|holder| keeps(*holder, &dir)) {
                self.add(holder, &dir);
            }
        }
    }

    /// Watches `dir` anew, and what was watched below it, for whoever needed them, and for
    /// `holders` too: it was replaced (an artifact a new build swapped in), and its watch
    /// went with the folder it was on.
    fn watch_again(&mut self, dir: &Path, holders: impl IntoIterator<Item = Holder>) {
        let forgotten = self.forget_below(&[dir.to_owned()]);
        self.restore(forgotten, |_, _| true);
        for holder in holders {
            self.add(holder, dir);
        }
    }

    /// Stops watching the `changed` paths and every directory below them, for every holder;
    /// re-reading them watches again what still exists. Why before re-reading: a renamed
    /// directory keeps its inotify watch, so removing the old path's watch afterwards would
    /// drop the new one. Returns what it stopped watching.
    fn forget_below(&mut self, changed: &[PathBuf]) -> Forgotten<Holder> {
        // Paths order by component, so a path's descendants follow it directly.
        let mut below = Vec::new();
        for path in changed {
            below.extend(
                self.dirs
                    .range(path.clone()..)
                    .take_while(|(dir, _)| dir.starts_with(path))
                    .map(|(dir, _)| dir.clone()),
            );
        }
        below.into_iter().filter_map(|dir| self.unwatch(dir)).collect()
    }

    /// Gives up every watch of `holder`'s, and stops those no one else needs.
    fn release(&mut self, holder: Holder) {
        let mut unneeded = Vec::new();
        for (dir, holders) in &mut self.dirs {
            if holders.remove(&holder) && holders.is_empty() {
                unneeded.push(dir.clone());
            }
        }
        for dir in unneeded {
            self.unwatch(dir);
        }
    }

    fn unwatch(&mut self, dir: PathBuf) -> Option<(PathBuf, BTreeSet<Holder>)> {
        // Fails for a directory already gone (the kernel dropped its watch): nothing to do.
        let _ = self.watcher.unwatch(&dir);
        if let Some(inode) = self.inodes.remove(&dir)
            && let Some(paths) = self.by_inode.get_mut(&inode)
        {
            paths.remove(&dir);
            // The inode's one watch went with this path: the others' need it still.
            for other in paths.iter() {
                let _ = self.watcher.watch(other, RecursiveMode::NonRecursive);
            }
            if paths.is_empty() {
                self.by_inode.remove(&inode);
            }
        }
        self.dirs.remove_entry(&dir)
    }

    /// Adds to `paths` each one as it is named under the other paths its folder is watched
    /// by (see `inodes`).
    fn name_under_every_path(&self, paths: &mut Vec<PathBuf>) {
        let mut more = Vec::new();
        for path in paths.iter() {
            let watched = [Some(path.as_path()), path.parent()].into_iter().flatten();
            let Some((dir, inode)) = watched.filter_map(|dir| Some((dir, self.inodes.get(dir)?))).next() else {
                continue;
            };
            let rest = path.strip_prefix(dir).expect("a path lies at or below its folder");
            let others = self.by_inode[inode].iter().filter(|other| other.as_path() != dir);
            more.extend(others.map(|other| other.join(rest)));
        }
        if !more.is_empty() {
            paths.extend(more);
            paths.sort();
            paths.dedup();
        }
    }
}

fn watch_error(dir: &Path, error: &notify::Error) -> io::Error {
    let why = match error.kind {
        notify::ErrorKind::MaxFilesWatch => {
            "the limit of inotify watches is reached (raise it with `sysctl fs.inotify.max_user_watches=N`)".to_owned()
        }
        _ => error.to_string(),
    };
    io::Error::other(format!("cannot watch {}: {why}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn ctrl_c_ends_the_session_even_inside_a_batch() {
        let (sender, events) = mpsc::channel();
        sender.send(Change::Path(PathBuf::from("a"))).unwrap();
        sender.send(Change::Interrupt).unwrap();
        assert!(next_batch(&events, Duration::from_millis(30)).is_none());
    }

    #[test]
    fn a_batch_ends_at_its_cap_though_events_keep_coming() {
        let (sender, events) = mpsc::channel();
        let writing = Arc::new(AtomicBool::new(true));
        let writer = {
            let writing = writing.clone();
            std::thread::spawn(move || {
                while writing.load(Ordering::SeqCst) {
                    sender.send(Change::Path(PathBuf::from("log"))).unwrap();
                    std::thread::sleep(Duration::from_millis(5));
                }
                sender.send(Change::Rescan).unwrap();
            })
        };
        let batch = next_batch(&events, Duration::from_millis(30)).unwrap();
        assert_eq!((batch.paths, batch.rescan), (vec![PathBuf::from("log")], false));
        writing.store(false, Ordering::SeqCst);
        writer.join().unwrap();
        let rest = next_batch(&events, Duration::from_millis(30)).unwrap();
        assert!(rest.rescan, "what came after the cap waits for the next batch");
    }

    /// A publish that fails after staging (an artifact that is a mount point: EBUSY) makes
    /// and removes its staging folder in the project: were that a change, the session would
    /// fail to publish over and over. It reads the project whole after a failure, so every
    /// other path there is one.
    #[test]
    fn what_a_publish_makes_beside_the_artifact_is_no_change() {
        let dir = tempfile::tempdir().unwrap();
        let options = BuildOptions::new(dir.path().to_owned(), None, Arc::new(crate::cache::Cache::disabled()));
        let session = Session::new(options);
        assert!(session.read_whole);
        let [staging, old] = crate::emit::publish::byproducts(&session.options.out_dir);
        let notes = dir.path().join("notes.txt");
        assert_eq!(session.changes_among(&[staging, old, notes.clone()]), [notes]);
    }

    /// Watches on no event: the tests below look at what is watched.
    fn silent_watches<Holder: Ord + Copy>() -> Watches<Holder> {
        Watches::new(notify::recommended_watcher(|_: notify::Result<notify::Event>| {}).unwrap())
    }

    /// The directories `watches` holds, relative to `dir`.
    fn watched_below<Holder>(watches: &Watches<Holder>, dir: &Path) -> Vec<String> {
        watches.dirs.keys().map(|d| d.strip_prefix(dir).unwrap().to_str().unwrap().to_owned()).collect()
    }

    #[test]
    fn forgetting_a_directory_forgets_exactly_what_lies_below_it() {
        let dir = tempfile::tempdir().unwrap();
        let names = ["a", "a/b", "a/b/c", "a-b", "a.b", "ab", "b"];
        let mut watches = silent_watches();
        for name in names {
            std::fs::create_dir_all(dir.path().join(name)).unwrap();
            watches.add((), &dir.path().join(name));
        }
        assert_eq!(watches.dirs.len(), names.len());
        let forgotten = watches.forget_below(&[dir.path().join("a"), dir.path().join("b/file")]);
        assert_eq!(watched_below(&watches, dir.path()), ["a-b", "a.b", "ab", "b"]);
        assert_eq!(forgotten.len(), 3);
    }

    /// A folder removed and made again while no build read it is watched anew when a listing
    /// adds it again (its watch went with the folder it was on); one folder watched by two
    /// paths is said under both.
    #[test]
    fn a_folder_made_again_is_watched_again_and_one_watched_by_two_paths_is_said_under_both() {
        let dir = tempfile::tempdir().unwrap();
        let (sender, events) = mpsc::channel();
        let mut watches = Watches::new(watcher(sender).unwrap());
        let cache = dir.path().join(".cache");
        std::fs::create_dir(&cache).unwrap();
        watches.add((), &cache);
        std::fs::remove_dir(&cache).unwrap();
        std::fs::create_dir(&cache).unwrap();
        watches.add((), &cache);
        while events.recv_timeout(Duration::from_millis(200)).is_ok() {}
        std::fs::write(cache.join("x"), "").unwrap();
        let seen = match events.recv_timeout(Duration::from_secs(5)) {
            Ok(Change::Path(path)) => Some(path),
            _ => None,
        };
        assert_eq!(seen, Some(cache.join("x")), "an event of the folder made again");

        std::os::unix::fs::symlink(".cache", dir.path().join("alias")).unwrap();
        watches.add((), &dir.path().join("alias"));
        let mut paths = vec![cache.join("y")];
        watches.name_under_every_path(&mut paths);
        assert_eq!(paths, [cache.join("y"), dir.path().join("alias/y")]);
    }

    /// Two projects, one inside the other, both watch the inner one's folders: the one that
    /// goes leaves the other's watches, and a change there forgotten for both is watched
    /// again for the one that does not read it again.
    #[test]
    fn a_holder_releasing_its_watches_leaves_those_another_one_needs() {
        let dir = tempfile::tempdir().unwrap();
        let (outer, inner) = (0, 1);
        let mut watches = silent_watches();
        for name in ["src", "inner", "inner/src"] {
            std::fs::create_dir_all(dir.path().join(name)).unwrap();
            watches.add(outer, &dir.path().join(name));
        }
        for name in ["inner", "inner/src"] {
            watches.add(inner, &dir.path().join(name));
        }
        let forgotten = watches.forget_below(&[dir.path().join("inner")]);
        assert_eq!(watched_below(&watches, dir.path()), ["src"]);
        watches.restore(forgotten, |holder, _| holder == inner);
        assert_eq!(watched_below(&watches, dir.path()), ["inner", "inner/src", "src"]);
        watches.release(outer);
        assert_eq!(watched_below(&watches, dir.path()), ["inner", "inner/src"]);
        watches.add(outer, &dir.path().join("inner"));
        watches.release(inner);
        assert_eq!(watched_below(&watches, dir.path()), ["inner"]);
        watches.release(outer);
        assert!(watches.dirs.is_empty());
    }

    /// Searches `dir` as a workspace session does, counting the walks, with `between` run
    /// after each walk (before its directories are watched).
    fn searches(dir: &Path, between: impl Fn(usize)) -> usize {
        let walks = std::cell::Cell::new(0);
        let find = || {
            let (crate::workspace::Discovery { roots, .. }, dirs) = crate::workspace::search(dir);
            walks.set(walks.get() + 1);
            between(walks.get());
            Found { projects: Vec::new(), roots, dirs }
        };
        let watcher = notify::recommended_watcher(|_: notify::Result<notify::Event>| {}).unwrap();
        let mut search = Search { find: Box::new(find), watches: Watches::new(watcher), roots: Vec::new() };
        search.run().unwrap();
        walks.get()
    }

    #[test]
    fn a_search_walks_again_only_when_a_directory_changed_before_its_watch() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("shared/util")).unwrap();
        let age = |subs: &[&str]| {
            let past = std::time::SystemTime::now() - Duration::from_secs(10);
            for sub in subs {
                std::fs::File::open(dir.path().join(sub)).unwrap().set_modified(past).unwrap();
            }
        };
        age(&["", "shared", "shared/util"]);
        assert_eq!(searches(dir.path(), |_| {}), 1, "an old, unchanged tree is walked once");
        // Just listed, not yet watched: the folder it gains would have no event.
        let added = searches(dir.path(), |walk| {
            if walk == 1 {
                std::fs::create_dir(dir.path().join("shared/new")).unwrap();
                age(&["shared/new"]);
            }
        });
        assert_eq!(added, 2, "walked again, and the new folder's watch is trusted");
        age(&["", "shared", "shared/util", "shared/new"]);
        let times =
            searches(dir.path(), |walk| std::fs::create_dir(dir.path().join(format!("shared/{walk}"))).unwrap());
        assert_eq!(times, SEARCH_PASSES, "a tree that keeps changing is walked a bounded number of times");
    }
}
