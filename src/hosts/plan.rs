//! Planning one host: which hooks it receives, under which native event and matcher, with
//! which command; and every reason a hook cannot be honoured there.

use super::{DocumentStyle, HookSupport, HostTable, ToolNameFit};
use crate::diagnostics::{Code, Diagnostic};
use crate::model::{Handler, Hook, Model, Target, ToolSelector, Trigger};
use crate::output::OutputFile;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HostPlan {
    pub target: Target,
    pub hooks: Vec<PlannedHook>,
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PlannedHook {
    pub hook_id: String,
    pub hook_name: String,
    pub trigger: Trigger,
    pub native_event: &'static str,
    pub matcher: Option<String>,
    pub timeout: Option<u32>,
    pub command: String,
    /// Artifact path of the compiled wrapper; `None` for prebuilt handlers.
    pub wrapper: Option<String>,
    /// How an event route runs on this host; `None` for config hooks.
    pub route: Option<RouteForm>,
}

/// How a route's wrapper runs on one host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RouteForm {
    /// Rendered inside the wrapper.
    Standalone,
    /// Forwarded to the shared runtime; `fallback` also bundles the standalone form, run when
    /// no runtime is live.
    Shared { fallback: bool },
}

impl RouteForm {
    /// Where the route renders, as the manifest's hook index and `inspect --json` say it.
    pub fn runtime(self) -> &'static str {
        match self {
            RouteForm::Standalone => "standalone",
            RouteForm::Shared { .. } => "shared",
        }
    }

    /// For a shared route, whether a standalone form answers when no runtime is live.
    pub fn fallback(self) -> Option<bool> {
        match self {
            RouteForm::Standalone => None,
            RouteForm::Shared { fallback } => Some(fallback),
        }
    }
}

/// Artifact path of the wrapper of `hook_name` for `target`.
pub fn wrapper_path(hook_name: &str, target: Target) -> String {
    format!("hooks/{hook_name}.{}.mjs", target.as_str())
}

/// Plans `model` for the host described by `table`.
pub fn plan(table: &HostTable, model: &Model) -> HostPlan {
    let target = table.target;
    let mut plan = HostPlan { target, hooks: Vec::new(), diagnostics: Vec::new() };
    for hook in model.hooks.iter().filter(|hook| hook.reaches(target)) {
        if let Some(planned) = plan_hook(table, hook, &mut plan.diagnostics) {
            plan.hooks.push(planned);
        }
    }
    plan
}

/// Whether a host without `hook`'s event refuses it (AB4204) rather than just not receiving
/// it. A route family a host lacks does not go there unless the route names the host. A
/// config event is a promise to every host that takes hooks, as in the original, where each
/// host refuses an event it cannot map; `workspaceOpen` is the one none has as a config hook.
pub fn refuses_missing_event(table: &HostTable, hook: &Hook) -> bool {
    hook.names_target(table.target) || (matches!(hook.trigger, Trigger::Config(_)) && table.hooks.is_some())
}

fn plan_hook(table: &HostTable, hook: &Hook, diagnostics: &mut Vec<Diagnostic>) -> Option<PlannedHook> {
    let target = table.target;
    let row = table.hooks.as_ref().and_then(|hooks| hooks.row_for(hook.trigger));
    let (Some(hooks), Some(row)) = (&table.hooks, row) else {
        if refuses_missing_event(table, hook) {
            let (path, help) = if hook.names_target(target) {
                (hook.json_path("targets"), format!("remove `{}` from {}", target.as_str(), hook.targets_named()))
            } else {
                (
                    hook.config_path.clone(),
                    format!("limit {} to hosts with {}", hook.targets_named(), hook.trigger.key()),
                )
            };
            diagnostics.push(
                Diagnostic::error(
                    Code::EventNotSupportedByHost,
                    format!(
                        "{} cannot receive {} hook `{}`: it has no such event",
                        table.display_name,
                        hook.trigger.key(),
                        hook.name
                    ),
                )
                .in_file(hook.source_file.clone())
                .at_path(path)
                .for_host(target)
                .with_help(help),
            );
        }
        return None;
    };
    let route = route_form(table, hook, diagnostics).ok()?;
    diagnostics.extend(capped_budget(table, hooks, hook));
    let matcher = matcher(table, hooks, hook, diagnostics).ok()?;
    let root = hooks.root_token;
    let (command, wrapper) = match &hook.handler {
        Handler::Module(_) => {
            let wrapper = wrapper_path(&hook.name, target);
            (format!("node \"{root}/{wrapper}\""), Some(wrapper))
        }
        Handler::Prebuilt { artifact_path, .. } => {
            let mut command = format!("node \"{root}/{artifact_path}\"");
            for arg in &hook.args {
                command.push(' ');
                command.push_str(arg);
            }
            (command, None)
        }
    };
    Some(PlannedHook {
        hook_id: hook.id.clone(),
        hook_name: hook.name.clone(),
        trigger: hook.trigger,
        native_event: row.native,
        matcher,
        timeout: hook.timeout,
        command,
        wrapper,
        route,
    })
}

/// A hook this host cannot honour; the diagnostic that says why is pushed.
#[derive(Debug, PartialEq, Eq)]
struct Refused;

/// Where a route runs on this host (`None` for a config hook); refused where a shared route
/// cannot run here at all (AB4817): the host runs no MCP server, or runs the route's family
/// once it has stopped them.
fn route_form(table: &HostTable, hook: &Hook, diagnostics: &mut Vec<Diagnostic>) -> Result<Option<RouteForm>, Refused> {
    let Some(route) = &hook.route else { return Ok(None) };
    if !route.shared {
        return Ok(Some(RouteForm::Standalone));
    }
    let host = table.display_name;
    let why_not = match &table.mcp {
        None => format!("{host} runs no generated MCP server to host the shared runtime"),
        Some(mcp) if hook.trigger.family().is_some_and(|family| mcp.runs_after_stop.contains(&family)) => {
            let native =
                table.hooks.as_ref().and_then(|hooks| hooks.row_for(hook.trigger)).map_or("it", |row| row.native);
            format!("{host} stops the plugin's MCP servers, and the shared runtime with them, before it runs {native}")
        }
        Some(_) => return Ok(Some(RouteForm::Shared { fallback: route.fallback })),
    };
    let family = hook.trigger.key();
    let diagnostic = if route.fallback {
        Diagnostic::warning(
            Code::SharedRuntimeFallback,
            format!("{family} asks for the shared runtime; on {host} it runs standalone (its fallback)"),
        )
        .with_help(why_not)
    } else {
        Diagnostic::error(
            Code::SharedRuntimeUnavailable,
            format!("{family} needs the shared runtime, which cannot answer it on {host}: {why_not}"),
        )
        .with_help(format!(
            "add `fallback: 'standalone'`, use `runtime: 'standalone'`, or leave `{}` out of the route's targets",
            table.target.as_str()
        ))
    };
    diagnostics.push(diagnostic.in_file(hook.source_file.clone()).at_path("runtime").for_host(table.target));
    if route.fallback { Ok(Some(RouteForm::Standalone)) } else { Err(Refused) }
}

/// A warning where the host cuts `hook` off before the budget its route's config sets is
/// spent (the default's, set by no one, is said in the docs).
fn capped_budget(table: &HostTable, hooks: &HookSupport, hook: &Hook) -> Option<Diagnostic> {
    let budget = hook.route.as_ref().filter(|route| route.timeout_declared)?.timeout_ms;
    let cap = hooks.capped.iter().find(|cap| Some(cap.family) == hook.trigger.family() && budget > cap.ms)?;
    let (host, native) = (table.display_name, hooks.row(cap.family).map_or("", |row| row.native));
    let diagnostic = Diagnostic::warning(
        Code::RouteBudgetCapped,
        format!(
            "{host} gives {native} hooks {} s in all, whatever their timeout: {}'s `timeoutMs` ({budget} ms) would \
             be cut short",
            f64::from(cap.ms) / 1000.0,
            hook.trigger.key(),
        ),
    )
    .with_help(format!(
        "declare `timeoutMs: {}` or less in the route's config (Node's start takes part of it), or have users raise \
         the limit with {}",
        cap.ms, cap.raised_by
    ));
    Some(diagnostic.in_file(hook.source_file.clone()).at_path("timeoutMs").for_host(table.target))
}

/// The host matcher of a hook: `None` when the hook selects no tools (matches all); refused
/// where a selector has no match on this host.
fn matcher(
    table: &HostTable,
    hooks: &HookSupport,
    hook: &Hook,
    diagnostics: &mut Vec<Diagnostic>,
) -> Result<Option<String>, Refused> {
    if hook.tools.is_empty() {
        return Ok(None);
    }
    let target = table.target;
    let mut patterns: Vec<String> = Vec::new();
    let mut unmapped = false;
    for (index, selector) in hook.tools.iter().enumerate() {
        match selector {
            ToolSelector::Canonical(tool) => match hooks.selector(*tool) {
                Some(pattern) => patterns.push(pattern.to_owned()),
                None => {
                    unmapped = true;
                    diagnostics.push(
                        Diagnostic::error(
                            Code::UnmappedSelector,
                            format!(
                                "{} has no tool for selector `{}` of hook `{}`",
                                table.display_name,
                                tool.as_str(),
                                hook.name
                            ),
                        )
                        .in_file(hook.source_file.clone())
                        .at_path(hook.json_path(&format!("tools[{index}]")))
                        .for_host(target)
                        .with_help(format!(
                            "every selector must map on every targeted host: drop `{}`, or restrict {}",
                            tool.as_str(),
                            hook.targets_named()
                        )),
                    );
                }
            },
            ToolSelector::Native { target: selector_target, name } if *selector_target == target => {
                // Tool names are matched case-sensitively: `claude:bash` would match no tool.
                let meant = hooks.named_tools().find(|(known, _)| known != name && known.eq_ignore_ascii_case(name));
                if let Some((meant, canonical)) = meant {
                    unmapped = true;
                    diagnostics.push(
                        Diagnostic::error(
                            Code::UnknownSelector,
                            format!(
                                "{} has no tool `{name}` (hook `{}`): its tool is `{meant}`",
                                table.display_name, hook.name
                            ),
                        )
                        .in_file(hook.source_file.clone())
                        .at_path(hook.json_path(&format!("tools[{index}]")))
                        .for_host(target)
                        .with_help(format!(
                            "did you mean `{}:{meant}`? a host matches tool names exactly; or the canonical `{}`, \
                             which names it on every host",
                            target.as_str(),
                            canonical.as_str()
                        )),
                    );
                    continue;
                }
                if let Some(diagnostic) = unfired_tool(table, hooks, hook, name) {
                    let refused = diagnostic.is_error();
                    diagnostics.push(diagnostic.at_path(hook.json_path(&format!("tools[{index}]"))));
                    if refused {
                        unmapped = true;
                        continue;
                    }
                }
                patterns.push(format!("^{}$", escape_regex(name)));
            }
            ToolSelector::Native { .. } => {}
        }
    }
    if unmapped {
        return Err(Refused);
    }
    if patterns.is_empty() {
        diagnostics.push(
            Diagnostic::error(
                Code::NoApplicableSelector,
                format!("hook `{}` selects tools but none of them applies to {}", hook.name, table.display_name),
            )
            .in_file(hook.source_file.clone())
            .at_path(hook.json_path("tools"))
            .for_host(target)
            .with_help(format!(
                "add a selector for {} (canonical, or `{}:<tool>`), or remove it from {}",
                table.display_name,
                target.as_str(),
                hook.targets_named()
            )),
        );
        return Err(Refused);
    }
    patterns.dedup();
    Ok(Some(if patterns.len() == 1 { patterns.remove(0) } else { format!("(?:{})", patterns.join("|")) }))
}

/// What the host's documentation says of a native selector's tool `name`, where it is not a
/// tool the host fires tool hooks for: an error where it never does (Codex's internal
/// `exec_command`; `mcp__memory`, which names no tool), a warning where the documentation does
/// not name it (a host newer than its contract may).
fn unfired_tool(table: &HostTable, hooks: &HookSupport, hook: &Hook, name: &str) -> Option<Diagnostic> {
    let host = table.display_name;
    let (tools, mcp) = (&hooks.tools, hooks.tools.mcp.written);
    let diagnostic = match hooks.tools.fit(name) {
        ToolNameFit::Documented => return None,
        ToolNameFit::MalformedMcp => Diagnostic::error(
            Code::NativeToolNeverMatched,
            format!("`{name}` names no tool {host} has (hook `{}`): its MCP tools are named `{mcp}`", hook.name),
        )
        .with_help(format!(
            "name the tool, `{}:{mcp}`, or select every MCP tool with the canonical `mcp`",
            table.target.as_str()
        )),
        ToolNameFit::NeverFired => Diagnostic::error(
            Code::NativeToolNeverMatched,
            format!("{host} fires no tool hook for `{name}` (hook `{}`): the hook would never run for it", hook.name),
        )
        .with_help(format!(
            "{host} fires tool hooks for {}{}; drop the selector, or choose one of those",
            tools.listed(),
            if tools.only_documented { " only" } else { "" }
        )),
        ToolNameFit::Undocumented => Diagnostic::warning(
            Code::UndocumentedNativeTool,
            format!(
                "`{name}` is no tool {host} is documented to fire tool hooks for (hook `{}`, contract {})",
                hook.name, table.contract_revision
            ),
        )
        .with_help(format!(
            "its documented tools are {}; a name it does not give a tool never matches (a newer {host}'s may)",
            tools.listed()
        )),
    };
    Some(diagnostic.in_file(hook.source_file.clone()).for_host(table.target))
}

fn escape_regex(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\^$.|?*+()[]{}/-".contains(c) {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

impl HostPlan {
    /// Whether a hook forwards to the shared runtime here, so the host must run it.
    pub fn hosts_runtime(&self) -> bool {
        self.hooks.iter().any(|h| matches!(h.route, Some(RouteForm::Shared { .. })))
    }

    /// The host's hook document, in the host's style.
    pub fn hook_document(&self) -> OutputFile {
        let table = super::table(self.target);
        let hooks = table.hooks.as_ref().expect("only hosts with hooks write hook documents");
        let mut events = serde_json::Map::new();
        for planned in &self.hooks {
            let mut command = serde_json::Map::new();
            command.insert("command".into(), planned.command.clone().into());
            if let Some(timeout) = planned.timeout {
                command.insert("timeout".into(), timeout.into());
            }
            let entry = match hooks.document_style {
                DocumentStyle::Grouped => {
                    command.insert("type".into(), "command".into());
                    let mut group = serde_json::Map::new();
                    group.insert("hooks".into(), serde_json::Value::Array(vec![command.into()]));
                    if let Some(matcher) = &planned.matcher {
                        group.insert("matcher".into(), matcher.clone().into());
                    }
                    serde_json::Value::Object(group)
                }
                DocumentStyle::Flat => {
                    if let Some(matcher) = &planned.matcher {
                        command.insert("matcher".into(), matcher.clone().into());
                    }
                    serde_json::Value::Object(command)
                }
            };
            let list = events.entry(planned.native_event).or_insert_with(|| serde_json::Value::Array(Vec::new()));
            list.as_array_mut().expect("event entries are arrays").push(entry);
        }
        let mut document = serde_json::Map::new();
        document.insert("hooks".into(), serde_json::Value::Object(events));
        if hooks.document_style == DocumentStyle::Flat {
            document.insert("version".into(), 1.into());
        }
        OutputFile::json(hooks.document_path, &serde_json::Value::Object(document))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::model::{Family, HookEvent};

    /// A host with hooks but no MCP servers, which no real table is (yet).
    static NO_MCP: HostTable = HostTable { mcp: None, ..test_host() };

    const fn test_host() -> HostTable {
        HostTable {
            target: Target::Claude,
            display_name: "Test Host",
            contract_revision: "test",
            manifest_path: |_| "plugin.json",
            prefers_root_agent_plugins: false,
            hooks: None,
            check_name: |_| Ok(()),
            documents: |_, _, _| Vec::new(),
            mcp: None,
        }
    }

    fn shared_route(fallback: bool) -> Hook {
        Hook {
            id: "hook:event-route:stop".into(),
            name: "event-route-stop".into(),
            trigger: Trigger::Route(Family::Stop),
            route: Some(crate::model::RouteRun { timeout_ms: 5000, timeout_declared: false, shared: true, fallback }),
            handler: Handler::Module("src/events/stop.ts".into()),
            targets: None,
            tools: Vec::new(),
            timeout: Some(6),
            args: Vec::new(),
            source_file: "src/events/stop.ts".into(),
            config_path: String::new(),
        }
    }

    #[test]
    fn a_shared_route_without_mcp_falls_back_with_a_warning_or_fails() {
        let mut diagnostics = Vec::new();
        assert_eq!(route_form(&NO_MCP, &shared_route(true), &mut diagnostics), Ok(Some(RouteForm::Standalone)));
        assert_eq!(route_form(&NO_MCP, &shared_route(false), &mut diagnostics), Err(Refused));
        let found: Vec<_> = diagnostics.iter().map(|d| (d.code, d.is_error(), d.json_path.as_deref())).collect();
        assert_eq!(
            found,
            [
                (Code::SharedRuntimeFallback, false, Some("runtime")),
                (Code::SharedRuntimeUnavailable, true, Some("runtime"))
            ]
        );
    }

    #[test]
    fn a_shared_route_runs_shared_where_the_host_runs_mcp_servers() {
        let mut diagnostics = Vec::new();
        let form = route_form(&super::super::claude::TABLE, &shared_route(false), &mut diagnostics);
        assert_eq!((form, diagnostics.len()), (Ok(Some(RouteForm::Shared { fallback: false })), 0));
    }

    /// A host's tool named in another case would match no tool (names match exactly): refused,
    /// naming the tool, and the canonical selector that names it.
    #[test]
    fn a_native_selector_in_the_wrong_case_is_refused() {
        let claude = &super::super::claude::TABLE;
        let hook = |name: &str| Hook {
            trigger: Trigger::Config(HookEvent::BeforeTool),
            route: None,
            tools: vec![ToolSelector::Native { target: Target::Claude, name: name.into() }],
            ..shared_route(false)
        };
        let mut diagnostics = Vec::new();
        assert_eq!(
            matcher(claude, claude.hooks.as_ref().unwrap(), &hook("Bash"), &mut diagnostics),
            Ok(Some("^Bash$".into()))
        );
        assert_eq!(
            matcher(claude, claude.hooks.as_ref().unwrap(), &hook("mcp__memory__read"), &mut diagnostics),
            Ok(Some("^mcp__memory__read$".into()))
        );
        assert!(diagnostics.is_empty());
        assert_eq!(matcher(claude, claude.hooks.as_ref().unwrap(), &hook("bash"), &mut diagnostics), Err(Refused));
        let [refused] = diagnostics.as_slice() else { panic!("{diagnostics:?}") };
        let help = refused.help.as_deref().unwrap();
        assert_eq!(refused.code, Code::UnknownSelector);
        assert!(help.starts_with("did you mean `claude:Bash`?") && help.contains("the canonical `shell`"), "{help}");
    }

    /// A native tool a host never fires tool hooks for is refused (Codex's internal names,
    /// Claude Code's `EndConversation`, an MCP name with no tool), one its documentation does
    /// not name warned of and kept (a newer host may have it); MCP names take the host's form.
    #[test]
    fn a_native_selector_the_host_never_fires_is_refused_and_an_undocumented_one_warned_of() {
        let outcome = |target: Target, name: &str| {
            let table = super::super::table(target);
            let hook = Hook {
                trigger: Trigger::Config(HookEvent::BeforeTool),
                route: None,
                tools: vec![ToolSelector::Native { target, name: name.into() }],
                ..shared_route(false)
            };
            let mut diagnostics = Vec::new();
            let matched = matcher(table, table.hooks.as_ref().unwrap(), &hook, &mut diagnostics);
            let codes: Vec<&str> = diagnostics.iter().map(|d| d.code.as_str()).collect();
            (matched.is_ok(), codes.join(","))
        };
        let refused = (false, "AB4206".to_owned());
        let warned = (true, "AB4207".to_owned());
        let fine = (true, String::new());
        for name in ["exec_command", "shell", "write_stdin", "mcp__memory", "mcp____b"] {
            assert_eq!(outcome(Target::Codex, name), refused, "codex:{name}");
        }
        // (What the real Codex fires hooks for, documented or not.)
        for name in ["Bash", "apply_patch", "Edit", "view_image", "spawn_agent", "mcp__memory__search", "mcp__a____b"] {
            assert_eq!(outcome(Target::Codex, name), fine, "codex:{name}");
        }
        for name in ["web_search", "Read"] {
            assert_eq!(outcome(Target::Codex, name), warned, "codex:{name}");
        }
        for name in ["EndConversation", "mcp__memory", "mcp____x", "mcp__"] {
            assert_eq!(outcome(Target::Claude, name), refused, "claude:{name}");
        }
        assert_eq!(outcome(Target::Claude, "WebSearch"), fine);
        assert_eq!(outcome(Target::Claude, "Frobnicate"), warned);
        assert_eq!(outcome(Target::Cursor, "Bash"), warned);
        for name in ["Shell", "Delete", "MCP:search", "MCP:server:search"] {
            assert_eq!(outcome(Target::Cursor, name), fine, "cursor:{name}");
        }
        assert_eq!(outcome(Target::Cursor, "MCP:"), refused);
    }

    /// Claude Code cuts every `SessionEnd` hook off at 1.5 s: a `session/end` route with a
    /// longer budget is warned of there, and nowhere else, nor with a budget that fits.
    #[test]
    fn a_route_budget_longer_than_the_host_allows_is_warned_of() {
        let warned = |target: Target, family: Family, timeout_ms: u32| {
            let table = super::super::table(target);
            let hook = Hook {
                trigger: Trigger::Route(family),
                route: Some(crate::model::RouteRun {
                    timeout_ms,
                    timeout_declared: true,
                    shared: false,
                    fallback: false,
                }),
                ..shared_route(false)
            };
            capped_budget(table, table.hooks.as_ref().unwrap(), &hook).map(|d| (d.code, d.is_error(), d.message))
        };
        let (code, error, message) = warned(Target::Claude, Family::SessionEnd, 5000).unwrap();
        assert_eq!((code, error), (Code::RouteBudgetCapped, false));
        assert!(message.starts_with("Claude Code gives SessionEnd hooks 1.5 s in all"), "{message}");
        assert!(message.contains("`timeoutMs` (5000 ms)"), "{message}");
        assert_eq!(warned(Target::Claude, Family::SessionEnd, 1500), None);
        let undeclared = Hook {
            trigger: Trigger::Route(Family::SessionEnd),
            route: Some(crate::model::RouteRun {
                timeout_ms: 5000,
                timeout_declared: false,
                shared: false,
                fallback: false,
            }),
            ..shared_route(false)
        };
        let claude = super::super::table(Target::Claude);
        assert!(
            capped_budget(claude, claude.hooks.as_ref().unwrap(), &undeclared).is_none(),
            "the default's is said in the docs"
        );
        assert_eq!(warned(Target::Claude, Family::Stop, 60_000), None);
        assert_eq!(warned(Target::Cursor, Family::SessionEnd, 5000), None);
    }

    #[test]
    fn native_names_are_escaped_for_regex_matchers() {
        assert_eq!(escape_regex("WebSearch"), "WebSearch");
        assert_eq!(escape_regex("mcp__a.b"), "mcp__a\\.b");
    }
}
