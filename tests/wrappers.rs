//! Emitted wrappers, run by Node on the payloads real hosts sent, answer in each host's
//! own output shape; bad input fails loudly with nothing on stdout.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::support::{self, CLAUDE, CODEX, node, payload};

/// The policy example, built once for all tests here.
fn policy() -> &'static Path {
    static BUILT: OnceLock<tempfile::TempDir> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = support::example("policy");
            let (code, report) = support::build_json(dir.path(), &[]);
            assert_eq!(code, 0, "{report:#}");
            dir
        })
        .path()
}

fn wrapper(event: &str, host: &str) -> PathBuf {
    let artifact = policy().join("artifact");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(artifact.join("agent-bundle.manifest.json")).unwrap()).unwrap();
    let row = manifest["hooks"].as_array().unwrap().iter().find(|h| h["event"] == event && h["host"] == host).unwrap();
    artifact.join(row["path"].as_str().unwrap())
}

/// Runs the wrapper and returns (exit code, parsed stdout or Null, stderr).
fn run(event: &str, host: &str, input: &Value, env: &[(&str, &str)]) -> (i32, Value, String) {
    let (code, stdout, stderr) = node(&wrapper(event, host), input.to_string().as_bytes(), env);
    let output =
        if stdout.is_empty() { Value::Null } else { serde_json::from_str(&stdout).expect("stdout is one JSON value") };
    (code, output, stderr)
}

fn with_command(mut envelope: Value, command: &str) -> Value {
    envelope["tool_input"]["command"] = command.into();
    envelope
}

#[test]
fn a_continuing_before_tool_hook_answers_nothing_on_claude_and_codex() {
    for host_dir in [CLAUDE, CODEX] {
        let host = if host_dir == CLAUDE { "claude" } else { "codex" };
        let (code, output, stderr) = run("beforeTool", host, &payload(host_dir, "PreToolUse"), &[]);
        assert_eq!((code, &output), (0, &Value::Null), "{host}: {stderr}");
    }
}

#[test]
fn a_denying_before_tool_hook_answers_with_the_native_decision() {
    let reason = "policy: the command carries the POLICY_DENY_ME marker";
    for (host_dir, host) in [(CLAUDE, "claude"), (CODEX, "codex")] {
        let input = with_command(payload(host_dir, "PreToolUse"), "echo POLICY_DENY_ME");
        let (code, output, stderr) = run("beforeTool", host, &input, &[]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(
            output,
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}})
        );
    }
    // A tool call of several MiB (a long Write, a patch) is judged as any other: a wrapper
    // that refused it would fail open, and the call would go through unjudged.
    let mut long = with_command(payload(CLAUDE, "PreToolUse"), "echo POLICY_DENY_ME");
    long["tool_input"]["content"] = "#".repeat(3 * 1024 * 1024).into();
    let (code, output, stderr) = run("beforeTool", "claude", &long, &[]);
    assert_eq!((code, &output["hookSpecificOutput"]["permissionDecision"]), (0, &json!("deny")), "{stderr}");
    // A permission mode a host release adds is a string like any: refusing it would fail
    // every hook open, this deny with it.
    for (host_dir, host) in [(CLAUDE, "claude"), (CODEX, "codex")] {
        let mut input = with_command(payload(host_dir, "PreToolUse"), "echo POLICY_DENY_ME");
        input["permission_mode"] = "someNewMode".into();
        let (code, output, stderr) = run("beforeTool", host, &input, &[]);
        assert_eq!((code, &output["hookSpecificOutput"]["permissionDecision"]), (0, &json!("deny")), "{stderr}");
    }
    let cursor = json!({
        "conversation_id": "c1", "generation_id": "g1", "model": "m", "hook_event_name": "preToolUse",
        "cursor_version": "3.7.21", "workspace_roots": ["/w"], "user_email": null, "transcript_path": null,
        "tool_name": "Shell", "tool_input": {"command": "echo POLICY_DENY_ME"}, "tool_use_id": "t1", "cwd": "/w",
    });
    let (code, output, stderr) = run("beforeTool", "cursor", &cursor, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(output, json!({"permission": "deny", "user_message": reason, "agent_message": reason}));
}

#[test]
fn session_start_context_reaches_each_host_channel() {
    let context = "The policy plugin is active: dangerous shell commands are denied (marker POLICY_CONTEXT_OK).";
    for (host_dir, host) in [(CLAUDE, "claude"), (CODEX, "codex")] {
        let (code, output, stderr) = run("sessionStart", host, &payload(host_dir, "SessionStart"), &[]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(
            output,
            json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}})
        );
    }
    let cursor = json!({"conversation_id": "c1", "hook_event_name": "sessionStart", "session_id": "c1", "is_background_agent": false});
    let (code, output, stderr) = run("sessionStart", "cursor", &cursor, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(output, json!({"additional_context": context}));
}

#[test]
fn after_tool_accepts_codex_string_responses_and_claude_objects() {
    let log = tempfile::NamedTempFile::new().unwrap();
    let log_path = log.path().to_str().unwrap();
    for (host_dir, host) in [(CLAUDE, "claude"), (CODEX, "codex")] {
        let (code, output, stderr) =
            run("afterTool", host, &payload(host_dir, "PostToolUse"), &[("POLICY_LOG", log_path)]);
        assert_eq!((code, output), (0, Value::Null), "{host}: {stderr}");
    }
    let lines = std::fs::read_to_string(log.path()).unwrap();
    assert_eq!(lines.lines().count(), 2, "the handler ran on both hosts: {lines}");
}

#[test]
fn a_stop_hook_that_denies_blocks_with_its_reason() {
    let reason = "policy: summarize what you changed before stopping (marker POLICY_STOP_OK)";
    for (host_dir, host) in [(CLAUDE, "claude"), (CODEX, "codex")] {
        let (code, output, stderr) = run("stop", host, &payload(host_dir, "Stop"), &[("POLICY_BLOCK_STOP", "1")]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(output, json!({"decision": "block", "reason": reason}));
        // Re-entry: the host is already continuing because of this hook, so it must not loop.
        let mut again = payload(host_dir, "Stop");
        again["stop_hook_active"] = true.into();
        let (code, output, _) = run("stop", host, &again, &[("POLICY_BLOCK_STOP", "1")]);
        assert_eq!((code, output), (0, Value::Null));
    }
    let cursor = json!({"conversation_id": "c1", "hook_event_name": "stop", "status": "completed", "loop_count": 0});
    let (code, output, stderr) = run("stop", "cursor", &cursor, &[("POLICY_BLOCK_STOP", "1")]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(output, json!({"followup_message": reason}));
}

#[test]
fn bad_input_fails_with_a_message_and_nothing_on_stdout() {
    let pre_tool = payload(CLAUDE, "PreToolUse");
    let mut wrong_event = pre_tool.clone();
    wrong_event["hook_event_name"] = "PostToolUse".into();
    let mut missing = pre_tool.clone();
    missing.as_object_mut().unwrap().remove("tool_use_id");
    let mut wrong_type = pre_tool.clone();
    wrong_type["tool_input"] = "echo hi".into();
    let huge = format!("{{\"pad\": \"{}\"}}", "x".repeat(64 * 1024 * 1024));
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (Vec::new(), "stdin must contain exactly one JSON value"),
        (b"{not json".to_vec(), "stdin must contain exactly one JSON value"),
        (b"[1, 2]".to_vec(), "stdin JSON value must be an object"),
        (huge.into_bytes(), "stdin exceeds the 64 MiB native-payload limit"),
        (wrong_event.to_string().into_bytes(), "native hook_event_name must equal PreToolUse"),
        (missing.to_string().into_bytes(), "native PreToolUse tool_use_id is required"),
        (wrong_type.to_string().into_bytes(), "native PreToolUse tool_input must be object"),
    ];
    let script = wrapper("beforeTool", "claude");
    for (input, message) in cases {
        let (code, stdout, stderr) = node(&script, &input, &[]);
        assert_eq!(code, 1, "{message}");
        assert_eq!(stdout, "", "{message}");
        assert!(stderr.contains(message), "expected {message:?} in {stderr:?}");
    }
}

#[test]
fn a_result_the_event_does_not_allow_fails_instead_of_reaching_the_host() {
    let dir = support::project(&[
        (
            "agent-bundle.config.ts",
            "export default { plugin: { name: 'rules' }, targets: ['claude', 'codex'], hooks: { afterTool: './h.ts', agentStop: './s.ts' } };",
        ),
        ("h.ts", "export default () => ({ outcome: 'deny', reason: 'no' });\n"),
        ("s.ts", "export default () => ({ additionalContext: 'ctx' });\n"),
    ]);
    let (code, report) = support::build_json(dir.path(), &[]);
    assert_eq!(code, 0, "{report:#}");
    let path = |event: &str, host: &str| {
        let hook =
            report["hooks"].as_array().unwrap().iter().find(|h| h["event"] == event && h["host"] == host).unwrap();
        dir.path().join("artifact").join(hook["path"].as_str().unwrap())
    };
    let (code, stdout, stderr) =
        node(&path("afterTool", "claude"), payload(CLAUDE, "PostToolUse").to_string().as_bytes(), &[]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert!(stderr.contains("afterTool cannot deny, stop, or replace input"), "{stderr}");
    // agentStop context: no host has the channel (Claude Code takes it for a continuation of
    // the subagent, run again for every stop).
    let agent_stop = json!({
        "session_id": "s", "transcript_path": "/t", "cwd": "/c", "hook_event_name": "SubagentStop",
        "agent_id": "a", "agent_type": "Explore", "stop_hook_active": false,
    });
    for host in ["claude", "codex"] {
        let (code, stdout, stderr) = node(&path("agentStop", host), agent_stop.to_string().as_bytes(), &[]);
        assert_eq!((code, stdout.as_str()), (1, ""));
        assert!(stderr.contains("agentStop takes no additionalContext"), "{stderr}");
    }
}

/// A tool event's `context.tool` names the tool canonically, whatever the host calls it:
/// Claude Code's `Bash` and Codex's `apply_patch`, on their real payloads.
#[test]
fn a_handler_reads_the_tool_canonically_from_its_context() {
    let handler = "export default (_event: unknown, context: { tool: string | null }) => \
                   ({ outcome: 'deny' as const, reason: String(context.tool) });\n";
    let config = "export default { plugin: { name: 'tools' }, targets: ['claude', 'codex'], hooks: { beforeTool: './src/guard.ts' } };\n";
    let dir = support::project(&[("agent-bundle.config.ts", config), ("src/guard.ts", handler)]);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let mut patch = support::payload(support::CODEX, "PreToolUse");
    patch["tool_name"] = "apply_patch".into();
    patch["tool_input"] = serde_json::json!({ "command": "*** Begin Patch\n*** End Patch\n" });
    for (target, payload, tool) in
        [("claude", support::payload(support::CLAUDE, "PreToolUse"), "shell"), ("codex", patch, "file.write")]
    {
        let output =
            support::simulate(dir.path(), target, "before-tool", &payload.to_string(), &["--native", "--json"]);
        assert_eq!(output.status.code(), Some(0), "{target}: {}", String::from_utf8_lossy(&output.stderr));
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(report["result"]["reason"], tool, "{target}");
    }
}

/// `--native` takes the host's own input, as captured from it (fields the matrix does not
/// list included, as the wrapper takes them); canonical input holding a host's field says so.
#[test]
fn hooks_simulate_takes_a_hosts_own_input_with_native() {
    let handler = "export default (event: { stopHookActive?: boolean }) => \
                   (event.stopHookActive ? undefined : { outcome: 'deny' as const, reason: 'keep going' });\n";
    let config = "export default { plugin: { name: 'native' }, targets: ['claude', 'codex'], hooks: { stop: './src/stop.ts' } };\n";
    let dir = support::project(&[("agent-bundle.config.ts", config), ("src/stop.ts", handler)]);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    for (target, host_dir) in [("claude", support::CLAUDE), ("codex", support::CODEX)] {
        let payload = support::payload(host_dir, "Stop");
        let output = support::simulate(dir.path(), target, "stop", &payload.to_string(), &["--native", "--json"]);
        assert_eq!(output.status.code(), Some(0), "{target}: {}", String::from_utf8_lossy(&output.stderr));
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(report["nativeInput"], payload, "{target}: passed unchanged");
        assert_eq!(report["result"]["outcome"], "deny", "{target}");
    }
    // A whole capture (its environment beside its input) says to pass the input.
    let capture = serde_json::json!({ "env": {}, "stdin": support::payload(support::CLAUDE, "Stop") }).to_string();
    let output = support::simulate(dir.path(), "claude", "stop", &capture, &["--native"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("pass its `stdin`"));
    let payload = support::payload(support::CLAUDE, "Stop").to_string();
    let output = support::simulate(dir.path(), "claude", "stop", &payload, &[]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("; this is the host's own input: pass it with --native"), "{stderr}");
}

/// A simulated hook gets the variables its host sets (the plugin's root is the artifact,
/// the project the working folder, the data folder a fresh one), and none of what the
/// caller's shell holds of any host's variables.
#[test]
fn hooks_simulate_gives_a_hook_its_hosts_environment_and_no_other() {
    let handler = "export default () => ({ additionalContext: JSON.stringify(Object.fromEntries(\n  \
                   ['CLAUDE_PLUGIN_ROOT', 'CLAUDE_PLUGIN_DATA', 'CLAUDE_PROJECT_DIR', 'PLUGIN_ROOT', 'CURSOR_PLUGIN_ROOT', 'CODEX_HOME']\n    \
                   .map((name) => [name, process.env[name] ?? null]))) + ' ' + process.cwd() });\n";
    let config = "export default { plugin: { name: 'env' }, targets: ['claude', 'codex'], hooks: { sessionStart: './src/start.ts' } };\n";
    let dir = support::project(&[("agent-bundle.config.ts", config), ("src/start.ts", handler)]);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let input = r#"{"sessionId":"s","transcriptPath":"/t","cwd":"/","source":"startup"}"#;
    let context = |target: &str| {
        let mut command = support::bin();
        command.args(["hooks", "simulate", "--target", target, "--hook", "session-start", "--input", input, "--json"]);
        command.env("CURSOR_PLUGIN_ROOT", "/from/the/shell").env("CODEX_HOME", "/from/the/shell");
        let output = command.current_dir(dir.path()).output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        let text = report["result"]["additionalContext"].as_str().unwrap().to_owned();
        let (env, cwd) = text.rsplit_once(' ').unwrap();
        (serde_json::from_str::<Value>(env).unwrap(), cwd.to_owned())
    };
    let artifact = dir.path().join("artifact").canonicalize().unwrap();
    let (claude, cwd) = context("claude");
    assert_eq!(claude["CLAUDE_PLUGIN_ROOT"], artifact.to_str().unwrap());
    assert_eq!(claude["CLAUDE_PROJECT_DIR"], cwd.as_str());
    let data = claude["CLAUDE_PLUGIN_DATA"].as_str().unwrap();
    assert!(data.ends_with("/data") && !data.starts_with(artifact.to_str().unwrap()), "{data}");
    assert_eq!((&claude["PLUGIN_ROOT"], &claude["CURSOR_PLUGIN_ROOT"]), (&Value::Null, &Value::Null), "{claude}");
    let (codex, _) = context("codex");
    assert_eq!(codex["PLUGIN_ROOT"], artifact.to_str().unwrap());
    assert_eq!(codex["CLAUDE_PLUGIN_ROOT"], artifact.to_str().unwrap());
    assert_eq!(codex["CLAUDE_PROJECT_DIR"], Value::Null, "Codex sets no project directory");
    assert!(codex["CODEX_HOME"].as_str().unwrap().ends_with("/home"), "{codex}");
    assert_eq!(claude["CODEX_HOME"], Value::Null, "{claude}");

    // Nor does a shared route, in the runtime the simulation starts, see the shell's.
    let route = "import { Agent } from '@agent-bundle/runtime';\nexport const config = { runtime: 'shared' };\n\
                 export default () => <Agent.Context>{String(process.env.CLAUDE_PLUGIN_ROOT)}</Agent.Context>;\n";
    let config = "export default { plugin: { name: 'env' }, targets: ['claude'] };\n";
    let dir = support::project(&[("agent-bundle.config.ts", config), ("src/events/prompt/submit.tsx", route)]);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let input = r#"{"sessionId":"s","transcriptPath":"/t","cwd":"/","prompt":"hi"}"#;
    let mut command = support::bin();
    command.args(["hooks", "simulate", "--target", "claude", "--hook", "event-route", "--input", input, "--json"]);
    let output = command.env("CLAUDE_PLUGIN_ROOT", "/from/the/shell").current_dir(dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["result"]["additionalContext"], "undefined", "{report:#}");
}

#[test]
fn hooks_simulate_runs_the_real_wrapper_from_canonical_input() {
    let dir = support::example("hooks-and-scripts");
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let list = support::run(dir.path(), &["hooks", "list", "--artifact", "artifact", "--target", "claude", "--json"]);
    let hooks = serde_json::from_slice::<Value>(&list.stdout).unwrap()["hooks"].take();
    let name = hooks[0]["name"].as_str().unwrap();
    assert!(name.starts_with("session-start-session-start-"), "{name}");
    let input =
        r#"{"sessionId":"local","transcriptPath":"/tmp/transcript.jsonl","cwd":"/tmp/project","source":"startup"}"#;
    let output = support::simulate(dir.path(), "claude", name, input, &["--artifact", "artifact", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["nativeInput"]["hook_event_name"], "SessionStart");
    assert_eq!(report["nativeInput"]["session_id"], "local");
    assert_eq!(
        report["nativeOutput"]["hookSpecificOutput"]["additionalContext"],
        "Run verify-release from /tmp/project before publishing."
    );
    assert_eq!(report["result"]["outcome"], "continue");

    // The start of one hook's name names it; one no name starts with names nothing; a missing
    // required field fails like the host would.
    let start = support::simulate(dir.path(), "claude", "session-start", input, &["--artifact", "artifact"]);
    assert_eq!(start.status.code(), Some(0), "{}", String::from_utf8_lossy(&start.stderr));
    let wrong = support::simulate(dir.path(), "claude", "stop", input, &["--artifact", "artifact"]);
    assert_eq!(wrong.status.code(), Some(2), "no such hook: a wrong invocation");
    let partial = support::simulate(dir.path(), "claude", name, r#"{"sessionId":"s"}"#, &["--artifact", "artifact"]);
    assert_eq!(partial.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&partial.stderr).contains("transcriptPath is required for SessionStart"));
}

/// A tool its host's matcher would not run the hook for is said (the wrapper runs all the
/// same): `matcherMatches` in JSON, a note on stderr.
#[test]
fn hooks_simulate_says_when_the_host_s_matcher_would_not_run_the_hook() {
    let dir = support::example("policy");
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let hook = "before-tool-deny-dangerous-8ec73edb";
    let input = |tool: &str| {
        format!(
            r#"{{"sessionId":"s","cwd":"/tmp","transcriptPath":"/t","toolName":"{tool}","toolInput":{{"command":"ls"}},"permissionMode":"default","toolUseId":"u"}}"#
        )
    };
    for (tool, matches) in [("Bash", true), ("Write", false)] {
        let output = support::simulate(dir.path(), "claude", hook, &input(tool), &["--json"]);
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(report["matcherMatches"], matches, "{tool}");
    }
    let output = support::simulate(dir.path(), "claude", hook, &input("Write"), &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("note: claude would not run this hook for Write: its matcher is ^(?:Bash|PowerShell)$"),
        "{stderr}"
    );
}

/// A project edited since its artifact was built is said: the simulation runs what the
/// artifact holds (`changedInputs` in JSON, a note on stderr).
#[test]
fn hooks_simulate_says_when_the_project_changed_since_the_build() {
    let dir = support::example("policy");
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let input = r#"{"sessionId":"s","transcriptPath":"/t","cwd":"/tmp","stopHookActive":false}"#;
    let changed = || {
        let output = support::simulate(dir.path(), "claude", "stop", input, &["--json"]);
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        (report["changedInputs"].clone(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    assert_eq!(changed().0, serde_json::json!([]));
    let stop = dir.path().join("src/hooks/stop.ts");
    fs::write(&stop, fs::read_to_string(&stop).unwrap() + "// edited\n").unwrap();
    let (inputs, stderr) = changed();
    assert_eq!(inputs, serde_json::json!(["src/hooks/stop.ts"]));
    assert!(stderr.starts_with("note: src/hooks/stop.ts changed since the artifact was built"), "{stderr}");
    // Named `.` from inside it, the artifact is still the project's.
    let inside = support::bin()
        .args([
            "hooks",
            "simulate",
            "--artifact",
            ".",
            "--target",
            "claude",
            "--hook",
            "stop",
            "--json",
            "--input",
            input,
        ])
        .current_dir(dir.path().join("artifact"))
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&inside.stdout).unwrap();
    assert_eq!(report["changedInputs"], serde_json::json!(["src/hooks/stop.ts"]));
    // Copied beside files that are not its project's (no config), it is checked against none.
    let elsewhere = tempfile::tempdir().unwrap();
    support::copy_tree(&dir.path().join("artifact"), &elsewhere.path().join("artifact"));
    fs::create_dir_all(elsewhere.path().join("src/hooks")).unwrap();
    fs::write(elsewhere.path().join("src/hooks/stop.ts"), "unrelated\n").unwrap();
    let copied = support::simulate(elsewhere.path(), "claude", "stop", input, &["--json"]);
    let report: Value = serde_json::from_slice(&copied.stdout).unwrap();
    assert_eq!(report["changedInputs"], serde_json::json!([]), "{report:#}");
}

/// A simulated hook whose handler leaves processes behind: one in its process group is
/// stopped with it, and one that left the group (detached) does not hold the answer back
/// though it keeps the output pipes open.
#[test]
fn hooks_simulate_stops_what_the_handler_left_behind_and_never_waits_for_a_detached_process() {
    let handler = "import { spawn } from 'node:child_process';\n\
        import { writeFileSync } from 'node:fs';\n\
        export default (event: { cwd: string }) => {\n\
          const kept = spawn('sleep', ['600'], { stdio: 'inherit' });\n\
          const detached = spawn('sleep', ['600'], { stdio: 'inherit', detached: true });\n\
          writeFileSync(event.cwd + '/pids', `${kept.pid} ${detached.pid}`);\n\
          kept.unref();\n\
          detached.unref();\n\
        };\n";
    let config = "import { defineConfig } from 'agent-bundle/config';\n\
        export default defineConfig({ plugin: { name: 'leaky' }, targets: ['claude'], hooks: { stop: './src/stop.ts' } });\n";
    let dir = support::project(&[("agent-bundle.config.ts", config), ("src/stop.ts", handler)]);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let list = support::run(dir.path(), &["hooks", "list", "--target", "claude", "--json"]);
    let hooks = serde_json::from_slice::<Value>(&list.stdout).unwrap()["hooks"].take();
    let name = hooks[0]["name"].as_str().unwrap();
    let cwd = dir.path().to_str().unwrap();
    let input = format!(r#"{{"sessionId":"s","transcriptPath":"/t","cwd":"{cwd}","stopHookActive":false}}"#);
    let output = support::simulate(dir.path(), "claude", name, &input, &[]);
    let pids = fs::read_to_string(dir.path().join("pids")).unwrap();
    let alive = support::running;
    let (kept, detached) = pids.split_once(' ').unwrap();
    let detached_was_alive = alive(detached);
    unsafe { libc::kill(detached.parse().unwrap(), libc::SIGKILL) };
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(!alive(kept), "the process in the hook's group was stopped");
    assert!(detached_was_alive, "the answer came while the detached process still held the pipes");
}

/// A simulated hook that never answers is stopped at its config's `timeout`, or the
/// simulation's own 5 s, and the message says where the limit came from, and what the hook
/// printed until then.
#[test]
fn hooks_simulate_stops_a_hook_at_its_timeout_and_says_whose_it_is() {
    let stopped = |timeout: &str| {
        let handler = "export default () => {\n  console.log('waiting');\n  \
                       return new Promise(() => { setInterval(() => {}, 1000); });\n};\n";
        let config = format!(
            "export default {{ plugin: {{ name: 'slow' }}, targets: ['claude'], hooks: {{ stop: {{ handler: './src/stop.ts'{timeout} }} }} }};\n"
        );
        simulated_stop(&[("agent-bundle.config.ts", &config), ("src/stop.ts", handler)])
    };
    let stderr = stopped(", timeout: 1");
    assert!(
        stderr.contains(
            "did not answer within 1 s (its config's `timeout`)\nwhat the hook printed before that:\n  waiting\n"
        ),
        "{stderr}"
    );
    let stderr = stopped("");
    assert!(
        stderr.contains("did not answer within 5 s (the simulation's own limit: the config sets no `timeout`"),
        "{stderr}"
    );
}

/// The stderr of `hooks simulate` of the one Claude Code stop hook of a project of `files`,
/// which fails.
fn simulated_stop(files: &[(&str, &str)]) -> String {
    let dir = support::project(files);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let list = support::run(dir.path(), &["hooks", "list", "--target", "claude", "--json"]);
    let hooks = serde_json::from_slice::<Value>(&list.stdout).unwrap()["hooks"].take();
    let input = r#"{"sessionId":"s","transcriptPath":"/t","cwd":"/","stopHookActive":false}"#;
    let name = hooks[0]["name"].as_str().unwrap();
    let output = support::simulate(dir.path(), "claude", name, input, &[]);
    assert_eq!(output.status.code(), Some(1));
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A handler writing to file descriptor 1 itself, past the wrapper, spoils the answer a host
/// reads: the simulation fails, saying what was written and why it matters.
#[test]
fn a_handler_writing_to_the_hosts_stdout_fails_the_simulation_saying_so() {
    let config = "export default { plugin: { name: 'raw' }, targets: ['claude'], hooks: { stop: './src/stop.ts' } };\n";
    // With a line break or without one.
    for written in ["RAW\\n", "RAW"] {
        let handler =
            format!("import {{ writeSync }} from 'node:fs';\nexport default () => {{ writeSync(1, '{written}'); }};\n");
        let stderr = simulated_stop(&[("agent-bundle.config.ts", config), ("src/stop.ts", &handler)]);
        let said = "error: the handler wrote `RAW` to file descriptor 1, before the answer";
        assert!(stderr.starts_with(said), "{written}: {stderr}");
    }
}

/// An input holding an object that begins as the simulator's report does is read as input.
#[test]
fn an_input_shaped_like_the_simulators_report_is_simulated() {
    let dir = support::example("policy");
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let input = r#"{"sessionId":"s","transcriptPath":"/t","cwd":"/","toolName":"Bash","toolInput":{"command":"ls","nativeInput":{"a":1}},"toolUseId":"u"}"#;
    let output = support::simulate(dir.path(), "claude", "before-tool-deny-dangerous", input, &["--json"]);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((output.status.code(), &report["ok"]), (Some(0), &Value::Bool(true)), "{report:#}");
    assert_eq!(report["nativeInput"]["tool_input"]["nativeInput"]["a"], 1, "{report:#}");
}

/// A simulated hook that fails after printing: the error is the runtime's message, and what
/// the handler printed (its log goes to stderr, stdout being the host's) comes after it, set
/// apart, never taken for the error.
#[test]
fn a_failing_simulation_sets_the_handler_s_log_apart_from_the_error() {
    let handler = "export default () => {\n  console.log('[audit] ran');\n  console.error('second line');\n  \
                   return { outcome: 'allow' };\n};\n";
    let config =
        "export default { plugin: { name: 'loud' }, targets: ['claude'], hooks: { stop: './src/stop.ts' } };\n";
    let dir = support::project(&[("agent-bundle.config.ts", config), ("src/stop.ts", handler)]);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let list = support::run(dir.path(), &["hooks", "list", "--json"]);
    let name = serde_json::from_slice::<Value>(&list.stdout).unwrap()["hooks"][0]["name"].as_str().unwrap().to_owned();
    let input = r#"{"sessionId":"s","transcriptPath":"/t","cwd":"/","stopHookActive":false}"#;
    let output = support::simulate(dir.path(), "claude", &name, input, &[]);
    assert_eq!(output.status.code(), Some(1));
    let expected = format!(
        "error: agent-bundle hook {name}: handler result outcome is invalid: \"allow\", where \"continue\" or \
         \"deny\" is expected\nwhat the hook printed before that:\n  [audit] ran\n  second line\n"
    );
    assert_eq!(String::from_utf8_lossy(&output.stderr), expected);
}

/// A handler that throws says where in its own TypeScript (the wrapper's source map), in the
/// hook's one line of failure, and so does a module that throws while the wrapper loads it.
#[test]
fn a_failing_handler_says_where_in_its_source() {
    let check = "// What the hook checks, kept apart.\ntype Input = { cwd: string };\n\
        export function check(input: Input): void {\n  if (input.cwd === '/') throw new Error(`refusing ${input.cwd}`);\n}\n";
    let stop =
        "import { check } from './lib/check';\nexport default (event: { cwd: string }) => {\n  check(event);\n};\n";
    let start =
        "const ready: boolean = false;\nif (!ready) throw new Error('not configured');\nexport default () => {};\n";
    let config = "export default { plugin: { name: 'where' }, targets: ['claude'],\n\
        hooks: { stop: './src/stop.ts', sessionStart: './src/start.ts' } };\n";
    let dir = support::project(&[
        ("agent-bundle.config.ts", config),
        ("src/stop.ts", stop),
        ("src/lib/check.ts", check),
        ("src/start.ts", start),
    ]);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let list = support::run(dir.path(), &["hooks", "list", "--json"]);
    let hooks = serde_json::from_slice::<Value>(&list.stdout).unwrap()["hooks"].take();
    let name = |event: &str| {
        let hook = hooks.as_array().unwrap().iter().find(|h| h["event"] == event).unwrap();
        hook["name"].as_str().unwrap().to_owned()
    };
    let fails = |event: &str, input: &str, expected: &str| {
        let name = name(event);
        let output = support::simulate(dir.path(), "claude", &name, input, &[]);
        assert_eq!(output.status.code(), Some(1));
        assert_eq!(String::from_utf8_lossy(&output.stderr), format!("error: agent-bundle hook {name}: {expected}\n"));
    };
    let stop_input = r#"{"sessionId":"s","transcriptPath":"/t","cwd":"/","stopHookActive":false}"#;
    fails("stop", stop_input, "handler failed: refusing / (at src/lib/check.ts:4:32)");
    let start_input = r#"{"sessionId":"s","transcriptPath":"/t","cwd":"/","source":"startup"}"#;
    fails("sessionStart", start_input, "handler module failed to load: not configured (at src/start.ts:2:19)");
}

/// A handler whose file name holds a line terminator still gives a wrapper that loads (the
/// name is in the wrapper's header comment).
#[test]
fn a_line_separator_in_a_handler_name_does_not_break_the_wrapper() {
    let config =
        "export default { plugin: { name: 'odd' }, targets: ['claude'], hooks: { stop: './src/a\\u2028b.ts' } };\n";
    let dir =
        support::project(&[("agent-bundle.config.ts", config), ("src/a\u{2028}b.ts", "export default () => {};\n")]);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let list = support::run(dir.path(), &["hooks", "list", "--json"]);
    let hooks = serde_json::from_slice::<Value>(&list.stdout).unwrap()["hooks"].take();
    let input = r#"{"sessionId":"s","transcriptPath":"/t","cwd":"/","stopHookActive":false}"#;
    let output = support::simulate(dir.path(), "claude", hooks[0]["name"].as_str().unwrap(), input, &[]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
}

/// Claude Code ignores a `ConfigChange` block of the managed policy settings: a route that
/// denies one fails the hook, and blocks any other change.
#[test]
fn a_config_change_route_denying_a_policy_change_fails_the_hook() {
    let route = "import { Agent } from '@agent-bundle/runtime';\n\
        export default () => <Agent.Result value={{ outcome: 'deny', reason: 'not now' }} />;\n";
    let dir = support::project(&[
        ("agent-bundle.config.ts", "export default { plugin: { name: 'cfg' }, targets: ['claude'] };\n"),
        ("src/events/config/change.tsx", route),
    ]);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let changed = |source: &str| {
        let input = format!(r#"{{"sessionId":"s","transcriptPath":"/t","cwd":"/c","source":"{source}"}}"#);
        support::simulate(dir.path(), "claude", "event-route-config-change", &input, &["--json"])
    };
    let project = changed("project_settings");
    assert_eq!(project.status.code(), Some(0), "{}", String::from_utf8_lossy(&project.stderr));
    let report: Value = serde_json::from_slice(&project.stdout).unwrap();
    assert_eq!(report["nativeOutput"], serde_json::json!({ "decision": "block", "reason": "not now" }));
    let policy = changed("policy_settings");
    assert_eq!(policy.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&policy.stderr);
    assert!(
        stderr.contains(r#"Claude Code ConfigChange ignores this outcome when source is "policy_settings""#),
        "{stderr}"
    );
}

/// An outcome a host reads only under a condition fails the hook when the condition does not
/// hold: Cursor reads a subagentStop follow-up only from a completed subagent, and Codex a
/// rewritten Bash input only with a string `command`.
#[test]
fn an_outcome_the_host_would_not_read_fails_the_hook() {
    let config = "export default { plugin: { name: 'req' }, targets: ['cursor', 'codex'], hooks: {\n\
        agentStop: { handler: './src/stop.ts', targets: ['cursor'] },\n\
        beforeTool: { handler: './src/rewrite.ts', targets: ['codex'], tools: ['shell'] },\n} };\n";
    let dir = support::project(&[
        ("agent-bundle.config.ts", config),
        ("src/stop.ts", "export default () => ({ outcome: 'deny', reason: 'keep going' });\n"),
        ("src/rewrite.ts", "export default () => ({ updatedInput: { cmd: 'ls' } });\n"),
    ]);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let list = support::run(dir.path(), &["hooks", "list", "--json"]);
    let hooks = serde_json::from_slice::<Value>(&list.stdout).unwrap()["hooks"].take();
    let name = |host: &str| hooks.as_array().unwrap().iter().find(|h| h["host"] == host).unwrap()["name"].clone();
    let (stop, rewrite) = (name("cursor"), name("codex"));
    let stopped = |status: &str| {
        let input = format!(r#"{{"sessionId":"s","agentType":"explore","status":"{status}"}}"#);
        support::simulate(dir.path(), "cursor", stop.as_str().unwrap(), &input, &["--json"])
    };
    let completed = stopped("completed");
    assert_eq!(completed.status.code(), Some(0), "{}", String::from_utf8_lossy(&completed.stderr));
    let report: Value = serde_json::from_slice(&completed.stdout).unwrap();
    assert_eq!(report["nativeOutput"], serde_json::json!({ "followup_message": "keep going" }));
    // Simulated as Cursor sends it: every event carries `conversation_id`.
    assert_eq!(report["nativeInput"]["conversation_id"], "s", "{report:#}");
    let errored = stopped("error");
    assert_eq!(errored.status.code(), Some(1));
    // With `--json`, the failed run is reported whole.
    let report: Value = serde_json::from_slice(&errored.stdout).unwrap();
    assert_eq!((&report["ok"], &report["exitCode"], &report["hook"]), (&false.into(), &1.into(), &stop), "{report:#}");
    assert!(report["error"].as_str().unwrap().contains("reads this outcome only when status"), "{report:#}");
    let stderr = String::from_utf8_lossy(&errored.stderr);
    assert!(
        stderr.contains(r#"Cursor subagentStop reads this outcome only when status is "completed"; it is "error""#),
        "{stderr}"
    );

    let input = r#"{"sessionId":"s","transcriptPath":"/t","cwd":"/c","toolName":"Bash","toolInput":{"command":"rm"},"toolUseId":"t1"}"#;
    let rewritten = support::simulate(dir.path(), "codex", rewrite.as_str().unwrap(), input, &[]);
    assert_eq!(rewritten.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&rewritten.stderr);
    assert!(stderr.contains("Codex PreToolUse reads a rewritten Bash input only with a string command"), "{stderr}");
}

/// A simulation stopped from outside takes its hook with it, though the hook runs in a
/// process group of its own; stopped by Ctrl-C, SIGTERM or SIGHUP, it also removes its
/// scratch folder and exits with 130 (SIGKILL leaves no chance to).
#[test]
fn a_simulation_stopped_from_outside_takes_its_hook_and_its_scratch_folder_with_it() {
    let handler = "import { writeFileSync } from 'node:fs';\n\
        export default (event: { cwd: string }) => new Promise(() => {\n\
          writeFileSync(event.cwd + '/pid', String(process.pid));\n\
          setInterval(() => {}, 1000);\n\
        });\n";
    let config = "export default { plugin: { name: 'stuck' }, targets: ['claude'], hooks: { stop: { handler: './src/stop.ts', timeout: 600 } } };\n";
    let dir = support::project(&[("agent-bundle.config.ts", config), ("src/stop.ts", handler)]);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let list = support::run(dir.path(), &["hooks", "list", "--target", "claude", "--json"]);
    let hooks = serde_json::from_slice::<Value>(&list.stdout).unwrap()["hooks"].take();
    let cwd = dir.path().to_str().unwrap();
    let input = format!(r#"{{"sessionId":"s","transcriptPath":"/t","cwd":"{cwd}","stopHookActive":false}}"#);
    let json = [&[][..], &["--json"][..]];
    for (signal, flags) in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGKILL].into_iter().zip(json.repeat(2)) {
        let scratch = tempfile::tempdir().unwrap();
        let mut simulation = support::bin();
        simulation.args(["hooks", "simulate", "--target", "claude", "--hook", hooks[0]["name"].as_str().unwrap()]);
        simulation.args(["--input", &input]).args(flags).current_dir(dir.path()).env("TMPDIR", scratch.path());
        let (output, pid) = support::signal_once_running(&mut simulation, &dir.path().join("pid"), signal);
        assert!(!support::running(&pid), "the hook outlived its simulation (signal {signal})");
        if signal != libc::SIGKILL {
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(130), "signal {signal}: {stderr}");
            assert_eq!(stderr.trim(), "interrupted");
            if !flags.is_empty() {
                // (Not a hook that failed, nor a node that could not run.)
                let report: Value = serde_json::from_slice(&output.stdout).unwrap();
                assert_eq!(report, serde_json::json!({ "ok": false, "error": "interrupted" }));
            }
            let left: Vec<_> = fs::read_dir(scratch.path()).unwrap().map(|entry| entry.unwrap().file_name()).collect();
            assert!(left.is_empty(), "signal {signal} left {left:?}");
        }
    }
}

/// `--input-file` is read no further than the input limit: `/dev/zero` is refused at once.
#[test]
fn an_endless_input_file_is_refused_at_the_limit() {
    let dir = support::example("policy");
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let list = support::run(dir.path(), &["hooks", "list", "--target", "claude", "--json"]);
    let hooks = serde_json::from_slice::<Value>(&list.stdout).unwrap()["hooks"].take();
    let name = hooks[0]["name"].as_str().unwrap();
    let args = ["hooks", "simulate", "--target", "claude", "--hook", name, "--input-file", "/dev/zero"];
    let output = support::run(dir.path(), &args);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("exceeds the 64 MiB limit"));
}

/// Input nested hundreds of levels deep is simulated (its answer read back, as deep); past
/// what the command reads, it is said to be, not to be invalid JSON.
#[test]
fn input_nested_too_deep_for_the_simulator_says_so() {
    let dir = support::example("policy");
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let guard = support::listed_hook(dir.path(), "claude", "beforeTool");
    let name = guard["name"].as_str().unwrap();
    let input = |depth: usize| {
        let deep = format!("{}{}", "[".repeat(depth - 2), "]".repeat(depth - 2));
        format!(
            r#"{{"sessionId":"s","transcriptPath":"/t","cwd":"/c","toolName":"shell","toolUseId":"u","toolInput":{{"command":"git push --force","x":{deep}}}}}"#
        )
    };
    // (Read as text: this test's own JSON reader stops at 128 levels.)
    let output = support::simulate(dir.path(), "claude", name, &input(990), &["--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains(r#""permissionDecision": "deny""#));
    let output = support::simulate(dir.path(), "claude", name, &input(1_000), &[]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("input nests 1000 levels deep or more, past what `hooks simulate` reads"), "{stderr}");
    // Read, but answered a level deeper (the answer holds the input): said so.
    let output = support::simulate(dir.path(), "claude", name, &input(999), &[]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("the wrapper's answer nests 1000 levels deep or more"), "{stderr}");
}

/// `--input-file -` reads standard input, and a byte-order mark an editor left before the
/// JSON is no part of it.
#[test]
fn an_input_file_may_be_standard_input_and_start_with_a_byte_order_mark() {
    use std::io::Write;
    let dir = support::example("policy");
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let stop = support::listed_hook(dir.path(), "claude", "stop");
    let cwd = dir.path().to_str().unwrap();
    let input =
        format!("\u{feff}{{\"sessionId\":\"s\",\"transcriptPath\":\"/t\",\"cwd\":\"{cwd}\",\"stopHookActive\":false}}");
    let mut simulation = support::bin()
        .args(["hooks", "simulate", "--target", "claude", "--hook", stop["name"].as_str().unwrap()])
        .args(["--input-file", "-", "--json"])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    simulation.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let output = simulation.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["nativeInput"]["session_id"], "s", "{report:#}");
}

/// `hooks simulate` runs the artifact's own wrapper, never what a link in its place (or a
/// linked folder above it) leads to.
#[test]
fn a_wrapper_that_is_a_link_is_never_simulated() {
    let dir = support::example("policy");
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let stop = support::listed_hook(dir.path(), "claude", "stop");
    replace_with_link(
        dir.path(),
        &Path::new("artifact").join(stop["path"].as_str().unwrap()),
        "process.stdout.write('{}');\n",
    );
    let cwd = dir.path().to_str().unwrap();
    let input = format!(r#"{{"sessionId":"s","transcriptPath":"/t","cwd":"{cwd}","stopHookActive":false}}"#);
    let output = support::simulate(dir.path(), "claude", stop["name"].as_str().unwrap(), &input, &[]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a file of the artifact's own"));
    // One gone is said to be missing, not a link.
    std::fs::remove_file(dir.path().join("artifact").join(stop["path"].as_str().unwrap())).unwrap();
    let output = support::simulate(dir.path(), "claude", stop["name"].as_str().unwrap(), &input, &[]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is missing, though the artifact's manifest lists it: build again"), "{stderr}");
    // One that is a folder now is said so.
    std::fs::create_dir(dir.path().join("artifact").join(stop["path"].as_str().unwrap())).unwrap();
    let output = support::simulate(dir.path(), "claude", stop["name"].as_str().unwrap(), &input, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is a folder, where the artifact's manifest lists a file"), "{stderr}");
}

/// Nor the shared runtime a route renders in: `hooks simulate` and `validate` never run
/// what a link in its place leads to.
#[test]
fn a_shared_runtime_that_is_a_link_is_never_run() {
    let dir = support::example("routes");
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let ran = "import fs from 'node:fs';\nfs.writeFileSync(process.env.MARKER, 'ran');\n";
    replace_with_link(dir.path(), Path::new("artifact/mcp/event-runtime.mjs"), ran);
    let marker = dir.path().join("ran");
    let cwd = dir.path().to_str().unwrap();
    let input = format!(r#"{{"sessionId":"s","transcriptPath":"/t","cwd":"{cwd}","prompt":"hi"}}"#);
    let simulate = support::bin()
        .args(["hooks", "simulate", "--target", "claude", "--hook", "event-route-prompt-submit", "--input", &input])
        .env("MARKER", &marker)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(simulate.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&simulate.stderr).contains("not a file of the artifact's own"));
    let mut validate = support::bin();
    validate.args(["validate", "--no-host-validation"]).env("MARKER", &marker).current_dir(dir.path());
    assert_eq!(validate.output().unwrap().status.code(), Some(1));
    assert!(!marker.exists(), "what the link leads to never ran");
}

/// Puts in place of the artifact file `path` (below `project`) a link to a script of
/// `source` outside the artifact.
fn replace_with_link(project: &Path, path: &Path, source: &str) {
    let elsewhere = project.join("elsewhere.mjs");
    fs::write(&elsewhere, source).unwrap();
    fs::remove_file(project.join(path)).unwrap();
    std::os::unix::fs::symlink(&elsewhere, project.join(path)).unwrap();
}
