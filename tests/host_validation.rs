//! The real Claude Code CLI (from npm, pinned) accepts the artifacts `build` writes.

use std::path::PathBuf;
use std::process::Command;

use crate::support::{self, repo};

/// The pinned Claude Code binary, installed on first use by the project's own script.
pub fn claude_binary() -> PathBuf {
    let output =
        Command::new(repo().join("scripts/install-host-clients.sh")).output().expect("the install script runs");
    assert!(
        output.status.success(),
        "installing the host clients failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let dir = PathBuf::from(String::from_utf8(output.stdout).unwrap().trim());
    dir.join("node_modules/@anthropic-ai/claude-code-linux-x64/claude")
}

#[test]
fn claude_plugin_validate_accepts_every_example_artifact() {
    let claude = claude_binary();
    for example in ["hooks-and-scripts", "guarded", "prebuilt-plugin", "policy"] {
        let dir = support::example(example);
        assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0), "{example}");
        let output = Command::new(&claude)
            .args(["plugin", "validate", "--json"])
            .arg(dir.path().join("artifact"))
            .env("HOME", dir.path())
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|_| panic!("{example}: no JSON from claude: {}", String::from_utf8_lossy(&output.stderr)));
        assert_eq!(report["success"], true, "{example}: {report:#}");
        let mut errors = report["manifest"]["errors"].as_array().unwrap().clone();
        for content in report["contents"].as_array().into_iter().flatten() {
            errors.extend(content["errors"].as_array().into_iter().flatten().cloned());
        }
        assert_eq!(errors, Vec::<serde_json::Value>::new(), "{example}: {report:#}");
    }
}
