//! The no-op fast path, as make and ninja do it: a build whose inputs and artifact are
//! exactly as the last clean build left them (same paths, sizes, modification times and
//! inodes; same settings; same compiler) skips every stage, so a no-op costs about as much
//! as walking and stat-ing the inputs.
//!
//! The stamp lives in `<root>/.agent-bundle/stamp.json`, never in the artifact. It is only
//! written after a build that published with no diagnostics at all (warnings are printed
//! again by a real build). A file modified within a second before the stamp was written
//! is treated as changed ("racily clean"): its time alone cannot prove it unchanged.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::emit::MANIFEST_FILE;
use crate::loader::input_files;

const STAMP_FILE: &str = ".agent-bundle/stamp.json";
/// Why: file systems with coarse timestamps can give an edit made just before the stamp the
/// same time as the stamp itself; such files are always re-read.
const RACY_WINDOW_NS: i128 = 1_000_000_000;

/// What the last clean build saw and produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    compiler: String,
    settings: String,
    inputs: Vec<FileState>,
    outputs: Vec<FileState>,
    saved_at_ns: i128,
    pub summary: Summary,
}

/// Enough to report an up-to-date build without running it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub plugin: String,
    pub version: String,
    pub targets: Vec<String>,
    pub files: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct FileState {
    path: String,
    size: u64,
    mtime_ns: i128,
    inode: u64,
    mode: u32,
}

/// The files of the project and of its artifact, as they are now.
pub struct Snapshot {
    inputs: Vec<FileState>,
    outputs: Vec<FileState>,
}

impl Snapshot {
    pub fn take(root: &Path, out_dir: &Path) -> io::Result<Snapshot> {
        let inputs = states(input_files(root, &[out_dir.to_path_buf()])?)?;
        Ok(Snapshot { inputs, outputs: artifact_states(out_dir)? })
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
    let mut entries = vec![(MANIFEST_FILE.to_owned(), out_dir.join(MANIFEST_FILE))];
    for entry in walkdir::WalkDir::new(out_dir).sort_by_file_name() {
        let entry = entry.map_err(io::Error::other)?;
        if entry.file_type().is_dir() {
            let relative = entry.path().strip_prefix(out_dir).expect("walkdir stays below its root");
            entries.push((format!("{}/", relative.display()), entry.into_path()));
        }
    }
    states(entries)
}

/// The previous stamp, if the project and its artifact still match it exactly.
pub fn up_to_date(root: &Path, settings: &str, now: &Snapshot) -> Option<Stamp> {
    let stamp: Stamp = serde_json::from_slice(&std::fs::read(root.join(STAMP_FILE)).ok()?).ok()?;
    let racy = |state: &FileState| state.mtime_ns >= stamp.saved_at_ns - RACY_WINDOW_NS;
    let unchanged = stamp.compiler == crate::actions::COMPILER
        && stamp.settings == settings
        && stamp.inputs == now.inputs
        && stamp.outputs == now.outputs
        && !stamp.inputs.iter().any(racy);
    unchanged.then_some(stamp)
}

/// Records a clean build: the inputs it read (`before`, taken before reading them, so an
/// edit during the build is never stamped as seen) and the artifact it published.
pub fn save(root: &Path, out_dir: &Path, settings: &str, before: Snapshot, summary: Summary) -> io::Result<()> {
    let saved_at_ns = now_ns();
    let outputs = artifact_states(out_dir)?;
    let stamp = Stamp {
        compiler: crate::actions::COMPILER.to_owned(),
        settings: settings.to_owned(),
        inputs: before.inputs,
        outputs,
        saved_at_ns,
        summary,
    };
    let path = root.join(STAMP_FILE);
    std::fs::create_dir_all(path.parent().expect("the stamp has a parent"))?;
    let temporary = path.with_extension("json.tmp");
    std::fs::write(&temporary, serde_json::to_vec(&stamp).map_err(io::Error::other)?)?;
    std::fs::rename(temporary, path)
}

/// Forgets the stamp (after a build that did not end clean).
pub fn clear(root: &Path) {
    let _ = std::fs::remove_file(root.join(STAMP_FILE));
}

fn states(files: Vec<(String, PathBuf)>) -> io::Result<Vec<FileState>> {
    files
        .into_iter()
        .map(|(path, full)| {
            let metadata = std::fs::symlink_metadata(&full)?;
            Ok(FileState {
                path,
                size: metadata.size(),
                mtime_ns: i128::from(metadata.mtime()) * 1_000_000_000 + i128::from(metadata.mtime_nsec()),
                inode: metadata.ino(),
                mode: metadata.mode(),
            })
        })
        .collect()
}

fn now_ns() -> i128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128)
}
