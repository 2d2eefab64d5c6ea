//! The shared event runtime of a built artifact: the generated MCP server started the way a
//! host starts it, and the emitted wrappers talking to it over its Unix socket.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};
use std::{fs, thread};

use serde_json::{Value, json};

use crate::support::{self, CLAUDE, node, payload, project};

/// A built project: its artifact folder and the build report.
struct Built {
    dir: tempfile::TempDir,
    report: Value,
}

impl Built {
    fn new(dir: tempfile::TempDir) -> Built {
        let (code, report) = support::build_json(dir.path(), &[]);
        assert_eq!(code, 0, "{report:#}");
        Built { dir, report }
    }

    fn artifact(&self) -> PathBuf {
        self.dir.path().join("artifact")
    }

    fn epoch(&self) -> String {
        let manifest: Value =
            serde_json::from_slice(&fs::read(self.artifact().join("agent-bundle.manifest.json")).unwrap()).unwrap();
        manifest["eventRuntime"]["epoch"].as_str().expect("the manifest names the runtime epoch").to_owned()
    }

    /// The wrapper of `family` on Claude Code, relative to the artifact.
    fn wrapper(&self, family: &str) -> String {
        let hook =
            self.report["hooks"].as_array().unwrap().iter().find(|h| h["event"] == family && h["host"] == "claude");
        hook.unwrap_or_else(|| panic!("no {family} hook: {:#}", self.report))["path"].as_str().unwrap().to_owned()
    }
}

/// The runtime sockets of one simulated user session (`$TMPDIR/agent-bundle-<uid>`).
struct Session {
    tmp: tempfile::TempDir,
}

impl Session {
    fn new() -> Session {
        Session { tmp: tempfile::tempdir().unwrap() }
    }

    /// The default socket directory under this session's TMPDIR (an empty
    /// `AGENT_BUNDLE_RUNTIME_DIR` counts as unset, whatever the test process has).
    fn env(&self) -> [(&str, &str); 2] {
        [("TMPDIR", self.tmp.path().to_str().unwrap()), ("AGENT_BUNDLE_RUNTIME_DIR", "")]
    }

    fn runtime_dir(&self) -> PathBuf {
        let uid = unsafe { libc::getuid() };
        self.tmp.path().join(format!("agent-bundle-{uid}"))
    }

    fn sockets(&self) -> Vec<PathBuf> {
        let mut sockets: Vec<_> = fs::read_dir(self.runtime_dir())
            .map(|entries| entries.map(|e| e.unwrap().path()).collect())
            .unwrap_or_default();
        sockets.sort();
        sockets
    }

    /// Runs the prompt/submit wrapper of `artifact` on Claude's recorded payload.
    fn submit(&self, built: &Built, artifact: &Path) -> (i32, Value, String) {
        let script = artifact.join(built.wrapper("prompt/submit"));
        let input = payload(CLAUDE, "UserPromptSubmit").to_string();
        let (code, stdout, stderr) = node(&script, input.as_bytes(), &self.env());
        let output = if stdout.is_empty() { Value::Null } else { serde_json::from_str(&stdout).unwrap() };
        (code, output, stderr)
    }

    /// The runtime of `artifact` for Claude Code, started as the host starts it.
    fn start(&self, artifact: &Path) -> Runtime {
        Runtime::start(artifact, &self.env())
    }
}

/// What the routes example's prompt/submit route answers: its context line.
fn context(output: &Value) -> &str {
    output["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_else(|| panic!("no context in {output:#}"))
}

/// A running `mcp/event-runtime.mjs`, ready once it answered MCP `initialize` (it listens
/// on its socket before it reads stdin). Dropping it closes stdin: a clean shutdown.
struct Runtime {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Runtime {
    fn start(artifact: &Path, env: &[(&str, &str)]) -> Runtime {
        let child = Command::new("node")
            .arg(artifact.join("mcp/event-runtime.mjs"))
            .args(["--target", "claude"])
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("node is installed");
        let mut runtime = Runtime::attach(child);
        let init = runtime.call("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}));
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init:#}");
        runtime
    }

    fn attach(mut child: Child) -> Runtime {
        let (stdin, stdout) = (child.stdin.take(), BufReader::new(child.stdout.take().unwrap()));
        Runtime { child, stdin, stdout, next_id: 1 }
    }

    /// One JSON-RPC request on stdin and its response from stdout.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin.as_ref().unwrap(), "{request}").unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let response: Value = serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON-RPC: {line:?}"));
        assert_eq!(response["id"], id, "{response:#}");
        response
    }

    /// Closes stdin and waits for the process to exit on its own.
    fn shut_down(mut self) -> Option<i32> {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            thread::sleep(Duration::from_millis(10));
        }
        panic!("the runtime did not exit after stdin closed");
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One request on the runtime's socket, its one-line answer.
fn exchange(socket: &Path, request: &[u8]) -> Value {
    let mut stream = UnixStream::connect(socket).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // The runtime may refuse (and close) before it has read everything.
    let _ = stream.write_all(request);
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    serde_json::from_str(answer.trim_end()).unwrap_or_else(|_| panic!("not one JSON line: {answer:?}"))
}

#[test]
fn two_invocations_share_one_runtime_and_a_second_install_gets_its_own_socket() {
    let built = Built::new(support::example("routes"));
    let first = built.artifact();
    let second_install = tempfile::tempdir().unwrap();
    let second = second_install.path().join("routes");
    support::copy_tree(&first, &second);
    let session = Session::new();

    let mut runtime = session.start(&first);
    let tools = runtime.call("tools/list", json!({}));
    assert_eq!(tools["result"], json!({"tools": []}), "{tools:#}");
    assert_eq!(runtime.call("ping", json!({}))["result"], json!({}));

    // Module state lives in the runtime: the second prompt sees the first.
    for prompt in 1..=2 {
        let (code, output, stderr) = session.submit(&built, &first);
        assert_eq!(code, 0, "{stderr}");
        assert!(
            context(&output).ends_with(&format!("(prompt {prompt}, event {prompt}, shared runtime).")),
            "{output:#}"
        );
    }

    // The second install has no runtime of its own yet: its fallback answers, standalone.
    let (code, output, stderr) = session.submit(&built, &second);
    assert_eq!(code, 0, "{stderr}");
    assert!(context(&output).ends_with("(prompt 1, event 1, standalone hook)."), "{output:#}");

    // With its own runtime it gets another socket, and its own state.
    let other = session.start(&second);
    let sockets = session.sockets();
    assert_eq!(sockets.len(), 2, "{sockets:?}");
    let (_, output, _) = session.submit(&built, &second);
    assert!(context(&output).ends_with("(prompt 1, event 1, shared runtime)."), "{output:#}");
    let (_, output, _) = session.submit(&built, &first);
    assert!(context(&output).ends_with("(prompt 3, event 3, shared runtime)."), "{output:#}");

    // Only this user may reach the runtimes.
    let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&session.runtime_dir()), 0o700);
    for socket in &sockets {
        assert!(fs::metadata(socket).unwrap().file_type().is_socket(), "{socket:?}");
        assert_eq!(mode(socket), 0o600, "{socket:?}");
    }

    // Closing stdin shuts a runtime down and releases its socket.
    assert_eq!(other.shut_down(), Some(0));
    assert_eq!(runtime.shut_down(), Some(0));
    assert_eq!(session.sockets(), Vec::<PathBuf>::new());
}

#[test]
fn with_the_runtime_gone_a_route_without_fallback_exits_non_zero_and_answers_nothing() {
    let built = Built::new(project(&[
        ("agent-bundle.config.ts", "export default { plugin: { name: 'strict' }, targets: ['claude'] };"),
        (
            "src/events/prompt/submit.tsx",
            "import { Agent } from '@agent-bundle/runtime';\n\
             export const config = { runtime: 'shared' };\n\
             let prompts = 0;\n\
             export default async () => <Agent.Context>{`prompt ${++prompts}`}</Agent.Context>;\n",
        ),
    ]));
    let session = Session::new();
    let refused = |expected: &str| {
        let (code, output, stderr) = session.submit(&built, &built.artifact());
        assert_eq!((code, &output), (1, &Value::Null), "{stderr}");
        assert!(stderr.contains(expected), "{stderr}");
    };
    refused("shared runtime unavailable");

    let runtime = session.start(&built.artifact());
    let (code, output, stderr) = session.submit(&built, &built.artifact());
    assert_eq!((code, context(&output)), (0, "prompt 1"), "{stderr}");
    runtime.shut_down();
    refused("shared runtime unavailable");
}

/// A runtime folder another user made first, or one open to others, holds no runtime: the
/// route's fallback answers, and its hook says why on stderr.
#[test]
fn a_runtime_folder_open_to_others_is_no_runtime_and_the_fallback_answers() {
    let built = Built::new(support::example("routes"));
    let open = tempfile::tempdir().unwrap();
    fs::set_permissions(open.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let script = built.artifact().join(built.wrapper("prompt/submit"));
    let input = payload(CLAUDE, "UserPromptSubmit").to_string();
    let (code, stdout, stderr) =
        node(&script, input.as_bytes(), &[("AGENT_BUNDLE_RUNTIME_DIR", open.path().to_str().unwrap())]);
    assert_eq!(code, 0, "{stderr}");
    let output: Value = serde_json::from_str(&stdout).unwrap();
    assert!(context(&output).ends_with("(prompt 1, event 1, standalone hook)."), "{output:#}");
    let hook = script.file_name().unwrap().to_str().unwrap().trim_end_matches(".claude.mjs").to_owned();
    let said = format!(
        "agent-bundle hook {hook}: refusing the shared runtime: {} is accessible to other users (`chmod 700` it, or \
         name a folder that does not exist yet: the runtime makes it 0700): no runtime serves from it; the route \
         renders standalone\n",
        open.path().display()
    );
    assert_eq!(stderr, said);
}

/// A shared route that throws while rendering says where in its own source: the runtime
/// reads its bundle's source map, as a wrapper does.
#[test]
fn a_shared_route_that_throws_says_where() {
    let built = Built::new(project(&[
        ("agent-bundle.config.ts", "export default { plugin: { name: 'where' }, targets: ['claude'] };"),
        (
            "src/events/prompt/submit.tsx",
            "export const config = { runtime: 'shared' };\n\
             type Props = { canonical: { prompt: string } };\n\
             export default (event: Props) => {\n\
             \x20 const 名 = event.prompt; if (名 !== 'ok') throw new Error(`unexpected ${名}`);\n\
             };\n",
        ),
    ]));
    let session = Session::new();
    let runtime = session.start(&built.artifact());
    let (code, output, stderr) = session.submit(&built, &built.artifact());
    assert_eq!((code, output), (1, Value::Null), "{stderr}");
    assert!(
        stderr.contains("Event route rendering failed: unexpected undefined (at src/events/prompt/submit.tsx:4:49)"),
        "{stderr}"
    );
    runtime.shut_down();

    // One that throws while the runtime loads it says where too, at every request, and the
    // runtime serves on.
    let built = Built::new(project(&[
        ("agent-bundle.config.ts", "export default { plugin: { name: 'where' }, targets: ['claude'] };"),
        (
            "src/events/prompt/submit.tsx",
            "export const config = { runtime: 'shared' };\n\
             const limit: number = Number.NaN;\n\
             if (Number.isNaN(limit)) throw new Error('no limit');\n\
             export default () => null;\n",
        ),
    ]));
    let mut runtime = session.start(&built.artifact());
    for _ in 0..2 {
        let (code, _, stderr) = session.submit(&built, &built.artifact());
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains("route prompt/submit failed to load: no limit (at src/events/prompt/submit.tsx:3:32)"),
            "{stderr}"
        );
    }
    assert_eq!(runtime.call("ping", json!({}))["result"], json!({}));
    runtime.shut_down();
}

#[test]
fn the_runtime_refuses_another_epoch_and_malformed_or_oversized_messages() {
    let built = Built::new(support::example("routes"));
    let session = Session::new();
    let runtime = session.start(&built.artifact());
    let [socket] = &session.sockets()[..] else { panic!("one socket: {:?}", session.sockets()) };
    let request = |epoch: &str| {
        json!({
            "protocolVersion": 1,
            "artifactEpoch": epoch,
            "event": "prompt/submit",
            "hostContractRevision": "claude-code-2.1.332",
            "target": "claude",
            "native": payload(CLAUDE, "UserPromptSubmit"),
        })
    };
    let answer = exchange(socket, format!("{}\n", request(&built.epoch())).as_bytes());
    assert_eq!(answer["status"], "ok", "{answer:#}");
    let code = |answer: Value| (answer["status"].clone(), answer["code"].clone());

    let stale = exchange(socket, format!("{}\n", request("routes@0.2.0+0000000000000000")).as_bytes());
    assert_eq!(code(stale), (json!("error"), json!("epoch-mismatch")));
    assert_eq!(code(exchange(socket, b"not json\n")), (json!("error"), json!("invalid-message")));
    let mut extra = request(&built.epoch());
    extra["unexpected"] = true.into();
    assert_eq!(code(exchange(socket, format!("{extra}\n").as_bytes())), (json!("error"), json!("invalid-message")));
    let oversized = vec![b' '; 64 * 1024 * 1024 + 64 * 1024 + 1];
    assert_eq!(code(exchange(socket, &oversized)), (json!("error"), json!("invalid-message")));

    // Still serving after all that.
    let answer = exchange(socket, format!("{}\n", request(&built.epoch())).as_bytes());
    assert_eq!(answer["status"], "ok", "{answer:#}");
    runtime.shut_down();
}

#[test]
fn a_rebuilt_artifact_never_reaches_the_runtime_of_the_previous_build() {
    let built = Built::new(support::example("routes"));
    let session = Session::new();
    let runtime = session.start(&built.artifact());
    let (_, output, _) = session.submit(&built, &built.artifact());
    assert!(context(&output).ends_with("shared runtime)."), "{output:#}");

    // The host keeps the old runtime running; the new wrappers belong to another epoch, so
    // they find no runtime of theirs and their fallback answers with the new code.
    let route = built.dir.path().join("src/events/prompt/submit.tsx");
    let source = fs::read_to_string(&route).unwrap().replace("Answer in plain words", "Answer briefly");
    fs::write(&route, source).unwrap();
    let old_epoch = built.epoch();
    let rebuilt = Built::new(built.dir);
    assert_ne!(rebuilt.epoch(), old_epoch);
    let (code, output, stderr) = session.submit(&rebuilt, &rebuilt.artifact());
    assert_eq!(code, 0, "{stderr}");
    assert!(
        context(&output).starts_with("Answer briefly") && context(&output).ends_with("standalone hook)."),
        "{output:#}"
    );
    runtime.shut_down();
}

/// Where Claude Code runs the plugin's MCP servers around a session: it starts them beside
/// its `SessionStart` hooks, so a shared `session/start` route's wrapper waits for a runtime
/// still starting there (not on Codex, which starts them first); it stops them before it runs
/// `SessionEnd`, so a shared `session/end` route runs standalone there with its fallback
/// (AB4816) and fails the build without one (AB4817).
#[test]
fn a_shared_route_follows_when_the_host_runs_the_runtime() {
    let config = "export default { plugin: { name: 'life' }, targets: ['claude', 'codex'] };\n";
    let start = "import { Agent } from '@agent-bundle/runtime';\nexport const config = { runtime: 'shared' };\n\
                 export default () => <Agent.Context>hi</Agent.Context>;\n";
    let end = |fallback: &str| {
        // (Within Claude Code's budget for SessionEnd hooks, AB4208.)
        format!(
            "export const config = {{ runtime: 'shared'{fallback}, timeoutMs: 1000 }};\nexport default () => null;\n"
        )
    };
    let with_fallback = end(", fallback: 'standalone'");
    let built = Built::new(project(&[
        ("agent-bundle.config.ts", config),
        ("src/events/session/start.tsx", start),
        ("src/events/session/end.tsx", &with_fallback),
    ]));
    let wrapper = |name: &str| fs::read_to_string(built.artifact().join("hooks").join(name)).unwrap();
    let call = |name: &str| wrapper(name).lines().find(|line| line.starts_with("const __ab_shared")).map(str::to_owned);
    assert!(call("event-route-session-start.claude.mjs").unwrap().contains(r#""startupWaitMs":2500"#));
    assert!(!call("event-route-session-start.codex.mjs").unwrap().contains("startupWaitMs"));
    let end_wrapper = wrapper("event-route-session-end.claude.mjs");
    assert!(end_wrapper.contains("renderRoute") && !end_wrapper.contains("forwardRoute"), "standalone");
    let said: Vec<_> =
        built.report["diagnostics"].as_array().unwrap().iter().map(|d| (&d["code"], &d["host"])).collect();
    assert_eq!(said, [(&json!("AB4816"), &json!("claude"))], "{:#}", built.report);
    let message = built.report["diagnostics"][0]["help"].as_str().unwrap();
    assert!(message.contains("stops the plugin's MCP servers"), "{message}");

    let without = end("");
    let dir = project(&[("agent-bundle.config.ts", config), ("src/events/session/end.tsx", &without)]);
    let (code, report) = support::build_json(dir.path(), &[]);
    assert_eq!(code, 1, "{report:#}");
    let said: Vec<_> = report["diagnostics"].as_array().unwrap().iter().map(|d| (&d["code"], &d["host"])).collect();
    assert_eq!(said, [(&json!("AB4817"), &json!("claude"))], "{report:#}");
}

/// `hooks simulate` and `validate` start the runtime in a socket folder of their own: under
/// a `$TMPDIR` too deep for a socket address in it (macOS's per-user one), that folder goes
/// under `/tmp`, as a host's runtime's does; both leave nothing behind.
#[test]
fn simulate_and_validate_start_the_runtime_under_a_tmpdir_too_deep_for_a_socket() {
    // It says where its sockets are, and how open their folder's is.
    let route = "import { Agent } from '@agent-bundle/runtime';\nimport { statSync } from 'node:fs';\n\
                 export const config = { runtime: 'shared', fallback: 'standalone' };\n\
                 const dir = process.env.AGENT_BUNDLE_RUNTIME_DIR ?? '';\n\
                 export default () => <Agent.Context>{`${dir} ${(statSync(dir + '/..').mode & 0o777).toString(8)}`}</Agent.Context>;\n";
    let built = Built::new(project(&[
        ("agent-bundle.config.ts", "export default { plugin: { name: 'deep' }, targets: ['claude'] };"),
        ("src/events/session/start.tsx", route),
    ]));
    let tmp = tempfile::tempdir().unwrap();
    let deep = tmp.path().join("y".repeat(40));
    fs::create_dir(&deep).unwrap();
    let run = |args: &[&str]| {
        let output = support::bin().args(args).env("TMPDIR", &deep).current_dir(built.dir.path()).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}{stderr}", String::from_utf8_lossy(&output.stdout));
        output.stdout
    };
    let input = r#"{"sessionId":"s","transcriptPath":"/t","cwd":"/tmp","source":"startup"}"#;
    let simulated = run(&[
        "hooks",
        "simulate",
        "--target",
        "claude",
        "--hook",
        "event-route-session-start",
        "--input",
        input,
        "--json",
    ]);
    let report: Value = serde_json::from_slice(&simulated).unwrap();
    assert_eq!(report["renderedBy"], "shared", "{report:#}");
    let said = report["result"]["additionalContext"].as_str().unwrap();
    let (dir, mode) = said.split_once(' ').unwrap();
    assert!(dir.starts_with("/tmp/agent-bundle-run-") && dir.ends_with("/runtime"), "{said}");
    assert_eq!(mode, "700", "{said}");
    assert!(!Path::new(dir).parent().unwrap().exists(), "{dir} is removed");
    run(&["validate", "--artifact", "artifact", "--no-host-validation"]);
    assert_eq!(fs::read_dir(&deep).unwrap().count(), 0, "the scratch folders are gone");
}
