//! Event routes: discovery of `src/events/<family>.{ts,tsx}` and the static reading of each
//! route's `export const config`.
//!
//! A route's path names the family it handles (`src/events/tool/before.tsx`,
//! `src/events/stop.tsx`). Its config is read like the project config: statically, never
//! executed. Architecture invariant: no host knowledge here.

use crate::config::extract::{self, ExtractErrorKind, ExtractTarget, Value, ValueKind};
use crate::config::{join_index, join_key};
use crate::diagnostics::{Code, Diagnostic, Severity};
use crate::model::{Family, Target, ToolSelector};
use crate::source::{COMMONJS_EXTENSIONS, MODULE_EXTENSIONS};

/// Where routes live.
pub const EVENTS_DIR: &str = "src/events/";

/// Why: the seed's default budget for a route inside the host's own deadline.
pub const DEFAULT_TIMEOUT_MS: u32 = 5000;

/// One route file and what its config asks for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Route {
    /// Project-relative path of the route module.
    pub file: String,
    pub family: Family,
    pub shared: bool,
    pub fallback_standalone: bool,
    pub targets: Option<Vec<Target>>,
    pub timeout_ms: u32,
    /// Whether its config sets `timeoutMs` (else [`DEFAULT_TIMEOUT_MS`]).
    pub timeout_declared: bool,
    pub tools: Vec<ToolSelector>,
}

/// Routes found in the project, with every problem located.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct RoutesReturn {
    pub routes: Vec<Route>,
    /// Each route file's extracted config (for locating diagnostics by JSON path).
    pub configs: Vec<(String, Value)>,
    pub diagnostics: Vec<Diagnostic>,
}

/// Whether a walk passing over `key` (a link, a special file, a folder it may not list) may
/// lose a route: `src/events` or a folder above it, a route's own name, or a folder a family's
/// routes lie in (`src/events/tool`). Nothing else there (an editor's lock file `.#stop.tsx`, a
/// `node_modules`) can be one.
pub fn may_hold_route(key: &str) -> bool {
    let events = EVENTS_DIR.trim_end_matches('/');
    if crate::loader::is_at_or_below(events, key) {
        return true;
    }
    let Some(relative) = key.strip_prefix(EVENTS_DIR) else { return false };
    let on_the_way = |family: &Family| family.key().strip_prefix(relative).is_some_and(|rest| rest.starts_with('/'));
    // (A name misspelt for a route's, `stop.js`, is said of a regular file too: AB4800.)
    is_route_module(key) || misnamed_route(key).is_some() || Family::ALL.iter().any(on_the_way)
}

/// Whether the module at `path` is a route's (`src/events/tool/before.tsx`).
pub fn is_route_module(path: &str) -> bool {
    family_of(path).is_some_and(|family| family.is_ok())
}

/// The family a path under `src/events/` names, or `None` when it is not a route module.
fn family_of(path: &str) -> Option<Result<Family, String>> {
    let relative = path.strip_prefix(EVENTS_DIR)?;
    let stem = relative.strip_suffix(".tsx").or_else(|| relative.strip_suffix(".ts"))?;
    Some(Family::from_key(stem).ok_or_else(|| stem.to_owned()))
}

/// What a module under `src/events/` named for a family but in JavaScript (or `.mts`, or
/// `.TSX`) should be called, to be a route: it would otherwise be dropped without a word.
fn misnamed_route(path: &str) -> Option<String> {
    let relative = path.strip_prefix(EVENTS_DIR)?;
    let (stem, extension) = relative.rsplit_once('.')?;
    let lower = format!(".{}", extension.to_ascii_lowercase());
    let mut modules = MODULE_EXTENSIONS.iter().map(|&(module, _)| module).chain(COMMONJS_EXTENSIONS);
    // (Only `.ts` and `.tsx` as written name a route: `.TSX` would be dropped too.)
    let module = modules.any(|module| module == lower) && !matches!(extension, "ts" | "tsx");
    (module && Family::from_key(stem).is_some()).then(|| format!("{EVENTS_DIR}{stem}.tsx"))
}

/// Finds the route files among `paths` (project-relative, sorted) and reads each one's config
/// with `text(path)`, which says why where a file has no text.
pub fn discover<'a>(
    paths: impl Iterator<Item = &'a str>,
    text: impl Fn(&str) -> Result<&'a str, Diagnostic>,
) -> RoutesReturn {
    let mut result = RoutesReturn::default();
    let paths: Vec<&str> = paths.collect();
    for &path in &paths {
        // (A hidden file is no route: `._stop.tsx`, which macOS leaves beside a copy, or an
        // editor's lock file `.#stop.tsx`.)
        if path.strip_prefix(EVENTS_DIR).is_some_and(|relative| relative.split('/').any(|part| part.starts_with('.'))) {
            continue;
        }
        // Modules a route imports (helpers beside it) are not routes unless named like one;
        // files whose stem names no family are errors only directly in a family folder.
        let Some(family) = family_of(path) else {
            // (Beside its route, a JavaScript twin, say compiled output, is left alone.)
            let twin = |stem: &str| [".ts", ".tsx"].iter().any(|ext| paths.contains(&format!("{stem}{ext}").as_str()));
            if let Some(renamed) = misnamed_route(path).filter(|renamed| !twin(renamed.trim_end_matches(".tsx"))) {
                result.diagnostics.push(
                    Diagnostic::error(
                        Code::UnknownRouteFamily,
                        format!("`{path}` names an event family, but route files end in .ts or .tsx"),
                    )
                    .in_file(path)
                    .with_help(format!("rename it `{renamed}`")),
                );
            }
            continue;
        };
        let family = match family {
            Ok(family) => family,
            Err(stem) => {
                if is_helper(&stem) {
                    continue;
                }
                let known: Vec<_> = Family::ALL.iter().map(|f| f.key()).collect();
                let help = format!(
                    "route files are src/events/<family>.tsx for a family among: {}; a helper module goes in a \
                     `components/` or `lib/` folder, or has a name starting with `_`",
                    known.join(", ")
                );
                result.diagnostics.push(
                    Diagnostic::error(Code::UnknownRouteFamily, format!("`{path}` names no event family (`{stem}`)"))
                        .in_file(path)
                        .with_help_suggesting(&stem, known.iter().copied(), &help),
                );
                continue;
            }
        };
        if let Some(first) = result.routes.iter().find(|r| r.family == family) {
            result.diagnostics.push(
                Diagnostic::error(
                    Code::DuplicateRoute,
                    format!("`{path}` and `{}` both handle {}", first.file, family.key()),
                )
                .in_file(path)
                .with_help("keep one module per family"),
            );
            continue;
        }
        let source = match text(path) {
            Ok(source) => source,
            Err(diagnostic) => {
                result.diagnostics.push(diagnostic);
                continue;
            }
        };
        let (route, value, diagnostics) = read_route(path, family, source);
        result.diagnostics.extend(diagnostics);
        if let Some(value) = value {
            result.configs.push((path.to_owned(), value));
        }
        result.routes.extend(route);
    }
    result
}

/// Modules among `paths` (project-relative) named like a route but in a folder that is almost
/// `src/events/` (`src/event/`, `src/Events/`, `events/`): no host would run them, and the
/// build would say nothing of it. (The caller leaves out the modules hooks run.)
pub fn stray_routes<'a>(paths: impl Iterator<Item = &'a str>) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    for path in paths.filter(|path| !path.starts_with(EVENTS_DIR)) {
        let Some((stem, extension)) = path.rsplit_once('.').filter(|(_, extension)| matches!(*extension, "ts" | "tsx"))
        else {
            continue;
        };
        let in_near_folder = |family: &&Family| {
            let dir = stem.strip_suffix(family.key()).and_then(|dir| dir.strip_suffix('/'));
            dir.is_some_and(is_almost_events_dir)
        };
        if let Some(family) = Family::ALL.iter().find(in_near_folder) {
            let message = format!("`{path}` is named like a route, but routes live in `{EVENTS_DIR}`");
            found.push(
                Diagnostic::warning(Code::StrayRoute, message)
                    .in_file(path)
                    .with_help(format!("no host runs it there: move it to `{EVENTS_DIR}{}.{extension}`", family.key())),
            );
        }
    }
    found
}

/// Whether `dir` is not `src/events` but a slip of it: another case, one letter off, or
/// `src/` left out.
fn is_almost_events_dir(dir: &str) -> bool {
    let lower = dir.to_ascii_lowercase();
    let near_events = |name: &str| strsim::damerau_levenshtein(name, "events") <= 1;
    let slip = match lower.split('/').collect::<Vec<_>>()[..] {
        [events] => events == "events",
        [src, events] => matches!(src, "src" | "source") && near_events(events),
        _ => false,
    };
    slip && format!("{dir}/") != EVENTS_DIR
}

/// Helper modules may live in `src/events/` when their name starts with `_` or they sit in a
/// `lib/` or `components/` folder (a file of that name is no folder: `lib.tsx` names a family
/// or is refused).
fn is_helper(stem: &str) -> bool {
    let (folders, name) = stem.rsplit_once('/').unwrap_or(("", stem));
    name.starts_with('_')
        || folders.split('/').any(|folder| folder.starts_with('_') || folder == "lib" || folder == "components")
}

fn read_route(path: &str, family: Family, source: &str) -> (Option<Route>, Option<Value>, Vec<Diagnostic>) {
    let extracted = extract::extract(path, source, ExtractTarget::NamedConst("config"));
    let mut reader = RouteConfigReader {
        route: Route {
            file: path.to_owned(),
            family,
            shared: false,
            fallback_standalone: false,
            targets: None,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            timeout_declared: false,
            tools: Vec::new(),
        },
        diagnostics: Vec::new(),
    };
    for error in &extracted.errors {
        let diagnostic = match error.kind {
            // A route without `export const config` takes every default.
            ExtractErrorKind::MissingExport => continue,
            ExtractErrorKind::Syntax => error.to_diagnostic(path, Code::ModuleSyntax),
            // One meant but not exported (a `tools` narrowing ignored widens the hook).
            ExtractErrorKind::MisnamedExport => {
                Diagnostic { severity: Severity::Warning, ..error.to_diagnostic(path, Code::RouteConfig) }
            }
            _ => error.to_diagnostic(path, Code::RouteConfig),
        };
        reader.diagnostics.push(diagnostic);
    }
    if let Some(value) = &extracted.value {
        reader.config(value);
    }
    let RouteConfigReader { route, diagnostics } = reader;
    let ok = !crate::diagnostics::has_errors(&diagnostics);
    (ok.then_some(route), extracted.value, diagnostics)
}

fn is_empty_array(value: &Value) -> bool {
    matches!(&value.kind, ValueKind::Array(items) if items.is_empty())
}

/// Reads a route's `export const config` into its `route`, saying what is wrong.
struct RouteConfigReader {
    route: Route,
    diagnostics: Vec<Diagnostic>,
}

impl RouteConfigReader {
    fn config(&mut self, value: &Value) {
        let ValueKind::Object(properties) = &value.kind else {
            let message = format!("`config` must be an object, found {}", value.describe());
            return self.error(value, "", message, "write `export const config = { … }`");
        };
        for property in properties {
            let key_path = join_key("", &property.key);
            let item = &property.value;
            match property.key.as_str() {
                "runtime" => self.runtime(item, &key_path),
                "fallback" => self.fallback(item, &key_path),
                "timeoutMs" => self.timeout(item, &key_path),
                "targets" => self.targets(item, &key_path),
                "tools" => self.tools(item, &key_path),
                other => self.error(
                    item,
                    &key_path,
                    format!("unknown route config key `{other}`"),
                    &crate::diagnostics::suggesting(
                        other,
                        ["runtime", "fallback", "targets", "timeoutMs", "tools"],
                        "a route config takes runtime, fallback, targets, timeoutMs and tools",
                    ),
                ),
            }
        }
        if let Some(fallback) = value.get("fallback").filter(|_| self.route.fallback_standalone && !self.route.shared) {
            let warning =
                Diagnostic::warning(Code::RouteConfig, "`fallback: 'standalone'` does nothing on a standalone route");
            self.diagnostics.push(self.located(warning, fallback, "fallback").with_help(
                "a fallback answers for a shared route when no event runtime is live: add `runtime: 'shared'`, or \
                 remove `fallback`",
            ));
        }
    }

    fn runtime(&mut self, item: &Value, key_path: &str) {
        match &item.kind {
            ValueKind::String(runtime) if runtime == "standalone" || runtime == "shared" => {
                self.route.shared = runtime == "shared";
            }
            _ => self.error(
                item,
                key_path,
                "`runtime` must be 'standalone' or 'shared'".into(),
                "'standalone' renders the route in a Node process of its own per event; 'shared' in the plugin's \
                 event runtime, which its MCP server hosts",
            ),
        }
    }

    fn fallback(&mut self, item: &Value, key_path: &str) {
        match &item.kind {
            ValueKind::String(fallback) if fallback == "standalone" => self.route.fallback_standalone = true,
            _ => self.error(
                item,
                key_path,
                "`fallback` can only be 'standalone'".into(),
                "`fallback: 'standalone'` renders a shared route in its own process when no event runtime is live",
            ),
        }
    }

    fn timeout(&mut self, item: &Value, key_path: &str) {
        match &item.kind {
            // Node's timers hold at most 2^31 - 1 ms; a longer delay fires at once.
            ValueKind::Number(number) if number.as_u64().is_some_and(|ms| ms > 0 && ms <= i32::MAX as u64) => {
                self.route.timeout_ms = number.as_u64().unwrap_or_default() as u32;
                self.route.timeout_declared = true;
            }
            _ => self.error(
                item,
                key_path,
                "`timeoutMs` must be a positive whole number of milliseconds, at most 2147483647".into(),
                "write e.g. `timeoutMs: 5000` (the default)",
            ),
        }
    }

    fn targets(&mut self, item: &Value, key_path: &str) {
        if is_empty_array(item) {
            let help = "name a target, or remove `targets` to build the route for every selected host";
            return self.error(item, key_path, "`targets: []` selects no target".into(), help);
        }
        let Some(items) = self.string_list(item, key_path, "['claude']") else { return };
        let mut targets = Vec::new();
        for (path, target, name) in items {
            match Target::parse(name) {
                Some(parsed) => targets.push(parsed),
                None => {
                    let diagnostic = self.located(Target::unknown(name), target, &path);
                    self.diagnostics.push(diagnostic);
                }
            }
        }
        targets.sort_unstable();
        targets.dedup();
        self.route.targets = Some(targets);
    }

    fn tools(&mut self, item: &Value, key_path: &str) {
        let family = self.route.family;
        if !family.takes_tools() {
            let selecting: Vec<&str> = Family::ALL.iter().filter(|f| f.takes_tools()).map(|f| f.key()).collect();
            let help = format!("remove `tools`: only {} select tools", crate::diagnostics::and_list(&selecting));
            return self.error(item, key_path, format!("`tools` is not valid on {}", family.key()), &help);
        }
        if is_empty_array(item) {
            let help = "name the tools, or remove `tools` to run on every tool";
            return self.error(item, key_path, "`tools: []` selects no tool".into(), help);
        }
        let Some(items) = self.string_list(item, key_path, "['shell']") else { return };
        for (path, tool, text) in items {
            match ToolSelector::parse(text) {
                Some(selector) if !self.route.tools.contains(&selector) => self.route.tools.push(selector),
                Some(_) => {}
                None => {
                    let diagnostic = self.located(ToolSelector::unknown(text), tool, &path);
                    self.diagnostics.push(diagnostic);
                }
            }
        }
    }

    /// The strings of the array `item`, each with its JSON path and value; `None` when it is no
    /// array. What is not a string is said (`example` shows the form).
    fn string_list<'v>(
        &mut self,
        item: &'v Value,
        key_path: &str,
        example: &str,
    ) -> Option<Vec<(String, &'v Value, &'v str)>> {
        let message = format!("`{key_path}` must be an array of strings");
        let help = format!("write e.g. `{key_path}: {example}`");
        let ValueKind::Array(items) = &item.kind else {
            self.error(item, key_path, message, &help);
            return None;
        };
        let mut strings = Vec::with_capacity(items.len());
        for (index, value) in items.iter().enumerate() {
            let path = join_index(key_path, index);
            match &value.kind {
                ValueKind::String(text) => strings.push((path, value, text.as_str())),
                _ => self.error(value, &path, message.clone(), &help),
            }
        }
        Some(strings)
    }

    fn located(&self, diagnostic: Diagnostic, value: &Value, json_path: &str) -> Diagnostic {
        diagnostic.in_file(self.route.file.clone()).at(value.span).at_path(json_path)
    }

    fn error(&mut self, value: &Value, json_path: &str, message: String, help: &str) {
        let diagnostic = self.located(Diagnostic::error(Code::RouteConfig, message), value, json_path).with_help(help);
        self.diagnostics.push(diagnostic);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn discover_one(path: &'static str, source: &'static str) -> RoutesReturn {
        discover([path].into_iter(), |_| Ok(source))
    }

    /// Helpers sit in `lib/` or `components/` folders or are named `_…`; a file named `lib`
    /// is none.
    #[test]
    fn a_helper_is_in_a_helper_folder_or_named_so() {
        for helper in ["lib/format", "components/Policy", "tool/lib/x", "_shared", "tool/_x", "_private/x"] {
            assert!(is_helper(helper), "{helper}");
        }
        for stray in ["lib", "components", "tool/lib", "library/x", "helper"] {
            assert!(!is_helper(stray), "{stray}");
        }
    }

    #[test]
    fn a_route_named_module_in_a_slip_of_the_events_folder_is_warned_of() {
        let stray =
            ["src/event/session/end.tsx", "src/Events/stop.tsx", "events/session/end.ts", "Src/events/stop.tsx"];
        let fine = [
            "src/events/stop.tsx",
            "src/hooks/stop.ts",
            "src/event/helpers.ts",
            "lib/events/stop.tsx",
            "src/events-old/stop.tsx",
            "src/event/session/end.js",
        ];
        let help = stray_routes(["events/stop.ts"].into_iter()).remove(0).help;
        assert_eq!(help.as_deref(), Some("no host runs it there: move it to `src/events/stop.ts`"));
        let found = stray_routes(stray.iter().chain(&fine).copied());
        let warned: Vec<_> = found.iter().map(|d| (d.file.as_deref(), d.is_error())).collect();
        assert_eq!(warned, stray.map(|path| (Some(path), false)));
        assert_eq!(
            found[0].message,
            "`src/event/session/end.tsx` is named like a route, but routes live in `src/events/`"
        );
        assert_eq!(found[0].help.as_deref(), Some("no host runs it there: move it to `src/events/session/end.tsx`"));
    }

    #[test]
    fn a_route_file_names_its_family() {
        assert_eq!(family_of("src/events/tool/before.tsx"), Some(Ok(Family::ToolBefore)));
        assert_eq!(family_of("src/events/stop.ts"), Some(Ok(Family::Stop)));
        assert_eq!(family_of("src/events/model-switch/after.tsx"), Some(Ok(Family::ModelSwitchAfter)));
        assert_eq!(family_of("src/events/tool/befor.tsx"), Some(Err("tool/befor".into())));
        assert_eq!(family_of("src/hooks/stop.ts"), None);
        assert_eq!(misnamed_route("src/events/prompt/submit.js"), Some("src/events/prompt/submit.tsx".into()));
        assert_eq!(misnamed_route("src/events/stop.mts"), Some("src/events/stop.tsx".into()));
        assert_eq!(misnamed_route("src/events/tool/helpers.js"), None);
        assert_eq!(misnamed_route("src/events/stop.ts"), None);
        for key in [
            "src",
            "src/events",
            "src/events/stop.tsx",
            "src/events/tool",
            "src/events/stop.js",
            "src/events/tool/before.TSX",
        ] {
            assert!(may_hold_route(key), "{key}");
        }
        for key in ["srcs", "src/hooks", "src/events/.#stop.tsx", "src/events/node_modules", "src/events/tool/x.tsx"] {
            assert!(!may_hold_route(key), "{key}");
        }
        assert_eq!(misnamed_route("src/events/tool/before.TSX"), Some("src/events/tool/before.tsx".into()));
        let dropped = discover(["src/events/prompt/submit.js"].into_iter(), |_| Ok("export default () => null;"));
        assert!(dropped.routes.is_empty());
        assert_eq!(dropped.diagnostics.len(), 1, "a misnamed route is reported, not dropped");
        let twin =
            discover(["src/events/stop.js", "src/events/stop.tsx"].into_iter(), |_| Ok("export default () => null;"));
        assert_eq!(
            (twin.routes.len(), twin.diagnostics.len()),
            (1, 0),
            "a compiled twin beside its route is left alone"
        );
        let hidden = discover(["src/events/._stop.tsx", "src/events/.cache/x.ts"].into_iter(), |_| Ok(""));
        assert_eq!((hidden.routes.len(), hidden.diagnostics.len()), (0, 0), "hidden files are no routes");
    }

    #[test]
    fn route_config_is_read_statically() {
        let source = "export const config = { runtime: 'shared', fallback: 'standalone', targets: ['codex', 'claude'], timeoutMs: 30_000, tools: ['file.write'] } satisfies AgentEventRouteConfig;\nexport default async function Route() { return null; }\n";
        let found = discover_one("src/events/tool/after.tsx", source);
        assert!(found.diagnostics.is_empty(), "{:?}", found.diagnostics);
        let route = &found.routes[0];
        assert_eq!((route.shared, route.fallback_standalone, route.timeout_ms), (true, true, 30_000));
        assert_eq!(route.targets, Some(vec![Target::Claude, Target::Codex]));
    }

    #[test]
    fn bad_routes_are_located_errors() {
        let unknown = discover_one("src/events/tool/befor.tsx", "export default () => null;");
        assert_eq!(unknown.diagnostics[0].code, Code::UnknownRouteFamily);
        let bad = discover_one("src/events/stop.tsx", "const t = 5;\nexport const config = { timeoutMs: t };\n");
        let codes: Vec<_> = bad.diagnostics.iter().map(|d| (d.code, d.json_path.clone())).collect();
        assert_eq!(codes, [(Code::RouteConfig, Some("timeoutMs".into()))]);
        let tools = discover_one("src/events/stop.tsx", "export const config = { tools: ['shell'], retries: 2 };\n");
        let codes: Vec<_> = tools.diagnostics.iter().map(|d| (d.code, d.json_path.clone())).collect();
        assert_eq!(codes, [(Code::RouteConfig, Some("tools".into())), (Code::RouteConfig, Some("retries".into()))]);
        let empty = discover_one("src/events/tool/before.tsx", "export const config = { tools: [] };\n");
        let codes: Vec<_> = empty.diagnostics.iter().map(|d| (d.code, d.json_path.clone())).collect();
        assert_eq!(codes, [(Code::RouteConfig, Some("tools".into()))], "no tool, not every tool");
        let pattern =
            discover_one("src/events/tool/before.tsx", "export const config = { tools: ['claude:Edit|Write'] };\n");
        let found: Vec<_> = pattern.diagnostics.iter().map(|d| (d.message.as_str(), d.help.as_deref())).collect();
        let help = "a selector names one tool exactly, not a matcher pattern: write 'claude:Edit', 'claude:Write'";
        assert_eq!(found, [("unknown tool selector `claude:Edit|Write`", Some(help))]);
        // An unknown target or selector is said as in the project config, with the near miss.
        let typo = discover_one("src/events/tool/before.tsx", "export const config = { targets: [5, 'claud'] };\n");
        let found: Vec<_> =
            typo.diagnostics.iter().map(|d| (d.code, d.json_path.as_deref(), d.help.as_deref())).collect();
        let help = "did you mean `claude`? targets are claude, codex, cursor, portable";
        let not_a_string = Some("write e.g. `targets: ['claude']`");
        assert_eq!(
            found,
            [
                (Code::RouteConfig, Some("targets[0]"), not_a_string),
                (Code::UnknownTarget, Some("targets[1]"), Some(help))
            ]
        );
        let nowhere = discover_one("src/events/stop.tsx", "export const config = { targets: [] };\n");
        assert_eq!(nowhere.diagnostics[0].json_path.as_deref(), Some("targets"), "no host, not every host");
        // Node's timers hold at most 2^31 - 1 ms.
        let longest = discover_one("src/events/stop.tsx", "export const config = { timeoutMs: 2147483647 };\n");
        assert_eq!(longest.routes[0].timeout_ms, 2_147_483_647);
        let longer = discover_one("src/events/stop.tsx", "export const config = { timeoutMs: 2147483648 };\n");
        assert_eq!(longer.diagnostics[0].json_path.as_deref(), Some("timeoutMs"));
        let twice =
            discover(["src/events/stop.ts", "src/events/stop.tsx"].into_iter(), |_| Ok("export default () => null;"));
        assert_eq!(twice.diagnostics[0].code, Code::DuplicateRoute);
        let defaults = discover_one("src/events/session/end.tsx", "export default async () => null;");
        assert_eq!(defaults.routes[0].timeout_ms, DEFAULT_TIMEOUT_MS);
    }

    /// A near miss is suggested (a family, a config key), and a fallback that can never
    /// answer is a warning: the route is built all the same.
    #[test]
    fn near_misses_are_suggested_and_a_useless_fallback_is_said() {
        let helps = |routes: &RoutesReturn| -> Vec<String> {
            routes.diagnostics.iter().map(|d| d.help.clone().unwrap_or_default()).collect()
        };
        let family = discover_one("src/events/tools/before.tsx", "export default () => null;");
        assert!(helps(&family)[0].starts_with("did you mean `tool/before`? "), "{:?}", helps(&family));
        let key = discover_one("src/events/stop.tsx", "export const config = { timeout: 5000 };\n");
        assert!(helps(&key)[0].starts_with("did you mean `timeoutMs`? "), "{:?}", helps(&key));
        let fallback = discover_one("src/events/stop.tsx", "export const config = { fallback: 'standalone' };\n");
        let found: Vec<_> = fallback.diagnostics.iter().map(|d| (d.severity, d.json_path.as_deref())).collect();
        assert_eq!(found, [(crate::diagnostics::Severity::Warning, Some("fallback"))]);
        assert_eq!(fallback.routes.len(), 1, "a warning drops no route");
    }
}
