//! `build --workspace`: every project below a directory, in parallel, each on its own.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::support::{self, copy_tree, repo};

/// Each project of a `build --workspace --json` report, and whether it built.
fn outcomes(report: &Value) -> Vec<(&str, bool)> {
    let projects = report["projects"].as_array().unwrap().iter();
    projects.map(|p| (p["project"].as_str().unwrap(), p["ok"].as_bool().unwrap())).collect()
}

#[test]
fn a_workspace_build_publishes_every_good_project_and_fails_on_a_bad_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_tree(&repo().join("examples/policy"), &root.join("plugins/policy"));
    copy_tree(&repo().join("examples/guarded"), &root.join("plugins/guarded"));
    copy_tree(&repo().join("examples/guarded"), &root.join("plugins/broken"));
    fs::write(root.join("plugins/broken/src/hooks/audit.ts"), "export default (").unwrap();
    copy_tree(&repo().join("examples/guarded"), &root.join("scratch/ignored"));
    // Honoured without a `.git` too (a CI job's copy of the sources).
    fs::write(root.join(".gitignore"), "scratch/\n").unwrap();

    let output = support::run(root, &["build", "--workspace", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let projects = outcomes(&report);
    assert_eq!(projects, [("plugins/broken", false), ("plugins/guarded", true), ("plugins/policy", true)]);
    assert!(root.join("plugins/policy/artifact/agent-bundle.manifest.json").is_file());
    assert!(!root.join("plugins/broken/artifact").exists());

    // On a terminal's stream, each diagnostic names its file below the workspace, a
    // warning of a project that built too.
    fs::write(root.join("plugins/policy/agent-bundle.config.mjs"), "export default {};\n").unwrap();
    let output = support::run(root, &["build", "--workspace"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--> plugins/broken/src/hooks/audit.ts:1:"), "{stderr}");
    assert!(
        stderr.contains("warning[AB4006]") && stderr.contains("plugins/policy/agent-bundle.config.mjs"),
        "{stderr}"
    );
    fs::remove_file(root.join("plugins/policy/agent-bundle.config.mjs")).unwrap();

    // A filter reads a folder's path as a shell completes it, too (`./` alone names none).
    let output = support::run(root, &["build", "--workspace", ".", "--filter", "./"]);
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    for filter in ["policy", "./plugins/policy/"] {
        let output = support::run(root, &["build", "--workspace", ".", "--filter", filter, "--json"]);
        assert_eq!(output.status.code(), Some(0), "{filter}");
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(report["projects"].as_array().unwrap().len(), 1, "{filter}: {report:#}");
    }

    // A filter that keeps nothing is a usage mistake, not an empty workspace: a watch
    // session too says so at once, instead of waiting for a project to appear.
    for command in ["build", "watch"] {
        let output = support::run(root, &[command, "--workspace", ".", "--filter", "nope"]);
        assert_eq!(output.status.code(), Some(2), "{command}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let said = stderr.contains("none of the 3 project(s) below") && stderr.contains("matches --filter nope");
        assert!(said, "{command}: {stderr}");
        // And names the projects there are.
        assert!(stderr.contains("a part of a project's name: ") && stderr.contains("plugins/policy"), "{stderr}");
    }
    // A workspace whose projects its ignore rules all leave out says which it left out.
    let ignoring = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("examples/guarded"), &ignoring.path().join("pk"));
    fs::write(ignoring.path().join(".gitignore"), "pk/\n").unwrap();
    let output = support::run(ignoring.path(), &["build", "--workspace", "."]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("(the ignore rules leave out pk/agent-bundle.config.ts"), "{stderr}");
    // So is a build of a folder with no project at all: nothing to do. (A watch session
    // waits there for the first one.)
    let empty = tempfile::tempdir().unwrap();
    for command in ["build", "types"] {
        let output = support::run(empty.path(), &[command, "--workspace", "."]);
        assert_eq!(output.status.code(), Some(2), "{command}");
        assert!(String::from_utf8_lossy(&output.stderr).contains("no agent-bundle projects found below"));
    }
}

#[test]
fn a_workspace_that_is_itself_a_project_names_it_dot() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("examples/guarded"), dir.path());
    fs::write(dir.path().join("src/hooks/audit.ts"), "export default (").unwrap();
    let output = support::run(dir.path(), &["build", "--workspace", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["projects"][0]["project"], ".");
    let output = support::run(dir.path(), &["build", "--workspace"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // (Its files are named from the working directory, which it is.)
    assert!(stderr.contains("--> src/hooks/audit.ts:1:"), "{stderr}");
    // `--filter` reads the name shown.
    let output = support::run(dir.path(), &["build", "--workspace", "--filter", ".", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["projects"][0]["project"], ".", "{report:#}");
}

/// What would be a project but for a link in its config's place, or a stray manifest beside
/// it, is said, not passed over: a link is a warning (as `build --root` refuses it), and a
/// manifest no build wrote makes no artifact of the folder. Projects of one plugin name are
/// warned of.
#[test]
fn a_linked_config_is_warned_of_and_a_stray_manifest_hides_no_project() {
    let dir = tempfile::tempdir().unwrap();
    for project in ["linked", "stray", "plain"] {
        copy_tree(&repo().join("examples/policy"), &dir.path().join(project));
    }
    let config = dir.path().join("linked/agent-bundle.config.ts");
    fs::rename(&config, dir.path().join("linked/real.config.ts")).unwrap();
    std::os::unix::fs::symlink("real.config.ts", &config).unwrap();
    fs::write(dir.path().join("stray/agent-bundle.manifest.json"), "{}").unwrap();
    let output = support::run(dir.path(), &["build", "--workspace", ".", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let projects: Vec<&str> =
        report["projects"].as_array().unwrap().iter().map(|p| p["project"].as_str().unwrap()).collect();
    assert_eq!(projects, ["plain", "stray"], "{report:#}");
    let warning = format!("cannot read {} (a symbolic link, which no build follows)", config.display());
    assert!(report["warnings"][0].as_str().unwrap().starts_with(&warning), "{report:#}");
    // Two projects of one plugin name: installing one would replace the other.
    let same = "projects plain, stray are all plugin `policy`: installing one would replace another";
    assert_eq!(report["warnings"][1], same, "{report:#}");
    // A folder or a special file of a config's name is said too.
    fs::create_dir_all(dir.path().join("folder/agent-bundle.config.ts")).unwrap();
    fs::create_dir(dir.path().join("fifo")).unwrap();
    let fifo = std::ffi::CString::new(dir.path().join("fifo/agent-bundle.config.ts").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let output = support::run(dir.path(), &["build", "--workspace", ".", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let warnings: Vec<&str> = report["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
    for said in ["agent-bundle.config.ts is a folder, which is never read", "agent-bundle.config.ts is a special file"]
    {
        assert!(warnings.iter().any(|warning| warning.contains(said)), "{said}: {warnings:#?}");
    }
}

/// Projects whose artifact folders are one (a link to another's) fail, each naming the
/// others: each build would replace another's artifact, every run. A workspace an ignore
/// rule leaves out says which.
#[test]
fn projects_publishing_to_one_folder_fail_and_an_ignored_workspace_says_why() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("examples/policy"), &dir.path().join("policy"));
    copy_tree(&repo().join("examples/guarded"), &dir.path().join("guarded"));
    copy_tree(&repo().join("examples/hooks-and-scripts"), &dir.path().join("loop"));
    std::os::unix::fs::symlink(dir.path().join("policy/artifact"), dir.path().join("loop/artifact")).unwrap();
    let output = support::run(dir.path(), &["build", "--workspace", ".", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((&report["failed"], &report["interrupted"]), (&2.into(), &0.into()), "{report:#}");
    for project in report["projects"].as_array().unwrap() {
        let shared = project["project"] != "guarded";
        assert_eq!(project["ok"], !shared, "{report:#}");
        if shared {
            assert!(project["error"].as_str().unwrap().contains("each build would replace the other's"), "{report:#}");
        }
    }
    // A project refused on its own (its artifact the workspace itself) refuses no other.
    let refused_alone = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("examples/guarded"), &refused_alone.path().join("a"));
    copy_tree(&repo().join("examples/hooks-and-scripts"), &refused_alone.path().join("c"));
    std::os::unix::fs::symlink("..", refused_alone.path().join("c/artifact")).unwrap();
    let output = support::run(refused_alone.path(), &["build", "--workspace", ".", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let ok = outcomes(&report);
    assert_eq!(ok, [("a", true), ("c", false)], "{report:#}");
    // One `--filter` leaves out still publishes where it does: a project selected inside its
    // artifact folder, never built yet, is refused.
    let filtered = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("examples/guarded"), &filtered.path().join("alpha"));
    copy_tree(&repo().join("examples/hooks-and-scripts"), &filtered.path().join("cee"));
    std::os::unix::fs::symlink("../alpha/artifact/sub", filtered.path().join("cee/artifact")).unwrap();
    let output = support::run(filtered.path(), &["build", "--workspace", ".", "--filter", "cee", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["failed"], 1, "{report:#}");
    assert!(!filtered.path().join("alpha/artifact").exists(), "nothing published into alpha's folder");
    // Nor does one whose artifact is another project's folder, which it cannot publish to.
    fs::remove_file(refused_alone.path().join("c/artifact")).unwrap();
    std::os::unix::fs::symlink("../a", refused_alone.path().join("c/artifact")).unwrap();
    let output = support::run(refused_alone.path(), &["build", "--workspace", ".", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["projects"][0]["ok"], true, "{report:#}");
    assert!(!dir.path().join("policy/artifact").exists(), "neither published");
    // One inside another's, made or not yet; a cache inside one: refused as a build of it
    // alone refuses it.
    fs::remove_file(dir.path().join("loop/artifact")).unwrap();
    std::os::unix::fs::symlink("../policy/artifact/inner", dir.path().join("loop/artifact")).unwrap();
    let output = support::run(dir.path(), &["build", "--workspace", ".", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["failed"], 1, "the one inside another's alone, made or not: {report:#}");
    let inside = report["projects"].as_array().unwrap().iter().find(|p| p["project"] == "loop").unwrap();
    assert!(inside["error"].as_str().unwrap().contains("is inside the artifact folder of policy's"), "{report:#}");
    let cache = dir.path().join("guarded/artifact/cache");
    let output = support::bin()
        .args(["build", "--workspace", ".", "--filter", "guarded", "--json", "--cache-dir"])
        .arg(&cache)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is inside the artifact folder") && !cache.exists(), "{stderr}");

    fs::create_dir(dir.path().join(".git")).unwrap();
    fs::write(dir.path().join(".gitignore"), "guarded\n").unwrap();
    let output = support::run(&dir.path().join("guarded"), &["build", "--workspace", "."]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("is ignored by `guarded` in ") && stderr.contains("so nothing below it is searched"),
        "{stderr}"
    );
}

#[test]
fn an_unchanged_workspace_rebuilds_as_up_to_date_and_an_edited_project_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_tree(&repo().join("examples/policy"), &root.join("plugins/policy"));
    copy_tree(&repo().join("examples/guarded"), &root.join("plugins/guarded"));
    // Inputs modified within a second before a build's stamp are never trusted by it, so
    // the copies need one build past that window to be stamped clean.
    assert_eq!(support::run(root, &["build", "--workspace"]).status.code(), Some(0));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(support::run(root, &["build", "--workspace"]).status.code(), Some(0));
    // An edit that changes the artifact (the manifest records each input's hash): a file no
    // hook imports would be up to date, answered by the cache that knows that tree already.
    let audit = root.join("plugins/guarded/src/hooks/audit.ts");
    let edited = fs::read_to_string(&audit).unwrap() + "// edited\n";
    fs::write(&audit, edited).unwrap();
    let output = support::run(root, &["build", "--workspace"]);
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = |project: &str| stdout.lines().find(|l| l.contains(project)).unwrap_or_default().to_owned();
    assert!(line("plugins/policy").contains("(up to date, "), "{stdout}");
    let guarded = line("plugins/guarded");
    // (Built, or restored from the cache when an earlier run built this tree already.)
    assert!(guarded.contains(" written") && !guarded.contains(" 0 written"), "{stdout}");
}

/// Each project's `work` counts its own cache use: the projects' counts add up to the
/// run's (`last-build.json`), which a counter shared by projects building at once would
/// overshoot.
#[test]
fn each_project_reports_its_own_cache_use() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    copy_tree(&repo().join("examples/policy"), &root.join("plugins/policy"));
    copy_tree(&repo().join("examples/guarded"), &root.join("plugins/guarded"));
    let cache = dir.path().join("cache");
    let output = support::run(&root, &["build", "--workspace", "--json", "--cache-dir", cache.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let misses: Vec<u64> =
        report["projects"].as_array().unwrap().iter().map(|p| p["work"]["cacheMisses"].as_u64().unwrap()).collect();
    assert!(misses.iter().all(|&m| m > 0), "{misses:?}");
    let run: serde_json::Value = serde_json::from_slice(&fs::read(cache.join("v1/last-build.json")).unwrap()).unwrap();
    assert_eq!(misses.iter().sum::<u64>(), run["action_misses"].as_u64().unwrap(), "{run:#}");
}

/// A workspace report that cannot be written (a full disk) is an error, not silence.
#[test]
fn a_workspace_report_that_cannot_be_written_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("examples/policy"), &dir.path().join("plugins/policy"));
    let full = fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let output = support::bin().args(["build", "--workspace"]).current_dir(dir.path()).stdout(full).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot write to standard output"));
}

/// An ignore file or a folder the search cannot read is said, as git says it (the projects
/// the file would ignore are built, those in the folder are not), and again when the search
/// is answered from its memo; made readable, the folder is searched.
#[test]
fn what_the_search_cannot_read_is_warned_about_every_time_and_searched_once_readable() {
    let (dir, cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for project in ["keep", "vendored", "locked/inside"] {
        copy_tree(&repo().join("examples/policy"), &dir.path().join(project));
    }
    let ignore = dir.path().join(".gitignore");
    fs::write(&ignore, "vendored/\n").unwrap();
    let mode =
        |path: &Path, mode| fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
    let locked = dir.path().join("locked");
    mode(&ignore, 0o000);
    mode(&locked, 0o000);
    let args = ["build", "--workspace", ".", "--json", "--cache-dir", cache.path().to_str().unwrap()];
    let mut trees: &[&Path] = &[dir.path(), cache.path()];
    let mut build = || {
        let output = crate::builds::unprivileged(dir.path(), std::mem::take(&mut trees), &args);
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let report: Value = serde_json::from_slice(&output.stdout).unwrap();
        let projects: Vec<String> =
            report["projects"].as_array().unwrap().iter().map(|p| p["project"].as_str().unwrap().to_owned()).collect();
        // The document says what the search could not read, as stderr does.
        let warnings: Vec<&str> = report["warnings"].as_array().unwrap().iter().map(|w| w.as_str().unwrap()).collect();
        let unread: Vec<&&str> = warnings.iter().filter(|warning| warning.starts_with("cannot read")).collect();
        assert_eq!(unread.len(), stderr.matches("cannot read").count(), "{report:#}");
        assert!(warnings.iter().all(|warning| stderr.contains(&format!("warning: {warning}"))), "{report:#}");
        (projects, stderr)
    };
    // The first search makes the memo's folder, the second saves the memo, the third is
    // answered from it.
    for _ in 0..3 {
        let (projects, stderr) = build();
        assert_eq!(projects, ["keep", "vendored"], "{stderr}");
        for path in [&ignore, &locked] {
            let warning = format!("warning: cannot read {} (permission denied)", path.display());
            assert_eq!(stderr.matches(&warning).count(), 1, "{stderr}");
        }
    }
    let memo: Value =
        serde_json::from_slice(&fs::read(dir.path().join(".agent-bundle/workspace.json")).unwrap()).unwrap();
    assert_eq!(memo["unreadable"].as_array().map(Vec::len), Some(2), "{memo:#}");
    let seen: Vec<&str> = memo["seen"].as_array().unwrap().iter().map(|row| row[0].as_str().unwrap()).collect();
    let once: std::collections::BTreeSet<&str> = seen.iter().copied().collect();
    assert_eq!(seen.len(), once.len(), "each state once: {seen:?}");

    mode(&locked, 0o755);
    let (projects, _) = build();
    assert_eq!(projects, ["keep", "locked/inside", "vendored"]);
}

/// Ctrl-C in the middle of a workspace build: the publishes under way finish, no other
/// starts, and nothing is left beside an artifact; the command exits with 130.
#[test]
fn an_interrupted_workspace_build_leaves_every_artifact_whole_and_nothing_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    for project in 0..6 {
        let root = dir.path().join(format!("p{project}"));
        copy_tree(&repo().join("examples/prebuilt-plugin"), &root);
        fs::create_dir_all(root.join("dist/runtime/data")).unwrap();
        for blob in 0..4 {
            fs::write(root.join(format!("dist/runtime/data/{blob}.bin")), vec![project as u8; 1 << 20]).unwrap();
        }
    }
    let mut unpublished = false;
    for delay in [5u8, 15, 30, 60] {
        // The sources only: an artifact's copy must show whether this round published it.
        let sources = (0..6).map(|project| dir.path().join(format!("p{project}/dist")));
        for blob in sources.flat_map(walkdir::WalkDir::new).map(Result::unwrap) {
            if blob.path().extension().is_some_and(|extension| extension == "bin") {
                let mut bytes = fs::read(blob.path()).unwrap();
                bytes.push(delay);
                fs::write(blob.path(), bytes).unwrap();
            }
        }
        let mut child = support::bin()
            .args(["build", "--workspace", ".", "--no-cache"])
            .current_dir(dir.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // A signal before the handler is in place kills, as for any process.
        while !catches(child.id(), libc::SIGINT) {
            assert!(child.try_wait().unwrap().is_none(), "a build catches Ctrl-C from its start");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        std::thread::sleep(std::time::Duration::from_millis(u64::from(delay)));
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let output = child.wait_with_output().unwrap();
        let (status, printed) = (output.status, String::from_utf8_lossy(&output.stdout));
        assert!(matches!(status.code(), Some(0 | 130)), "{status}");
        // What Ctrl-C stopped is counted in the summary, not said to have failed.
        assert!(!printed.contains("FAILED"), "{printed}");
        let summary = printed.lines().last().unwrap_or_default();
        assert_eq!(summary.contains("not built (interrupted)"), printed.lines().count() < 7, "{printed}");
        for project in (0..6).map(|project| dir.path().join(format!("p{project}"))) {
            let names: Vec<_> = fs::read_dir(&project).unwrap().map(|entry| entry.unwrap().file_name()).collect();
            assert!(!names.iter().any(|name| name.to_string_lossy().contains(".agent-bundle-")), "{names:?}");
            let artifact = project.join("artifact");
            if artifact.exists() {
                let manifest = fs::read_to_string(artifact.join("agent-bundle.manifest.json")).unwrap();
                assert!(manifest.contains("runtime/data/3.bin"), "a whole artifact");
            }
            // A project whose artifact does not hold this round's bytes was not published.
            let published = walkdir::WalkDir::new(&artifact)
                .into_iter()
                .flatten()
                .find(|entry| entry.file_name() == "3.bin")
                .and_then(|entry| fs::read(entry.path()).ok())
                .is_some_and(|bytes| bytes.last() == Some(&delay));
            unpublished |= status.code() == Some(130) && !published;
        }
    }
    assert!(unpublished, "some interrupted round left a project unpublished: no publish starts after Ctrl-C");
}

/// Whether process `pid` has a handler for `signal` (`SigCgt` of its status).
fn catches(pid: u32, signal: libc::c_int) -> bool {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let caught = status.lines().find_map(|line| line.strip_prefix("SigCgt:")).unwrap_or_default();
    u64::from_str_radix(caught.trim(), 16).is_ok_and(|mask| mask & (1 << (signal - 1)) != 0)
}

/// Under a limit on address space (`ulimit -v`, as strict overcommit has), not every thread
/// asked for can reserve its deep stack: the workspace builds on as many as can be had.
#[test]
fn a_workspace_builds_on_the_threads_a_memory_limit_leaves() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("examples/monorepo"), dir.path());
    // 4 GiB: room for the process and a few 256 MiB stacks, not for 32.
    let limited = "ulimit -v 4194304 && exec \"$0\" \"$@\"";
    let output = std::process::Command::new("sh")
        .args(["-c", limited, env!("CARGO_BIN_EXE_agent-bundle"), "build", "--workspace", "-j", "32", "--json"])
        .env("AGENT_BUNDLE_CACHE_DIR", dir.path().join(".cache"))
        .current_dir(dir.path())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{report:#}");
    assert_eq!(report["projects"].as_array().unwrap().len(), 2, "{report:#}");
}
