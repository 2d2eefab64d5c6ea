//! `agent-bundle types`: the TypeScript declarations of `agent-bundle/config`, of the
//! handler and route contract (`agent-bundle`), of the JSX runtime routes compile against and
//! of `@agent-bundle/runtime`, written into the project's `.agent-bundle/` with a
//! `tsconfig.json` mapping those imports to them, for editors and `tsc --noEmit`.
//!
//! The contract's shapes are declaration files beside the runtime they describe; what each
//! event carries is rendered from the host tables (`hosts::declarations`).

use std::io;
use std::path::Path;

use crate::stamp::STATE_DIR;

/// The project's config that extends the generated one, written when the project has none.
const PROJECT_TSCONFIG: &str =
    "{\n  \"extends\": \"./.agent-bundle/tsconfig.json\",\n  \"include\": [\"agent-bundle.config.*\", \"src\"]\n}\n";

/// What the imports of handlers, routes and the config resolve to, and how routes' JSX
/// compiles: as the bundler reads them (`.js` naming a `.ts` module, extensionless imports,
/// `.tsx` imports).
const TSCONFIG: &str = r#"{
  "compilerOptions": {
    "allowImportingTsExtensions": true,
    "jsx": "react-jsx",
    "jsxImportSource": "agent-bundle",
    "lib": ["es2023"],
    "module": "preserve",
    "moduleResolution": "bundler",
    "noEmit": true,
    "paths": {
      "@agent-bundle/runtime": ["./types/@agent-bundle/runtime/index.d.ts"],
      "agent-bundle": ["./types/agent-bundle/index.d.ts"],
      "agent-bundle/*": ["./types/agent-bundle/*"]
    },
    "strict": true,
    "target": "es2023"
  }
}
"#;

/// Every file written under `.agent-bundle/`, with its bytes.
fn files() -> [(&'static str, String); 6] {
    [
        ("tsconfig.json", TSCONFIG.to_owned()),
        ("types/agent-bundle/index.d.ts", include_str!("runtime/types/index.d.ts").to_owned()),
        ("types/agent-bundle/events.d.ts", crate::hosts::declarations::render()),
        ("types/agent-bundle/config.d.ts", include_str!("runtime/types/config.d.ts").to_owned()),
        ("types/agent-bundle/jsx-runtime.d.ts", include_str!("runtime/types/jsx-runtime.d.ts").to_owned()),
        ("types/@agent-bundle/runtime/index.d.ts", include_str!("runtime/types/agent.d.ts").to_owned()),
    ]
}

/// What [`write`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Project-relative paths written, and those already as they should be.
    pub written: Vec<String>,
    pub unchanged: Vec<String>,
    /// The project's `tsconfig.json`: created, extending the generated one, or neither (it
    /// has to be told).
    pub tsconfig: ProjectTsconfig,
}

#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
pub enum ProjectTsconfig {
    #[default]
    Created,
    Extends,
    Other,
}

impl ProjectTsconfig {
    pub fn as_str(self) -> &'static str {
        match self {
            ProjectTsconfig::Created => "created",
            ProjectTsconfig::Extends => "extends",
            ProjectTsconfig::Other => "other",
        }
    }
}

/// Writes the declarations into `root`'s `.agent-bundle/` (each file only when its bytes
/// differ), and a `tsconfig.json` extending them when the project has none. Never through a
/// symbolic link: the state folder is this checkout's.
pub fn write(root: &Path) -> io::Result<Written> {
    let state = root.join(STATE_DIR);
    crate::stamp::create_state_dir(&state)?;
    let mut report = Written::default();
    for (path, bytes) in files() {
        let target = state.join(path);
        own_folders(&state, target.parent().expect("a declaration file lies in a folder"))?;
        let shown = format!("{STATE_DIR}/{path}");
        if crate::stamp::read_state_file(&target).as_deref() == Some(bytes.as_bytes()) {
            report.unchanged.push(shown);
        } else {
            crate::output::replace_whole(&target, bytes.as_bytes())?;
            report.written.push(shown);
        }
    }
    let project = root.join("tsconfig.json");
    report.tsconfig = match std::fs::symlink_metadata(&project) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            crate::output::replace_whole(&project, PROJECT_TSCONFIG.as_bytes())?;
            report.written.push("tsconfig.json".to_owned());
            ProjectTsconfig::Created
        }
        Err(error) => return Err(error),
        // (Read as text: a tsconfig may hold comments, which no JSON parser takes.)
        Ok(_) => match std::fs::read_to_string(&project)?.contains(".agent-bundle/tsconfig.json") {
            true => ProjectTsconfig::Extends,
            false => ProjectTsconfig::Other,
        },
    };
    Ok(report)
}

/// Makes the folders from `state` down to `folder`, refusing any that is a symbolic link.
fn own_folders(state: &Path, folder: &Path) -> io::Result<()> {
    let relative = folder.strip_prefix(state).expect("declarations lie in the state folder");
    let mut at = state.to_owned();
    for part in relative.components() {
        at.push(part);
        match std::fs::create_dir(&at) {
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
            made => made?,
        }
        if !std::fs::symlink_metadata(&at)?.is_dir() {
            let message = format!("{} is not a folder (a symbolic link?): remove it", at.display());
            return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second write changes nothing; a project's own tsconfig is never replaced, only
    /// judged; a state folder that is a link is refused.
    #[test]
    fn declarations_are_written_once_and_a_project_tsconfig_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let first = write(dir.path()).unwrap();
        assert_eq!((first.written.len(), first.tsconfig), (7, ProjectTsconfig::Created));
        let second = write(dir.path()).unwrap();
        assert_eq!((second.written.len(), second.unchanged.len(), second.tsconfig), (0, 6, ProjectTsconfig::Extends));
        std::fs::write(dir.path().join("tsconfig.json"), "{ // mine\n}\n").unwrap();
        assert_eq!(write(dir.path()).unwrap().tsconfig, ProjectTsconfig::Other);
        assert_eq!(std::fs::read_to_string(dir.path().join("tsconfig.json")).unwrap(), "{ // mine\n}\n");

        let linked = tempfile::tempdir().unwrap();
        std::fs::create_dir(linked.path().join(STATE_DIR)).unwrap();
        let inner = linked.path().join(STATE_DIR).join("types");
        std::os::unix::fs::symlink(dir.path(), &inner).unwrap();
        assert!(write(linked.path()).is_err(), "a link inside the state folder is never written through");
    }
}
