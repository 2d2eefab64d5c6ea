//! Generated documents are committed and must stay current.

use crate::support::{self, repo};

fn assert_current(path: &str, command: &[&str]) {
    let output = support::run(&repo(), command);
    assert!(output.status.success());
    let generated = String::from_utf8(output.stdout).unwrap();
    let committed = std::fs::read_to_string(repo().join(path)).unwrap_or_default();
    assert!(
        committed == generated,
        "{path} is out of date: run `cargo run -- {} > {path}` and commit it",
        command.join(" ")
    );
}

#[test]
fn the_event_matrix_is_current() {
    assert_current("docs/matrix.md", &["matrix"]);
}

#[test]
fn the_diagnostics_reference_is_current() {
    assert_current("docs/diagnostics.md", &["diagnostics"]);
}

/// The README's sample `build` line says what building the example really prints.
#[test]
fn the_readme_sample_build_line_is_current() {
    let dir = support::example("policy");
    let output = support::run(dir.path(), &["build", "--no-cache"]);
    assert!(output.status.success());
    let printed = String::from_utf8(output.stdout).unwrap();
    let (built, rest) = printed.split_once(" → ").unwrap();
    let files = rest.split_once(" (").and_then(|(_, counts)| counts.split_once(" files")).unwrap().0;
    let sample = format!("{built} → examples/policy/artifact/ ({files} files: …)");
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(readme.contains(&sample), "README.md should show `{sample}`");
}

/// The README's route example builds for every host without a word, and answers each of them
/// on a harmless command and a denied one (its context only where the host takes it).
#[test]
fn the_readme_route_example_runs_on_every_host() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let (_, from) = readme.split_once("```tsx\n// src/events/tool/before.tsx\n").unwrap();
    let route = &from[..from.find("```").unwrap()];
    let config = "export default { plugin: { name: 'readme' }, targets: ['claude', 'codex', 'cursor'] };\n";
    let dir = support::project(&[("agent-bundle.config.ts", config), ("src/events/tool/before.tsx", route)]);
    let (code, report) = support::build_json(dir.path(), &[]);
    assert_eq!((code, &report["diagnostics"]), (0, &serde_json::json!([])), "{report:#}");
    for (target, tool) in [("claude", "Bash"), ("codex", "Bash"), ("cursor", "Shell")] {
        for (command, denied) in [("ls", false), ("rm -rf /", true)] {
            let input = serde_json::json!({
                "sessionId": "s", "transcriptPath": "/tmp/t", "cwd": "/tmp", "toolName": tool,
                "toolInput": { "command": command }, "toolUseId": "t",
            });
            let output =
                support::simulate(dir.path(), target, "event-route-tool-before", &input.to_string(), &["--json"]);
            let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
            assert!(output.status.success() && answer["ok"] == true, "{target} {command}: {answer:#}");
            assert_eq!(answer.to_string().contains("refusing to remove the root"), denied, "{target}: {answer:#}");
        }
    }
}
