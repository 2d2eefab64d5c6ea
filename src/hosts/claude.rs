//! Claude Code (checked against 2.1.332).
//!
//! Hooks live in `hooks/hooks.json`, which Claude Code auto-loads; the manifest must not
//! point at it (Claude reports a duplicate hooks file). A continuing beforeTool hook writes
//! no `permissionDecision`: `allow` would skip the user's permission prompt.

use super::{
    ANY, Approval, BOOLEAN, Cap, DocumentStyle, EventRow, Field, HookEnv, HookSupport, HostPlan, HostTable, McpSupport,
    McpToolNames, NUMBER, OBJECT, STRING, STRING_OR_NULL, Shape, ToolNames, author, check_kebab_name, description,
    linked_documents,
};
use crate::model::{CanonicalTool, Family, Model, Target};
use crate::output::OutputFile;

/// The common envelope fields plus an event's own.
macro_rules! envelope {
    ($($field:expr),* $(,)?) => {
        &[COMMON[0], COMMON[1], COMMON[2], COMMON[3], COMMON[4], COMMON[5], COMMON[6], COMMON[7], $($field),*]
    };
}

pub static TABLE: HostTable = HostTable {
    target: Target::Claude,
    display_name: "Claude Code",
    contract_revision: "claude-code-2.1.332",
    manifest_path: |_| ".claude-plugin/plugin.json",
    prefers_root_agent_plugins: false,
    hooks: Some(HookSupport {
        root_token: "${CLAUDE_PLUGIN_ROOT}",
        // (As the hook payloads captured from Claude Code 2.1.332 show.)
        env: &[
            ("CLAUDE_PLUGIN_ROOT", HookEnv::PluginRoot),
            ("CLAUDE_PLUGIN_DATA", HookEnv::PluginData),
            ("CLAUDE_PROJECT_DIR", HookEnv::ProjectDir),
        ],
        default_timeout: Some(600),
        // All `SessionEnd` hooks share 1.5 s; a plugin hook's `timeout` does not raise it
        // (host-formats.md P-CC-7).
        capped: &[Cap { family: Family::SessionEnd, ms: 1500, raised_by: "CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS" }],
        approvals: &[
            (Family::ToolBefore, Approval::Allow, Shape::PermissionAllow),
            (Family::ToolBefore, Approval::Ask, Shape::PermissionAsk),
            (Family::ModelSwitchBefore, Approval::Allow, Shape::PermissionAllow),
            (Family::ModelSwitchBefore, Approval::Ask, Shape::PermissionAsk),
            (Family::PermissionRequest, Approval::Allow, Shape::PermissionBehaviorAllow),
        ],
        document_path: "hooks/hooks.json",
        manifest_pointer: false,
        document_style: DocumentStyle::Grouped,
        event_key: "hook_event_name",
        events: &[
            EventRow {
                family: Family::SessionStart,
                native: "SessionStart",
                fields: envelope![
                    Field::required(&["source"], "source", STRING),
                    Field::optional(&["model"], "model", STRING),
                ],
                deny: None,
                context: Some(Shape::HookSpecificContext),
                rewrite: None,
            },
            EventRow {
                family: Family::ToolBefore,
                native: "PreToolUse",
                fields: envelope![TOOL[0], TOOL[1], TOOL[2],],
                deny: Some(Shape::PermissionDeny),
                context: Some(Shape::HookSpecificContext),
                rewrite: Some(Shape::HookSpecificUpdatedInput),
            },
            EventRow {
                family: Family::ToolAfter,
                native: "PostToolUse",
                fields: envelope![
                    TOOL[0],
                    TOOL[1],
                    TOOL[2],
                    // An object for built-in tools, a string for MCP tools.
                    Field::required(&["tool_response"], "toolResponse", ANY),
                    Field::optional(&["duration_ms"], "durationMs", NUMBER),
                ],
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
                // agent_id and agent_type are required here, not optional as in COMMON.
                fields: &[
                    COMMON[0],
                    COMMON[1],
                    COMMON[2],
                    COMMON[3],
                    COMMON[4],
                    COMMON[5],
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
                // agent_id and agent_type are required here, not optional as in COMMON.
                fields: &[
                    COMMON[0],
                    COMMON[1],
                    COMMON[2],
                    COMMON[3],
                    COMMON[4],
                    COMMON[5],
                    Field::required(&["agent_id"], "agentId", STRING),
                    Field::required(&["agent_type"], "agentType", STRING),
                    Field::required(&["stop_hook_active"], "stopHookActive", BOOLEAN),
                    Field::optional(&["agent_transcript_path"], "agentTranscriptPath", STRING_OR_NULL),
                    Field::optional(&["last_assistant_message"], "lastAssistantMessage", STRING_OR_NULL),
                ],
                deny: Some(Shape::DecisionBlock),
                // Documented as taking `additionalContext`, but Claude Code 2.1.332 takes it for
                // a continuation: the subagent is prompted with it and runs again, each stop
                // firing the hook again (nine runs for one subagent, run by the real CLI). A
                // deny is the way to keep it going; context has no place here, as on `Stop`.
                context: None,
                rewrite: None,
            },
            // Families only event routes reach.
            EventRow {
                family: Family::SessionEnd,
                native: "SessionEnd",
                fields: envelope![Field::required(&["reason"], "reason", STRING)],
                deny: None,
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::PromptSubmit,
                native: "UserPromptSubmit",
                fields: envelope![Field::required(&["prompt"], "prompt", STRING)],
                deny: Some(Shape::DecisionBlock),
                context: Some(Shape::HookSpecificContext),
                rewrite: None,
            },
            EventRow {
                family: Family::ToolFailure,
                native: "PostToolUseFailure",
                fields: envelope![
                    TOOL[0],
                    TOOL[1],
                    TOOL[2],
                    Field::required(&["error"], "error", STRING),
                    Field::optional(&["is_interrupt"], "isInterrupt", BOOLEAN)
                ],
                deny: None,
                context: Some(Shape::HookSpecificContext),
                rewrite: None,
            },
            EventRow {
                family: Family::StopFailure,
                native: "StopFailure",
                fields: envelope![Field::optional(&["error"], "error", ANY)],
                deny: None,
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::AgentIdle,
                native: "TeammateIdle",
                fields: envelope![
                    Field::required(&["teammate_name"], "teammateName", STRING),
                    Field::required(&["team_name"], "teamName", STRING)
                ],
                deny: Some(Shape::ContinueFalse),
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::CompactBefore,
                native: "PreCompact",
                fields: envelope![
                    TRIGGER,
                    Field::optional(&["custom_instructions"], "customInstructions", STRING_OR_NULL)
                ],
                deny: Some(Shape::DecisionBlock),
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::CompactAfter,
                native: "PostCompact",
                fields: envelope![TRIGGER, Field::optional(&["compact_summary"], "compactSummary", STRING)],
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
            EventRow {
                family: Family::PermissionDenied,
                native: "PermissionDenied",
                fields: envelope![TOOL[0], TOOL[1]],
                deny: None,
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::FileChange,
                native: "FileChanged",
                fields: envelope![Field::required(&["file_path"], "filePath", STRING)],
                deny: None,
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::ConfigChange,
                native: "ConfigChange",
                fields: envelope![
                    Field::required(&["source"], "source", STRING),
                    Field::optional(&["file_path"], "filePath", STRING)
                ],
                deny: Some(Shape::DecisionBlockUnlessPolicy),
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::TaskCreate,
                native: "TaskCreated",
                fields: envelope![TASK[0], TASK[1], TASK[2], TASK[3], TASK[4]],
                deny: Some(Shape::DecisionBlock),
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::TaskComplete,
                native: "TaskCompleted",
                fields: envelope![TASK[0], TASK[1], TASK[2], TASK[3], TASK[4]],
                deny: None,
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::ModelSwitchBefore,
                native: "PreModelSwitch",
                fields: envelope![MODEL_SWITCH[0], MODEL_SWITCH[1], MODEL_SWITCH[2], MODEL_SWITCH[3]],
                deny: Some(Shape::PermissionDeny),
                context: None,
                rewrite: None,
            },
            EventRow {
                family: Family::ModelSwitchAfter,
                native: "PostModelSwitch",
                fields: envelope![MODEL_SWITCH[0], MODEL_SWITCH[1], MODEL_SWITCH[2], MODEL_SWITCH[3]],
                deny: None,
                context: Some(Shape::HookSpecificContext),
                rewrite: None,
            },
        ],
        selectors: &[
            // On Windows without Git Bash, Claude Code's shell tool is `PowerShell`, and no
            // `Bash` is registered: a shell policy must hold there too.
            (CanonicalTool::Shell, Some("^(?:Bash|PowerShell)$")),
            (CanonicalTool::FileRead, Some("^Read$")),
            (CanonicalTool::FileWrite, Some("^(?:Edit|MultiEdit|NotebookEdit|Write)$")),
            (CanonicalTool::Mcp, Some("^mcp__")),
            // host-formats §1.5: the subagent tool is `Agent`, `Task` its earlier name.
            (CanonicalTool::Agent, Some("^(?:Agent|Task)$")),
        ],
        // host-formats §1.5: the built-ins the docs name, those the settings schema's
        // permission rules list, and `Task`, the subagent tool's earlier name.
        tools: ToolNames {
            documented: &[
                "Agent",
                "AskUserQuestion",
                "Bash",
                "Cd",
                "Edit",
                "ExitPlanMode",
                "Glob",
                "Grep",
                "KillShell",
                "LSP",
                "Monitor",
                "MultiEdit",
                "NotebookEdit",
                "PowerShell",
                "Read",
                "Skill",
                "Task",
                "TaskCreate",
                "TaskGet",
                "TaskList",
                "TaskOutput",
                "TaskStop",
                "TaskUpdate",
                "TodoWrite",
                "ToolSearch",
                "WebFetch",
                "WebSearch",
                "Workflow",
                "Write",
            ],
            seen: &[],
            never: &["EndConversation"],
            only_documented: false,
            aliases: &[],
            mcp: McpToolNames { prefix: "mcp__", separator: "__", min_parts: 2, written: "mcp__<server>__<tool>" },
        },
    }),
    check_name,
    documents,
    // `.mcp.json` is auto-loaded; Claude Code expands its root token in `args`.
    mcp: Some(McpSupport {
        document_path: ".mcp.json",
        manifest_pointer: false,
        root_token: Some("${CLAUDE_PLUGIN_ROOT}"),
        names_transport: true,
        // Seen with Claude Code 2.1.332: it sends the MCP servers SIGINT, waits for them to
        // exit, then runs `SessionEnd`; it starts them beside the `SessionStart` hooks.
        runs_after_stop: &[Family::SessionEnd],
        runs_while_starting: &[Family::SessionStart],
    }),
};

/// Fields every Claude Code hook envelope shares. `agent_id`/`agent_type` appear inside
/// subagents; `effort` is an object (`{"level": "medium"}`).
const COMMON: [Field; 8] = [
    Field::required(&["session_id"], "sessionId", STRING),
    Field::required(&["transcript_path"], "transcriptPath", STRING),
    Field::required(&["cwd"], "cwd", STRING),
    Field::optional(&["permission_mode"], "permissionMode", STRING),
    Field::optional(&["prompt_id"], "promptId", STRING),
    Field::optional(&["effort"], "effort", OBJECT),
    Field::optional(&["agent_id"], "agentId", STRING),
    Field::optional(&["agent_type"], "agentType", STRING),
];

const TOOL: [Field; 3] = [
    Field::required(&["tool_name"], "toolName", STRING),
    Field::required(&["tool_input"], "toolInput", OBJECT),
    Field::required(&["tool_use_id"], "toolUseId", STRING),
];

const TRIGGER: Field = Field::required(&["trigger"], "trigger", STRING).one_of(&["manual", "auto"]);

const TASK: [Field; 5] = [
    Field::required(&["task_id"], "taskId", STRING),
    Field::required(&["task_subject"], "taskSubject", STRING),
    Field::optional(&["task_description"], "taskDescription", STRING),
    Field::optional(&["teammate_name"], "teammateName", STRING),
    Field::optional(&["team_name"], "teamName", STRING),
];

const MODEL_SWITCH: [Field; 4] = [
    Field::optional(&["from_model"], "fromModel", STRING),
    Field::optional(&["to_model"], "toModel", STRING),
    Field::optional(&["requested_model"], "requestedModel", STRING),
    Field::optional(&["source"], "source", STRING),
];

const RESERVED_NAMES: [&str; 5] = ["claude", "anthropic", "anthropics", "claude-code", "claude-mods"];
const RESERVED_PREFIXES: [&str; 4] = ["claude-", "anthropic-", "anthropics-", "cc-plugin-"];

fn check_name(name: &str) -> Result<(), String> {
    check_kebab_name(name)?;
    if RESERVED_NAMES.contains(&name) || RESERVED_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return Err(format!("it is reserved ({})", reserved_names()));
    }
    Ok(())
}

/// The names Claude Code reserves, as a sentence: `` `claude`, …, and names starting with
/// `claude-`, … or `cc-plugin-` ``.
pub(super) fn reserved_names() -> String {
    let quoted = |names: &[&str]| names.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>();
    let prefixes = quoted(&RESERVED_PREFIXES);
    let (last, others) = prefixes.split_last().expect("Claude Code reserves prefixes");
    format!("{}, and names starting with {} or {last}", quoted(&RESERVED_NAMES).join(", "), others.join(", "))
}

fn documents(model: &Model, plan: &HostPlan, runtime_in_artifact: bool) -> Vec<OutputFile> {
    let mut manifest = serde_json::json!({
        "author": author(model),
        "description": description(model),
        "name": model.name,
        "version": model.version,
    });
    let marketplace = serde_json::json!({
        "description": description(model),
        "name": format!("{}-marketplace", model.name),
        "owner": author(model),
        "plugins": [{
            "description": description(model),
            "name": model.name,
            "source": "./",
            "version": model.version,
        }],
    });
    let mcp = linked_documents(&TABLE, (model, plan, runtime_in_artifact), &mut manifest);
    let mut files = vec![
        OutputFile::json((TABLE.manifest_path)(&model.targets), &manifest),
        OutputFile::json(".claude-plugin/marketplace.json", &marketplace),
    ];
    // Claude Code loads hooks/hooks.json by itself; an empty one would only be noise.
    if !plan.hooks.is_empty() {
        files.push(plan.hook_document());
    }
    files.extend(mcp);
    files
}
