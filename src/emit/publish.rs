//! The one writer: publishes an artifact atomically, never rewriting unchanged files.
//!
//! The new artifact is assembled in a sibling staging directory: a file whose bytes and
//! mode are unchanged is hard-linked from the current artifact (same inode, same mtime, so
//! nothing downstream sees a change), every other file is written fresh. The staging
//! directory then replaces the artifact in one `renameat2(RENAME_EXCHANGE)`, so at every
//! instant the artifact's path names one whole artifact, the old or the new, and a killed
//! build leaves no mix. (A reader that reads its files one at a time while a build publishes
//! may read some of each, as of any folder replaced: the previous tree is removed at once.) When nothing
//! changed at all, nothing is touched.

use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::MANIFEST_FILE;
use super::manifest::Mark;
use crate::output::OutputFile;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PublishStats {
    /// Files written with new bytes (artifact-relative paths).
    pub written: Vec<String>,
    /// Files whose bytes did not change: linked from the previous artifact (same inode, same
    /// time), or, where the file system refuses the link, written again with those bytes.
    pub unchanged: usize,
    /// Files of the previous artifact that are no longer produced, and whatever else it held
    /// that a publish never makes (a link, an empty folder: `skills/`).
    pub removed: Vec<String>,
}

impl PublishStats {
    pub fn changed(&self) -> bool {
        !self.written.is_empty() || !self.removed.is_empty()
    }

    /// How many of the removed entries were files (or links): what a summary counts, since a
    /// folder goes with the files it held (folders are listed with a trailing `/`).
    pub fn removed_files(&self) -> usize {
        self.removed.iter().filter(|path| !path.ends_with('/')).count()
    }
}

/// Publishes `files` at `out`, making its missing folders below `anchor` (never `anchor`
/// itself: a project folder moved or removed while it was built is not made again to hold
/// its artifact). A bare error of the system (a permission denied) says where, and what to
/// do when it is a permission.
///
/// `last` is what this process published there before (a watch session's last build): while
/// the artifact's manifest is still that publish's, a file of the size and mode it left is
/// taken to hold the bytes it wrote, and is compared in memory instead of read back. (Like a
/// no-op build, this trusts that no one edits an artifact's files in place, keeping their
/// size: `agent-bundle validate` is what finds that.)
pub fn publish(
    out: &Path,
    anchor: &Path,
    files: &BTreeMap<String, OutputFile>,
    last: Option<&BTreeMap<String, OutputFile>>,
) -> io::Result<PublishStats> {
    publish_at(out, anchor, files, last).map_err(|error| match error.raw_os_error() {
        Some(_) => {
            let help = match error.kind() {
                io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
                    " (make the folder that holds it writable for this user)"
                }
                _ => "",
            };
            io::Error::new(error.kind(), format!("cannot publish {}: {error}{help}", out.display()))
        }
        None => error,
    })
}

fn publish_at(
    out: &Path,
    anchor: &Path,
    files: &BTreeMap<String, OutputFile>,
    last: Option<&BTreeMap<String, OutputFile>>,
) -> io::Result<PublishStats> {
    if let Some(path) = files.keys().find(|path| !crate::output::is_artifact_path(path)) {
        let message = format!("refusing to publish {path:?}: not a path inside the artifact");
        return Err(io::Error::new(io::ErrorKind::InvalidData, message));
    }
    let out = &followed(out);
    make_dirs_below(anchor, parent_of(out))?;
    let _turn = take_turn(out)?;
    let existing = existing_entries(out)?;
    let last = last.filter(|last| last.get(MANIFEST_FILE).is_some_and(|manifest| still_published(out, manifest)));
    let mut stats = PublishStats::default();
    for (path, file) in files {
        let written = last.and_then(|last| last.get(path));
        // Without a previous artifact every file is new: no probe per file.
        if !existing.files.is_empty() && is_unchanged(&out.join(path), file, written) {
            stats.unchanged += 1;
        } else {
            stats.written.push(path.clone());
        }
    }
    let folders = crate::output::folders_of(files.keys().map(String::as_str));
    let stale_files = existing.files.iter().filter(|path| !files.contains_key(*path));
    let stale_folders = existing.folders.iter().filter(|path| !folders.contains(path.trim_end_matches('/')));
    stats.removed = stale_files.chain(&existing.others).chain(stale_folders).cloned().collect();
    stats.removed.sort();
    if !stats.changed() {
        return Ok(stats);
    }

    // Once stopped, nothing more starts: a build killed while staging left a folder here.
    if crate::interrupt::stops_here() {
        return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted before publishing"));
    }
    let staging = sibling(out, "staging");
    fs::create_dir(&staging)?;
    let result = stage(&staging, out, files, &stats).and_then(|()| swap_into_place(&staging, out));
    if result.is_err() {
        let _ = fs::remove_dir_all(&staging);
    }
    result.map(|()| stats)
}

/// Builds of one project publishing at once (a watch session and a build by hand) take
/// turns: each compares, stages and swaps against an artifact and a staging directory no
/// one else touches meanwhile (and stamps what it published). The lock is on the
/// artifact's parent directory (no lock file to leave behind), and the kernel drops it
/// with its holder, so a killed build blocks no one. Where the directory cannot be opened
/// or the file system has no such locks, publishing goes on unlocked.
///
/// The turn starts by finishing what a killed publish left beside the artifact, so that
/// every builder that takes it cleans up, a build that finds the artifact up to date too.
pub(crate) fn take_turn(out: &Path) -> io::Result<Option<fs::File>> {
    let turn = fs::File::open(parent_of(out)).ok().filter(|directory| directory.lock().is_ok());
    recover_interrupted_publish(out)?;
    Ok(turn)
}

/// Puts back `manifest`, which the last publish at `out` wrote, when it alone of the
/// artifact's marks went, or was written over with what names no build, and every other file
/// there is one of `published` (with its size): without it the folder is no artifact, which
/// no publish replaces (it may be someone's). (Taken in a turn, so no build publishes
/// meanwhile.) A watch session calls it when its artifact changes.
pub fn restore_manifest(out: &Path, manifest: &[u8], published: &[(PathBuf, u64)]) {
    let Ok(_turn) = take_turn(out) else { return };
    let manifest_path = out.join(MANIFEST_FILE);
    let written_over = match super::manifest::mark(out) {
        // Another build's, or this session's: nothing to put back.
        Mark::Manifest => return,
        Mark::Foreign => true,
        // (A link or a folder in its place is not this session's to replace.)
        Mark::None if fs::symlink_metadata(&manifest_path).is_ok() => return,
        Mark::None => false,
    };
    if !out.is_dir() {
        return;
    }
    let ours: BTreeMap<&Path, u64> = published.iter().map(|(path, size)| (path.as_path(), *size)).collect();
    let is_ours = |entry: walkdir::DirEntry| {
        let size = entry.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
        let manifest = written_over && entry.path() == manifest_path;
        manifest || entry.file_type().is_dir() || (size.is_some() && ours.get(entry.path()).copied() == size)
    };
    if walkdir::WalkDir::new(out).min_depth(1).into_iter().all(|entry| entry.is_ok_and(is_ours)) {
        // A failure leaves the folder as it is, and the publish says why it stops.
        let _ = crate::output::replace_whole(&manifest_path, manifest);
    }
}

/// Where an artifact that is a symbolic link (to a host's plugin folder, say) really is:
/// that directory is replaced, and the link stays as it was made. Build options hold it,
/// resolved ([`artifact_dir`]: the stamp and the manifest check see the real directory);
/// `publish` follows the link too, so no caller can make it replace one.
fn followed(out: &Path) -> PathBuf {
    let mut out = out.to_path_buf();
    // As many links as the kernel follows in a path.
    for _ in 0..40 {
        match fs::read_link(&out) {
            Ok(target) => out = parent_of(&out).join(target),
            Err(_) => break,
        }
    }
    out
}

/// Where the artifact named `named` (a path from [`resolved_but_last`]) is published: its
/// links followed, as watch events name it. A watch session asks again when an event names
/// `named` (a link pointed elsewhere, removed, or made).
pub fn artifact_dir(named: &Path) -> PathBuf {
    resolved(&followed(named))
}

/// `path` with the folders on its way resolved (see [`resolved`]), itself not followed: a
/// file or folder that may be a link, named as watch events name it.
pub fn resolved_but_last(path: &Path) -> PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(folder), Some(name)) => resolved(folder).join(name),
        _ => resolved(path),
    }
}

/// `path` as it will be reached: each part that exists resolved (links followed), `.` and
/// `..` taken lexically past the first part that does not (`missing/../x` is `x`, where the
/// kernel would fail). Watch events and the project's own paths name it so.
fn resolved(path: &Path) -> PathBuf {
    // An artifact there already (every build after the first): one call.
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    let mut resolved = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => continue,
            std::path::Component::ParentDir => {
                resolved.pop();
            }
            part => resolved.push(part),
        }
        if let Ok(real) = resolved.canonicalize() {
            resolved = real;
        }
    }
    resolved
}

/// Makes `dir` and the folders above it that are missing, down from `anchor`, which is
/// never made (a `dir` not below it is made whole).
fn make_dirs_below(anchor: &Path, dir: &Path) -> io::Result<()> {
    let Ok(below) = dir.strip_prefix(anchor) else { return fs::create_dir_all(dir) };
    let mut path = anchor.to_path_buf();
    for part in below.components() {
        path.push(part);
        match fs::create_dir(&path) {
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
            made => made?,
        }
    }
    Ok(())
}

fn parent_of(out: &Path) -> &Path {
    out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

fn stage(staging: &Path, out: &Path, files: &BTreeMap<String, OutputFile>, stats: &PublishStats) -> io::Result<()> {
    for folder in crate::output::folders_of(files.keys().map(String::as_str)) {
        fs::create_dir(staging.join(folder))?;
    }
    for (path, file) in files {
        let target = staging.join(path);
        if stats.written.binary_search(path).is_ok() {
            write_file(&target, file)?;
        } else {
            // (A file system without hard links gets the same bytes in a new file: still no
            // change to what the artifact holds, which is what `written` counts.)
            fs::hard_link(out.join(path), &target).or_else(|_| write_file(&target, file))?;
        }
    }
    Ok(())
}

fn write_file(path: &Path, file: &OutputFile) -> io::Result<()> {
    let mode = if file.executable { 0o755 } else { 0o644 };
    let mut handle = fs::OpenOptions::new().write(true).create_new(true).mode(mode).open(path)?;
    handle.write_all(&file.bytes)?;
    // `mode` is filtered by the umask; payload files must keep their executable bit. Only
    // a filtered mode is set again (a `chmod` of every file costs an inode update each).
    // No fsync per file: atomicity comes from the final rename, and thousands of fsyncs
    // would dominate the build (durability across power loss is not this tool's promise).
    let filtered = match process_umask() {
        Some(umask) => mode & umask != 0,
        None => handle.metadata()?.permissions().mode() & 0o777 != mode,
    };
    if filtered {
        handle.set_permissions(fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// The process umask, read once from `/proc/self/status` (`umask(2)` can only be read by
/// setting it, which would race with other threads creating files). `None` where the
/// kernel does not say; then each written file's mode is checked instead.
fn process_umask() -> Option<u32> {
    static UMASK: std::sync::OnceLock<Option<u32>> = std::sync::OnceLock::new();
    *UMASK.get_or_init(|| {
        let status = fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find_map(|line| line.strip_prefix("Umask:"))?;
        u32::from_str_radix(line.trim(), 8).ok()
    })
}

/// Whether the file at `path` holds `file`: its size and mode, then its bytes, read back or,
/// when the last publish `written` it (see [`publish`]), as that publish wrote them.
fn is_unchanged(path: &Path, file: &OutputFile, written: Option<&OutputFile>) -> bool {
    let Ok(metadata) = fs::symlink_metadata(path) else {
        return false;
    };
    let executable = metadata.permissions().mode() & 0o111 != 0;
    let same_bytes = || match written {
        Some(written) => written.executable == file.executable && same_contents(&written.bytes, &file.bytes),
        None => fs::read(path).is_ok_and(|bytes| *bytes == *file.bytes),
    };
    metadata.is_file() && metadata.len() == file.bytes.len() as u64 && executable == file.executable && same_bytes()
}

/// Equal bytes, known at once when both are the one buffer (a payload file whose input did
/// not change).
fn same_contents(a: &std::sync::Arc<[u8]>, b: &std::sync::Arc<[u8]>) -> bool {
    std::sync::Arc::ptr_eq(a, b) || a == b
}

/// Whether the artifact's manifest is still `manifest`: the artifact is the one that wrote
/// it (no other build published in between).
fn still_published(out: &Path, manifest: &OutputFile) -> bool {
    fs::read(out.join(MANIFEST_FILE)).is_ok_and(|bytes| *bytes == *manifest.bytes)
}

/// What the current artifact holds, by artifact-relative path.
#[derive(Default)]
struct Existing {
    files: Vec<String>,
    /// With a trailing `/`.
    folders: Vec<String>,
    /// Anything else (links, pipes): never published, so always removed.
    others: Vec<String>,
}

/// Why a folder is not published to, what it holds being lost: said alike by a build's
/// check before it runs and by the publish itself (a workspace's, a watch session's).
pub const NO_FOLDER: &str = "it is not a directory";
pub const FOREIGN_MANIFEST: &str = "its agent-bundle.manifest.json names no agent-bundle build (written over?), and \
                                    publishing would replace what it holds: remove the folder if it was an artifact";
pub const USER_FILES: &str = "it holds files but no agent-bundle artifact, and publishing would replace them";
pub const INSIDE_ARTIFACT: &str = "it is inside another agent-bundle artifact";

/// Whether `out` is inside another artifact, as `holds_artifact` tells of each folder above
/// it: publishing there would break that one, and its next build remove this one.
pub fn inside_artifact(out: &Path, holds_artifact: &mut dyn FnMut(&Path) -> bool) -> bool {
    out.ancestors().skip(1).any(holds_artifact)
}

/// What the current artifact holds. Anything else at `out` (a file, a directory holding
/// anything but folders that is not an artifact) is refused: publishing would replace
/// whatever the user keeps there.
fn existing_entries(out: &Path) -> io::Result<Existing> {
    // (Checked again here, where a watch session's link may have come to lead there.)
    if inside_artifact(out, &mut super::manifest::holds_artifact) {
        return Err(not_an_artifact(out, INSIDE_ARTIFACT));
    }
    let mut existing = Existing::default();
    match fs::metadata(out) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(existing),
        Err(error) => return Err(error),
        Ok(metadata) if !metadata.is_dir() => return Err(not_an_artifact(out, NO_FOLDER)),
        Ok(_) => {}
    }
    for entry in walkdir::WalkDir::new(out).min_depth(1).sort_by_file_name() {
        let entry = entry.map_err(io::Error::other)?;
        let relative = entry.path().strip_prefix(out).expect("walkdir stays below its root");
        let relative = relative.to_string_lossy().into_owned();
        match entry.file_type() {
            kind if kind.is_file() => existing.files.push(relative),
            kind if kind.is_dir() => existing.folders.push(relative + "/"),
            _ => existing.others.push(relative),
        }
    }
    let holds_anything = !existing.files.is_empty() || !existing.others.is_empty();
    match super::manifest::mark(out) {
        Mark::Foreign => return Err(not_an_artifact(out, FOREIGN_MANIFEST)),
        Mark::None if holds_anything => return Err(not_an_artifact(out, USER_FILES)),
        _ => {}
    }
    existing.files.sort();
    Ok(existing)
}

fn not_an_artifact(out: &Path, why: &str) -> io::Error {
    let message = format!("the artifact folder {}: {why}", out.display());
    io::Error::new(io::ErrorKind::AlreadyExists, message)
}

fn swap_into_place(staging: &Path, out: &Path) -> io::Result<()> {
    if !out.exists() {
        return fs::rename(staging, out);
    }
    if exchange(staging, out).is_ok() {
        // `staging` now holds the previous artifact.
        discard(staging);
        return Ok(());
    }
    // No RENAME_EXCHANGE (old kernel or file system): two renames, recovered on the next
    // build if interrupted between them.
    let old = sibling(out, "old");
    discard(&old);
    fs::rename(out, &old)?;
    fs::rename(staging, out)?;
    discard(&old);
    Ok(())
}

/// Removes a previous artifact or a leftover beside it, as far as it can: the artifact is
/// in place, so a failure here is no failure of the publish (the next one tries again). A
/// folder made read-only (an artifact protected by hand) is made writable first.
fn discard(path: &Path) {
    if remove_if_present(path).is_err() {
        for folder in walkdir::WalkDir::new(path).into_iter().flatten().filter(|entry| entry.file_type().is_dir()) {
            let _ = fs::set_permissions(folder.path(), fs::Permissions::from_mode(0o755));
        }
        let _ = remove_if_present(path);
    }
}

/// Puts back an artifact left aside by an interrupted two-rename swap, and drops leftovers:
/// a staging folder (a publish killed while staging, or while removing the previous
/// artifact it was swapped with) and a set-aside one the artifact replaced.
fn recover_interrupted_publish(out: &Path) -> io::Result<()> {
    let old = sibling(out, "old");
    if old.exists() && !out.exists() {
        fs::rename(&old, out)?;
    }
    discard(&old);
    discard(&sibling(out, "staging"));
    Ok(())
}

fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    let a = CString::new(a.as_os_str().as_bytes()).map_err(io::Error::other)?;
    let b = CString::new(b.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: both pointers are valid NUL-terminated paths for the duration of the call.
    let status =
        unsafe { libc::renameat2(libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) };
    if status == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// The folders a publish of `out` makes beside it and removes: its staging folder and the
/// previous artifact set aside. (Outputs, never inputs: a publish that fails over and over
/// must not read its own attempts as changes.)
pub fn byproducts(out: &Path) -> [PathBuf; 2] {
    let out = followed(out);
    [sibling(&out, "staging"), sibling(&out, "old")]
}

/// The artifact's sibling `.<name>.agent-bundle-<suffix>`. A name too long to carry that
/// within a file name's 255 bytes is cut short and told apart by its hash.
fn sibling(out: &Path, suffix: &str) -> PathBuf {
    const NAME_MAX: usize = crate::output::MAX_ARTIFACT_NAME;
    const HASH_DIGITS: usize = 16;
    let name = out.file_name().map_or(&b"artifact"[..], |name| name.as_bytes());
    let decoration = format!(".agent-bundle-{suffix}");
    let room = NAME_MAX - ".".len() - decoration.len();
    let mut sibling = b".".to_vec();
    if name.len() <= room {
        sibling.extend_from_slice(name);
    } else {
        sibling.extend_from_slice(&name[..room - HASH_DIGITS - 1]);
        sibling.push(b'-');
        sibling.extend_from_slice(&blake3::hash(name).to_hex().as_bytes()[..HASH_DIGITS]);
    }
    sibling.extend_from_slice(decoration.as_bytes());
    out.with_file_name(std::ffi::OsStr::from_bytes(&sibling))
}

/// Removes a leftover staging or set-aside sibling, whatever it is: these names are ours.
fn remove_if_present(path: &Path) -> io::Result<()> {
    let removed = match fs::symlink_metadata(path) {
        Ok(metadata) if metadata.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(error) => Err(error),
    };
    match removed {
        Err(error) if error.kind() != io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::FileKind;
    use std::os::unix::fs::MetadataExt;

    fn file(path: &str, text: &str) -> (String, OutputFile) {
        let file = OutputFile {
            path: path.into(),
            bytes: text.as_bytes().into(),
            executable: false,
            kind: FileKind::Generated,
        };
        (path.to_owned(), file)
    }

    #[test]
    fn an_artifact_folder_is_named_as_watch_events_name_it() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        std::fs::create_dir(real.join("project")).unwrap();
        std::os::unix::fs::symlink(real.join("project"), real.join("link")).unwrap();
        let out = resolved(&dir.path().join("link/../link/missing/artifact"));
        assert_eq!(out, real.join("project/missing/artifact"));
        let out = resolved(&dir.path().join("link/missing/../gone/./../artifact"));
        assert_eq!(out, real.join("project/artifact"));
        // A link itself is named where it is, and leads where it points (relative to its folder).
        std::os::unix::fs::symlink("../elsewhere/plugin", real.join("project/artifact")).unwrap();
        let named = resolved_but_last(&dir.path().join("link/artifact"));
        assert_eq!(named, real.join("project/artifact"));
        assert_eq!(artifact_dir(&named), real.join("elsewhere/plugin"));
    }

    fn artifact(entries: &[(&str, &str)]) -> BTreeMap<String, OutputFile> {
        let mut files: BTreeMap<_, _> = entries.iter().map(|(p, t)| file(p, t)).collect();
        files.extend([file(
            MANIFEST_FILE,
            "{\n  \"compiler\": {\n    \"name\": \"agent-bundle\",\n    \"version\": \"0\"\n  }\n}\n",
        )]);
        files
    }

    /// A folder inside an artifact is never published to, however it came to be named (a
    /// watch session's link pointed there): the other's next publish would remove it, and
    /// it would break the other.
    #[test]
    fn a_folder_inside_an_artifact_is_never_published_to() {
        let dir = tempfile::tempdir().unwrap();
        let outer = dir.path().join("outer");
        publish(&outer, dir.path(), &artifact(&[("a.json", "1")]), None).unwrap();
        let inner = outer.join("inner");
        let refused = publish(&inner, dir.path(), &artifact(&[("b.json", "2")]), None).unwrap_err();
        assert!(refused.to_string().contains(INSIDE_ARTIFACT), "{refused}");
        assert!(!inner.exists());
    }

    /// A folder holding a file of the manifest's name that names no agent-bundle build (empty,
    /// `{}`, another tool's) is the user's: a publish there would empty it, and is refused.
    #[test]
    fn a_manifest_that_names_no_agent_bundle_build_does_not_make_a_folder_an_artifact() {
        for manifest in ["", "{}", "garbage", r#"{"compiler":{"name":"agent-bundle"}}"#] {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("folder");
            fs::create_dir(&out).unwrap();
            fs::write(out.join("thesis.txt"), "precious").unwrap();
            fs::write(out.join(MANIFEST_FILE), manifest).unwrap();
            let refused = publish(&out, dir.path(), &artifact(&[("a.json", "1")]), None).unwrap_err();
            assert!(refused.to_string().contains(FOREIGN_MANIFEST), "{manifest:?}: {refused}");
            assert_eq!(fs::read_to_string(out.join("thesis.txt")).unwrap(), "precious");
        }
    }

    #[test]
    fn unchanged_files_keep_their_inode_and_removed_files_go() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("artifact");
        let first =
            publish(&out, dir.path(), &artifact(&[("a.json", "1"), ("hooks/b.mjs", "2"), ("gone.txt", "x")]), None)
                .unwrap();
        assert_eq!(first.written.len(), 4);
        let inode = fs::metadata(out.join("a.json")).unwrap().ino();

        let second = publish(&out, dir.path(), &artifact(&[("a.json", "1"), ("hooks/b.mjs", "3")]), None).unwrap();
        assert_eq!(second.written, ["hooks/b.mjs"]);
        assert_eq!(second.removed, ["gone.txt"]);
        assert_eq!(fs::metadata(out.join("a.json")).unwrap().ino(), inode);
        assert_eq!(fs::read_to_string(out.join("hooks/b.mjs")).unwrap(), "3");
        assert!(!out.join("gone.txt").exists());

        let third = publish(&out, dir.path(), &artifact(&[("a.json", "1"), ("hooks/b.mjs", "3")]), None).unwrap();
        assert!(!third.changed());

        // A folder goes with its files: listed, not counted as a file removed.
        let fourth = publish(&out, dir.path(), &artifact(&[("a.json", "1")]), None).unwrap();
        assert_eq!(
            (fourth.removed.as_slice(), fourth.removed_files()),
            (&["hooks/".to_owned(), "hooks/b.mjs".to_owned()][..], 1)
        );
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(leftovers, ["artifact"]);
    }

    #[test]
    fn refuses_to_write_outside_the_artifact() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("nested/artifact");
        let error = publish(&out, dir.path(), &artifact(&[("../../escaped.txt", "x")]), None).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert!(!dir.path().join("escaped.txt").exists() && !out.exists());
    }

    #[test]
    fn refuses_to_replace_a_directory_that_is_not_an_artifact() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("precious.txt"), "keep").unwrap();
        let error = publish(dir.path(), dir.path(), &artifact(&[]), None).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read_to_string(dir.path().join("precious.txt")).unwrap(), "keep");
    }

    #[test]
    fn refuses_to_replace_a_file_and_clears_a_leftover_staging_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("artifact");
        fs::write(&out, "my notes").unwrap();
        fs::write(sibling(&out, "staging"), "left over").unwrap();
        let error = publish(&out, dir.path(), &artifact(&[("a.json", "1")]), None).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        assert!(error.to_string().contains("is not a directory"), "{error}");
        assert_eq!(fs::read_to_string(&out).unwrap(), "my notes");

        fs::remove_file(&out).unwrap();
        publish(&out, dir.path(), &artifact(&[("a.json", "1")]), None).unwrap();
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(leftovers, ["artifact"]);
    }

    #[test]
    fn an_artifact_that_is_a_link_is_published_where_it_points_and_stays_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let (out, elsewhere) = (dir.path().join("project/artifact"), dir.path().join("host/plugins/demo"));
        fs::create_dir_all(out.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink("../host/plugins/demo", &out).unwrap();
        for bytes in ["1", "2"] {
            publish(&out, dir.path(), &artifact(&[("a.json", bytes)]), None).unwrap();
            assert!(fs::symlink_metadata(&out).unwrap().file_type().is_symlink());
            assert_eq!(fs::read_to_string(elsewhere.join("a.json")).unwrap(), bytes);
        }
        let leftovers: Vec<_> =
            fs::read_dir(dir.path().join("project")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(leftovers, ["artifact"]);
    }

    #[test]
    fn taking_the_turn_removes_what_a_killed_publish_left_beside_the_artifact() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("artifact");
        publish(&out, dir.path(), &artifact(&[("a.json", "1")]), None).unwrap();
        // Killed while removing the previous artifact it had swapped into staging.
        fs::create_dir_all(sibling(&out, "staging").join("hooks")).unwrap();
        fs::write(sibling(&out, "staging").join("hooks/b.mjs"), "previous").unwrap();
        drop(take_turn(&out).unwrap());
        let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(leftovers, ["artifact"]);
        assert_eq!(fs::read_to_string(out.join("a.json")).unwrap(), "1");
    }

    /// A project folder gone while it was built (moved, removed) is not made again to hold
    /// its artifact; folders below it that an `--out` names are made.
    #[test]
    fn a_project_folder_gone_is_not_made_again() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        let error = publish(&root.join("artifact"), &root, &artifact(&[("a.json", "1")]), None).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::NotFound, "{error}");
        assert!(!root.exists());
        fs::create_dir(&root).unwrap();
        publish(&root.join("out/deep/artifact"), &root, &artifact(&[("a.json", "1")]), None).unwrap();
        assert_eq!(fs::read_to_string(root.join("out/deep/artifact/a.json")).unwrap(), "1");
    }

    #[test]
    fn a_bare_error_of_the_system_names_the_artifact() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("file"), "").unwrap();
        let out = dir.path().join("file/artifact");
        let error = publish(&out, dir.path(), &artifact(&[("a.json", "1")]), None).unwrap_err();
        assert!(error.to_string().starts_with(&format!("cannot publish {}: ", out.display())), "{error}");
    }

    /// What this process published last is trusted for its files' bytes while the
    /// artifact's manifest is that publish's (as a no-op trusts the artifact): a file edited
    /// in place, its size kept, is not read back then; a resized one, or any once another
    /// build's manifest is there, is.
    #[test]
    fn the_last_publish_is_trusted_for_bytes_while_its_manifest_is_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("artifact");
        let files = artifact(&[("a.json", "1"), ("b.json", "22")]);
        publish(&out, dir.path(), &files, None).unwrap();
        fs::write(out.join("a.json"), "9").unwrap();
        fs::write(out.join("b.json"), "333").unwrap();
        let trusted = publish(&out, dir.path(), &files, Some(&files)).unwrap();
        assert_eq!((trusted.written.as_slice(), trusted.unchanged), (&["b.json".to_owned()][..], 2));
        assert_eq!(fs::read_to_string(out.join("a.json")).unwrap(), "9", "trusted, not read back");
        // Another build's manifest: nothing is trusted.
        fs::write(
            out.join(MANIFEST_FILE),
            "{\n  \"compiler\": {\n    \"name\": \"agent-bundle\",\n    \"version\": \"1\"\n  }\n}\n",
        )
        .unwrap();
        let read_back = publish(&out, dir.path(), &files, Some(&files)).unwrap();
        assert_eq!(read_back.written, ["a.json", MANIFEST_FILE]);
        assert_eq!(fs::read_to_string(out.join("a.json")).unwrap(), "1");
    }

    /// An artifact's name as long as a file's may be still publishes: the staging folder
    /// beside it takes a shortened name.
    #[test]
    fn an_artifact_with_the_longest_name_publishes() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("y".repeat(255));
        let stats = publish(&out, dir.path(), &artifact(&[("a.txt", "a")]), None).unwrap();
        assert_eq!(stats.written, ["a.txt", MANIFEST_FILE]);
        publish(&out, dir.path(), &artifact(&[("a.txt", "b")]), None).unwrap();
        assert_eq!(fs::read_to_string(out.join("a.txt")).unwrap(), "b");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1, "no staging folder left");
        assert_ne!(sibling(&out, "staging"), sibling(&dir.path().join(format!("{}z", "y".repeat(254))), "staging"));
    }

    #[test]
    fn an_interrupted_swap_is_recovered() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("artifact");
        publish(&out, dir.path(), &artifact(&[("a.json", "1")]), None).unwrap();
        fs::rename(&out, sibling(&out, "old")).unwrap();
        let stats = publish(&out, dir.path(), &artifact(&[("a.json", "1")]), None).unwrap();
        assert!(!stats.changed());
        assert!(out.join("a.json").is_file());
    }
}
