//! A route rendered by the shared runtime (wrapper → socket → runtime → reply) against the
//! same route rendered standalone inside its wrapper, both as whole hook processes on the
//! Claude Code 2.1.332 UserPromptSubmit payload, interleaved in one run; plus the socket
//! exchange alone, from a client that is already running.
//!
//! `cargo bench --bench route_round_trip` (set `ROUND_TRIP_RUNS`, default 60).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agent_bundle::build::{BuildOptions, build};

/// The route under test: a little work per prompt, the same in both forms.
const ROUTE: &str = r#"import { Agent } from '@agent-bundle/runtime';
export const config = { runtime: 'RUNTIME' };
let prompts = 0;
export default async function Reminder({ canonical }) {
  prompts += 1;
  const words = String(canonical.payload.prompt ?? '').split(/\s+/).length;
  return <Agent.Context>{`prompt ${prompts}: ${words} word(s)`}</Agent.Context>;
}
"#;

fn main() {
    let runs: usize = std::env::var("ROUND_TRIP_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(60);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let recorded: serde_json::Value = serde_json::from_slice(
        &std::fs::read(repo.join("tests/fixtures/host-payloads/claude-code-2.1.332/UserPromptSubmit.json")).unwrap(),
    )
    .unwrap();
    let payload = recorded["stdin"].to_string();

    let work = tempfile::tempdir().unwrap();
    let sockets = work.path().join("runtime");
    let standalone = build_route(&work.path().join("standalone"), "standalone");
    let shared = build_route(&work.path().join("shared"), "shared");
    let mut runtime = start_runtime(&shared, &sockets);

    let hooks: [(&str, &Path); 2] = [("standalone wrapper", &standalone.wrapper), ("shared wrapper", &shared.wrapper)];
    for (_, wrapper) in &hooks {
        let answer = run_hook(wrapper, &payload, &sockets).1;
        assert!(answer.contains("prompt "), "the route answers: {answer}");
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); hooks.len()];
    for round in 0..runs {
        for offset in 0..hooks.len() {
            let index = (round + offset) % hooks.len();
            samples[index].push(run_hook(hooks[index].1, &payload, &sockets).0);
        }
    }
    let socket = std::fs::read_dir(&sockets).unwrap().next().unwrap().unwrap().path();
    let request = serde_json::json!({
        "protocolVersion": 1,
        "artifactEpoch": shared.epoch,
        "event": "prompt/submit",
        "hostContractRevision": "claude-code-2.1.332",
        "target": "claude",
        "native": recorded["stdin"],
    });
    let mut exchanges: Vec<Duration> = (0..runs * 10).map(|_| exchange(&socket, &request)).collect();

    println!("route round trip, {runs} interleaved hook runs each (prompt/submit on the Claude Code 2.1.332 payload):");
    let medians: Vec<f64> = samples.iter_mut().map(|s| median(s)).collect();
    for ((name, _), (sample, median)) in hooks.iter().zip(samples.iter().zip(&medians)) {
        println!("  {name:<28} median {median:7.2} ms   p95 {:7.2} ms", p95(sample));
    }
    println!(
        "  shared − standalone: {:+.2} ms at the median ({:.3}x)",
        medians[1] - medians[0],
        medians[1] / medians[0]
    );
    let exchange_median = median(&mut exchanges);
    println!(
        "  socket exchange alone ({} from a running client): median {exchange_median:.3} ms   p95 {:.3} ms",
        exchanges.len(),
        p95(&exchanges)
    );
    for (name, built) in [("standalone", &standalone), ("shared", &shared)] {
        println!("  {name} wrapper size: {} bytes", std::fs::metadata(&built.wrapper).unwrap().len());
    }
    drop(runtime.stdin.take());
    let _ = runtime.wait();
}

struct BuiltRoute {
    wrapper: PathBuf,
    epoch: String,
}

fn build_route(dir: &Path, runtime: &str) -> BuiltRoute {
    std::fs::create_dir_all(dir.join("src/events/prompt")).unwrap();
    std::fs::write(
        dir.join("agent-bundle.config.ts"),
        "export default { plugin: { name: 'bench-route', version: '1.0.0' }, targets: ['claude'] };\n",
    )
    .unwrap();
    std::fs::write(dir.join("src/events/prompt/submit.tsx"), ROUTE.replace("RUNTIME", runtime)).unwrap();
    let options = BuildOptions::new(dir.to_owned(), None, std::sync::Arc::new(agent_bundle::cache::Cache::disabled()));
    let output = build(&options).unwrap();
    assert!(output.published.is_some(), "the {runtime} route builds: {:?}", output.compiled.diagnostics);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("artifact/agent-bundle.manifest.json")).unwrap()).unwrap();
    BuiltRoute {
        wrapper: dir.join("artifact/hooks/event-route-prompt-submit.claude.mjs"),
        epoch: manifest["eventRuntime"]["epoch"].as_str().unwrap_or_default().to_owned(),
    }
}

/// The shared build's runtime, ready once it answered MCP `initialize`.
fn start_runtime(shared: &BuiltRoute, sockets: &Path) -> Child {
    let artifact = shared.wrapper.parent().unwrap().parent().unwrap();
    let mut child = Command::new("node")
        .arg(artifact.join("mcp/event-runtime.mjs"))
        .args(["--target", "claude"])
        .env("AGENT_BUNDLE_RUNTIME_DIR", sockets)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
    writeln!(child.stdin.as_ref().unwrap(), "{initialize}").unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
    assert!(line.contains("\"result\""), "the runtime started: {line}");
    child
}

fn run_hook(wrapper: &Path, stdin: &str, sockets: &Path) -> (Duration, String) {
    let started = Instant::now();
    let mut child = Command::new("node")
        .arg(wrapper)
        .env("AGENT_BUNDLE_RUNTIME_DIR", sockets)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let elapsed = started.elapsed();
    assert!(output.status.success(), "{wrapper:?} failed");
    (elapsed, String::from_utf8(output.stdout).unwrap())
}

fn exchange(socket: &Path, request: &serde_json::Value) -> Duration {
    let started = Instant::now();
    let mut stream = UnixStream::connect(socket).unwrap();
    writeln!(stream, "{request}").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let elapsed = started.elapsed();
    assert!(answer.contains(r#""status":"ok""#), "{answer}");
    elapsed
}

fn median(samples: &mut [Duration]) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1e3
}

fn p95(sorted: &[Duration]) -> f64 {
    sorted[(sorted.len() * 95 / 100).min(sorted.len() - 1)].as_secs_f64() * 1e3
}
