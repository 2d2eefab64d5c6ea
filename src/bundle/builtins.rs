//! Node's builtin modules and the names each exports to an ES module, read from
//! `node-builtins.txt` (written by `scripts/node-builtins.mjs` under the Node 20 release its
//! header names). The bundler keeps builtins external: this table lets it refuse at build
//! time what Node would refuse when it loads the wrapper (an earlier Node 20 lacking a name
//! the table has still refuses it then: the wrapper imports each name once more).

use std::collections::BTreeMap;
use std::sync::OnceLock;

const TABLE: &str = include_str!("node-builtins.txt");

/// The Node version the table was taken from, as its header names it.
pub fn node_version() -> &'static str {
    let header = TABLE.lines().next().unwrap_or_default();
    header.rsplit_once("(Node ").and_then(|(_, rest)| rest.strip_suffix(").")).unwrap_or("20")
}

/// A builtin module: whether it exists only with the `node:` prefix, and its export names
/// besides `default`, sorted.
struct Module {
    prefixed_only: bool,
    exports: Vec<&'static str>,
}

/// The table, by name without the `node:` prefix.
fn modules() -> &'static BTreeMap<&'static str, Module> {
    static MODULES: OnceLock<BTreeMap<&'static str, Module>> = OnceLock::new();
    MODULES.get_or_init(|| {
        let mut modules = BTreeMap::new();
        let mut current: Option<&mut Module> = None;
        for line in TABLE.lines().filter(|line| !line.starts_with('#')) {
            if let Some(names) = line.strip_prefix("    ") {
                current.as_mut().expect("an export line follows a module line").exports.extend(names.split(' '));
                continue;
            }
            let name = line.strip_suffix(':').expect("a module line ends with a colon");
            let (name, prefixed_only) = match name.strip_prefix("node:") {
                Some(name) => (name, true),
                None => (name, false),
            };
            current = Some(modules.entry(name).or_insert(Module { prefixed_only, exports: Vec::new() }));
        }
        // (`exports` searches them.)
        for module in modules.values_mut() {
            module.exports.sort_unstable();
            module.exports.dedup();
        }
        modules
    })
}

/// The builtin `specifier` names, as `node:<name>`: `node:` and a builtin's name, or a
/// builtin's name alone where Node takes it without the prefix.
pub fn builtin(specifier: &str) -> Option<String> {
    let (name, prefixed) = match specifier.strip_prefix("node:") {
        Some(name) => (name, true),
        None => (specifier, false),
    };
    let module = modules().get(name)?;
    (prefixed || !module.prefixed_only).then(|| format!("node:{name}"))
}

/// Whether the builtin `node:<name>` gives an ES module the export `name`; `None` for a
/// module not in the table.
pub fn exports(builtin: &str, name: &str) -> Option<bool> {
    let module = modules().get(builtin.strip_prefix("node:").unwrap_or(builtin))?;
    Some(name == "default" || module.exports.binary_search(&name).is_ok())
}

/// The export names of the builtin `node:<name>` besides `default` (none for a module not in
/// the table).
pub fn export_names(builtin: &str) -> &'static [&'static str] {
    modules().get(builtin.strip_prefix("node:").unwrap_or(builtin)).map_or(&[], |module| &module.exports)
}

/// The builtins' names as a specifier would write them (`fs`, `node:test`), for suggestions.
pub fn names() -> impl Iterator<Item = &'static str> {
    TABLE.lines().filter_map(|line| line.strip_suffix(':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_resolve_with_and_without_prefix() {
        assert_eq!(builtin("fs").as_deref(), Some("node:fs"));
        assert_eq!(builtin("node:fs/promises").as_deref(), Some("node:fs/promises"));
        assert_eq!(builtin("node:test").as_deref(), Some("node:test"));
        assert_eq!(builtin("test"), None, "node:test exists only with its prefix");
        assert_eq!(builtin("fss"), None);
        assert_eq!(builtin("node:lodash"), None);
    }

    #[test]
    fn exports_are_node_20s() {
        assert_eq!(exports("node:fs", "readFileSync"), Some(true));
        assert_eq!(exports("node:fs", "default"), Some(true));
        assert_eq!(exports("node:fs", "readFileSynk"), Some(false));
        assert_eq!(exports("node:test", "describe"), Some(true));
        assert_eq!(exports("node:lodash", "x"), None);
        assert!(export_names("node:path").contains(&"join"));
        assert!(names().any(|name| name == "node:test/reporters"));
        assert!(node_version().starts_with("v20."), "{}", node_version());
    }

    /// The table is what the Node running the tests prints, when it is the Node the table
    /// was taken from (another Node prints another table: the script is run again under the
    /// Node the wrappers are meant to check against).
    #[test]
    fn table_matches_node() {
        let version = std::process::Command::new("node").arg("--version").output().expect("node runs");
        let version = String::from_utf8_lossy(&version.stdout).trim().to_owned();
        if version != node_version() {
            eprintln!(
                "table_matches_node: the table is Node {}'s, this is Node {version}: not compared",
                node_version()
            );
            return;
        }
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/node-builtins.mjs");
        let printed = std::process::Command::new("node").args(["--no-warnings", script]).output().expect("node runs");
        assert!(printed.status.success(), "{}", String::from_utf8_lossy(&printed.stderr));
        assert_eq!(String::from_utf8_lossy(&printed.stdout), TABLE, "run scripts/node-builtins.mjs again");
    }
}
