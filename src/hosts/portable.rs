//! Agent Plugins 1.0.0, the portable manifest. It defines no hooks: a hook that names
//! `portable` in its own targets is an error, other hooks simply do not reach it.

use super::{HostPlan, HostTable, description};
use crate::model::{Model, Target};
use crate::output::OutputFile;

pub static TABLE: HostTable = HostTable {
    target: Target::Portable,
    display_name: "Agent Plugins",
    contract_revision: "agent-plugins-1.0.0",
    manifest_path,
    prefers_root_agent_plugins: false,
    hooks: None,
    check_name,
    documents,
    // Agent Plugins 1.0.0 has MCP servers, but no hooks that could talk to a runtime.
    mcp: None,
};

/// Codex 0.171.0 loads a valid Agent Plugins manifest at the plugin root *instead of*
/// `.codex-plugin/plugin.json`, and Agent Plugins 1.0.0 has no hooks, so a root
/// `plugin.json` silently disables every Codex hook (found by the host-smoke tests). Cursor
/// also reads a root Agent Plugins manifest. Beside any such host, the portable package
/// therefore lives in its own root, `portable/`.
fn manifest_path(targets: &[Target]) -> &'static str {
    if targets.iter().any(|target| super::table(*target).prefers_root_agent_plugins) {
        "portable/plugin.json"
    } else {
        "plugin.json"
    }
}

/// `[a-z0-9.-]`, 1–64 characters, alphanumeric at both ends, no `--` or `..`.
fn check_name(name: &str) -> Result<(), String> {
    let bytes = name.as_bytes();
    let valid = !name.is_empty()
        && name.len() <= 64
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && !name.contains("--")
        && !name.contains("..")
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    if valid { Ok(()) } else { Err("it must be [a-z0-9.-], 1-64 characters, without `--` or `..`".into()) }
}

fn documents(model: &Model, _plan: &HostPlan, _runtime_in_artifact: bool) -> Vec<OutputFile> {
    let manifest = serde_json::json!({
        "$schema": "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json",
        "description": description(model),
        "name": model.name,
        "version": model.version,
    });
    vec![OutputFile::json(manifest_path(&model.targets), &manifest)]
}
