//! Cold start of an emitted wrapper on a real host payload, against a minimal hand-written
//! Node hook that writes the same answer, and against bare `node -e 0`; the three commands
//! are interleaved in one run so machine noise hits them alike.
//!
//! `cargo bench --bench wrapper_cold_start` (set `COLD_START_RUNS`, default 60).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agent_bundle::build::{BuildOptions, build};

/// The hand-written floor: read stdin, parse it, write the same deny answer.
const MINIMAL_HOOK: &str = r#"let s = ''; for await (const c of process.stdin) s += c;
const e = JSON.parse(s);
const cmd = e.tool_input?.command ?? '';
if (/POLICY_DENY_ME/.test(cmd)) process.stdout.write(JSON.stringify({hookSpecificOutput: {hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'policy: the command carries the POLICY_DENY_ME marker'}}));
"#;

fn main() {
    let runs: usize = std::env::var("COLD_START_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(60);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = tempfile::tempdir().unwrap();
    copy(&repo.join("examples/policy"), work.path());
    let options =
        BuildOptions::new(work.path().to_owned(), None, std::sync::Arc::new(agent_bundle::cache::Cache::disabled()));
    let output = build(&options).unwrap();
    assert!(output.published.is_some(), "the policy example builds");
    let wrapper = output
        .compiled
        .plans
        .iter()
        .flat_map(|p| p.hooks.iter().map(move |h| (p.target, h)))
        .find(|(t, h)| t.as_str() == "claude" && h.trigger.key() == "beforeTool")
        .and_then(|(_, h)| h.wrapper.clone())
        .unwrap();
    let wrapper = work.path().join("artifact").join(wrapper);
    let minimal = work.path().join("minimal-hook.mjs");
    std::fs::write(&minimal, MINIMAL_HOOK).unwrap();

    let recorded: serde_json::Value = serde_json::from_slice(
        &std::fs::read(repo.join("tests/fixtures/host-payloads/claude-code-2.1.332/PreToolUse.json")).unwrap(),
    )
    .unwrap();
    let mut payload = recorded["stdin"].clone();
    payload["tool_input"]["command"] = "echo POLICY_DENY_ME".into();
    let payload = payload.to_string();

    let expected = run_node(&[wrapper.to_str().unwrap()], &payload).1;
    assert_eq!(expected, run_node(&[minimal.to_str().unwrap()], &payload).1, "both hooks give the same answer");

    let commands: [(&str, Vec<&str>); 3] = [
        ("node -e 0", vec!["-e", "0"]),
        ("minimal hand-written hook", vec![minimal.to_str().unwrap()]),
        ("agent-bundle wrapper", vec![wrapper.to_str().unwrap()]),
    ];
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); commands.len()];
    for _ in 0..3 {
        for (_, args) in &commands {
            run_node(args, &payload); // warm the page cache
        }
    }
    for round in 0..runs {
        for offset in 0..commands.len() {
            // Rotate the order every round so no command always runs first.
            let index = (round + offset) % commands.len();
            samples[index].push(run_node(&commands[index].1, &payload).0);
        }
    }
    let medians: Vec<f64> = samples.iter_mut().map(|s| median(s)).collect();
    println!("wrapper cold start, {runs} interleaved runs each (PreToolUse deny on the Claude Code 2.1.332 payload):");
    for ((name, _), (sample, median)) in commands.iter().zip(samples.iter().zip(&medians)) {
        let p95 = sample[(sample.len() * 95 / 100).min(sample.len() - 1)].as_secs_f64() * 1e3;
        println!("  {name:<28} median {median:7.2} ms   p95 {p95:7.2} ms");
    }
    println!(
        "  wrapper / minimal hook: {:.3}x   wrapper / node -e 0: {:.3}x   minimal / node -e 0: {:.3}x",
        medians[2] / medians[1],
        medians[2] / medians[0],
        medians[1] / medians[0]
    );
    println!("  wrapper size: {} bytes", std::fs::metadata(&wrapper).unwrap().len());
}

fn median(samples: &mut [Duration]) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1e3
}

fn run_node(args: &[&str], stdin: &str) -> (Duration, String) {
    let started = Instant::now();
    let mut child = Command::new("node").args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let elapsed = started.elapsed();
    assert!(output.status.success());
    (elapsed, String::from_utf8(output.stdout).unwrap())
}

fn copy(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let relative = entry.path().strip_prefix(from).unwrap();
        if relative.starts_with("artifact") {
            continue;
        }
        let target = to.join(relative);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
