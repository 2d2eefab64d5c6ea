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

/// The project's config that extends the generated one, written when the project has none:
/// every TypeScript file of the project (a handler outside `src/` too), but the artifact's.
const PROJECT_TSCONFIG: &str =
    "{\n  \"extends\": \"./.agent-bundle/tsconfig.json\",\n  \"exclude\": [\"artifact\", \"node_modules\"]\n}\n";

/// What the imports of handlers, routes and the config resolve to, and how routes' JSX
/// compiles: as the bundler reads them (`.js` naming a `.ts` module, extensionless imports,
/// `.tsx` imports); what Node 20, which runs the wrappers, has (its ES2024 strings and regular
/// expressions; not `Object.groupBy`, nor `ArrayBuffer.prototype.transfer`, which come with
/// Node 21, though a resizable buffer is then refused too); Node's own types
/// (`@types/node`), which TypeScript 6 and later no longer load unasked. (`target` ES2024
/// needs TypeScript 5.7.)
const TSCONFIG: &str = r#"{
  "compilerOptions": {
    "allowImportingTsExtensions": true,
    "jsx": "react-jsx",
    "jsxImportSource": "agent-bundle",
    "lib": ["es2023", "es2024.regexp", "es2024.sharedmemory", "es2024.string"],
    "module": "preserve",
    "moduleResolution": "bundler",
    "noEmit": true,
    "paths": {
      "@agent-bundle/runtime": ["./types/@agent-bundle/runtime/index.d.ts"],
      "agent-bundle": ["./types/agent-bundle/index.d.ts"],
      "agent-bundle/*": ["./types/agent-bundle/*"]
    },
    "strict": true,
    "target": "es2024",
    "types": ["node"]
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
    /// Project-relative paths written, those already as they should be, and those removed
    /// (`.agent-bundle/types/` is agent-bundle's own: what else is found there goes).
    pub written: Vec<String>,
    pub unchanged: Vec<String>,
    pub removed: Vec<String>,
    /// The project's `tsconfig.json`: created, extending the generated one, neither (it
    /// has to be told), or one that does not parse.
    pub tsconfig: ProjectTsconfig,
    /// The compiler options a project's `tsconfig.json` that extends the generated one sets
    /// itself without what the generated one gives them, which TypeScript takes instead of
    /// the inherited ones (see [`Override`]).
    pub overrides: Vec<Override>,
}

#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
pub enum ProjectTsconfig {
    #[default]
    Created,
    Extends,
    Other,
    Malformed,
}

impl ProjectTsconfig {
    pub fn as_str(self) -> &'static str {
        match self {
            ProjectTsconfig::Created => "created",
            ProjectTsconfig::Extends => "extends",
            ProjectTsconfig::Other => "other",
            ProjectTsconfig::Malformed => "malformed",
        }
    }
}

/// A compiler option a project's `tsconfig.json` sets itself, which TypeScript takes
/// instead of the one it extends (it merges none), without what agent-bundle's needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Override {
    /// `paths` without agent-bundle's modules, mapped from the project's folder.
    Paths,
    /// `types` without `node`.
    Types,
    /// `baseUrl` with no `paths`: the inherited ones then resolve against it.
    BaseUrl,
    /// `module` of a kind the inherited `moduleResolution: bundler` refuses (`commonjs`,
    /// `nodenext`, …).
    Module,
    /// `moduleResolution` refused with the module kind in force: `classic`, or `node16` or
    /// `nodenext` without their own module kind.
    ModuleResolution,
    /// `typeRoots` without `node_modules/@types`, where Node's types are.
    TypeRoots,
}

impl Override {
    pub fn as_str(self) -> &'static str {
        match self {
            Override::Paths => "paths",
            Override::Types => "types",
            Override::BaseUrl => "baseUrl",
            Override::Module => "module",
            Override::ModuleResolution => "moduleResolution",
            Override::TypeRoots => "typeRoots",
        }
    }

    /// What to write in the project's `tsconfig.json`.
    pub fn fix(self) -> String {
        match self {
            Override::Paths => {
                // (`${configDir}`: the project's folder, whatever its `baseUrl`.)
                let entries = MODULES
                    .iter()
                    .map(|(module, path)| format!("\"{module}\": [\"${{configDir}}/{STATE_DIR}/{path}\"]"));
                format!("add {} to its `paths`", entries.collect::<Vec<_>>().join(", "))
            }
            Override::Types => "add \"node\" to its `types`".to_owned(),
            Override::BaseUrl => Override::Paths.fix(),
            Override::Module => "remove its `module`, or make it \"preserve\" or \"esnext\"".to_owned(),
            Override::ModuleResolution => "remove its `moduleResolution`, or make it \"bundler\"".to_owned(),
            Override::TypeRoots => "add \"./node_modules/@types\" to its `typeRoots`".to_owned(),
        }
    }
}

/// agent-bundle's modules, each with its declarations in the state folder, as
/// [`TSCONFIG`]'s `paths` map them.
const MODULES: [(&str, &str); 3] = [
    ("@agent-bundle/runtime", "types/@agent-bundle/runtime/index.d.ts"),
    ("agent-bundle", "types/agent-bundle/index.d.ts"),
    ("agent-bundle/*", "types/agent-bundle/*"),
];

/// What the tsconfig `text` (JSON with comments, read as the JavaScript it is a part of) of
/// the project at `root` says: whether it extends the generated one, and the options it
/// sets over those without what they give (see [`Override`]). `None` where the text does
/// not read as TypeScript reads it (nothing but comments is `{}`).
fn read_tsconfig(text: &str, root: &Path) -> Option<(bool, Vec<Override>)> {
    use oxc_ast::ast::{ArrayExpressionElement, Expression, ObjectExpression, Statement};
    // (The last of a key written twice, as JSON.parse takes it.)
    fn member<'b, 'a>(object: &'b ObjectExpression<'a>, key: &str) -> Option<&'b Expression<'a>> {
        let mut property = object.properties.iter().rev().filter_map(|property| property.as_property());
        property.find(|property| property.key.static_name().as_deref() == Some(key)).map(|property| &property.value)
    }
    // A string, or an array's strings.
    fn strings(value: &Expression<'_>) -> Vec<String> {
        match value.get_inner_expression() {
            Expression::StringLiteral(text) => vec![text.value.to_string()],
            Expression::ArrayExpression(array) => array
                .elements
                .iter()
                .filter_map(|element| match element {
                    ArrayExpressionElement::StringLiteral(text) => Some(text.value.to_string()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }
    // (Nested past what the parser's stack holds, it aborts: such a file is no tsconfig.)
    if crate::source::too_deep(text).is_some() {
        return None;
    }
    let allocator = oxc_allocator::Allocator::default();
    let parse = |source: &str| {
        let parsed =
            oxc_parser::Parser::new(&allocator, allocator.alloc_str(source), oxc_span::SourceType::mjs()).parse();
        (!parsed.panicked && parsed.diagnostics.errors().next().is_none()).then_some(parsed.program)
    };
    let Some(program) = parse(&format!("({text}\n)")) else {
        // Nothing but comments and blanks is `{}` to TypeScript.
        let alone = parse(text);
        return alone
            .filter(|program| program.body.is_empty() && program.directives.is_empty())
            .map(|_| (false, Vec::new()));
    };
    // (One statement: a text that closes the parentheses itself and goes on is no JSON.)
    let [Statement::ExpressionStatement(statement)] = program.body.as_slice() else { return None };
    // (Inside the parentheses written around it here: one written in the file is no JSON.)
    let Expression::ParenthesizedExpression(written) = &statement.expression else { return None };
    let Expression::ObjectExpression(config) = &written.expression else { return None };
    if !is_json(&written.expression) {
        return None;
    }
    // (`./` or `../` makes it a path: without it TypeScript looks for a package of that
    // name. One through `..` is taken from the project's own path.)
    let root = root.to_str().unwrap_or("").trim_start_matches('/');
    let generated = |extended: &String| {
        let inside = match extended.strip_prefix("./") {
            Some(inside) => normalized(inside),
            None if extended.starts_with("../") => normalized(&format!("{root}/{extended}"))
                .and_then(|path| Some(path.strip_prefix(root)?.trim_start_matches('/').to_owned())),
            None => None,
        };
        inside.is_some_and(|inside| inside.strip_suffix(".json").unwrap_or(&inside) == format!("{STATE_DIR}/tsconfig"))
    };
    let extends = member(config, "extends").is_some_and(|extends| strings(extends).iter().any(generated));
    let options = match member(config, "compilerOptions").map(Expression::get_inner_expression) {
        Some(Expression::ObjectExpression(options)) => Some(&**options),
        _ => None,
    };
    let Some(options) = options.filter(|_| extends) else { return Some((extends, Vec::new())) };
    let base_url = member(options, "baseUrl").and_then(|base| strings(base).into_iter().next());
    let mut overrides = Vec::new();
    match member(options, "paths").map(Expression::get_inner_expression) {
        // (Each module mapped into the state folder, from the project's folder.)
        Some(Expression::ObjectExpression(paths)) => {
            // (By its own key or a pattern's, `@agent-bundle/*`, whose `*` the target takes.)
            let maps = |(module, path): &(&str, &str)| {
                let wanted = format!("{STATE_DIR}/{path}");
                paths.properties.iter().filter_map(|property| property.as_property()).any(|property| {
                    let Some(star) = property.key.static_name().and_then(|key| matched(&key, module)) else {
                        return false;
                    };
                    let target =
                        |target: &String| star.map_or_else(|| target.clone(), |star| target.replace('*', star));
                    strings(&property.value)
                        .iter()
                        .filter_map(|written| resolved(&target(written), base_url.as_deref()))
                        .any(|target| leads_to(&target, &wanted))
                })
            };
            if !MODULES.iter().all(maps) {
                overrides.push(Override::Paths);
            }
        }
        Some(_) => overrides.push(Override::Paths),
        // The inherited ones resolve against the project's `baseUrl`, where it sets one.
        None if base_url.is_some() => overrides.push(Override::BaseUrl),
        None => {}
    }
    // A module kind the inherited `moduleResolution: bundler` refuses (TS5095), or a
    // resolution refused with the module kind in force (TS5110: `node16` and `nodenext` want
    // theirs; `classic` finds no package); and what finds Node's types.
    let text = |key: &str| member(options, key).and_then(|value| strings(value).into_iter().next());
    let module = text("module").map(|module| module.to_ascii_lowercase());
    let resolution = text("moduleResolution").map(|resolution| resolution.to_ascii_lowercase());
    let bundled = ["preserve", "esnext", "es2015", "es6", "es2020", "es2022"];
    let bundler = resolution.as_deref().is_none_or(|resolution| resolution == "bundler");
    let node_resolution = resolution.as_deref().is_some_and(|resolution| ["node16", "nodenext"].contains(&resolution));
    let node_module =
        module.as_deref().is_some_and(|module| ["node16", "node18", "node20", "nodenext"].contains(&module));
    // (A Node module kind wants its resolution, TS5109; `bundler` an ES kind, TS5095.)
    let module_refused = (bundler && module.as_deref().is_some_and(|module| !bundled.contains(&module)))
        || (node_module && !node_resolution);
    if module_refused {
        overrides.push(Override::Module);
    }
    let refused = match resolution.as_deref() {
        Some("classic") => true,
        Some("node16" | "nodenext") => !node_module,
        _ => false,
    };
    if refused {
        overrides.push(Override::ModuleResolution);
    }
    let roots = member(options, "typeRoots").filter(|roots| !roots.get_inner_expression().is_null());
    if roots.is_some_and(|roots| {
        !strings(roots).iter().any(|root| root.trim_end_matches('/').ends_with("node_modules/@types"))
    }) {
        overrides.push(Override::TypeRoots);
    }
    // (`null` gives back TypeScript's own: every `@types` package, Node's among them.)
    let types = member(options, "types").filter(|types| !types.get_inner_expression().is_null());
    if types.is_some_and(|types| !strings(types).iter().any(|name| name == "node" || name == "@types/node")) {
        overrides.push(Override::Types);
    }
    Some((extends, overrides))
}

/// Whether `value` is written as JSON writes it, comments and trailing commas aside:
/// TypeScript's reader refuses single quotes, bare keys, templates and expressions (TS1327).
fn is_json(value: &oxc_ast::ast::Expression<'_>) -> bool {
    use oxc_ast::ast::{Expression, ObjectPropertyKind, PropertyKey};
    let double_quoted = |text: &oxc_ast::ast::StringLiteral<'_>| text.raw.is_some_and(|raw| raw.starts_with('"'));
    match value {
        Expression::ObjectExpression(object) => object.properties.iter().all(|property| match property {
            ObjectPropertyKind::ObjectProperty(property) => {
                !property.computed
                    && !property.method
                    && !property.shorthand
                    && matches!(&property.key, PropertyKey::StringLiteral(key) if double_quoted(key))
                    && is_json(&property.value)
            }
            ObjectPropertyKind::SpreadProperty(_) => false,
        }),
        Expression::ArrayExpression(array) => {
            array.elements.iter().all(|item| item.as_expression().is_some_and(is_json))
        }
        Expression::StringLiteral(text) => double_quoted(text),
        Expression::NumericLiteral(_) | Expression::BooleanLiteral(_) | Expression::NullLiteral(_) => true,
        Expression::UnaryExpression(negated) => {
            negated.operator == oxc_syntax::operator::UnaryOperator::UnaryNegation
                && matches!(negated.argument, Expression::NumericLiteral(_))
        }
        _ => false,
    }
}

/// Where a `paths` target of the project's tsconfig leads, from the project's folder, as
/// TypeScript resolves it: from `${configDir}`, else from `base_url`, else from the config's
/// folder, where it must start with `./` or `../` (TS5090). `None` where it is none of these.
fn resolved(target: &str, base_url: Option<&str>) -> Option<String> {
    // (`${configDir}` is the project's folder, in `baseUrl` as in a target.)
    let base_url =
        base_url.map(|base| base.strip_prefix("${configDir}").map_or(base, |rest| rest.trim_start_matches('/')));
    let base_url = base_url.map(|base| if base.is_empty() { "." } else { base });
    let joined = match (target.strip_prefix("${configDir}/"), base_url) {
        (Some(inside), _) => inside.to_owned(),
        (None, Some(base)) => format!("{base}/{target}"),
        (None, None) if target.starts_with("./") || target.starts_with("../") => target.to_owned(),
        (None, None) => return None,
    };
    normalized(&joined)
}

/// `path`, relative to the project's folder, without `.`, `..` or empty segments; `None`
/// where it leaves the folder.
fn normalized(path: &str) -> Option<String> {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => _ = segments.pop()?,
            segment => segments.push(segment),
        }
    }
    Some(segments.join("/"))
}

/// Whether a `paths` target at `target` (normalized) leads TypeScript to the declarations
/// file `wanted`: itself with or without its extension (`.js` leads to `.d.ts` too), or,
/// for an `index.d.ts`, its folder.
fn leads_to(target: &str, wanted: &str) -> bool {
    let stem = |path: &str| {
        // (`.mjs` leads to `.d.mts`, never to `.d.ts`.)
        let ends = [".d.ts", ".ts", ".js"];
        ends.iter().find_map(|end| path.strip_suffix(end)).unwrap_or(path).to_owned()
    };
    let (target, wanted) = (stem(target), stem(wanted));
    target == wanted || wanted.strip_suffix("/index") == Some(target.as_str())
}

/// Whether the `paths` key `key` maps `module`: it is the key (`Some(None)`), or a pattern
/// with one `*` that matches it (`Some(Some(what the star takes))`).
fn matched<'m>(key: &str, module: &'m str) -> Option<Option<&'m str>> {
    if key == module {
        return Some(None);
    }
    let (before, after) = key.split_once('*')?;
    let star = module.strip_prefix(before)?.strip_suffix(after)?;
    (!module.contains('*')).then_some(Some(star))
}

/// Writes the declarations into `root`'s `.agent-bundle/` (each file only when its bytes
/// differ, and removing any other file there), and a `tsconfig.json` extending them when the
/// project has none. Never through a symbolic link: the state folder is this checkout's.
pub fn write(root: &Path) -> io::Result<Written> {
    let project = root.join("tsconfig.json");
    // (Judged before anything is written. The extension is optional in `extends`, and `./` or
    // `../` makes it a path: without it TypeScript looks for a package of that name.)
    let text = read_project_tsconfig(&project).map_err(at(&project))?;
    let (tsconfig, overrides) = match text.as_deref().map(|text| read_tsconfig(text, root)) {
        None => (ProjectTsconfig::Created, Vec::new()),
        Some(Some((true, overrides))) => (ProjectTsconfig::Extends, overrides),
        Some(Some((false, _))) => (ProjectTsconfig::Other, Vec::new()),
        Some(None) => (ProjectTsconfig::Malformed, Vec::new()),
    };
    let state = root.join(STATE_DIR);
    crate::stamp::create_ignored_state_folder(&state)?;
    let mut report = Written { tsconfig, overrides, ..Written::default() };
    let files = files();
    for (path, bytes) in &files {
        let target = state.join(path);
        // Each folder down to it, none of them a link.
        let folders: Vec<&Path> = target.ancestors().skip(1).take_while(|folder| *folder != state).collect();
        for folder in folders.into_iter().rev() {
            crate::stamp::ensure_state_folder(folder).map_err(at(folder))?;
        }
        let shown = format!("{STATE_DIR}/{path}");
        if crate::stamp::read_state_file(&target).as_deref() == Some(bytes.as_bytes()) {
            report.unchanged.push(shown);
        } else {
            crate::output::replace_whole(&target, bytes.as_bytes()).map_err(at(&target))?;
            report.written.push(shown);
        }
    }
    // What an earlier release wrote and this one does not would still be read by `tsc`.
    let ours = |path: &Path| files.iter().any(|(name, _)| state.join(name) == path);
    let walk = walkdir::WalkDir::new(state.join("types")).min_depth(1).contents_first(true);
    for entry in walk.into_iter().filter_map(Result::ok) {
        if entry.file_type().is_dir() {
            // Only an empty one goes (its files removed just before): ours hold our files.
            let _ = std::fs::remove_dir(entry.path());
        } else if !ours(entry.path()) {
            std::fs::remove_file(entry.path()).map_err(at(entry.path()))?;
            let relative = entry.path().strip_prefix(root).unwrap_or(entry.path());
            report.removed.push(relative.display().to_string());
        }
    }
    if tsconfig == ProjectTsconfig::Created {
        // Made only where none is, at that instant: one the user made meanwhile is theirs.
        let made = std::fs::OpenOptions::new().write(true).create_new(true).open(&project);
        match made {
            Ok(mut file) => {
                std::io::Write::write_all(&mut file, PROJECT_TSCONFIG.as_bytes()).map_err(at(&project))?;
                report.written.push("tsconfig.json".to_owned());
            }
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => report.tsconfig = ProjectTsconfig::Other,
            Err(error) => return Err(at(&project)(error)),
        }
    }
    Ok(report)
}

/// The text of the project's `tsconfig.json`, or `None` when there is none: through a
/// symbolic link, as TypeScript reads it, and then as the loader reads a file (never waiting
/// on a pipe, never past 1 GiB).
fn read_project_tsconfig(path: &Path) -> io::Result<Option<String>> {
    let real = match std::fs::canonicalize(path) {
        Err(error) if error.kind() == io::ErrorKind::NotFound && std::fs::symlink_metadata(path).is_err() => {
            return Ok(None);
        }
        real => real?,
    };
    match crate::loader::read_file(&real)? {
        Some((bytes, _)) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        None => Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file (a folder, or a pipe)")),
    }
}

/// An error that names the file it happened to.
fn at(path: &Path) -> impl Fn(io::Error) -> io::Error + '_ {
    move |error| io::Error::new(error.kind(), format!("{}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    /// Where the projects of these tests are.
    const ROOT: &str = "/work/plugin";

    #[test]
    fn options_a_project_sets_over_the_generated_ones_are_found() {
        let found = |options: &str| {
            let text = format!(
                "{{ \"extends\": \"./.agent-bundle/tsconfig.json\", // the declarations\n  \"compilerOptions\": {{ {options} }}, }}"
            );
            let (extends, overrides) = read_tsconfig(&text, Path::new(ROOT)).unwrap();
            assert!(extends, "{text}");
            overrides.into_iter().map(Override::as_str).collect::<Vec<_>>()
        };
        let none = Vec::<&str>::new();
        assert_eq!(found(""), none);
        assert_eq!(found(r#""paths": { "@/*": ["./src/*"] }"#), ["paths"]);
        // Mapped from the project (from `${configDir}`, the config's folder or its `baseUrl`):
        // none; copied as the generated file has them (from its own folder), in part, or with
        // no `./` and no `baseUrl` (TS5090): still.
        let mapped = |prefix: &str| {
            let entries =
                MODULES.iter().map(|(module, path)| format!(r#""{module}": ["{prefix}.agent-bundle/{path}"]"#));
            format!(r#""paths": {{ "@/*": ["./src/*"], {} }}"#, entries.collect::<Vec<_>>().join(", "))
        };
        assert_eq!(found(&mapped("./")), none);
        assert_eq!(found(&mapped("${configDir}/")), none);
        assert_eq!(found(&format!(r#""baseUrl": "./src", {}"#, mapped("../"))), none);
        assert_eq!(found(&format!(r#""baseUrl": ".", {}"#, mapped(""))), none);
        assert_eq!(found(&format!(r#""baseUrl": "${{configDir}}/src", {}"#, mapped("../"))), none);
        assert_eq!(found(&mapped("")), ["paths"]);
        assert_eq!(found(r#""paths": { "agent-bundle/*": ["./types/agent-bundle/*"] }"#), ["paths"]);
        assert_eq!(found(r#""baseUrl": ".""#), ["baseUrl"]);
        assert_eq!(found(r#""types": ["vitest"]"#), ["types"]);
        assert_eq!(found(r#""types": ["vitest", "node"]"#), none);
        // `null` gives TypeScript's own back; a target TypeScript completes (a folder, or no
        // extension) leads where the generated one does.
        assert_eq!(found(r#""types": null"#), none);
        let completed = r#""paths": { "agent-bundle": ["./.agent-bundle/types/agent-bundle/index"],
            "agent-bundle/*": ["./.agent-bundle/types/agent-bundle/*"],
            "@agent-bundle/runtime": ["./.agent-bundle/types/@agent-bundle/runtime"] }"#;
        assert_eq!(found(completed), none);
        assert_eq!(found(&completed.replace("runtime\"]", "runtime/types\"]")), ["paths"]);
        // `.js` leads to `.d.ts`; a pattern key maps what its star takes; `@types/node` is Node's.
        let as_js = completed.replace("agent-bundle/index\"]", "agent-bundle/index.js\"]");
        assert_eq!(found(&as_js), none);
        let wildcards = r#""paths": { "agent-bundle": ["./.agent-bundle/types/agent-bundle"],
            "agent-bundle/*": ["./.agent-bundle/types/agent-bundle/*.d.ts"],
            "@agent-bundle/*": ["./.agent-bundle/types/@agent-bundle/*"] }"#;
        assert_eq!(found(wildcards), none);
        assert_eq!(found(r#""types": ["@types/node"]"#), none);
        // A module kind or resolution the bundler's reading refuses; type roots without Node's.
        assert_eq!(found(r#""module": "NodeNext""#), ["module"]);
        assert_eq!(found(r#""module": "ESNext""#), none);
        assert_eq!(found(r#""moduleResolution": "node16""#), ["moduleResolution"]);
        assert_eq!(found(r#""module": "NodeNext", "moduleResolution": "NodeNext""#), none);
        assert_eq!(found(r#""module": "CommonJS", "moduleResolution": "node10""#), none);
        assert_eq!(found(r#""moduleResolution": "classic""#), ["moduleResolution"]);
        assert_eq!(found(r#""module": "node20", "moduleResolution": "node16""#), none);
        assert_eq!(found(r#""module": "nodenext", "moduleResolution": "node10""#), ["module"]);
        assert_eq!(found(r#""typeRoots": ["./types"]"#), ["typeRoots"]);
        assert_eq!(found(r#""typeRoots": ["./types", "./node_modules/@types"]"#), none);
        let as_mjs = completed.replace("agent-bundle/index\"]", "agent-bundle/index.mjs\"]");
        assert_eq!(found(&as_mjs), ["paths"]);
        // Commented out, or outside `compilerOptions`: nothing set; an `extends` commented out
        // extends nothing.
        assert_eq!(found("// \"paths\": { \"@/*\": [\"./src/*\"] },\n /* \"types\": [] */"), none);
        assert_eq!(
            read_tsconfig(
                r#"{ "extends": "./.agent-bundle/tsconfig", "include": ["types"], "paths": {} }"#,
                Path::new(ROOT)
            ),
            Some((true, Vec::new()))
        );
        assert_eq!(
            read_tsconfig("{ // \"extends\": \"./.agent-bundle/tsconfig.json\",\n }", Path::new(ROOT)),
            Some((false, Vec::new()))
        );
        assert_eq!(
            read_tsconfig(r#"{ "extends": ["./base.json", "./.agent-bundle/tsconfig.json"] }"#, Path::new(ROOT)),
            Some((true, Vec::new()))
        );
        assert_eq!(
            read_tsconfig(r#"{ "extends": "./.agent-bundle/../.agent-bundle/tsconfig.json" }"#, Path::new(ROOT)),
            Some((true, Vec::new()))
        );
        // Through the folder above and back, as TypeScript takes it from the project's path.
        assert_eq!(
            read_tsconfig(r#"{ "extends": "../plugin/.agent-bundle/tsconfig.json" }"#, Path::new(ROOT)),
            Some((true, Vec::new()))
        );
        assert_eq!(
            read_tsconfig(r#"{ "extends": "../other/.agent-bundle/tsconfig.json" }"#, Path::new(ROOT)).map(|r| r.0),
            Some(false)
        );
        // Nested past the parser's stack: not read, never an abort.
        let deep = format!("{{ \"a\": {}1{} }}", "[".repeat(200_000), "]".repeat(200_000));
        assert_eq!(read_tsconfig(&deep, Path::new(ROOT)), None);
        // As TypeScript reads it: nothing but comments is `{}`; what JSON does not write
        // (single quotes, bare keys, templates, expressions) does not read.
        for empty in ["", "\n", "// nothing yet\n", "/* */"] {
            assert_eq!(read_tsconfig(empty, Path::new(ROOT)), Some((false, Vec::new())), "{empty:?}");
        }
        for text in [
            "{ 'extends': './.agent-bundle/tsconfig.json' }",
            "{ extends: \"./.agent-bundle/tsconfig.json\" }",
            "{ \"extends\": `./.agent-bundle/tsconfig.json` }",
            "{ \"compilerOptions\": { \"strict\": !0 } }",
            "{ \"a\": [1, , 2] }",
            "({ \"extends\": \"./.agent-bundle/tsconfig.json\" })",
            "{ \"extends\": \"./.agent-bundle/tsconfig.json\" })\n;(0",
            "{ \"extends\": \"./.agent-bundle/tsconfig.json\" \"compilerOptions\": {} }",
        ] {
            assert_eq!(read_tsconfig(text, Path::new(ROOT)), None, "{text}");
        }
        let commented = "{\n  // why\n  \"extends\": \"./.agent-bundle/tsconfig.json\", /* trailing comma: */\n  \"x\": [-1, true, null],\n}\n";
        assert_eq!(read_tsconfig(commented, Path::new(ROOT)), Some((true, Vec::new())));
    }

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
        std::fs::write(dir.path().join("tsconfig.json"), "{ \"extends\": \"./.agent-bundle/tsconfig\" }").unwrap();
        assert_eq!(write(dir.path()).unwrap().tsconfig, ProjectTsconfig::Extends, "the extension is optional");
        std::fs::write(dir.path().join("tsconfig.json"), "{ \"extends\": \".agent-bundle/tsconfig.json\" }").unwrap();
        assert_eq!(write(dir.path()).unwrap().tsconfig, ProjectTsconfig::Other, "a package name to TypeScript");

        // A file an earlier release wrote goes; a tsconfig that is a broken link is named.
        let stale = dir.path().join(".agent-bundle/types/agent-bundle/old.d.ts");
        std::fs::write(&stale, "export {};\n").unwrap();
        assert_eq!(write(dir.path()).unwrap().removed, [".agent-bundle/types/agent-bundle/old.d.ts"]);
        assert!(!stale.exists());
        // With the folders that held only such files.
        let deep = dir.path().join(".agent-bundle/types/old/deeper");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join("x.d.ts"), "export {};\n").unwrap();
        assert_eq!(write(dir.path()).unwrap().removed, [".agent-bundle/types/old/deeper/x.d.ts"]);
        assert!(!dir.path().join(".agent-bundle/types/old").exists());
        let piped = tempfile::tempdir().unwrap();
        let fifo = std::ffi::CString::new(piped.path().join("tsconfig.json").to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let error = write(piped.path()).unwrap_err().to_string();
        assert!(error.ends_with("tsconfig.json: not a regular file (a folder, or a pipe)"), "never waited on: {error}");
        let broken = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(broken.path().join("gone.json"), broken.path().join("tsconfig.json")).unwrap();
        let error = write(broken.path()).unwrap_err().to_string();
        assert!(error.starts_with(&broken.path().join("tsconfig.json").display().to_string()), "{error}");
        assert!(!broken.path().join(STATE_DIR).exists(), "nothing written");

        let linked = tempfile::tempdir().unwrap();
        std::fs::create_dir(linked.path().join(STATE_DIR)).unwrap();
        let inner = linked.path().join(STATE_DIR).join("types");
        std::os::unix::fs::symlink(dir.path(), &inner).unwrap();
        assert!(write(linked.path()).is_err(), "a link inside the state folder is never written through");
    }
}
