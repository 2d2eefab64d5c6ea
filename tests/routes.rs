//! Event routes: discovery, per-host emission, rendering and projection on real payloads.

use serde_json::{Value, json};

use crate::support::{self, CLAUDE, CODEX, node, payload, project};

fn wrapper(dir: &std::path::Path, report: &Value, family: &str, host: &str) -> std::path::PathBuf {
    let hook = report["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["event"] == family && h["host"] == host)
        .unwrap_or_else(|| panic!("{family} on {host}: {report:#}"));
    dir.join("artifact").join(hook["path"].as_str().unwrap())
}

fn run(script: &std::path::Path, input: &Value, env: &[(&str, &str)]) -> (i32, Value, String) {
    let (code, stdout, stderr) = node(script, input.to_string().as_bytes(), env);
    (code, if stdout.is_empty() { Value::Null } else { serde_json::from_str(&stdout).unwrap() }, stderr)
}

#[test]
fn routes_are_emitted_for_every_host_that_has_their_family() {
    let (_dir, report) = support::built("routes");
    let mut emitted: Vec<String> = report["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            format!(
                "{} {} {}",
                h["host"].as_str().unwrap(),
                h["event"].as_str().unwrap(),
                h["nativeEvent"].as_str().unwrap()
            )
        })
        .collect();
    emitted.sort();
    insta::assert_snapshot!(emitted.join("\n"));
    // Every hook host runs the generated MCP server, so the shared route needs no fallback.
    assert_eq!(report["diagnostics"], json!([]));
}

#[test]
fn a_tool_before_route_denies_on_claude_and_codex_and_continues_silently() {
    let (dir, report) = support::built("routes");
    for (host_dir, host) in [(CLAUDE, "claude"), (CODEX, "codex")] {
        let script = wrapper(dir.path(), &report, "tool/before", host);
        let (code, output, stderr) = run(&script, &payload(host_dir, "PreToolUse"), &[]);
        assert_eq!((code, output), (0, Value::Null), "{host}: {stderr}");
        let mut dangerous = payload(host_dir, "PreToolUse");
        dangerous["tool_input"]["command"] = "rm -rf /".into();
        let (code, output, stderr) = run(&script, &dangerous, &[]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(output["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(output["hookSpecificOutput"]["permissionDecisionReason"], "routes: refusing rm -rf /");
    }
}

#[test]
fn session_start_context_stop_block_and_prompt_context_render_natively() {
    let (dir, report) = support::built("routes");
    let (code, output, stderr) =
        run(&wrapper(dir.path(), &report, "session/start", "claude"), &payload(CLAUDE, "SessionStart"), &[]);
    assert_eq!(code, 0, "{stderr}");
    let context = output["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(context.ends_with("started on claude (routes plugin)."), "{context}");

    let (code, output, stderr) =
        run(&wrapper(dir.path(), &report, "stop", "codex"), &payload(CODEX, "Stop"), &[("ROUTES_BLOCK_STOP", "1")]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(output, json!({"decision": "block", "reason": "routes: list the files you changed before stopping"}));

    let (code, output, stderr) =
        run(&wrapper(dir.path(), &report, "prompt/submit", "claude"), &payload(CLAUDE, "UserPromptSubmit"), &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(output["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
}

#[test]
fn an_observation_only_route_that_answers_fails_before_reaching_the_host() {
    let dir = project(&[
        ("agent-bundle.config.ts", "export default { plugin: { name: 'observe' }, targets: ['claude'] };"),
        (
            "src/events/session/end.tsx",
            "import { Agent } from '@agent-bundle/runtime';\nexport default async () => <Agent.Context>bye</Agent.Context>;\n",
        ),
    ]);
    let (code, report) = support::build_json(dir.path(), &[]);
    assert_eq!(code, 0, "{report:#}");
    let script = wrapper(dir.path(), &report, "session/end", "claude");
    let mut input = payload(CLAUDE, "SessionStart");
    input["hook_event_name"] = "SessionEnd".into();
    input["reason"] = "other".into();
    let (code, stdout, stderr) = node(&script, input.to_string().as_bytes(), &[]);
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert!(stderr.contains("session/end is observation-only"), "{stderr}");
}

#[test]
fn route_errors_are_located() {
    let dir = project(&[
        ("agent-bundle.config.ts", "export default { plugin: { name: 'bad-routes' }, targets: ['claude'] };"),
        ("src/events/tool/befor.tsx", "export default async () => null;\n"),
        ("src/events/stop.tsx", "export const config = { runtime: 'warm' };\nexport default async () => null;\n"),
    ]);
    let (code, report) = support::build_json(dir.path(), &[]);
    assert_eq!(code, 1);
    let found: Vec<(&str, &str)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap(), d["file"].as_str().unwrap()))
        .collect();
    assert_eq!(found, [("AB4806", "src/events/stop.tsx"), ("AB4800", "src/events/tool/befor.tsx")]);
    let runtime = &report["diagnostics"][0];
    assert_eq!((runtime["line"].as_u64(), runtime["jsonPath"].as_str()), (Some(1), Some("runtime")));
}

#[test]
fn hooks_simulate_runs_a_route() {
    let (dir, _) = support::built("routes");
    let input = r#"{"sessionId":"s","transcriptPath":"/t","cwd":"/c","toolName":"Bash","toolInput":{"command":"echo ROUTES_DENY_ME"},"toolUseId":"t1"}"#;
    let output =
        support::simulate(dir.path(), "codex", "event-route-tool-before", input, &["--artifact", "artifact", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["result"]["outcome"], "deny");
    assert_eq!(report["nativeOutput"]["hookSpecificOutput"]["permissionDecision"], "deny");
}

#[test]
fn hooks_simulate_renders_a_shared_route_in_a_runtime_it_starts_or_standalone() {
    let (dir, _) = support::built("routes");
    let input = r#"{"sessionId":"s","transcriptPath":"/t","cwd":"/c","prompt":"hi","permissionMode":"default"}"#;
    let simulate = |extra: &[&str]| {
        let output =
            support::simulate(dir.path(), "claude", "event-route-prompt-submit", input, &[&["--json"], extra].concat());
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        let stderr = report["stderr"].as_str().unwrap();
        assert!(!stderr.contains("listening on"), "the runtime's start is not the hook's output: {stderr}");
        (report["renderedBy"].clone(), report["result"]["additionalContext"].as_str().unwrap().to_owned())
    };
    let (by, context) = simulate(&[]);
    assert_eq!(by, "shared");
    assert!(context.ends_with("(prompt 1, event 1, shared runtime)."), "{context}");
    let (by, context) = simulate(&["--standalone"]);
    assert_eq!(by, "standalone");
    assert!(context.ends_with("(prompt 1, event 1, standalone hook)."), "{context}");

    // The list says which routes are shared.
    let listed = support::run(dir.path(), &["hooks", "list", "--target", "claude"]);
    let listed = String::from_utf8_lossy(&listed.stdout);
    let line = listed.lines().find(|l| l.starts_with("event-route-prompt-submit ")).unwrap();
    assert!(line.ends_with("(shared runtime, standalone fallback)"), "{line}");
}

/// `--standalone` starts no runtime and tells the wrapper so: it waits for none (a Claude
/// `session/start` route would otherwise wait for one the host may be starting).
#[test]
fn hooks_simulate_standalone_tells_the_wrapper_no_runtime_comes() {
    let config = "export default { plugin: { name: 'starts' }, targets: ['claude'] };\n";
    let route = "import { Agent } from '@agent-bundle/runtime';\n\
        export const config = { runtime: 'shared', fallback: 'standalone' };\n\
        export default async function Route() {\n  \
          return <Agent.Context>{`told: ${process.argv.includes('--agent-bundle-no-runtime')}`}</Agent.Context>;\n}\n";
    let dir = project(&[("agent-bundle.config.ts", config), ("src/events/session/start.tsx", route)]);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let input = r#"{"sessionId":"s","transcriptPath":"/t","cwd":"/c","source":"startup"}"#;
    let output =
        support::simulate(dir.path(), "claude", "event-route-session-start", input, &["--standalone", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        (&report["renderedBy"], &report["result"]["additionalContext"]),
        (&json!("standalone"), &json!("told: true"))
    );
}

#[test]
fn hooks_simulate_refuses_standalone_for_a_shared_route_without_fallback() {
    let dir = project(&[
        ("agent-bundle.config.ts", "export default { plugin: { name: 'strict' }, targets: ['claude'] };"),
        ("src/events/stop.tsx", "export const config = { runtime: 'shared' };\nexport default async () => null;\n"),
    ]);
    let (code, report) = support::build_json(dir.path(), &[]);
    assert_eq!(code, 0, "{report:#}");
    let input = r#"{"sessionId":"s","transcriptPath":"/t","cwd":"/c","stopHookActive":false}"#;
    let shared = support::simulate(dir.path(), "claude", "event-route-stop", input, &[]);
    assert_eq!(shared.status.code(), Some(0), "{}", String::from_utf8_lossy(&shared.stderr));
    assert!(String::from_utf8_lossy(&shared.stdout).contains("(rendered by the shared runtime)"));
    let standalone = support::simulate(dir.path(), "claude", "event-route-stop", input, &["--standalone"]);
    assert_eq!(standalone.status.code(), Some(2), "a wrong invocation");
    let stderr = String::from_utf8_lossy(&standalone.stderr);
    assert!(stderr.contains("route event-route-stop has no standalone form"), "{stderr}");
}

#[test]
fn inspect_shows_where_each_hook_lands_and_whether_the_mapping_is_exact() {
    let dir = support::example("routes");
    let output = support::run(dir.path(), &["inspect", "--hooks", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["plugin"], json!({ "name": "routes", "version": "0.3.0" }), "as `build --json` says it");
    let rows: Vec<(String, String, usize)> = report["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["event"].as_str().unwrap().to_owned(),
                h["mapping"].as_str().unwrap().to_owned(),
                h["hosts"].as_array().unwrap().len(),
            )
        })
        .collect();
    let find = |event: &str| rows.iter().find(|r| r.0 == event).unwrap().clone();
    assert_eq!(find("tool/before"), ("tool/before".into(), "exact".into(), 3));
    assert_eq!(find("session/end"), ("session/end".into(), "host-specific".into(), 2), "Codex has no SessionEnd");
    let submit = report["hooks"].as_array().unwrap().iter().find(|h| h["event"] == "prompt/submit").unwrap();
    let claude = &submit["hosts"][0];
    assert_eq!((&claude["runtime"], &claude["fallback"]), (&json!("shared"), &json!(true)), "{submit:#}");
    assert!(!dir.path().join("artifact").exists(), "inspect writes nothing");
    let unfocused = support::run(dir.path(), &["inspect", "--json"]);
    assert_eq!(unfocused.stdout, output.stdout, "the hooks are what inspect shows by default");
}

/// A project inspect cannot read still answers `--json` with a document saying so; and
/// inspect opens no cache (it compiles nothing to keep).
#[test]
fn inspect_json_reports_a_failure_as_json_and_touches_no_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let inspect = |project: &std::path::Path| {
        let mut command = support::bin();
        command.args(["inspect", "--hooks", "--json"]).env("AGENT_BUNDLE_CACHE_DIR", &cache).current_dir(project);
        command.output().unwrap()
    };
    let output = inspect(dir.path());
    assert_eq!(output.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((&report["ok"], &report["diagnostics"][0]["code"]), (&json!(false), &json!("AB4001")), "{report:#}");
    assert_eq!(inspect(support::example("routes").path()).status.code(), Some(0));
    assert!(!cache.exists(), "no cache directory made");
}

/// `<X {...props} key="k" />` compiles to the classic `createElement`, imported from
/// `agent-bundle` itself: it links to the JSX runtime and renders like any element.
#[test]
fn a_key_after_a_spread_renders() {
    let route = "import { Agent } from '@agent-bundle/runtime';\n\
        const Line = ({ text }: { text: string }) => <Agent.Context>{text}</Agent.Context>;\n\
        export default async function Route() { const p = { text: 'hello' }; return <Line {...p} key=\"k\" />; }\n";
    let config = "export default { plugin: { name: 'keys' }, targets: ['claude'] };\n";
    let dir = support::project(&[("agent-bundle.config.ts", config), ("src/events/prompt/submit.tsx", route)]);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let input = r#"{"sessionId":"s","transcriptPath":"/t","cwd":"/c","prompt":"hi","permissionMode":"default"}"#;
    let output = support::simulate(dir.path(), "claude", "event-route-prompt-submit", input, &["--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["result"]["additionalContext"], "hello");
}

/// A shared guard with no fallback lets the tool run while its runtime is down: the build
/// warns where it denies (AB4843), and not once it has a fallback or runs standalone.
#[test]
fn a_shared_guard_without_a_fallback_is_warned_of() {
    let config = "export default { plugin: { name: 'guard' }, targets: ['claude', 'codex'] };\n";
    let route = |config: &str| {
        format!(
            "import {{ Agent }} from '@agent-bundle/runtime';\n{config}\n\
             export default async function Route({{ canonical }}) {{\n  \
               if (canonical.payload.toolInput.command === 'rm') return <Agent.Result value={{{{ outcome: 'deny', reason: 'no' }}}} />;\n  \
               return null;\n}}\n"
        )
    };
    let warnings = |route_config: &str| {
        let dir = project(&[("agent-bundle.config.ts", config), ("src/events/tool/before.tsx", &route(route_config))]);
        let (code, report) = support::build_json(dir.path(), &[]);
        assert_eq!(code, 0, "{report:#}");
        let diagnostics = report["diagnostics"].as_array().unwrap().clone();
        diagnostics
            .into_iter()
            .map(|d| (d["code"].clone(), d["line"].clone(), d["message"].clone()))
            .collect::<Vec<_>>()
    };
    let unguarded = warnings("export const config = { runtime: 'shared' };");
    assert_eq!(unguarded.len(), 1, "{unguarded:?}");
    assert_eq!((&unguarded[0].0, &unguarded[0].1), (&"AB4843".into(), &4.into()), "{unguarded:?}");
    assert!(unguarded[0].2.as_str().unwrap().contains("no fallback on Claude Code and Codex"), "{unguarded:?}");
    assert_eq!(warnings("export const config = { runtime: 'shared', fallback: 'standalone' };"), []);
    assert_eq!(warnings(""), []);
}

/// A deny the family takes, rendered for a host with no deny channel for it (compact/before
/// on Codex and Cursor), fails every run there: warned of for those hosts alone (AB4841). A
/// context after a model switch reaches Claude Code as its `PostModelSwitch` reads it.
#[test]
fn a_deny_a_host_has_no_channel_for_is_warned_of_and_context_follows_a_model_switch() {
    let config = "export default { plugin: { name: 'chan' }, targets: ['claude', 'codex', 'cursor'] };\n";
    let deny = "import { Agent } from '@agent-bundle/runtime';\n\
                export default () => <Agent.Result value={{ outcome: 'deny', reason: 'not now' }} />;\n";
    let context = "import { Agent } from '@agent-bundle/runtime';\n\
                   export default ({ canonical }) => <Agent.Context>{`now on ${canonical.payload.toModel}`}</Agent.Context>;\n";
    let dir = project(&[
        ("agent-bundle.config.ts", config),
        ("src/events/compact/before.tsx", deny),
        ("src/events/model-switch/after.tsx", context),
    ]);
    let (code, report) = support::build_json(dir.path(), &[]);
    assert_eq!(code, 0, "{report:#}");
    let warned: Vec<_> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap(), d["host"].as_str().unwrap(), d["file"].as_str().unwrap()))
        .collect();
    let file = "src/events/compact/before.tsx";
    assert_eq!(warned, [("AB4841", "codex", file), ("AB4841", "cursor", file)], "{report:#}");
    assert!(report["diagnostics"][0]["message"].as_str().unwrap().contains("Codex takes no deny for (PreCompact)"));

    let mut input = payload(CLAUDE, "SessionStart");
    input["hook_event_name"] = "PostModelSwitch".into();
    for (key, value) in [("from_model", "a"), ("to_model", "b")] {
        input[key] = value.into();
    }
    let (code, output, stderr) = run(&wrapper(dir.path(), &report, "model-switch/after", "claude"), &input, &[]);
    assert_eq!(code, 0, "{stderr}");
    let context = json!({"hookEventName": "PostModelSwitch", "additionalContext": "now on b"});
    assert_eq!(output, json!({ "hookSpecificOutput": context }));
}

/// A route file the build does not read (a symbolic link, a FIFO) fails the build, named
/// (AB4802), rather than leave the route out: also where the same bytes were built before,
/// so the stamp and the cache would answer.
#[test]
fn a_route_that_is_a_link_or_a_special_file_fails_the_build() {
    let config = "export default { plugin: { name: 'linked' }, targets: ['claude'] };\n";
    let route = "export default function Route() { return null; }\n";
    let dir = project(&[("agent-bundle.config.ts", config), ("src/events/stop.tsx", route)]);
    let (code, report) = support::build_json(dir.path(), &[]);
    assert_eq!((code, report["hooks"].as_array().unwrap().len()), (0, 1), "{report:#}");
    let stop = dir.path().join("src/events/stop.tsx");
    let elsewhere = dir.path().join("stop.tsx");
    std::fs::rename(&stop, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &stop).unwrap();
    let refused = |report: &Value, key: &str| {
        let said: Vec<_> = report["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].clone()).collect();
        said == [json!("AB4802")] && report["diagnostics"][0]["message"].as_str().unwrap().contains(key)
    };
    let (code, report) = support::build_json(dir.path(), &[]);
    assert!(code == 1 && refused(&report, "src/events/stop.tsx"), "{report:#}");
    std::fs::remove_file(&stop).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&stop).status().unwrap();
    assert!(made.success());
    let (code, report) = support::build_json(dir.path(), &[]);
    assert!(code == 1 && refused(&report, "src/events/stop.tsx"), "{report:#}");
    // Beside the inputs of a build the cache holds, which the link does not change.
    std::fs::remove_file(&stop).unwrap();
    std::fs::rename(&elsewhere, &stop).unwrap();
    assert_eq!(support::build_json(dir.path(), &[]).0, 0);
    std::os::unix::fs::symlink(&stop, dir.path().join("src/events/session")).unwrap();
    let (code, report) = support::build_json(dir.path(), &[]);
    assert!(code == 1 && refused(&report, "src/events/session"), "{report:#}");
    // What can be no route is no loss: an editor's lock file beside one.
    std::fs::remove_file(dir.path().join("src/events/session")).unwrap();
    std::os::unix::fs::symlink("user@host.1:1", dir.path().join("src/events/.#stop.tsx")).unwrap();
    let (code, report) = support::build_json(dir.path(), &[]);
    assert_eq!((code, &report["diagnostics"]), (0, &json!([])), "{report:#}");
    // A folder the walk skips as a cache or an artifact hides the routes in it.
    std::fs::create_dir(dir.path().join("src/events/stop")).unwrap();
    std::fs::write(dir.path().join("src/events/stop/failure.tsx"), route).unwrap();
    assert_eq!(support::build_json(dir.path(), &[]).0, 0);
    let tag = "Signature: 8a477f597d28d172789f06886806bc55\n";
    for (mark, text, key) in [
        ("src/events/stop/CACHEDIR.TAG", tag, "`src/events/stop` (a cache folder"),
        ("src/agent-bundle.manifest.json", "{}", "`src` (a built artifact"),
    ] {
        std::fs::write(dir.path().join(mark), text).unwrap();
        let (code, report) = support::build_json(dir.path(), &[]);
        assert!(code == 1 && refused(&report, key), "{mark}: {report:#}");
        std::fs::remove_file(dir.path().join(mark)).unwrap();
    }
    std::fs::remove_dir_all(dir.path().join("src/events/stop")).unwrap();
    // A folder on the way that is a link, or that the build may not list, hides them all.
    let events = dir.path().join("src/events");
    std::fs::rename(dir.path().join("src"), dir.path().join("elsewhere")).unwrap();
    std::os::unix::fs::symlink("elsewhere", dir.path().join("src")).unwrap();
    let (code, report) = support::build_json(dir.path(), &[]);
    assert!(code == 1 && refused(&report, "`src` (a symbolic link)"), "{report:#}");
    std::fs::remove_file(dir.path().join("src")).unwrap();
    std::fs::rename(dir.path().join("elsewhere"), dir.path().join("src")).unwrap();
    std::fs::set_permissions(&events, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let args = ["build", "--json", "--cache-dir", cache.path().to_str().unwrap()];
    let output = crate::builds::unprivileged(dir.path(), &[dir.path(), cache.path()], &args);
    std::fs::set_permissions(&events, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let said: Vec<_> = report["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].clone()).collect();
    assert_eq!(output.status.code(), Some(1), "{report:#}");
    assert!(said.contains(&json!("AB4802")), "{report:#}");
}

/// A route may approve as well as deny where its family and host take it: `allow` and `ask`
/// on a tool call, `allow` on a permission request. A host without the channel fails the
/// hook at run time, and the build says so where the route decides (AB4841, for that host).
#[test]
fn a_route_allows_or_asks_where_the_host_takes_it() {
    let config = "import { defineConfig } from 'agent-bundle/config';\n\
                  export default defineConfig({ plugin: { name: 'approvals' }, targets: ['claude', 'codex', 'cursor'] });\n";
    let route = |decide: &str| {
        format!(
            "import {{ Agent }} from '@agent-bundle/runtime';\n\
             export default async function Route({{ canonical }}) {{\n  \
               const command = canonical.payload.toolInput.command;\n  \
               {decide}\n  return null;\n}}\n"
        )
    };
    let before = route(
        "if (command === 'ls') return <Agent.Result value={{ outcome: 'allow' }} />;\n  \
         if (command === 'cat x') return <Agent.Result value={{ outcome: 'allow', updatedInput: { command: 'cat y' } }} />;\n  \
         if (command === 'rm x') return <Agent.Result value={{ outcome: 'ask', reason: 'removes x' }} />;",
    );
    let request = route("if (command === 'ls') return <Agent.Result value={{ outcome: 'allow' }} />;");
    let dir = project(&[
        ("agent-bundle.config.ts", config),
        ("src/events/tool/before.tsx", &before),
        ("src/events/permission/request.tsx", &request),
    ]);
    let (code, report) = support::build_json(dir.path(), &[]);
    assert_eq!(code, 0, "{report:#}");
    // Codex reads `allow` on a tool call only with a new input (the first one written has
    // none) and no `ask`, Cursor no `ask`: said where the route decides, for that host.
    let warned = |report: &Value| -> Vec<(String, String, String)> {
        let mut warned: Vec<_> = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                let message = d["message"].as_str().unwrap();
                let why = ["takes no such outcome", "reads it only with", "has no place for"]
                    .iter()
                    .find(|why| message.contains(**why));
                (
                    d["code"].as_str().unwrap().to_owned(),
                    d["host"].as_str().unwrap_or("").to_owned(),
                    why.unwrap_or(&message).to_string(),
                )
            })
            .collect();
        warned.sort();
        warned
    };
    let expected =
        [("codex", "reads it only with"), ("codex", "takes no such outcome"), ("cursor", "takes no such outcome")];
    let expected: Vec<_> =
        expected.iter().map(|(host, why)| ("AB4841".to_owned(), host.to_string(), why.to_string())).collect();
    assert_eq!(warned(&report), expected, "{report:#}");

    let with_command = |host_dir: &str, event: &str, command: &str| {
        let mut input = payload(host_dir, event);
        input["tool_input"]["command"] = command.into();
        input
    };
    let claude = wrapper(dir.path(), &report, "tool/before", "claude");
    let (code, output, stderr) = run(&claude, &with_command(CLAUDE, "PreToolUse", "ls"), &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(output, json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}));
    let (code, output, stderr) = run(&claude, &with_command(CLAUDE, "PreToolUse", "rm x"), &[]);
    assert_eq!(code, 0, "{stderr}");
    let asked =
        json!({"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "removes x"});
    assert_eq!(output["hookSpecificOutput"], asked);
    let codex = wrapper(dir.path(), &report, "tool/before", "codex");
    let (code, output, stderr) = run(&codex, &with_command(CODEX, "PreToolUse", "ls"), &[]);
    assert_eq!((code, output), (1, Value::Null));
    assert!(stderr.contains("Codex PreToolUse reads outcome allow only with updatedInput"), "{stderr}");
    let (code, output, stderr) = run(&codex, &with_command(CODEX, "PreToolUse", "cat x"), &[]);
    assert_eq!(code, 0, "{stderr}");
    let rewritten =
        json!({"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "cat y"}});
    assert_eq!(output["hookSpecificOutput"], rewritten);
    let (code, output, stderr) = run(&codex, &with_command(CODEX, "PreToolUse", "rm x"), &[]);
    assert_eq!((code, output), (1, Value::Null));
    assert!(stderr.contains("Codex PreToolUse does not support outcome ask"), "{stderr}");
    let cursor = wrapper(dir.path(), &report, "tool/before", "cursor");
    let cursor_input = json!({
        "conversation_id": "c1", "generation_id": "g1", "hook_event_name": "preToolUse",
        "tool_name": "Shell", "tool_input": {"command": "ls"}, "tool_use_id": "t1", "cwd": "/w",
    });
    let (code, output, stderr) = run(&cursor, &cursor_input, &[]);
    assert_eq!((code, output), (0, json!({"permission": "allow"})), "{stderr}");

    // A permission request, as Claude Code and Codex send it (a tool call without its id).
    for (host_dir, host) in [(CLAUDE, "claude"), (CODEX, "codex")] {
        let mut input = with_command(host_dir, "PreToolUse", "ls");
        input["hook_event_name"] = "PermissionRequest".into();
        input.as_object_mut().unwrap().remove("tool_use_id");
        let script = wrapper(dir.path(), &report, "permission/request", host);
        let (code, output, stderr) = run(&script, &input, &[]);
        assert_eq!(code, 0, "{host}: {stderr}");
        let allowed = json!({"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}});
        assert_eq!(output["hookSpecificOutput"], allowed, "{host}");
    }

    // A reason no host's answer has a place for is warned of; a route that reads which host
    // it renders for is taken to decide where the host takes it; a model switch is asked about.
    let reasoned = route("if (command === 'ls') return <Agent.Result value={{ outcome: 'allow', reason: 'fine' }} />;");
    std::fs::write(dir.path().join("src/events/permission/request.tsx"), reasoned).unwrap();
    let aware = "import { Agent } from '@agent-bundle/runtime';\n\
                 export default async function Route({ canonical }) {\n  \
                   const { host } = canonical.provenance;\n  \
                   if (host === 'claude') return <Agent.Result value={{ outcome: 'ask', reason: 'check' }} />;\n  \
                   return null;\n}\n";
    std::fs::write(dir.path().join("src/events/tool/before.tsx"), aware).unwrap();
    std::fs::create_dir_all(dir.path().join("src/events/model-switch")).unwrap();
    std::fs::write(dir.path().join("src/events/model-switch/before.tsx"), aware).unwrap();
    let (code, report) = support::build_json(dir.path(), &[]);
    assert_eq!(code, 0, "{report:#}");
    let expected = [("claude", "has no place for"), ("codex", "has no place for")];
    let expected: Vec<_> =
        expected.iter().map(|(host, why)| ("AB4841".to_owned(), host.to_string(), why.to_string())).collect();
    assert_eq!(warned(&report), expected, "{report:#}");
    let switch = wrapper(dir.path(), &report, "model-switch/before", "claude");
    let input = json!({"session_id": "s", "transcript_path": "/t", "cwd": "/w", "hook_event_name": "PreModelSwitch", "to_model": "m"});
    let (code, output, stderr) = run(&switch, &input, &[]);
    assert_eq!(code, 0, "{stderr}");
    let asked =
        json!({"hookEventName": "PreModelSwitch", "permissionDecision": "ask", "permissionDecisionReason": "check"});
    assert_eq!(output["hookSpecificOutput"], asked);
}
