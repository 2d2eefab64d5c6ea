//! Host smoke tests: the plugins `agent-bundle build` emits for `examples/policy` (hooks declared
//! in the config), `examples/routes` (event routes under `src/events/`) and a project made
//! here whose hooks watch subagents, installed the way users install them and run by the
//! real Claude Code and Codex CLIs (the pinned npm releases), offline, against scripted
//! model-API mocks (`tests/hosts/*.mjs`) listening on the loopback of a private network
//! namespace.
//!
//! Both clients skip a broken plugin silently and still exit 0, so no assertion here rests on
//! an exit code. They read what the client reported (its stream, debug log, install output),
//! what the model saw (the mock records every request body), what the handlers did (each
//! policy handler appends a line to `$POLICY_LOG`, the routes' session/end to `$ROUTES_LOG`),
//! and which wrapper each hook command ran with what answer (a `node` first on the client's
//! PATH records that, then behaves exactly like node).
//!
//! The suite skips, with a message on stderr, only where no network namespace can be made.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::host_validation::claude_binary;
use crate::support::{self, repo};

const CONTEXT: &str = "The policy plugin is active: dangerous shell commands are denied (marker POLICY_CONTEXT_OK).";
const DENY_REASON: &str = "policy: the command carries the POLICY_DENY_ME marker";
const STOP_REASON: &str = "policy: summarize what you changed before stopping (marker POLICY_STOP_OK)";
/// A client still running after this is killed, and its test fails.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);
/// The shared event runtime inside an artifact (the plugin's generated MCP server).
const RUNTIME_SCRIPT: &str = "mcp/event-runtime.mjs";

// ---------------------------------------------------------------------------------------------
// Claude Code

#[test]
fn claude_code_runs_the_plugin_dir_and_honours_deny_continue_context_and_stop() {
    let Some(s) = Session::start("claude_code_runs_the_plugin_dir_and_honours_deny_continue_context_and_stop", policy)
    else {
        return;
    };
    let artifact = s.built.artifact();
    let script = Script::new(&s, "POLICY_DENY_ME");
    let mock = s.mock("anthropic-mock.mjs", &script.steps());

    let (run, stream, requests) = s.claude_plugin_dir(&mock, "policy", "1.2.0", &[("POLICY_BLOCK_STOP", "1")]);

    // 1. Claude Code loaded the plugin from the directory it was given, with its hooks file
    //    (checked by `claude_plugin_dir`).
    // 2. Every hook ran its compiled handler, through Claude's own wrappers, in order.
    assert_eq!(
        s.policy_log(),
        vec![
            json!({"hook": "sessionStart", "session": session_id(&stream), "source": "startup"}),
            json!({"hook": "beforeTool", "tool": "Bash", "command": script.deny_command, "denied": true}),
            json!({"hook": "beforeTool", "tool": "Bash", "command": script.ok_command, "denied": false}),
            json!({"hook": "afterTool", "tool": "Bash"}),
            json!({"hook": "stop", "reentry": false, "blocked": true}),
            json!({"hook": "stop", "reentry": true, "blocked": false}),
        ]
    );
    assert_eq!(
        claude_hook_events(&stream),
        vec![
            ("SessionStart".to_owned(), Answer::Some),
            ("PreToolUse".to_owned(), Answer::Some),
            ("PreToolUse".to_owned(), Answer::Nothing),
            ("PostToolUse".to_owned(), Answer::Nothing),
            ("Stop".to_owned(), Answer::Some),
            ("Stop".to_owned(), Answer::Nothing),
        ],
        "hook_started/hook_response pairs in the stream (a continuing hook must answer nothing)"
    );
    s.assert_wrappers_ran("claude", Path::new(artifact), &["sessionStart", "beforeTool", "afterTool", "stop"]);

    // 3. The deny blocked the command (it never ran) and the model was told why.
    // 4. The continuing hook did not block: the command ran and its result reached the model,
    //    approved by the `--allowedTools Bash` rule, not by the hook. (A hook that answered
    //    `permissionDecision: "allow"` shows up there as `source: "hook"`; see also the
    //    marketplace test, which runs without the rule.)
    script.assert_claude_denied_then_ran(&stream, &requests, DENY_REASON);

    // 5. The sessionStart context reached the model in its first request.
    assert!(requests[0]["body"].to_string().contains(CONTEXT), "no sessionStart context in the first request");

    // 6. The stop deny made Claude continue once, with the reason, then stop.
    assert_stop_continued_once(&requests, STOP_REASON);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

#[test]
fn claude_code_installs_from_the_marketplace_and_a_continuing_hook_approves_nothing() {
    let Some(s) =
        Session::start("claude_code_installs_from_the_marketplace_and_a_continuing_hook_approves_nothing", policy)
    else {
        return;
    };
    let artifact = s.built.artifact();
    // A command Claude Code asks about before running (it creates a file in the working
    // directory), and no `--allowedTools`: in `-p` mode an unanswered question is a denial.
    let created = s.path("work/created");
    let command = format!("touch {}", created.display());
    let mock = s.mock("anthropic-mock.mjs", &[shell(&command), text("done")]);

    // With an API key but no reachable API, `claude plugin` waits ~18 s on the network:
    // point it at the mock too.
    let add = ["plugin", "marketplace", "add", artifact];
    let added = s.run("claude-marketplace-add", s.claude_command(&mock).args(add));
    assert!(added.stdout.contains("Successfully added marketplace: policy-marketplace"), "{added:#?}");
    let installed = s
        .run("claude-plugin-install", s.claude_command(&mock).args(["plugin", "install", "policy@policy-marketplace"]));
    assert!(installed.stdout.contains("Successfully installed plugin: policy@policy-marketplace"), "{installed:#?}");

    let run = s.claude(&mock, &[], &[]);
    let stream = json_lines(&run.stdout);
    let requests = mock.requests();

    // 1. Loaded as the marketplace's plugin (a local marketplace's plugin is used in place).
    let plugin = claude_plugin(&stream, "policy");
    assert_eq!(
        (&plugin["source"], &plugin["version"]),
        (&json!("policy@policy-marketplace"), &json!("1.2.0")),
        "{plugin:#}"
    );
    let root = PathBuf::from(plugin["path"].as_str().unwrap());
    assert!(root.join(".claude-plugin/plugin.json").is_file(), "{plugin:#}");

    // 2. The hooks ran: no afterTool, because the tool never ran.
    assert_eq!(
        s.policy_log(),
        vec![
            json!({"hook": "sessionStart", "session": session_id(&stream), "source": "startup"}),
            json!({"hook": "beforeTool", "tool": "Bash", "command": command, "denied": false}),
            json!({"hook": "stop", "reentry": false, "blocked": false}),
        ]
    );
    assert_eq!(
        claude_hook_events(&stream),
        vec![
            ("SessionStart".to_owned(), Answer::Some),
            ("PreToolUse".to_owned(), Answer::Nothing),
            ("Stop".to_owned(), Answer::Nothing)
        ]
    );
    s.assert_wrappers_ran("claude", &root, &["sessionStart", "beforeTool", "stop"]);

    // 4. The hook continued, so Claude Code's own permission check decided, as it would
    //    without the plugin: not approved. Had the wrapper answered `permissionDecision:
    //    "allow"`, the command would have run, approved with `source: "hook"`.
    assert!(!created.exists(), "the command ran although nothing approved it");
    assert_eq!(claude_permission(&stream, "toolu_mock0001"), json!({"decision": "reject", "source": "config"}));
    let result = stream.iter().find(|e| e["type"] == "result").expect("a result event");
    assert_eq!(result["permission_denials"][0]["tool_use_id"], "toolu_mock0001", "{result:#}");
    expect_requests(&requests, 2);
    let refused = claude_tool_result(&requests[1], "toolu_mock0001");
    assert!(refused["is_error"] == true && text_of(&refused["content"]).contains("needs approval"), "{refused:#}");

    // 5. The context reached the model; 6. no stop deny without POLICY_BLOCK_STOP. (3, the
    //    deny, is covered by the plugin-dir test.)
    assert!(requests[0]["body"].to_string().contains(CONTEXT), "no sessionStart context in the first request");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

// ---------------------------------------------------------------------------------------------
// Event routes (`examples/routes`): the same checks for hooks declared as route files

/// What the shared prompt/submit route answers the first prompt of a session with, when the
/// plugin's MCP server (not the hook's standalone fallback) rendered it.
const ROUTES_PROMPT_CONTEXT: &str =
    "Answer in plain words; the routes plugin is listening (prompt 1, event 1, shared runtime).";
const ROUTES_STOP_REASON: &str = "routes: list the files you changed before stopping";

/// What the session/start route adds for `session` on `host`.
fn routes_session_context(session: &Value, host: &str) -> String {
    format!("Session {} started on {host} (routes plugin).", session.as_str().expect("a session id"))
}

#[test]
fn claude_code_runs_the_routes_plugin_dir_and_honours_its_event_routes() {
    let Some(s) = Session::start("claude_code_runs_the_routes_plugin_dir_and_honours_its_event_routes", routes) else {
        return;
    };
    let artifact = s.built.artifact();
    let script = Script::new(&s, "ROUTES_DENY_ME");
    let mock = s.mock("anthropic-mock.mjs", &script.steps());

    let (run, stream, requests) = s.claude_plugin_dir(&mock, "routes", "0.3.0", &[("ROUTES_BLOCK_STOP", "1")]);

    // 1. Claude Code loaded the routes plugin from the directory it was given, with its hooks
    //    (checked by `claude_plugin_dir`).
    // Every route ran its wrapper, and each answered (or continued silently) as it should.
    assert_eq!(
        claude_hook_events(&stream),
        vec![
            ("SessionStart".to_owned(), Answer::Some),
            ("UserPromptSubmit".to_owned(), Answer::Some),
            ("PreToolUse".to_owned(), Answer::Some),
            ("PreToolUse".to_owned(), Answer::Nothing),
            ("Stop".to_owned(), Answer::Some),
            ("Stop".to_owned(), Answer::Nothing),
        ],
        "hook_started/hook_response pairs in the stream (a continuing route must answer nothing)"
    );
    s.assert_wrappers_ran(
        "claude",
        Path::new(artifact),
        &["session/start", "prompt/submit", "tool/before", "stop", "session/end"],
    );
    let session = session_id(&stream);
    let ended = s.routes_log();
    assert!(ended.len() == 1 && ended[0]["event"] == "session/end", "the session/end route observed {ended:#?}");

    // Claude Code started the plugin's MCP server (the shared runtime) from the plugin dir
    // and connected to it before the first prompt.
    assert_eq!(s.runtime_starts(), [Path::new(artifact).join(RUNTIME_SCRIPT)]);
    let init = stream.iter().find(|e| e["subtype"] == "init").unwrap_or_else(|| panic!("no init event"));
    assert_eq!(
        init["mcp_servers"],
        json!([{"name": "plugin:routes:routes-event-runtime", "status": "connected", "source": "plugin"}])
    );

    // 2. The tool/before route denied the marked command (it never ran), the model was told
    //    why, and the harmless command ran.
    script.assert_claude_denied_then_ran(&stream, &requests, &format!("routes: refusing {}", script.deny_command));

    // 3. The session/start and prompt/submit contexts reached the model in its first request.
    let first = requests[0]["body"].to_string();
    let context = routes_session_context(&session, "claude");
    assert!(first.contains(&context), "no session/start context {context:?} in the first request");
    assert!(
        first.contains(ROUTES_PROMPT_CONTEXT),
        "no prompt/submit context from the shared runtime in the first request"
    );

    // 4. The stop route made Claude continue once, with the reason, then stop.
    assert_stop_continued_once(&requests, ROUTES_STOP_REASON);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

/// The entry of plugin `name` in Claude Code's stream-json `init` event.
fn claude_plugin(stream: &[Value], name: &str) -> Value {
    let init =
        stream.iter().find(|e| e["type"] == "system" && e["subtype"] == "init").expect("no init event in the stream");
    let plugins = init["plugins"].as_array().expect("init lists plugins");
    plugins
        .iter()
        .find(|p| p["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("Claude Code did not load the plugin: {plugins:#?}"))
}

fn session_id(stream: &[Value]) -> Value {
    stream.iter().find(|e| e["type"] == "system" && e["subtype"] == "init").unwrap()["session_id"].clone()
}

/// Whether a hook answered (anything on stdout) or continued silently.
#[derive(Debug, PartialEq)]
enum Answer {
    Some,
    Nothing,
}

/// `(event, answer)` per `hook_response` of `--include-hook-events`, each checked to follow
/// its `hook_started` and to have succeeded.
fn claude_hook_events(stream: &[Value]) -> Vec<(String, Answer)> {
    let started: Vec<_> =
        stream.iter().filter(|e| e["subtype"] == "hook_started").map(|e| e["hook_id"].clone()).collect();
    let responses: Vec<_> = stream.iter().filter(|e| e["subtype"] == "hook_response").collect();
    responses
        .iter()
        .map(|r| {
            assert!(started.contains(&r["hook_id"]), "a hook_response without hook_started: {r:#}");
            assert_eq!(
                (&r["exit_code"], &r["outcome"], &r["stderr"]),
                (&json!(0), &json!("success"), &json!("")),
                "{r:#}"
            );
            let answer = if r["stdout"] == "" { Answer::Nothing } else { Answer::Some };
            (r["hook_event"].as_str().unwrap().to_owned(), answer)
        })
        .collect()
}

/// The `tool_result` block for `id` in a recorded Messages API request.
fn claude_tool_result(request: &Value, id: &str) -> Value {
    let messages = request["body"]["messages"].as_array().expect("a Messages API request");
    let blocks: Vec<&Value> = messages.iter().filter_map(|m| m["content"].as_array()).flatten().collect();
    blocks
        .into_iter()
        .rfind(|b| b["type"] == "tool_result" && b["tool_use_id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no tool_result for {id} in {request:#}"))
}

/// How Claude Code decided to run (or not) the tool call `id`: the `permission_decision` of
/// the stream's `tool_result_meta` (`source` is `config` for a settings/flag rule or the
/// default check, `hook` when a PreToolUse hook decided).
fn claude_permission(stream: &[Value], id: &str) -> Value {
    let metas = stream.iter().filter_map(|e| e["tool_result_meta"].as_array()).flatten();
    metas
        .filter(|m| m["id"] == id)
        .map(|m| m["permission_decision"].clone())
        .next()
        .unwrap_or_else(|| panic!("no tool_result_meta for {id}"))
}

// ---------------------------------------------------------------------------------------------
// Codex

#[test]
fn codex_installs_from_the_marketplace_and_honours_deny_continue_context_and_stop() {
    let Some(s) =
        Session::start("codex_installs_from_the_marketplace_and_honours_deny_continue_context_and_stop", policy)
    else {
        return;
    };
    let script = Script::new(&s, "POLICY_DENY_ME");
    let mock = s.mock("openai-mock.mjs", &script.steps());

    // 1. Installed from the artifact's own marketplace file, into Codex's plugin cache.
    //    Installing proves little: Codex 0.171.0 installs a plugin whose hooks it will never
    //    load (e.g. when a root Agent Plugins `plugin.json` with `$schema` sits next to
    //    `.codex-plugin/plugin.json`, it takes the former, which has no hooks) and says
    //    nothing. What it ran is checked below.
    let codex = s.codex_install_and_exec(&mock, "policy", "1.2.0", &[("POLICY_BLOCK_STOP", "1")]);

    // 2. Every hook ran its compiled handler, through Codex's own wrappers, in order.
    let calls = s.assert_wrappers_ran("codex", &codex.root, &["sessionStart", "beforeTool", "afterTool", "stop"]);
    assert_eq!(
        s.policy_log(),
        vec![
            json!({"hook": "sessionStart", "session": codex.thread["thread_id"], "source": "startup"}),
            json!({"hook": "beforeTool", "tool": "Bash", "command": script.deny_command, "denied": true}),
            json!({"hook": "beforeTool", "tool": "Bash", "command": script.ok_command, "denied": false}),
            json!({"hook": "afterTool", "tool": "Bash"}),
            json!({"hook": "stop", "reentry": false, "blocked": true}),
            json!({"hook": "stop", "reentry": true, "blocked": false}),
        ]
    );
    assert_eq!(
        codex_answers(&calls),
        vec![
            ("sessionStart", Answer::Some),
            ("beforeTool", Answer::Some),
            ("beforeTool", Answer::Nothing),
            ("afterTool", Answer::Nothing),
            ("stop", Answer::Some),
            ("stop", Answer::Nothing),
        ],
        "what each wrapper answered Codex (a continuing hook must answer nothing)"
    );

    // 3. The deny blocked the command (it never ran) and the model was told why.
    // 4. The continuing hook did not block: the command ran, its output reached the model.
    //    (`codex exec` with `approval_policy = "never"` asks no one, and a bare `allow` from
    //    a hook changes nothing observable there; that the wrapper answered nothing at all is
    //    checked above, on what it printed.)
    script.assert_codex_denied_then_ran(&codex, DENY_REASON);

    // 5. The sessionStart context reached the model, as its own developer message.
    let input = codex.requests[0]["body"]["input"].as_array().expect("a Responses API request");
    let context = json!([{"type": "input_text", "text": CONTEXT}]);
    let seen: Vec<String> = input.iter().map(|i| i.to_string().chars().take(200).collect()).collect();
    assert!(
        input.iter().any(|i| i["role"] == "developer" && i["content"] == context),
        "no sessionStart context among the first request's input items: {seen:#?}"
    );

    // 6. The stop deny made Codex continue once, with the reason, from the plugin's own
    //    hooks document, then stop.
    assert_codex_stop_continued_once(&codex, STOP_REASON);
}

#[test]
fn codex_installs_the_routes_plugin_from_the_marketplace_and_honours_its_event_routes() {
    let Some(s) =
        Session::start("codex_installs_the_routes_plugin_from_the_marketplace_and_honours_its_event_routes", routes)
    else {
        return;
    };
    let script = Script::new(&s, "ROUTES_DENY_ME");
    let mock = s.mock("openai-mock.mjs", &script.steps());

    // 1. Installed from the artifact's own marketplace file (what it ran is checked below).
    let codex = s.codex_install_and_exec(&mock, "routes", "0.3.0", &[("ROUTES_BLOCK_STOP", "1")]);

    // Codex started the plugin's MCP server (the shared runtime), relative to the plugin
    // root as its MCP document says.
    assert_eq!(s.runtime_starts(), [PathBuf::from(format!("./{RUNTIME_SCRIPT}"))]);
    // Codex loaded the plugin's hooks: every route ran its wrapper from the installed plugin,
    // and each answered (or continued silently) as it should.
    let calls = s.assert_wrappers_ran("codex", &codex.root, &["session/start", "prompt/submit", "tool/before", "stop"]);
    assert_eq!(
        codex_answers(&calls),
        vec![
            ("session/start", Answer::Some),
            ("prompt/submit", Answer::Some),
            ("tool/before", Answer::Some),
            ("tool/before", Answer::Nothing),
            ("stop", Answer::Some),
            ("stop", Answer::Nothing),
        ],
        "what each wrapper answered Codex (a continuing route must answer nothing)"
    );

    // 2. The tool/before route denied the marked command (it never ran), the model was told
    //    why, and the harmless command ran.
    script.assert_codex_denied_then_ran(&codex, &format!("routes: refusing {}", script.deny_command));

    // 3. The session/start and prompt/submit contexts reached the model in its first request.
    let first = codex.requests[0]["body"].to_string();
    let context = routes_session_context(&codex.thread["thread_id"], "codex");
    assert!(first.contains(&context), "no session/start context {context:?} in the first request");
    assert!(
        first.contains(ROUTES_PROMPT_CONTEXT),
        "no prompt/submit context from the shared runtime in the first request"
    );

    // 4. The stop route made Codex continue once, with the reason, from the plugin's own
    //    hooks document, then stop.
    assert_codex_stop_continued_once(&codex, ROUTES_STOP_REASON);
}

// ---------------------------------------------------------------------------------------------
// Subagents: the `agent` tool selector, agentStart and agentStop (a project made here)

const AGENT_STOP_REASON: &str = "subagents: check your answer once more (marker SUBAGENT_STOP_OK)";
const AGENT_DENY_REASON: &str = "subagents: no subagent for this task (marker SUBAGENT_DENIED)";

/// A plugin whose hooks watch subagents: a `beforeTool` hook on the `agent` selector denies
/// a subagent whose input carries `SUBAGENT_DENY_ME`; `agentStop` keeps a subagent going
/// once. Each records what it saw to `$POLICY_LOG`.
const SUBAGENTS: &[(&str, &str)] = &[
    (
        "agent-bundle.config.ts",
        r#"import { defineConfig } from 'agent-bundle/config';

export default defineConfig({
  plugin: { name: 'subagents', version: '0.1.0' },
  targets: ['claude', 'codex'],
  hooks: {
    beforeTool: { handler: './src/spawn.ts', tools: ['agent'] },
    agentStart: './src/start.ts',
    agentStop: './src/stop.ts',
  },
});
"#,
    ),
    (
        "src/log.ts",
        r#"import { appendFileSync } from 'node:fs';

export function record(hook: string, detail: Record<string, unknown>): void {
  appendFileSync(process.env.POLICY_LOG!, `${JSON.stringify({ hook, ...detail })}\n`);
}
"#,
    ),
    (
        "src/spawn.ts",
        r#"import type { HookHandler } from 'agent-bundle';
import { record } from './log.js';

const handler: HookHandler<'beforeTool'> = (event, context) => {
  const denied = JSON.stringify(event.toolInput).includes('SUBAGENT_DENY_ME');
  record('beforeTool', { tool: event.toolName, canonical: context.tool, denied });
  return denied ? { outcome: 'deny', reason: 'subagents: no subagent for this task (marker SUBAGENT_DENIED)' } : undefined;
};
export default handler;
"#,
    ),
    (
        "src/start.ts",
        r#"import type { HookHandler } from 'agent-bundle';
import { record } from './log.js';

const handler: HookHandler<'agentStart'> = (event) => record('agentStart', { agent: event.agentType });
export default handler;
"#,
    ),
    (
        "src/stop.ts",
        r#"import type { HookHandler } from 'agent-bundle';
import { record } from './log.js';

const handler: HookHandler<'agentStop'> = (event) => {
  const block = !event.stopHookActive;
  record('agentStop', { agent: event.agentType, reentry: event.stopHookActive, blocked: block });
  return block ? { outcome: 'deny', reason: 'subagents: check your answer once more (marker SUBAGENT_STOP_OK)' } : undefined;
};
export default handler;
"#,
    ),
];

#[test]
fn claude_code_runs_a_subagent_through_the_agent_selector_agent_start_and_a_blocking_agent_stop() {
    let Some(s) = Session::start(
        "claude_code_runs_a_subagent_through_the_agent_selector_agent_start_and_a_blocking_agent_stop",
        subagents,
    ) else {
        return;
    };
    // The main agent calls a subagent (in the foreground: its result is the tool's); the
    // subagent answers twice (agentStop keeps it going once); the main agent ends its turn.
    let agent = json!({"description": "greet", "prompt": "say hi", "subagent_type": "general-purpose", "run_in_background": false});
    let steps = [json!({"tool": "Agent", "input": agent}), text("sub first"), text("sub again"), text("done")];
    let mock = s.mock("anthropic-mock.mjs", &steps);

    let (run, stream, requests) = s.claude_plugin_dir(&mock, "subagents", "0.1.0", &[]);

    // 1. The `agent` selector matched Claude's Agent tool, named canonically; the subagent's
    //    start and both of its stops ran their handlers, the second one re-entered.
    assert_eq!(
        s.policy_log(),
        vec![
            json!({"hook": "beforeTool", "tool": "Agent", "canonical": "agent", "denied": false}),
            json!({"hook": "agentStart", "agent": "general-purpose"}),
            json!({"hook": "agentStop", "agent": "general-purpose", "reentry": false, "blocked": true}),
            json!({"hook": "agentStop", "agent": "general-purpose", "reentry": true, "blocked": false}),
        ]
    );
    assert_eq!(
        claude_hook_events(&stream),
        vec![
            ("PreToolUse".to_owned(), Answer::Nothing),
            ("SubagentStart".to_owned(), Answer::Nothing),
            ("SubagentStop".to_owned(), Answer::Some),
            ("SubagentStop".to_owned(), Answer::Nothing),
        ]
    );
    s.assert_wrappers_ran("claude", Path::new(s.built.artifact()), &["beforeTool", "agentStart", "agentStop"]);

    // 2. The deny kept the subagent going once, with the reason (the 3rd request, the
    //    subagent's second), and no longer: its second answer is the tool's result.
    expect_requests(&requests, 4);
    let carries = |r: &Value| r["body"].to_string().contains(AGENT_STOP_REASON);
    assert_eq!(requests.iter().map(carries).collect::<Vec<_>>(), [false, false, true, false]);
    let result = claude_tool_result(&requests[3], "toolu_mock0001");
    let report = text_of(&result["content"]);
    assert!(report.contains("sub again") && !report.contains("sub first"), "{result:#}");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

#[test]
fn codex_denies_a_subagent_through_the_agent_selector() {
    let Some(s) = Session::start("codex_denies_a_subagent_through_the_agent_selector", subagents) else {
        return;
    };
    // Codex's subagent tool, as its model calls it.
    let spawn =
        json!({"tool": "spawn_agent", "namespace": "multi_agent_v1", "input": {"message": "SUBAGENT_DENY_ME say hi"}});
    let mock = s.mock("openai-mock.mjs", &[spawn, text("done")]);

    let codex = s.codex_install_and_exec(&mock, "subagents", "0.1.0", &[]);

    // The `agent` selector matched `spawn_agent`, named canonically, and the deny stopped it:
    // no subagent started, and the model was told why.
    assert_eq!(
        s.policy_log(),
        vec![json!({"hook": "beforeTool", "tool": "spawn_agent", "canonical": "agent", "denied": true})]
    );
    let calls = s.assert_wrappers_ran("codex", &codex.root, &["beforeTool"]);
    assert_eq!(codex_answers(&calls), vec![("beforeTool", Answer::Some)]);
    expect_requests(&codex.requests, 2);
    let blocked = codex_function_output(&codex.requests[1], "call_mock0001");
    assert!(blocked.contains(&format!("Tool call blocked by PreToolUse hook: {AGENT_DENY_REASON}")), "{blocked}");
    assert_eq!(codex.run.code, Some(0), "{}", codex.run.stderr);
}

/// A finished `codex exec` of an installed plugin.
struct CodexRun {
    /// Where Codex installed the plugin.
    root: PathBuf,
    run: Output,
    stream: Vec<Value>,
    requests: Vec<Value>,
    /// The stream's `thread.started` event.
    thread: Value,
}

/// What each wrapper Codex ran printed: an answer, or nothing.
fn codex_answers(calls: &[NodeCall]) -> Vec<(&str, Answer)> {
    calls.iter().map(|c| (c.event.as_str(), if c.stdout.is_empty() { Answer::Nothing } else { Answer::Some })).collect()
}

/// [`assert_stop_continued_once`], from the plugin's own hooks document (`hook_run_id`
/// names it), and Codex exited 0.
fn assert_codex_stop_continued_once(run: &CodexRun, reason: &str) {
    assert_stop_continued_once(&run.requests, reason);
    let prompt = run.requests[3]["body"]["input"].to_string();
    assert!(prompt.contains(&run.root.join(".codex-plugin/hooks.json").display().to_string()), "{prompt}");
    assert_eq!(run.run.code, Some(0), "{}", run.run.stderr);
}

/// The output Codex sent back for function call `id`, from a recorded Responses API request.
fn codex_function_output(request: &Value, id: &str) -> String {
    let input = request["body"]["input"].as_array().expect("a Responses API request");
    let item = input.iter().find(|i| i["type"] == "function_call_output" && i["call_id"] == id);
    text_of(&item.unwrap_or_else(|| panic!("no function_call_output for {id} in {input:#?}"))["output"])
}

// ---------------------------------------------------------------------------------------------
// Shared assertions

/// The scripted runs make a known number of model requests: one per script step taken.
fn expect_requests(requests: &[Value], expected: usize) {
    let last_items: Vec<String> = requests
        .iter()
        .map(|r| {
            let items = r["body"]["messages"].as_array().or(r["body"]["input"].as_array());
            let last = items.and_then(|i| i.last()).map(Value::to_string).unwrap_or_default();
            last.chars().take(400).collect()
        })
        .collect();
    assert_eq!(requests.len(), expected, "model requests (the last item of each): {last_items:#?}");
}

/// A stop deny costs one more model request (the 4th of the script), and only that one
/// carries the reason.
fn assert_stop_continued_once(requests: &[Value], reason: &str) {
    expect_requests(requests, 4);
    let carries = |r: &Value| r["body"].to_string().contains(reason);
    assert!(!carries(&requests[2]), "the stop reason arrived before the stop");
    let input = &requests[3]["body"];
    let last = input["messages"].as_array().or(input["input"].as_array()).and_then(|i| i.last());
    assert!(carries(&requests[3]), "the stop reason did not reach the model; its last item: {last:#?}");
}

/// A string, or the text of a list of content blocks.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
        other => other.to_string(),
    }
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect()
}

/// The model's script in the deny sessions: a command carrying the plugin's deny marker,
/// then a harmless one (each touches a file, so whether it ran shows), then two answers (the
/// plugin's stop hook makes the client continue once).
struct Script {
    ran: PathBuf,
    ran_ok: PathBuf,
    deny_marker: String,
    deny_command: String,
    ok_command: String,
}

impl Script {
    fn new(session: &Session, deny_marker: &str) -> Script {
        let (ran, ran_ok) = (session.path("ran"), session.path("ran-ok"));
        let deny_command = format!("touch {} && echo {deny_marker}", ran.display());
        let ok_command = format!("touch {}", ran_ok.display());
        Script { ran, ran_ok, deny_marker: deny_marker.to_owned(), deny_command, ok_command }
    }

    fn steps(&self) -> [Value; 4] {
        [shell(&self.deny_command), shell(&self.ok_command), text("first answer"), text("second answer")]
    }

    /// The deny blocked the first command (it never ran) and Claude told the model `reason`;
    /// the second ran, approved by the `--allowedTools Bash` rule, and its result reached
    /// the model.
    fn assert_claude_denied_then_ran(&self, stream: &[Value], requests: &[Value], reason: &str) {
        expect_requests(requests, 4);
        assert!(!self.ran.exists(), "the denied command ran");
        let denied = claude_tool_result(&requests[1], "toolu_mock0001");
        assert_eq!(denied["is_error"], true, "{denied:#}");
        assert!(text_of(&denied["content"]).contains(reason), "the deny reason did not reach the model: {denied:#}");
        assert_eq!(
            claude_permission(stream, "toolu_mock0001"),
            json!({"decision": "reject", "source": "hook", "reason_type": "hook"})
        );
        assert!(self.ran_ok.exists(), "the allowed command did not run");
        let result = claude_tool_result(&requests[2], "toolu_mock0002");
        assert_eq!(
            (&result["is_error"], &result["content"]),
            (&json!(false), &json!("(Bash completed with no output)")),
            "{result:#}"
        );
        assert_eq!(
            claude_permission(stream, "toolu_mock0002"),
            json!({"decision": "accept", "source": "config", "reason_type": "rule"})
        );
    }

    /// The deny blocked the first command (Codex never executed it) and told the model
    /// `reason`; the second ran and its output reached the model.
    fn assert_codex_denied_then_ran(&self, run: &CodexRun, reason: &str) {
        expect_requests(&run.requests, 4);
        assert!(!self.ran.exists(), "the denied command ran");
        let blocked = codex_function_output(&run.requests[1], "call_mock0001");
        assert!(blocked.contains(&format!("Command blocked by PreToolUse hook: {reason}")), "{blocked}");
        let executed: Vec<_> = run
            .stream
            .iter()
            .filter(|e| e["item"]["type"] == "command_execution")
            .map(|e| e["item"]["command"].to_string())
            .collect();
        assert!(executed.iter().all(|c| !c.contains(&self.deny_marker)), "{executed:#?}");
        assert!(self.ran_ok.exists(), "the allowed command did not run");
        let output = codex_function_output(&run.requests[2], "call_mock0002");
        assert!(output.contains("Process exited with code 0"), "{output}");
    }
}

fn shell(command: &str) -> Value {
    json!({"shell": command})
}

fn text(reply: &str) -> Value {
    json!({"text": reply})
}

// ---------------------------------------------------------------------------------------------
// Fixtures: the namespace probe, the clients, the artifact (all once per test binary)

fn network_namespaces() -> bool {
    static PROBE: OnceLock<bool> = OnceLock::new();
    *PROBE.get_or_init(|| {
        let probe = Command::new("unshare").args(["-n", "true"]).stdout(Stdio::null()).stderr(Stdio::null()).status();
        probe.is_ok_and(|status| status.success())
    })
}

struct Clients {
    claude: PathBuf,
    codex: PathBuf,
}

/// Both pinned clients, installed on first use; Codex's native binary is in the same
/// node_modules as Claude Code's.
fn clients() -> &'static Clients {
    static CLIENTS: OnceLock<Clients> = OnceLock::new();
    CLIENTS.get_or_init(|| {
        let claude = claude_binary();
        let node_modules = claude.ancestors().nth(3).unwrap().to_owned();
        let (package, triple) = match std::env::consts::ARCH {
            "x86_64" => ("codex-linux-x64", "x86_64-unknown-linux-musl"),
            "aarch64" => ("codex-linux-arm64", "aarch64-unknown-linux-musl"),
            other => panic!("no Codex binary for {other}"),
        };
        let codex = node_modules.join("@openai").join(package).join("vendor").join(triple).join("bin/codex");
        assert!(claude.is_file() && codex.is_file(), "missing {} or {}", claude.display(), codex.display());
        Clients { claude, codex }
    })
}

struct Built {
    _project: tempfile::TempDir,
    artifact: PathBuf,
    /// The manifest's hook index: one row per (hook, host).
    hooks: Vec<Value>,
}

impl Built {
    /// The artifact `agent-bundle build` just wrote in `project`, with its manifest's hooks.
    fn read(project: tempfile::TempDir) -> Built {
        let artifact = project.path().join("artifact");
        let manifest: Value =
            serde_json::from_slice(&fs::read(artifact.join("agent-bundle.manifest.json")).unwrap()).unwrap();
        Built { hooks: manifest["hooks"].as_array().unwrap().clone(), artifact, _project: project }
    }

    fn artifact(&self) -> &str {
        self.artifact.to_str().unwrap()
    }
}

/// The policy example (config-declared hooks), built once for every test here.
fn policy() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let (project, _) = support::built("policy");
        Built::read(project)
    })
}

/// The routes example (event routes under `src/events/`), built once for every test here.
/// Its prompt/submit route asks for the shared runtime (hosted by the generated MCP server)
/// and falls back to standalone; the build prints no diagnostics.
fn routes() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let (project, _) = support::built("routes");
        Built::read(project)
    })
}

/// The subagents project ([`SUBAGENTS`]), built once for every test here.
fn subagents() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let project = support::project(SUBAGENTS);
        let (code, report) = support::build_json(project.path(), &[]);
        assert_eq!((code, &report["diagnostics"]), (0, &json!([])), "{report:#}");
        Built::read(project)
    })
}

// ---------------------------------------------------------------------------------------------
// One client session: temp dirs, a network namespace, a `node` that records hook runs

struct Session {
    dir: tempfile::TempDir,
    netns: Netns,
    /// The example whose artifact this session's client runs.
    built: &'static Built,
}

/// One recorded `node <script>` call made by a client.
#[derive(Debug)]
struct NodeCall {
    event: String,
    code: i32,
    stdout: String,
}

impl Session {
    /// A fresh session, or `None` (after saying so on stderr) where no network namespace
    /// can be made.
    fn start(test: &str, example: fn() -> &'static Built) -> Option<Session> {
        if !network_namespaces() {
            eprintln!(
                "host_smoke::{test}: SKIPPED: this machine cannot create a network namespace (`unshare -n true` failed; it needs root, or CAP_SYS_ADMIN)"
            );
            return None;
        }
        // Install the clients and build the example once, now: failing there fails the test.
        clients();
        let built = example();
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "work", "bin", "tmp"] {
            fs::create_dir(dir.path().join(sub)).unwrap();
        }
        // Observation only: runs the real node with the same stdin, stdout and exit code. The
        // shared runtime (an MCP server: its stdout is a live protocol) is recorded and exec'd.
        let shim = dir.path().join("bin/node");
        let script = format!(
            "#!/bin/sh\ncase \"$1\" in */{RUNTIME_SCRIPT}) printf 'runtime\\t%s\\t\\n' \"$1\" >> '{log}'; exec '{node}' \"$@\";; esac\n\
             out=$('{node}' \"$@\"); code=$?\nprintf '%s\\t%s\\t%s\\n' \"$code\" \"$1\" \"$out\" >> '{log}'\nprintf '%s' \"$out\"\nexit $code\n",
            node = which("node").display(),
            log = dir.path().join("node-calls.tsv").display(),
        );
        fs::write(&shim, script).unwrap();
        fs::set_permissions(&shim, fs::Permissions::from_mode(0o755)).unwrap();
        Some(Session { dir, netns: Netns::new(), built })
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    fn mock(&self, script: &str, steps: &[Value]) -> Mock {
        Mock::start(&self.netns, script, steps, self.path("requests.jsonl"))
    }

    /// A client command inside the namespace, with nothing of this process's environment
    /// but PATH (the shim first) and the session's HOME.
    fn command(&self, program: &Path, env: &[(&str, &str)]) -> Command {
        let mut command = self.netns.command(program);
        let path = format!("{}:{}", self.path("bin").display(), std::env::var("PATH").unwrap_or_default());
        command.env_clear().env("PATH", path).env("LANG", "C.UTF-8").env("HOME", self.path("home"));
        command.env("POLICY_LOG", self.path("policy.jsonl")).env("ROUTES_LOG", self.path("routes.jsonl"));
        // The shared runtime's sockets go to `$TMPDIR/agent-bundle-<uid>`, private to this
        // session. Not `AGENT_BUNDLE_RUNTIME_DIR`: Codex starts MCP servers with a short list
        // of variables (TMPDIR is one), so hooks and runtime would disagree.
        command.env("TMPDIR", self.path("tmp"));
        command.envs(env.iter().copied()).current_dir(self.path("work"));
        command
    }

    fn claude_command(&self, mock: &Mock) -> Command {
        let mut command = self.command(&clients().claude, &[]);
        command.env("CLAUDE_CONFIG_DIR", self.path("home/.claude")).envs([
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("CLAUDE_CODE_MAX_RETRIES", "0"),
            ("ANTHROPIC_API_KEY", "dummy"),
        ]);
        command.env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", mock.port));
        command
    }

    /// `claude -p "hi"` in stream-json with hook events and a debug log.
    fn claude(&self, mock: &Mock, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = self.claude_command(mock);
        command.envs(env.iter().copied()).args([
            "-p",
            "hi",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-hook-events",
        ]);
        command.arg("--debug-file").arg(self.path("debug.log")).arg("--no-session-persistence").args(args);
        self.run("claude", &mut command)
    }

    /// `claude -p "hi"` with the built plugin `name` loaded by `--plugin-dir` (checked in its
    /// stream and debug log) and `env` set (a plugin's stop hook blocks once where asked).
    fn claude_plugin_dir(
        &self,
        mock: &Mock,
        name: &str,
        version: &str,
        env: &[(&str, &str)],
    ) -> (Output, Vec<Value>, Vec<Value>) {
        let artifact = self.built.artifact();
        let run = self.claude(mock, &["--plugin-dir", artifact, "--allowedTools", "Bash"], env);
        let stream = json_lines(&run.stdout);
        let plugin = claude_plugin(&stream, name);
        let source = format!("{name}@inline");
        assert_eq!((&plugin["source"], &plugin["version"]), (&json!(source), &json!(version)), "{plugin:#}");
        assert_eq!(plugin["path"], artifact);
        let debug = fs::read_to_string(self.path("debug.log")).unwrap();
        let hooks_file = format!(
            "Read hooks.json for plugin {name} (enabled=true): {}",
            Path::new(artifact).join("hooks/hooks.json").display()
        );
        assert!(debug.contains(&hooks_file), "the debug log never read the plugin's hooks file:\n{debug}");
        (run, stream, mock.requests())
    }

    /// Installs the built plugin `name` from the artifact's own marketplace file into
    /// Codex's plugin cache, then runs `codex exec` with `env` set (a plugin's stop hook
    /// blocks once where asked), checking that the turn completed without errors.
    fn codex_install_and_exec(&self, mock: &Mock, name: &str, version: &str, env: &[(&str, &str)]) -> CodexRun {
        self.write_codex_config(mock);
        let add = ["plugin", "marketplace", "add", self.built.artifact()];
        let added = self.run("codex-marketplace-add", self.codex_command(&[]).args(add));
        assert!(added.stdout.contains(&format!("Added marketplace `{name}-marketplace`")), "{added:#?}");
        let id = format!("{name}@{name}-marketplace");
        let installed = self.run("codex-plugin-add", self.codex_command(&[]).args(["plugin", "add", &id, "--json"]));
        let report: Value = serde_json::from_str(&installed.stdout).unwrap_or_else(|_| panic!("{installed:#?}"));
        assert_eq!((&report["pluginId"], &report["version"]), (&json!(id), &json!(version)), "{report:#}");
        let root = PathBuf::from(report["installedPath"].as_str().unwrap());
        assert!(root.starts_with(self.path("home")) && root.join(".codex-plugin/plugin.json").is_file(), "{report:#}");

        let exec = ["exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", "hi"];
        let run = self.run("codex-exec", self.codex_command(env).args(exec));
        let stream = json_lines(&run.stdout);
        let thread =
            stream.iter().find(|e| e["type"] == "thread.started").unwrap_or_else(|| panic!("{run:#?}")).clone();
        assert!(stream.iter().any(|e| e["type"] == "turn.completed"), "{run:#?}");
        for event in &stream {
            let error = event["type"] == "item.completed" && event["item"]["type"] == "error";
            let expected =
                event["item"]["message"].as_str().is_some_and(|m| m.contains("--dangerously-bypass-hook-trust"));
            assert!(!error || expected, "Codex reported an error: {event:#}");
        }
        CodexRun { root, run, stream, requests: mock.requests(), thread }
    }

    fn codex_command(&self, env: &[(&str, &str)]) -> Command {
        let mut command = self.command(&clients().codex, env);
        // Codex syncs a plugin catalog from the network whatever the config says: make
        // those attempts fail at once.
        command.env("CODEX_HOME", self.path("home/.codex")).envs([
            ("GIT_ALLOW_PROTOCOL", "file"),
            ("HTTP_PROXY", "http://127.0.0.1:9"),
            ("HTTPS_PROXY", "http://127.0.0.1:9"),
            ("ALL_PROXY", "http://127.0.0.1:9"),
            ("NO_PROXY", "127.0.0.1,localhost"),
        ]);
        command
    }

    fn write_codex_config(&self, mock: &Mock) {
        let config = format!(
            r#"model = "gpt-5.5"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:{port}/v1"
wire_api = "responses"
requires_openai_auth = false
request_max_retries = 0
stream_max_retries = 0

[features]
unbounded_connection_retries = false

[analytics]
enabled = false
"#,
            port = mock.port
        );
        fs::create_dir_all(self.path("home/.codex")).unwrap();
        fs::write(self.path("home/.codex/config.toml"), config).unwrap();
    }

    /// Runs a client command to completion, or kills it (and everything it started) after
    /// `CLIENT_TIMEOUT` and fails.
    fn run(&self, label: &str, command: &mut Command) -> Output {
        let (stdout, stderr) = (self.path(&format!("{label}.stdout")), self.path(&format!("{label}.stderr")));
        command
            .stdin(Stdio::null())
            .stdout(fs::File::create(&stdout).unwrap())
            .stderr(fs::File::create(&stderr).unwrap());
        let mut child = command.process_group(0).spawn().unwrap_or_else(|e| panic!("{label}: {e}"));
        let started = Instant::now();
        let deadline = started + CLIENT_TIMEOUT;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if Instant::now() > deadline {
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // The client's process group (its hooks and shell commands): nothing may outlive it.
        unsafe { libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL) };
        if status.is_none() {
            let _ = child.wait();
        }
        eprintln!("host_smoke: {label}: {:.1} s", started.elapsed().as_secs_f64());
        let output = Output {
            code: status.and_then(|s| s.code()),
            stdout: fs::read_to_string(stdout).unwrap(),
            stderr: fs::read_to_string(stderr).unwrap(),
        };
        assert!(status.is_some(), "{label} still ran after {CLIENT_TIMEOUT:?} and was killed: {output:#?}");
        output
    }

    /// The handlers' `$POLICY_LOG` lines.
    fn policy_log(&self) -> Vec<Value> {
        json_lines(&fs::read_to_string(self.path("policy.jsonl")).unwrap_or_default())
    }

    /// The routes' `$ROUTES_LOG` lines (only session/end writes one).
    fn routes_log(&self) -> Vec<Value> {
        json_lines(&fs::read_to_string(self.path("routes.jsonl")).unwrap_or_default())
    }

    /// The shared runtimes the client started (`mcp/event-runtime.mjs` scripts), in order.
    fn runtime_starts(&self) -> Vec<PathBuf> {
        let log = fs::read_to_string(self.path("node-calls.tsv")).unwrap_or_default();
        log.lines()
            .filter_map(|line| line.strip_prefix("runtime\t"))
            .map(|rest| PathBuf::from(rest.trim_end_matches('\t')))
            .collect()
    }

    /// Checks that every `node` the client started ran one of this host's wrappers from the
    /// installed plugin `root` (as the manifest lists them) and exited 0, and that the given
    /// events' wrappers all ran. Returns the calls in order.
    fn assert_wrappers_ran(&self, host: &str, root: &Path, events: &[&str]) -> Vec<NodeCall> {
        let wrappers: BTreeMap<PathBuf, String> = self
            .built
            .hooks
            .iter()
            .filter(|h| h["host"] == host)
            .map(|h| (root.join(h["path"].as_str().unwrap()), h["event"].as_str().unwrap().to_owned()))
            .collect();
        let log = fs::read_to_string(self.path("node-calls.tsv")).unwrap_or_default();
        assert!(!log.is_empty(), "{host} ran none of the plugin's hooks: it did not load them (and said nothing)");
        let calls: Vec<NodeCall> = log
            .lines()
            .filter(|line| !line.starts_with("runtime\t"))
            .map(|line| {
                let mut fields = line.splitn(3, '\t');
                let (code, script, stdout) =
                    (fields.next().unwrap(), fields.next().unwrap(), fields.next().unwrap_or(""));
                let script = PathBuf::from(script);
                let event = wrappers.get(&script).unwrap_or_else(|| {
                    panic!("{host} ran {} which is not one of its wrappers {wrappers:#?}", script.display())
                });
                NodeCall { event: event.clone(), code: code.parse().unwrap(), stdout: stdout.to_owned() }
            })
            .collect();
        for call in &calls {
            assert_eq!(call.code, 0, "{call:#?}");
        }
        for event in events {
            assert!(calls.iter().any(|c| c.event == *event), "{host} never ran the {event} wrapper: {calls:#?}");
        }
        calls
    }
}

#[derive(Debug)]
struct Output {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn which(program: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} is not on PATH"))
}

/// A network namespace with only loopback, up. It lives as long as its holder process
/// (`cat`, which also ends when this process dies and its stdin closes).
struct Netns {
    holder: Child,
}

impl Netns {
    fn new() -> Netns {
        let mut holder = Command::new("unshare")
            .args(["-n", "sh", "-c", "ip link set lo up && echo up && exec cat >/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("unshare runs");
        let mut line = String::new();
        BufReader::new(holder.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "up", "could not bring loopback up in the namespace");
        Netns { holder }
    }

    fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new("nsenter");
        command.arg(format!("--net=/proc/{}/ns/net", self.holder.id())).arg("--").arg(program);
        command
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

/// A model-API mock (`tests/hosts/<script>`) inside the namespace, recording to `log`.
struct Mock {
    child: Child,
    port: u16,
    log: PathBuf,
    /// The model endpoint it answers (`POST`).
    endpoint: &'static str,
}

impl Mock {
    fn start(netns: &Netns, script: &str, steps: &[Value], log: PathBuf) -> Mock {
        let mut child = netns
            .command(which("node"))
            .arg(repo().join("tests/hosts").join(script))
            .arg("--log")
            .arg(&log)
            .arg("--script")
            .arg(Value::from(steps.to_vec()).to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("node runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = serde_json::from_str::<Value>(&line)
            .ok()
            .and_then(|v| v["port"].as_u64())
            .unwrap_or_else(|| panic!("{script} printed {line:?}"));
        let endpoint = if script.starts_with("anthropic") { "/v1/messages" } else { "/v1/responses" };
        Mock { child, port: port as u16, log, endpoint }
    }

    /// The model requests received so far, `{n, method, path, body}` (the log also has any
    /// other request, answered 404).
    fn requests(&self) -> Vec<Value> {
        let all = json_lines(&fs::read_to_string(&self.log).unwrap_or_default());
        all.into_iter().filter(|r| r["method"] == "POST" && r["path"] == self.endpoint).collect()
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
