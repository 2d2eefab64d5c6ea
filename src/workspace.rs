//! Monorepos: find every plugin project below a directory and build them all in parallel,
//! on one thread pool (and one cache), each publishing on its own.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::build::{self, BuildOptions, BuildOutput};
use crate::config::CONFIG_FILE_NAMES;

/// Project roots below `dir` (directories holding an `agent-bundle.config.*`), sorted.
/// `.gitignore`d paths, `node_modules` and built artifacts are skipped.
pub fn discover(dir: &Path) -> Vec<PathBuf> {
    let walker = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .filter_entry(|entry| {
            let name = entry.file_name().to_string_lossy();
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            // Directories that are never inputs, and built artifacts, hold no projects.
            !is_dir
                || !(crate::loader::is_ignored(Path::new(&*name), false)
                    || entry.path().join(crate::emit::MANIFEST_FILE).is_file())
        })
        .build();
    let mut roots: Vec<PathBuf> = walker
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()))
        .filter(|entry| CONFIG_FILE_NAMES.contains(&&*entry.file_name().to_string_lossy()))
        .filter_map(|entry| entry.path().parent().map(Path::to_path_buf))
        .collect();
    roots.sort();
    roots.dedup();
    roots
}

/// Keeps the roots whose path (relative to `base`) contains any of `filters`; all when empty.
pub fn filter(roots: Vec<PathBuf>, base: &Path, filters: &[String]) -> Vec<PathBuf> {
    if filters.is_empty() {
        return roots;
    }
    roots
        .into_iter()
        .filter(|root| {
            let relative = root.strip_prefix(base).unwrap_or(root).to_string_lossy();
            filters.iter().any(|f| relative.contains(f.as_str()))
        })
        .collect()
}

/// The outcome of one project of a workspace build.
pub struct ProjectBuild {
    pub root: PathBuf,
    pub output: std::io::Result<BuildOutput>,
    pub elapsed: Duration,
}

impl ProjectBuild {
    pub fn succeeded(&self) -> bool {
        self.output.as_ref().is_ok_and(|o| o.published.is_some())
    }
}

/// Builds every root with the options `options_for` gives it; `on_done` is called as each
/// project finishes (from worker threads). Results come back in `roots` order.
pub fn build_all(
    roots: &[PathBuf],
    options_for: impl Fn(&Path) -> BuildOptions + Sync,
    on_done: impl Fn(&ProjectBuild) + Sync,
) -> Vec<ProjectBuild> {
    roots
        .par_iter()
        .map(|root| {
            let started = Instant::now();
            let output = build::build(&options_for(root));
            let result = ProjectBuild { root: root.clone(), output, elapsed: started.elapsed() };
            on_done(&result);
            result
        })
        .collect()
}
