//! Cursor (from its documentation as of 2026-08; no client can be installed here).
//!
//! Hook documents are flat (`{"version": 1, "hooks": {event: [{command, matcher?, timeout?}]}}`),
//! events are lowerCamelCase and the envelope renames several fields: `conversation_id` (or
//! `session_id`), `loop_count` for re-entry, `tool_output` as a JSON string, `subagent_*`.
//! The manifest always points at `.cursor-plugin/hooks.json` so folder discovery never
//! picks up Claude Code's `hooks/hooks.json`.

use super::{
    ARRAY, Approval, BOOLEAN, Decode, DocumentStyle, EventRow, Field, HookEnv, HookSupport, HostPlan, HostTable,
    McpSupport, McpToolNames, NUMBER, OBJECT, STRING, STRING_OR_NULL, Shape, ToolNames, author, description,
    linked_documents,
};
use crate::model::{CanonicalTool, Family, Model, Target};
use crate::output::OutputFile;

/// The common envelope fields plus an event's own.
macro_rules! envelope {
    ($($field:expr),* $(,)?) => {
        &[COMMON[0], COMMON[1], COMMON[2], COMMON[3], COMMON[4], COMMON[5], COMMON[6], $($field),*]
    };
}

pub static TABLE: HostTable = HostTable {
    target: Target::Cursor,
    display_name: "Cursor",
    contract_revision: "cursor-2026-08-28",
    manifest_path: |_| ".cursor-plugin/plugin.json",
    prefers_root_agent_plugins: true,
    hooks: Some(HookSupport {
        root_token: "${CURSOR_PLUGIN_ROOT}",
        // (Cursor's hooks documentation names the project variables; the plugin root is what
        // plugins' hook commands rely on.)
        env: &[
            ("CURSOR_PLUGIN_ROOT", HookEnv::PluginRoot),
            ("CURSOR_PROJECT_DIR", HookEnv::ProjectDir),
            ("CLAUDE_PROJECT_DIR", HookEnv::ProjectDir),
        ],
        // ("Platform default", undocumented.)
        default_timeout: None,
        capped: &[],
        // (`ask` is accepted but not enforced: host-formats §3.)
        approvals: &[(Family::ToolBefore, Approval::Allow, Shape::PermissionFieldAllow)],
        document_path: ".cursor-plugin/hooks.json",
        manifest_pointer: true,
        document_style: DocumentStyle::Flat,
        event_key: "hook_event_name",
        events: &[
            EventRow {
                family: Family::SessionStart,
                native: "sessionStart",
                fields: envelope![],
                deny: None,
                context: Some(Shape::AdditionalContext),
                rewrite: None,
            },
            EventRow {
                family: Family::ToolBefore,
                native: "preToolUse",
                fields: envelope![TOOL[0], TOOL[1], TOOL[2], TOOL[3],],
                deny: Some(Shape::PermissionFieldDeny),
                // preToolUse has no context channel.
                context: None,
                rewrite: Some(Shape::PermissionFieldUpdatedInput),
            },
            EventRow {
                family: Family::ToolAfter,
                native: "postToolUse",
                fields: envelope![
                    TOOL[0],
                    TOOL[1],
                    TOOL[2],
                    TOOL[3],
                    Field::required(&["tool_output"], "toolResponse", STRING).decoded(Decode::Json),
                    Field::optional(&["duration"], "durationMs", NUMBER),
                ],
                deny: None,
                context: Some(Shape::AdditionalContext),
                rewrite: None,
            },
            EventRow {
                family: Family::Stop,
                native: "stop",
                fields: envelope![
                    Field::required(&["status"], "status", STRING).one_of(&["completed", "aborted", "error"]),
                    Field::required(&["loop_count"], "stopHookActive", NUMBER).decoded(Decode::PositiveCount),
                ],
                deny: Some(Shape::FollowupMessage),
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::AgentStart,
                native: "subagentStart",
                fields: envelope![
                    Field::required(&["subagent_id"], "agentId", STRING),
                    Field::required(&["subagent_type"], "agentType", STRING),
                    Field::optional(&["task"], "task", STRING),
                ],
                deny: None,
                // subagentStart answers only with a permission.
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::AgentStop,
                native: "subagentStop",
                fields: envelope![
                    Field::optional(&["subagent_id"], "agentId", STRING),
                    Field::required(&["subagent_type"], "agentType", STRING),
                    Field::optional(&["status"], "status", STRING),
                    Field::optional(&["loop_count"], "stopHookActive", NUMBER).decoded(Decode::PositiveCount),
                ],
                deny: Some(Shape::FollowupMessageWhenCompleted),
                context: None,
                rewrite: None,
            },
            // Families only event routes reach.
            EventRow {
                family: Family::SessionEnd,
                native: "sessionEnd",
                fields: envelope![
                    Field::optional(&["reason"], "reason", STRING),
                    Field::optional(&["duration_ms"], "durationMs", NUMBER)
                ],
                deny: None,
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::PromptSubmit,
                native: "beforeSubmitPrompt",
                fields: envelope![
                    Field::required(&["prompt"], "prompt", STRING),
                    Field::optional(&["attachments"], "attachments", ARRAY)
                ],
                // beforeSubmitPrompt cannot inject context.
                deny: Some(Shape::ContinueFalseUserMessage),
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::ToolFailure,
                native: "postToolUseFailure",
                fields: envelope![
                    TOOL[0],
                    TOOL[1],
                    TOOL[2],
                    TOOL[3],
                    Field::required(&["error_message"], "error", STRING),
                    Field::optional(&["failure_type"], "failureType", STRING),
                    Field::optional(&["is_interrupt"], "isInterrupt", BOOLEAN)
                ],
                deny: None,
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::CompactBefore,
                native: "preCompact",
                fields: envelope![Field::required(&["trigger"], "trigger", STRING).one_of(&["manual", "auto"])],
                // preCompact is observation-only on Cursor.
                deny: None,
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::WorkspaceOpen,
                native: "workspaceOpen",
                fields: &[
                    Field::required(&["workspace_roots"], "workspaceRoots", ARRAY),
                    Field::optional(&["cursor_version"], "cursorVersion", STRING),
                    Field::optional(&["user_email"], "userEmail", STRING_OR_NULL),
                ],
                // workspaceOpen carries no conversation fields.
                deny: None,
                context: None,
                rewrite: None,
            },
        ],
        selectors: &[
            (CanonicalTool::Shell, Some("^Shell$")),
            (CanonicalTool::FileRead, Some("^Read$")),
            // A file deleted is a file written: a guard of the files sees both (host-formats §7).
            (CanonicalTool::FileWrite, Some("^(?:Delete|Write)$")),
            (CanonicalTool::Mcp, Some("^MCP:")),
            (CanonicalTool::Agent, Some("^Task$")),
        ],
        // host-formats §3.2: the tool types `preToolUse` and `postToolUse` match. (A third
        // party writes MCP names `MCP:<server>:<tool>`: any number of parts.)
        tools: ToolNames {
            documented: &["Delete", "Grep", "Read", "Shell", "Task", "Write"],
            seen: &[],
            never: &[],
            only_documented: false,
            aliases: &[],
            mcp: McpToolNames { prefix: "MCP:", separator: ":", min_parts: 1, written: "MCP:<tool>" },
        },
    }),
    check_name,
    documents,
    mcp: Some(McpSupport {
        document_path: ".cursor-plugin/mcp.json",
        manifest_pointer: true,
        root_token: Some("${CURSOR_PLUGIN_ROOT}"),
        names_transport: false,
        // (Not seen: no Cursor client runs here.)
        runs_after_stop: &[],
        runs_while_starting: &[],
    }),
};

const COMMON: [Field; 7] = [
    // Every event but workspaceOpen carries `conversation_id`; `sessionStart` adds a
    // `session_id`. The conversation wins, so a handler sees one id across a session's events
    // (and a simulation sends what Cursor sends).
    Field::required(&["conversation_id", "session_id"], "sessionId", STRING),
    Field::optional(&["transcript_path"], "transcriptPath", STRING_OR_NULL),
    Field::optional(&["model"], "model", STRING),
    Field::optional(&["generation_id"], "generationId", STRING),
    Field::optional(&["cursor_version"], "cursorVersion", STRING),
    Field::optional(&["workspace_roots"], "workspaceRoots", ARRAY),
    Field::optional(&["user_email"], "userEmail", STRING_OR_NULL),
];

const TOOL: [Field; 4] = [
    Field::required(&["tool_name"], "toolName", STRING),
    Field::required(&["tool_input"], "toolInput", OBJECT),
    Field::required(&["tool_use_id"], "toolUseId", STRING),
    Field::optional(&["cwd"], "cwd", STRING),
];

/// Cursor's rule: lowercase alphanumerics, `-` and `.`, starting and ending alphanumeric, ≤ 64.
fn check_name(name: &str) -> Result<(), String> {
    let bytes = name.as_bytes();
    let valid = !name.is_empty()
        && name.len() <= 64
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    if valid { Ok(()) } else { Err("it must be lowercase letters, digits, `-` and `.`, at most 64 characters".into()) }
}

fn documents(model: &Model, plan: &HostPlan, runtime_in_artifact: bool) -> Vec<OutputFile> {
    let mut manifest = serde_json::json!({
        "author": author(model),
        "description": description(model),
        "displayName": model.name,
        "name": model.name,
        "version": model.version,
    });
    let mcp = linked_documents(&TABLE, (model, plan, runtime_in_artifact), &mut manifest);
    let mut files = vec![OutputFile::json((TABLE.manifest_path)(&model.targets), &manifest), plan.hook_document()];
    files.extend(mcp);
    files
}
