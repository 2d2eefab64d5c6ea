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
use crate::loader::{DiskFiles, input_files, read_files};

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

/// The files of the project, as they are now.
pub struct Snapshot {
    files: Vec<(String, PathBuf)>,
    inputs: Vec<FileState>,
}

impl Snapshot {
    pub fn take(root: &Path, out_dir: &Path) -> io::Result<Snapshot> {
        let files = input_files(root, &[out_dir.to_path_buf()])?;
        let inputs = files.iter().map(|(key, path)| state(key.clone(), path)).collect::<io::Result<_>>()?;
        Ok(Snapshot { files, inputs })
    }

    /// Reads the files this snapshot found (without walking the project again).
    pub fn read(&self) -> io::Result<DiskFiles> {
        read_files(&self.files)
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

/// The previous stamp, if the project and its artifact still match it exactly. The artifact
/// is checked by stat-ing what the stamp recorded, not by walking it again: a directory's
/// time and inode change whenever an entry below it is added, removed or renamed.
pub fn up_to_date(root: &Path, out_dir: &Path, settings: &str, now: &Snapshot) -> Option<Stamp> {
    let stamp: Stamp = serde_json::from_slice(&std::fs::read(root.join(STAMP_FILE)).ok()?).ok()?;
    let racy = |state: &FileState| state.mtime_ns >= stamp.saved_at_ns - RACY_WINDOW_NS;
    let unchanged = stamp.compiler == crate::actions::COMPILER
        && stamp.settings == settings
        && stamp.inputs == now.inputs
        && !stamp.inputs.iter().any(racy)
        && !stamp.outputs.is_empty()
        && stamp.outputs.iter().all(|recorded| {
            let full = out_dir.join(recorded.path.trim_end_matches('/'));
            state(recorded.path.clone(), &full).is_ok_and(|now| now == *recorded)
        });
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
    files.into_iter().map(|(path, full)| state(path, &full)).collect()
}

fn state(path: String, full: &Path) -> io::Result<FileState> {
    let metadata = std::fs::symlink_metadata(full)?;
    Ok(FileState {
        path,
        size: metadata.size(),
        mtime_ns: i128::from(metadata.mtime()) * 1_000_000_000 + i128::from(metadata.mtime_nsec()),
        inode: metadata.ino(),
        mode: metadata.mode(),
    })
}

fn now_ns() -> i128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::time::Duration;

    fn summary() -> Summary {
        Summary { plugin: "p".into(), version: "1.0.0".into(), targets: vec!["claude".into()], files: 2 }
    }

    /// A project whose input is older than the racy window, with a built artifact.
    fn project() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("agent-bundle.config.ts");
        fs::write(&config, "export default {};\n").unwrap();
        let past = SystemTime::now() - Duration::from_secs(10);
        fs::File::options().write(true).open(&config).unwrap().set_modified(past).unwrap();
        let out = dir.path().join("artifact");
        fs::create_dir_all(out.join("hooks")).unwrap();
        fs::write(out.join(MANIFEST_FILE), "{}").unwrap();
        fs::write(out.join("hooks/a.mjs"), "a").unwrap();
        (dir, out)
    }

    fn stamp(root: &Path, out: &Path) {
        save(root, out, "settings", Snapshot::take(root, out).unwrap(), summary()).unwrap();
    }

    fn fresh(root: &Path, out: &Path) -> bool {
        up_to_date(root, out, "settings", &Snapshot::take(root, out).unwrap()).is_some()
    }

    #[test]
    fn an_untouched_project_and_artifact_are_up_to_date_and_other_settings_are_not() {
        let (dir, out) = project();
        stamp(dir.path(), &out);
        assert!(fresh(dir.path(), &out));
        assert!(up_to_date(dir.path(), &out, "other", &Snapshot::take(dir.path(), &out).unwrap()).is_none());
    }

    #[test]
    fn any_entry_added_or_removed_in_the_artifact_or_an_edited_input_is_seen() {
        let changes: [fn(&Path, &Path); 4] = [
            |_, out| fs::remove_file(out.join("hooks/a.mjs")).unwrap(),
            |_, out| fs::create_dir(out.join("hooks/new")).unwrap(),
            |_, out| fs::remove_dir_all(out).unwrap(),
            |root, _| fs::write(root.join("agent-bundle.config.ts"), "export default { };\n").unwrap(),
        ];
        for (i, change) in changes.iter().enumerate() {
            let (dir, out) = project();
            stamp(dir.path(), &out);
            change(dir.path(), &out);
            assert!(!fresh(dir.path(), &out), "change {i} went unseen");
        }
    }

    #[test]
    fn a_just_modified_input_is_never_trusted() {
        let (dir, out) = project();
        fs::write(dir.path().join("agent-bundle.config.ts"), "export default {};\n").unwrap();
        stamp(dir.path(), &out);
        assert!(!fresh(dir.path(), &out), "inside the racy window");
    }
}
