//! Watch mode: one long-lived database, rebuilt on file events.
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

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use crate::build::{self, BuildOptions, BuildOutput};
use crate::db::Database;
use crate::loader::{Workspace, is_ignored};

/// Why: editors save in bursts (write, rename, chmod); 30 ms of quiet catches a burst
/// without making a single save feel slow.
pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(30);

/// What one build of the watch loop did.
pub struct WatchBuild<'a> {
    pub output: &'a BuildOutput,
    /// Project-relative inputs whose content changed (empty for the first build).
    pub changed: Vec<String>,
    /// How many queries salsa executed (the rest were reused).
    pub queries_executed: usize,
    pub elapsed: Duration,
}

/// Set by the SIGINT handler; the loop exits at its next check.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_signal: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Makes Ctrl-C stop the loop between builds instead of killing the process mid-publish.
fn install_interrupt_handler() {
    let handler: extern "C" fn(libc::c_int) = on_interrupt;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
    }
}

/// Builds, then rebuilds on every change until Ctrl-C; `report` is called after each build.
pub fn watch(options: &BuildOptions, debounce: Duration, mut report: impl FnMut(WatchBuild<'_>)) -> io::Result<()> {
    install_interrupt_handler();
    let (sender, events) = mpsc::channel::<PathBuf>();
    let watcher = notify::recommended_watcher(move |result: notify::Result<notify::Event>| {
        if let Ok(event) = result
            && matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_))
        {
            for path in event.paths {
                let _ = sender.send(path);
            }
        }
    })
    .map_err(io::Error::other)?;
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut session = Session {
        options,
        workspace: Workspace::new(
            Database::with_query_log(log.clone()).with_cache(options.cache.clone()),
            options.root.clone(),
        ),
        watches: Watches { watcher, dirs: BTreeSet::new(), failure: None },
        exclude: vec![options.out_dir.clone()],
        log,
    };

    session.build(&[], &mut report)?;
    loop {
        let first = match events.recv_timeout(Duration::from_millis(50)) {
            Ok(path) => path,
            Err(RecvTimeoutError::Timeout) if INTERRUPTED.load(Ordering::SeqCst) => return Ok(()),
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
        };
        let mut batch = vec![first];
        while let Ok(path) = events.recv_timeout(debounce) {
            batch.push(path);
        }
        // The root's own events (its mode or times changed) say nothing about its entries.
        batch.retain(|path| {
            let excluded = session.exclude.iter().any(|e| path.starts_with(e));
            let relative = path.strip_prefix(&options.root);
            relative.is_ok_and(|relative| !relative.as_os_str().is_empty() && !is_ignored(relative, excluded))
        });
        batch.sort();
        batch.dedup();
        if !batch.is_empty() {
            session.build(&batch, &mut report)?;
        }
        if INTERRUPTED.load(Ordering::SeqCst) {
            return Ok(());
        }
    }
}

/// The state a watch session keeps between builds.
struct Session<'a> {
    options: &'a BuildOptions,
    workspace: Workspace,
    watches: Watches,
    exclude: Vec<PathBuf>,
    log: Arc<Mutex<Vec<String>>>,
}

impl Session<'_> {
    /// Reads the project (all of it when `changed` is empty, else only `changed`), builds and
    /// publishes it, and reports what happened.
    fn build(&mut self, changed: &[PathBuf], report: &mut impl FnMut(WatchBuild<'_>)) -> io::Result<()> {
        let started = Instant::now();
        self.log.lock().expect("query log lock").clear();
        let settings = self.options.settings();
        self.watches.forget_below(changed);
        let watches = &mut self.watches;
        let mut watch = |dir: &Path| watches.add(dir);
        let project = if changed.is_empty() {
            self.workspace.load(settings, &self.exclude, &mut watch)?
        } else {
            self.workspace.refresh(changed, settings, &self.exclude, &mut watch)?
        };
        if let Some(error) = self.watches.failure.take() {
            return Err(error);
        }
        let output = build::compile_and_publish(&self.workspace.db, project, self.options)?;
        let changed = if changed.is_empty() { Vec::new() } else { self.workspace.changed().to_vec() };
        let queries_executed = self.log.lock().expect("query log lock").len();
        report(WatchBuild { output: &output, changed, queries_executed, elapsed: started.elapsed() });
        Ok(())
    }
}

/// The directories being watched, each without its subdirectories.
struct Watches {
    watcher: RecommendedWatcher,
    dirs: BTreeSet<PathBuf>,
    /// The first directory that could not be watched: the session stops rather than miss
    /// the edits made there.
    failure: Option<io::Error>,
}

impl Watches {
    fn add(&mut self, dir: &Path) {
        if self.failure.is_some() || self.dirs.contains(dir) {
            return;
        }
        match self.watcher.watch(dir, RecursiveMode::NonRecursive) {
            Ok(()) => {
                self.dirs.insert(dir.to_owned());
            }
            // Gone before it could be watched: its removal is an event of its parent.
            Err(_) if !dir.is_dir() => {}
            Err(error) => self.failure = Some(watch_error(dir, &error)),
        }
    }

    /// Stops watching the `changed` paths and every directory below them; re-reading them
    /// watches again what still exists. Why before re-reading: a renamed directory keeps
    /// its inotify watch, so removing the old path's watch afterwards would drop the new one.
    fn forget_below(&mut self, changed: &[PathBuf]) {
        let below: Vec<PathBuf> =
            self.dirs.iter().filter(|dir| changed.iter().any(|path| dir.starts_with(path))).cloned().collect();
        for dir in below {
            // Fails for a directory already gone (the kernel dropped its watch): nothing to do.
            let _ = self.watcher.unwatch(&dir);
            self.dirs.remove(&dir);
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
