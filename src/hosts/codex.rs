//! OpenAI Codex CLI (checked against 0.171.0).
//!
//! Codex reads `hooks/hooks.json` by default, which is Claude Code's file in the composite
//! root; the manifest therefore always points at `.codex-plugin/hooks.json` (a manifest
//! `hooks` pointer replaces the default), even when it is empty. Codex rejects unknown root
//! keys in that document. `tool_response` arrives as a string and `transcript_path` may be
//! null. A rewrite needs `permissionDecision: "allow"` with `updatedInput`: that is Codex's
//! only documented rewrite form.

use super::{
    ANY, Approval, BOOLEAN, DocumentStyle, EventRow, Field, HookEnv, HookSupport, HostPlan, HostTable, McpSupport,
    McpToolNames, OBJECT, STRING, STRING_OR_NULL, Shape, ToolNames, author, check_kebab_name, description,
    linked_documents,
};
use crate::model::{CanonicalTool, Family, Model, Target};
use crate::output::OutputFile;

/// The common envelope fields plus an event's own.
macro_rules! envelope {
    ($($field:expr),* $(,)?) => {
        &[COMMON[0], COMMON[1], COMMON[2], COMMON[3], COMMON[4], COMMON[5], $($field),*]
    };
}

pub static TABLE: HostTable = HostTable {
    target: Target::Codex,
    display_name: "Codex",
    contract_revision: "codex-0.171.0",
    manifest_path: |_| ".codex-plugin/plugin.json",
    prefers_root_agent_plugins: true,
    hooks: Some(HookSupport {
        root_token: "${PLUGIN_ROOT}",
        // (As the hook payloads captured from Codex 0.171.0 show: Claude Code's names too, and
        // no project directory.)
        env: &[
            ("PLUGIN_ROOT", HookEnv::PluginRoot),
            ("PLUGIN_DATA", HookEnv::PluginData),
            ("CLAUDE_PLUGIN_ROOT", HookEnv::PluginRoot),
            ("CLAUDE_PLUGIN_DATA", HookEnv::PluginData),
            ("CODEX_HOME", HookEnv::HostHome),
        ],
        default_timeout: Some(600),
        capped: &[],
        // (PreToolUse reads `allow` only with a new input, its rewrite's form; `ask` fails the
        // hook and the call goes on: host-formats §2.5.)
        approvals: &[
            (Family::ToolBefore, Approval::Allow, Shape::PermissionAllowWithInput),
            (Family::PermissionRequest, Approval::Allow, Shape::PermissionBehaviorAllow),
        ],
        document_path: ".codex-plugin/hooks.json",
        manifest_pointer: true,
        document_style: DocumentStyle::Grouped,
        event_key: "hook_event_name",
        events: &[
            EventRow {
                family: Family::SessionStart,
                native: "SessionStart",
                fields: envelope![Field::required(&["source"], "source", STRING),],
                deny: None,
                context: Some(Shape::HookSpecificContext),
                rewrite: None,
            },
            EventRow {
                family: Family::ToolBefore,
                native: "PreToolUse",
                fields: envelope![TOOL[0], TOOL[1], TOOL[2]],
                deny: Some(Shape::PermissionDeny),
                context: Some(Shape::HookSpecificContext),
                rewrite: Some(Shape::PermissionAllowUpdatedInput),
            },
            EventRow {
                family: Family::ToolAfter,
                native: "PostToolUse",
                fields: envelope![TOOL[0], TOOL[1], TOOL[2], Field::required(&["tool_response"], "toolResponse", ANY),],
                deny: None,
                context: Some(Shape::HookSpecificContext),
                rewrite: None,
            },
            EventRow {
                family: Family::Stop,
                native: "Stop",
                fields: envelope![
                    Field::required(&["stop_hook_active"], "stopHookActive", BOOLEAN),
                    Field::optional(&["last_assistant_message"], "lastAssistantMessage", STRING_OR_NULL),
                ],
                deny: Some(Shape::DecisionBlock),
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::AgentStart,
                native: "SubagentStart",
                fields: envelope![
                    Field::required(&["agent_id"], "agentId", STRING),
                    Field::required(&["agent_type"], "agentType", STRING),
                ],
                deny: None,
                context: Some(Shape::HookSpecificContext),
                rewrite: None,
            },
            EventRow {
                family: Family::AgentStop,
                native: "SubagentStop",
                fields: envelope![
                    Field::required(&["agent_id"], "agentId", STRING),
                    Field::required(&["agent_type"], "agentType", STRING),
                    Field::required(&["stop_hook_active"], "stopHookActive", BOOLEAN),
                    Field::optional(&["agent_transcript_path"], "agentTranscriptPath", STRING_OR_NULL),
                    Field::optional(&["last_assistant_message"], "lastAssistantMessage", STRING_OR_NULL),
                ],
                deny: Some(Shape::DecisionBlock),
                // Codex SubagentStop has no additional-context channel.
                context: None,
                rewrite: None,
            },
            // Families only event routes reach.
            EventRow {
                family: Family::PromptSubmit,
                native: "UserPromptSubmit",
                fields: envelope![Field::required(&["prompt"], "prompt", STRING)],
                deny: Some(Shape::DecisionBlock),
                context: Some(Shape::HookSpecificContext),
                rewrite: None,
            },
            EventRow {
                family: Family::CompactBefore,
                native: "PreCompact",
                fields: envelope![TRIGGER],
                // Codex PreCompact cannot block.
                deny: None,
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::CompactAfter,
                native: "PostCompact",
                fields: envelope![TRIGGER],
                deny: None,
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::PermissionRequest,
                native: "PermissionRequest",
                fields: envelope![TOOL[0], TOOL[1]],
                deny: Some(Shape::PermissionBehaviorDeny),
                context: None,
                rewrite: None,
            },
        ],
        selectors: &[
            (CanonicalTool::Shell, Some("^Bash$")),
            // Codex hooks do not intercept reads.
            (CanonicalTool::FileRead, None),
            (CanonicalTool::FileWrite, Some("^(?:apply_patch|Edit|Write)$")),
            (CanonicalTool::Mcp, Some("^mcp__")),
            // (Undocumented, but Codex 0.171.0 fires tool hooks for it, and honours a deny.)
            (CanonicalTool::Agent, Some("^spawn_agent$")),
        ],
        // host-formats §2.3 documents `Bash`, `apply_patch` and MCP tools alone, and says its
        // internal tools are no hook names; but the real Codex 0.171.0 fires `PreToolUse` for
        // `spawn_agent`, `view_image` and `get_goal` too (a deny holds), so a tool it does not
        // document may be fired for. `exec_command` comes to a hook as `Bash`; `write_stdin`
        // fired none.
        tools: ToolNames {
            documented: &["Bash", "Edit", "Write", "apply_patch"],
            seen: &["get_goal", "spawn_agent", "view_image"],
            never: &["exec_command", "shell", "write_stdin"],
            only_documented: false,
            aliases: &[("apply_patch", &["Edit", "Write"])],
            mcp: McpToolNames { prefix: "mcp__", separator: "__", min_parts: 2, written: "mcp__<server>__<tool>" },
        },
    }),
    check_name: check_kebab_name,
    documents,
    // Codex starts plugin MCP servers with paths relative to the plugin root.
    mcp: Some(McpSupport {
        document_path: ".codex-plugin/mcp.json",
        manifest_pointer: true,
        root_token: None,
        names_transport: true,
        // (Codex 0.171.0 starts the MCP servers before `SessionStart`, and runs no
        // `SessionEnd`.)
        runs_after_stop: &[],
        runs_while_starting: &[],
    }),
};

const COMMON: [Field; 6] = [
    Field::required(&["session_id"], "sessionId", STRING),
    Field::required(&["transcript_path"], "transcriptPath", STRING_OR_NULL),
    Field::required(&["cwd"], "cwd", STRING),
    Field::optional(&["model"], "model", STRING),
    // Any string, as Claude Code's: a mode a Codex release adds (`default`, `acceptEdits`,
    // `plan`, `dontAsk`, `bypassPermissions` so far) must not fail every hook, a deny with it.
    Field::optional(&["permission_mode"], "permissionMode", STRING),
    Field::optional(&["turn_id"], "turnId", STRING),
];

const TRIGGER: Field = Field::required(&["trigger"], "trigger", STRING).one_of(&["manual", "auto"]);

const TOOL: [Field; 3] = [
    Field::required(&["tool_name"], "toolName", STRING),
    Field::required(&["tool_input"], "toolInput", OBJECT),
    Field::required(&["tool_use_id"], "toolUseId", STRING),
];

fn documents(model: &Model, plan: &HostPlan, runtime_in_artifact: bool) -> Vec<OutputFile> {
    let mut manifest = serde_json::json!({
        "author": author(model),
        "description": description(model),
        "interface": {
            "capabilities": ["hooks"],
            "category": "Productivity",
            "developerName": model.name,
            "displayName": model.name,
            "shortDescription": description(model),
        },
        "name": model.name,
        "version": model.version,
    });
    let marketplace = serde_json::json!({
        "interface": { "displayName": model.name },
        "name": format!("{}-marketplace", model.name),
        "plugins": [{
            "category": "Productivity",
            "name": model.name,
            "policy": { "authentication": "ON_INSTALL", "installation": "AVAILABLE" },
            "source": { "path": "./", "source": "local" },
        }],
    });
    let mcp = linked_documents(&TABLE, (model, plan, runtime_in_artifact), &mut manifest);
    let mut files = vec![
        OutputFile::json((TABLE.manifest_path)(&model.targets), &manifest),
        OutputFile::json(".agents/plugins/marketplace.json", &marketplace),
        // Always written: without it Codex would fall back to Claude's hooks/hooks.json.
        plan.hook_document(),
    ];
    files.extend(mcp);
    files
}
