//! Normalization: a checked [`Config`] becomes the canonical [`Model`].
//!
//! Every host-independent rule is checked here, and all problems are reported together.
//! Host-dependent rules (does the host have this event, does the selector map) belong to
//! `hosts::plan`.

use std::collections::{HashMap, HashSet};

use super::{Handler, Hook, HookEvent, RouteRun, Target, ToolSelector, Trigger, hook_identity};
use crate::config::{Config, HandlerDecl, HookDecl, Item, PayloadDecl};
use crate::diagnostics::{Code, Diagnostic};
use crate::routes::Route;
use crate::source::MODULE_EXTENSIONS;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Model {
    pub name: String,
    pub description: Option<String>,
    pub version: String,
    /// Selected targets, sorted and deduplicated.
    pub targets: Vec<Target>,
    /// Who chose `targets`.
    pub targets_from: TargetSource,
    /// In planning order: by event, then by id.
    pub hooks: Vec<Hook>,
    pub payloads: Vec<Payload>,
}

/// Who chose a build's targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TargetSource {
    /// Nobody: the default, `portable`.
    Default,
    /// The config's `targets`.
    Config,
    /// `--target`, which narrows a build on purpose: a hook's other targets are expected.
    Cli,
}

impl Model {
    /// The payloads the artifact carries (one limited to other hosts is left out).
    pub fn emitted_payloads(&self) -> impl Iterator<Item = &Payload> {
        let carried = |payload: &&Payload| {
            payload.targets.as_ref().is_none_or(|only| only.iter().any(|target| self.targets.contains(target)))
        };
        self.payloads.iter().filter(carried)
    }

    /// The declared payload that holds `hook`'s prebuilt script, if it has one.
    pub fn payload_of(&self, hook: &Hook) -> Option<&Payload> {
        let Handler::Prebuilt { path, .. } = &hook.handler else { return None };
        self.payloads.iter().find(|payload| is_under(path, &payload.source))
    }
}

/// A prebuilt tree copied byte for byte to `<name>/` in the artifact.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Payload {
    pub name: String,
    /// Project-relative directory, without `./` and without a trailing `/`.
    pub source: String,
    /// Where the config gives the source (`payload.runtime`), for diagnostics.
    pub source_path: String,
    pub targets: Option<Vec<Target>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NormalizeReturn {
    /// `None` when an error makes the model meaningless.
    pub model: Option<Model>,
    pub diagnostics: Vec<Diagnostic>,
    /// The module handlers no input is at, said not to exist: what is there instead, if
    /// anything (a link, a pipe, an empty folder), only the file system tells, which this
    /// stage does not read (`build::name_what_is_at_absent_handlers`).
    pub absent_handlers: Vec<AbsentHandler>,
}

/// A module handler said not to exist (AB4217): its project path, and where the config names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AbsentHandler {
    pub path: String,
    pub at: String,
}

/// What normalization needs to know about the project besides its config.
pub trait ProjectView {
    fn config_file(&self) -> &str;
    fn is_file(&self, path: &str) -> bool;
    /// Whether any file lives below the directory `path`.
    fn has_files_under(&self, path: &str) -> bool;
    /// What a host's own name for an event (`PreToolUse`) is called here, said as help: the
    /// hosts know their names, this stage does not.
    fn native_event_help(&self, name: &str) -> Option<String>;
}

/// Artifact directories a payload must not shadow.
const RESERVED_PAYLOAD_NAMES: [&str; 12] = [
    "hooks",
    "portable",
    "mcp",
    "scripts",
    "skills",
    "assets",
    "agents",
    "commands",
    "plugin.json",
    "mcp.json",
    "agent-bundle.manifest.json",
    "state",
];

/// What to do about a handler path where no module is.
pub const NO_SUCH_MODULE_HELP: &str = "create the module, or fix the path (it is relative to the project root; a \
                                       symbolic link, a folder or a pipe is never read as a module)";

/// A hook timeout from which it is more likely milliseconds than seconds (over 16 minutes:
/// `timeout: 5000` is the usual slip, and no guard waits that long).
const MILLISECONDS_LIKELY: u32 = 1_000;

/// The `version` `package.json` gives, and where its value is written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PackageVersion {
    pub version: String,
    pub at: Option<crate::source::Span>,
}

/// Why `package.json` gives no version, and where in it when its reader says.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Unversioned {
    pub why: String,
    pub at: Option<crate::source::Span>,
}

/// `diagnostic` located in package.json itself (not in the config, as `push` would), at `at`
/// where that is known.
fn in_package_json(diagnostic: Diagnostic, at: Option<crate::source::Span>) -> Diagnostic {
    let diagnostic = diagnostic.in_file("package.json");
    match at {
        Some(at) => diagnostic.at(at),
        None => diagnostic,
    }
}

/// Normalizes `config`. `target_override` is the CLI's `--target` list, which replaces the
/// config's `targets`; `package_version` comes from `package.json` when there is one.
pub fn normalize(
    config: &Config,
    routes: &[Route],
    target_override: Option<&[Target]>,
    package_version: Result<Option<&PackageVersion>, &Unversioned>,
    project: &dyn ProjectView,
) -> NormalizeReturn {
    let mut cx = Normalizer {
        project,
        diagnostics: Vec::new(),
        said: HashSet::new(),
        errors: 0,
        rejected_payloads: Vec::new(),
        absent_handlers: Vec::new(),
    };
    let (targets, targets_from) = match (target_override, &config.targets) {
        (Some(targets), _) => (sorted(targets.to_vec()), TargetSource::Cli),
        (None, Some(items)) => {
            (sorted(items.iter().filter_map(|item| cx.target(item)).collect()), TargetSource::Config)
        }
        (None, None) => (vec![Target::Portable], TargetSource::Default),
    };
    let mut payloads: Vec<Payload> = Vec::new();
    for decl in &config.payloads {
        let Some(payload) = cx.payload(decl) else { continue };
        match payloads.iter().find(|other| other.name.eq_ignore_ascii_case(&payload.name)) {
            Some(other) => cx.same_but_case(decl, &other.name, payload.source),
            None => payloads.push(payload),
        }
    }
    let mut hooks: Vec<Hook> = Vec::new();
    // The hosts a hook may reach: the config's, whatever `--target` narrows to (a duplicate
    // is one in the config, not in a build of some of its hosts), and those `--target` adds.
    let mut declared: Vec<Target> = match &config.targets {
        Some(items) => items.iter().filter_map(|item| Target::parse(&item.value)).collect(),
        None => Vec::new(),
    };
    let added: Vec<Target> = targets.iter().copied().filter(|target| !declared.contains(target)).collect();
    declared.extend(added);
    // Where each hook was first declared, in `hooks`, by what it runs as on each host.
    let mut first_of: HashMap<String, usize> = HashMap::new();
    // Those with errors of their own: what set two apart may be what was refused (a timeout).
    let mut refused = HashSet::new();
    for event in &config.empty_hook_lists {
        cx.empty_hook_list(event);
    }
    for declaration in &config.hooks {
        let errors = cx.errors;
        let Some(hook) = cx.hook(declaration, &payloads) else {
            continue;
        };
        let runs_as = runs_as(&hook, &declared);
        if declaration.refused || cx.errors > errors {
            refused.extend(runs_as.iter().map(|(_, key)| key.clone()));
        }
        let twice = runs_as.iter().find_map(|(host, key)| {
            let first = &hooks[*first_of.get(key)?];
            (!refused.contains(key)).then_some((first, host))
        });
        if let Some((first, host)) = twice {
            let (first_at, at) = (&first.config_path, &hook.config_path);
            let message = match host {
                _ if first.id == hook.id => format!("hook `{}` is declared twice ({first_at} and {at})", hook.name),
                Some(host) => format!(
                    "hook `{}` runs as hook `{}` does on {} ({first_at} and {at}): the same handler, event, tools, \
                     timeout and args",
                    hook.name,
                    first.name,
                    host.as_str()
                ),
                None => format!("hook `{}` is hook `{}` declared again ({first_at} and {at})", hook.name, first.name),
            };
            cx.push(
                Diagnostic::error(Code::DuplicateHook, message)
                    .at_path(&hook.config_path)
                    .with_help("remove one declaration, or keep their hosts apart: the handler would run twice"),
            );
            continue;
        }
        for (_, key) in runs_as {
            first_of.entry(key).or_insert(hooks.len());
        }
        hooks.push(hook);
    }
    if targets_from != TargetSource::Cli && !config.targets_refused {
        // (`--target` narrows a build on purpose: then a hook's other targets are expected.)
        for item in config.hooks.iter().flat_map(|decl| decl.targets.iter().flatten()) {
            if let Some(target) = Target::parse(&item.value)
                && !targets.contains(&target)
            {
                let message = format!("this hook targets {}, which the config's `targets` does not select", item.value);
                cx.push(
                    Diagnostic::warning(Code::HookTargetNotSelected, message)
                        .at_path(&item.path)
                        .with_help("add it to `targets`, or remove it here: nothing is emitted for it"),
                );
            }
        }
    }
    for route in routes {
        hooks.push(route_hook(route));
    }
    hooks.sort_by(|a, b| a.trigger.cmp(&b.trigger).then_with(|| a.id.cmp(&b.id)));
    let version = match (&config.plugin.version, package_version) {
        (Some(version), _) if !is_version_segment(version) => {
            let message = format!("plugin version {version:?} is not a version hosts can install");
            cx.push(Diagnostic::error(Code::InvalidPluginVersion, message).at_path("plugin.version").with_help(
                "write a version such as '1.2.0' (letters, digits, `.`, `-`, `+`, `_`, at most 255 of them): Claude \
                 Code and Codex install each version in a folder of its name",
            ));
            version.clone()
        }
        (Some(version), _) => version.clone(),
        (None, Ok(Some(PackageVersion { version, at }))) if !is_version_segment(version) => {
            let message = format!("package.json's version {version:?} is not a version hosts can install");
            let error = Diagnostic::error(Code::InvalidPluginVersion, message)
                .with_help("fix package.json's `version`, or set `plugin.version` in the config");
            cx.say(in_package_json(error, *at));
            version.to_owned()
        }
        (None, Ok(version)) => version.map_or("0.0.0", |package| &package.version).to_owned(),
        (None, Err(Unversioned { why, at })) => {
            let warning = Diagnostic::warning(
                Code::UnreadablePackageVersion,
                format!("package.json {why}: the version is 0.0.0"),
            )
            .with_help("fix package.json, or set `plugin.version` in the config");
            cx.say(in_package_json(warning, *at));
            "0.0.0".to_owned()
        }
    };
    let model = Model {
        name: config.plugin.name.value.clone(),
        description: config.plugin.description.clone(),
        version,
        targets,
        targets_from,
        hooks,
        payloads,
    };
    NormalizeReturn { model: Some(model), diagnostics: cx.diagnostics, absent_handlers: cx.absent_handlers }
}

/// Whether `version` can name the folder a host installs it in (Claude Code and Codex copy
/// each version of a plugin into one): one non-empty path segment of the characters versions
/// are written with, no longer than a file name may be.
fn is_version_segment(version: &str) -> bool {
    /// The longest name of a file or folder on Linux's and macOS's file systems, in bytes.
    const NAME_MAX: usize = 255;
    !version.is_empty()
        && version.len() <= NAME_MAX
        && !matches!(version, "." | "..")
        && version.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_'))
}

/// The extension of `path` where it names no JavaScript Node runs (`sh`, `py`, `ts`): a
/// file without one Node reads as CommonJS.
fn not_javascript(path: &str) -> Option<&str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (_, extension) = name.rsplit_once('.').filter(|(stem, _)| !stem.is_empty())?;
    (!["js", "mjs", "cjs"].contains(&extension)).then_some(extension)
}

fn sorted(mut targets: Vec<Target>) -> Vec<Target> {
    targets.sort_unstable();
    targets.dedup();
    targets
}

struct Normalizer<'a> {
    project: &'a dyn ProjectView,
    diagnostics: Vec<Diagnostic>,
    /// The diagnostics said so far, to say each once.
    said: HashSet<Diagnostic>,
    /// How many of them are errors.
    errors: usize,
    /// The sources of declared payloads refused (their error says why): a prebuilt handler
    /// in one is said no more of.
    rejected_payloads: Vec<String>,
    absent_handlers: Vec<AbsentHandler>,
}

impl Normalizer<'_> {
    /// Reports `diagnostic`, located in the config, once: an array of handlers under one
    /// unknown event key, say, repeats it word for word.
    fn push(&mut self, diagnostic: Diagnostic) {
        self.say(diagnostic.in_file(self.project.config_file().to_owned()));
    }

    /// Reports `diagnostic`, located where it says, once.
    fn say(&mut self, diagnostic: Diagnostic) {
        if self.said.insert(diagnostic.clone()) {
            self.errors += usize::from(diagnostic.is_error());
            self.diagnostics.push(diagnostic);
        }
    }

    fn target(&mut self, item: &Item<String>) -> Option<Target> {
        let target = Target::parse(&item.value);
        if target.is_none() {
            self.push(Target::unknown(&item.value).at_path(&item.path));
        }
        target
    }

    fn hook(&mut self, decl: &HookDecl, payloads: &[Payload]) -> Option<Hook> {
        let event = self.config_event(&decl.event, &decl.path);
        if event == Some(HookEvent::WorkspaceOpen) {
            return None;
        }
        let handler = self.handler(decl, payloads);
        let targets = decl.targets.as_ref().map(|items| sorted(items.iter().filter_map(|i| self.target(i)).collect()));
        let timeout = decl.timeout.as_ref().and_then(|t| self.timeout(t));
        let tools = self.tools(decl, event, targets.as_deref());
        let args = self.args(decl, handler.as_ref());
        let (event, handler, tools) = (event?, handler?, tools?);
        let (id, name) = hook_identity(event, &handler, targets.as_deref(), &tools, timeout, &args);
        Some(Hook {
            id,
            name,
            trigger: Trigger::Config(event),
            route: None,
            handler,
            targets,
            tools,
            timeout,
            args,
            source_file: self.project.config_file().to_owned(),
            config_path: decl.path.clone(),
        })
    }

    /// The canonical event the hook key `event` names, said where it names none, or names
    /// `workspaceOpen`, which no host runs as a config hook (the entry at `at`).
    fn config_event(&mut self, key: &Item<String>, at: &str) -> Option<HookEvent> {
        let event = HookEvent::from_key(&key.value);
        if event.is_none() {
            let names: Vec<_> = HookEvent::ALL.map(HookEvent::key).to_vec();
            let (hosted, unhosted): (Vec<_>, Vec<_>) = HookEvent::ALL.into_iter().partition(|e| e.family().is_some());
            let quoted = |events: Vec<HookEvent>| events.iter().map(|e| format!("`{}`", e.key())).collect::<Vec<_>>();
            let takes = format!(
                "config hooks take {}; other events, {} among them, are event routes (`src/events/<family>.tsx`)",
                hosted.iter().map(|e| e.key()).collect::<Vec<_>>().join(", "),
                quoted(unhosted).join(", ")
            );
            let unknown = Diagnostic::error(Code::UnknownEvent, format!("unknown hook event `{}`", key.value))
                .at_key_of(&key.path);
            // A near miss of an event here (`sessionstart`) first, then a host's own name.
            let near = crate::diagnostics::has_suggestion(&key.value, names.iter().copied());
            // A family written as a key, when no config event has it (`SessionStart` is one's).
            let route = super::Family::written_as(&key.value)
                .filter(|family| !HookEvent::ALL.iter().any(|event| event.family() == Some(*family)));
            let help = match (route, self.project.native_event_help(&key.value).filter(|_| !near)) {
                (Some(family), _) => format!(
                    "{} is an event route, not a config hook: write its handler as `src/events/{}.tsx`",
                    family.key(),
                    family.key()
                ),
                (None, Some(native)) => format!("{native}; {takes}"),
                (None, None) => crate::diagnostics::suggesting(&key.value, names.iter().copied(), &takes),
            };
            self.push(unknown.with_help(help));
        }
        if event == Some(HookEvent::WorkspaceOpen) {
            // (Said once, not once per host: no host runs it so.)
            let message = "a config hook on workspaceOpen runs on no host: only the event route `workspace/open` \
                           receives it (Cursor's, in its desktop app)";
            let help = "write it as that route, `src/events/workspace/open.tsx`, a component rendering what it \
                        observes (see docs/routes.md), and remove this hook";
            self.push(Diagnostic::error(Code::EventNotSupportedByHost, message).at_path(at).with_help(help));
        }
        event
    }

    /// An empty list of hooks under the key `event` (its path): what is wrong with the key
    /// first, as for any hook under it, else that it declares none.
    fn empty_hook_list(&mut self, event: &Item<String>) {
        if self.config_event(event, &event.path).is_some_and(|event| event != HookEvent::WorkspaceOpen) {
            let message = format!("`{}` is empty: it declares no hook", event.path);
            let help = format!("name a handler, or leave `{}` out", event.value);
            self.push(Diagnostic::error(Code::InvalidConfigValue, message).at_path(&event.path).with_help(help));
        }
    }

    fn handler(&mut self, decl: &HookDecl, payloads: &[Payload]) -> Option<Handler> {
        let path = self.handler_path(decl)?;
        let at = &decl.handler.path;
        match &decl.handler.value {
            HandlerDecl::Module(_) => {
                if let Some(payload) = payloads.iter().find(|payload| is_under(&path, &payload.source)) {
                    self.module_in_payload(&path, at, payload);
                }
                self.module_handler(path, at)
            }
            HandlerDecl::Prebuilt(_) => self.prebuilt_handler(path, at, payloads),
        }
    }

    /// Warns of a module handler inside a payload: a script of a payload is most likely
    /// meant to run as it is, which the build would compile instead (a CommonJS one failing
    /// on what it may not use).
    fn module_in_payload(&mut self, path: &str, at: &str, payload: &Payload) {
        let message = format!("handler `{path}` is in payload `{}`, and is compiled as a module handler", payload.name);
        let help = format!(
            "a script that runs as it is, reading the host's own input, is `handler: {{ prebuilt: './{path}' }}`; a \
             module handler belongs outside the payload, which ships its files as they are"
        );
        self.push(Diagnostic::warning(Code::HandlerInPayload, message).at_path(at).with_help(help));
    }

    /// The project-relative path of `decl`'s handler, or `None` once it is said why there is
    /// none (empty, absolute, outside the root).
    fn handler_path(&mut self, decl: &HookDecl) -> Option<String> {
        let item = &decl.handler;
        let (HandlerDecl::Module(raw) | HandlerDecl::Prebuilt(raw)) = &item.value;
        if raw.trim().is_empty() {
            self.push(
                Diagnostic::error(
                    Code::EmptyHandler,
                    format!("hook {} requires a nonempty handler path", decl.event.value),
                )
                .at_path(&item.path),
            );
            return None;
        }
        let Some(path) = project_path(raw) else {
            let refusal = PathRefusal::of(raw);
            let message = format!("handler `{raw}` {}", refusal.what());
            let help = refusal.help("handlers are project-relative paths such as './src/hooks/guard.ts'");
            self.push(Diagnostic::error(Code::MissingHandler, message).at_path(&item.path).with_help(help));
            return None;
        };
        if path.is_empty() {
            let message = format!("handler `{raw}` is the project root, a folder, not a module file");
            let help = "a handler names its module's file, such as './src/hooks/guard.ts'";
            self.push(Diagnostic::error(Code::MissingHandler, message).at_path(&item.path).with_help(help));
            return None;
        }
        Some(path)
    }

    /// A TypeScript handler at `path` (the config's `at`), which must be a file of the project.
    fn module_handler(&mut self, path: String, at: &str) -> Option<Handler> {
        if self.project.is_file(&path) && crate::source::module_language(&path).is_none() {
            // Said where the config chose it, not at the file's first line.
            let commonjs = crate::source::COMMONJS_EXTENSIONS.iter().any(|extension| path.ends_with(extension));
            let help = if commonjs {
                "a CommonJS module cannot be linked into the wrapper: make it an ES module (.ts, .mts, .js, .mjs)"
            } else {
                "handlers are .ts, .tsx, .mts, .js, .mjs or .jsx modules"
            };
            let message = format!("handler `{path}` is no module the build compiles");
            self.push(Diagnostic::error(Code::ModuleSyntax, message).at_path(at).with_help(help));
            return None;
        }
        if self.project.is_file(&path) {
            return Some(Handler::Module(path));
        }
        let (message, help) = if self.project.has_files_under(&path) {
            (format!("handler `{path}` is a folder, not a module file"), self.folder_help(&path))
        } else {
            self.absent_handlers.push(AbsentHandler { path: path.clone(), at: at.to_owned() });
            (format!("handler file `{path}` does not exist"), self.missing_module_help(&path))
        };
        self.push(Diagnostic::error(Code::MissingHandler, message).at_path(at).with_help(help));
        None
    }

    /// What to name for a handler given as the folder `path`: its index module, if it has one.
    fn folder_help(&self, path: &str) -> String {
        let index = ["index.ts", "index.tsx", "index.mts", "index.js", "index.mjs"]
            .into_iter()
            .map(|name| format!("{path}/{name}"))
            .find(|file| self.project.is_file(file));
        match index {
            Some(index) => format!("a handler names its module's file: `./{index}`"),
            None => "a handler names its module's file, in this folder or elsewhere".to_owned(),
        }
    }

    /// What to do about a handler module `path` the project does not hold.
    fn missing_module_help(&self, path: &str) -> String {
        // `--config plugin/agent-bundle.config.ts`, run from above the project.
        let config_folder = crate::loader::parent_key(self.project.config_file());
        let beside_config = !config_folder.is_empty() && self.project.is_file(&format!("{config_folder}/{path}"));
        if let Some(help) = crate::loader::skipped_folder_help(path) {
            return help;
        }
        if beside_config {
            return format!(
                "handler paths are relative to the project root, not to the config's folder `{config_folder}`, \
                 which holds `{path}`: make that folder the root (pass its path as --root)"
            );
        }
        match self.typescript_twin(path) {
            Some(twin) => format!(
                "did you mean `./{twin}`? A handler path names the module's own file (`.js` for `.ts` holds in \
                 imports only)"
            ),
            None => NO_SUCH_MODULE_HELP.to_owned(),
        }
    }

    /// A prebuilt handler at `path` (the config's `at`): a file in one of `payloads`, whose
    /// path in the artifact a shell reads as it is.
    fn prebuilt_handler(&mut self, path: String, at: &str, payloads: &[Payload]) -> Option<Handler> {
        if self.rejected_payloads.iter().any(|source| is_under(&path, source)) {
            return None;
        }
        let Some(payload) = payloads.iter().find(|p| is_under(&path, &p.source)) else {
            let declared: Vec<_> = payloads.iter().map(|p| p.source.as_str()).collect();
            let help = if declared.is_empty() {
                "declare the directory that holds it under `payload`".to_owned()
            } else {
                format!("declared payload sources: {}", declared.join(", "))
            };
            self.push(
                Diagnostic::error(
                    Code::PrebuiltOutsidePayload,
                    format!("prebuilt handler `{path}` is not inside a declared payload"),
                )
                .at_path(at)
                .with_help(help),
            );
            return None;
        };
        if !self.project.is_file(&path) {
            let help = crate::loader::skipped_folder_help(&path)
                .unwrap_or_else(|| "build the payload before running agent-bundle".to_owned());
            self.push(
                Diagnostic::error(Code::MissingPrebuilt, format!("prebuilt handler `{path}` does not exist"))
                    .at_path(at)
                    .with_help(help),
            );
            return None;
        }
        let artifact_path = format!("{}/{}", payload.name, &path[payload.source.len() + 1..]);
        // Hosts run `node "<root>/<artifact path>"` through a shell: inside the
        // quotes, these would be expanded, end the quotes, or end the command.
        if let Some(c) = artifact_path.chars().find(|c| matches!(c, '$' | '`' | '"' | '\\') || c.is_control()) {
            self.push(
                Diagnostic::error(
                    Code::UnsafePrebuiltPath,
                    format!(
                        "prebuilt handler `{path}` has {c:?} in its name, which a shell would read in the hook command"
                    ),
                )
                .at_path(at)
                .with_help("rename the file (and its payload folders) without $ ` \" \\ or control characters"),
            );
            return None;
        }
        if let Some(extension) = not_javascript(&path) {
            let message = format!(
                "prebuilt handler `{path}` is no JavaScript: hosts run it as `node {artifact_path}`, and Node cannot \
                 run a `.{extension}` file"
            );
            let help = "write it in JavaScript (`.js`, `.mjs`, `.cjs`), or make it a module handler \
                        (`handler: './src/hooks/guard.ts'`), which agent-bundle compiles";
            self.push(Diagnostic::error(Code::PrebuiltNotJavaScript, message).at_path(at).with_help(help));
            return None;
        }
        Some(Handler::Prebuilt { path, artifact_path })
    }

    /// The TypeScript module `path` most likely means: `guard.js` or `guard` for the
    /// `guard.ts` (`.tsx`, `.mts`) the project holds, as an import of it would resolve.
    fn typescript_twin(&self, path: &str) -> Option<String> {
        let (typescript, javascript): (Vec<_>, Vec<_>) =
            MODULE_EXTENSIONS.iter().partition(|(_, language)| language.is_typescript());
        let stem = javascript.iter().find_map(|(ext, _)| path.strip_suffix(ext)).unwrap_or(path);
        typescript.iter().map(|(ext, _)| format!("{stem}{ext}")).find(|twin| self.project.is_file(twin))
    }

    fn timeout(&mut self, item: &Item<serde_json::Number>) -> Option<u32> {
        let seconds = item.value.as_u64().filter(|&s| s > 0).and_then(|s| u32::try_from(s).ok());
        match seconds {
            None => self.push(
                Diagnostic::error(
                    Code::InvalidTimeout,
                    format!("timeout must be a whole number of seconds from 1 to {}, found {}", u32::MAX, item.value),
                )
                .at_path(&item.path)
                .with_help("hosts take hook timeouts in seconds: write e.g. `timeout: 10`"),
            ),
            // Milliseconds written as seconds are a known slip (every host reads seconds).
            Some(seconds) if seconds >= MILLISECONDS_LIKELY => self.push(
                Diagnostic::warning(
                    Code::InvalidTimeout,
                    format!("a timeout of {seconds} seconds is over {} minutes: hosts read seconds", seconds / 60),
                )
                .at_path(&item.path)
                .with_help(format!("if you meant {seconds} milliseconds, write `timeout: {}`", seconds.div_ceil(1000))),
            ),
            Some(_) => {}
        }
        seconds
    }

    fn tools(
        &mut self,
        decl: &HookDecl,
        event: Option<HookEvent>,
        targets: Option<&[Target]>,
    ) -> Option<Vec<ToolSelector>> {
        let Some(tools) = &decl.tools else {
            return Some(Vec::new());
        };
        if event.is_some_and(|e| !e.takes_tools()) {
            self.push(
                Diagnostic::error(
                    Code::ToolsOnNonToolEvent,
                    format!("`tools` is only valid on beforeTool and afterTool, not {}", decl.event.value),
                )
                .at_path(&tools.path)
                .with_help("remove `tools`: this event fires regardless of tools"),
            );
            return None;
        }
        if tools.value.is_empty() {
            // Read as "no filter" it would run on every tool: the opposite of what it says.
            self.push(
                Diagnostic::error(Code::NoApplicableSelector, "`tools: []` selects no tool")
                    .at_path(&tools.path)
                    .with_help("name the tools, or remove `tools` to run on every tool"),
            );
            return None;
        }
        let mut selectors: Vec<ToolSelector> = Vec::new();
        let mut refused = false;
        for item in &tools.value {
            let Some(selector) = ToolSelector::parse(&item.value) else {
                self.push(ToolSelector::unknown(&item.value).at_path(&item.path));
                refused = true;
                continue;
            };
            if let (ToolSelector::Native { target, .. }, Some(targets)) = (&selector, targets)
                && !targets.contains(target)
            {
                self.push(
                    Diagnostic::error(
                        Code::NativeSelectorOutsideTargets,
                        format!("selector `{}` names {}, which this hook does not target", item.value, target.as_str()),
                    )
                    .at_path(&item.path)
                    .with_help("add the host to the hook's `targets`, or remove the selector"),
                );
                refused = true;
                continue;
            }
            if !selectors.contains(&selector) {
                selectors.push(selector);
            }
        }
        // With a selector refused, what is left says nothing of what was meant (none would
        // read as every tool): the hook is left out, and the build fails on the refusal.
        (!refused).then_some(selectors)
    }

    fn args(&mut self, decl: &HookDecl, handler: Option<&Handler>) -> Vec<String> {
        let Some(args) = &decl.args else {
            return Vec::new();
        };
        if handler.is_some_and(|h| !h.is_prebuilt()) {
            self.push(
                Diagnostic::error(Code::InvalidArgs, "`args` is only accepted on prebuilt handlers")
                    .at_path(&args.path)
                    .with_help("a compiled handler receives the event as its argument; read options from the event or the environment"),
            );
            return Vec::new();
        }
        for item in &args.value {
            if item.value.is_empty() || !item.value.chars().all(is_shell_safe) {
                self.push(
                    Diagnostic::error(
                        Code::InvalidArgs,
                        format!("argument `{}` has characters that are not shell-safe", item.value),
                    )
                    .at_path(&item.path)
                    .with_help("hosts run hook commands through a shell: use letters, digits and - _ . / : = @ % + ,"),
                );
            }
        }
        args.value.iter().map(|item| item.value.clone()).collect()
    }

    /// A payload whose name differs from `other`'s only in case: a file system that ignores
    /// case (macOS's, by default) would put both in one folder.
    fn same_but_case(&mut self, decl: &PayloadDecl, other: &str, source: String) {
        let name = &decl.name.value;
        self.push(
            Diagnostic::error(
                Code::InvalidPayload,
                format!("payload name `{name}` differs from payload `{other}` only in case"),
            )
            .at_path(&decl.name.path)
            .with_help("a file system that ignores case (macOS's) would merge their folders: rename one"),
        );
        self.rejected_payloads.push(source);
    }

    fn payload(&mut self, decl: &PayloadDecl) -> Option<Payload> {
        let name = &decl.name.value;
        let safe_segment = !name.is_empty()
            && !name.starts_with('.')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        // (In any case: on a file system that ignores it, `Hooks/` would land in `hooks/`.)
        let reserved = RESERVED_PAYLOAD_NAMES.iter().find(|reserved| reserved.eq_ignore_ascii_case(name));
        if !safe_segment || reserved.is_some() {
            let (message, help) = match reserved {
                Some(reserved) => (
                    format!("payload name `{name}` is the artifact's own `{reserved}`"),
                    "the build writes the artifact's hooks, MCP documents and manifests itself, and keeps the names \
                     hosts read by their own conventions (skills, commands, agents), which it does not build yet: \
                     give the payload another name"
                        .to_owned(),
                ),
                None => (
                    format!("payload name `{name}` cannot be an artifact directory"),
                    "use one plain path segment: letters, digits, `-`, `_` and `.`, not starting with `.`".to_owned(),
                ),
            };
            self.push(Diagnostic::error(Code::InvalidPayload, message).at_path(&decl.name.path).with_help(help));
            self.rejected_payloads.extend(project_path(&decl.source.value));
            return None;
        }
        let raw = &decl.source.value;
        let Some(source) = project_path(raw).filter(|s| !s.is_empty()) else {
            // (`.`, `./`, `''`: the root itself, which holds the artifact and the config.)
            let whole_root = project_path(raw).is_some();
            let help = "payload sources are project-relative directories such as './dist/runtime'";
            let (message, help) = if whole_root {
                (
                    format!("payload source `{raw}` is the project root itself, which cannot be a payload"),
                    help.to_owned(),
                )
            } else {
                let refusal = PathRefusal::of(raw);
                (format!("payload source `{raw}` {}", refusal.what()), refusal.help(help))
            };
            self.push(Diagnostic::error(Code::PayloadOutsideRoot, message).at_path(&decl.source.path).with_help(help));
            return None;
        };
        if !self.project.has_files_under(&source) {
            // (The source as a folder of a path below it: `node_modules/tool/`.)
            let (message, help) = match crate::loader::skipped_folder_in(&format!("{source}/")) {
                Some(folder) => (
                    format!(
                        "payload source `{source}` is or lies in a folder named `{folder}`, which agent-bundle never \
                         reads"
                    ),
                    format!("copy the payload out of `{folder}` (e.g. into dist/) before running agent-bundle"),
                ),
                None => (
                    format!("payload source `{source}` is missing or empty"),
                    "build the payload before running agent-bundle, as a folder of files in the project (a folder \
                     that is a symbolic link or a built artifact is never read)"
                        .to_owned(),
                ),
            };
            self.push(Diagnostic::error(Code::MissingPayload, message).at_path(&decl.source.path).with_help(help));
            self.rejected_payloads.push(source);
            return None;
        }
        let targets = decl.targets.as_ref().map(|items| sorted(items.iter().filter_map(|i| self.target(i)).collect()));
        Some(Payload { name: name.clone(), source, source_path: decl.source.path.clone(), targets })
    }
}

fn is_shell_safe(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':' | '=' | '@' | '%' | '+' | ',')
}

/// Normalizes a project-relative path (`./a/../b.ts` → `b.ts`); `None` when it is absolute or
/// climbs out of the project root.
pub fn project_path(raw: &str) -> Option<String> {
    if raw.starts_with('/') || raw.contains('\\') || raw.contains(':') && raw.len() > 1 && raw.as_bytes()[1] == b':' {
        return None;
    }
    let mut segments: Vec<&str> = Vec::new();
    for segment in raw.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop()?;
            }
            other => segments.push(other),
        }
    }
    Some(segments.join("/"))
}

/// Why a path of the config names nothing inside the project ([`project_path`] gave none).
/// (Inside the root or not, an absolute path is refused: the artifact must not depend on
/// where the checkout is.)
#[derive(Clone, Copy, PartialEq, Eq)]
enum PathRefusal {
    Absolute,
    Backslash,
    Outside,
}

impl PathRefusal {
    fn of(raw: &str) -> PathRefusal {
        let drive = raw.len() > 1 && raw.as_bytes()[1] == b':';
        if raw.starts_with('/') || drive {
            PathRefusal::Absolute
        } else if raw.contains('\\') {
            PathRefusal::Backslash
        } else {
            PathRefusal::Outside
        }
    }

    /// What the path is, after its name.
    fn what(self) -> &'static str {
        match self {
            PathRefusal::Absolute => "is an absolute path",
            PathRefusal::Backslash => "holds `\\`, which separates no folders here",
            PathRefusal::Outside => "is outside the project root",
        }
    }

    /// What to write instead; `usual` says what such paths are.
    fn help(self, usual: &str) -> String {
        match self {
            PathRefusal::Absolute => {
                format!(
                    "write it relative to the project root ({usual}): the build must not depend on where the project is"
                )
            }
            PathRefusal::Backslash => format!("write `/` between folders, on every system ({usual})"),
            PathRefusal::Outside => usual.to_owned(),
        }
    }
}

fn is_under(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'))
}

/// An event route as a hook named `event-route-<family>`. The host's deadline leaves one
/// second beyond the route's own budget, for Node to start and answer.
fn route_hook(route: &Route) -> Hook {
    let kebab = route.family.kebab();
    Hook {
        id: format!("hook:event-route:{kebab}"),
        name: format!("event-route-{kebab}"),
        trigger: Trigger::Route(route.family),
        route: Some(RouteRun {
            timeout_ms: route.timeout_ms,
            timeout_declared: route.timeout_declared,
            shared: route.shared,
            fallback: route.fallback_standalone,
        }),
        handler: Handler::Module(route.file.clone()),
        targets: route.targets.clone(),
        tools: route.tools.clone(),
        timeout: Some(route.timeout_ms.div_ceil(1000) + 1),
        args: Vec::new(),
        source_file: route.file.clone(),
        config_path: String::new(),
    }
}

/// What `hook` runs as on each of the `declared` hosts it reaches, whatever order its
/// `tools` and `targets` are written in: two hooks alike on a host run the handler twice
/// there. One that reaches none of them is told apart by its own `targets` (no host).
fn runs_as(hook: &Hook, declared: &[Target]) -> Vec<(Option<Target>, String)> {
    // Its tools as `host` matches them: the canonical ones, and those native to it.
    let tools_on = |host: Option<Target>| {
        let on_host = |tool: &&ToolSelector| match tool {
            ToolSelector::Native { target, .. } => host.is_none_or(|host| *target == host),
            ToolSelector::Canonical(_) => true,
        };
        let mut tools: Vec<String> = hook.tools.iter().filter(on_host).map(ToolSelector::to_text).collect();
        tools.sort();
        tools
    };
    let what = |host: Option<Target>, tools: Vec<String>| {
        format!("{host:?} {:?} {:?} {tools:?} {:?} {:?}", hook.trigger, hook.handler, hook.timeout, hook.args)
    };
    // (Portable runs no hooks; nor does a host none of a hook's tools are on.)
    let mut hosts = Vec::new();
    for &host in declared.iter().filter(|&&host| host != Target::Portable) {
        let tools = tools_on(Some(host));
        let reaches = hook.targets.as_ref().is_none_or(|own| own.contains(&host));
        if reaches && (hook.tools.is_empty() || !tools.is_empty()) {
            hosts.push((Some(host), what(Some(host), tools)));
        }
    }
    if hosts.is_empty() { vec![(None, format!("{:?} {}", hook.targets, what(None, tools_on(None))))] } else { hosts }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_paths_normalize_and_stay_inside() {
        assert_eq!(project_path("./src/hooks/a.ts").as_deref(), Some("src/hooks/a.ts"));
        assert_eq!(project_path("src/../dist/x.js").as_deref(), Some("dist/x.js"));
        assert_eq!(project_path("../outside"), None);
        assert_eq!(project_path("/etc/passwd"), None);
        assert_eq!(project_path("./dist/runtime/").as_deref(), Some("dist/runtime"));
    }

    #[test]
    fn under_means_strictly_inside() {
        assert!(is_under("dist/runtime/hook/index.js", "dist/runtime"));
        assert!(!is_under("dist/runtime2/x.js", "dist/runtime"));
        assert!(!is_under("dist/runtime", "dist/runtime"));
    }
}
