//! Module resolution on project-relative keys. Never touches the file system: the caller
//! answers `exists` from its own file inputs.

use std::collections::BTreeMap;

use crate::source::{COMMONJS_EXTENSIONS, MODULE_EXTENSIONS};

/// What a module's imports resolve to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Resolved {
    /// A module of the bundle, by key.
    Module(String),
    /// A Node builtin, normalized to `node:<name>`.
    Builtin(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResolveFailure {
    /// A package name: bundles take relative files and `node:` builtins only.
    Bare,
    /// A relative or absolute path that names no module.
    NotFound,
    /// A relative path into a directory outside the project root that the loader has not
    /// listed yet (`outside_dirs`): the build lists it and resolves again.
    Unlisted,
}

/// Prefix of the keys of virtual modules, which the tool itself provides.
const VIRTUAL_PREFIX: &str = "agent-bundle:";

/// Extensions probed after a specifier without one, in order.
fn extensions() -> impl Iterator<Item = &'static str> {
    MODULE_EXTENSIONS.iter().map(|&(extension, _)| extension)
}

/// Whether a file name is a CommonJS module's (`.cjs`, `.cts`), which a bundle cannot link.
pub fn is_commonjs_file(name: &str) -> bool {
    COMMONJS_EXTENSIONS.iter().any(|extension| name.ends_with(extension))
}

/// Whether a file name is a module's: one with an extension resolution probes, or JSON
/// (imported by its full name, as in Node and TypeScript).
pub fn is_module_file(name: &str) -> bool {
    extensions().any(|extension| name.ends_with(extension)) || super::transpile::is_json_module(name)
}

/// The files of a directory outside the project root that an import may name: modules, and
/// CommonJS ones (found to be refused saying why).
pub fn is_importable_file(name: &str) -> bool {
    is_module_file(name) || is_commonjs_file(name)
}

/// Resolve `specifier` imported from module `from_key`.
///
/// - `aliases` maps exact specifiers to module keys; they win over everything else.
/// - `node:*` and bare Node builtin names resolve to `Builtin("node:<name>")`.
/// - Relative specifiers (`./`, `../`, `.`, `..`) are joined with the directory of
///   `from_key` and normalized (keys above the project root start with `../`; nothing is
///   above a virtual module's folder), then probed: the exact
///   path; for `.js`/`.jsx` the `.ts`/`.tsx` siblings, for `.mjs` the `.mts` one (`.cjs`, `.cts`:
///   found to be refused as CommonJS); the path plus
///   each extension; the path plus `/index` and each extension.
/// - Other bare specifiers are `Bare`; absolute paths and URLs are `NotFound`.
pub fn resolve(
    from_key: &str,
    specifier: &str,
    aliases: &BTreeMap<String, String>,
    exists: &dyn Fn(&str) -> bool,
) -> Result<Resolved, ResolveFailure> {
    if let Some(key) = aliases.get(specifier) {
        return Ok(Resolved::Module(key.clone()));
    }
    if specifier.starts_with("node:") {
        return super::builtins::builtin(specifier).map(Resolved::Builtin).ok_or(ResolveFailure::NotFound);
    }
    if is_relative(specifier) {
        return resolve_relative(from_key, specifier, exists);
    }
    if specifier.is_empty() || specifier.starts_with('/') || specifier.starts_with('\\') || specifier.contains(':') {
        return Err(ResolveFailure::NotFound);
    }
    super::builtins::builtin(specifier).map(Resolved::Builtin).ok_or(ResolveFailure::Bare)
}

fn is_relative(specifier: &str) -> bool {
    specifier == "." || specifier == ".." || specifier.starts_with("./") || specifier.starts_with("../")
}

/// A relative specifier joined with the directory of `from_key` and normalized: the
/// virtual prefix, the path's segments (leading `..` ones climb above the project root) and
/// whether the specifier names a directory (`.`, `..`, a trailing `/`).
struct Joined<'a> {
    prefix: &'static str,
    segments: Vec<&'a str>,
    directory_only: bool,
}

fn join_relative<'a>(from_key: &'a str, specifier: &'a str) -> Result<Joined<'a>, ResolveFailure> {
    let (prefix, from_path) = match from_key.strip_prefix(VIRTUAL_PREFIX) {
        Some(rest) => (VIRTUAL_PREFIX, rest),
        None => ("", from_key),
    };
    let mut segments: Vec<&str> = from_path.split('/').filter(|s| !s.is_empty()).collect();
    segments.pop(); // the importing file itself
    let mut directory_only = false;
    for part in specifier.split('/') {
        directory_only = matches!(part, "" | "." | "..");
        match part {
            "" | "." => {}
            ".." => match segments.last() {
                Some(&last) if last != ".." => {
                    segments.pop();
                }
                // A virtual module's folder holds only the tool's own modules.
                _ if !prefix.is_empty() => return Err(ResolveFailure::NotFound),
                _ => segments.push(".."),
            },
            name => segments.push(name),
        }
    }
    Ok(Joined { prefix, segments, directory_only })
}

/// The project-relative path a relative `specifier` imported from `from_key` names
/// (before extensions are tried); `None` for any other specifier.
pub fn joined_key(from_key: &str, specifier: &str) -> Option<String> {
    let joined = is_relative(specifier).then(|| join_relative(from_key, specifier).ok()).flatten()?;
    joined.prefix.is_empty().then(|| joined.segments.join("/"))
}

/// The directories outside the project root (keys starting with `../`) that can hold the
/// module a relative `specifier` imported from `from_key` names: the loader lists them on
/// demand, since no walk of the project reaches them. Empty for any other specifier.
pub fn outside_dirs(from_key: &str, specifier: &str) -> Vec<String> {
    let Some(Joined { prefix: "", segments, directory_only }) =
        is_relative(specifier).then(|| join_relative(from_key, specifier).ok()).flatten()
    else {
        return Vec::new();
    };
    let parent = &segments[..segments.len().saturating_sub(1)];
    let candidates = if directory_only { vec![&segments[..]] } else { vec![parent, &segments[..]] };
    candidates.into_iter().filter(|dir| dir.first() == Some(&"..")).map(|dir| dir.join("/")).collect()
}

fn resolve_relative(
    from_key: &str,
    specifier: &str,
    exists: &dyn Fn(&str) -> bool,
) -> Result<Resolved, ResolveFailure> {
    let Joined { prefix, segments, directory_only } = join_relative(from_key, specifier)?;
    let base = format!("{prefix}{}", segments.join("/"));
    let found = |candidate: String| exists(&candidate).then_some(candidate);

    if !directory_only && !segments.is_empty() {
        if let Some(key) = found(base.clone()) {
            return Ok(Resolved::Module(key));
        }
        let siblings: &[(&str, &[&str])] =
            &[(".js", &[".ts", ".tsx"]), (".jsx", &[".ts", ".tsx"]), (".mjs", &[".mts"]), (".cjs", &[".cts"])];
        for (extension, replacements) in siblings {
            if let Some(stem) = base.strip_suffix(extension) {
                for replacement in *replacements {
                    if let Some(key) = found(format!("{stem}{replacement}")) {
                        return Ok(Resolved::Module(key));
                    }
                }
            }
        }
        for extension in extensions() {
            if let Some(key) = found(format!("{base}{extension}")) {
                return Ok(Resolved::Module(key));
            }
        }
    }
    let index = if segments.is_empty() { format!("{prefix}index") } else { format!("{base}/index") };
    for extension in extensions() {
        if let Some(key) = found(format!("{index}{extension}")) {
            return Ok(Resolved::Module(key));
        }
    }
    Err(ResolveFailure::NotFound)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(keys: &[&str]) -> impl Fn(&str) -> bool + use<> {
        let keys: Vec<String> = keys.iter().map(|k| (*k).to_owned()).collect();
        move |key: &str| keys.iter().any(|k| k == key)
    }

    fn no_aliases() -> BTreeMap<String, String> {
        BTreeMap::new()
    }

    fn module(key: &str) -> Result<Resolved, ResolveFailure> {
        Ok(Resolved::Module(key.to_owned()))
    }

    fn builtin(key: &str) -> Result<Resolved, ResolveFailure> {
        Ok(Resolved::Builtin(key.to_owned()))
    }

    #[test]
    fn builtins_are_normalized() {
        let exists = files(&[]);
        let a = no_aliases();
        assert_eq!(resolve("src/a.ts", "fs", &a, &exists), builtin("node:fs"));
        assert_eq!(resolve("src/a.ts", "node:fs", &a, &exists), builtin("node:fs"));
        assert_eq!(resolve("src/a.ts", "fs/promises", &a, &exists), builtin("node:fs/promises"));
        assert_eq!(resolve("src/a.ts", "node:test", &a, &exists), builtin("node:test"));
        assert_eq!(resolve("src/a.ts", "test", &a, &exists), Err(ResolveFailure::Bare));
        assert_eq!(resolve("src/a.ts", "node:nope", &a, &exists), Err(ResolveFailure::NotFound));
        assert_eq!(resolve("src/a.ts", "lodash", &a, &exists), Err(ResolveFailure::Bare));
        assert_eq!(resolve("src/a.ts", "@scope/pkg/x", &a, &exists), Err(ResolveFailure::Bare));
        assert_eq!(resolve("src/a.ts", "/etc/passwd", &a, &exists), Err(ResolveFailure::NotFound));
        assert_eq!(resolve("src/a.ts", "file:///x.js", &a, &exists), Err(ResolveFailure::NotFound));
    }

    #[test]
    fn aliases_win() {
        let exists = files(&[]);
        let mut a = no_aliases();
        a.insert("agent-bundle/jsx-runtime".into(), "agent-bundle:runtime/jsx.mjs".into());
        a.insert("fs".into(), "src/fake-fs.ts".into());
        assert_eq!(
            resolve("src/a.tsx", "agent-bundle/jsx-runtime", &a, &exists),
            module("agent-bundle:runtime/jsx.mjs")
        );
        assert_eq!(resolve("src/a.ts", "fs", &a, &exists), module("src/fake-fs.ts"));
    }

    #[test]
    fn relative_probing_order() {
        let a = no_aliases();
        let exists = files(&[
            "src/hooks/util.ts",
            "src/hooks/util.js",
            "src/lib/x.ts",
            "src/lib/y.tsx",
            "src/lib/z.mts",
            "src/lib/common.cts",
            "src/lib/plain.js",
            "src/lib/dir/index.ts",
            "src/lib/dir2/index.mjs",
            "index.ts",
        ]);
        // Exact file first.
        assert_eq!(resolve("src/hooks/a.ts", "./util.js", &a, &exists), module("src/hooks/util.js"));
        // `.js` -> `.ts` / `.tsx` siblings, `.mjs` -> `.mts`.
        assert_eq!(resolve("src/hooks/a.ts", "../lib/x.js", &a, &exists), module("src/lib/x.ts"));
        assert_eq!(resolve("src/hooks/a.ts", "../lib/y.js", &a, &exists), module("src/lib/y.tsx"));
        assert_eq!(resolve("src/hooks/a.ts", "../lib/y.jsx", &a, &exists), module("src/lib/y.tsx"));
        assert_eq!(resolve("src/hooks/a.ts", "../lib/z.mjs", &a, &exists), module("src/lib/z.mts"));
        // (Found, to be refused as CommonJS by the linker.)
        assert_eq!(resolve("src/hooks/a.ts", "../lib/common.cjs", &a, &exists), module("src/lib/common.cts"));
        // Extension probing: .ts wins over .js.
        assert_eq!(resolve("src/hooks/a.ts", "./util", &a, &exists), module("src/hooks/util.ts"));
        assert_eq!(resolve("src/hooks/a.ts", "../lib/plain", &a, &exists), module("src/lib/plain.js"));
        // Directory index.
        assert_eq!(resolve("src/hooks/a.ts", "../lib/dir", &a, &exists), module("src/lib/dir/index.ts"));
        assert_eq!(resolve("src/hooks/a.ts", "../lib/dir/", &a, &exists), module("src/lib/dir/index.ts"));
        assert_eq!(resolve("src/lib/dir2/q.ts", ".", &a, &exists), module("src/lib/dir2/index.mjs"));
        assert_eq!(resolve("src/lib/dir/q.ts", "./././../x", &a, &exists), module("src/lib/x.ts"));
        assert_eq!(resolve("src/hooks/a.ts", "../..", &a, &exists), module("index.ts"));
        // Missing.
        assert_eq!(resolve("src/a.ts", "./missing", &a, &exists), Err(ResolveFailure::NotFound));
        assert_eq!(resolve("src/lib/x.ts", "./x.ts.ts", &a, &exists), Err(ResolveFailure::NotFound));
    }

    #[test]
    fn keys_above_the_root_start_with_dot_dot() {
        let a = no_aliases();
        let exists = files(&["../shared/log.ts", "../shared/fmt/index.ts", "../../top.ts", "../x/index.ts"]);
        assert_eq!(resolve("src/a.ts", "../../shared/log", &a, &exists), module("../shared/log.ts"));
        assert_eq!(resolve("../shared/log.ts", "./fmt", &a, &exists), module("../shared/fmt/index.ts"));
        assert_eq!(resolve("../shared/fmt/index.ts", "../../../top", &a, &exists), module("../../top.ts"));
        assert_eq!(resolve("../shared/log.ts", "../x/", &a, &exists), module("../x/index.ts"));
        assert_eq!(resolve("src/a.ts", "../../missing", &a, &exists), Err(ResolveFailure::NotFound));
    }

    #[test]
    fn the_outside_dirs_of_a_specifier_are_where_its_candidates_lie() {
        assert_eq!(outside_dirs("src/a.ts", "../../shared/log"), ["../shared", "../shared/log"]);
        assert_eq!(outside_dirs("src/a.ts", "../../shared/"), ["../shared"]);
        assert_eq!(outside_dirs("src/a.ts", "../../shared"), ["..", "../shared"]);
        assert_eq!(outside_dirs("../shared/log.ts", "./fmt.js"), ["../shared", "../shared/fmt.js"]);
        assert_eq!(outside_dirs("src/a.ts", "../.."), [".."]);
        assert!(outside_dirs("src/a.ts", "../lib/x").is_empty(), "inside the root");
        assert!(outside_dirs("src/a.ts", "node:fs").is_empty());
        assert!(outside_dirs("agent-bundle:runtime/hook.mjs", "../../x").is_empty());
    }

    #[test]
    fn relative_from_virtual_modules() {
        let a = no_aliases();
        let exists = files(&["agent-bundle:runtime/jsx.mjs", "src/a.ts"]);
        assert_eq!(
            resolve("agent-bundle:runtime/hook.mjs", "./jsx.mjs", &a, &exists),
            module("agent-bundle:runtime/jsx.mjs")
        );
        assert_eq!(
            resolve("agent-bundle:runtime/hook.mjs", "../../src/a.ts", &a, &exists),
            Err(ResolveFailure::NotFound)
        );
    }
}
