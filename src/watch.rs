//! Watch mode: one long-lived database, rebuilt on file events.
//!
//! The project root is watched recursively (minus the directories that are never inputs
//! and the artifact itself). Events are debounced; events that arrive while a build runs
//! wait in the channel and are coalesced into one follow-up build. Only the changed paths
//! are re-read and only inputs whose bytes changed are set, so salsa re-runs exactly what
//! depends on them. Every successful build is published atomically; a failed one leaves
//! the last good artifact in place.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use notify::{EventKind, RecursiveMode, Watcher};

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
pub fn watch(
    options: &BuildOptions,
    debounce: Duration,
    mut report: impl FnMut(WatchBuild<'_>),
) -> std::io::Result<()> {
    install_interrupt_handler();
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut workspace =
        Workspace::new(Database::with_query_log(log.clone()).with_cache(options.cache.clone()), options.root.clone());
    let exclude = vec![options.out_dir.clone()];

    let (sender, events) = mpsc::channel::<PathBuf>();
    let mut watcher = notify::recommended_watcher(move |result: notify::Result<notify::Event>| {
        if let Ok(event) = result
            && matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_))
        {
            for path in event.paths {
                let _ = sender.send(path);
            }
        }
    })
    .map_err(std::io::Error::other)?;
    watcher.watch(&options.root, RecursiveMode::Recursive).map_err(std::io::Error::other)?;

    let mut run = |workspace: &mut Workspace, changed: Vec<PathBuf>| -> std::io::Result<()> {
        let started = Instant::now();
        log.lock().expect("query log lock").clear();
        let project = if changed.is_empty() {
            workspace.load(options.settings(), &exclude)?
        } else {
            workspace.refresh(&changed, options.settings(), &exclude)?
        };
        let output = build::compile_and_publish(&workspace.db, project, options)?;
        let relative = if changed.is_empty() { Vec::new() } else { workspace.changed().to_vec() };
        let queries_executed = log.lock().expect("query log lock").len();
        report(WatchBuild { output: &output, changed: relative, queries_executed, elapsed: started.elapsed() });
        Ok(())
    };

    run(&mut workspace, Vec::new())?;
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
        batch.retain(|path| {
            let excluded = exclude.iter().any(|e| path.starts_with(e));
            path.strip_prefix(&options.root).is_ok_and(|relative| !is_ignored(relative, excluded))
        });
        batch.sort();
        batch.dedup();
        if !batch.is_empty() {
            run(&mut workspace, batch)?;
        }
        if INTERRUPTED.load(Ordering::SeqCst) {
            return Ok(());
        }
    }
}
