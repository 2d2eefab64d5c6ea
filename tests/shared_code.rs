//! Code shared across a monorepo's plugins (`examples/monorepo`): relative imports above a
//! project's root are followed, the folders they name become inputs, the wrappers run, an
//! edit there rebuilds every plugin that imports it (in watch mode too), and a fresh checkout
//! or a second machine on the same remote cache is restored from the cache alone.

use std::fs;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::support::{self, artifact_files, copy_tree, repo};

/// A copy of `examples/monorepo` (without anything built in it) in a new directory.
fn monorepo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for part in ["shared", "plugins/audit/src", "plugins/guard/src"] {
        copy_tree(&repo().join("examples/monorepo").join(part), &dir.path().join(part));
    }
    for plugin in ["audit", "guard"] {
        let config = format!("plugins/{plugin}/agent-bundle.config.ts");
        fs::copy(repo().join("examples/monorepo").join(&config), dir.path().join(&config)).unwrap();
    }
    dir
}

/// `build --workspace --json` of `root` over `cache`: each project's report, by project.
fn build_workspace(root: &Path, cache: &Path) -> Vec<Value> {
    let output = support::run(root, &["build", "--workspace", "--json", "--cache-dir", cache.to_str().unwrap()]);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{report:#}");
    report["projects"].as_array().unwrap().clone()
}

/// The Codex wrapper of the guard's hook run by Node on a recorded payload with `command`.
fn guard_answers(root: &Path, command: &str) -> (i32, String) {
    let hooks = root.join("plugins/guard/artifact/hooks");
    let wrapper = fs::read_dir(&hooks)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.to_string_lossy().ends_with(".codex.mjs"))
        .unwrap();
    let mut payload = support::payload(support::CODEX, "PreToolUse");
    payload["tool_input"]["command"] = command.into();
    let (code, stdout, _) = support::node(&wrapper, payload.to_string().as_bytes(), &[]);
    (code, stdout)
}

#[test]
fn plugins_import_shared_code_and_an_edit_there_rebuilds_each_of_them() {
    let dir = monorepo();
    let (root, cache) = (dir.path(), dir.path().join("cache"));
    let first = build_workspace(root, &cache);
    let inputs = |plugin: &str| -> Vec<String> {
        let manifest = fs::read(root.join(format!("plugins/{plugin}/artifact/agent-bundle.manifest.json"))).unwrap();
        let manifest: Value = serde_json::from_slice(&manifest).unwrap();
        manifest["inputs"].as_array().unwrap().iter().map(|i| i["path"].as_str().unwrap().to_owned()).collect()
    };
    assert!(first.iter().all(|p| p["ok"] == true), "{first:#?}");
    assert_eq!(
        inputs("guard"),
        ["../../shared/log.ts", "../../shared/redact/index.ts", "agent-bundle.config.ts", "src/hooks/no-secrets.ts"]
    );
    let (code, stdout) = guard_answers(root, "curl -H 'Authorization: ghp_0123456789abcdef' x");
    assert_eq!(code, 0);
    assert!(stdout.contains("\"permissionDecision\":\"deny\""), "{stdout}");
    assert_eq!(guard_answers(root, "echo hi"), (0, String::new()));
    // `inspect` follows the imports out of the root as the build does.
    let inspect = support::run(&root.join("plugins/guard"), &["inspect", "--hooks"]);
    assert!(inspect.status.success(), "{}", String::from_utf8_lossy(&inspect.stderr));
    assert!(String::from_utf8_lossy(&inspect.stdout).contains("handler src/hooks/no-secrets.ts"));

    // Past the racy window, the inputs outside the roots are stamped like the others.
    std::thread::sleep(Duration::from_millis(1100));
    build_workspace(root, &cache);
    let up_to_date = build_workspace(root, &cache);
    assert!(up_to_date.iter().all(|p| p["upToDateBy"] == "stamp"), "{up_to_date:#?}");

    // An edit of the shared code: both plugins import it, so both rebuild.
    let redact = root.join("shared/redact/index.ts");
    let source = fs::read_to_string(&redact).unwrap();
    fs::write(&redact, source.replace("(?:sk|ghp|xox[bp])", "(?:sk|ghp|glpat|xox[bp])")).unwrap();
    let edited = build_workspace(root, &cache);
    let rewritten: Vec<usize> = edited.iter().map(|p| p["published"]["written"].as_array().unwrap().len()).collect();
    // Each plugin's three wrappers and its manifest.
    assert_eq!(rewritten, [4, 4], "{edited:#?}");
    assert!(guard_answers(root, "git push https://glpat-0123456789abcdef@x").1.contains("deny"));

    // A new module beside the shared ones is an input too (a folder's files all are).
    std::thread::sleep(Duration::from_millis(1100));
    build_workspace(root, &cache);
    fs::write(root.join("shared/extra.ts"), "export const extra = 1;\n").unwrap();
    let grown = build_workspace(root, &cache);
    assert!(grown.iter().all(|p| p["upToDate"] == false), "{grown:#?}");
}

#[test]
fn a_fresh_checkout_of_a_monorepo_is_restored_from_the_cache_byte_identical() {
    let (first, second, third) = (monorepo(), monorepo(), monorepo());
    let cache = tempfile::tempdir().unwrap();
    let same_artifacts = |a: &Path, b: &Path| {
        for plugin in ["audit", "guard"] {
            let artifact = |root: &Path| artifact_files(&root.join("plugins").join(plugin).join("artifact"));
            assert_eq!(artifact(a), artifact(b), "{plugin}");
        }
    };
    build_workspace(first.path(), cache.path());
    let restored = |projects: &[Value]| projects.iter().all(|p| p["restoredFromCache"] == true);
    let warm = build_workspace(second.path(), cache.path());
    assert!(restored(&warm), "the cache knows which shared folders to read: {warm:#?}");
    assert!(warm.iter().all(|p| p["work"]["cacheMisses"] == 0), "all hits: {warm:#?}");
    same_artifacts(first.path(), second.path());

    // The shared code now reaches one folder further: the cache learns it from a clean build,
    // and a checkout at that commit is restored again.
    for root in [first.path(), third.path()] {
        fs::create_dir(root.join("shared/time")).unwrap();
        fs::write(root.join("shared/time/index.ts"), "export const now = () => new Date().toISOString();\n").unwrap();
        let log = root.join("shared/log.ts");
        let source = fs::read_to_string(&log).unwrap();
        let source = source.replace("{ plugin, event,", "{ at: now(), plugin, event,");
        fs::write(&log, format!("import {{ now }} from './time';\n{source}")).unwrap();
    }
    // A checkout of it before any build of it: the cache's folders lead to no artifact, so
    // it compiles (reusing what it can) and is right.
    let compiled = build_workspace(third.path(), cache.path());
    assert!(compiled.iter().all(|p| p["restoredFromCache"] == false && p["ok"] == true), "{compiled:#?}");
    build_workspace(first.path(), cache.path());
    same_artifacts(first.path(), third.path());
    fs::remove_dir_all(third.path().join("plugins/guard/artifact")).unwrap();
    fs::remove_dir_all(third.path().join("plugins/guard/.agent-bundle")).unwrap();
    let again = build_workspace(third.path(), cache.path());
    let guard = again.iter().find(|p| p["project"] == "plugins/guard").unwrap();
    assert_eq!(guard["restoredFromCache"], true, "{guard:#}");
    same_artifacts(first.path(), third.path());
}

/// A build that started from its stamp's shared folders (an edit of the plugin's own code)
/// teaches the cache the way to them too: a fresh checkout of that state is restored.
#[test]
fn a_fresh_checkout_of_an_incrementally_built_state_is_restored_from_the_cache() {
    let (first, second) = (monorepo(), monorepo());
    let cache = tempfile::tempdir().unwrap();
    build_workspace(first.path(), cache.path());
    // Once its folders are older than the racy window, an up-to-date build records them
    // in the stamp, shared ones too: the next build lists the inputs from it.
    let past = std::time::SystemTime::now() - Duration::from_secs(10);
    for entry in walkdir::WalkDir::new(first.path()).into_iter().map(Result::unwrap) {
        if entry.file_type().is_dir() && !entry.path().ends_with("artifact") {
            fs::File::open(entry.path()).unwrap().set_modified(past).unwrap();
        }
    }
    build_workspace(first.path(), cache.path());
    let stamp = fs::read_to_string(first.path().join("plugins/guard/.agent-bundle/stamp.json")).unwrap();
    assert!(stamp.contains("[\"../../shared\","), "the stamp lists the shared folder: {stamp}");
    for root in [first.path(), second.path()] {
        let handler = root.join("plugins/guard/src/hooks/no-secrets.ts");
        let source = fs::read_to_string(&handler).unwrap();
        fs::write(&handler, format!("{source}\n// edited\n")).unwrap();
    }
    let edited = build_workspace(first.path(), cache.path());
    let guard = |projects: &[Value]| projects.iter().find(|p| p["project"] == "plugins/guard").unwrap().clone();
    assert_eq!(guard(&edited)["work"]["transpiled"], 1, "{:#}", guard(&edited));
    let fresh = build_workspace(second.path(), cache.path());
    assert_eq!(guard(&fresh)["restoredFromCache"], true, "{:#}", guard(&fresh));
    assert_eq!(
        artifact_files(&first.path().join("plugins/guard/artifact")),
        artifact_files(&second.path().join("plugins/guard/artifact"))
    );
}

#[test]
fn an_outside_folder_is_never_walked_and_nothing_in_it_but_modules_is_read() {
    let dir = monorepo();
    let root = dir.path();
    fs::create_dir_all(root.join("shared/deeper")).unwrap();
    fs::write(root.join("shared/deeper/unused.ts"), "export default (;\n").unwrap();
    fs::write(root.join("shared/notes.md"), "not a module\n").unwrap();
    fs::create_dir_all(root.join("shared/node_modules/pkg")).unwrap();
    fs::write(root.join("shared/node_modules/pkg/index.ts"), "export default 1;\n").unwrap();
    let cache = root.join("cache");
    build_workspace(root, &cache);
    let stamp: Value =
        serde_json::from_slice(&fs::read(root.join("plugins/guard/.agent-bundle/stamp.json")).unwrap()).unwrap();
    let inputs: Vec<&str> = stamp["inputs"].as_array().unwrap().iter().map(|i| i[0].as_str().unwrap()).collect();
    assert_eq!(
        inputs,
        ["../../shared/log.ts", "../../shared/redact/index.ts", "agent-bundle.config.ts", "src/hooks/no-secrets.ts"]
    );

    // An import into a skipped folder is not followed there.
    let hook = root.join("plugins/guard/src/hooks/no-secrets.ts");
    let source = fs::read_to_string(&hook).unwrap();
    fs::write(
        &hook,
        format!("import pkg from '../../../../shared/node_modules/pkg';\nexport const seen = pkg;\n{source}"),
    )
    .unwrap();
    let output = support::run(root, &["build", "--workspace", "--json", "--cache-dir", cache.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let guard = report["projects"].as_array().unwrap().iter().find(|p| p["project"] == "plugins/guard").unwrap();
    let message = guard["diagnostics"][0]["message"].as_str().unwrap();
    assert!(message.starts_with("cannot resolve \"../../../../shared/node_modules/pkg\""), "{guard:#}");

    // A CommonJS module there is found, to be refused as what it is.
    fs::write(root.join("shared/legacy.cjs"), "module.exports = 1;\n").unwrap();
    fs::write(
        &hook,
        format!("import legacy from '../../../../shared/legacy.cjs';\nexport const seen = legacy;\n{source}"),
    )
    .unwrap();
    let output =
        support::run(root, &["build", "--root", "plugins/guard", "--json", "--cache-dir", cache.to_str().unwrap()]);
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let message = report["diagnostics"][0]["message"].as_str().unwrap();
    assert!(message.ends_with("a CommonJS module, which an ES module bundle cannot link"), "{report:#}");
}

#[test]
fn a_link_on_the_way_to_an_outside_folder_is_followed_and_a_folder_that_is_a_link_is_not_read() {
    let dir = monorepo();
    let root = dir.path();
    std::os::unix::fs::symlink("shared", root.join("linked")).unwrap();
    fs::create_dir(root.join("via")).unwrap();
    std::os::unix::fs::symlink("..", root.join("via/up")).unwrap();
    let hook = root.join("plugins/guard/src/hooks/no-secrets.ts");
    let source = fs::read_to_string(&hook).unwrap();
    let cache = root.join("cache");
    let build = || support::run(root, &["build", "--root", "plugins/guard", "--cache-dir", cache.to_str().unwrap()]);

    let importing = |folder: &str| {
        let import = format!("import {{ record as viaLink }} from '../../../../{folder}/log.js';");
        fs::write(&hook, format!("{import}\nviaLink('guard', 'x', {{}});\n{source}")).unwrap();
    };

    // `via/up` is a link on the way to `via/up/shared`: followed, as Node follows it.
    importing("via/up/shared");
    let output = build();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));

    // `linked` is the folder itself: not read, and the error says so.
    importing("linked");
    let output = build();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("AB4837") && stderr.contains("a folder or a file that is a symbolic link is not read"),
        "{stderr}"
    );
}

#[test]
fn a_watch_session_rebuilds_every_plugin_that_imports_an_edited_shared_module() {
    let dir = monorepo();
    let (child, builds) = crate::watch::start_watch(dir.path(), &["watch", "--workspace", "--json"]);
    // One round: a build of each plugin, in project order.
    let round = || -> Vec<Value> { (0..2).map(|_| crate::watch::next_build(&builds)).collect() };
    let projects = |round: &[Value]| -> Vec<(String, bool)> {
        round.iter().map(|b| (b["project"].as_str().unwrap().to_owned(), b["ok"] == true)).collect()
    };
    let both_ok = [("plugins/audit".to_owned(), true), ("plugins/guard".to_owned(), true)];
    assert_eq!(projects(&round()), both_ok);

    let log = dir.path().join("shared/log.ts");
    let source = fs::read_to_string(&log).unwrap();
    fs::write(&log, source.replace("JSON.stringify(", "JSON.stringify( ")).unwrap();
    let edited = round();
    assert_eq!(projects(&edited), both_ok);
    assert!(edited.iter().all(|b| b["changed"] == serde_json::json!(["../../shared/log.ts"])), "{edited:#?}");

    fs::write(&log, "export function record(").unwrap();
    let broken = round();
    assert!(
        broken.iter().all(|b| b["ok"] == false && b["diagnostics"][0]["file"] == "../../shared/log.ts"),
        "{broken:#?}"
    );
    fs::write(&log, source).unwrap();
    assert_eq!(projects(&round()), both_ok);

    // An import of a folder that is not there yet: it fails, and builds once the folder
    // appears (its parent's event brings it).
    let hook = dir.path().join("plugins/guard/src/hooks/no-secrets.ts");
    let handler = fs::read_to_string(&hook).unwrap();
    fs::write(
        &hook,
        format!("import {{ more }} from '../../../../shared/later/more';\nexport const seen = more;\n{handler}"),
    )
    .unwrap();
    let missing = crate::watch::next_build(&builds);
    assert_eq!((missing["project"].as_str(), missing["ok"].as_bool()), (Some("plugins/guard"), Some(false)));
    fs::create_dir(dir.path().join("shared/later")).unwrap();
    fs::write(dir.path().join("shared/later/more.ts"), "export const more = 1;\n").unwrap();
    loop {
        let build = crate::watch::next_build(&builds);
        if build["project"] == "plugins/guard" && build["ok"] == true {
            break;
        }
    }
    crate::watch::interrupt(child);
}

#[test]
fn a_second_machine_restores_a_monorepo_with_shared_code_from_the_remote_cache() {
    let nginx = crate::cache_remote::Nginx::start();
    let url = nginx.url();
    let build_over_remote = |root: &Path| -> Vec<Value> {
        let local = tempfile::tempdir().unwrap();
        let args = ["build", "--workspace", "--json", "--cache-dir", local.path().to_str().unwrap()];
        let remote = ["--remote-cache", url.as_str(), "--remote-cache-token", "secret"];
        let output = support::run(root, &[&args[..], &remote[..]].concat());
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(output.status.code(), Some(0), "{report:#}");
        report["projects"].as_array().unwrap().clone()
    };
    let (first, second) = (monorepo(), monorepo());
    build_over_remote(first.path());
    let warm = build_over_remote(second.path());
    for project in &warm {
        assert_eq!(project["restoredFromCache"], true, "{project:#}");
        assert_eq!(project["work"]["cacheMisses"], 0, "{project:#}");
    }
    for plugin in ["audit", "guard"] {
        let artifact = |root: &Path| artifact_files(&root.join("plugins").join(plugin).join("artifact"));
        assert_eq!(artifact(first.path()), artifact(second.path()));
    }
}

#[test]
fn a_cold_build_transpiles_each_module_once_however_many_rounds_it_takes() {
    let dir = monorepo();
    // The same plugin with its shared code vendored inside it: no rounds at all.
    let vendored = tempfile::tempdir().unwrap();
    let guard = vendored.path().join("guard");
    copy_tree(&dir.path().join("plugins/guard"), &guard);
    copy_tree(&dir.path().join("shared"), &guard.join("src/shared"));
    let hook = guard.join("src/hooks/no-secrets.ts");
    fs::write(&hook, fs::read_to_string(&hook).unwrap().replace("../../../../shared/", "../shared/")).unwrap();
    let transpiled = |root: &Path| {
        let cache = tempfile::tempdir().unwrap();
        let (code, report) = support::build_json(root, &["--cache-dir", cache.path().to_str().unwrap()]);
        assert_eq!(code, 0, "{report:#}");
        report["work"]["transpiled"].as_u64().unwrap()
    };
    assert_eq!(transpiled(&dir.path().join("plugins/guard")), transpiled(&guard));
}

#[test]
fn a_watch_session_sees_a_missing_shared_folder_appear() {
    let dir = monorepo();
    let plugin = dir.path().join("plugins/guard");
    let hook = plugin.join("src/hooks/no-secrets.ts");
    let handler = fs::read_to_string(&hook).unwrap();
    let import = "import { more } from '../../../../later/deep/more';\nexport const seen = more;\n";
    fs::write(&hook, format!("{import}{handler}")).unwrap();
    // One project: nothing else watches the monorepo's root, where the folder appears, and
    // its parent is missing too.
    let (child, builds) = crate::watch::start_watch(&plugin, &["watch", "--json"]);
    let first = crate::watch::next_build(&builds);
    assert_eq!(first["ok"], false, "{first:#}");
    fs::create_dir_all(dir.path().join("later/deep")).unwrap();
    fs::write(dir.path().join("later/deep/more.ts"), "export const more = 1;\n").unwrap();
    while crate::watch::next_build(&builds)["ok"] != true {}
    crate::watch::interrupt(child);
}

/// A link on the way to shared code (`../../linked/shared`) pointed at another folder is a
/// change of that code: the session reads the other folder, and watches it from then on.
#[test]
fn a_watch_session_follows_a_link_to_shared_code_pointed_elsewhere() {
    let config =
        "export default { hooks: { sessionStart: './src/start.ts' }, plugin: { name: 'p' }, targets: ['claude'] };\n";
    let handler = "import { who } from '../../../linked/shared/who';\nexport default () => ({ outcome: 'continue' as const, additionalContext: who });\n";
    let dir = support::project(&[
        ("plugins/p/agent-bundle.config.ts", config),
        ("plugins/p/src/start.ts", handler),
        ("one/shared/who.ts", "export const who = 'from-one';\n"),
        ("two/shared/who.ts", "export const who = 'from-two';\n"),
    ]);
    std::os::unix::fs::symlink("one", dir.path().join("linked")).unwrap();
    let root = dir.path().join("plugins/p");
    let wrapper_says = |text: &str| {
        artifact_files(&root.join("artifact"))
            .iter()
            .any(|(path, bytes)| path.ends_with(".claude.mjs") && String::from_utf8_lossy(bytes).contains(text))
    };
    let (child, builds) = crate::watch::start_watch(&root, &["watch", "--json"]);
    assert_eq!(crate::watch::next_build(&builds)["ok"], true);
    assert!(wrapper_says("from-one"));
    // Pointed elsewhere in one step, as `ln -sfn` does.
    std::os::unix::fs::symlink("two", dir.path().join("relinked")).unwrap();
    fs::rename(dir.path().join("relinked"), dir.path().join("linked")).unwrap();
    while !wrapper_says("from-two") {
        crate::watch::next_build(&builds);
    }
    fs::write(dir.path().join("two/shared/who.ts"), "export const who = 'edited-in-two';\n").unwrap();
    while !wrapper_says("edited-in-two") {
        crate::watch::next_build(&builds);
    }
    crate::watch::interrupt(child);
}

/// An outside folder where nothing readable was (an artifact, a link) is in the stamp too:
/// once it is a plain folder, an import may resolve into it instead of below it.
#[test]
fn the_stamp_sees_an_outside_folder_that_held_nothing_readable_become_one() {
    let config =
        "export default { hooks: { sessionStart: './src/start.ts' }, plugin: { name: 'p' }, targets: ['claude'] };\n";
    let handler = "import { who } from '../../../shared/vendor/util';\nexport default () => ({ outcome: 'continue' as const, context: who() });\n";
    let dir = support::project(&[
        ("plugins/p/agent-bundle.config.ts", config),
        ("plugins/p/src/start.ts", handler),
        ("shared/vendor/util/index.ts", "export const who = () => 'util/index.ts';\n"),
        ("shared/vendor/util.ts", "export const who = () => 'util.ts';\n"),
        ("shared/vendor/agent-bundle.manifest.json", "{}"),
    ]);
    let (root, cache) = (dir.path().join("plugins/p"), tempfile::tempdir().unwrap());
    let build = || {
        let (code, report) = support::build_json(&root, &["--cache-dir", cache.path().to_str().unwrap()]);
        assert_eq!(code, 0, "{report:#}");
        report
    };
    build();
    // Older than the racy window, so that the stamp answers alone.
    let past = std::time::SystemTime::now() - Duration::from_secs(10);
    let entries = walkdir::WalkDir::new(dir.path())
        .into_iter()
        .filter_entry(|e| !["artifact", ".agent-bundle"].contains(&e.file_name().to_str().unwrap()));
    for entry in entries.map(Result::unwrap) {
        fs::File::open(entry.path()).unwrap().set_modified(past).unwrap();
    }
    build();
    assert_eq!(build()["upToDateBy"], "stamp");
    let wrapper =
        || artifact_files(&root.join("artifact")).into_iter().find(|(path, _)| path.ends_with(".mjs")).unwrap().1;
    assert!(String::from_utf8(wrapper()).unwrap().contains("\"util/index.ts\""));

    fs::remove_file(dir.path().join("shared/vendor/agent-bundle.manifest.json")).unwrap();
    assert_ne!(build()["upToDateBy"], "stamp");
    assert!(String::from_utf8(wrapper()).unwrap().contains("\"util.ts\""), "a file beats a folder's index");
}
