//! Watch mode: an edit rewrites only what depends on it; a broken edit keeps the last good
//! artifact; a fix publishes again; Ctrl-C exits cleanly. Exactly the input directories are
//! watched; a workspace session builds each project on its own, finds projects that come
//! and go, and goes on past a project it cannot publish; the cache stays within its bound.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::Value;

use crate::support::{self, artifact_files};

/// `agent-bundle <args>` (a watch session with `--json`) in `dir`, and its build reports as
/// they come.
pub(crate) fn start_watch(dir: &Path, args: &[&str]) -> (Child, Receiver<Value>) {
    start_watch_with(support::bin(), dir, args)
}

/// [`start_watch`], running `command`.
fn start_watch_with(mut command: std::process::Command, dir: &Path, args: &[&str]) -> (Child, Receiver<Value>) {
    let mut child = command.args(args).current_dir(dir).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let (lines, builds) = mpsc::channel::<Value>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let _ = lines.send(serde_json::from_str(&line.unwrap()).unwrap());
        }
    });
    (child, builds)
}

/// A `watch --json` session on the project at `dir`, past its first (good) build.
fn watching(dir: &Path) -> (Child, Receiver<Value>) {
    let (child, builds) = start_watch(dir, &["watch", "--json"]);
    let first = next_build(&builds);
    assert_eq!(first["ok"], true, "{first:#}");
    (child, builds)
}

/// A `watch --workspace --json` session on `dir`, past the first (good) builds of its
/// `projects` projects.
fn watching_workspace(dir: &Path, projects: usize) -> (Child, Receiver<Value>) {
    let (child, builds) = start_watch(dir, &["watch", "--workspace", "--json"]);
    for _ in 0..projects {
        let build = next_build(&builds);
        assert_eq!(build["ok"], true, "{build:#}");
    }
    (child, builds)
}

pub(crate) fn next_build(builds: &Receiver<Value>) -> Value {
    builds.recv_timeout(Duration::from_secs(30)).expect("a build report within 30 s")
}

/// Asserts the session reports no build within a second: `why` it should not.
fn says_nothing(builds: &Receiver<Value>, why: &str) {
    let said = builds.recv_timeout(Duration::from_millis(1000));
    assert!(said.is_err(), "{why}: {said:?}");
}

/// A workspace holding a copy of `examples/policy` at each of `projects`.
fn workspace_of_policies(projects: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for project in projects {
        support::copy_tree(&support::repo().join("examples/policy"), &dir.path().join(project));
    }
    dir
}

pub(crate) fn interrupt(child: Child) {
    stop_with(child, libc::SIGINT);
}

/// Sends `signal` to a watch session and checks that it ends cleanly.
fn stop_with(mut child: Child, signal: libc::c_int) {
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, signal) };
    let status = child.wait().unwrap();
    assert!(status.success(), "watch exits cleanly on signal {signal}: {status}");
}

#[test]
fn a_session_ends_cleanly_when_killed_or_its_terminal_closes() {
    for signal in [libc::SIGTERM, libc::SIGHUP] {
        let dir = support::example("policy");
        let (child, _builds) = watching(dir.path());
        stop_with(child, signal);
    }
}

#[test]
fn watch_rebuilds_only_what_an_edit_touches_and_survives_a_broken_edit() {
    let dir = support::example("policy");
    // A cache of its own, so what each build transpiles and misses is known.
    let cache = tempfile::tempdir().unwrap();
    let (child, builds) = start_watch(dir.path(), &["watch", "--json", "--cache-dir", cache.path().to_str().unwrap()]);
    let next = || next_build(&builds);

    let initial = next();
    assert_eq!(initial["ok"], true, "{initial:#}");
    let stop = dir.path().join("src/hooks/stop.ts");
    let original = std::fs::read_to_string(&stop).unwrap();

    let good_source = original.replace("summarize what you changed", "list what you changed");
    std::fs::write(&stop, &good_source).unwrap();
    let edited = next();
    assert_eq!(edited["ok"], true, "{edited:#}");
    assert_eq!(edited["changed"], serde_json::json!(["src/hooks/stop.ts"]));
    let written: Vec<&str> =
        edited["published"]["written"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    assert_eq!(written.len(), 4, "three stop wrappers and the manifest: {written:?}");
    assert!(
        written.iter().all(|p| p.starts_with("hooks/stop-stop-") || *p == "agent-bundle.manifest.json"),
        "{written:?}"
    );
    // Only the edited module and what depends on it ran again, and the report counts that
    // build's own work, not the session's.
    assert!(
        edited["queriesExecuted"].as_u64().unwrap() < initial["queriesExecuted"].as_u64().unwrap() / 2,
        "{edited:#}"
    );
    assert_eq!((edited["work"]["transpiled"].as_u64(), edited["work"]["bundled"].as_u64()), (Some(1), Some(1)));
    let misses = |build: &Value| build["work"]["cacheMisses"].as_u64().unwrap();
    assert!(misses(&edited) < misses(&initial), "{:#} after {:#}", edited["work"], initial["work"]);

    let good = artifact_files(&dir.path().join("artifact"));
    std::fs::write(&stop, "export default (").unwrap();
    let broken = next();
    assert_eq!(broken["ok"], false);
    assert_eq!(broken["diagnostics"][0]["file"], "src/hooks/stop.ts");
    assert_eq!(artifact_files(&dir.path().join("artifact")), good, "the last good artifact stays");

    // Fixed back to what the artifact holds: nothing to write, and the session still says
    // the error is gone.
    std::fs::write(&stop, &good_source).unwrap();
    let fixed = next();
    assert_eq!(
        (&fixed["ok"], &fixed["changed"]),
        (&true.into(), &serde_json::json!(["src/hooks/stop.ts"])),
        "{fixed:#}"
    );
    assert_eq!(fixed["diagnostics"], serde_json::json!([]), "{fixed:#}");
    assert_eq!(artifact_files(&dir.path().join("artifact")), good);
    interrupt(child);
}

/// The inotify watches `pid` holds, by the kernel's own account.
fn inotify_watches(pid: u32) -> usize {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fdinfo")).unwrap();
    let infos = fds.filter_map(|fd| std::fs::read_to_string(fd.unwrap().path()).ok());
    infos.map(|info| info.lines().filter(|line| line.starts_with("inotify wd:")).count()).sum()
}

#[test]
fn watch_watches_exactly_the_input_directories() {
    let dir = support::example("policy");
    for package in 0..30 {
        std::fs::create_dir_all(dir.path().join(format!("node_modules/p{package}/lib"))).unwrap();
    }
    std::fs::create_dir_all(dir.path().join("target/debug/deps")).unwrap();
    let input_dirs = walkdir::WalkDir::new(dir.path())
        .into_iter()
        .filter_entry(|entry| !["node_modules", "target"].contains(&entry.file_name().to_str().unwrap()))
        .filter(|entry| entry.as_ref().unwrap().file_type().is_dir())
        .count();
    let (child, builds) = start_watch(dir.path(), &["watch", "--json"]);
    let next = || next_build(&builds);
    assert_eq!(next()["ok"], true);
    let artifact_dirs = walkdir::WalkDir::new(dir.path().join("artifact"))
        .into_iter()
        .filter(|entry| entry.as_ref().unwrap().file_type().is_dir())
        .count();
    assert_eq!(
        inotify_watches(child.id()),
        input_dirs + artifact_dirs,
        "one per input directory (none in node_modules or target) and per folder of the artifact"
    );
    // An event of the root itself (its mode set) must not cost the session its watches; an
    // edit after it is reported once the event was handled.
    let mode = std::fs::metadata(dir.path()).unwrap().permissions();
    std::fs::set_permissions(dir.path(), mode).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let stop = dir.path().join("src/hooks/stop.ts");
    std::fs::write(&stop, std::fs::read_to_string(&stop).unwrap() + "// edited\n").unwrap();
    while next()["changed"] != serde_json::json!(["src/hooks/stop.ts"]) {}
    assert_eq!(inotify_watches(child.id()), input_dirs + artifact_dirs);

    // A new directory is read whole and watched: a file written into it right away counts
    // (that a listing never misses a file created meanwhile is the loader's unit test).
    let added = dir.path().join("src/hooks/extra/deeper");
    std::fs::create_dir_all(&added).unwrap();
    std::fs::write(added.join("util.ts"), "export const x = 1;\n").unwrap();
    let mut changed = Vec::new();
    while changed.is_empty() {
        changed = next()["changed"].as_array().unwrap().clone();
    }
    assert_eq!(changed, [Value::from("src/hooks/extra/deeper/util.ts")]);
    assert_eq!(inotify_watches(child.id()), input_dirs + artifact_dirs + 2);

    std::fs::rename(dir.path().join("src/hooks/extra"), dir.path().join("src/hooks/moved")).unwrap();
    assert_eq!(next()["changed"].as_array().unwrap().len(), 2, "one input gone, one added");
    std::fs::write(dir.path().join("src/hooks/moved/deeper/late.ts"), "export const y = 2;\n").unwrap();
    assert_eq!(next()["changed"], serde_json::json!(["src/hooks/moved/deeper/late.ts"]), "the moved folder is watched");

    std::fs::remove_dir_all(dir.path().join("src/hooks/moved")).unwrap();
    let mut removed = 0;
    while removed < 2 {
        removed += next()["changed"].as_array().unwrap().len();
    }
    assert_eq!(removed, 2);
    assert_eq!(inotify_watches(child.id()), input_dirs + artifact_dirs);
    interrupt(child);
}

#[test]
fn a_workspace_watch_rebuilds_only_the_edited_project() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for name in ["policy", "guarded"] {
        support::copy_tree(&support::repo().join("examples").join(name), &root.join("plugins").join(name));
    }
    let (child, builds) = start_watch(root, &["build", "--workspace", "--watch", "--json"]);
    let next = || next_build(&builds);
    let mut initial: Vec<(String, bool)> =
        (0..2).map(|_| next()).map(|b| (b["project"].as_str().unwrap().to_owned(), b["ok"] == true)).collect();
    initial.sort();
    assert_eq!(initial, [("plugins/guarded".to_owned(), true), ("plugins/policy".to_owned(), true)]);
    let policy_artifact = artifact_files(&root.join("plugins/policy/artifact"));

    let audit = root.join("plugins/guarded/src/hooks/audit.ts");
    let original = std::fs::read_to_string(&audit).unwrap();
    std::fs::write(&audit, "export default (").unwrap();
    let broken = next();
    assert_eq!((broken["project"].as_str(), broken["ok"].as_bool()), (Some("plugins/guarded"), Some(false)));
    assert_eq!(broken["diagnostics"][0]["file"], "src/hooks/audit.ts");

    std::fs::write(&audit, original + "// edited\n").unwrap();
    let fixed = next();
    assert_eq!((fixed["project"].as_str(), fixed["ok"].as_bool()), (Some("plugins/guarded"), Some(true)));
    assert_eq!(fixed["changed"], serde_json::json!(["src/hooks/audit.ts"]));
    assert!(builds.recv_timeout(Duration::from_millis(300)).is_err(), "the other project did not build again");
    // A touch of the other project's file changes no input: it rebuilds nothing it published,
    // and has nothing to say.
    let policy_config = root.join("plugins/policy/agent-bundle.config.ts");
    std::fs::write(&policy_config, std::fs::read(&policy_config).unwrap()).unwrap();
    assert!(builds.recv_timeout(Duration::from_millis(500)).is_err(), "a touch is no change to report");
    assert_eq!(artifact_files(&root.join("plugins/policy/artifact")), policy_artifact);

    // A project that appears is found and built; one that disappears is dropped.
    support::copy_tree(&support::repo().join("examples/policy"), &root.join("packages/new/plugin"));
    // (Caught mid-copy, its first build can fail; the rest of the copy builds it again.)
    loop {
        let build = next();
        if build["project"] == "packages/new/plugin" && build["ok"] == true {
            break;
        }
    }
    assert!(root.join("packages/new/plugin/artifact/agent-bundle.manifest.json").is_file());
    std::fs::remove_dir_all(root.join("plugins/policy")).unwrap();
    std::fs::write(&audit, std::fs::read_to_string(&audit).unwrap() + "// again\n").unwrap();
    // (A removal that straddles two batches can cost the removed project one failed build.)
    let mut dropped = false;
    loop {
        let report = next();
        dropped |= report == serde_json::json!({ "project": "plugins/policy", "dropped": true });
        if report["project"] == "plugins/guarded" && dropped {
            break;
        }
    }
    assert!(builds.recv_timeout(Duration::from_millis(300)).is_err(), "no build of the removed project");
    interrupt(child);
}

#[test]
fn a_watch_session_keeps_the_cache_within_its_bound_after_every_round() {
    // What one cold build of the example writes, unbounded; the session gets half of it.
    let unbounded = tempfile::tempdir().unwrap();
    let cold = ["--cache-dir", unbounded.path().to_str().unwrap(), "--cache-max-size", "0"];
    assert_eq!(support::build_json(support::example("policy").path(), &cold).0, 0);
    let bound = crate::cache::cache_bytes(unbounded.path()) / 2;
    let (dir, cache) = (support::example("policy"), tempfile::tempdir().unwrap());
    let args =
        ["watch", "--json", "--cache-dir", cache.path().to_str().unwrap(), "--cache-max-size", &bound.to_string()];
    let (child, builds) = start_watch(dir.path(), &args);
    let within_bound = || {
        // The round's report comes just before its collection.
        let started = std::time::Instant::now();
        while crate::cache::cache_bytes(cache.path()) > bound {
            assert!(started.elapsed() < Duration::from_secs(20), "the running session never bounded its cache");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    assert_eq!(next_build(&builds)["ok"], true);
    within_bound();
    // The next round writes again (an edited handler's chunk and wrappers), and is bounded too.
    let stop = dir.path().join("src/hooks/stop.ts");
    std::fs::write(&stop, std::fs::read_to_string(&stop).unwrap() + "export const more = 1;\n").unwrap();
    let edited = next_build(&builds);
    assert!(edited["ok"] == true && edited["work"]["transpiled"] == 1, "{edited:#}");
    within_bound();
    interrupt(child);
}

/// A `watch --workspace` session in `dir` (human output), and the lines it says on stderr.
fn workspace_session_saying(dir: &Path) -> (Child, impl Iterator<Item = String>) {
    let mut child = support::bin()
        .args(["watch", "--workspace"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap()).lines().map(Result::unwrap);
    (child, stderr)
}

#[test]
fn a_workspace_session_sums_up_its_first_builds_in_one_line_but_for_failures() {
    let dir = workspace_of_policies(&["good", "broken", "warned"]);
    std::fs::write(dir.path().join("broken/src/hooks/stop.ts"), "export default (").unwrap();
    // One that publishes with a warning gets its own lines too, as `build --workspace` says it.
    let config = dir.path().join("warned/agent-bundle.config.ts");
    let warned =
        std::fs::read_to_string(&config).unwrap().replace("tools: ['shell']", "tools: ['shell', 'claude:Frobnicate']");
    std::fs::write(&config, warned).unwrap();
    // (The stderr kept open till the end: the session says it stopped there.)
    let (child, mut stderr) = workspace_session_saying(dir.path());
    let mut before_summary = Vec::new();
    for line in stderr.by_ref() {
        if line.starts_with("[watch] first builds") {
            assert!(line.starts_with("[watch] first builds of 3 projects: 2 ok (2 published), 1 failed ("), "{line}");
            break;
        }
        before_summary.push(line);
    }
    assert!(before_summary.iter().any(|line| line.starts_with("[watch] broken: initial build: build failed")));
    assert!(before_summary.iter().any(|line| line.starts_with("warning[AB4207]")), "{before_summary:#?}");
    assert!(before_summary.iter().any(|line| line.starts_with("[watch] warned: initial build: published")));
    assert!(!before_summary.iter().any(|line| line.starts_with("[watch] good:")), "{before_summary:#?}");
    interrupt(child);
}

/// Projects a build of the workspace refuses are not watched, said once each: both where
/// their artifact links lead to one folder; none where no project is left.
#[test]
fn a_workspace_session_leaves_out_the_projects_a_build_refuses() {
    let dir = workspace_of_policies(&["good", "nested"]);
    std::os::unix::fs::symlink("../good/artifact", dir.path().join("nested/artifact")).unwrap();
    let (mut child, mut stderr) = workspace_session_saying(dir.path());
    let mut said = Vec::new();
    for line in stderr.by_ref() {
        let done = line.starts_with("No agent-bundle project that can publish");
        said.push(line);
        if done {
            break;
        }
    }
    for project in ["good", "nested"] {
        let refused = format!("[watch] {project}: not watched: its artifact folder");
        assert!(said.iter().any(|line| line.starts_with(&refused)), "{said:#?}");
    }
    // (Said before the session has begun: stopped, not interrupted.)
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!dir.path().join("good/artifact").exists(), "nothing published");
}

#[test]
fn a_project_that_cannot_publish_is_reported_and_the_session_goes_on() {
    let dir = workspace_of_policies(&["good", "blocked"]);
    // Not an artifact: publishing there would replace what the user keeps in it.
    std::fs::create_dir_all(dir.path().join("blocked/artifact")).unwrap();
    std::fs::write(dir.path().join("blocked/artifact/notes.txt"), "mine").unwrap();
    let (child, builds) = start_watch(dir.path(), &["watch", "--workspace", "--json"]);
    let mut first: Vec<Value> = (0..2).map(|_| next_build(&builds)).collect();
    first.sort_by_key(|build| build["project"].as_str().unwrap().to_owned());
    assert_eq!((first[0]["project"].as_str(), first[0]["ok"].as_bool()), (Some("blocked"), Some(false)));
    assert!(first[0]["error"].as_str().unwrap().contains("no agent-bundle artifact"), "{:#}", first[0]);
    assert_eq!((first[1]["project"].as_str(), first[1]["ok"].as_bool()), (Some("good"), Some(true)));

    // An edit elsewhere does not build it again.
    let good = dir.path().join("good/src/hooks/stop.ts");
    std::fs::write(&good, std::fs::read_to_string(&good).unwrap() + "// edited\n").unwrap();
    assert_eq!(next_build(&builds)["project"], "good");
    assert!(builds.recv_timeout(Duration::from_millis(300)).is_err(), "the failed project waits for its own change");

    // Once the folder is moved away, the next change builds the whole project again.
    std::fs::rename(dir.path().join("blocked/artifact"), dir.path().join("blocked-notes")).unwrap();
    let stop = dir.path().join("blocked/src/hooks/stop.ts");
    std::fs::write(&stop, std::fs::read_to_string(&stop).unwrap() + "// edited\n").unwrap();
    let mut built = next_build(&builds);
    while built["project"] != "blocked" || built["ok"] != true {
        built = next_build(&builds);
    }
    assert!(dir.path().join("blocked/artifact/agent-bundle.manifest.json").is_file());
    interrupt(child);
}

/// A folder of the user's at a single project's usual artifact place is said on each build,
/// and the session goes on, as a workspace's does (one named with `--out` is refused at once).
#[test]
fn a_single_project_that_cannot_publish_at_start_is_reported_and_the_session_goes_on() {
    let dir = support::example("policy");
    std::fs::create_dir_all(dir.path().join("artifact")).unwrap();
    std::fs::write(dir.path().join("artifact/notes.txt"), "mine").unwrap();
    let (child, builds) = start_watch(dir.path(), &["watch", "--json"]);
    let first = next_build(&builds);
    assert_eq!(first["ok"], false, "{first:#}");
    assert!(first["error"].as_str().unwrap().contains("no agent-bundle artifact"), "{first:#}");
    // Emptied, the folder is published into, with no edit of the project's.
    std::fs::remove_file(dir.path().join("artifact/notes.txt")).unwrap();
    let published = next_build(&builds);
    assert_eq!(published["ok"], true, "{published:#}");
    assert!(dir.path().join("artifact/agent-bundle.manifest.json").is_file());
    interrupt(child);
    std::fs::create_dir_all(dir.path().join("notes")).unwrap();
    std::fs::write(dir.path().join("notes/notes.txt"), "mine").unwrap();
    let refused = support::run(dir.path(), &["watch", "--out", "notes"]);
    assert_eq!(refused.status.code(), Some(2), "{}", String::from_utf8_lossy(&refused.stderr));
}

/// Waits for builds until one whose published Claude stop wrapper holds `marker`.
fn until_published(builds: &Receiver<Value>, artifact: &Path, marker: &str) {
    let stop_wrapper_holds = || {
        let files = artifact_files(artifact);
        files.iter().any(|(path, bytes)| {
            path.starts_with("hooks/stop-")
                && path.ends_with(".claude.mjs")
                && String::from_utf8_lossy(bytes).contains(marker)
        })
    };
    while !artifact.is_dir() || !stop_wrapper_holds() {
        next_build(builds);
    }
}

/// Puts `marker` into the reason the policy's stop handler gives.
fn edit_stop(root: &Path, marker: &str) {
    let stop = root.join("src/hooks/stop.ts");
    let text = std::fs::read_to_string(&stop).unwrap();
    std::fs::write(&stop, text.replacen("summarize what you changed", marker, 1)).unwrap();
}

/// A session whose output goes to a file in the project (`watch > watch.log 2>&1`) does not
/// read that file: each line it printed would start another build.
#[test]
fn a_session_logging_into_its_project_does_not_build_for_its_own_lines() {
    let dir = support::example("policy");
    let log = dir.path().join("watch.log");
    let file = std::fs::File::create(&log).unwrap();
    let child = support::bin()
        .arg("watch")
        .current_dir(dir.path())
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .unwrap();
    let builds = || std::fs::read_to_string(&log).unwrap().lines().filter(|l| l.starts_with("[watch]")).count();
    let waited = std::time::Instant::now();
    while builds() < 1 && waited.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    edit_stop(dir.path(), "logged");
    std::thread::sleep(Duration::from_millis(1500));
    let lines = builds();
    interrupt(child);
    assert_eq!(lines, 2, "the first build and the edit's: {}", std::fs::read_to_string(&log).unwrap());
}

/// A session whose output goes into its project through a pipe (`watch 2>&1 | tee
/// watch.log`) cannot know that file; but what changes there is read by no stage, and a
/// build that finds nothing read changed says nothing, so its lines start no more builds:
/// after a failed build as after a published one.
#[test]
fn a_session_piping_its_output_into_its_project_does_not_build_for_its_own_lines() {
    use std::io::Write;
    let dir = support::example("policy");
    let log = dir.path().join("watch.log");
    std::fs::write(&log, "").unwrap();
    let mut child = support::bin().arg("watch").current_dir(dir.path()).stderr(Stdio::piped()).spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let tee = {
        let log = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
                writeln!(file, "{}", line.unwrap()).unwrap();
            }
        })
    };
    let builds = || std::fs::read_to_string(&log).unwrap().lines().filter(|l| l.starts_with("[watch]")).count();
    let waited = std::time::Instant::now();
    while builds() < 1 && waited.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    edit_stop(dir.path(), "piped");
    std::thread::sleep(Duration::from_millis(1500));
    let published = builds();
    std::fs::write(dir.path().join("src/hooks/stop.ts"), "export default (;\n").unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let failed = builds();
    interrupt(child);
    tee.join().unwrap();
    let log = std::fs::read_to_string(&log).unwrap();
    assert_eq!((published, failed), (2, 3), "the first build, the edit's and the failure's: {log}");
}

/// A build that says nothing (a failure said again) leaves what it read for the next build
/// that speaks to report.
#[test]
fn a_silent_build_leaves_what_it_read_for_the_next_to_report() {
    let dir = support::example("policy");
    let (child, builds) = watching(dir.path());
    let config = dir.path().join("agent-bundle.config.ts");
    let good = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, "export default {{{\n").unwrap();
    assert_eq!(next_build(&builds)["ok"], false);
    edit_stop(dir.path(), "edited while the config is broken");
    says_nothing(&builds, "the same failure again says nothing");
    std::fs::write(&config, good).unwrap();
    let recovered = next_build(&builds);
    assert_eq!(recovered["ok"], true, "{recovered:#}");
    assert_eq!(recovered["changed"], serde_json::json!(["agent-bundle.config.ts", "src/hooks/stop.ts"]));
    interrupt(child);
}

/// A route or payload file saved again as it was says nothing: its bytes did not change,
/// and nothing a build must read whole came or went.
#[test]
fn a_route_saved_unchanged_says_nothing() {
    let dir = support::example("routes");
    let (child, builds) = watching(dir.path());
    let route = dir.path().join("src/events/stop.tsx");
    let text = std::fs::read(&route).unwrap();
    // In place, and as editors save: a new file renamed over it.
    std::fs::write(&route, &text).unwrap();
    let saved = dir.path().join("src/events/.stop.tsx.tmp");
    std::fs::write(&saved, &text).unwrap();
    std::fs::rename(&saved, &route).unwrap();
    says_nothing(&builds, "an unchanged route says nothing");
    interrupt(child);
}

/// A link made where a handler was missing is said to be one at once, though it is no
/// input (the session's message would be untrue until some other edit).
#[test]
fn a_link_where_a_handler_was_missing_is_said_at_once() {
    let dir = support::example("policy");
    let (child, builds) = watching(dir.path());
    let stop = dir.path().join("src/hooks/stop.ts");
    let elsewhere = dir.path().join("stop-elsewhere.ts");
    std::fs::rename(&stop, &elsewhere).unwrap();
    let message = |build: &Value| build["diagnostics"][0]["message"].as_str().unwrap_or_default().to_owned();
    let mut build = next_build(&builds);
    while !message(&build).ends_with("does not exist") {
        build = next_build(&builds);
    }
    std::os::unix::fs::symlink(&elsewhere, &stop).unwrap();
    let linked = next_build(&builds);
    assert_eq!(message(&linked), "handler `src/hooks/stop.ts` is a symbolic link, which is never read as a module");
    interrupt(child);
}

/// Another build publishing into the session's artifact with other options (`--target`) is
/// no damage for the session to repair (two such sessions would repair it in turn for
/// ever): the session publishes its own at its next change.
#[test]
fn another_build_publishing_the_artifact_is_left_to_stand_until_the_next_change() {
    let dir = support::example("policy");
    let artifact = dir.path().join("artifact");
    let (child, builds) = watching(dir.path());
    std::thread::sleep(Duration::from_millis(300));
    let narrowed = support::run(dir.path(), &["build", "--target", "claude"]);
    assert!(narrowed.status.success(), "{}", String::from_utf8_lossy(&narrowed.stderr));
    let claude_only = artifact_files(&artifact);
    says_nothing(&builds, "no build for another's publish");
    assert_eq!(artifact_files(&artifact), claude_only);
    edit_stop(dir.path(), "the session again");
    until_published(&builds, &artifact, "the session again");
    assert!(artifact_files(&artifact).len() > claude_only.len(), "every target again");
    interrupt(child);
}

#[test]
fn a_fifo_or_a_linked_folder_appearing_in_a_project_is_never_read() {
    let dir = support::example("policy");
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("ext.ts"), "export const EXT = 'via-link';\n").unwrap();
    let (child, builds) = watching(dir.path());
    // Opening a FIFO waits for a writer: the session would hang, deaf to Ctrl-C.
    let fifo = std::ffi::CString::new(dir.path().join("src/hooks/pipe").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    edit_stop(dir.path(), "after the fifo");
    until_published(&builds, &dir.path().join("artifact"), "after the fifo");

    // A link made while watching is no more an input than one there from the start.
    std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("src/hooks/ext")).unwrap();
    let stop = dir.path().join("src/hooks/stop.ts");
    let text = std::fs::read_to_string(&stop).unwrap();
    std::fs::write(&stop, format!("import {{ EXT }} from './ext/ext.js';\nexport const ext = EXT;\n{text}")).unwrap();
    let mut build = next_build(&builds);
    while build["ok"] == true {
        build = next_build(&builds);
    }
    assert_eq!(build["diagnostics"][0]["code"], "AB4837", "{build:#}");
    interrupt(child);
}

#[test]
fn a_project_root_removed_and_made_again_is_watched_again() {
    let dir = support::example("policy");
    let (child, builds) = watching(dir.path());
    std::fs::remove_dir_all(dir.path()).unwrap();
    assert_eq!(next_build(&builds)["ok"], false);
    support::copy_tree(&support::repo().join("examples/policy"), dir.path());
    edit_stop(dir.path(), "made again");
    until_published(&builds, &dir.path().join("artifact"), "made again");
    interrupt(child);
}

#[test]
fn a_project_folder_replaced_by_another_in_a_workspace_session_is_built_as_the_other() {
    let dir = workspace_of_policies(&["pol"]);
    let other = tempfile::tempdir().unwrap();
    let replacement = other.path().join("pol");
    support::copy_tree(&support::repo().join("examples/policy"), &replacement);
    let config = replacement.join("agent-bundle.config.ts");
    std::fs::write(&config, std::fs::read_to_string(&config).unwrap().replace("name: 'policy'", "name: 'other'"))
        .unwrap();
    let (child, builds) = start_watch(dir.path(), &["watch", "--workspace", "--json"]);
    assert_eq!(next_build(&builds)["ok"], true);

    std::fs::rename(dir.path().join("pol"), dir.path().join("pol-old")).unwrap();
    std::fs::rename(&replacement, dir.path().join("pol")).unwrap();
    let manifest = dir.path().join("pol/artifact/agent-bundle.manifest.json");
    let names_other = || std::fs::read_to_string(&manifest).is_ok_and(|text| text.contains("\"other\""));
    while !names_other() {
        next_build(&builds);
    }
    // Its edits are its own now, and the old folder is a project of its own.
    edit_stop(&dir.path().join("pol"), "an edit of the replacement");
    until_published(&builds, &dir.path().join("pol/artifact"), "an edit of the replacement");
    edit_stop(&dir.path().join("pol-old"), "an edit of the old one");
    until_published(&builds, &dir.path().join("pol-old/artifact"), "an edit of the old one");
    // Moved out of the workspace, a project is no longer the session's.
    std::fs::rename(dir.path().join("pol-old"), other.path().join("gone")).unwrap();
    assert_eq!(next_build(&builds), serde_json::json!({ "project": "pol-old", "dropped": true }));
    edit_stop(&other.path().join("gone"), "an edit out of the workspace");
    assert!(builds.recv_timeout(Duration::from_millis(500)).is_err(), "a project moved away is dropped");
    interrupt(child);
}

#[test]
fn events_the_kernel_dropped_make_the_session_read_everything_again() {
    let dir = support::example("policy");
    let data = dir.path().join("src/data");
    std::fs::create_dir(&data).unwrap();
    let (child, builds) = watching(dir.path());
    // Stopped (as by Ctrl-Z), the session reads no events: more than the kernel queues for it
    // (fs.inotify.max_queued_events, 16,384 by default) pile up and the rest are dropped.
    // SAFETY: signals to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGSTOP) };
    for file in 0..12_000 {
        std::fs::write(data.join(format!("{file}.txt")), "").unwrap();
    }
    edit_stop(dir.path(), "after the overflow");
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGCONT) };
    until_published(&builds, &dir.path().join("artifact"), "after the overflow");
    interrupt(child);
}

#[test]
fn an_artifact_deleted_during_a_session_is_published_again() {
    let dir = workspace_of_policies(&["policy"]);
    let root = dir.path().join("policy");
    // In the project, in a folder of it that no walk lists, outside it (where no input
    // watch sees it go), and named through a folder that does not exist.
    for out in ["artifact", "target/plugin", "../dist/plugin", "../missing/../dist/other"] {
        let (child, builds) = start_watch(&root, &["watch", "--json", "--out", out]);
        let initial = next_build(&builds);
        assert_eq!(initial["ok"], true, "{initial:#}");
        let artifact = root.join(out.replace("missing/../", ""));
        let before = artifact_files(&artifact);
        // The first publish's own events pass first (creating `target/` says nothing of
        // a removal made after it).
        std::thread::sleep(Duration::from_millis(300));
        std::fs::remove_dir_all(&artifact).unwrap();
        let again = next_build(&builds);
        assert_eq!((&again["ok"], &again["changed"]), (&Value::Bool(true), &serde_json::json!([])), "{again:#}");
        assert_eq!(artifact_files(&artifact), before, "{out}");
        interrupt(child);
    }
}

/// Swaps two paths in one step (a build between two renames would publish again).
fn exchange(a: &Path, b: &Path) {
    let path = |path: &Path| std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    let (a, b) = (path(a), path(b));
    // SAFETY: both are valid NUL-terminated paths.
    let exchanged =
        unsafe { libc::renameat2(libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) };
    assert_eq!(exchanged, 0, "{}", std::io::Error::last_os_error());
}

#[test]
fn an_artifact_swapped_for_an_empty_folder_is_published_into_it() {
    let dir = support::example("policy");
    let (child, builds) = watching(dir.path());
    let (artifact, empty) = (dir.path().join("artifact"), dir.path().join("empty"));
    let before = artifact_files(&artifact);
    std::fs::create_dir(&empty).unwrap();
    exchange(&empty, &artifact);
    let mut build = next_build(&builds);
    while artifact_files(&artifact) != before {
        build = next_build(&builds);
    }
    assert_eq!(build["ok"], true, "{build:#}");
    interrupt(child);
}

#[test]
fn a_file_where_the_artifact_goes_is_never_replaced_and_the_edits_meanwhile_are_reported() {
    let dir = support::example("policy");
    let (child, builds) = watching(dir.path());
    let (artifact, notes) = (dir.path().join("artifact"), dir.path().join("notes"));
    std::fs::write(&notes, "my notes").unwrap();
    exchange(&notes, &artifact);
    let refused = |build: Value| {
        assert_eq!(build["ok"], false, "{build:#}");
        assert!(build["error"].as_str().unwrap().contains("is not a directory"), "{build:#}");
    };
    refused(next_build(&builds));
    edit_stop(dir.path(), "while refused");
    refused(next_build(&builds));
    assert_eq!(std::fs::read_to_string(&artifact).unwrap(), "my notes");
    let names = || std::fs::read_dir(dir.path()).unwrap().map(|entry| entry.unwrap().file_name()).collect::<Vec<_>>();
    assert!(!names().iter().any(|name| name.to_string_lossy().contains(".agent-bundle-")), "{:?}", names());

    // Once the file is gone, the artifact is published, and the build says what changed
    // since the last one that published.
    std::fs::remove_file(&artifact).unwrap();
    let published = next_build(&builds);
    assert_eq!(published["ok"], true, "{published:#}");
    assert_eq!(published["changed"], serde_json::json!(["src/hooks/stop.ts"]));
    until_published(&builds, &artifact, "while refused");
    interrupt(child);
}

#[test]
fn a_project_moved_or_copied_into_another_in_a_workspace_session_is_found() {
    let dir = workspace_of_policies(&["outer"]);
    let elsewhere = tempfile::tempdir().unwrap();
    let moved = elsewhere.path().join("moved");
    support::copy_tree(&support::repo().join("examples/hooks-and-scripts"), &moved);
    let (child, builds) = start_watch(dir.path(), &["watch", "--workspace", "--json"]);
    assert_eq!(next_build(&builds)["ok"], true);
    // Its config file makes no event of its own: it arrives with its folder.
    std::fs::rename(&moved, dir.path().join("outer/moved")).unwrap();
    support::copy_tree(&support::repo().join("examples/hooks-and-scripts"), &dir.path().join("outer/copied"));
    let mut published = std::collections::BTreeSet::new();
    while published.len() < 2 {
        let build = next_build(&builds);
        if build["ok"] == true && build["project"] != "outer" {
            published.insert(build["project"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(published, ["outer/copied", "outer/moved"].map(str::to_owned).into());
    interrupt(child);
}

#[test]
fn a_workspace_session_without_projects_waits_for_the_first_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("plugins")).unwrap();
    let (child, builds) = start_watch(dir.path(), &["watch", "--workspace", "--json"]);
    // Let the session start and watch before the project appears.
    std::thread::sleep(Duration::from_millis(300));
    support::copy_tree(&support::repo().join("examples/policy"), &dir.path().join("plugins/policy"));
    loop {
        let build = next_build(&builds);
        if build["project"] == "plugins/policy" && build["ok"] == true {
            break;
        }
    }
    interrupt(child);
}

/// An idle session sleeps until an event or Ctrl-C: no thread of it wakes to poll (a poll
/// every 50 ms would be some 20 wakeups in the second counted here).
#[test]
fn an_idle_session_does_not_wake_up() {
    let dir = support::example("policy");
    let (child, _builds) = watching(dir.path());
    let wakeups = || -> u64 {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", child.id())).unwrap();
        let status = |task: std::fs::DirEntry| std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
        let count = |status: String| {
            let line = status.lines().find(|line| line.starts_with("voluntary_ctxt_switches:"))?.to_owned();
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        };
        tasks.map(|task| count(status(task.unwrap())).unwrap_or(0)).sum()
    };
    std::thread::sleep(Duration::from_millis(200));
    let before = wakeups();
    std::thread::sleep(Duration::from_secs(1));
    let woke = wakeups() - before;
    assert!(woke < 10, "{woke} wakeups in an idle second");
    interrupt(child);
}

/// The ignore files above a workspace, up to its repository's root, apply to the search:
/// one written there while a session runs drops the project it ignores.
#[test]
fn an_ignore_file_of_the_enclosing_repository_is_watched_too() {
    let repository = tempfile::tempdir().unwrap();
    std::fs::create_dir(repository.path().join(".git")).unwrap();
    let workspace = repository.path().join("plugins");
    support::copy_tree(&support::repo().join("examples/policy"), &workspace.join("policy"));
    let (child, builds) = start_watch(&workspace, &["watch", "--workspace", "--json"]);
    assert_eq!(next_build(&builds)["ok"], true);
    std::fs::write(repository.path().join(".gitignore"), "plugins/policy/\n").unwrap();
    assert_eq!(next_build(&builds), serde_json::json!({ "project": "policy", "dropped": true }));
    interrupt(child);
}

#[test]
fn a_nested_project_publishing_its_artifact_costs_the_outer_one_no_build() {
    let dir = workspace_of_policies(&["outer", "outer/inner"]);
    let (child, builds) = watching_workspace(dir.path(), 2);
    // Let the first publishes' events pass (they may cost the outer project one round).
    while builds.recv_timeout(Duration::from_millis(500)).is_ok() {}
    let stop = dir.path().join("outer/inner/src/hooks/stop.ts");
    std::fs::write(&stop, std::fs::read_to_string(&stop).unwrap() + "// edited\n").unwrap();
    // The outer project builds too (the file is one of its inputs), and says nothing: none
    // of its stages reads it.
    let build = next_build(&builds);
    assert_eq!(
        (&build["project"], &build["changed"]),
        (&Value::from("outer/inner"), &serde_json::json!(["src/hooks/stop.ts"]))
    );
    let extra = builds.recv_timeout(Duration::from_millis(500));
    assert!(extra.is_err(), "the inner artifact's publish is no change of the outer project: {extra:?}");
    interrupt(child);
}

/// A built artifact in a payload is no payload (AB4745: the payload would not arrive
/// whole); once its manifest goes, it is a folder of the payload like any, and once a
/// manifest comes back the build fails again, keeping the last good artifact.
#[test]
fn a_built_artifact_inside_a_payload_fails_its_build_until_its_manifest_goes() {
    const MANIFEST: &str = "agent-bundle.manifest.json";
    let dir = support::example("prebuilt-plugin");
    let runtime = dir.path().join("dist/runtime");
    let vendor = |folder: &Path| {
        std::fs::create_dir_all(folder).unwrap();
        std::fs::write(folder.join(MANIFEST), "{}").unwrap();
        std::fs::write(folder.join("notes.txt"), folder.file_name().unwrap().as_encoded_bytes()).unwrap();
    };
    let left_out = |build: &Value| {
        assert_eq!((&build["ok"], &build["diagnostics"][0]["code"]), (&Value::Bool(false), &Value::from("AB4745")));
        let message = build["diagnostics"][0]["message"].as_str().unwrap();
        assert!(message.contains("`dist/runtime/vendored` (a built artifact"), "{message}");
    };
    let (child, builds) = watching(dir.path());
    vendor(&runtime.join("vendored"));
    left_out(&next_build(&builds));
    let notes = dir.path().join("artifact/runtime/vendored/notes.txt");
    assert!(!notes.exists(), "an artifact is never payload");

    std::fs::remove_file(runtime.join("vendored").join(MANIFEST)).unwrap();
    assert_eq!(next_build(&builds)["changed"], serde_json::json!(["dist/runtime/vendored/notes.txt"]));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "vendored");
    std::fs::write(runtime.join("vendored").join(MANIFEST), "{}").unwrap();
    let failed = next_build(&builds);
    assert_eq!(failed["changed"], serde_json::json!(["dist/runtime/vendored/notes.txt"]));
    left_out(&failed);
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "vendored", "the last good artifact stays");

    // Replaced by a new build of it, as a publish does (its watch went with the old folder):
    // no input changes (the payload is checked again), and the new folder's manifest going
    // is seen too.
    let staging = dir.path().join("node_modules/staging");
    vendor(&staging);
    exchange(&staging, &runtime.join("vendored"));
    std::fs::remove_dir_all(&staging).unwrap();
    while let Ok(build) = builds.recv_timeout(Duration::from_millis(500)) {
        assert_eq!(build["changed"], serde_json::json!([]), "a new build of an artifact is no change of the inputs");
        left_out(&build);
    }
    std::fs::remove_file(runtime.join("vendored").join(MANIFEST)).unwrap();
    assert_eq!(next_build(&builds)["changed"], serde_json::json!(["dist/runtime/vendored/notes.txt"]));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "staging");
    interrupt(child);
}

/// A cache kept in the project (`--cache-dir .cache`), removed while watching, is made again
/// with its tag: it stays no input, and the edit's build is the only one.
#[test]
fn a_cache_in_the_project_removed_while_watching_is_made_again_as_a_cache() {
    let dir = support::example("policy");
    let (child, builds) = start_watch(dir.path(), &["watch", "--json", "--cache-dir", ".cache"]);
    assert_eq!(next_build(&builds)["ok"], true);
    std::fs::remove_dir_all(dir.path().join(".cache")).unwrap();
    edit_stop(dir.path(), "cache made again");
    assert_eq!(next_build(&builds)["changed"], serde_json::json!(["src/hooks/stop.ts"]));
    assert!(dir.path().join(".cache/CACHEDIR.TAG").is_file(), "the cache is tagged again");
    says_nothing(&builds, "no build for the cache's entries");
    interrupt(child);
}

/// A folder tagged as a cache (`CACHEDIR.TAG`) holds no inputs; its tag going (or made no
/// tag) makes it a folder of the payload, read at once, and a tag coming back drops it.
#[test]
fn a_cache_tag_coming_or_going_in_a_payload_is_seen_at_once() {
    let dir = support::example("prebuilt-plugin");
    let cache = dir.path().join("dist/runtime/cache");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(cache.join("x.txt"), "x").unwrap();
    let tag = cache.join("CACHEDIR.TAG");
    std::fs::write(&tag, "Signature: 8a477f597d28d172789f06886806bc55\n").unwrap();
    let published = dir.path().join("artifact/runtime/cache/x.txt");
    let (child, builds) = watching(dir.path());
    assert!(!published.exists(), "a cache is no payload");
    // What a tool writes in its cache is no change of the payload: no build.
    std::fs::create_dir(cache.join("sub")).unwrap();
    std::fs::write(cache.join("sub/y.txt"), "y").unwrap();
    std::fs::write(cache.join("z.txt"), "z").unwrap();
    assert!(builds.recv_timeout(Duration::from_millis(700)).is_err(), "a write in a cache built nothing");
    std::fs::remove_file(&tag).unwrap();
    while !published.exists() {
        next_build(&builds);
    }
    std::fs::write(&tag, "Signature: 8a477f597d28d172789f06886806bc55\n").unwrap();
    while published.exists() {
        next_build(&builds);
    }
    std::fs::write(&tag, "not a tag\n").unwrap();
    while !published.exists() {
        next_build(&builds);
    }
    interrupt(child);
}

/// What a payload would lose that appears in it while watching (a symbolic link, a
/// dependency folder) fails the next build, though it changes no input; gone, it publishes.
/// A cache its scripts leave (`__pycache__`) is no loss: no build at all.
#[test]
fn a_link_or_a_dependency_folder_appearing_in_a_payload_fails_the_watch_build() {
    let dir = support::example("prebuilt-plugin");
    let runtime = dir.path().join("dist/runtime");
    let (child, builds) = watching(dir.path());
    std::fs::create_dir(runtime.join("__pycache__")).unwrap();
    std::fs::write(runtime.join("__pycache__/format.cpython-311.pyc"), "").unwrap();
    // Past the debounce: a build it started would be the next one.
    std::thread::sleep(std::time::Duration::from_millis(500));
    std::os::unix::fs::symlink("package.json", runtime.join("link.json")).unwrap();
    let failed = next_build(&builds);
    assert_eq!(failed["diagnostics"][0]["code"], "AB4745", "{failed:#}");
    std::fs::remove_file(runtime.join("link.json")).unwrap();
    assert_eq!(next_build(&builds)["ok"], true);
    std::fs::create_dir(runtime.join("node_modules")).unwrap();
    let failed = next_build(&builds);
    assert_eq!(failed["diagnostics"][0]["code"], "AB4745", "{failed:#}");
    interrupt(child);
}

/// A folder a project imports by its own path and through a link (`vendor` → `libs`) is one
/// inotify watch: an edit there is said under both paths, and the link pointed elsewhere
/// leaves the folder's own path watched (its edits went unseen).
#[test]
fn a_folder_imported_by_two_paths_is_watched_under_both() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let example = support::repo().join("examples/monorepo");
    support::copy_tree(&example.join("plugins/guard"), &root.join("plugins/guard"));
    support::copy_tree(&example.join("shared"), &root.join("libs/shared"));
    support::copy_tree(&example.join("shared"), &root.join("libs2/shared"));
    std::os::unix::fs::symlink("libs", root.join("vendor")).unwrap();
    let handler = root.join("plugins/guard/src/hooks/no-secrets.ts");
    let text = std::fs::read_to_string(&handler).unwrap();
    let text = text.replace("'../../../../shared/log.js'", "'../../../../libs/shared/log.js'");
    std::fs::write(&handler, text.replace("'../../../../shared/redact'", "'../../../../vendor/shared/redact'"))
        .unwrap();
    let (child, builds) = watching(&root.join("plugins/guard"));
    let redact = root.join("libs/shared/redact/index.ts");
    let append = |line: &str| {
        let text = std::fs::read_to_string(&redact).unwrap();
        std::fs::write(&redact, format!("{text}{line}\n")).unwrap();
    };
    append("export const EDITED = 1;");
    let both = ["../../libs/shared/redact/index.ts", "../../vendor/shared/redact/index.ts"];
    assert_eq!(next_build(&builds)["changed"], serde_json::json!(both));
    std::fs::remove_file(root.join("vendor")).unwrap();
    std::os::unix::fs::symlink("libs2", root.join("vendor")).unwrap();
    assert_eq!(next_build(&builds)["ok"], true);
    append("export const AGAIN = 2;");
    assert_eq!(next_build(&builds)["changed"], serde_json::json!([both[0]]));
    interrupt(child);
}

/// A link appearing where a route would be fails the next build (AB4802), though it changes
/// no input; gone, it publishes again. An editor's lock file beside a route is no route.
#[test]
fn a_link_appearing_where_a_route_would_be_fails_the_watch_build() {
    let dir = support::example("routes");
    let events = dir.path().join("src/events");
    let (child, builds) = watching(dir.path());
    std::os::unix::fs::symlink("stop.tsx", events.join("tool/after.tsx")).unwrap();
    let failed = next_build(&builds);
    assert_eq!(failed["diagnostics"][0]["code"], "AB4802", "{failed:#}");
    std::fs::remove_file(events.join("tool/after.tsx")).unwrap();
    assert_eq!(next_build(&builds)["ok"], true);
    std::os::unix::fs::symlink("user@host.1:1", events.join(".#stop.tsx")).unwrap();
    let stop = events.join("stop.tsx");
    let text = std::fs::read_to_string(&stop).unwrap();
    std::fs::write(&stop, text.replacen("Asks for one more pass", "Asks once more", 1)).unwrap();
    let built = next_build(&builds);
    assert_eq!((&built["ok"], &built["diagnostics"]), (&true.into(), &serde_json::json!([])), "{built:#}");
    // A folder of routes moved in tagged as a cache (which the walk never enters) fails it
    // too.
    let tagged = dir.path().join("session");
    std::fs::rename(events.join("session"), &tagged).unwrap();
    assert_eq!(next_build(&builds)["ok"], true);
    std::fs::write(tagged.join("CACHEDIR.TAG"), "Signature: 8a477f597d28d172789f06886806bc55\n").unwrap();
    std::fs::rename(&tagged, events.join("session")).unwrap();
    let failed = next_build(&builds);
    assert_eq!(failed["diagnostics"][0]["code"], "AB4802", "{failed:#}");
    // Its tag gone, its routes are built.
    std::fs::remove_file(events.join("session/CACHEDIR.TAG")).unwrap();
    let built = next_build(&builds);
    let hooks = built["hooks"].as_array().unwrap();
    assert!(hooks.iter().any(|hook| hook["event"] == "session/start"), "{built:#}");
    interrupt(child);
}

#[test]
fn a_folder_above_the_project_renamed_makes_its_next_build_fail_never_publish_where_it_was() {
    let dir = workspace_of_policies(&["above/policy"]);
    std::fs::write(dir.path().join("above/policy/notes.md"), "read by no stage\n").unwrap();
    let (child, builds) = watching(&dir.path().join("above/policy"));
    // No event of the project's own: its watches follow the folders under their old names,
    // so an edit there looked like a removal, and the build published where nothing is.
    std::fs::rename(dir.path().join("above"), dir.path().join("moved")).unwrap();
    std::fs::write(dir.path().join("moved/policy/notes.md"), "edited\n").unwrap();
    let failed = next_build(&builds);
    assert_eq!(failed["ok"], false, "{failed:#}");
    assert!(!dir.path().join("above").exists(), "nothing is published where the project was");
    std::fs::rename(dir.path().join("moved"), dir.path().join("above")).unwrap();
    edit_stop(&dir.path().join("above/policy"), "edited back home");
    until_published(&builds, &dir.path().join("above/policy/artifact"), "edited back home");
    interrupt(child);
}

#[test]
fn a_folder_of_projects_becoming_an_artifact_drops_them_and_one_ceasing_to_be_finds_them() {
    let dir = workspace_of_policies(&["a", "group/b"]);
    let (child, builds) = watching_workspace(dir.path(), 2);
    let manifest = dir.path().join("group/agent-bundle.manifest.json");
    // (Begun as a build writes one: any other file of that name makes no artifact.)
    std::fs::write(
        &manifest,
        "{\n  \"compiler\": {\n    \"name\": \"agent-bundle\",\n    \"version\": \"0\"\n  }\n}\n",
    )
    .unwrap();
    assert_eq!(next_build(&builds), serde_json::json!({ "project": "group/b", "dropped": true }));
    std::fs::remove_file(&manifest).unwrap();
    let found = next_build(&builds);
    assert_eq!((&found["project"], &found["ok"]), (&Value::from("group/b"), &Value::Bool(true)), "{found:#}");
    interrupt(child);
}

#[test]
fn a_dead_remote_is_warned_about_once_in_the_round_it_failed_not_when_the_session_ends() {
    let dir = support::example("policy");
    let remote = format!("http://127.0.0.1:{}/cache", crate::support::daemon::free_port()); // nothing listens
    let cache = tempfile::tempdir().unwrap();
    let cache = cache.path().to_str().unwrap();
    let (child, builds) =
        start_watch(dir.path(), &["watch", "--json", "--cache-dir", cache, "--remote-cache", &remote]);
    let first = next_build(&builds);
    let warnings = first["work"]["cacheWarnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{first:#}");
    assert!(warnings[0].as_str().unwrap().contains("unreachable or failing"), "{warnings:?}");
    edit_stop(dir.path(), "edited");
    let next = next_build(&builds);
    assert_eq!(next["work"]["cacheWarnings"], serde_json::json!([]), "one warning for the session: {next:#}");
    interrupt(child);

    // On a terminal, the warning comes before the status line that ends its round.
    let (fresh, cache) = (support::example("policy"), tempfile::tempdir().unwrap());
    let mut session = support::bin()
        .args(["watch", "--cache-dir", cache.path().to_str().unwrap(), "--remote-cache", &remote])
        .current_dir(fresh.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(session.stderr.take().unwrap()).lines().map(Result::unwrap);
    let first_round: Vec<String> = stderr.by_ref().take_while(|line| !line.starts_with("[watch]")).collect();
    // (Its stderr kept open till the end: the session says it stopped there.)
    interrupt(session);
    assert!(first_round.iter().any(|line| line.contains("unreachable or failing")), "{first_round:#?}");
}

/// A session that ends after a clean build leaves the stamp that build would have left, so
/// the next `build` of the unchanged project is a no-op; not when its artifact was edited
/// meanwhile (the build then puts it right).
#[test]
fn a_session_ended_after_a_clean_build_leaves_its_stamp() {
    let dir = support::example("policy");
    let stop = dir.path().join("src/hooks/stop.ts");
    let (child, builds) = watching(dir.path());
    let original = std::fs::read_to_string(&stop).unwrap();
    std::fs::write(&stop, original.replace("summarize what you changed", "list what you changed")).unwrap();
    assert_eq!(next_build(&builds)["ok"], true);
    // Past the racy window of the edit and of the copy's folders: a stamp holds then.
    std::thread::sleep(Duration::from_millis(1100));
    interrupt(child);
    let (code, report) = support::build_json(dir.path(), &[]);
    assert_eq!((code, &report["upToDateBy"]), (0, &Value::from("stamp")), "{report:#}");

    // A wrapper resized by hand is published again; one edited in place at its size is not
    // (the session sees a file of the artifact go or change size, not every byte), and then
    // no stamp vouches for it.
    let dir = support::example("policy");
    let (child, builds) = watching(dir.path());
    let artifact = dir.path().join("artifact");
    let good = artifact_files(&artifact);
    let wrapper = good.keys().find(|path| path.starts_with("hooks/stop-stop-")).unwrap();
    std::fs::write(artifact.join(wrapper), "edited by hand").unwrap();
    assert_eq!(next_build(&builds)["published"]["written"], serde_json::json!([wrapper]));
    assert_eq!(artifact_files(&artifact), good);
    let mut same_size = good[wrapper].clone();
    same_size[0] ^= 1;
    std::fs::write(artifact.join(wrapper), same_size).unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    interrupt(child);
    let (code, report) = support::build_json(dir.path(), &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_ne!(report["upToDateBy"], "stamp", "{report:#}");
    assert_eq!(artifact_files(&artifact), good);
}

/// A session's end records its artifact in the cache as a build would, for a project whose
/// imports reach code above its root too: the next build (within a second of the stamp,
/// which it does not trust by time) runs no stage, and a fresh checkout is restored.
#[test]
fn a_session_ended_records_its_artifact_for_a_project_importing_shared_code() {
    let (repo, checkout, cache) =
        (support::example("monorepo"), support::example("monorepo"), tempfile::tempdir().unwrap());
    let cache = cache.path().to_str().unwrap();
    let project = repo.path().join("plugins/guard");
    let (child, builds) = start_watch(&project, &["watch", "--json", "--cache-dir", cache]);
    assert_eq!(next_build(&builds)["ok"], true);
    interrupt(child);
    let (code, report) = support::build_json(&project, &["--cache-dir", cache]);
    assert_eq!(code, 0, "{report:#}");
    assert!(report["upToDateBy"].is_string() && report["work"]["cacheMisses"] == 0, "{report:#}");
    let (code, report) = support::build_json(&checkout.path().join("plugins/guard"), &["--cache-dir", cache]);
    assert_eq!((code, &report["restoredFromCache"]), (0, &Value::from(true)), "{report:#}");
}

/// A folder the session may not list (nor watch) is left out with a warning, and the
/// session goes on: made readable, its files are read.
#[test]
fn a_folder_the_session_cannot_list_is_left_out_until_it_is_readable() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, cache) = (support::example("policy"), tempfile::tempdir().unwrap());
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("notes.md"), "not a plugin's\n").unwrap();
    let command = crate::builds::unprivileged_command(&[dir.path(), cache.path()]);
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o000)).unwrap();
    let args = ["watch", "--json", "--cache-dir", cache.path().to_str().unwrap()];
    let (child, builds) = start_watch_with(command, dir.path(), &args);
    let first = next_build(&builds);
    assert_eq!(first["ok"], true, "{first:#}");
    assert_eq!(first["diagnostics"][0]["code"], "AB4008", "{first:#}");

    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let readable = next_build(&builds);
    assert_eq!(readable["changed"], serde_json::json!(["data/notes.md"]), "{readable:#}");
    assert_eq!(readable["diagnostics"], serde_json::json!([]), "{readable:#}");

    // A folder moved in holding one that may be read but not searched (mode 644, a folder
    // in it): that one is left out, the rest read, the session goes on.
    let staged = tempfile::tempdir_in(dir.path().parent().unwrap()).unwrap();
    std::fs::create_dir_all(staged.path().join("pkg/x/y")).unwrap();
    std::fs::write(staged.path().join("pkg/readme.md"), "read\n").unwrap();
    std::fs::set_permissions(staged.path().join("pkg/x"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::rename(staged.path().join("pkg"), dir.path().join("pkg")).unwrap();
    let moved_in = next_build(&builds);
    assert_eq!(moved_in["ok"], true, "{moved_in:#}");
    assert_eq!(moved_in["changed"], serde_json::json!(["pkg/readme.md"]), "{moved_in:#}");
    assert!(moved_in["diagnostics"][0]["message"].as_str().unwrap().contains("`pkg/x/`"), "{moved_in:#}");
    interrupt(child);
}

/// A part of the artifact deleted while watching (a file, a folder of it) is published
/// again, as the whole artifact is; the session's own publishes are no such change.
#[test]
fn a_part_of_the_artifact_deleted_is_published_again() {
    let dir = support::example("policy");
    let artifact = dir.path().join("artifact");
    let (child, builds) = watching(dir.path());
    std::fs::remove_file(artifact.join(".claude-plugin/plugin.json")).unwrap();
    let repaired = next_build(&builds);
    assert_eq!(repaired["published"]["written"], serde_json::json!([".claude-plugin/plugin.json"]), "{repaired:#}");
    std::fs::remove_dir_all(artifact.join("hooks")).unwrap();
    let repaired = next_build(&builds);
    assert_eq!(repaired["changed"], serde_json::json!([]));
    assert!(artifact.join("hooks/hooks.json").is_file());
    let extra = builds.recv_timeout(Duration::from_millis(500));
    assert!(extra.is_err(), "a publish of the session's own is no change: {extra:?}");
    // The manifest too: without it the folder is no artifact, but every file there is one
    // the session wrote.
    std::fs::remove_file(artifact.join("agent-bundle.manifest.json")).unwrap();
    std::fs::remove_file(artifact.join(".claude-plugin/plugin.json")).unwrap();
    let repaired = next_build(&builds);
    assert_eq!(repaired["ok"], true, "{repaired:#}");
    assert!(
        artifact.join("agent-bundle.manifest.json").is_file() && artifact.join(".claude-plugin/plugin.json").is_file()
    );
    // Written over with what names no build, it is put back too.
    std::fs::write(artifact.join("agent-bundle.manifest.json"), "{}").unwrap();
    std::fs::remove_file(artifact.join(".claude-plugin/plugin.json")).unwrap();
    let repaired = next_build(&builds);
    assert_eq!(repaired["ok"], true, "{repaired:#}");
    assert!(std::fs::read_to_string(artifact.join("agent-bundle.manifest.json")).unwrap().contains("\"compiler\""));
    // A file of someone else's beside them: the folder is not the session's to replace.
    std::fs::remove_file(artifact.join("agent-bundle.manifest.json")).unwrap();
    std::fs::write(artifact.join("notes.txt"), "mine\n").unwrap();
    let refused = next_build(&builds);
    assert_eq!(refused["ok"], false, "{refused:#}");
    assert_eq!(std::fs::read_to_string(artifact.join("notes.txt")).unwrap(), "mine\n");
    interrupt(child);
}

/// Projects one inside the other share the folders of the inner one: either dropped from
/// the session leaves the other watched. The inner one's config gone and back, it is built
/// again, and the outer one still sees the module it imports from the inner one's folder;
/// the outer one's config gone, the inner one's edits still build it.
#[test]
fn a_nested_or_enclosing_project_dropped_leaves_the_other_one_watched() {
    let dir = workspace_of_policies(&["outer", "outer/inner"]);
    let (outer, inner) = (dir.path().join("outer"), dir.path().join("outer/inner"));
    let tag = inner.join("shared/tag.ts");
    std::fs::create_dir(tag.parent().unwrap()).unwrap();
    std::fs::write(&tag, "export const tag = 'first tag';\n").unwrap();
    let stop = outer.join("src/hooks/stop.ts");
    let text = std::fs::read_to_string(&stop).unwrap().replace("'policy: summarize", "tag + ': summarize");
    std::fs::write(&stop, format!("import {{ tag }} from '../../inner/shared/tag.ts';\n{text}")).unwrap();
    let (child, builds) = watching_workspace(dir.path(), 2);
    let dropped = |project: &str| {
        let gone = serde_json::json!({ "project": project, "dropped": true });
        while next_build(&builds) != gone {}
    };

    let (config, kept) = (inner.join("agent-bundle.config.ts"), dir.path().join("kept-config.ts"));
    std::fs::rename(&config, &kept).unwrap();
    dropped("outer/inner");
    std::fs::rename(&kept, &config).unwrap();
    while next_build(&builds)["project"] != "outer/inner" {}
    std::fs::write(&tag, "export const tag = 'second tag';\n").unwrap();
    until_published(&builds, &outer.join("artifact"), "second tag");
    edit_stop(&inner, "the inner one found again");
    until_published(&builds, &inner.join("artifact"), "the inner one found again");

    std::fs::remove_file(outer.join("agent-bundle.config.ts")).unwrap();
    dropped("outer");
    let inner_stop = inner.join("src/hooks/stop.ts");
    let text = std::fs::read_to_string(&inner_stop).unwrap();
    std::fs::write(&inner_stop, text.replace("the inner one found again", "the outer one gone")).unwrap();
    until_published(&builds, &inner.join("artifact"), "the outer one gone");
    interrupt(child);
}

/// A project inside one that `--filter` leaves out has no session around it watching its
/// folders: the search watches them, so its config gone and back, or a project copied in
/// there, is found.
#[test]
fn a_project_inside_one_the_filter_leaves_out_is_found_again() {
    let dir = workspace_of_policies(&["outer", "outer/inner"]);
    let (child, builds) = start_watch(dir.path(), &["watch", "--workspace", "--json", "--filter", "inner"]);
    assert_eq!(next_build(&builds)["ok"], true);
    let (config, kept) = (dir.path().join("outer/inner/agent-bundle.config.ts"), dir.path().join("kept-config.ts"));
    std::fs::rename(&config, &kept).unwrap();
    assert_eq!(next_build(&builds), serde_json::json!({ "project": "outer/inner", "dropped": true }));
    std::fs::rename(&kept, &config).unwrap();
    let found = next_build(&builds);
    assert_eq!((&found["project"], &found["ok"]), (&Value::from("outer/inner"), &Value::Bool(true)), "{found:#}");
    support::copy_tree(&support::repo().join("examples/policy"), &dir.path().join("outer/more/inner"));
    while next_build(&builds)["project"] != "outer/more/inner" {}
    interrupt(child);
}

/// Points the symbolic link `link` at `target` in one step, as `ln -sfn` does.
fn repoint(link: &Path, target: &Path) {
    let made = link.with_extension("new");
    std::os::unix::fs::symlink(target, &made).unwrap();
    std::fs::rename(&made, link).unwrap();
}

/// An artifact folder that is a symbolic link is published where it points: pointed
/// elsewhere during a session, there (the old target is left as it was); removed, as a
/// folder of its own in its place.
#[test]
fn an_artifact_link_pointed_elsewhere_or_removed_is_followed_again() {
    let dir = support::example("policy");
    let targets = tempfile::tempdir().unwrap();
    let (one, two) = (targets.path().join("one/plug"), targets.path().join("two/plug"));
    let link = dir.path().join("artifact");
    std::os::unix::fs::symlink(&one, &link).unwrap();
    let (child, builds) = watching(dir.path());
    let first = artifact_files(&one);

    repoint(&link, &two);
    let moved = next_build(&builds);
    assert_eq!((&moved["ok"], &moved["changed"]), (&Value::Bool(true), &serde_json::json!([])), "{moved:#}");
    assert_eq!(artifact_files(&two), first);
    edit_stop(dir.path(), "published at the new target");
    until_published(&builds, &two, "published at the new target");
    assert_eq!(artifact_files(&one), first, "the old target is left as it was");

    std::fs::remove_file(&link).unwrap();
    until_published(&builds, &link, "published at the new target");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_dir(), "a folder in the link's place");
    interrupt(child);
}
