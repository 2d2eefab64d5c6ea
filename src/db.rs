//! The query graph: salsa inputs at the floor, every stage a tracked function above them.
//!
//! ```text
//! inputs:  SourceFile { path, bytes, executable }     Project { files, outside_dirs, settings }
//!   parse_config(project)        → ConfigReturn (value with spans, diagnostics)
//!   config(project)              → Config (no spans: backdates on reformatting)
//!   package_version(project)     → the version of package.json, if any
//!   routes(project)              → RoutesReturn (the event routes under src/events/)
//!   normalize(project)           → NormalizeReturn
//!   model(project)               → Model (backdates when only diagnostics change)
//!   host_plan(project, target)   → HostPlan
//!   folder(project, key)         → Folder (the files directly in one folder)
//!   transpiled(file)             → Transpiled (one file's transpile, whatever its imports resolve to)
//!   module_chunk(project, key)   → ModuleChunk (transpiled + linked module)
//!   linked_handler(project, link) → LinkedHandler (a handler linked with the runtime, host-free)
//!   wrapper(project, hook, host) → WrapperReturn (one self-contained .mjs)
//!   event_runtime(project)       → RuntimeReturn (the shared routes' MCP server and its epoch)
//! ```
//!
//! Architecture invariant: no query touches the file system. `loader` reads the project
//! into inputs; a query sees a file only through `Project::files`, so the graph knows every
//! dependency (a missing file is a dependency on the file map).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::bundle::{self, ModuleChunk};
use crate::cache::{Cache, Hash};
use crate::config::{CONFIG_FILE_NAMES, Config, ConfigReturn};
use crate::diagnostics::{Code, Diagnostic};
use crate::hosts::{self, HostPlan, RouteForm};
use crate::loader::{FileBytes, Unreadable};
use crate::model::{Handler, Model, NormalizeReturn, PackageVersion, ProjectView, Target, Unversioned};
use crate::routes::RoutesReturn;
use crate::source::Span;

/// One file of the project, by project-relative POSIX path.
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub path: String,
    #[returns(ref)]
    pub bytes: FileBytes,
    #[returns(copy)]
    pub executable: bool,
}

/// The project being built.
#[salsa::input(debug)]
pub struct Project {
    /// Every file under the project root the loader saw, and the module files of the
    /// folders above it that imports read from (`../shared/log.ts`), by project-relative path.
    #[returns(ref)]
    pub files: Arc<BTreeMap<String, SourceFile>>,
    /// The directories outside the root that the loader listed for imports (found or not),
    /// by key (`../shared`): an import that could lie in another one is `Unlisted`.
    #[returns(ref)]
    pub outside_dirs: Arc<BTreeSet<String>>,
    #[returns(ref)]
    pub settings: Settings,
}

/// Build settings that change what is built (not where it is written).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Settings {
    /// Project-relative config path given with `--config`.
    pub config_file: Option<String>,
    /// `--target`, replacing the config's `targets`.
    pub target_override: Option<Vec<Target>>,
}

#[salsa::interned(debug)]
pub struct TargetKey<'db> {
    #[returns(copy)]
    pub target: Target,
}

#[salsa::interned(debug)]
pub struct ModuleKey<'db> {
    #[returns(ref)]
    pub key: String,
}

/// A folder of the project, by project-relative key (`""` is the root, `../shared` one
/// above it).
#[salsa::interned(debug)]
pub struct FolderKey<'db> {
    #[returns(ref)]
    pub key: String,
}

/// A module to link into a wrapper, and in which form.
#[salsa::interned(debug)]
pub struct LinkKey<'db> {
    #[returns(ref)]
    pub module: String,
    #[returns(copy)]
    pub form: LinkForm,
}

/// What a wrapper links besides the hook runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinkForm {
    /// A config hook: the handler module.
    Hook,
    /// A standalone route: the renderer and the route module.
    Route,
    /// A shared route: the runtime client only; with `fallback`, also the standalone form.
    Shared { fallback: bool },
}

impl LinkForm {
    fn of(planned: &hosts::PlannedHook) -> LinkForm {
        match planned.route {
            None => LinkForm::Hook,
            Some(RouteForm::Standalone) => LinkForm::Route,
            Some(RouteForm::Shared { fallback }) => LinkForm::Shared { fallback },
        }
    }

    /// The module graph's roots (a shared route without fallback links no route module).
    fn roots(self, module: &str) -> Vec<&str> {
        match self {
            LinkForm::Hook => vec![bundle::RUNTIME_KEY, module],
            LinkForm::Route => vec![bundle::RUNTIME_KEY, bundle::ROUTE_KEY, module],
            LinkForm::Shared { fallback: true } => {
                vec![bundle::RUNTIME_KEY, bundle::IPC_KEY, bundle::ROUTE_KEY, module]
            }
            LinkForm::Shared { fallback: false } => vec![bundle::RUNTIME_KEY, bundle::IPC_KEY],
        }
    }
}

#[salsa::interned(debug)]
pub struct WrapperKey<'db> {
    #[returns(ref)]
    pub hook_name: String,
    #[returns(copy)]
    pub target: Target,
}

/// What every query can reach besides its inputs: the content-addressed cache, which is a
/// transparent memo (a hit returns exactly what running the stage would return, because the
/// action key covers every input of the stage), and the work counters.
#[salsa::db]
pub trait Db: salsa::Database {
    fn cache(&self) -> &Cache;
    fn counters(&self) -> &WorkCounters;
}

/// How much real work (as opposed to cache or memo hits) a build did.
#[derive(Debug, Default)]
pub struct WorkCounters {
    /// Modules transpiled and linked by oxc.
    pub transpiled: AtomicU64,
    /// Wrappers assembled.
    pub bundled: AtomicU64,
}

/// The salsa database. Cloning it is cheap; each rayon task gets its own clone.
#[salsa::db]
#[derive(Clone)]
pub struct Database {
    storage: salsa::Storage<Self>,
    cache: Arc<Cache>,
    counters: Arc<WorkCounters>,
}

impl Database {
    pub fn new() -> Self {
        Self::with_events(None)
    }

    /// A database that records the name of every query it executes (for incremental tests
    /// and the watch status line).
    pub fn with_query_log(log: Arc<Mutex<Vec<String>>>) -> Self {
        Self::with_events(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind {
                log.lock().expect("query log lock").push(format!("{database_key:?}"));
            }
        })))
    }

    fn with_events(callback: Option<Box<dyn Fn(salsa::Event) + Send + Sync + 'static>>) -> Self {
        Database {
            storage: salsa::Storage::new(callback),
            cache: Arc::new(Cache::disabled()),
            counters: Arc::default(),
        }
    }

    /// A database whose stages read and fill `cache`.
    pub fn with_cache(mut self, cache: Arc<Cache>) -> Self {
        self.cache = cache;
        self
    }

    /// Transpiles and wrapper assemblies done so far (cache and memo hits excluded).
    pub fn work(&self) -> (u64, u64) {
        (self.counters.transpiled.load(Ordering::Relaxed), self.counters.bundled.load(Ordering::Relaxed))
    }
}

impl Default for Database {
    fn default() -> Self {
        Self::new()
    }
}

#[salsa::db]
impl salsa::Database for Database {}

#[salsa::db]
impl Db for Database {
    fn cache(&self) -> &Cache {
        &self.cache
    }

    fn counters(&self) -> &WorkCounters {
        &self.counters
    }
}

/// The error for a file the build needs that the loader could not read.
pub fn unreadable(path: &str, why: &Unreadable) -> Diagnostic {
    Diagnostic::error(Code::UnreadableInput, why.message(path)).in_file(path.to_owned()).with_help(why.help())
}

/// The config file of the project, if there is one.
pub fn config_file(db: &dyn Db, project: Project) -> Option<SourceFile> {
    let files = project.files(db);
    match &project.settings(db).config_file {
        Some(path) => files.get(path).copied(),
        None => CONFIG_FILE_NAMES.iter().find_map(|name| files.get(*name).copied()),
    }
}

/// The project-relative name diagnostics use for the config.
pub fn config_file_name(db: &dyn Db, project: Project) -> String {
    config_file(db, project).map_or_else(
        || project.settings(db).config_file.clone().unwrap_or_else(|| CONFIG_FILE_NAMES[0].to_owned()),
        |file| file.path(db).clone(),
    )
}

/// AB4001: no config file `config_file` (`--config`), or none of the usual names, in the
/// project (at `root`, when it is known).
pub fn config_not_found(config_file: Option<&str>, root: Option<&Path>) -> Diagnostic {
    match config_file {
        Some(path) => Diagnostic::error(Code::ConfigNotFound, format!("no config `{path}` in the project"))
            .with_help("--config names a regular file inside the project root (a symbolic link is never read)"),
        None => {
            let message = root.map_or_else(
                || "no agent-bundle config found".to_owned(),
                |root| format!("no agent-bundle config found in {}", root.display()),
            );
            Diagnostic::error(Code::ConfigNotFound, message).with_help(format!(
                "create one of {} at the project root (or pass --root / --config; a symbolic link is never read)",
                CONFIG_FILE_NAMES.join(", ")
            ))
        }
    }
}

/// The blake3 of a file's bytes (`None`: it could not be read), hashed once per content: the
/// manifest names every payload file and every input by it, and a watch session's builds
/// would otherwise hash a large payload again on every edit.
#[salsa::tracked(returns(copy))]
pub fn content_hash(db: &dyn Db, file: SourceFile) -> Option<Hash> {
    file.bytes(db).as_deref().ok().map(Hash::of)
}

#[salsa::tracked(returns(ref))]
pub fn parse_config(db: &dyn Db, project: Project) -> ConfigReturn {
    let Some(file) = config_file(db, project) else {
        let diagnostic = config_not_found(project.settings(db).config_file.as_deref(), None);
        return ConfigReturn { config: None, value: None, diagnostics: vec![diagnostic] };
    };
    let name = file.path(db);
    let bytes = match file.bytes(db) {
        Ok(bytes) => bytes,
        Err(why) => return ConfigReturn { config: None, value: None, diagnostics: vec![unreadable(name, why)] },
    };
    let mut parsed = match std::str::from_utf8(bytes) {
        Ok(text) => crate::config::parse(name, text),
        Err(error) => {
            let at = u32::try_from(error.valid_up_to()).unwrap_or(u32::MAX);
            let diagnostic = Diagnostic::error(Code::ConfigSyntax, "the config file is not valid UTF-8 from here")
                .in_file(name.clone())
                .at(crate::source::Span::new(at, at.saturating_add(1)));
            ConfigReturn { config: None, value: None, diagnostics: vec![diagnostic] }
        }
    };
    if project.settings(db).config_file.is_none() {
        let files = project.files(db);
        for other in CONFIG_FILE_NAMES.iter().filter(|other| *other != name && files.contains_key(**other)) {
            parsed.diagnostics.push(
                Diagnostic::warning(Code::ShadowedConfig, format!("`{other}` is ignored: `{name}` is the config"))
                    .in_file((*other).to_owned())
                    .with_help("keep one config per project (or pick one with --config)"),
            );
        }
    }
    parsed
}

#[salsa::tracked(returns(ref))]
pub fn config(db: &dyn Db, project: Project) -> Option<Config> {
    parse_config(db, project).config.clone()
}

/// The `version` of the project's `package.json`: none without the file or the field, an
/// error when the file does not parse (where, when it does not), is no object, or the field
/// is no string.
#[salsa::tracked(returns(ref))]
pub fn package_version(db: &dyn Db, project: Project) -> Result<Option<PackageVersion>, Unversioned> {
    let Some(file) = project.files(db).get("package.json") else { return Ok(None) };
    // (One it cannot read is an error where the version is needed: see `normalize`.)
    let Ok(whole) = file.bytes(db) else { return Ok(None) };
    // (npm reads one that starts with a byte order mark; serde_json does not.)
    let bytes = whole.strip_prefix(crate::source::BYTE_ORDER_MARK.as_bytes()).unwrap_or(whole);
    let json: serde_json::Value = serde_json::from_slice(bytes).map_err(|error| {
        let (at, what) = crate::source::json_error_at(bytes, &error);
        let at = (whole.len() - bytes.len()) as u32 + at;
        Unversioned { why: format!("is not valid JSON ({what})"), at: Some(Span::new(at, at)) }
    })?;
    if !json.is_object() {
        let why = "is no JSON object (npm reads its fields from one)".to_owned();
        return Err(Unversioned { why, at: Some(Span::new(0, 0)) });
    }
    let Some(value) = json.get("version") else { return Ok(None) };
    let shift = (whole.len() - bytes.len()) as u32;
    let at = crate::source::json_member_at(bytes, "version").map(|at| Span::new(at.start + shift, at.end + shift));
    match value {
        serde_json::Value::String(version) => Ok(Some(PackageVersion { version: version.clone(), at })),
        other => Err(Unversioned { why: format!("has a `version` that is no string ({other})"), at }),
    }
}

struct FilesView<'a> {
    files: &'a BTreeMap<String, SourceFile>,
    config_file: String,
}

impl ProjectView for FilesView<'_> {
    fn config_file(&self) -> &str {
        &self.config_file
    }

    fn is_file(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    fn has_files_under(&self, path: &str) -> bool {
        let prefix = format!("{path}/");
        self.files.range(prefix.clone()..).next().is_some_and(|(key, _)| key.starts_with(&prefix))
    }

    fn native_event_help(&self, name: &str) -> Option<String> {
        hosts::native_event_help(name)
    }
}

/// Event routes under `src/events/` and their configs.
#[salsa::tracked(returns(ref))]
pub fn routes(db: &dyn Db, project: Project) -> RoutesReturn {
    let files = project.files(db);
    let in_events = files
        .range(crate::routes::EVENTS_DIR.to_owned()..)
        .take_while(|(path, _)| path.starts_with(crate::routes::EVENTS_DIR));
    crate::routes::discover(in_events.map(|(path, _)| path.as_str()), |path| {
        let not_text = || Diagnostic::error(Code::ModuleSyntax, format!("`{path}` is not UTF-8 text")).in_file(path);
        match files.get(path).map(|file| file.bytes(db)) {
            Some(Ok(bytes)) => std::str::from_utf8(bytes).map_err(|_| not_text()),
            Some(Err(why)) => Err(unreadable(path, why)),
            None => Err(not_text()),
        }
    })
}

#[salsa::tracked(returns(ref))]
pub fn normalize(db: &dyn Db, project: Project) -> NormalizeReturn {
    let Some(config) = config(db, project) else {
        return NormalizeReturn { model: None, diagnostics: Vec::new(), absent_handlers: Vec::new() };
    };
    let view = FilesView { files: project.files(db), config_file: config_file_name(db, project) };
    let settings = project.settings(db);
    let mut normalized = crate::model::normalize(
        config,
        &routes(db, project).routes,
        settings.target_override.as_deref(),
        package_version(db, project).as_ref().map(Option::as_ref),
        &view,
    );
    let package = project.files(db).get("package.json").map(|file| file.bytes(db));
    if config.plugin.version.is_none()
        && let Some(Err(why)) = package
    {
        // The version it holds is the plugin's: building without it would publish another.
        normalized.diagnostics.push(unreadable("package.json", why));
    }
    // A module named like a route in a slip of `src/events/`, unless a hook runs it.
    let hooks = normalized.model.iter().flat_map(|model| &model.hooks);
    let handlers: BTreeSet<&str> = hooks.map(|hook| hook.handler.path()).collect();
    let files = project.files(db).keys().map(String::as_str).filter(|path| !handlers.contains(path));
    let stray = crate::routes::stray_routes(files);
    normalized.diagnostics.extend(stray);
    normalized
}

#[salsa::tracked(returns(ref))]
pub fn model(db: &dyn Db, project: Project) -> Option<Model> {
    normalize(db, project).model.clone()
}

#[salsa::tracked(returns(ref))]
pub fn host_plan<'db>(db: &'db dyn Db, project: Project, target: TargetKey<'db>) -> HostPlan {
    let target = target.target(db);
    let model = model(db, project).as_ref().expect("host_plan runs only on a model");
    hosts::plan::plan(hosts::table(target), model)
}

/// What resolving an import in one folder reads: the files directly in it, by name, and
/// whether it is an outside folder the loader listed. Modules depend on the folders their
/// imports probe, not on every file: a file added elsewhere (or a round listing a folder
/// above the root) re-runs only the modules that look there.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Folder {
    pub files: BTreeMap<String, SourceFile>,
    pub listed_outside: bool,
}

#[salsa::tracked(returns(ref))]
pub fn folder<'db>(db: &'db dyn Db, project: Project, key: FolderKey<'db>) -> Folder {
    let key = key.key(db);
    let prefix = if key.is_empty() { String::new() } else { format!("{key}/") };
    let files = project.files(db).range(prefix.clone()..).take_while(|(path, _)| path.starts_with(&prefix));
    let direct = files.map(|(path, file)| (&path[prefix.len()..], *file)).filter(|(name, _)| !name.contains('/'));
    Folder {
        files: direct.map(|(name, file)| (name.to_owned(), file)).collect(),
        listed_outside: project.outside_dirs(db).contains(key),
    }
}

/// The folder of a project-relative path, and the name in it.
fn split_path(path: &str) -> (&str, &str) {
    path.rsplit_once('/').unwrap_or(("", path))
}

#[salsa::tracked(returns(ref))]
pub fn module_chunk<'db>(db: &'db dyn Db, project: Project, key: ModuleKey<'db>) -> ModuleChunk {
    let key = key.key(db);
    let in_folder = |dir: &str| folder(db, project, FolderKey::new(db, dir.to_owned()));
    let file_at = |path: &str| {
        let (dir, name) = split_path(path);
        in_folder(dir).files.get(name).copied()
    };
    let virtual_text = bundle::virtual_module(key);
    let file = if virtual_text.is_some() { None } else { file_at(key) };
    let source: std::borrow::Cow<'_, str> = match (virtual_text, file) {
        (Some(text), _) => text.into(),
        (None, Some(file)) => match file.bytes(db).as_deref().map(std::str::from_utf8) {
            Ok(Ok(text)) => text.into(),
            Ok(Err(error)) => return ModuleChunk::not_text(key, u32::try_from(error.valid_up_to()).ok()),
            Err(why) => return ModuleChunk::unreadable(key, why),
        },
        (None, None) => return ModuleChunk::not_text(key, None),
    };
    // A project file is transpiled once per content, however often it is linked again.
    let mut transpile = || match file {
        Some(file) => transpiled(db, file).clone(),
        None => count_transpile(db, || bundle::transpile(key, &source)),
    };
    let aliases = bundle::aliases();
    let exists = |path: &str| bundle::virtual_module(path).is_some() || file_at(path).is_some();
    let mut resolve = |specifier: &str| {
        if bundle::outside_dirs(key, specifier).iter().any(|dir| !in_folder(dir).listed_outside) {
            return Err(bundle::ResolveFailure::Unlisted);
        }
        bundle::resolve(key, specifier, &aliases, &exists)
    };
    crate::actions::module_chunk(db.cache(), key, &source, &mut transpile, &mut resolve)
}

/// A project module transpiled (what linking starts from), memoized per file: linking it
/// again, its imports resolved otherwise (a folder above the root was listed meanwhile),
/// does not transpile it again.
#[salsa::tracked(returns(ref))]
pub fn transpiled(db: &dyn Db, file: SourceFile) -> bundle::Transpiled {
    let bytes = file.bytes(db).as_deref().expect("only a module that was read is transpiled");
    count_transpile(db, || bundle::transpile(file.path(db), &String::from_utf8_lossy(bytes)))
}

/// Real work, counted for the build's report.
fn count_transpile(db: &dyn Db, transpile: impl FnOnce() -> bundle::Transpiled) -> bundle::Transpiled {
    db.counters().transpiled.fetch_add(1, Ordering::Relaxed);
    transpile()
}

/// A handler linked with the runtime: the part of a wrapper every host shares.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LinkedHandler {
    /// The linked modules, without the host-specific call into the runtime.
    pub body: Option<Arc<bundle::Assembled>>,
    /// Project-relative paths of the modules linked in (the wrapper's inputs).
    pub modules: Vec<String>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Links a handler's module graph with the runtime, once per handler and form (all of a hook's
/// hosts, and every hook sharing the handler, reuse it).
#[salsa::tracked(returns(ref))]
pub fn linked_handler<'db>(db: &'db dyn Db, project: Project, link: LinkKey<'db>) -> LinkedHandler {
    let handler = link.module(db);
    link_modules(db, project, &link.form(db).roots(handler), handler)
}

/// What the module `root` is, and what it must default-export.
fn default_export_wanted(root: &str) -> (&'static str, &'static str) {
    if crate::routes::is_route_module(root) {
        ("route", "export the route's component: `export default function Route({ canonical }) { … }`")
    } else {
        ("handler", "export the handler function: `export default (event) => { … }`")
    }
}

/// The error for a handler or route module `root` that exports `exports` but no default.
fn without_default_export<'a>(root: &str, exports: impl Iterator<Item = &'a String>) -> Diagnostic {
    let (what, help) = default_export_wanted(root);
    let named: Vec<String> = exports.map(|name| format!("`{name}`")).collect();
    let help = match named.as_slice() {
        [] => help.to_owned(),
        _ => format!("{help}; it exports {} by name only", crate::diagnostics::and_list(&named)),
    };
    Diagnostic::error(Code::HandlerWithoutDefault, format!("{what} `{root}` has no default export"))
        .in_file(root.to_owned())
        .with_help(help)
}

/// Links the module graph from `roots`; every project module among the roots must have a
/// default export. `origin` names what the bundle is generated from, in its header.
fn link_modules(db: &dyn Db, project: Project, roots: &[&str], origin: &str) -> LinkedHandler {
    let graph =
        bundle::ModuleGraph::collect(roots, |key| module_chunk(db, project, ModuleKey::new(db, key.to_owned())));
    let mut diagnostics = graph.diagnostics();
    // (A root that did not link, having failed to parse, said so already.)
    let linked_roots = roots.iter().filter(|root| bundle::virtual_module(root).is_none()).filter_map(|&root| {
        let chunk = graph.chunk(root).expect("the graph holds its roots");
        chunk.linked.then_some((root, chunk))
    });
    for (root, chunk) in linked_roots {
        if !chunk.has_default_export() {
            diagnostics.push(without_default_export(root, chunk.links.exports.keys()));
        } else if let Some((what, exported_at)) = &chunk.links.default_not_function {
            let (_, help) = default_export_wanted(root);
            let diagnostic = Diagnostic::error(Code::DefaultNotFunction, format!("`{root}` default-exports {what}"))
                .in_file(root.to_owned())
                .with_help(help);
            diagnostics.push(match exported_at {
                Some(span) => diagnostic.at(*span),
                None => diagnostic,
            });
        }
    }
    let body = (!crate::diagnostics::has_errors(&diagnostics)).then(|| {
        // A line terminator in a file name would end the comment early.
        let origin: String = origin
            .chars()
            .map(|c| match c {
                '\n' | '\r' | '\u{2028}' | '\u{2029}' => c.escape_unicode().to_string(),
                c => c.to_string(),
            })
            .collect();
        let header = format!("// Generated by agent-bundle {} from {origin}. Do not edit.", env!("CARGO_PKG_VERSION"));
        let body = || bundle::handler_body(&header, &graph);
        Arc::new(crate::actions::wrapper(db.cache(), db.counters(), &header, graph.chunks(), body))
    });
    LinkedHandler { body, modules: graph.user_modules(), diagnostics }
}

/// A bundled wrapper, or the diagnostics that prevented it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WrapperReturn {
    pub code: Option<Arc<str>>,
    /// Project-relative paths of the modules linked in (the wrapper's inputs).
    pub modules: Vec<String>,
    pub diagnostics: Vec<Diagnostic>,
}

#[salsa::tracked(returns(ref))]
pub fn wrapper<'db>(db: &'db dyn Db, project: Project, key: WrapperKey<'db>) -> WrapperReturn {
    let (hook_name, target) = (key.hook_name(db), key.target(db));
    let model = model(db, project).as_ref().expect("wrappers are built only from a model");
    let hook = model.hooks.iter().find(|hook| &hook.name == hook_name).expect("wrapper keys name model hooks");
    let planned = host_plan(db, project, TargetKey::new(db, target))
        .hooks
        .iter()
        .find(|planned| &planned.hook_name == hook_name)
        .expect("wrapper keys name planned hooks");
    let Handler::Module(handler) = &hook.handler else {
        unreachable!("prebuilt handlers have no wrapper");
    };
    let spec = hosts::spec::hook_spec_literal(hosts::table(target), hook_name, hook.trigger)
        .expect("planned hooks have a spec");
    let form = LinkForm::of(planned);
    let linked = linked_handler(db, project, LinkKey::new(db, handler.clone(), form));
    let family = hook.trigger.key();
    let timeout_ms = hook.route.as_ref().map_or(0, |route| route.timeout_ms);
    let epilogue = match form {
        LinkForm::Hook => Some(bundle::hook_epilogue(hook_name, target.as_str(), &spec, handler)),
        LinkForm::Route => Some(bundle::route_epilogue(hook_name, target.as_str(), &spec, handler, family, timeout_ms)),
        LinkForm::Shared { fallback } => event_runtime(db, project).as_ref().and_then(|runtime| {
            let fallback = fallback.then_some(handler.as_str());
            let epoch = runtime.epoch.as_deref()?;
            let starting = hosts::table(target).mcp.as_ref().is_some_and(|mcp| {
                hook.trigger.family().is_some_and(|family| mcp.runs_while_starting.contains(&family))
            });
            let startup_wait_ms = starting.then(|| hosts::STARTUP_WAIT_MS.min(timeout_ms / 2));
            let call = bundle::SharedCall { epoch, family, timeout_ms, startup_wait_ms };
            Some(bundle::shared_route_epilogue(hook_name, target.as_str(), &spec, &call, fallback))
        }),
    };
    let code = linked.body.as_ref().zip(epilogue).map(|(body, epilogue)| Arc::from(body.with_epilogue(&epilogue)));
    // A config hook's handler without a default export is shown where the config names it.
    let located = |diagnostic: &Diagnostic| match hook.trigger {
        crate::model::Trigger::Config(_) if diagnostic.code == Code::HandlerWithoutDefault => {
            Diagnostic { file: None, span: None, ..diagnostic.clone() }.at_path(&hook.config_path)
        }
        _ => diagnostic.clone(),
    };
    WrapperReturn {
        code,
        modules: linked.modules.clone(),
        diagnostics: linked.diagnostics.iter().map(located).collect(),
    }
}

/// The shared event runtime: one MCP server bundle for every host that forwards a route to it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RuntimeReturn {
    pub code: Option<Arc<str>>,
    /// Names this build of the runtime; wrappers send it and the runtime refuses any other.
    pub epoch: Option<String>,
    /// Project-relative paths of the modules linked in.
    pub modules: Vec<String>,
    pub diagnostics: Vec<Diagnostic>,
}

/// `None` when no host forwards a route to the shared runtime.
#[salsa::tracked(returns(ref))]
pub fn event_runtime(db: &dyn Db, project: Project) -> Option<RuntimeReturn> {
    let model = model(db, project).as_ref()?;
    let mut routes: Vec<bundle::RuntimeRoute<'_>> = Vec::new();
    for hook in &model.hooks {
        let (Some(route), Handler::Module(module)) = (&hook.route, &hook.handler) else { continue };
        let mut specs = serde_json::Map::new();
        for &target in &model.targets {
            let plan = host_plan(db, project, TargetKey::new(db, target));
            let forwards = plan
                .hooks
                .iter()
                .any(|p| p.hook_name == hook.name && matches!(p.route, Some(RouteForm::Shared { .. })));
            if let Some(spec) =
                forwards.then(|| hosts::spec::hook_spec(hosts::table(target), &hook.name, hook.trigger)).flatten()
            {
                specs.insert(target.as_str().to_owned(), spec);
            }
        }
        if !specs.is_empty() {
            routes.push(bundle::RuntimeRoute {
                family: hook.trigger.key(),
                timeout_ms: route.timeout_ms,
                module,
                specs,
            });
        }
    }
    if routes.is_empty() {
        return None;
    }
    let mut roots = vec![bundle::SERVER_KEY];
    roots.extend(routes.iter().map(|route| route.module));
    let linked = link_modules(db, project, &roots, &format!("the shared routes of {}", model.name));
    let (code, epoch) = match &linked.body {
        Some(body) => {
            // The epoch covers everything the runtime runs: its modules and its route table.
            let table = bundle::runtime_epilogue(&model.name, &model.version, "", &routes);
            let hash = blake3::hash(body.with_epilogue(&table).as_bytes()).to_hex();
            let epoch = format!("{}@{}+{}", model.name, model.version, &hash.as_str()[..16]);
            let code = body.with_epilogue(&bundle::runtime_epilogue(&model.name, &model.version, &epoch, &routes));
            (Some(Arc::from(code)), Some(epoch))
        }
        None => (None, None),
    };
    Some(RuntimeReturn { code, epoch, modules: linked.modules.clone(), diagnostics: linked.diagnostics.clone() })
}
