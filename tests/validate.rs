//! `agent-bundle validate` catches what breaks an artifact after the build.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::host_validation::claude_binary;
use crate::support;

/// `validate --json` with the pinned Claude Code as host validator: (exit code, codes).
fn validate(dir: &Path) -> (i32, Vec<String>, Value) {
    let output = support::bin()
        .args(["validate", "--artifact", "artifact", "--json", "--host-validation"])
        .env("AGENT_BUNDLE_CLAUDE", claude_binary())
        .current_dir(dir)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let codes = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| d["code"].as_str().unwrap().to_owned())
        .collect();
    (output.status.code().unwrap(), codes, report)
}

#[test]
fn a_fresh_artifact_validates_with_claude_plugin_validate() {
    let (dir, _) = support::built("policy");
    let (code, errors, report) = validate(dir.path());
    assert_eq!((code, errors), (0, Vec::<String>::new()), "{report:#}");
    assert_eq!(report["hostValidation"], true);
}

#[test]
fn a_deleted_wrapper_is_caught() {
    let (dir, _) = support::built("policy");
    let hooks = dir.path().join("artifact/hooks");
    let wrapper = fs::read_dir(&hooks)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".codex.mjs"))
        .unwrap();
    fs::remove_file(wrapper).unwrap();
    let (code, errors, _) = validate(dir.path());
    assert_eq!(code, 1);
    assert_eq!(errors, ["AB6004", "AB6018"]);
}

/// A file whose mode is not the manifest's (a wrapper made executable by hand) is no file of
/// that build, as the cache's own check of an artifact says.
#[test]
fn a_file_made_executable_is_caught() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, _) = support::built("policy");
    let wrapper = fs::read_dir(dir.path().join("artifact/hooks")).unwrap().next().unwrap().unwrap().path();
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    let (code, errors, report) = validate(dir.path());
    assert_eq!((code, errors), (1, vec!["AB6004".to_owned()]), "{report:#}");
    let message = report["diagnostics"][0]["message"].as_str().unwrap();
    assert!(message.ends_with("is executable, where the manifest lists it as not executable"), "{message}");
}

/// What a build never makes (a link, even to a listed file's twin; a folder holding no
/// listed file) is no artifact of its manifest, as a file added by hand is not.
#[test]
fn a_link_or_an_empty_folder_added_to_the_artifact_is_caught() {
    let (dir, _) = support::built("policy");
    let artifact = dir.path().join("artifact");
    std::os::unix::fs::symlink("/etc/passwd", artifact.join("hooks/passwd")).unwrap();
    fs::create_dir(artifact.join("skills")).unwrap();
    let (code, errors, report) = validate(dir.path());
    assert_eq!(code, 1);
    assert_eq!(errors, ["AB6004", "AB6004"], "{report:#}");
    let messages: Vec<_> =
        report["diagnostics"].as_array().unwrap().iter().map(|d| d["message"].as_str().unwrap()).collect();
    assert!(messages.contains(&"skills in the artifact is an empty folder"), "{messages:?}");
    assert!(
        messages.contains(&"hooks/passwd in the artifact is a symbolic link, which a build never makes"),
        "{messages:?}"
    );
}

/// An edited hook document is a hash mismatch, and what it registers is compared with the
/// manifest's hook index too (which `hooks list` and `simulate` read): a document edited and
/// its hash forged to match still fails.
#[test]
fn an_edited_hook_document_is_a_hash_mismatch_and_registers_what_the_index_does_not() {
    let (dir, _) = support::built("policy");
    let document = dir.path().join("artifact/.codex-plugin/hooks.json");
    let text = fs::read_to_string(&document).unwrap().replace("\"timeout\": 10", "\"timeout\": 11");
    fs::write(&document, text).unwrap();
    let (code, errors, report) = validate(dir.path());
    assert_eq!((code, errors), (1, vec!["AB6004".to_owned(), "AB6011".to_owned(), "AB6011".to_owned()]));
    let messages: Vec<&str> =
        report["diagnostics"].as_array().unwrap().iter().filter_map(|d| d["message"].as_str()).collect();
    assert!(messages.iter().any(|m| m.starts_with("registers PreToolUse `node ")), "{messages:?}");
    assert!(messages.iter().any(|m| m.starts_with("does not register PreToolUse `node ")), "{messages:?}");
}

#[test]
fn a_manifest_claude_code_rejects_is_reported() {
    let (dir, _) = support::built("policy");
    let artifact = dir.path().join("artifact");
    let path = ".claude-plugin/plugin.json";
    let mut manifest: Value = serde_json::from_slice(&fs::read(artifact.join(path)).unwrap()).unwrap();
    manifest["name"] = "claude".into();
    let bytes = serde_json::to_vec_pretty(&manifest).unwrap();
    fs::write(artifact.join(path), &bytes).unwrap();
    // Keep our own manifest consistent, so only Claude Code's verdict and the name check remain.
    let index_path = artifact.join("agent-bundle.manifest.json");
    let mut index: Value = serde_json::from_slice(&fs::read(&index_path).unwrap()).unwrap();
    for row in index["files"].as_array_mut().unwrap() {
        if row["path"] == path {
            row["blake3"] = blake3::hash(&bytes).to_hex().as_str().into();
        }
    }
    fs::write(&index_path, serde_json::to_vec_pretty(&index).unwrap()).unwrap();
    let (code, errors, report) = validate(dir.path());
    assert_eq!(code, 1);
    assert!(errors.contains(&"AB6019".to_owned()), "{report:#}");
}

#[test]
fn the_shared_runtime_and_its_mcp_documents_validate() {
    let (dir, _) = support::built("routes");
    let (code, errors, report) = validate(dir.path());
    assert_eq!((code, errors), (0, Vec::<String>::new()), "{report:#}");
}

#[test]
fn an_mcp_server_outside_the_artifact_and_a_runtime_that_does_not_start_are_caught() {
    let (dir, _) = support::built("routes");
    let artifact = dir.path().join("artifact");
    let document = artifact.join(".codex-plugin/mcp.json");
    let text = fs::read_to_string(&document).unwrap().replace("./mcp/event-runtime.mjs", "./mcp/gone.mjs");
    fs::write(&document, text).unwrap();
    fs::write(artifact.join("mcp/event-runtime.mjs"), "throw new Error('broken runtime');\n").unwrap();
    let (code, errors, report) = validate(dir.path());
    assert_eq!(code, 1);
    // Two hash mismatches, the Codex server's missing file, and the runtime failing for
    // both hosts that forward to it.
    assert_eq!(errors, ["AB6004", "AB6004", "AB6011", "AB6005", "AB6005"], "{report:#}");
    let runtime = report["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "AB6005").unwrap();
    assert!(runtime["message"].as_str().unwrap().contains("Error: broken runtime"), "{runtime:#}");

    // Every argument counts: a working folder outside the artifact, another host's target.
    for (written, tampered) in [("\"cwd\": \"./\"", "\"cwd\": \"/\""), ("\"codex\"", "\"claude\"")] {
        let (dir, _) = support::built("routes");
        let document = dir.path().join("artifact/.codex-plugin/mcp.json");
        let text = fs::read_to_string(&document).unwrap();
        assert!(text.contains(written), "{text}");
        fs::write(&document, text.replace(written, tampered)).unwrap();
        let (code, errors, report) = validate(dir.path());
        assert_eq!((code, errors), (1, vec!["AB6004".to_owned(), "AB6011".to_owned()]), "{report:#}");
    }
}

/// A host document the index needs, gone with its row of the manifest's files (so no hash
/// says so), or a plugin manifest's pointer to it gone: the host would run none of the hooks
/// the index lists for it, or never start the shared runtime.
#[test]
fn a_host_document_the_index_needs_gone_or_unpointed_is_caught() {
    let (dir, _) = support::built("routes");
    let artifact = dir.path().join("artifact");
    for gone in ["hooks/hooks.json", ".mcp.json"] {
        fs::remove_file(artifact.join(gone)).unwrap();
    }
    let manifest_path = artifact.join("agent-bundle.manifest.json");
    let mut manifest: Value = serde_json::from_slice(&fs::read(&manifest_path).unwrap()).unwrap();
    let files = manifest["files"].as_array_mut().unwrap();
    files.retain(|file| !["hooks/hooks.json", ".mcp.json"].contains(&file["path"].as_str().unwrap()));
    fs::write(&manifest_path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    // (Edited, not re-hashed: what the hashes say besides does not hide these.)
    let edit = |manifest: &str, change: &dyn Fn(&mut serde_json::Map<String, Value>)| {
        let path = artifact.join(manifest);
        let mut plugin: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        change(plugin.as_object_mut().unwrap());
        fs::write(&path, serde_json::to_vec_pretty(&plugin).unwrap()).unwrap();
    };
    edit(".codex-plugin/plugin.json", &|plugin| _ = plugin.insert("hooks".into(), "./.codex-plugin/nope.json".into()));
    edit(".cursor-plugin/plugin.json", &|plugin| _ = plugin.remove("hooks"));
    // (Cursor runs no route in the shared runtime here: its pointer keeps it off Claude's.)
    edit(".cursor-plugin/plugin.json", &|plugin| _ = plugin.remove("mcpServers"));
    edit(".claude-plugin/plugin.json", &|plugin| {
        plugin.insert("hooks".into(), "./hooks/hooks.json".into());
        plugin.insert("mcpServers".into(), "./.codex-plugin/mcp.json".into());
    });
    let (code, report) = support::validate_json(dir.path());
    assert_eq!(code, Some(1), "{report:#}");
    let said = support::diagnostic_fields(&report, "code", "message");
    for expected in [
        "hooks/hooks.json is missing: Claude Code runs none of the",
        ".mcp.json is missing: Claude Code never starts the shared runtime",
        "`hooks` must be `./.codex-plugin/hooks.json`: Codex finds its hooks through it",
        "`hooks` must be `./.cursor-plugin/hooks.json`: Cursor finds its hooks through it",
        "`hooks` names hooks/hooks.json, which Claude Code loads by itself",
        "`mcpServers` must be `./.cursor-plugin/mcp.json`: Cursor finds its MCP servers through it",
        "`mcpServers` is set, which a build never writes: Claude Code loads .mcp.json by itself",
    ] {
        assert!(
            said.iter().any(|(code, message)| *code == "AB6011" && message.starts_with(expected)),
            "{expected}: {said:#?}"
        );
    }
    // One problem per pointer: the one that must be another is not also said to name no file.
    assert!(!said.iter().any(|(_, message)| message.contains("nope.json does not name")), "{said:#?}");
}

/// A host that runs no hook keeps the hook document and pointer a build gives it (without
/// them Codex and Cursor read Claude Code's `hooks/hooks.json`).
#[test]
fn a_host_without_hooks_keeps_its_empty_hook_document() {
    let config = "export default { plugin: { name: 'one' }, targets: ['claude', 'codex'],\n  \
                  hooks: { stop: { handler: './src/stop.ts', targets: ['claude'] } } };\n";
    let dir = support::project(&[("agent-bundle.config.ts", config), ("src/stop.ts", "export default () => {};\n")]);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    assert_eq!(support::validate_json(dir.path()).0, Some(0));
    // No route runs in the shared runtime: an MCP server in Codex's manifest is none of the build's.
    let manifest = dir.path().join("artifact/.codex-plugin/plugin.json");
    let kept = fs::read(&manifest).unwrap();
    let mut plugin: Value = serde_json::from_slice(&kept).unwrap();
    plugin["mcpServers"] = serde_json::json!({ "evil": { "command": "sh", "args": ["-c", "id"] } });
    fs::write(&manifest, serde_json::to_vec_pretty(&plugin).unwrap()).unwrap();
    let (code, report) = support::validate_json(dir.path());
    assert_eq!(code, Some(1), "{report:#}");
    let said = support::diagnostic_fields(&report, "code", "message");
    let expected = "`mcpServers` is set, which a build writes only where a route runs in the shared runtime";
    assert!(said.iter().any(|(code, message)| *code == "AB6011" && message.contains(expected)), "{said:#?}");
    fs::write(&manifest, kept).unwrap();
    fs::remove_file(dir.path().join("artifact/.codex-plugin/hooks.json")).unwrap();
    let (code, report) = support::validate_json(dir.path());
    let said = report["diagnostics"].as_array().unwrap().iter().filter_map(|d| d["message"].as_str());
    let said: Vec<&str> = said.collect();
    assert_eq!(code, Some(1), "{report:#}");
    let expected = "the `hooks` pointer ./.codex-plugin/hooks.json does not name a file in the artifact";
    assert!(said.contains(&expected), "{said:#?}");
}

/// A route asking for the shared runtime that no host runs there (standalone where it
/// runs after the runtime stops, absent where the host has no such event) leaves no MCP
/// document or pointer: a build's own artifact validates.
#[test]
fn a_shared_route_no_host_runs_shared_leaves_no_mcp_document() {
    let config = "export default { plugin: { name: 'end' }, targets: ['claude', 'codex'] };\n";
    let route = "import type { AgentEventRouteConfig } from 'agent-bundle';\n\
                 export const config = { runtime: 'shared', fallback: 'standalone' } satisfies AgentEventRouteConfig;\n\
                 export default function End() { return null; }\n";
    let dir = support::project(&[("agent-bundle.config.ts", config), ("src/events/session/end.tsx", route)]);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    assert!(!dir.path().join("artifact/.codex-plugin/mcp.json").exists());
    let (code, report) = support::validate_json(dir.path());
    assert_eq!(code, Some(0), "{report:#}");
}

/// The guarded example, built, and one of its wrappers.
fn guarded_and_a_wrapper() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = support::example("guarded");
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let wrapper = fs::read_dir(dir.path().join("artifact/hooks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "mjs"))
        .unwrap();
    (dir, wrapper)
}

/// A wrapper Node cannot load is AB6005, with Node's own error, not just where it stopped.
#[test]
fn a_wrapper_that_does_not_load_says_what_node_said() {
    let (dir, wrapper) = guarded_and_a_wrapper();
    let text = fs::read_to_string(&wrapper).unwrap();
    fs::write(&wrapper, text.replacen("const ", "const const ", 1)).unwrap();
    let (code, _, report) = validate(dir.path());
    assert_eq!(code, 1);
    let load = report["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "AB6005").unwrap();
    let message = load["message"].as_str().unwrap();
    assert!(message.contains("fails as node loads it: SyntaxError: ") && message.contains("(at file://"), "{load:#}");
}

/// A manifest without the fields the checks read, of a version no build writes, or one
/// naming a file outside the artifact, is AB6000: nothing passes vacuously, nothing outside is read.
#[test]
fn a_hollow_manifest_or_one_that_leaves_the_artifact_is_invalid() {
    let (dir, _) = support::built("policy");
    let manifest_path = dir.path().join("artifact/agent-bundle.manifest.json");
    let manifest: Value = serde_json::from_slice(&fs::read(&manifest_path).unwrap()).unwrap();
    let mut escaping = manifest.clone();
    escaping["files"][0]["path"] = "../../outside.txt".into();
    let mut no_targets = manifest.clone();
    no_targets["targets"] = serde_json::json!([]);
    let hollow = serde_json::json!({ "plugin": manifest["plugin"], "targets": manifest["targets"], "files": [] });
    let mut no_hooks = manifest.clone();
    no_hooks.as_object_mut().unwrap().remove("hooks");
    let mut later = manifest.clone();
    later["manifestVersion"] = 2.into();
    for (broken, says) in [
        (serde_json::json!({}), "missing field `files`"),
        (hollow, "missing field `compiler`"),
        (no_hooks, "missing field `hooks`"),
        (later, "its manifestVersion is 2, where this agent-bundle writes 1"),
        (no_targets, "targets"),
        (escaping, "outside the artifact"),
    ] {
        fs::write(&manifest_path, broken.to_string()).unwrap();
        let (code, errors, report) = validate(dir.path());
        assert_eq!((code, errors), (1, vec!["AB6000".to_owned()]), "{report:#}");
        assert!(report["diagnostics"][0]["message"].as_str().unwrap().contains(says), "{report:#}");
        assert_eq!(report["hostValidation"], false);
    }
}

/// A host validator that does not answer with a report is a warning, and the check does
/// not claim it ran.
#[test]
fn a_host_validator_that_gives_no_report_is_not_claimed_to_have_run() {
    let (dir, _) = support::built("policy");
    let fake = dir.path().join("fake-claude");
    let said = "echo 'claude native binary not installed' >&2\necho >&2\necho 'Or reinstall' >&2\n";
    fs::write(&fake, format!("#!/bin/sh\necho 'not json'\n{said}exit 1\n")).unwrap();
    fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = |json: bool| {
        let mut command = support::bin();
        command.args(["validate", "--artifact", "artifact", "--host-validation"]).env("AGENT_BUNDLE_CLAUDE", &fake);
        command.args(json.then_some("--json")).current_dir(dir.path()).output().unwrap()
    };
    let report: Value = serde_json::from_slice(&run(true).stdout).unwrap();
    assert_eq!((&report["ok"], &report["hostValidation"]), (&Value::Bool(true), &Value::Bool(false)), "{report:#}");
    let warning = &report["diagnostics"][0];
    assert_eq!((warning["code"].as_str(), warning["severity"].as_str()), (Some("AB6019"), Some("warning")));
    let expected =
        "printed no JSON report (exit status: 1; it said: claude native binary not installed / Or reinstall)";
    assert!(warning["message"].as_str().unwrap().contains(expected), "{warning:#}");
    let human = String::from_utf8(run(false).stdout).unwrap();
    assert!(human.starts_with("Validation succeeded: ") && !human.contains("claude plugin validate"), "{human}");
}

/// `AGENT_BUNDLE_CLAUDE` set but empty counts as unset, as every variable the tool reads:
/// with no `claude` on PATH, asking for the host's validation is a usage error.
#[test]
fn an_empty_claude_variable_counts_as_unset() {
    let (dir, _) = support::built("policy");
    // A PATH with `node` alone.
    let node = std::process::Command::new("sh").args(["-c", "command -v node"]).output().unwrap();
    let bin = dir.path().join("bin");
    fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(String::from_utf8(node.stdout).unwrap().trim(), bin.join("node")).unwrap();
    let output = support::bin()
        .args(["validate", "--artifact", "artifact", "--host-validation"])
        .env("AGENT_BUNDLE_CLAUDE", "")
        .env("PATH", &bin)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--host-validation needs `claude` on PATH (or AGENT_BUNDLE_CLAUDE)"), "{stderr}");
}

/// With no `node` on PATH, the wrappers' check is one problem of the machine's, said once, not
/// one per wrapper.
#[test]
fn no_node_on_path_is_said_once() {
    let (dir, _) = support::built("policy");
    let output = support::validate_json_command(dir.path()).env("PATH", dir.path().join("nowhere")).output().unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let diagnostics = report["diagnostics"].as_array().unwrap();
    let [missing] = diagnostics.as_slice() else { panic!("{report:#}") };
    assert!(missing["message"].as_str().unwrap().contains("needs Node.js 20 or newer on PATH"), "{report:#}");
}

/// Ctrl-C (or SIGTERM) while the wrappers load stops the node processes at once (not when
/// a wrapper's load times out), prints no half report (`--json` gets `{ ok: false, error:
/// "interrupted" }`) and exits with 130.
#[test]
fn an_interrupted_validation_stops_its_node_processes_and_reports_nothing() {
    let (dir, wrapper) = guarded_and_a_wrapper();
    let pid_file = dir.path().join("loading");
    let hang = format!(
        "import {{ writeFileSync }} from 'node:fs';\nwriteFileSync({:?}, String(process.pid));\nawait new Promise(() => setInterval(() => {{}}, 1000));\n",
        pid_file.to_str().unwrap()
    );
    fs::write(&wrapper, hang + &fs::read_to_string(&wrapper).unwrap()).unwrap();
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let mut validation = support::validate_json_command(dir.path());
        let started = std::time::Instant::now();
        let (output, pid) = support::signal_once_running(&mut validation, &pid_file, signal);
        // (A validation that did not stop would wait out the hanging wrapper's 10 s load
        // time, then run every other wrapper.)
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "stopped at once");
        assert_eq!(output.status.code(), Some(130), "{}", String::from_utf8_lossy(&output.stderr));
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(report, serde_json::json!({ "ok": false, "error": "interrupted" }), "no half report");
        assert_eq!(String::from_utf8_lossy(&output.stderr).trim(), "interrupted");
        assert!(!support::running(&pid), "a wrapper outlived the validation");
    }
}

/// A project's folder given where its artifact goes says where the artifact is.
#[test]
fn a_project_folder_given_as_the_artifact_names_the_artifact() {
    let (dir, _) = support::built("policy");
    let output = support::run(dir.path(), &["hooks", "list", "--artifact", "."]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(". holds a project; its artifact is ./artifact unless built with --out"), "{stderr}");
}

/// A tampered manifest is refused before anything runs: a hook path outside the artifact
/// (`hooks simulate` would run it), a timeout no config can give, another version, a FIFO
/// where the manifest was (a read would wait for ever); and what parses but was not built
/// (a size, a hook's wrapper) fails `validate`.
#[test]
fn a_tampered_manifest_is_refused_and_never_waited_on() {
    let (dir, _) = support::built("policy");
    let manifest_path = dir.path().join("artifact/agent-bundle.manifest.json");
    let original = fs::read_to_string(&manifest_path).unwrap();
    let tamper = |edit: &dyn Fn(&mut Value)| {
        let mut manifest: Value = serde_json::from_str(&original).unwrap();
        edit(&mut manifest);
        fs::write(&manifest_path, manifest.to_string()).unwrap();
    };
    let validation_error = || {
        let (code, report) = support::validate_json(dir.path());
        assert_eq!(code, Some(1));
        let first = &report["diagnostics"][0];
        assert_eq!(first["code"], "AB6000", "{report:#}");
        first["message"].as_str().unwrap().to_owned()
    };
    let simulate = || {
        let name = serde_json::from_str::<Value>(&original).unwrap()["hooks"][0]["name"].as_str().unwrap().to_owned();
        let output = support::bin()
            .args([
                "hooks",
                "simulate",
                "--artifact",
                "artifact",
                "--target",
                "claude",
                "--hook",
                &name,
                "--input",
                "{}",
            ])
            .current_dir(dir.path())
            .output()
            .unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    };

    tamper(&|manifest| {
        for hook in manifest["hooks"].as_array_mut().unwrap() {
            hook["path"] = "../../../../etc/passwd".into();
        }
    });
    assert!(validation_error().contains("\"../../../../etc/passwd\", a path outside the artifact"));
    let (code, stderr) = simulate();
    assert_eq!(code, Some(1));
    assert!(stderr.contains("a path outside the artifact") && !stderr.contains("root:"), "{stderr}");

    tamper(&|manifest| manifest["hooks"][0]["timeout"] = (-1).into());
    assert!(validation_error().contains("invalid value: integer `-1`, expected u32"));

    // A hook row naming what no build writes: another host, an unknown event, a matcher no
    // engine takes, a host no build has (which does not parse).
    tamper(&|manifest| manifest["hooks"][0]["host"] = "portable".into());
    assert!(validation_error().contains("the host portable, which the artifact has no hooks for"));
    tamper(&|manifest| manifest["hooks"][0]["event"] = "beforeToll".into());
    assert!(validation_error().contains("the event \"beforeToll\", which no hook has"));
    tamper(&|manifest| manifest["hooks"][0]["matcher"] = "(((".into());
    assert!(validation_error().contains("the matcher \"(((\", which no host's engine takes"));
    tamper(&|manifest| manifest["hooks"][0]["host"] = "vscode".into());
    assert!(validation_error().contains("unknown variant `vscode`"));

    // `hooks list` reads the manifest as `validate` does: one of another version is refused.
    tamper(&|manifest| manifest["manifestVersion"] = 2.into());
    let listed =
        support::bin().args(["hooks", "list", "--artifact", "artifact"]).current_dir(dir.path()).output().unwrap();
    assert_eq!(listed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&listed.stderr).contains("its manifestVersion is 2"));

    // What parses but is not what was built: a size, a hook sent to another hook's wrapper
    // (simulate would run that one), a hook whose wrapper is a folder.
    let codes_of = |edit: &dyn Fn(&mut Value)| {
        tamper(edit);
        let (code, report) = support::validate_json(dir.path());
        let said: Vec<String> = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| format!("{} {}", d["code"].as_str().unwrap(), d["message"].as_str().unwrap()))
            .collect();
        (code, said)
    };
    let (code, said) = codes_of(&|manifest| {
        let bytes = manifest["files"][0]["bytes"].as_u64().unwrap();
        manifest["files"][0]["bytes"] = (bytes + 1).into();
    });
    assert_eq!(code, Some(1));
    assert!(said.iter().any(|s| s.starts_with("AB6004 ") && s.contains("bytes, where the manifest says")), "{said:?}");
    let (code, said) = codes_of(&|manifest| {
        let other = manifest["hooks"][1]["path"].clone();
        manifest["hooks"][0]["path"] = other;
    });
    assert_eq!(code, Some(1));
    assert!(said.iter().any(|s| s.starts_with("AB6005 ")), "the swapped hook does not find its name: {said:?}");
    let (code, said) = codes_of(&|manifest| manifest["hooks"][0]["path"] = "hooks".into());
    assert_eq!(code, Some(1));
    assert!(said.iter().any(|s| s.contains("'s wrapper hooks is no file the manifest lists")), "{said:?}");

    fs::remove_file(&manifest_path).unwrap();
    let fifo = std::ffi::CString::new(manifest_path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    assert!(validation_error().contains("not a regular file"));
    let (code, stderr) = simulate();
    assert_eq!(code, Some(1));
    assert!(stderr.contains("not a regular file"), "{stderr}");
}

/// The message of the first AB6005 (a wrapper or the shared runtime that does not load) of
/// `validate` on the artifact of a project of `files`, which builds; `validate` must fail.
fn load_failure(files: &[(&str, &str)]) -> String {
    let dir = support::project(files);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let (code, report) = support::validate_json(dir.path());
    assert_eq!(code, Some(1));
    let load = report["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "AB6005").expect("AB6005");
    load["message"].as_str().unwrap().to_owned()
}

/// A stop hook of `handler`, for Claude Code.
fn stop_hook(handler: &str) -> [(&str, &str); 2] {
    let config = "export default { plugin: { name: 'p' }, targets: ['claude'], hooks: { stop: './src/stop.ts' } };\n";
    [("agent-bundle.config.ts", config), ("src/stop.ts", handler)]
}

/// A handler module that throws while it loads fails every run of its hook, whatever the
/// input: `validate` (which runs each wrapper on empty stdin) reports it, with where.
#[test]
fn a_module_that_throws_while_loading_fails_validation_with_where() {
    let handler =
        "const ready: boolean = false;\nif (!ready) throw new Error('not configured');\nexport default () => {};\n";
    let message = load_failure(&stop_hook(handler));
    assert!(message.contains("handler module failed to load: not configured (at src/stop.ts:2:19)"), "{message}");
}

/// A shared route whose module throws while the runtime loads it fails every request the
/// runtime gets for it (the runtime serves on without it): `validate` reports it, with where.
#[test]
fn a_shared_route_that_throws_while_loading_fails_validation() {
    let route = "export const config = { runtime: 'shared' };\nconst limit: number = Number.NaN;\n\
                 if (Number.isNaN(limit)) throw new Error('no limit');\nexport default () => null;\n";
    let config = "export default { plugin: { name: 'early' }, targets: ['claude'] };\n";
    let message = load_failure(&[("agent-bundle.config.ts", config), ("src/events/prompt/submit.tsx", route)]);
    let expected = "the shared runtime for claude: route prompt/submit failed to load: no limit (at src/events/prompt/submit.tsx:3:32)";
    assert_eq!(message, expected);
}

/// A shared route whose module never finishes loading holds the runtime before it answers
/// MCP `initialize`: `validate` says so once the runtime's time to start is up.
#[test]
fn a_shared_route_that_never_finishes_loading_fails_validation_saying_so() {
    let route = "export const config = { runtime: 'shared' };\nwhile (Date.now() > 0) {}\nexport default () => null;\n";
    let config = "export default { plugin: { name: 'busy' }, targets: ['claude'] };\n";
    let message = load_failure(&[("agent-bundle.config.ts", config), ("src/events/prompt/submit.tsx", route)]);
    let expected = "for claude, the shared runtime mcp/event-runtime.mjs did not answer MCP \
                    `initialize` within 10 s: a route's module that does not finish loading holds it";
    assert_eq!(message, expected);
}

/// A module that reads a file relative to the working folder as it loads finds it in the
/// plugin's project, where `validate` is run, and nowhere a host runs it: validation runs
/// the wrapper in the artifact, so it fails wherever it is started.
#[test]
fn a_wrapper_is_validated_away_from_the_folder_validate_runs_in() {
    let handler = "import { readFileSync } from 'node:fs';\nconst rules = readFileSync('src/rules.txt', 'utf8');\n\
                   export default () => { void rules; };\n";
    let mut files = stop_hook(handler).to_vec();
    files.push(("src/rules.txt", "rm -rf\n"));
    let message = load_failure(&files);
    assert!(message.contains("ENOENT") && message.contains("src/rules.txt"), "{message}");
}

/// A module that prints as it loads loads all the same: only the runtime's refusal of the
/// empty input, which comes last, is what validation looks for.
#[test]
fn a_module_that_prints_as_it_loads_validates() {
    let dir = support::project(&stop_hook(
        "console.log('loading');\nconsole.error('rules read');\nexport default () => {};\n",
    ));
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    validates(dir.path());
}

/// `validate` of the artifact of the project at `dir`, which must pass.
fn validates(dir: &Path) {
    let (code, report) = support::validate_json(dir);
    assert_eq!(code, Some(0), "{report:#}");
}

/// A folder of the artifact validate may not list is said so, not called empty: what it
/// holds was never checked.
#[test]
fn a_folder_validate_may_not_list_is_said_so() {
    let (dir, _) = support::built("policy");
    let locked = dir.path().join("artifact/hooks/locked");
    fs::create_dir(&locked).unwrap();
    fs::write(locked.join("x.mjs"), "").unwrap();
    fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
    let args = ["validate", "--artifact", "artifact", "--json"];
    let output = crate::builds::unprivileged(dir.path(), &[dir.path()], &args);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let said: Vec<&str> =
        report["diagnostics"].as_array().unwrap().iter().map(|d| d["message"].as_str().unwrap()).collect();
    let locked = "hooks/locked in the artifact is a folder validate may not list, whose files were not checked";
    assert_eq!(said, [locked], "{report:#}");
    assert_eq!(output.status.code(), Some(1));
}

/// A wrapper that writes a file where it runs writes it in a scratch folder, never in the
/// artifact being checked: validating twice gives the same answer.
#[test]
fn validating_leaves_the_artifact_as_it_was() {
    let handler = "import { appendFileSync } from 'node:fs';\nappendFileSync('loaded.log', 'x');\n\
                   export default () => {};\n";
    let dir = support::project(&stop_hook(handler));
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let before = support::artifact_files(&dir.path().join("artifact"));
    validates(dir.path());
    validates(dir.path());
    assert_eq!(support::artifact_files(&dir.path().join("artifact")), before);
    assert!(!dir.path().join("loaded.log").exists());
}

/// A default export the build cannot tell is no function (another module's value) fails
/// every run of its hook: `validate` reports it, for a handler and a route.
#[test]
fn a_default_export_that_is_no_function_fails_validation() {
    let [config, handler] = stop_hook("import answer from './answer.ts';\nexport default answer;\n");
    let message = load_failure(&[config, handler, ("src/answer.ts", "export default 3;\n")]);
    assert!(message.contains("handler module src/stop.ts must default-export a function"), "{message}");
    let route = "export { default } from '../../text.ts';\n";
    let config = "export default { plugin: { name: 'r' }, targets: ['claude'] };\n";
    let files = [
        ("agent-bundle.config.ts", config),
        ("src/events/prompt/submit.tsx", route),
        ("src/text.ts", "export default 'text';\n"),
    ];
    let message = load_failure(&files);
    assert!(
        message.contains("route module src/events/prompt/submit.tsx must default-export a function component"),
        "{message}"
    );
}
