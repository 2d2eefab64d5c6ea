//! Wrapper assembly: the runtime module, a handler's module graph and the host spec become
//! one self-contained ES module, `hooks/<name>.<host>.mjs`.
//!
//! The runtime (`src/runtime/hook.mjs`) is real JavaScript, tested by Node, embedded here
//! and linked like any other module under a virtual key.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::renders::UsedComponent;
use super::{
    Assembled, Binding, BundleDiagnostic, BundleErrorKind, LinkSource, ModuleChunk, Renders, Severity, Span, assemble,
};
use crate::diagnostics::{Code, Diagnostic};

/// The virtual key of the hook runtime.
pub const RUNTIME_KEY: &str = "agent-bundle:runtime/hook.mjs";
/// The virtual key of the event-route renderer.
pub const ROUTE_KEY: &str = "agent-bundle:runtime/route.mjs";
/// The virtual key of the shared-runtime client (and protocol).
pub const IPC_KEY: &str = "agent-bundle:runtime/ipc.mjs";
/// The virtual key of the shared runtime, the generated MCP server.
pub const SERVER_KEY: &str = "agent-bundle:runtime/server.mjs";
const JSX_KEY: &str = "agent-bundle:runtime/jsx.mjs";
const AGENT_KEY: &str = "agent-bundle:runtime/agent.mjs";
const JSON_KEY: &str = "agent-bundle:runtime/json.mjs";

/// Every virtual module and its embedded source.
const VIRTUAL_MODULES: [(&str, &str); 7] = [
    (RUNTIME_KEY, include_str!("../runtime/hook.mjs")),
    (ROUTE_KEY, include_str!("../runtime/route.mjs")),
    (JSX_KEY, include_str!("../runtime/jsx.mjs")),
    (AGENT_KEY, include_str!("../runtime/agent.mjs")),
    (IPC_KEY, include_str!("../runtime/ipc.mjs")),
    (SERVER_KEY, include_str!("../runtime/server.mjs")),
    (JSON_KEY, include_str!("../runtime/json.mjs")),
];

/// The embedded source of a virtual module.
pub fn virtual_module(key: &str) -> Option<&'static str> {
    VIRTUAL_MODULES.iter().find(|(name, _)| *name == key).map(|(_, source)| *source)
}

/// Bare specifiers that resolve to virtual modules: the JSX runtime oxc's automatic transform
/// imports (`createElement` from the import source itself, for a `key` after a spread), and
/// the components routes import.
pub fn aliases() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("agent-bundle/jsx-runtime".to_owned(), JSX_KEY.to_owned()),
        ("agent-bundle".to_owned(), JSX_KEY.to_owned()),
        (super::check::AGENT_SPECIFIER.to_owned(), AGENT_KEY.to_owned()),
    ])
}

/// The specifiers that name the tool's module `key` (`` `agent-bundle` or
/// `agent-bundle/jsx-runtime` ``), if any does.
fn named_as(key: &str) -> Option<String> {
    let specifiers: Vec<String> = aliases()
        .into_iter()
        .filter(|(_, module)| module == key)
        .map(|(specifier, _)| format!("`{specifier}`"))
        .collect();
    (!specifiers.is_empty()).then(|| specifiers.join(" or "))
}

impl ModuleChunk {
    /// The chunk of a module with imports into outside directories not listed yet
    /// (`unresolved`): the build lists them and compiles it then, so it is not compiled now.
    pub fn pending(key: &str, unresolved: Vec<String>) -> ModuleChunk {
        let message = format!("{key} imports from outside the project root: {}", unresolved.join(", "));
        ModuleChunk { unresolved, ..ModuleChunk::failed(BundleErrorKind::UnresolvedImport, Span::default(), message) }
    }

    /// The chunk of a module that is not UTF-8 text; `at` is its first invalid byte.
    pub fn not_text(key: &str, at: Option<u32>) -> ModuleChunk {
        let (span, message) = match at {
            Some(at) => (Span::new(at, at + 1), format!("{key} is not valid UTF-8 from here")),
            None => (Span::default(), format!("{key} is not a UTF-8 text file")),
        };
        ModuleChunk::failed(BundleErrorKind::Syntax, span, message)
    }

    /// The chunk of a module the loader could not read, `why` being the system's reason.
    pub fn unreadable(key: &str, why: &crate::loader::Unreadable) -> ModuleChunk {
        let mut chunk = ModuleChunk::failed(BundleErrorKind::Unreadable, Span::default(), why.message(key));
        chunk.diagnostics[0].help = Some(why.help().to_owned());
        chunk
    }

    fn failed(kind: BundleErrorKind, span: Span, message: String) -> ModuleChunk {
        let diagnostics = vec![BundleDiagnostic::error(kind, span, message)];
        ModuleChunk { diagnostics, ..ModuleChunk::default() }
    }
}

/// The modules a wrapper links, in discovery order (breadth first from the roots).
pub struct ModuleGraph<'a> {
    modules: Vec<(String, &'a ModuleChunk)>,
}

impl<'a> ModuleGraph<'a> {
    /// Walks the imports from `roots`, asking `chunk` for each module once.
    pub fn collect(roots: &[&str], mut chunk: impl FnMut(&str) -> &'a ModuleChunk) -> Self {
        let mut seen: BTreeSet<String> = roots.iter().map(|r| (*r).to_owned()).collect();
        let mut queue: VecDeque<String> = roots.iter().map(|r| (*r).to_owned()).collect();
        let mut modules = Vec::new();
        while let Some(key) = queue.pop_front() {
            let compiled = chunk(&key);
            for import in &compiled.imports {
                if seen.insert(import.key.clone()) {
                    queue.push_back(import.key.clone());
                }
            }
            modules.push((key, compiled));
        }
        ModuleGraph { modules }
    }

    /// Every module with its chunk, in link order.
    pub fn chunks(&self) -> impl Iterator<Item = (&str, &'a ModuleChunk)> {
        self.modules.iter().map(|(key, chunk)| (key.as_str(), *chunk))
    }

    pub fn chunk(&self, key: &str) -> Option<&'a ModuleChunk> {
        self.modules.iter().find(|(k, _)| k == key).map(|(_, c)| *c)
    }

    /// What `key` renders through the components it imports (`<Deny>` from `./components`),
    /// following the components they render in turn: each component once, placed at the
    /// first of its tags in `key`.
    pub fn rendered_through_imports(&self, key: &str) -> Vec<RenderedThrough> {
        let chunks = self.by_key();
        let Some(chunk) = chunks.get(key) else { return Vec::new() };
        let mut seen = BTreeSet::new();
        let mut through = Vec::new();
        for used in &chunk.components.uses {
            let UsedComponent::Imported { specifier, name } = &used.component else { continue };
            let Some((module, component)) = imported_component(&chunks, key, specifier, name) else { continue };
            if !seen.insert((module.clone(), component.clone())) {
                continue;
            }
            let renders = component_renders(&chunks, &module, &component, &mut BTreeSet::new());
            if renders != Renders::default() {
                through.push(RenderedThrough { component, module, renders: renders.placed_at(used.span) });
            }
        }
        through
    }

    /// Project files linked in (virtual modules excluded).
    pub fn user_modules(&self) -> Vec<String> {
        let mut keys: Vec<String> =
            self.modules.iter().map(|(k, _)| k.clone()).filter(|k| virtual_module(k).is_none()).collect();
        keys.sort();
        keys
    }

    /// Every module's own problems, then the imports that name no export and the route
    /// components rendered through a re-export (which need the whole graph), all at once: a
    /// module that failed a check still says what it exports.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        let mut diagnostics = self.module_diagnostics();
        diagnostics.extend(self.link_diagnostics());
        diagnostics.extend(self.agent_tag_diagnostics());
        diagnostics
    }

    /// `<Agent.Contxt>` where `Agent` is the route components' re-exported by another module
    /// (`export { Agent } from '@agent-bundle/runtime'` in `./ui`): AB4838, as where it is
    /// imported directly; every render would fail.
    fn agent_tag_diagnostics(&self) -> Vec<Diagnostic> {
        let chunks = self.by_key();
        let agent = Binding { source: LinkSource::Module(AGENT_KEY.to_owned()), name: "Agent".to_owned() };
        let mut diagnostics = Vec::new();
        for (key, chunk) in &self.modules {
            for tag in &chunk.links.member_tags {
                let resolved = resolve_export(&chunks, &tag.binding, &mut BTreeSet::new());
                if !matches!(resolved, Export::Found(found) if found == agent) {
                    continue;
                }
                if let Some((message, help)) = super::check::agent_component_problem(&tag.local, &tag.member) {
                    let error = Diagnostic::error(Code::MissingExport, message).in_file(key.clone()).at(tag.span);
                    diagnostics.push(error.with_help(help));
                }
            }
        }
        diagnostics
    }

    /// Imports of a name their module does not export, or exports ambiguously (AB4838): Node
    /// refuses to link such a module graph, where a bundle would read `undefined`.
    fn link_diagnostics(&self) -> Vec<Diagnostic> {
        let chunks = self.by_key();
        let mut diagnostics = Vec::new();
        for (key, chunk) in &self.modules {
            for (binding, span) in &chunk.links.imported {
                let source = match &binding.source {
                    LinkSource::Module(source) | LinkSource::Builtin(source) => source,
                };
                let (message, help) = match resolve_export(&chunks, binding, &mut BTreeSet::new()) {
                    Export::Missing if matches!(binding.source, LinkSource::Builtin(_)) => (
                        format!("{source} has no export named `{}`", binding.name),
                        builtin_export_help(source, &binding.name),
                    ),
                    Export::Missing | Export::Circular => {
                        // A module of this tool's is named as routes import it.
                        let named = named_as(source);
                        let help = match &named {
                            Some(_) if binding.name == "Agent" && source != AGENT_KEY => format!(
                                "`Agent` comes from `{0}`: `import {{ Agent }} from \"{0}\"`",
                                super::check::AGENT_SPECIFIER
                            ),
                            Some(_) => {
                                let offered = chunks.get(source.as_str()).map(|c| c.links.exports.keys());
                                let names: Vec<String> =
                                    offered.into_iter().flatten().map(|n| format!("`{n}`")).collect();
                                format!("import one of the names it exports: {}", names.join(", "))
                            }
                            None if super::transpile::is_json_module(source) => format!(
                                "a JSON module exports its data as `default` only: import that (`import data from …`) \
                                 and read `data.{}`",
                                binding.name
                            ),
                            None => {
                                let exported = chunks.get(source.as_str()).map(|c| c.links.exports.keys());
                                crate::diagnostics::suggesting(
                                    &binding.name,
                                    exported.into_iter().flatten().map(String::as_str),
                                    &format!("export `{}` from {source}, or import a name it exports", binding.name),
                                )
                            }
                        };
                        let module = named.as_deref().unwrap_or(source);
                        (format!("{module} has no export named `{}`", binding.name), help)
                    }
                    Export::Ambiguous => (
                        format!(
                            "{source} exports `{}` ambiguously: two `export *` give it different bindings",
                            binding.name
                        ),
                        format!(
                            "re-export the one you mean by name in {source}: `export {{ {} }} from …`",
                            binding.name
                        ),
                    ),
                    // A re-export of a type (never elided: the transpiler cannot tell) is fine;
                    // an import of one that survived is used as a value (one used only as a
                    // type is elided), which gets `undefined`.
                    Export::TypeOnly if chunk.links.exports.values().any(|origin| origin.as_ref() == Some(binding)) => {
                        continue;
                    }
                    Export::TypeOnly => (
                        format!("`{}` is a type in {source}, which this module uses as a value", binding.name),
                        "a type has no value at run time: use it in types only (`import type`), or import a value"
                            .to_owned(),
                    ),
                    Export::Found(_) | Export::Unknown => continue,
                };
                diagnostics.push(
                    Diagnostic::error(Code::MissingExport, message).in_file(key.clone()).at(*span).with_help(help),
                );
            }
        }
        diagnostics
    }

    fn by_key(&self) -> BTreeMap<&str, &'a ModuleChunk> {
        self.chunks().collect()
    }

    /// For each module, the names its namespace leaves out: those two of its `export *` give
    /// different bindings, as ESM leaves them out (and a named import of one is AB4838), and
    /// the types it re-exports without `type`, which TypeScript allows and the transpiled
    /// module has no value for (esbuild leaves them out too).
    fn hidden_names(&self) -> Vec<(&str, Vec<String>)> {
        let chunks = self.by_key();
        let resolved = |key: &str, name: &String| {
            let binding = Binding { source: LinkSource::Module(key.to_owned()), name: name.clone() };
            resolve_export(&chunks, &binding, &mut BTreeSet::new())
        };
        let hidden_in = |key: &str, chunk: &ModuleChunk| -> Vec<String> {
            // (A name one module alone gives cannot be ambiguous: only the others are resolved.)
            let ambiguous = star_names(&chunks, key)
                .into_iter()
                .filter(|(name, givers)| *givers > 1 && !chunk.links.exports.contains_key(name))
                .map(|(name, _)| name)
                .filter(|name| matches!(resolved(key, name), Export::Ambiguous));
            let types = chunk
                .links
                .exports
                .iter()
                .filter(|(_, origin)| origin.is_some())
                .map(|(name, _)| name.clone())
                .filter(|name| matches!(resolved(key, name), Export::TypeOnly));
            let mut hidden: Vec<String> = ambiguous.chain(types).collect();
            hidden.sort();
            hidden
        };
        self.chunks().map(|(key, chunk)| (key, hidden_in(key, chunk))).filter(|(_, names)| !names.is_empty()).collect()
    }

    fn module_diagnostics(&self) -> Vec<Diagnostic> {
        let mut diagnostics = Vec::new();
        for (key, chunk) in &self.modules {
            for problem in &chunk.diagnostics {
                let code = match problem.kind {
                    BundleErrorKind::Syntax => Code::ModuleSyntax,
                    BundleErrorKind::Unreadable => Code::UnreadableInput,
                    BundleErrorKind::MissingExport => Code::MissingExport,
                    BundleErrorKind::UndefinedComponent => Code::UndefinedComponent,
                    BundleErrorKind::ReadsStdin => Code::ReadsStdin,
                    BundleErrorKind::BareImport
                    | BundleErrorKind::UnresolvedImport
                    | BundleErrorKind::DynamicImport
                    | BundleErrorKind::CommonJs => Code::UnsupportedImport,
                    BundleErrorKind::TopLevelAwait
                    | BundleErrorKind::ImportMeta
                    | BundleErrorKind::ReservedName
                    | BundleErrorKind::DirectEval => Code::BundledModuleFeature,
                };
                let mut diagnostic = match problem.severity {
                    Severity::Error => Diagnostic::error(code, problem.message.clone()),
                    Severity::Warning => Diagnostic::warning(code, problem.message.clone()),
                };
                diagnostic = diagnostic.in_file(key.clone()).at(problem.span).with_related(problem.related.clone());
                if let Some(help) = &problem.help {
                    diagnostic = diagnostic.with_help(help.clone());
                }
                diagnostics.push(diagnostic);
            }
        }
        diagnostics
    }
}

/// A component of another module's that a module renders, and what it renders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderedThrough {
    /// Its name where it is declared (`default` for an anonymous default export).
    pub component: String,
    /// The module that declares it.
    pub module: String,
    pub renders: Renders,
}

/// The module and local name of the component `name` that `from` imports from `specifier`,
/// through re-exports.
fn imported_component(
    chunks: &BTreeMap<&str, &ModuleChunk>,
    from: &str,
    specifier: &str,
    name: &str,
) -> Option<(String, String)> {
    let import = chunks.get(from)?.imports.iter().find(|import| import.specifier == specifier)?;
    let binding = Binding { source: LinkSource::Module(import.key.clone()), name: name.to_owned() };
    let Export::Found(Binding { source: LinkSource::Module(module), name }) =
        resolve_export(chunks, &binding, &mut BTreeSet::new())
    else {
        return None;
    };
    let component = chunks.get(module.as_str())?.components.exported.get(&name)?.clone();
    Some((module, component))
}

/// What the component `name` of `module` renders, with the components it renders (`visiting`
/// holds those on the way: a component rendering itself adds nothing).
fn component_renders(
    chunks: &BTreeMap<&str, &ModuleChunk>,
    module: &str,
    name: &str,
    visiting: &mut BTreeSet<(String, String)>,
) -> Renders {
    let declared = chunks.get(module).and_then(|chunk| chunk.components.declared.get(name));
    let Some(component) = declared.filter(|_| visiting.insert((module.to_owned(), name.to_owned()))) else {
        return Renders::default();
    };
    let mut renders = component.renders;
    for used in &component.uses {
        let target = match &used.component {
            UsedComponent::Local(local) => Some((module.to_owned(), local.clone())),
            UsedComponent::Imported { specifier, name } => imported_component(chunks, module, specifier, name),
        };
        if let Some((module, name)) = target {
            renders.add(&component_renders(chunks, &module, &name, visiting));
        }
    }
    renders
}

/// What an export name resolves to (ES `ResolveExport`).
enum Export {
    /// The binding it names, in the module that declares it (or a namespace, `*`).
    Found(Binding),
    Missing,
    /// Re-exports that lead back to themselves (which ESM refuses as it would a missing name).
    Circular,
    /// A type (`export interface`), which the transpiled module no longer has: imported or
    /// re-exported without `type`, as TypeScript allows, it is there only for types.
    TypeOnly,
    /// Two `export *` give it different bindings.
    Ambiguous,
    /// It may come from a module the graph does not hold or could not link (one that does not
    /// parse), or
    /// from a re-export that is itself missing (reported where it is re-exported).
    Unknown,
}

/// Resolves `binding` through re-exports and `export *`, as ESM links it; `visiting` holds
/// the names on the way (a cycle resolves to nothing).
fn resolve_export(
    chunks: &BTreeMap<&str, &ModuleChunk>,
    binding: &Binding,
    visiting: &mut BTreeSet<Binding>,
) -> Export {
    if binding.name == "*" {
        return Export::Found(binding.clone());
    }
    let key = match &binding.source {
        LinkSource::Builtin(name) => {
            return match super::builtins::exports(name, &binding.name) {
                Some(true) => Export::Found(binding.clone()),
                Some(false) => Export::Missing,
                None => Export::Unknown,
            };
        }
        LinkSource::Module(key) => key,
    };
    let Some(chunk) = chunks.get(key.as_str()).filter(|chunk| chunk.linked) else {
        return Export::Unknown;
    };
    if !visiting.insert(binding.clone()) {
        return Export::Circular;
    }
    match chunk.links.exports.get(&binding.name) {
        Some(None) => return Export::Found(binding.clone()),
        // A re-export of a name its own source lacks is reported where it is re-exported.
        Some(Some(origin)) => {
            return match resolve_export(chunks, origin, visiting) {
                Export::Missing => Export::Unknown,
                resolved => resolved,
            };
        }
        None if chunk.links.type_exports.contains(&binding.name) => return Export::TypeOnly,
        None if binding.name == "default" => return Export::Missing, // `export *` never gives a default
        None => {}
    }
    let (mut found, mut unknown, mut type_only) = (None, false, false);
    for star in &chunk.links.stars {
        let through = Binding { source: star.clone(), name: binding.name.clone() };
        match resolve_export(chunks, &through, visiting) {
            Export::Found(resolved) if found.as_ref().is_some_and(|f| *f != resolved) => return Export::Ambiguous,
            Export::Found(resolved) => found = Some(resolved),
            Export::Ambiguous => return Export::Ambiguous,
            Export::Unknown => unknown = true,
            Export::TypeOnly => type_only = true,
            Export::Missing | Export::Circular => {}
        }
    }
    match (found, unknown, type_only) {
        (Some(resolved), ..) => Export::Found(resolved),
        (None, true, _) => Export::Unknown,
        (None, false, true) => Export::TypeOnly,
        (None, false, false) => Export::Missing,
    }
}

/// The names `export *` reaches in the module `key` (its stars' exports and theirs, but
/// never `default`), each with how many of the modules (or builtins) reached give it. Each
/// module is visited once, whatever the graph's shape (a long chain of `export *` too).
fn star_names(chunks: &BTreeMap<&str, &ModuleChunk>, key: &str) -> BTreeMap<String, usize> {
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    let mut count = |name: &str| *names.entry(name.to_owned()).or_default() += 1;
    let mut seen = BTreeSet::new();
    let stars_of = |key: &str| chunks.get(key).map(|chunk| chunk.links.stars.as_slice()).unwrap_or_default();
    let mut waiting: Vec<&LinkSource> = stars_of(key).iter().rev().collect();
    while let Some(star) = waiting.pop() {
        let source = match star {
            LinkSource::Builtin(name) => {
                super::builtins::export_names(name).iter().for_each(|name| count(name));
                continue;
            }
            LinkSource::Module(source) => source,
        };
        if !seen.insert(source.as_str()) {
            continue;
        }
        if let Some(chunk) = chunks.get(source.as_str()) {
            chunk.links.exports.keys().filter(|name| *name != "default").for_each(|name| count(name));
        }
        waiting.extend(stars_of(source).iter().rev());
    }
    names
}

/// Why a builtin lacks `name`: the names are those of the Node 20 the table was taken from,
/// and a newer Node's can still be read where it exists.
fn builtin_export_help(builtin: &str, name: &str) -> String {
    let checked = format!(
        "the build checks a builtin's names against Node {}'s (the wrappers run on Node 20 and newer)",
        super::builtins::node_version()
    );
    let names = || super::builtins::export_names(builtin).iter().copied();
    // A typo of one it has is said as that; a name it lacks may be a newer Node's.
    if crate::diagnostics::has_suggestion(name, names()) {
        return crate::diagnostics::suggesting(name, names(), &checked);
    }
    format!(
        "{checked}; one only a newer Node has is read from the namespace: `import * as ns from \"{builtin}\"`, \
         then `ns.{name}` (`undefined` on an older Node)"
    )
}

/// The host-independent part of a wrapper: the runtime and the handler's modules, linked.
/// The names a module's namespace leaves out (`ModuleGraph::hidden_names`) are the record's
/// `hidden` list, which the runtime reads.
pub fn handler_body(header: &str, graph: &ModuleGraph<'_>) -> Assembled {
    let mut epilogue = String::new();
    for (key, names) in graph.hidden_names() {
        let (key, names) = (serde_json::Value::from(key), serde_json::Value::from(names));
        epilogue.push_str(&format!("__ab_modules.get({key}).hidden = {names};\n"));
    }
    let chunks: Vec<(&str, &ModuleChunk)> = graph.modules.iter().map(|(key, c)| (key.as_str(), *c)).collect();
    assemble(header, &chunks, &epilogue)
}

/// The host-specific end of a route's wrapper: the runtime renders the route's component.
pub fn route_epilogue(
    hook_name: &str,
    host: &str,
    spec: &str,
    route_module: &str,
    family: &str,
    timeout_ms: u32,
) -> String {
    let runtime = serde_json::Value::from(RUNTIME_KEY);
    let renderer = serde_json::Value::from(ROUTE_KEY);
    let module = serde_json::Value::from(route_module);
    let route = serde_json::json!({ "family": family, "timeoutMs": timeout_ms });
    format!(
        "// Hook {hook_name} for {host}.\nawait __ab_require({runtime}).runHook({spec}, () => {{ \
         const component = __ab_require({renderer}).routeComponent(__ab_require({module}).default, {module}); \
         return (event, context) => __ab_require({renderer}).renderRoute(component, event, context, {route}); }});\n"
    )
}

/// How a shared route's wrapper reaches the runtime.
pub struct SharedCall<'a> {
    /// The runtime's build (`event_runtime`'s epoch).
    pub epoch: &'a str,
    pub family: &'a str,
    pub timeout_ms: u32,
    /// How long to wait for a runtime the host may still be starting (`McpSupport`).
    pub startup_wait_ms: Option<u32>,
}

/// The host-specific end of a shared route's wrapper: the envelope goes to the shared runtime
/// of `call.epoch`; with a fallback, the bundled route renders when no runtime is live. The
/// connection is opened first, so it is made while stdin is read and validated.
pub fn shared_route_epilogue(
    hook_name: &str,
    host: &str,
    spec: &str,
    call: &SharedCall<'_>,
    fallback_module: Option<&str>,
) -> String {
    let runtime = serde_json::Value::from(RUNTIME_KEY);
    let ipc = serde_json::Value::from(IPC_KEY);
    let SharedCall { epoch, family, timeout_ms, startup_wait_ms } = *call;
    let mut shared = serde_json::json!({
        "hook": hook_name, "epoch": epoch, "target": host, "family": family, "timeoutMs": timeout_ms,
    });
    if let Some(wait) = startup_wait_ms {
        shared["startupWaitMs"] = wait.into();
    }
    let standalone = match fallback_module {
        Some(module) => {
            let renderer = serde_json::Value::from(ROUTE_KEY);
            let module = serde_json::Value::from(module);
            let family = serde_json::Value::from(family);
            format!(
                "(leftMs) => __ab_require({renderer}).renderRoute(__ab_require({module}).default, event, context, \
                 {{ family: {family}, timeoutMs: {timeout_ms}, leftMs, source: {module} }})"
            )
        }
        None => "null".to_owned(),
    };
    format!(
        "// Hook {hook_name} for {host}, rendered by the shared runtime.
const __ab_shared = {shared};
const __ab_connection = __ab_require({ipc}).connectRuntime(__ab_shared);
await __ab_require({runtime}).runHook({spec}, () => (event, context) => \
__ab_require({ipc}).forwardRoute(__ab_shared, context, {standalone}, __ab_connection));
"
    )
}

/// One route the shared runtime serves: its family, budget, module and the spec of each host
/// that forwards it.
pub struct RuntimeRoute<'a> {
    pub family: &'a str,
    pub timeout_ms: u32,
    pub module: &'a str,
    pub specs: serde_json::Map<String, serde_json::Value>,
}

/// The end of the shared runtime's bundle: the route table, then `serve`.
pub fn runtime_epilogue(plugin: &str, version: &str, epoch: &str, routes: &[RuntimeRoute<'_>]) -> String {
    let server = serde_json::Value::from(SERVER_KEY);
    let mut text = format!(
        "// The shared event runtime of {plugin}.
await __ab_require({server}).serve({{ plugin: {}, version: {}, epoch: {}, routes: [
",
        serde_json::Value::from(plugin),
        serde_json::Value::from(version),
        serde_json::Value::from(epoch),
    );
    for route in routes {
        text.push_str(&format!(
            "  {{ family: {}, timeoutMs: {}, load: () => __ab_require({}), specs: {} }},
",
            serde_json::Value::from(route.family),
            route.timeout_ms,
            serde_json::Value::from(route.module),
            serde_json::Value::Object(route.specs.clone()),
        ));
    }
    text.push_str(
        "] }, import.meta.url);
",
    );
    text
}

/// The host-specific end of a wrapper: the call into the runtime with the host's spec.
pub fn hook_epilogue(hook_name: &str, host: &str, spec: &str, handler: &str) -> String {
    let runtime = serde_json::Value::from(RUNTIME_KEY);
    let handler = serde_json::Value::from(handler);
    format!(
        "// Hook {hook_name} for {host}.\nawait __ab_require({runtime}).runHook({spec}, () => __ab_require({handler}).default, \
         {handler});\n"
    )
}
