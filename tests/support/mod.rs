//! Helpers shared by the integration tests: run the real binary on copies of real projects.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub mod daemon;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `agent-bundle` binary under test, with a cache shared by the test run (never the
/// user's own cache); tests about caching pass their own `--cache-dir`.
pub fn bin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agent-bundle"));
    command.env("AGENT_BUNDLE_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("test-cache"));
    command.env_remove("AGENT_BUNDLE_REMOTE_CACHE");
    command
}

/// A fresh copy of `examples/<name>` (without any built artifact) in a temporary directory.
pub fn example(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("examples").join(name), dir.path());
    dir
}

/// A temporary project made of `(path, text)` files.
pub fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    dir
}

pub fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let relative = entry.path().strip_prefix(from).unwrap();
        if relative.starts_with("artifact") || relative.starts_with(".agent-bundle") {
            continue;
        }
        let target = to.join(relative);
        if entry.file_type().is_dir() {
            fs::create_dir_all(&target).unwrap();
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs `agent-bundle <args>` in `dir`.
pub fn run(dir: &Path, args: &[&str]) -> Output {
    bin().args(args).current_dir(dir).output().unwrap()
}

/// `agent-bundle hooks simulate` in `dir` of `hook` for `target` on `input`, plus `extra`
/// arguments.
pub fn simulate(dir: &Path, target: &str, hook: &str, input: &str, extra: &[&str]) -> Output {
    let mut args = vec!["hooks", "simulate", "--target", target, "--hook", hook, "--input", input];
    args.extend_from_slice(extra);
    run(dir, &args)
}

/// `agent-bundle build --json` in `dir`: the exit code and the parsed report.
pub fn build_json(dir: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let mut args = vec!["build", "--json"];
    args.extend_from_slice(extra);
    let output = run(dir, &args);
    let report = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("build --json printed no JSON ({e}): {}", String::from_utf8_lossy(&output.stderr)));
    (output.status.code().unwrap(), report)
}

/// The example `name` copied to a temporary folder and built (`build --json`), which must
/// succeed without a diagnostic: the folder and the build's report.
pub fn built(name: &str) -> (tempfile::TempDir, serde_json::Value) {
    let dir = example(name);
    let (code, report) = build_json(dir.path(), &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["diagnostics"], serde_json::json!([]), "{name} builds cleanly: {report:#}");
    (dir, report)
}

/// `agent-bundle validate --json` of the artifact the project at `dir` built (`artifact`),
/// without a host's own validator.
pub fn validate_json_command(dir: &Path) -> Command {
    let mut command = bin();
    command.args(["validate", "--artifact", "artifact", "--json", "--no-host-validation"]).current_dir(dir);
    command
}

/// [`validate_json_command`] run: the exit code and the parsed report.
pub fn validate_json(dir: &Path) -> (Option<i32>, serde_json::Value) {
    let output = validate_json_command(dir).output().unwrap();
    let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!("validate --json printed no JSON ({e}): {}", String::from_utf8_lossy(&output.stderr))
    });
    (output.status.code(), report)
}

/// Two string fields of each diagnostic of a `--json` report (`code`, `file`, `message`,
/// `help`, …), in order.
pub fn diagnostic_fields<'a>(report: &'a serde_json::Value, first: &str, second: &str) -> Vec<(&'a str, &'a str)> {
    let field = |diagnostic: &'a serde_json::Value, key: &str| diagnostic[key].as_str().unwrap();
    let diagnostics = report["diagnostics"].as_array().unwrap().iter();
    diagnostics.map(|d| (field(d, first), field(d, second))).collect()
}

/// One count of a build report's `work` (`transpiled`, `bundled`, …).
pub fn work(report: &serde_json::Value, key: &str) -> u64 {
    report["work"][key].as_u64().unwrap()
}

/// Every file of a built artifact, by relative path.
pub fn artifact_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let relative = entry.path().strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            files.insert(relative, fs::read(entry.path()).unwrap());
        }
    }
    files
}

/// Whether process `pid` runs (is not gone, nor a zombie waiting for a reaper that no
/// container may have).
pub fn running(pid: &str) -> bool {
    let stat = fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
    stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z'))
}

/// Starts `command`, sends it `signal` once a process it runs has written its pid to
/// `pid_file`, and returns its output and that pid, once the process is gone or two
/// seconds have passed (the kernel's SIGKILL to a process group lands asynchronously).
pub fn signal_once_running(command: &mut Command, pid_file: &Path, signal: i32) -> (Output, String) {
    let _ = fs::remove_file(pid_file);
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let pid = loop {
        match fs::read_to_string(pid_file) {
            Ok(pid) if !pid.is_empty() => break pid,
            _ if child.try_wait().unwrap().is_some() => {
                let output = child.wait_with_output().unwrap();
                panic!("the command ended before its process started: {}", String::from_utf8_lossy(&output.stderr));
            }
            _ if std::time::Instant::now() > deadline => {
                panic!("no process wrote {} within a minute", pid_file.display())
            }
            _ => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    };
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let output = child.wait_with_output().unwrap();
    for _ in 0..200 {
        if !running(&pid) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    (output, pid)
}

/// The hook of the built artifact in `dir` that `target` runs on `event`, as `hooks list
/// --json` gives it.
pub fn listed_hook(dir: &Path, target: &str, event: &str) -> serde_json::Value {
    let list = run(dir, &["hooks", "list", "--target", target, "--json"]);
    let mut hooks = serde_json::from_slice::<serde_json::Value>(&list.stdout).unwrap()["hooks"].take();
    let at = hooks.as_array().unwrap().iter().position(|hook| hook["event"] == event).expect("a hook on that event");
    hooks[at].take()
}

/// Runs `node <script>` with `stdin` and extra environment; returns (exit code, stdout, stderr).
pub fn node(script: &Path, stdin: &[u8], env: &[(&str, &str)]) -> (i32, String, String) {
    use std::io::Write;
    let mut child = Command::new("node")
        .arg(script)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node is installed");
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // The wrapper may stop reading early (e.g. past the 64 MiB cap): a broken pipe is fine.
        let _ = pipe.write_all(&input);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The `stdin` object of a recorded host payload (`tests/fixtures/host-payloads`).
pub fn payload(host_dir: &str, event: &str) -> serde_json::Value {
    let path = repo().join("tests/fixtures/host-payloads").join(host_dir).join(format!("{event}.json"));
    let recorded: serde_json::Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
    recorded["stdin"].clone()
}

pub const CLAUDE: &str = "claude-code-2.1.332";
pub const CODEX: &str = "codex-0.171.0";
