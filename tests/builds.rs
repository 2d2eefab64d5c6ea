//! Building the examples: emitted documents (snapshots), determinism, atomic publishing.

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

use crate::support::{self, artifact_files, build_json};

/// Every emitted JSON document of an artifact, one block per file (wrappers and the shared
/// runtime are checked by running them; here only their presence and header).
fn documents(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for (path, bytes) in artifact_files(dir) {
        if path.ends_with(".mjs") && path.starts_with("hooks/") {
            let text = String::from_utf8(bytes).unwrap();
            let hook_line = text.lines().find(|l| l.starts_with("// Hook ")).expect("a wrapper names its hook");
            out.push_str(&format!("---------- {path} ----------\n{}\n{hook_line}\n", text.lines().next().unwrap()));
        } else if path.ends_with(".mjs") {
            let text = String::from_utf8(bytes).unwrap();
            out.push_str(&format!("---------- {path} ----------\n{}\n", text.lines().next().unwrap()));
        } else if path.ends_with(".json") && !path.ends_with("agent-bundle.manifest.json") {
            out.push_str(&format!("---------- {path} ----------\n{}", String::from_utf8(bytes).unwrap()));
        } else {
            out.push_str(&format!("---------- {path} ----------\n({} bytes)\n", bytes.len()));
        }
    }
    out
}

#[test]
fn hooks_and_scripts_builds_for_portable_codex_and_claude() {
    let (dir, _) = support::built("hooks-and-scripts");
    insta::assert_snapshot!(documents(&dir.path().join("artifact")));
}

#[test]
fn guarded_builds_for_portable_and_claude() {
    let (dir, _) = support::built("guarded");
    insta::assert_snapshot!(documents(&dir.path().join("artifact")));
}

/// A host listed with no hooks says why: the artifact was not built for it, or it takes none.
#[test]
fn hooks_list_says_why_a_host_has_no_hooks() {
    let (dir, _) = support::built("guarded");
    let last_line = |target: &str| {
        let listed = support::run(dir.path(), &["hooks", "list", "--target", target]);
        assert_eq!(listed.status.code(), Some(0));
        String::from_utf8_lossy(&listed.stdout).lines().last().unwrap().to_owned()
    };
    assert_eq!(
        last_line("codex"),
        "Listed 0 hook(s) from codex (the artifact was not built for codex: its targets are claude, portable)"
    );
    assert_eq!(last_line("portable"), "Listed 0 hook(s) from portable (Agent Plugins takes no hooks)");
    assert_eq!(last_line("claude"), "Listed 2 hook(s) from claude");
}

#[test]
fn prebuilt_plugin_copies_its_payload_byte_for_byte() {
    let (dir, _) = support::built("prebuilt-plugin");
    let artifact = dir.path().join("artifact");
    insta::assert_snapshot!(documents(&artifact));
    for file in ["hook/index.js", "package.json", "bin/format.sh"] {
        let source = fs::read(dir.path().join("dist/runtime").join(file)).unwrap();
        assert_eq!(fs::read(artifact.join("runtime").join(file)).unwrap(), source, "{file}");
    }
    let mode = fs::metadata(artifact.join("runtime/bin/format.sh")).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0o111, "the executable bit is kept");
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(artifact.join("agent-bundle.manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["payloads"], serde_json::json!([{ "name": "runtime", "source": "dist/runtime" }]));
    assert!(!artifact.join("hooks").join("index.claude.mjs").exists(), "prebuilt hooks get no wrapper");
    // Listed apart: they cannot be simulated.
    let listed = support::run(dir.path(), &["hooks", "list", "--json"]);
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!((&listed["ok"], &listed["hooks"]), (&true.into(), &serde_json::json!([])), "{listed:#}");
    assert_eq!(listed["prebuilt"][0]["kind"], "prebuilt", "{listed:#}");
    // Named whole or by a start, simulating one is a wrong invocation (exit 2).
    let name = listed["prebuilt"][0]["name"].as_str().unwrap().to_owned();
    for hook in [name.as_str(), "after-tool"] {
        let args = ["hooks", "simulate", "--target", "claude", "--hook", hook, "--input", "{}"];
        let simulated = support::run(dir.path(), &args);
        let stderr = String::from_utf8_lossy(&simulated.stderr);
        assert_eq!(simulated.status.code(), Some(2), "{hook}: {stderr}");
        assert!(stderr.contains("cannot be simulated"), "{stderr}");
    }
    // A payload file is copied as it is, read by no wrapper: an edit of it is no input a
    // simulation would run otherwise (the artifact's payload is what the host runs).
    let inputs: Vec<&str> =
        manifest["inputs"].as_array().unwrap().iter().map(|i| i["path"].as_str().unwrap()).collect();
    assert!(inputs.contains(&"dist/runtime/package.json"), "payload files are inputs: {inputs:?}");
    let changed = || {
        let manifest = agent_bundle::emit::manifest::Manifest::read(&artifact).unwrap();
        agent_bundle::artifact::changed_inputs(&artifact, &manifest)
    };
    fs::write(dir.path().join("dist/runtime/package.json"), "{}\n").unwrap();
    assert_eq!(changed(), Vec::<String>::new());
    let config = dir.path().join("agent-bundle.config.ts");
    fs::write(&config, fs::read_to_string(&config).unwrap() + "\n").unwrap();
    assert_eq!(changed(), ["agent-bundle.config.ts"]);
}

/// What a payload's source holds that no artifact carries (a symbolic link, a special
/// file, a dependency folder) fails the build, naming it (AB4745), rather than an artifact
/// without it; so in a fresh checkout that the cache would restore, and after a no-op.
#[test]
fn a_payload_that_would_not_arrive_whole_fails_the_build() {
    let (dir, cache) = (support::example("prebuilt-plugin"), tempfile::tempdir().unwrap());
    let runtime = dir.path().join("dist/runtime");
    let build = |root: &std::path::Path| {
        let (code, report) = build_json(root, &["--cache-dir", cache.path().to_str().unwrap()]);
        let messages: Vec<String> = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| format!("{} {}", d["code"].as_str().unwrap(), d["message"].as_str().unwrap()))
            .collect();
        (code, messages)
    };
    assert_eq!(build(dir.path()), (0, vec![]));
    let before = support::artifact_files(&dir.path().join("artifact"));
    let checkout = tempfile::tempdir().unwrap();
    support::copy_tree(dir.path(), checkout.path());

    std::os::unix::fs::symlink("package.json", runtime.join("link.json")).unwrap();
    let fifo = std::ffi::CString::new(runtime.join("bin/pipe").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    fs::create_dir_all(runtime.join("node_modules/dep")).unwrap();
    fs::write(runtime.join("node_modules/dep/index.js"), "module.exports = 1;\n").unwrap();
    let not_utf8: &std::ffi::OsStr = std::os::unix::ffi::OsStrExt::from_bytes(b"bad\xff.js");
    fs::write(runtime.join(not_utf8), "").unwrap();
    let expected = "AB4745 payload `runtime` would not arrive whole: `dist/runtime/bad\u{fffd}.js` (a name that is not \
                    UTF-8), `dist/runtime/bin/pipe` (a special file: a FIFO, a socket or a device), \
                    `dist/runtime/link.json` (a symbolic link), `dist/runtime/node_modules` (a folder agent-bundle \
                    never reads) would be left out";
    assert_eq!(build(dir.path()), (1, vec![expected.to_owned()]));
    assert_eq!(support::artifact_files(&dir.path().join("artifact")), before, "the last artifact stays");

    // The inputs are those of the artifact the cache holds: it is not restored as it was.
    std::os::unix::fs::symlink("package.json", checkout.path().join("dist/runtime/link.json")).unwrap();
    let (code, messages) = build(checkout.path());
    assert_eq!((code, messages.len()), (1, 1), "{messages:?}");
    assert!(!checkout.path().join("artifact").exists());
}

/// A cache a payload's scripts leave (Python's `__pycache__`, a test runner's) is left out
/// of the artifact without a word; a virtual environment would not arrive whole (AB4745).
#[test]
fn a_payload_leaves_caches_out_and_refuses_a_virtual_environment() {
    let dir = support::example("prebuilt-plugin");
    let runtime = dir.path().join("dist/runtime");
    assert_eq!(build_json(dir.path(), &[]).0, 0);
    let before = support::artifact_files(&dir.path().join("artifact"));
    for cache in ["bin/__pycache__/format.cpython-311.pyc", ".pytest_cache/v/cache/lastfailed"] {
        fs::create_dir_all(runtime.join(cache).parent().unwrap()).unwrap();
        fs::write(runtime.join(cache), "state").unwrap();
    }
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!((code, &report["diagnostics"]), (0, &serde_json::json!([])), "{report:#}");
    assert_eq!(support::artifact_files(&dir.path().join("artifact")), before, "no cache is shipped");

    fs::create_dir_all(runtime.join(".venv/lib")).unwrap();
    fs::write(runtime.join(".venv/lib/site.py"), "").unwrap();
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(
        report["diagnostics"][0]["message"],
        "payload `runtime` would not arrive whole: `dist/runtime/.venv` (a folder agent-bundle never reads) would \
         be left out"
    );
}

/// A cache put in the project (`--cache-dir .cache`, a CI job's habit) is tagged
/// (`CACHEDIR.TAG`), so it is no input: the next build is the stamp's no-op, not a build
/// reading the whole cache it just wrote.
#[test]
fn a_cache_inside_the_project_is_no_input() {
    let dir = support::example("policy");
    let args = ["--cache-dir", ".cache"];
    assert_eq!(build_json(dir.path(), &args).0, 0);
    // Past the racy window of that build's own writes.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let no_op = (0..2).map(|_| build_json(dir.path(), &args).1).find(|report| report["upToDateBy"] == "stamp");
    assert!(no_op.is_some(), "a no-op answered by the stamp");
    let stamp: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join(".agent-bundle/stamp.json")).unwrap()).unwrap();
    let inputs = stamp["inputs"].as_array().unwrap();
    assert!(!inputs.is_empty() && inputs.iter().all(|row| !row[0].as_str().unwrap().starts_with(".cache/")));
    // (Only its state and its tag's are recorded: the tag going would make it inputs.)
    let states: Vec<&str> =
        stamp["input_dirs"].as_array().unwrap().iter().map(|row| row[0].as_str().unwrap()).collect();
    assert!(states.contains(&".cache") && states.contains(&".cache/CACHEDIR.TAG"), "{states:?}");
}

/// What the walk passes over outside every payload (a nested `node_modules`, a link, beside
/// the payload `dist/runtime`) costs no shortcut: a no-op is the stamp's, a touched checkout
/// the cache's, a fresh checkout is restored.
#[test]
fn what_no_payload_holds_costs_no_shortcut() {
    let (dir, cache) = (support::example("prebuilt-plugin"), tempfile::tempdir().unwrap());
    let other = dir.path().join("dist/other");
    fs::create_dir_all(other.join("node_modules/x")).unwrap();
    fs::write(other.join("node_modules/x/i.js"), "").unwrap();
    let link = |root: &std::path::Path| {
        std::os::unix::fs::symlink("../runtime/package.json", root.join("dist/other/link.json"))
    };
    link(dir.path()).unwrap();
    let args = ["--cache-dir", cache.path().to_str().unwrap()];
    assert_eq!(build_json(dir.path(), &args).0, 0);
    let checkout = tempfile::tempdir().unwrap();
    support::copy_tree(dir.path(), checkout.path());
    // (The copy took the link's target for a file.)
    fs::remove_file(checkout.path().join("dist/other/link.json")).unwrap();
    link(checkout.path()).unwrap();
    // Past the racy window of the copy and of that build.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    // (The first may find the root's time inside the racy window of the first build's own
    // writes, and record the stamp's folders again.)
    let no_op = (0..2).map(|_| build_json(dir.path(), &args).1).find(|report| report["upToDateBy"] == "stamp");
    assert!(no_op.is_some(), "a no-op answered by the stamp");
    let package = dir.path().join("dist/runtime/package.json");
    fs::write(&package, fs::read(&package).unwrap()).unwrap();
    let (_, touched) = build_json(dir.path(), &args);
    assert_eq!(touched["upToDateBy"], "cache", "{touched:#}");
    let (_, fresh) = build_json(checkout.path(), &args);
    assert_eq!(fresh["restoredFromCache"], true, "{fresh:#}");
}

#[test]
fn policy_builds_for_every_host() {
    let (dir, _) = support::built("policy");
    insta::assert_snapshot!(documents(&dir.path().join("artifact")));
}

#[test]
fn routes_builds_for_every_host_with_the_shared_runtime_in_each_mcp_document() {
    let (dir, _) = support::built("routes");
    insta::assert_snapshot!(documents(&dir.path().join("artifact")));
}

#[test]
fn the_manifest_lists_every_file_with_its_hash_and_the_hook_index() {
    let (dir, _) = support::built("policy");
    let artifact = dir.path().join("artifact");
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(artifact.join("agent-bundle.manifest.json")).unwrap()).unwrap();
    let files = artifact_files(&artifact);
    let listed = manifest["files"].as_array().unwrap();
    assert_eq!(listed.len(), files.len() - 1, "every file but the manifest itself");
    for row in listed {
        let bytes = &files[row["path"].as_str().unwrap()];
        assert_eq!(row["blake3"].as_str().unwrap(), blake3::hash(bytes).to_hex().as_str());
    }
    let hooks = manifest["hooks"].as_array().unwrap();
    assert_eq!(hooks.len(), 6 * 3, "six hooks on three hosts");
    let inputs: Vec<_> = manifest["inputs"].as_array().unwrap().iter().map(|i| i["path"].as_str().unwrap()).collect();
    assert!(inputs.contains(&"agent-bundle.config.ts") && inputs.contains(&"src/hooks/lib/rules.ts"), "{inputs:?}");
}

/// Each copy compiled from nothing (no cache, whose restored artifact would hide a path
/// written into one): no absolute path, time or machine reaches the output.
#[test]
fn a_copy_of_the_project_elsewhere_builds_byte_identical_output() {
    let compiled = || {
        let dir = support::example("policy");
        let (code, report) = build_json(dir.path(), &["--no-cache"]);
        assert_eq!(code, 0, "{report:#}");
        assert_eq!(
            (&report["restoredFromCache"], &report["work"]["bundled"]),
            (&false.into(), &6.into()),
            "{report:#}"
        );
        dir
    };
    let (first, second) = (compiled(), compiled());
    assert_ne!(first.path(), second.path());
    assert_eq!(artifact_files(&first.path().join("artifact")), artifact_files(&second.path().join("artifact")));
}

#[test]
fn an_unchanged_rebuild_rewrites_nothing() {
    let (dir, _) = support::built("policy");
    let artifact = dir.path().join("artifact");
    let before: Vec<_> =
        artifact_files(&artifact).keys().map(|p| (p.clone(), fs::metadata(artifact.join(p)).unwrap())).collect();
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 0);
    assert_eq!(report["published"]["written"], serde_json::json!([]));
    for (path, metadata) in before {
        let now = fs::metadata(artifact.join(&path)).unwrap();
        assert_eq!((now.ino(), now.mtime_nsec()), (metadata.ino(), metadata.mtime_nsec()), "{path} was rewritten");
    }
}

/// Entries no publish makes (a link, an empty folder hosts would scan) are not the artifact
/// a build publishes: the next build removes them, whichever check answers it.
#[test]
fn entries_added_to_the_artifact_are_removed_by_the_next_build() {
    let (dir, _) = support::built("policy");
    let artifact = dir.path().join("artifact");
    std::os::unix::fs::symlink("/etc/passwd", artifact.join("hooks/stray.mjs")).unwrap();
    fs::create_dir(artifact.join("skills")).unwrap();
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 0);
    assert_eq!(report["published"]["removed"], serde_json::json!(["hooks/stray.mjs", "skills/"]), "{report:#}");
    assert!(fs::symlink_metadata(artifact.join("hooks/stray.mjs")).is_err() && !artifact.join("skills").exists());

    // Without the stamp, the cache's manifest check does not pass such an artifact either.
    fs::create_dir(artifact.join("skills")).unwrap();
    fs::remove_dir_all(dir.path().join(".agent-bundle")).unwrap();
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 0);
    assert_eq!(report["published"]["removed"], serde_json::json!(["skills/"]), "{report:#}");
}

/// `--no-cache` trusts nothing a previous build left: its stamp does not answer, and an
/// artifact file edited in place is written again.
#[test]
fn a_build_without_cache_ignores_the_stamp() {
    let (dir, _) = support::built("policy");
    let wrapper = artifact_files(&dir.path().join("artifact")).into_keys().find(|p| p.ends_with(".mjs")).unwrap();
    let path = dir.path().join("artifact").join(&wrapper);
    let original = fs::read(&path).unwrap();
    let mut edited = original.clone();
    edited[0] ^= 1;
    fs::write(&path, &edited).unwrap();
    // Past the inputs' racy window, so that the next build's stamp answers the one after.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    // A build trusts the artifact's recorded states (an edit in place is what `validate` is for).
    assert!(build_json(dir.path(), &[]).1["upToDateBy"].is_string());
    assert_eq!(fs::read(&path).unwrap(), edited);
    let (code, report) = build_json(dir.path(), &["--no-cache"]);
    assert_eq!(code, 0);
    assert!(report["upToDateBy"].is_null(), "{report:#}");
    assert_eq!(report["published"]["written"], serde_json::json!([wrapper]));
    assert_eq!(fs::read(&path).unwrap(), original);
}

#[test]
fn a_root_reached_through_a_symbolic_link_is_built_as_the_directory_itself() {
    let dir = support::example("policy");
    let parent = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(dir.path(), parent.path().join("link")).unwrap();
    let (code, report) = build_json(parent.path(), &["--root", "link"]);
    assert_eq!(code, 0);
    let real = dir.path().canonicalize().unwrap();
    assert_eq!(report["out"], real.join("artifact").display().to_string());
    assert!(real.join(".agent-bundle/stamp.json").is_file());
}

#[test]
fn editing_one_handler_rewrites_only_its_wrappers() {
    let (dir, _) = support::built("policy");
    let path = dir.path().join("src/hooks/stop.ts");
    let text = fs::read_to_string(&path).unwrap().replace("summarize what you changed", "list what you changed");
    fs::write(&path, text).unwrap();
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 0);
    let mut written: Vec<_> =
        report["published"]["written"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_owned()).collect();
    written.retain(|p| p != "agent-bundle.manifest.json");
    written.sort();
    let hook = report["hooks"].as_array().unwrap().iter().find(|h| h["event"] == "stop").unwrap()["name"]
        .as_str()
        .unwrap()
        .to_owned();
    let expected: Vec<_> = ["claude", "codex", "cursor"].iter().map(|h| format!("hooks/{hook}.{h}.mjs")).collect();
    assert_eq!(written, expected);
}

#[test]
fn a_failed_build_leaves_the_previous_artifact_as_it_was() {
    let (dir, _) = support::built("policy");
    let artifact = dir.path().join("artifact");
    let before = artifact_files(&artifact);
    fs::write(dir.path().join("src/hooks/stop.ts"), "export default (event => {").unwrap();
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 1);
    assert_eq!(report["ok"], false);
    assert_eq!(report["diagnostics"][0]["code"], "AB4836", "{report:#}");
    assert_eq!(artifact_files(&artifact), before);
}

#[test]
fn target_on_the_command_line_replaces_the_config_targets() {
    let dir = support::example("policy");
    let (code, report) = build_json(dir.path(), &["--target", "cursor"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["targets"], serde_json::json!(["cursor"]));
    let files = artifact_files(&dir.path().join("artifact"));
    assert!(files.contains_key(".cursor-plugin/hooks.json"));
    assert!(!files.contains_key(".claude-plugin/plugin.json") && !files.contains_key("plugin.json"));
}

#[test]
fn a_non_artifact_output_directory_is_never_replaced() {
    let dir = support::example("hooks-and-scripts");
    fs::create_dir(dir.path().join("out")).unwrap();
    fs::write(dir.path().join("out/notes.txt"), "mine").unwrap();
    // Named by --out: a wrong invocation (exit 2), refused before the build.
    let output = support::run(dir.path(), &["build", "--out", "out"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no agent-bundle artifact"));
    assert_eq!(fs::read_to_string(dir.path().join("out/notes.txt")).unwrap(), "mine");
    // The default `artifact/` holding other files: the build cannot publish (exit 1).
    fs::rename(dir.path().join("out"), dir.path().join("artifact")).unwrap();
    let output = support::run(dir.path(), &["build"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no agent-bundle artifact"));
    assert_eq!(fs::read_to_string(dir.path().join("artifact/notes.txt")).unwrap(), "mine");
}

/// A build that compiles but cannot publish (its artifact's folder would be below a file)
/// fails, and still says what it compiled: its warnings, in text, in `--json`, and for a
/// workspace's project.
#[test]
fn a_build_that_cannot_publish_still_reports_its_warnings() {
    let dir = support::project(&[
        (
            "p/agent-bundle.config.ts",
            "export default { plugin: { name: 'p' }, targets: ['claude'], \
             hooks: { beforeTool: { handler: './h.ts', tools: ['claude:Frobnicate'] } } };\n",
        ),
        ("p/h.ts", "export default () => {};\n"),
        ("p/notes", "not a folder"),
    ]);
    let project = dir.path().join("p");
    let cache = dir.path().join("cache");
    let cache = cache.to_str().unwrap();
    // Compiled, …
    let text = support::run(&project, &["build", "--cache-dir", cache, "--out", "notes/artifact"]);
    let stderr = String::from_utf8_lossy(&text.stderr);
    assert_eq!(text.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("warning[AB4207]") && stderr.contains("error: cannot publish "), "{stderr}");

    // … or restored from the cache, which a build that published recorded.
    assert_eq!(support::run(&project, &["build", "--cache-dir", cache, "--out", "good"]).status.code(), Some(0));
    let (code, report) = build_json(&project, &["--cache-dir", cache, "--out", "notes/artifact"]);
    assert_eq!((code, &report["ok"]), (1, &false.into()), "{report:#}");
    assert!(report["error"].as_str().unwrap().starts_with("cannot publish "), "{report:#}");
    assert_eq!(report["diagnostics"][0]["code"], "AB4207", "{report:#}");

    fs::write(project.join("artifact"), "not a folder").unwrap();
    let workspace = support::run(dir.path(), &["build", "--workspace", "--json", "--cache-dir", cache]);
    let report: serde_json::Value = serde_json::from_slice(&workspace.stdout).unwrap();
    assert_eq!(workspace.status.code(), Some(1), "{report:#}");
    assert_eq!(report["projects"][0]["diagnostics"][0]["code"], "AB4207", "{report:#}");
}

/// Codex 0.171.0 loads a valid Agent Plugins `plugin.json` at the plugin root instead of
/// `.codex-plugin/plugin.json`, and then runs none of the plugin's hooks (found by the
/// host-smoke suite). Beside Codex or Cursor, the portable package gets its own root.
#[test]
fn r3_no_agent_plugins_manifest_shares_the_root_with_codex() {
    let (dir, _) = support::built("hooks-and-scripts");
    let artifact = dir.path().join("artifact");
    assert!(!artifact.join("plugin.json").exists(), "a root plugin.json would disable every Codex hook");
    let portable: serde_json::Value =
        serde_json::from_slice(&fs::read(artifact.join("portable/plugin.json")).unwrap()).unwrap();
    assert_eq!(portable["$schema"], "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json");
    // Without Codex or Cursor the portable manifest stays at the root.
    let (guarded, _) = support::built("guarded");
    assert!(guarded.path().join("artifact/plugin.json").is_file());
}

/// A restrictive umask filters the modes files are created with; published files still get
/// exactly 0755 (executable payload) or 0644.
#[test]
fn published_modes_do_not_depend_on_the_umask() {
    let dir = support::example("prebuilt-plugin");
    let binary = env!("CARGO_BIN_EXE_agent-bundle");
    let status = std::process::Command::new("sh")
        .args(["-c", &format!("umask 077 && exec '{binary}' build --no-cache")])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let mode = |path: &str| fs::metadata(dir.path().join("artifact").join(path)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode("runtime/bin/format.sh"), 0o755);
    assert_eq!(mode("runtime/package.json"), 0o644);
}

/// Builds of one project publishing different artifacts at once (a watch session and a
/// build by hand, say): every build succeeds, and what is left is exactly one of them.
#[test]
fn concurrent_builds_of_one_project_each_publish_a_whole_artifact() {
    let dir = support::example("policy");
    let targets = ["claude", "codex", "cursor", "portable"];
    let expected: Vec<_> = targets
        .iter()
        .map(|target| {
            let out = dir.path().join(format!("expected-{target}"));
            let (code, report) =
                build_json(dir.path(), &["--no-cache", "--target", target, "--out", out.to_str().unwrap()]);
            assert_eq!(code, 0, "{report:#}");
            artifact_files(&out)
        })
        .collect();
    std::thread::scope(|scope| {
        for target in targets {
            let root = dir.path();
            scope.spawn(move || {
                for _ in 0..6 {
                    let output = support::run(root, &["build", "--no-cache", "--target", target]);
                    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
                }
            });
        }
    });
    let published = artifact_files(&dir.path().join("artifact"));
    assert!(expected.contains(&published), "the artifact is one build's, whole: {:?}", published.keys());
    let leftovers: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains("agent-bundle-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A stdout that cannot be written (a full disk) is an error with exit code 1, not a panic;
/// the build's work is done all the same.
#[test]
fn a_stdout_that_fails_is_an_error_not_a_panic() {
    let dir = support::example("policy");
    let full = fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let output = support::bin().args(["build", "--json"]).current_dir(dir.path()).stdout(full).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot write to standard output") && !stderr.contains("panicked"), "{stderr}");
    assert!(dir.path().join("artifact/agent-bundle.manifest.json").is_file());
    // `--help` and `--version` print on stdout too.
    for flag in ["--help", "--version"] {
        let full = fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let output = support::bin().arg(flag).stdout(full).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{flag}: {stderr}");
        assert!(stderr.contains("cannot write to standard output"), "{flag}: {stderr}");
    }
}

/// With `--json`, a command that stops before its work still prints a document: a wrong
/// invocation (exit 2) and work that cannot be done (exit 1).
#[test]
fn json_failures_are_json_documents_too() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let not_an_artifact_file = dir.path().join("file");
    std::fs::write(&not_an_artifact_file, "").unwrap();
    let not_an_artifact = dir.path().to_str().unwrap();
    let cases: [(Vec<&str>, i32, &str); 5] = [
        (vec!["build", "--json", "--root", missing.to_str().unwrap()], 2, "does not exist"),
        (vec!["validate", "--json"], 2, "no artifact here: ./artifact (--artifact's default) does not exist"),
        (vec!["hooks", "list", "--json", "--artifact", missing.to_str().unwrap()], 2, "does not exist"),
        (vec!["validate", "--json", "--artifact", not_an_artifact_file.to_str().unwrap()], 2, "is not a directory"),
        (vec!["hooks", "list", "--json", "--artifact", not_an_artifact], 1, "cannot read"),
    ];
    for (args, code, message) in cases {
        let output = support::run(dir.path(), &args);
        assert_eq!(output.status.code(), Some(code), "{args:?}");
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(report["ok"], false);
        assert!(report["error"].as_str().unwrap().contains(message), "{report:#}");
    }
}

/// An artifact folder that is a symbolic link (to where a host loads plugins from, say) is
/// published where it points; the link stays, and an unchanged rebuild is up to date.
#[test]
fn an_artifact_that_is_a_link_stays_a_link_and_is_up_to_date_when_unchanged() {
    let dir = support::example("policy");
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("plugins/policy");
    std::os::unix::fs::symlink(&target, dir.path().join("artifact")).unwrap();
    let (code, first) = build_json(dir.path(), &[]);
    assert_eq!(code, 0, "{first:#}");
    assert!(fs::symlink_metadata(dir.path().join("artifact")).unwrap().file_type().is_symlink());
    assert!(target.join("agent-bundle.manifest.json").is_file());
    let (_, second) = build_json(dir.path(), &[]);
    assert_eq!(second["upToDate"], true, "{second:#}");
    let (_, third) = build_json(dir.path(), &[]);
    assert_eq!(third["upToDate"], true, "{third:#}");
}

/// `--config` is read relative to the root (as `--help` says), or relative to the current
/// directory when that lands in the root (a path the shell completed), through `..` too;
/// never outside it.
#[test]
fn config_paths_are_relative_to_the_root_and_stay_inside_it() {
    let parent = tempfile::tempdir().unwrap();
    let project = parent.path().join("plugin");
    support::copy_tree(&support::repo().join("examples/policy"), &project);
    fs::rename(project.join("agent-bundle.config.ts"), project.join("other.config.ts")).unwrap();
    fs::write(parent.path().join("outside.config.ts"), "export default {};\n").unwrap();
    // (`..` inside the path, or the root spelled through one, that still lands in the root.)
    for config in ["other.config.ts", "plugin/other.config.ts", "src/../other.config.ts", "../plugin/other.config.ts"] {
        let (code, report) = build_json(parent.path(), &["--root", "plugin", "--config", config]);
        assert_eq!((code, &report["plugin"]["name"]), (0, &serde_json::json!("policy")), "{config}: {report:#}");
    }
    let (code, report) = build_json(&project.join("src"), &["--root", "..", "--config", "other.config.ts"]);
    assert_eq!((code, &report["plugin"]["name"]), (0, &serde_json::json!("policy")), "{report:#}");
    let output = support::run(parent.path(), &["build", "--root", "plugin", "--config", "../outside.config.ts"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("must be inside the project root"));
    // A file at neither place is no config in the project (AB4001), not a path outside it.
    for config in ["nope.ts", "src"] {
        let (code, report) = build_json(parent.path(), &["--root", "plugin", "--config", config]);
        assert_eq!((code, &report["diagnostics"][0]["code"]), (1, &serde_json::json!("AB4001")), "{report:#}");
    }
}

/// An artifact folder that publishing would lose the project to, that the build could not
/// see its inputs through, or inside another artifact (which it would break), is refused
/// before anything is read or written; so is a cache inside the artifact.
#[test]
fn an_out_folder_that_holds_the_project_or_its_files_is_refused() {
    let dir = support::example("guarded");
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let cases = [
        ("src", "holds files but no agent-bundle artifact"),
        (".", "is the project, or a folder holding it, which a publish would replace whole"),
        ("..", "is the project, or a folder holding it, which a publish would replace whole"),
        (".agent-bundle", "inside the project's state folder"),
        ("agent-bundle.config.ts", "is not a directory"),
        ("artifact/nested", "is inside another agent-bundle artifact"),
    ];
    for (out, reason) in cases {
        let output = support::run(dir.path(), &["build", "--out", out]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "--out {out}: {stderr}");
        assert!(stderr.contains(reason), "--out {out}: {stderr}");
    }
    assert!(dir.path().join("src/hooks").is_dir() && dir.path().join(".agent-bundle/stamp.json").is_file());
    // The config named for the project's root: its folder is.
    let output = support::run(dir.path(), &["build", "--root", "agent-bundle.config.ts"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not a directory: name the folder of the config, ."), "{stderr}");
    // Nor a cache in the artifact, which every publish replaces.
    let output = support::run(dir.path(), &["build", "--cache-dir", "artifact/cache"]);
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is inside the artifact folder"));
    assert!(!dir.path().join("artifact/nested").exists() && !dir.path().join("artifact/cache").exists());
    // A new folder, or an artifact already there, is fine.
    assert_eq!(support::run(dir.path(), &["build", "--out", "elsewhere"]).status.code(), Some(0));
    assert_eq!(support::run(dir.path(), &["build", "--out", "elsewhere"]).status.code(), Some(0));
    // A file of the manifest's name that names no agent-bundle build makes no artifact of the
    // folder of yours it is in.
    std::fs::create_dir(dir.path().join("notes")).unwrap();
    std::fs::write(dir.path().join("notes/thesis.txt"), "precious").unwrap();
    std::fs::write(dir.path().join("notes/agent-bundle.manifest.json"), "{}").unwrap();
    let output = support::run(dir.path(), &["build", "--out", "notes"]);
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("its agent-bundle.manifest.json names no agent-bundle build")
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("notes/thesis.txt")).unwrap(), "precious");
}

/// Cursor's MCP entries carry no `type` (it infers stdio from `command`), as in the original;
/// Claude Code's and Codex's name it. The server is named after the plugin: Codex starts only
/// one of two installed plugins' servers of one name.
#[test]
fn only_hosts_whose_mcp_entries_name_a_transport_get_one() {
    let route = "import { Agent } from '@agent-bundle/runtime';\n\
        export const config = { runtime: 'shared', fallback: 'standalone' };\n\
        export default async function Route() { return <Agent.Context>hello</Agent.Context>; }\n";
    let config = "export default { plugin: { name: 'shared' }, targets: ['claude', 'codex', 'cursor'] };\n";
    let dir = support::project(&[("agent-bundle.config.ts", config), ("src/events/prompt/submit.tsx", route)]);
    assert_eq!(support::run(dir.path(), &["build"]).status.code(), Some(0));
    let files = artifact_files(&dir.path().join("artifact"));
    let server = |path: &str| -> serde_json::Value {
        let document: serde_json::Value = serde_json::from_slice(&files[path]).unwrap();
        let servers = document["mcpServers"].as_object().unwrap();
        assert_eq!(servers.keys().collect::<Vec<_>>(), ["shared-event-runtime"], "{path}");
        servers["shared-event-runtime"].clone()
    };
    assert_eq!(server(".cursor-plugin/mcp.json")["command"], "node");
    assert_eq!(server(".cursor-plugin/mcp.json").get("type"), None);
    assert_eq!(server(".mcp.json")["type"], "stdio");
    assert_eq!(server(".codex-plugin/mcp.json")["type"], "stdio");
}

/// `agent-bundle <args>` in `dir` without root's power over permissions (see
/// [`unprivileged_command`]).
pub(crate) fn unprivileged(dir: &std::path::Path, trees: &[&std::path::Path], args: &[&str]) -> std::process::Output {
    unprivileged_command(trees).args(args).current_dir(dir).output().unwrap()
}

/// `agent-bundle` without root's power over permissions: as `nobody` when the tests run as
/// root (then `trees` are handed to it first), else as the user.
pub(crate) fn unprivileged_command(trees: &[&std::path::Path]) -> std::process::Command {
    let binary = env!("CARGO_BIN_EXE_agent-bundle");
    // SAFETY: geteuid has no preconditions.
    let mut command = if unsafe { libc::geteuid() } == 0 {
        for entry in trees.iter().flat_map(walkdir::WalkDir::new).map(Result::unwrap) {
            let path = std::ffi::CString::new(entry.path().as_os_str().as_encoded_bytes()).unwrap();
            // SAFETY: a NUL-terminated path, read during the call only.
            assert_eq!(unsafe { libc::lchown(path.as_ptr(), 65534, 65534) }, 0);
        }
        let mut command = std::process::Command::new("setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups", binary]);
        command
    } else {
        std::process::Command::new(binary)
    };
    command.env_remove("AGENT_BUNDLE_REMOTE_CACHE");
    command
}

/// An artifact made read-only by hand is still replaced whole (its folder's parent allows
/// it): the build says so, and cleans the previous one up, so the next build is clean too.
#[test]
fn a_read_only_artifact_is_replaced_whole_and_leaves_nothing_behind() {
    let (dir, cache) = (support::example("policy"), tempfile::tempdir().unwrap());
    let args = ["build", "--cache-dir", cache.path().to_str().unwrap()];
    let build = || unprivileged(dir.path(), &[dir.path(), cache.path()], &args);
    assert!(build().status.success());
    let artifact = dir.path().join("artifact");
    fs::set_permissions(&artifact, fs::Permissions::from_mode(0o555)).unwrap();
    let config = dir.path().join("agent-bundle.config.ts");
    fs::write(&config, fs::read_to_string(&config).unwrap().replace("name: 'policy'", "name: 'renamed'")).unwrap();
    for _ in 0..2 {
        let output = build();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    }
    assert!(fs::read_to_string(artifact.join(".claude-plugin/plugin.json")).unwrap().contains("\"renamed\""));
    let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|entry| entry.unwrap().file_name()).collect();
    assert!(!names.iter().any(|name| name.to_string_lossy().contains(".agent-bundle-")), "{names:?}");
}

/// A file the build cannot read is no reason to fail unless the build needs it; when it
/// does, the error names it with its own code and the last artifact stays as it was.
#[test]
fn an_unreadable_file_fails_the_build_only_where_it_is_needed() {
    let (dir, cache) = (support::example("policy"), tempfile::tempdir().unwrap());
    let args = ["build", "--json", "--cache-dir", cache.path().to_str().unwrap()];
    let build = || unprivileged(dir.path(), &[dir.path(), cache.path()], &args);
    // (Mode 000: neither its owner nor anyone but root may read it.)
    let unreadable = |path: &std::path::Path| fs::set_permissions(path, fs::Permissions::from_mode(0o000)).unwrap();
    let secret = dir.path().join(".env");
    fs::write(&secret, "TOKEN=x\n").unwrap();
    unreadable(&secret);
    let output = build();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stdout));
    let artifact = dir.path().join("artifact");
    let before = support::artifact_files(&artifact);

    unreadable(&dir.path().join("src/hooks/lib/rules.ts"));
    let output = build();
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let diagnostic = &report["diagnostics"][0];
    assert_eq!(diagnostic["code"], "AB4008", "{report}");
    assert_eq!(diagnostic["file"], "src/hooks/lib/rules.ts", "{report}");
    assert!(diagnostic["message"].as_str().unwrap().contains("permission denied"), "{report}");
    assert!(diagnostic["help"].as_str().unwrap().contains("make it readable"), "{report}");
    assert_eq!(support::artifact_files(&artifact), before);
}

/// An artifact folder the user may not write says what to do, and nothing is published.
#[test]
fn a_folder_the_build_may_not_publish_to_says_what_to_do() {
    let dir = support::example("policy");
    let read_only = dir.path().join("ro");
    fs::create_dir(&read_only).unwrap();
    fs::set_permissions(&read_only, fs::Permissions::from_mode(0o555)).unwrap();
    let output = unprivileged(dir.path(), &[dir.path()], &["build", "--no-cache", "--out", "ro/artifact"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Permission denied"), "{stderr}");
    assert!(stderr.contains("(make the folder that holds it writable for this user)"), "{stderr}");
    assert_eq!(fs::read_dir(&read_only).unwrap().count(), 0, "nothing was published");
}

/// The output of `command`, which must end within `seconds` (else it is killed, and the
/// test fails rather than hangs).
fn within_seconds(seconds: u64, command: &mut std::process::Command) -> std::process::Output {
    let mut child = command.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("{command:?} did not end within {seconds} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A folder with no config fails at once, before anything in it is walked (a build started
/// in a home folder by mistake would read all of it first): AB4001 alone, no word of a
/// folder below that it could not list.
#[test]
fn a_folder_with_no_config_fails_before_it_is_walked() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    fs::create_dir(&data).unwrap();
    fs::set_permissions(&data, fs::Permissions::from_mode(0o000)).unwrap();
    let root = dir.path().canonicalize().unwrap();
    let message = format!("no agent-bundle config found in {}", root.display());
    // An inspection and a watch session too (one would watch every folder below).
    let commands: [&[&str]; 3] =
        [&["build", "--json", "--no-cache"], &["inspect", "--hooks", "--json"], &["watch", "--json", "--no-cache"]];
    for (at, args) in commands.into_iter().enumerate() {
        let trees: &[&std::path::Path] = if at == 0 { &[dir.path()] } else { &[] };
        let output = within_seconds(10, unprivileged_command(trees).args(args).current_dir(dir.path()));
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let stdout = String::from_utf8_lossy(&output.stdout);
        if args[0] == "watch" {
            assert_eq!(stdout.lines().count(), 1, "one line, as a session reports a build: {stdout}");
        }
        let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let codes: Vec<&str> =
            report["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap()).collect();
        assert_eq!(codes, ["AB4001"], "{args:?}: {report:#}");
        assert_eq!(report["diagnostics"][0]["message"], message.as_str());
        // The same shape whichever command failed.
        assert_eq!(
            (&report["plugin"], &report["targets"]),
            (&serde_json::Value::Null, &serde_json::Value::Null),
            "{args:?}: {report:#}"
        );
    }
    // Said to a person, watch says it starts no session.
    let output = within_seconds(10, unprivileged_command(&[]).args(["watch", "--no-cache"]).current_dir(dir.path()));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.ends_with("Not watching: ./ holds no project\n"), "{stderr}");
    assert!(!stderr.contains("hold projects"), "a folder it may not list holds none it knows of: {stderr}");

    // A config's name that is a link is said to be one.
    std::os::unix::fs::symlink("elsewhere.ts", dir.path().join("agent-bundle.config.ts")).unwrap();
    let (_, report) = build_json(dir.path(), &["--no-cache"]);
    let link = format!(
        "`agent-bundle.config.ts` in {} is a symbolic link, which is never read as the config",
        dir.path().canonicalize().unwrap().display()
    );
    assert_eq!(report["diagnostics"][0]["message"], link.as_str(), "{report:#}");
    fs::remove_file(dir.path().join("agent-bundle.config.ts")).unwrap();

    // In a folder of a project, where its root is is said.
    fs::write(dir.path().join("agent-bundle.config.ts"), "export default {};\n").unwrap();
    fs::create_dir_all(dir.path().join("src/hooks")).unwrap();
    let (code, report) = build_json(&dir.path().join("src/hooks"), &["--no-cache"]);
    assert_eq!(code, 1);
    let help = format!("{} holds one: build there, or pass --root {}", root.display(), root.display());
    assert_eq!(report["diagnostics"][0]["help"], help.as_str(), "{report:#}");
}

/// A folder the build may not list (a container's data) holds no inputs: the build goes on
/// and says so (AB4008, a warning), a no-op too; once it is readable, its files are inputs
/// again, which the stamp sees.
#[test]
fn a_folder_the_build_cannot_list_is_left_out_with_a_warning() {
    let (dir, cache) = (support::example("policy"), tempfile::tempdir().unwrap());
    let args = ["build", "--json", "--cache-dir", cache.path().to_str().unwrap()];
    // (The tree is handed to the unprivileged user once: handing it over changes every
    // file's change time, which no stamp would trust.)
    let build = |trees: &[&std::path::Path]| {
        let output = unprivileged_command(trees).args(args).current_dir(dir.path()).output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stdout));
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()
    };
    let warned = |report: &serde_json::Value| {
        let diagnostics = report["diagnostics"].as_array().unwrap();
        diagnostics.len() == 1
            && diagnostics[0]["code"] == "AB4008"
            && diagnostics[0]["severity"] == "warning"
            && diagnostics[0]["message"].as_str().unwrap().contains("`data/`")
    };
    let data = dir.path().join("data");
    fs::create_dir(&data).unwrap();
    fs::write(data.join("dump.sql"), "-- not a plugin's\n").unwrap();
    fs::set_permissions(&data, fs::Permissions::from_mode(0o000)).unwrap();
    let first = build(&[dir.path(), cache.path()]);
    assert!(warned(&first), "{first:#}");
    let inspect = unprivileged(dir.path(), &[], &["inspect", "--hooks", "--json"]);
    assert!(inspect.status.success(), "{}", String::from_utf8_lossy(&inspect.stdout));
    let inspect: serde_json::Value = serde_json::from_slice(&inspect.stdout).unwrap();
    assert!(warned(&inspect), "inspect warns as a build does: {inspect:#}");
    // Past the racy window of the copy and of that build, a build is a no-op, and warns.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let no_op = (0..2).map(|_| build(&[])).find(|report| report["upToDateBy"] == "stamp");
    let no_op = no_op.expect("a no-op answered by the stamp");
    assert!(warned(&no_op), "{no_op:#}");

    fs::set_permissions(&data, fs::Permissions::from_mode(0o755)).unwrap();
    let readable = build(&[]);
    assert_ne!(readable["upToDateBy"], "stamp", "{readable:#}");
    assert_eq!(readable["diagnostics"], serde_json::json!([]));
}

/// A handler in a folder the build may not list is said to be in it, there or not: whether
/// it is cannot be known (the folder searchable, it can, and then one not there is missing).
#[test]
fn a_handler_in_a_folder_the_build_cannot_list_is_said_to_be_there() {
    let dir = support::example("policy");
    let config = fs::read_to_string(dir.path().join("agent-bundle.config.ts")).unwrap();
    let config = config.replace("./src/hooks/session-start.ts", "./src/locked/start.ts");
    assert!(config.contains("./src/locked/start.ts"), "the example names its session-start handler");
    fs::write(dir.path().join("agent-bundle.config.ts"), config).unwrap();
    let locked = dir.path().join("src/locked");
    fs::create_dir(&locked).unwrap();
    fs::write(locked.join("start.ts"), "export default () => undefined;\n").unwrap();
    let modules = dir.path().join("node_modules");
    fs::create_dir_all(modules.join("x")).unwrap();
    fs::write(modules.join("x/start.ts"), "export default () => undefined;\n").unwrap();
    let said_of = |folder: &std::path::Path, mode: u32, trees: &[&std::path::Path]| {
        fs::set_permissions(folder, fs::Permissions::from_mode(mode)).unwrap();
        let output = unprivileged(dir.path(), trees, &["build", "--json", "--no-cache"]);
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let error = report["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "AB4217").cloned();
        let error = error.unwrap_or_else(|| panic!("{report:#}"));
        (error["message"].as_str().unwrap().to_owned(), error["help"].as_str().unwrap().to_owned())
    };
    let said = |mode: u32, trees: &[&std::path::Path]| said_of(&locked, mode, trees).0;
    let unlisted = "handler `src/locked/start.ts` is in `src/locked`, a folder this process may not list, which the \
                    build never reads";
    assert_eq!(said(0o000, &[dir.path()]), unlisted);
    let (message, help) = said_of(&locked, 0o100, &[]);
    assert_eq!(
        (message.as_str(), help.as_str()),
        (unlisted, "make it readable for the user running agent-bundle, or move the module out of it")
    );
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o700)).unwrap();
    fs::remove_file(locked.join("start.ts")).unwrap();
    assert_eq!(said(0o000, &[]), unlisted);
    assert_eq!(said(0o100, &[]), "handler file `src/locked/start.ts` does not exist");
    // In a folder never read, that it may not list either: never read comes first (listing
    // it would not help).
    let config = fs::read_to_string(dir.path().join("agent-bundle.config.ts")).unwrap();
    let config = config.replace("./src/locked/start.ts", "./node_modules/x/start.ts");
    fs::write(dir.path().join("agent-bundle.config.ts"), config).unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o700)).unwrap();
    let (message, _) = said_of(&modules, 0o000, &[]);
    assert_eq!(message, "handler `node_modules/x/start.ts` is in a folder the build never reads");
}

/// An artifact whose path is not UTF-8 builds, and says that Node cannot load it from there
/// (AB4010), an up-to-date build too; `--out` into a UTF-8 folder builds it without a word.
#[test]
fn an_artifact_path_that_is_not_utf8_is_warned_of() {
    use std::os::unix::ffi::OsStrExt;
    let (dir, cache) = (support::example("policy"), tempfile::tempdir().unwrap());
    let out = dir.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    let cache = cache.path().to_str().unwrap();
    let code_of = |report: &serde_json::Value| {
        report["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].clone()).collect::<Vec<_>>()
    };
    let build = || {
        let mut command = support::bin();
        let output = command.args(["build", "--json", "--cache-dir", cache, "--out"]).arg(&out);
        let output = output.current_dir(dir.path()).output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()
    };
    let report = build();
    assert_eq!(code_of(&report), ["AB4010"], "{report:#}");
    assert_eq!(report["diagnostics"][0]["severity"], "warning");
    assert!(out.join("agent-bundle.manifest.json").is_file());
    let again = build();
    assert_eq!((code_of(&again), &again["upToDate"]), (vec!["AB4010".into()], &true.into()), "{again:#}");
    let (code, plain) = build_json(dir.path(), &["--cache-dir", cache]);
    assert_eq!((code, code_of(&plain)), (0, vec![]), "{plain:#}");
}

/// Shared code above the root that the build may not list (mode 000, or 311: searchable,
/// not readable), or may not reach (below a folder it may not search), is a located import
/// error with the folder's warning, not a failure to read the project; once readable, it
/// builds. A folder that only might have held the module (`shared/log/` beside the
/// `shared/log.ts` an import names) is no reason to warn: that build is clean, and its next
/// build a no-op.
#[test]
fn an_outside_folder_the_build_cannot_list_is_an_import_error_with_a_warning() {
    let monorepo = tempfile::tempdir().unwrap();
    let config = "export default { plugin: { name: 'p' }, targets: ['claude'], hooks: { stop: './src/stop.ts' } };\n";
    let stop = "import { log } from '../../locked/shared/log';\nexport default () => { log('stop'); };\n";
    let (locked, shared) = (monorepo.path().join("locked"), monorepo.path().join("locked/shared"));
    fs::create_dir_all(shared.join("log")).unwrap();
    fs::write(shared.join("log.ts"), "export const log = (line: string) => line;\n").unwrap();
    let project = monorepo.path().join("p");
    fs::create_dir_all(project.join("src")).unwrap();
    fs::write(project.join("agent-bundle.config.ts"), config).unwrap();
    fs::write(project.join("src/stop.ts"), stop).unwrap();
    // (Handed to the unprivileged user by the first build.)
    let handed = [monorepo.path()];
    let mut trees: &[&std::path::Path] = &handed;
    let cache = monorepo.path().join("cache");
    let mut build = || {
        let output = unprivileged(&project, trees, &["build", "--json", "--cache-dir", cache.to_str().unwrap()]);
        trees = &[];
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        (output.status.code(), report)
    };
    let mode = |path: &std::path::Path, mode| fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    for (folder, mode_of_it, key) in [
        (&shared, 0o000, "../locked/shared"),
        (&shared, 0o311, "../locked/shared"),
        (&locked, 0o000, "../locked/shared"),
    ] {
        mode(folder, mode_of_it);
        let (code, report) = build();
        assert_eq!(code, Some(1), "{report:#}");
        let codes: Vec<_> = report["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].clone()).collect();
        assert_eq!(codes, ["AB4837", "AB4008"], "{key} at {mode_of_it:o}: {report:#}");
        assert!(report["diagnostics"][1]["message"].as_str().unwrap().contains(&format!("`{key}/`")), "{report:#}");
        mode(folder, 0o755);
    }
    mode(&shared.join("log"), 0o000);
    let (code, report) = build();
    assert_eq!((code, &report["diagnostics"]), (Some(0), &serde_json::json!([])), "{report:#}");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let no_op = (0..2).map(|_| build().1).find(|report| report["upToDateBy"] == "stamp");
    assert_eq!(no_op.expect("a no-op answered by the stamp")["diagnostics"], serde_json::json!([]));
}

/// A stamp that cannot be written (its path taken by a folder) fails nothing, is said (a
/// warning, AB4009), and leaves no temporary file beside it.
#[test]
fn a_stamp_that_cannot_be_written_is_a_warning() {
    let (dir, cache) = (support::example("policy"), tempfile::tempdir().unwrap());
    let args = ["--cache-dir", cache.path().to_str().unwrap()];
    assert_eq!(build_json(dir.path(), &args).0, 0);
    let state = dir.path().join(".agent-bundle");
    fs::remove_file(state.join("stamp.json")).unwrap();
    fs::create_dir(state.join("stamp.json")).unwrap();
    for _ in 0..2 {
        let (code, report) = build_json(dir.path(), &args);
        assert_eq!((code, &report["diagnostics"][0]["code"]), (0, &serde_json::json!("AB4009")), "{report:#}");
        let names: Vec<_> = fs::read_dir(&state).unwrap().map(|entry| entry.unwrap().file_name()).collect();
        assert!(!names.iter().any(|name| name.to_string_lossy().ends_with(".tmp")), "{names:?}");
    }
}

/// A folder in a payload that the build may not list is a loss of the payload (AB4745),
/// whether the build compiles or the cache could answer it.
#[test]
fn a_payload_folder_the_build_cannot_list_fails_it_every_time() {
    let (dir, cache) = (support::example("prebuilt-plugin"), tempfile::tempdir().unwrap());
    let args = ["build", "--json", "--cache-dir", cache.path().to_str().unwrap()];
    let mut trees: &[&std::path::Path] = &[dir.path(), cache.path()];
    let mut build = || {
        let output = unprivileged(dir.path(), std::mem::take(&mut trees), &args);
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        (output.status.code(), report["diagnostics"][0]["code"].clone())
    };
    assert_eq!(build(), (Some(0), serde_json::Value::Null));
    let secret = dir.path().join("dist/runtime/secret");
    fs::create_dir(&secret).unwrap();
    fs::write(secret.join("key"), "k").unwrap();
    fs::set_permissions(&secret, fs::Permissions::from_mode(0o000)).unwrap();
    for _ in 0..2 {
        assert_eq!(build(), (Some(1), serde_json::json!("AB4745")));
    }
}

/// What sits where the build keeps its state is never waited on nor written through: a FIFO
/// at the stamp's or the workspace memo's path (an open would wait for a writer, which no
/// signal ends), a `.agent-bundle` that is a link to elsewhere (AB4009, nothing written there).
#[test]
fn the_build_s_state_is_never_a_fifo_waited_on_or_a_link_written_through() {
    let fifo = |path: &std::path::Path| {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let name = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
    };
    // (Bounded: a build waiting on a FIFO would never end.)
    let run = |dir: &std::path::Path, args: &[&str]| {
        let mut command = std::process::Command::new("timeout");
        command.arg("20").arg(env!("CARGO_BIN_EXE_agent-bundle")).args(args).current_dir(dir);
        command.env("AGENT_BUNDLE_CACHE_DIR", dir.join("cache")).output().unwrap()
    };
    let dir = support::example("policy");
    fifo(&dir.path().join(".agent-bundle/stamp.json"));
    assert_eq!(run(dir.path(), &["build"]).status.code(), Some(0));
    let workspace = tempfile::tempdir().unwrap();
    support::copy_tree(&support::repo().join("examples/policy"), &workspace.path().join("p"));
    fifo(&workspace.path().join(".agent-bundle/workspace.json"));
    for _ in 0..2 {
        assert_eq!(run(workspace.path(), &["build", "--workspace"]).status.code(), Some(0));
    }

    // An ignore file that is a FIFO, in a project or above the projects: said, never opened.
    fifo(&workspace.path().join("p/.gitignore"));
    fifo(&workspace.path().join(".ignore"));
    let output = run(workspace.path(), &["build", "--workspace"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a regular file"));

    let (dir, elsewhere) = (support::example("policy"), tempfile::tempdir().unwrap());
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(".agent-bundle")).unwrap();
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!((code, &report["diagnostics"][0]["code"]), (0, &serde_json::json!("AB4009")), "{report:#}");
    assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 0, "nothing written through the link");
    // A stamp moved there and linked back is neither read, renewed nor cleaned through the link.
    fs::remove_file(dir.path().join(".agent-bundle")).unwrap();
    assert_eq!(build_json(dir.path(), &[]).0, 0);
    fs::remove_dir(elsewhere.path()).unwrap();
    fs::rename(dir.path().join(".agent-bundle"), elsewhere.path()).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(".agent-bundle")).unwrap();
    fs::write(elsewhere.path().join("junk.99999.tmp"), "").unwrap();
    let before = support::artifact_files(elsewhere.path());
    let stop = dir.path().join("src/hooks/stop.ts");
    fs::write(&stop, fs::read(&stop).unwrap()).unwrap();
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_ne!(report["upToDateBy"], "stamp", "a stamp behind a link is not read");
    assert_eq!(support::artifact_files(elsewhere.path()), before, "nothing written or removed there");

    let (workspace, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    support::copy_tree(&support::repo().join("examples/policy"), &workspace.path().join("p"));
    std::os::unix::fs::symlink(elsewhere.path(), workspace.path().join(".agent-bundle")).unwrap();
    for _ in 0..2 {
        assert_eq!(run(workspace.path(), &["build", "--workspace"]).status.code(), Some(0));
    }
    assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 0, "no workspace memo written through the link");
}

/// A diagnostic names its file from where the command ran, so that `file:line:col` opens
/// from the terminal (relative to it when the project is below it), with `--json` keeping the
/// project's own key.
#[test]
fn diagnostics_name_files_from_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    support::copy_tree(&support::repo().join("examples/guarded"), &dir.path().join("plugin"));
    let handler = dir.path().join("plugin/src/hooks/audit.ts");
    fs::write(&handler, "export default (;\n").unwrap();
    let output = support::run(dir.path(), &["build", "--root", "plugin"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--> plugin/src/hooks/audit.ts:1:"), "{stderr}");
    let output = support::run(&dir.path().join("plugin"), &["build"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--> src/hooks/audit.ts:1:"), "{stderr}");
    let (_, report) = build_json(&dir.path().join("plugin"), &[]);
    assert_eq!(report["diagnostics"][0]["file"], "src/hooks/audit.ts", "{report:#}");
}

/// An invalid value taken from an environment variable names the variable: clap names the
/// option, which was never typed.
#[test]
fn an_invalid_value_from_the_environment_names_its_variable() {
    let dir = support::example("guarded");
    let output = support::bin()
        .args(["build", "--json"])
        .env("AGENT_BUNDLE_CACHE_MAX_SIZE", "lots")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("note: that value is the environment variable AGENT_BUNDLE_CACHE_MAX_SIZE's"), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(report["error"].as_str().unwrap().contains("AGENT_BUNDLE_CACHE_MAX_SIZE"), "{report:#}");
    // Typed on the command line, it is the option's.
    let output = support::bin()
        .args(["build", "--cache-max-size", "lots"])
        .env("AGENT_BUNDLE_CACHE_MAX_SIZE", "lots")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&output.stderr).contains("environment variable"));
    // `--no-cache` overrides the cache's variables, a bad one too.
    let output = support::bin()
        .args(["build", "--no-cache"])
        .env("AGENT_BUNDLE_CACHE_MAX_SIZE", "lots")
        .env("AGENT_BUNDLE_REMOTE_CACHE_READ_ONLY", "maybe")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    // An argument that is not UTF-8 is read as one all the same.
    use std::os::unix::ffi::OsStrExt;
    let output = support::bin()
        .args(["build", "--target", "clade", "--root"])
        .arg(std::ffi::OsStr::from_bytes(b"/tmp/\xff"))
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("did you mean `claude`?") && !stderr.contains("panicked"), "{stderr}");
}

/// A folder tagged as a cache holds no inputs; the stamp records its state and its tag's,
/// so the tag going (or made no tag) is no no-op: its files are read and published.
#[test]
fn a_cache_tag_gone_from_a_payload_folder_is_seen_by_the_next_build() {
    let dir = support::example("prebuilt-plugin");
    let cache = dir.path().join("dist/runtime/cache");
    fs::create_dir_all(&cache).unwrap();
    fs::write(cache.join("x.txt"), "x").unwrap();
    let tag = cache.join("CACHEDIR.TAG");
    fs::write(&tag, "Signature: 8a477f597d28d172789f06886806bc55\n").unwrap();
    let published = dir.path().join("artifact/runtime/cache/x.txt");
    assert_eq!(build_json(dir.path(), &[]).0, 0);
    // Past the racy window of that build, so that the stamp answers when nothing changed.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let no_op = (0..2).map(|_| build_json(dir.path(), &[]).1).find(|report| report["upToDateBy"] == "stamp");
    assert!(no_op.is_some(), "a no-op answered by the stamp");
    assert!(!published.exists(), "a cache is no payload");
    fs::write(&tag, "not a tag any more\n").unwrap();
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!((code, &report["upToDateBy"]), (0, &serde_json::Value::Null), "{report:#}");
    assert!(published.is_file());
    fs::remove_file(&tag).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    fs::write(&tag, "Signature: 8a477f597d28d172789f06886806bc55\n").unwrap();
    let (_, report) = build_json(dir.path(), &[]);
    assert!(report["upToDateBy"].is_null(), "{report:#}");
    assert!(!published.exists(), "a cache again");
}

/// A file past the 1 GiB a file may hold (a sparse file claims any size) is never read: a
/// build that does not need it goes on, one whose payload holds it says so where it is, and
/// an artifact whose manifest is one is refused; never an abort on the allocation.
#[test]
fn a_huge_file_is_refused_where_it_is_needed_and_never_read() {
    let dir = support::example("prebuilt-plugin");
    let huge = |path: &std::path::Path| fs::File::create(path).unwrap().set_len(40 << 30).unwrap();
    huge(&dir.path().join("notes.bin"));
    let (code, report) = build_json(dir.path(), &["--no-cache"]);
    assert_eq!(code, 0, "a file no stage needs: {report:#}");
    huge(&dir.path().join("dist/runtime/model.bin"));
    let (code, report) = build_json(dir.path(), &["--no-cache"]);
    assert_eq!(code, 1, "{report:#}");
    let error = &report["diagnostics"][0];
    assert_eq!((&error["code"], &error["file"]), (&"AB4008".into(), &"dist/runtime/model.bin".into()), "{report:#}");
    assert!(error["message"].as_str().unwrap().contains("more than 1 GiB"), "{report:#}");
    assert!(error["help"].as_str().unwrap().contains("leave it out"), "{report:#}");

    huge(&dir.path().join("artifact/agent-bundle.manifest.json"));
    let output = support::run(dir.path(), &["hooks", "list", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(report["error"].as_str().unwrap().contains("more than 1 GiB"), "{report:#}");
}
