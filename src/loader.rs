//! The only place that reads the project from disk: it walks the project root and turns
//! every file into a salsa input, setting an input only when its bytes changed (setters do
//! not compare, and an unneeded write would invalidate everything that read the file).

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use salsa::Setter;

use crate::db::{Database, Project, Settings, SourceFile};
use crate::emit::MANIFEST_FILE;

/// Files read from disk: project-relative path → (bytes, executable).
pub type DiskFiles = BTreeMap<String, (Arc<[u8]>, bool)>;

/// Directory names never read as project inputs.
const SKIPPED_DIRS: [&str; 5] = [".git", "node_modules", "target", ".agent-bundle", ".jj"];

/// A long-lived database plus the project input, reusable across builds (watch mode).
pub struct Workspace {
    pub db: Database,
    pub root: PathBuf,
    project: Option<Project>,
    /// Project-relative paths whose input was added, changed or removed by the last sync.
    changed: Vec<String>,
}

impl Workspace {
    pub fn new(db: Database, root: PathBuf) -> Self {
        Workspace { db, root, project: None, changed: Vec::new() }
    }

    /// Reads the project tree (skipping `exclude`, e.g. the output directory) into the inputs.
    pub fn load(&mut self, settings: Settings, exclude: &[PathBuf]) -> io::Result<Project> {
        let disk = read_tree(&self.root, exclude)?;
        Ok(self.sync(disk, settings))
    }

    /// Re-reads only `changed` paths (files or directories, created, modified or removed),
    /// as reported by the file watcher; everything else keeps its input untouched.
    pub fn refresh(&mut self, changed: &[PathBuf], settings: Settings, exclude: &[PathBuf]) -> io::Result<Project> {
        let Some(project) = self.project else {
            return self.load(settings, exclude);
        };
        let mut disk: DiskFiles = project
            .files(&self.db)
            .iter()
            .map(|(path, file)| (path.clone(), (file.bytes(&self.db).clone(), file.executable(&self.db))))
            .collect();
        for path in changed {
            let Ok(relative) = path.strip_prefix(&self.root) else {
                continue;
            };
            let Some(key) = relative.to_str().map(|s| s.replace('\\', "/")) else {
                continue;
            };
            if key.is_empty() || is_ignored(relative, exclude.iter().any(|e| path.starts_with(e))) {
                continue;
            }
            let prefix = format!("{key}/");
            disk.retain(|existing, _| existing != &key && !existing.starts_with(&prefix));
            if path.is_dir() {
                for (sub, file) in read_tree(path, exclude)? {
                    disk.insert(format!("{key}/{sub}"), file);
                }
            } else if let Some(file) = read_file(path)? {
                disk.insert(key, file);
            }
        }
        Ok(self.sync(disk, settings))
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
            let project = Project::new(&self.db, Arc::new(files), settings);
            self.project = Some(project);
            return project;
        };
        let current = project.files(&self.db).clone();
        let mut files = BTreeMap::new();
        for (path, (bytes, executable)) in disk {
            let file = match current.get(&path) {
                Some(&file) => {
                    let new_bytes = **file.bytes(&self.db) != *bytes;
                    let new_mode = file.executable(&self.db) != executable;
                    if new_bytes {
                        file.set_bytes(&mut self.db).to(bytes);
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
        project
    }
}

/// Every file below `root` by project-relative POSIX path, with its bytes and executable bit.
pub fn read_tree(root: &Path, exclude: &[PathBuf]) -> io::Result<DiskFiles> {
    read_files(&input_tree(root, exclude)?.files)
}

/// The listed files (project-relative key, path), as [`read_tree`] returns them.
pub fn read_files(files: &[(String, PathBuf)]) -> io::Result<DiskFiles> {
    let mut disk = BTreeMap::new();
    for (key, path) in files {
        if let Some(file) = read_file(path)? {
            disk.insert(key.clone(), file);
        }
    }
    Ok(disk)
}

/// What the input walk of a project found.
pub struct InputTree {
    /// Every input file (project-relative POSIX key, path), in name order.
    pub files: Vec<(String, PathBuf)>,
    /// Every directory the walk listed, and every one it skipped for holding a manifest
    /// (project-relative key, metadata taken *before* it was listed). While none of them
    /// changes, the walk would find the same files: a directory's time changes whenever an
    /// entry is added to it, removed or renamed. Empty when some directory name is not UTF-8.
    pub dirs: Vec<(String, std::fs::Metadata)>,
}

/// Walks the inputs below `root`.
pub fn input_tree(root: &Path, exclude: &[PathBuf]) -> io::Result<InputTree> {
    let mut artifacts = Vec::new();
    let walker = walkdir::WalkDir::new(root).follow_links(false).sort_by_file_name().into_iter();
    let walker = walker.filter_entry(|entry| {
        if entry.depth() == 0 || !entry.file_type().is_dir() {
            return true;
        }
        let path = entry.path();
        if is_ignored(Path::new(entry.file_name()), exclude.iter().any(|e| e == path)) {
            return false;
        }
        // A folder holding a manifest is a built artifact: an output, never an input.
        if !path.join(MANIFEST_FILE).is_file() {
            return true;
        }
        if let (Some(key), Ok(metadata)) = (relative_key(root, path), entry.metadata()) {
            artifacts.push((key, metadata));
        }
        false
    });
    let (mut tree, mut unnamed_dirs) = (InputTree { files: Vec::new(), dirs: Vec::new() }, false);
    for entry in walker {
        let entry = entry.map_err(io::Error::other)?;
        let key = relative_key(root, entry.path());
        if entry.file_type().is_dir() {
            // Yielded before its entries are read, so this is the state the listing saw.
            let metadata = entry.metadata().map_err(io::Error::other)?;
            match key {
                Some(key) => tree.dirs.push((key, metadata)),
                None => unnamed_dirs = true,
            }
        } else if entry.file_type().is_file()
            && let Some(key) = key
        {
            tree.files.push((key, entry.into_path()));
        }
    }
    tree.dirs.extend(artifacts);
    if unnamed_dirs {
        // A directory that has no key cannot be checked again: such a tree is always walked.
        tree.dirs.clear();
    }
    Ok(tree)
}

/// The project-relative POSIX key of `path`; `None` when it is not UTF-8.
fn relative_key(root: &Path, path: &Path) -> Option<String> {
    path.strip_prefix(root).expect("walkdir stays below its root").to_str().map(|key| key.replace('\\', "/"))
}

/// A file's bytes and executable bit; `None` when it vanished meanwhile or is not a file.
pub fn read_file(path: &Path) -> io::Result<Option<(Arc<[u8]>, bool)>> {
    let absent = |error: io::Error| if error.kind() == io::ErrorKind::NotFound { Ok(None) } else { Err(error) };
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) => return absent(error),
    };
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Ok(None);
    }
    // One read of the size `fstat` gave (thousands of small files: `fs::read` would add a
    // seek and a second read each); a file that shrank meanwhile is read again whole.
    let mut bytes = vec![0; metadata.len() as usize];
    match file.read_exact(&mut bytes) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => match std::fs::read(path) {
            Ok(whole) => bytes = whole,
            Err(error) => return absent(error),
        },
        Err(error) => return Err(error),
    }
    Ok(Some((bytes.into(), metadata.permissions().mode() & 0o111 != 0)))
}

/// Whether a project-relative path lies in a directory that is never an input.
pub fn is_ignored(relative: &Path, excluded: bool) -> bool {
    excluded
        || relative.components().any(|component| {
            let name = component.as_os_str().to_string_lossy();
            SKIPPED_DIRS.contains(&name.as_ref()) || (name.starts_with('.') && name.contains(".agent-bundle-"))
        })
}
