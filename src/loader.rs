//! The only place that reads the project from disk: it walks the project root and turns
//! every file into a salsa input, setting an input only when its bytes changed (setters do
//! not compare, and an unneeded write would invalidate everything that read the file).

use std::collections::BTreeMap;
use std::io;
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
}

impl Workspace {
    pub fn new(db: Database, root: PathBuf) -> Self {
        Workspace {
            db,
            root,
            project: None,
        }
    }

    /// Reads the project tree (skipping `exclude`, e.g. the output directory) into the inputs.
    pub fn load(&mut self, settings: Settings, exclude: &[PathBuf]) -> io::Result<Project> {
        let disk = read_tree(&self.root, exclude)?;
        Ok(self.sync(disk, settings))
    }

    /// Makes the inputs equal to `disk`, touching only what differs.
    pub fn sync(
        &mut self,
        disk: BTreeMap<String, (Arc<[u8]>, bool)>,
        settings: Settings,
    ) -> Project {
        let Some(project) = self.project else {
            let files = disk
                .into_iter()
                .map(|(path, (bytes, executable))| {
                    (
                        path.clone(),
                        SourceFile::new(&self.db, path, bytes, executable),
                    )
                })
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
                    if **file.bytes(&self.db) != *bytes {
                        file.set_bytes(&mut self.db).to(bytes);
                    }
                    if file.executable(&self.db) != executable {
                        file.set_executable(&mut self.db).to(executable);
                    }
                    file
                }
                None => SourceFile::new(&self.db, path.clone(), bytes, executable),
            };
            files.insert(path, file);
        }
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
    let mut files = BTreeMap::new();
    let walker = walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter();
    let walker = walker.filter_entry(|entry| {
        if entry.depth() == 0 || !entry.file_type().is_dir() {
            return true;
        }
        let name = entry.file_name().to_string_lossy();
        let path = entry.path();
        let is_artifact = path.join(MANIFEST_FILE).is_file();
        let is_staging = name.starts_with('.') && name.contains(".agent-bundle-");
        !(SKIPPED_DIRS.contains(&name.as_ref())
            || is_artifact
            || is_staging
            || exclude.iter().any(|e| e == path))
    });
    for entry in walker {
        let entry = entry.map_err(io::Error::other)?;
        if !entry.file_type().is_file() {
            continue;
        }
        let relative = entry
            .path()
            .strip_prefix(root)
            .expect("walkdir stays below its root");
        let Some(key) = relative.to_str().map(|s| s.replace('\\', "/")) else {
            continue;
        };
        let bytes: Arc<[u8]> = std::fs::read(entry.path())?.into();
        let executable = entry
            .metadata()
            .map_err(io::Error::other)?
            .permissions()
            .mode()
            & 0o111
            != 0;
        files.insert(key, (bytes, executable));
    }
    Ok(files)
}
