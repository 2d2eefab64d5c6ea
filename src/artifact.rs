//! Reading a built artifact back: its manifest's hook index, and running a hook's real
//! wrapper the way a host would (`hooks list`, `hooks simulate`).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::emit::MANIFEST_FILE;

/// One row of the manifest's hook index.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct HookRow {
    pub id: String,
    pub name: String,
    pub event: String,
    pub host: String,
    pub native_event: String,
    pub command: String,
    pub kind: String,
    pub path: Option<String>,
    pub matcher: Option<String>,
    pub timeout: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct ManifestHooks<T> {
    hooks: Vec<T>,
}

/// The hook index of the artifact at `dir`.
pub fn read_hooks(dir: &Path) -> Result<Vec<HookRow>, String> {
    read_index(dir)
}

/// The hook index as the manifest spells it (for `--json` output).
pub fn read_hook_rows(dir: &Path) -> Result<Vec<serde_json::Value>, String> {
    read_index(dir)
}

fn read_index<T: serde::de::DeserializeOwned>(dir: &Path) -> Result<Vec<T>, String> {
    let path = dir.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!("cannot read {}: {e} (is it an artifact built by `agent-bundle build`?)", path.display())
    })?;
    let manifest: ManifestHooks<T> = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a valid agent-bundle manifest: {e}", path.display()))?;
    Ok(manifest.hooks)
}

/// The single hook of `host` whose name or id is `wanted`.
pub fn find_hook<'a>(hooks: &'a [HookRow], host: &str, wanted: &str) -> Result<&'a HookRow, String> {
    let matches: Vec<_> = hooks.iter().filter(|h| h.host == host && (h.name == wanted || h.id == wanted)).collect();
    match matches.as_slice() {
        [hook] => Ok(hook),
        _ => {
            let names: Vec<_> =
                hooks.iter().filter(|h| h.host == host && h.kind != "prebuilt").map(|h| h.name.as_str()).collect();
            let known = if names.is_empty() { "none".to_owned() } else { names.join(", ") };
            Err(format!("expected exactly one {host} hook matching \"{wanted}\" (hooks for {host}: {known})"))
        }
    }
}

/// What a simulated run returned.
#[derive(Clone, Debug)]
pub struct Simulation {
    pub native_input: serde_json::Value,
    pub native_output: serde_json::Value,
    pub result: serde_json::Value,
    pub stderr: String,
    pub elapsed: Duration,
}

/// Hosts send at most this much; simulation input is held to the same limit.
const MAX_INPUT: usize = 1024 * 1024;

/// Runs the emitted wrapper of `hook` with canonical `input`, exactly as the host would run
/// it, plus `AGENT_BUNDLE_HOOK_SIMULATION=1` (the wrapper then encodes the canonical input
/// into the host's envelope and reports what it sent back).
pub fn simulate(artifact: &Path, hook: &HookRow, input: &serde_json::Value) -> Result<Simulation, String> {
    let Some(path) = hook.path.as_deref().filter(|_| hook.kind != "prebuilt") else {
        return Err(format!(
            "hook {} is prebuilt: prebuilt handlers are run as they are and cannot be simulated",
            hook.name
        ));
    };
    if !input.is_object() {
        return Err("input must be a JSON object".into());
    }
    let input = input.to_string();
    if input.len() > MAX_INPUT {
        return Err("simulation input exceeds the 1 MiB limit".into());
    }
    let artifact = artifact.canonicalize().map_err(|e| format!("cannot open {}: {e}", artifact.display()))?;
    let wrapper: PathBuf = artifact.join(path);
    let started = Instant::now();
    let mut child = Command::new("node")
        .arg(&wrapper)
        .current_dir(&artifact)
        .env("AGENT_BUNDLE_HOOK_SIMULATION", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run node: {e} (agent-bundle needs Node.js 20 or newer on PATH)"))?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let out_reader = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).map(|_| text)
    });
    let err_reader = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).map(|_| text)
    });
    let timeout = Duration::from_secs(hook.timeout.unwrap_or(5).max(1));
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("the wrapper did not answer within {} s", timeout.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let elapsed = started.elapsed();
    let _ = writer.join();
    let stdout = out_reader.join().expect("reader thread").map_err(|e| e.to_string())?;
    let stderr = err_reader.join().expect("reader thread").map_err(|e| e.to_string())?;
    if !status.success() {
        let message = stderr.trim();
        return Err(if message.is_empty() { format!("the wrapper failed ({status})") } else { message.to_owned() });
    }
    let report: serde_json::Value =
        serde_json::from_str(stdout.trim()).map_err(|_| format!("the wrapper produced invalid JSON: {stdout:?}"))?;
    Ok(Simulation {
        native_input: report["nativeInput"].clone(),
        native_output: report["nativeOutput"].clone(),
        result: report["result"].clone(),
        stderr,
        elapsed,
    })
}
