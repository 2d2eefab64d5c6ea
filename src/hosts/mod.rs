//! Hosts as data: one table per host, plus the small code that writes its documents.
//!
//! A [`HostTable`] says everything the compiler knows about a host: its native event names,
//! the envelope it sends for each, how each outcome is written back, the tool selector
//! matchers, the command root token and where its documents live. Planning
//! ([`plan::plan`]), the runtime spec ([`spec`]) and the event matrix ([`matrix`]) are
//! generic over the table.
//!
//! Architecture invariant: outside this folder no code matches on a host; inside it, only
//! each host's own module knows that host's manifest fields.

pub mod checks;
mod claude;
mod codex;
mod cursor;
pub mod declarations;
pub mod matrix;
pub mod plan;
mod portable;
pub mod spec;

use crate::diagnostics::{Code, Diagnostic, and_list};
use crate::model::{CanonicalTool, Family, Model, Target, Trigger};
use crate::output::OutputFile;

pub use plan::{HostPlan, PlannedHook, RouteForm};

/// Every host, in target name order.
pub static HOSTS: [&HostTable; 4] = [&claude::TABLE, &codex::TABLE, &cursor::TABLE, &portable::TABLE];

pub fn table(target: Target) -> &'static HostTable {
    HOSTS.iter().find(|t| t.target == target).expect("every target has a table")
}

pub struct HostTable {
    pub target: Target,
    /// For messages: "Claude Code".
    pub display_name: &'static str,
    /// The host release this table was checked against (the runtime's host contract revision).
    pub contract_revision: &'static str,
    /// Where the host's plugin manifest goes, given every selected target.
    pub manifest_path: fn(&[Target]) -> &'static str,
    /// Whether the host loads an Agent Plugins manifest found at the plugin root
    /// (`plugin.json`) in place of its own: the portable one then goes elsewhere.
    pub prefers_root_agent_plugins: bool,
    /// `None` for hosts without hooks (Agent Plugins 1.0.0).
    pub hooks: Option<HookSupport>,
    /// Whether the host accepts `name` as a plugin name; `Err` says why not.
    pub check_name: fn(&str) -> Result<(), String>,
    /// Writes the host's manifests and documents for a planned build, given whether the
    /// artifact holds the shared runtime (some host's plan runs it).
    pub documents: fn(&Model, &HostPlan, bool) -> Vec<OutputFile>,
    /// `None` for hosts that cannot run the plugin's generated MCP server (no shared runtime).
    pub mcp: Option<McpSupport>,
}

/// How a host runs the plugin's MCP servers, which host the shared event runtime.
pub struct McpSupport {
    /// Where the host's MCP document goes in the composite root.
    pub document_path: &'static str,
    /// Whether the manifest names the document (`mcpServers`). Such hosts also get the
    /// document, empty, whenever another host's runtime is emitted: the pointer replaces their
    /// folder discovery, which would otherwise start another host's server (`.mcp.json`).
    pub manifest_pointer: bool,
    /// How a server's script argument reaches the artifact: an absolute root token, or `None`
    /// for paths relative to a `cwd` of the plugin root.
    pub root_token: Option<&'static str>,
    /// Whether a server entry names its transport (`"type": "stdio"`); Cursor's have no
    /// `type` and infer it from `command` or `url`.
    pub names_transport: bool,
    /// The families the host runs once it has stopped the plugin's MCP servers, and the
    /// shared runtime with them: a shared route there never reaches it.
    pub runs_after_stop: &'static [Family],
    /// The families the host may run while it is still starting the plugin's MCP servers: a
    /// shared route there waits a moment for the runtime to listen (`STARTUP_WAIT_MS`).
    pub runs_while_starting: &'static [Family],
}

/// How long a shared route's wrapper waits for a runtime that may still be starting: Claude
/// Code's took 250 ms from its start to listening beside a `SessionStart` hook, which had
/// given up after 160 ms. At most half the route's budget.
pub const STARTUP_WAIT_MS: u32 = 3000;

/// The one error for a plugin name some of `targets` refuse, naming every host that
/// refuses it and why (one mistake said once, not once per host), or `None`.
pub fn check_plugin_name(name: &str, targets: &[Target]) -> Option<Diagnostic> {
    // The refusing hosts, grouped by reason, in target order.
    let mut refusals: Vec<(String, Vec<&HostTable>)> = Vec::new();
    for table in targets.iter().map(|&target| table(target)) {
        let Err(reason) = (table.check_name)(name) else { continue };
        match refusals.iter_mut().find(|(known, _)| *known == reason) {
            Some((_, tables)) => tables.push(table),
            None => refusals.push((reason, vec![table])),
        }
    }
    let names = |tables: &[&HostTable]| and_list(&tables.iter().map(|t| t.display_name).collect::<Vec<_>>());
    let refusing: Vec<&HostTable> = refusals.iter().flat_map(|(_, tables)| tables.iter().copied()).collect();
    let why = match refusals.as_slice() {
        [] => return None,
        [(reason, _)] => reason.clone(),
        _ => refusals
            .iter()
            .map(|(reason, tables)| format!("{}: {reason}", names(tables)))
            .collect::<Vec<_>>()
            .join("; "),
    };
    let verb = if refusing.len() == 1 { "does" } else { "do" };
    let diagnostic = Diagnostic::error(
        Code::InvalidPluginName,
        format!("{} {verb} not accept the plugin name `{name}`: {why}", names(&refusing)),
    )
    .at_path("plugin.name")
    .with_help(format!(
        "rename the plugin: lowercase kebab-case (`^[a-z0-9]+(-[a-z0-9]+)*$`), at most 64 characters, and none Claude \
         Code reserves ({}), satisfies every host",
        claude::reserved_names()
    ));
    Some(match refusing[..] {
        [only] => diagnostic.for_host(only.target),
        _ => diagnostic,
    })
}

/// Artifact path of the shared event runtime (the generated MCP server).
pub const RUNTIME_PATH: &str = "mcp/event-runtime.mjs";
/// The runtime's name in every host's MCP document (and its `serverInfo`): the plugin's
/// own, since Codex keeps the servers of all installed plugins by name alone, and starts one
/// of two that share it.
pub fn runtime_server_name(plugin: &str) -> String {
    format!("{plugin}-event-runtime")
}

impl McpSupport {
    /// The host's MCP document for `plan`, or `None` when it has nothing to say: empty where
    /// the host runs no route in the shared runtime but another does (`runtime_in_artifact`)
    /// and the manifest points at it, whose pointer keeps the host off the other's document.
    fn document(&self, model: &Model, plan: &HostPlan, runtime_in_artifact: bool) -> Option<OutputFile> {
        let mut servers = serde_json::Map::new();
        if plan.hosts_runtime() {
            servers.insert(runtime_server_name(&model.name), self.runtime_server(plan.target));
        } else if !(self.manifest_pointer && runtime_in_artifact) {
            return None;
        }
        Some(OutputFile::json(self.document_path, &serde_json::json!({ "mcpServers": servers })))
    }

    /// The entry of the shared runtime's server in the host's MCP document, for `target`.
    pub fn runtime_server(&self, target: Target) -> serde_json::Value {
        let args = [self.script_arg(RUNTIME_PATH), "--target".into(), target.as_str().into()];
        let mut entry = serde_json::json!({ "command": "node", "args": args });
        if self.names_transport {
            entry["type"] = "stdio".into();
        }
        if self.root_token.is_none() {
            entry["cwd"] = "./".into();
        }
        entry
    }

    /// How a server's script argument names `path` in the artifact.
    fn script_arg(&self, path: &str) -> String {
        match self.root_token {
            Some(root) => format!("{root}/{path}"),
            None => format!("./{path}"),
        }
    }
}

/// How a plugin manifest names a document at `path` in the composite root.
pub fn pointer_to(path: &str) -> String {
    format!("./{path}")
}

/// The MCP document of `table`'s host, if any, after writing into its plugin `manifest` the
/// pointers the host finds its documents by (`hooks`, `mcpServers`), as its table says.
fn linked_documents(
    table: &HostTable,
    (model, plan, runtime_in_artifact): (&Model, &HostPlan, bool),
    manifest: &mut serde_json::Value,
) -> Option<OutputFile> {
    if let Some(hooks) = table.hooks.as_ref().filter(|hooks| hooks.manifest_pointer) {
        manifest["hooks"] = pointer_to(hooks.document_path).into();
    }
    let mcp = table.mcp.as_ref()?;
    let document = mcp.document(model, plan, runtime_in_artifact)?;
    if mcp.manifest_pointer {
        manifest["mcpServers"] = pointer_to(&document.path).into();
    }
    Some(document)
}

pub struct HookSupport {
    /// Expands to the installed plugin's directory inside hook commands.
    pub root_token: &'static str,
    /// Where the hook document goes in the composite root.
    pub document_path: &'static str,
    /// Whether the host's plugin manifest names the document (`"hooks": "./…"`), as Codex and
    /// Cursor need it to; Claude Code loads `hooks/hooks.json` by itself.
    pub manifest_pointer: bool,
    pub document_style: DocumentStyle,
    /// The envelope key that names the event.
    pub event_key: &'static str,
    pub events: &'static [EventRow],
    /// Canonical selector → native matcher pattern (a regex); `None` = the host has no such tool.
    pub selectors: &'static [(CanonicalTool, Option<&'static str>)],
    /// The names the host gives tool hooks, which native selectors are checked against.
    pub tools: ToolNames,
    /// The variables the host sets in a hook's environment, which `hooks simulate` sets as
    /// it would.
    pub env: &'static [(&'static str, HookEnv)],
    /// How long the host waits for a hook with no `timeout`, in seconds, where documented.
    pub default_timeout: Option<u32>,
    /// Families whose hooks the host cuts off sooner than their `timeout` asks.
    pub capped: &'static [Cap],
    /// How a route's `allow` or `ask` is written back, per family, where the host has a
    /// channel for it (config hooks answer neither).
    pub approvals: &'static [(Family, Approval, Shape)],
}

/// A deadline the host holds a family's hooks to whatever their `timeout` says: a route whose
/// own budget is longer would be cut short.
pub struct Cap {
    pub family: Family,
    pub ms: u32,
    /// The variable with which a user raises it.
    pub raised_by: &'static str,
}

/// The tool names a host fires tool hooks with (host-formats.md): a native selector naming
/// none of them would leave the hook silently unrun there.
pub struct ToolNames {
    /// The tools it is documented to fire `beforeTool` and `afterTool` hooks for, MCP's aside.
    pub documented: &'static [&'static str],
    /// Tools its documentation leaves out that the real host was seen to fire hooks for.
    pub seen: &'static [&'static str],
    /// Tools it is documented, or was seen, to fire no tool hook for.
    pub never: &'static [&'static str],
    /// Whether the documented tools are all it fires hooks for, or others may be (tools
    /// newer than the contract, not listed).
    pub only_documented: bool,
    /// How it names an MCP tool: a prefix, then parts (`server`, `tool`) split by a separator.
    pub mcp: McpToolNames,
    /// Tools a matcher also matches by other names (Codex's `apply_patch` by `Edit` and
    /// `Write`, though its hook input says `apply_patch`).
    pub aliases: &'static [(&'static str, &'static [&'static str])],
}

pub struct McpToolNames {
    pub prefix: &'static str,
    pub separator: &'static str,
    /// The fewest non-empty parts a name has.
    pub min_parts: usize,
    /// As the host's documentation writes it (`mcp__<server>__<tool>`).
    pub written: &'static str,
}

/// What a host makes of a tool name a native selector gives.
#[derive(Debug, PartialEq, Eq)]
pub enum ToolNameFit {
    Documented,
    /// Not documented either way: a newer host may fire hooks for it.
    Undocumented,
    /// The host never fires a tool hook for it.
    NeverFired,
    /// An MCP tool name not of the host's form (`mcp__memory`, no tool named).
    MalformedMcp,
}

impl ToolNames {
    pub fn fit(&self, name: &str) -> ToolNameFit {
        if let Some(rest) = name.strip_prefix(self.mcp.prefix) {
            // (A server or tool name may hold the separator's characters: `mcp__a____b`.)
            let named = rest.split(self.mcp.separator).filter(|part| !part.is_empty()).count() >= self.mcp.min_parts;
            return if named { ToolNameFit::Documented } else { ToolNameFit::MalformedMcp };
        }
        if self.documented.contains(&name) || self.seen.contains(&name) {
            ToolNameFit::Documented
        } else if self.only_documented || self.never.contains(&name) {
            ToolNameFit::NeverFired
        } else {
            ToolNameFit::Undocumented
        }
    }

    /// The names a matcher may match `tool` by: its own, and its aliases.
    pub fn matched_as<'t>(&self, tool: &'t str) -> impl Iterator<Item = &'t str> {
        let aliases = self.aliases.iter().filter(move |(name, _)| *name == tool).flat_map(|(_, aliases)| *aliases);
        std::iter::once(tool).chain(aliases.copied())
    }

    /// The documented names, and those seen fired, as a message lists them.
    pub fn listed(&self) -> String {
        let quoted = |names: &[&str]| names.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>();
        let mut names = quoted(self.documented);
        names.push(format!("MCP tools `{}`", self.mcp.written));
        let listed = crate::diagnostics::and_list(&names);
        match self.seen {
            [] => listed,
            seen => format!(
                "{listed} (and, seen fired though not documented, {})",
                crate::diagnostics::and_list(&quoted(seen))
            ),
        }
    }
}

/// A route's decision the other way from a deny: `allow` (the host's own prompt or rule is
/// passed over) or `ask` (the user is asked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Approval {
    Allow,
    Ask,
}

impl Approval {
    pub const ALL: [Approval; 2] = [Approval::Allow, Approval::Ask];

    /// The `outcome` a route's `Agent.Result` gives for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Approval::Allow => "allow",
            Approval::Ask => "ask",
        }
    }
}

/// What a host sets a variable of a hook's environment to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEnv {
    /// The installed plugin's directory (the artifact).
    PluginRoot,
    /// The plugin's own data directory, kept across updates.
    PluginData,
    /// The user's project, where the hook runs.
    ProjectDir,
    /// The host's own settings folder (`~/.codex`).
    HostHome,
}

/// Every variable some host sets in a hook's environment.
pub fn hook_env_names() -> impl Iterator<Item = &'static str> {
    HOSTS.iter().filter_map(|table| table.hooks.as_ref()).flat_map(|hooks| hooks.env.iter().map(|(name, _)| *name))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DocumentStyle {
    /// `{"hooks": {Event: [{"matcher"?, "hooks": [{"type": "command", …}]}]}}` (Claude Code, Codex).
    Grouped,
    /// `{"version": 1, "hooks": {event: [{"command", "matcher"?, "timeout"?}]}}` (Cursor).
    Flat,
}

/// One canonical event family on one host.
pub struct EventRow {
    pub family: Family,
    pub native: &'static str,
    /// The envelope the host sends, as the wrapper validates it.
    pub fields: &'static [Field],
    /// How a deny, additional context and a rewritten input are written back; `None` when the
    /// host has no channel for it (the wrapper then fails rather than drop it).
    pub deny: Option<Shape>,
    pub context: Option<Shape>,
    pub rewrite: Option<Shape>,
}

impl HookSupport {
    pub fn row(&self, family: Family) -> Option<&EventRow> {
        self.events.iter().find(|row| row.family == family)
    }

    /// The row a hook registers under, if this host receives it.
    pub fn row_for(&self, trigger: Trigger) -> Option<&EventRow> {
        self.row(trigger.family()?)
    }

    /// How `approval` is written back for `family`, if this host takes it.
    pub fn approval(&self, family: Family, approval: Approval) -> Option<Shape> {
        self.approvals.iter().find(|(f, a, _)| *f == family && *a == approval).map(|(_, _, shape)| *shape)
    }

    pub fn selector(&self, tool: CanonicalTool) -> Option<&'static str> {
        self.selectors.iter().find(|(t, _)| *t == tool).and_then(|(_, pattern)| *pattern)
    }

    /// Each tool the canonical selectors' patterns name exactly (`^(?:Bash|PowerShell)$`:
    /// `Bash`, `PowerShell`), with its canonical selector: what a native selector most likely
    /// means.
    pub fn named_tools(&self) -> impl Iterator<Item = (&'static str, CanonicalTool)> {
        let exact = |pattern: &'static str| {
            let inner = pattern.strip_prefix('^')?.strip_suffix('$')?;
            Some(inner.strip_prefix("(?:").and_then(|rest| rest.strip_suffix(')')).unwrap_or(inner))
        };
        let names = self.selectors.iter().filter_map(move |(tool, pattern)| Some((exact((*pattern)?)?, *tool)));
        let each = names.flat_map(|(names, tool)| names.split('|').map(move |name| (name, tool)));
        each.filter(|(name, _)| name.chars().all(|c| c.is_alphanumeric() || c == '_'))
    }
}

/// What the hosts that call an event `name` (`PreToolUse`, Cursor's `beforeShellExecution`)
/// have it as here: a config event, or an event route (`src/events/prompt/submit.tsx`).
pub fn native_event_help(name: &str) -> Option<String> {
    let rows = || {
        let hosts = HOSTS.iter().filter_map(|table| Some((table.display_name, table.hooks.as_ref()?)));
        hosts.flat_map(|(host, hooks)| hooks.events.iter().map(move |row| (host, row.native, row.family)))
    };
    // As written, else in another case (`preToolUse` is Cursor's, `PreToolUse` Claude Code's).
    let mut named: Vec<(&str, &str, Family)> = rows().filter(|(_, native, _)| *native == name).collect();
    if named.is_empty() {
        named = rows().filter(|(_, native, _)| native.eq_ignore_ascii_case(name)).collect();
    }
    let &(_, native, family) = named.first()?;
    let hosts: Vec<&str> =
        named.iter().filter(|(_, n, f)| (*n, *f) == (native, family)).map(|(host, _, _)| *host).collect();
    let (last, others) = hosts.split_last()?;
    let (hosts, call) = match others {
        [] => ((*last).to_owned(), "calls"),
        _ => (format!("{} and {last}", others.join(", ")), "call"),
    };
    let here = match crate::model::HookEvent::ALL.into_iter().find(|event| event.family() == Some(family)) {
        Some(event) => format!("the config event `{}`", event.key()),
        None => format!("the event route `src/events/{}.tsx`", family.key()),
    };
    Some(format!("`{native}` is what {hosts} {call} {here}"))
}

/// JSON types an envelope field may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonType {
    String,
    Number,
    Boolean,
    Null,
    Object,
    Array,
}

impl JsonType {
    pub fn as_str(self) -> &'static str {
        match self {
            JsonType::String => "string",
            JsonType::Number => "number",
            JsonType::Boolean => "boolean",
            JsonType::Null => "null",
            JsonType::Object => "object",
            JsonType::Array => "array",
        }
    }
}

/// How a native value becomes its canonical value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decode {
    /// A JSON document inside a string (kept as the string when it is not JSON).
    Json,
    /// A counter whose canonical meaning is "more than zero".
    PositiveCount,
}

/// One envelope field.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// Native keys; the first present one wins (Cursor: `session_id` or `conversation_id`).
    pub native: &'static [&'static str],
    pub canonical: &'static str,
    /// Allowed JSON types; empty = any.
    pub types: &'static [JsonType],
    pub required: bool,
    pub one_of: &'static [&'static str],
    pub decode: Option<Decode>,
}

impl Field {
    /// Its native keys as the docs spell them: "`conversation_id` or `session_id`".
    pub fn native_keys(&self) -> String {
        self.native.iter().map(|key| format!("`{key}`")).collect::<Vec<_>>().join(" or ")
    }

    pub const fn required(
        native: &'static [&'static str],
        canonical: &'static str,
        types: &'static [JsonType],
    ) -> Field {
        Field { native, canonical, types, required: true, one_of: &[], decode: None }
    }

    pub const fn optional(
        native: &'static [&'static str],
        canonical: &'static str,
        types: &'static [JsonType],
    ) -> Field {
        Field { native, canonical, types, required: false, one_of: &[], decode: None }
    }

    pub const fn one_of(self, values: &'static [&'static str]) -> Field {
        Field { one_of: values, ..self }
    }

    pub const fn decoded(self, decode: Decode) -> Field {
        Field { decode: Some(decode), ..self }
    }
}

pub(crate) const STRING: &[JsonType] = &[JsonType::String];
pub(crate) const STRING_OR_NULL: &[JsonType] = &[JsonType::String, JsonType::Null];
pub(crate) const OBJECT: &[JsonType] = &[JsonType::Object];
pub(crate) const BOOLEAN: &[JsonType] = &[JsonType::Boolean];
pub(crate) const NUMBER: &[JsonType] = &[JsonType::Number];
pub(crate) const ARRAY: &[JsonType] = &[JsonType::Array];
pub(crate) const ANY: &[JsonType] = &[];

/// A way of writing one outcome into a host's output. `$reason`, `$context` and
/// `$updatedInput` are filled in by the wrapper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `hookSpecificOutput.permissionDecision: "deny"` + `permissionDecisionReason`.
    PermissionDeny,
    /// Top-level `decision: "block"` + `reason`.
    DecisionBlock,
    /// Top-level `decision: "block"` + `reason`, which Claude Code ignores for a change to the
    /// managed policy settings (`ConfigChange`).
    DecisionBlockUnlessPolicy,
    /// `hookSpecificOutput.additionalContext`.
    HookSpecificContext,
    /// `hookSpecificOutput.updatedInput`, with no permission decision (never skips a prompt).
    HookSpecificUpdatedInput,
    /// `hookSpecificOutput.permissionDecision: "allow"` + `updatedInput` (Codex's documented rewrite form).
    PermissionAllowUpdatedInput,
    /// Cursor `permission: "deny"` + `user_message` + `agent_message`.
    PermissionFieldDeny,
    /// Cursor `permission: "allow"` + `updated_input`.
    PermissionFieldUpdatedInput,
    /// Cursor `followup_message`.
    FollowupMessage,
    /// Cursor `followup_message`, which `subagentStop` reads only when the subagent completed.
    FollowupMessageWhenCompleted,
    /// Cursor `additional_context`.
    AdditionalContext,
    /// `continue: false` + `stopReason` (stops the agent).
    ContinueFalse,
    /// `hookSpecificOutput.decision: {behavior: "deny", message}` (PermissionRequest).
    PermissionBehaviorDeny,
    /// Cursor `continue: false` + `user_message` (beforeSubmitPrompt).
    ContinueFalseUserMessage,
    /// `hookSpecificOutput.permissionDecision: "allow"` + `permissionDecisionReason`, shown to
    /// the user when given.
    PermissionAllow,
    /// `hookSpecificOutput.permissionDecision: "ask"` + `permissionDecisionReason`.
    PermissionAsk,
    /// `hookSpecificOutput.decision: {behavior: "allow"}` (PermissionRequest).
    PermissionBehaviorAllow,
    /// Cursor `permission: "allow"`.
    PermissionFieldAllow,
    /// `hookSpecificOutput.permissionDecision: "allow"`, read only with a new input (Codex's
    /// PreToolUse, where it is the rewrite's own form).
    PermissionAllowWithInput,
}

impl Shape {
    /// The output template the runtime merges into its answer.
    pub fn template(self, native_event: &str) -> serde_json::Value {
        use serde_json::json;
        match self {
            Shape::PermissionDeny => json!({"hookSpecificOutput": {
                "hookEventName": native_event, "permissionDecision": "deny", "permissionDecisionReason": "$reason"}}),
            Shape::DecisionBlock | Shape::DecisionBlockUnlessPolicy => {
                json!({"decision": "block", "reason": "$reason"})
            }
            Shape::HookSpecificContext => {
                json!({"hookSpecificOutput": {"hookEventName": native_event, "additionalContext": "$context"}})
            }
            Shape::HookSpecificUpdatedInput => {
                json!({"hookSpecificOutput": {"hookEventName": native_event, "updatedInput": "$updatedInput"}})
            }
            Shape::PermissionAllowUpdatedInput => json!({"hookSpecificOutput": {
                "hookEventName": native_event, "permissionDecision": "allow", "updatedInput": "$updatedInput"}}),
            Shape::PermissionFieldDeny => {
                json!({"permission": "deny", "user_message": "$reason", "agent_message": "$reason"})
            }
            Shape::PermissionFieldUpdatedInput => {
                json!({"permission": "allow", "updated_input": "$updatedInput"})
            }
            Shape::FollowupMessage | Shape::FollowupMessageWhenCompleted => json!({"followup_message": "$reason"}),
            Shape::AdditionalContext => json!({"additional_context": "$context"}),
            Shape::ContinueFalse => json!({"continue": false, "stopReason": "$reason"}),
            Shape::PermissionBehaviorDeny => json!({"hookSpecificOutput": {
                "hookEventName": native_event, "decision": {"behavior": "deny", "message": "$reason"}}}),
            Shape::ContinueFalseUserMessage => json!({"continue": false, "user_message": "$reason"}),
            Shape::PermissionAllow => json!({"hookSpecificOutput": {
                "hookEventName": native_event, "permissionDecision": "allow", "permissionDecisionReason": "$reason"}}),
            Shape::PermissionAsk => json!({"hookSpecificOutput": {
                "hookEventName": native_event, "permissionDecision": "ask", "permissionDecisionReason": "$reason"}}),
            Shape::PermissionBehaviorAllow => {
                json!({"hookSpecificOutput": {"hookEventName": native_event, "decision": {"behavior": "allow"}}})
            }
            Shape::PermissionFieldAllow => json!({"permission": "allow"}),
            Shape::PermissionAllowWithInput => {
                json!({"hookSpecificOutput": {"hookEventName": native_event, "permissionDecision": "allow"}})
            }
        }
    }

    /// What the host needs besides the shape to read the outcome at all. The wrapper checks
    /// it and fails the hook otherwise: an answer the host would drop is worse than an error.
    pub fn requirement(self) -> Option<Requirement> {
        match self {
            Shape::FollowupMessageWhenCompleted => {
                Some(Requirement::FieldEquals { field: "status", value: "completed" })
            }
            Shape::DecisionBlockUnlessPolicy => {
                Some(Requirement::FieldDiffers { field: "source", value: "policy_settings" })
            }
            // Codex rejects a rewrite of these tools without a string `command`, marks the hook
            // failed and runs the original call (host-formats §2.5).
            Shape::PermissionAllowUpdatedInput => {
                Some(Requirement::StringInput { key: "command", tools: &["Bash", "apply_patch"] })
            }
            Shape::PermissionAllowWithInput => Some(Requirement::WithRewrite),
            _ => None,
        }
    }

    /// A short description for the matrix.
    pub fn describe(self) -> &'static str {
        match self {
            Shape::PermissionDeny => "`permissionDecision: deny`",
            Shape::DecisionBlock => "`decision: block`",
            Shape::DecisionBlockUnlessPolicy => "`decision: block` (ignored when `source` is `policy_settings`)",
            Shape::HookSpecificContext => "`additionalContext`",
            Shape::HookSpecificUpdatedInput => "`updatedInput`",
            Shape::PermissionAllowUpdatedInput => {
                "`permissionDecision: allow` + `updatedInput` (with a string `command` for `Bash` and `apply_patch`)"
            }
            Shape::PermissionFieldDeny => "`permission: deny`",
            Shape::PermissionFieldUpdatedInput => "`permission: allow` + `updated_input`",
            Shape::FollowupMessage => "`followup_message`",
            Shape::FollowupMessageWhenCompleted => "`followup_message` (read only when `status` is `completed`)",
            Shape::AdditionalContext => "`additional_context`",
            Shape::ContinueFalse => "`continue: false` + `stopReason`",
            Shape::PermissionBehaviorDeny => "`decision.behavior: deny`",
            Shape::ContinueFalseUserMessage => "`continue: false` + `user_message`",
            Shape::PermissionAllow => "`permissionDecision: allow`",
            Shape::PermissionAsk => "`permissionDecision: ask`",
            Shape::PermissionBehaviorAllow => "`decision.behavior: allow`",
            Shape::PermissionFieldAllow => "`permission: allow`",
            Shape::PermissionAllowWithInput => "`permissionDecision: allow`, only with `updatedInput`",
        }
    }

    /// Whether the host's answer has a place for the result's `reason` (a description of a
    /// shape that has none says so).
    pub fn takes_reason(self) -> bool {
        self.template("").to_string().contains("\"$reason\"")
    }
}

/// A condition on the event or the result under which a host reads an outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// The event's canonical `field` equals `value`.
    FieldEquals { field: &'static str, value: &'static str },
    /// The event's canonical `field` is not `value`.
    FieldDiffers { field: &'static str, value: &'static str },
    /// For these native tools, the rewritten input's `key` is a string.
    StringInput { key: &'static str, tools: &'static [&'static str] },
    /// The result gives a new tool input too.
    WithRewrite,
}

impl Requirement {
    /// The spec form the runtime checks (`src/runtime/README.md`).
    pub fn spec(self) -> serde_json::Value {
        match self {
            Requirement::FieldEquals { field, value } => serde_json::json!({ "field": field, "equals": value }),
            Requirement::FieldDiffers { field, value } => serde_json::json!({ "field": field, "differs": value }),
            Requirement::StringInput { key, tools } => serde_json::json!({ "stringInput": key, "tools": tools }),
            Requirement::WithRewrite => serde_json::json!({ "with": "updatedInput" }),
        }
    }
}

/// The manifest author block every host shares.
fn author(model: &Model) -> serde_json::Value {
    serde_json::json!({ "name": model.name })
}

fn description(model: &Model) -> String {
    model.description.clone().unwrap_or_else(|| model.name.clone())
}

/// The rule every host's name check builds on: lowercase kebab-case, at most 64 characters.
fn check_kebab_name(name: &str) -> Result<(), String> {
    let kebab = !name.is_empty()
        && name.len() <= 64
        && name
            .split('-')
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
    if kebab {
        Ok(())
    } else {
        Err("it must be lowercase kebab-case (a-z, 0-9, single dashes), at most 64 characters".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host's own event name is said as what it is here, with the hosts that use it as
    /// written (another case is the nearest host's).
    #[test]
    fn a_native_event_name_is_said_as_what_it_is_here() {
        let help = native_event_help;
        assert_eq!(
            help("PreToolUse").as_deref(),
            Some("`PreToolUse` is what Claude Code and Codex call the config event `beforeTool`")
        );
        assert_eq!(
            help("preToolUse").as_deref(),
            Some("`preToolUse` is what Cursor calls the config event `beforeTool`")
        );
        assert_eq!(
            help("userpromptsubmit").as_deref(),
            Some(
                "`UserPromptSubmit` is what Claude Code and Codex call the event route `src/events/prompt/submit.tsx`"
            )
        );
        assert_eq!(help("beforeTool"), None);
    }

    #[test]
    fn tables_are_in_target_order_and_complete() {
        assert_eq!(HOSTS.map(|t| t.target), Target::ALL);
        for table in HOSTS {
            let Some(hooks) = &table.hooks else { continue };
            for tool in CanonicalTool::ALL {
                assert!(
                    hooks.selectors.iter().any(|(t, _)| *t == tool),
                    "{} lacks a row for {tool:?}",
                    table.display_name
                );
            }
            for row in hooks.events {
                let rules = row.family.rules();
                // A host may lack a channel the event allows, never offer one the event forbids.
                assert!(rules.deny || row.deny.is_none(), "{} {}", table.display_name, row.native);
                assert!(rules.rewrite || row.rewrite.is_none(), "{} {}", table.display_name, row.native);
                assert!(rules.context || row.context.is_none(), "{} {}", table.display_name, row.native);
            }
        }
    }

    /// A canonical selector matches the host's own names for the tool: a name it lists but
    /// the host does not document would match nothing, silently.
    #[test]
    fn canonical_selectors_name_documented_tools() {
        for table in HOSTS {
            let Some(hooks) = &table.hooks else { continue };
            for (name, tool) in hooks.named_tools() {
                let documented = hooks.tools.fit(name) == ToolNameFit::Documented
                    || hooks.tools.aliases.iter().any(|(_, aliases)| aliases.contains(&name));
                assert!(documented, "{}: `{name}` ({tool:?}) is not documented", table.display_name);
            }
        }
        let claude = super::claude::TABLE.hooks.as_ref().unwrap();
        // host-formats §1.5: the subagent tool, by its name and its earlier one.
        assert_eq!(claude.selector(CanonicalTool::Agent), Some("^(?:Agent|Task)$"));
        // Undocumented, but the tool Codex 0.171.0 fires hooks for when it starts a subagent;
        // listed apart from what its documents name.
        let codex = super::codex::TABLE.hooks.as_ref().unwrap();
        assert_eq!(codex.selector(CanonicalTool::Agent), Some("^spawn_agent$"));
        assert!(
            codex
                .tools
                .listed()
                .ends_with("(and, seen fired though not documented, `get_goal`, `spawn_agent` and `view_image`)"),
            "{}",
            codex.tools.listed()
        );
        // host-formats §3.2 and §7: Cursor deletes a file with a tool of its own.
        let cursor = super::cursor::TABLE.hooks.as_ref().unwrap();
        assert_eq!(cursor.selector(CanonicalTool::FileWrite), Some("^(?:Delete|Write)$"));
    }

    #[test]
    fn kebab_names() {
        assert!(check_kebab_name("hooks-and-scripts").is_ok());
        assert!(check_kebab_name("Guarded").is_err());
        assert!(check_kebab_name("a--b").is_err());
        assert!(check_kebab_name(&"a".repeat(65)).is_err());
    }
}
