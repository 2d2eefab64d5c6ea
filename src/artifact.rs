//! Reading a built artifact back (through its manifest, `emit::manifest`): whether the files
//! on disk are exactly what the manifest lists, the artifact as one blob for the cache (its pack), and
//! running a hook's real wrapper the way a host would (`hooks list`, `hooks simulate`).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::cache::Hash;
use crate::emit::MANIFEST_FILE;
use crate::emit::manifest::{FileRow, HookRow, InputRow, Manifest};
use crate::hosts::{self, HookEnv, RUNTIME_PATH};
use crate::model::Target;
use crate::output::OutputFile;
use crate::stamp::Summary;
use lz4_flex::frame::{BlockMode, BlockSize, FrameDecoder, FrameEncoder, FrameInfo};

/// The bytes of the regular file at `path`. An artifact may have been tampered with: a FIFO
/// would make the read wait for ever, a device never end, a link lead anywhere.
pub fn read_regular(path: &Path) -> Result<Arc<[u8]>, String> {
    match crate::loader::read_file(path) {
        Ok(Some((bytes, _))) => Ok(bytes),
        Ok(None) if path.exists() => Err(format!("cannot read {}: not a regular file", path.display())),
        Ok(None) => Err(format!("cannot read {}: No such file or directory", path.display())),
        Err(error) => Err(error.to_string()),
    }
}

/// Artifacts up to this size are packed (and no pack unpacks to more). Why a bound: a pack
/// holds every byte once more in memory while it is made or read; past this, which takes
/// large prebuilt payloads that the stages only copy anyway, the stages' own actions
/// answer a fresh checkout instead.
pub const PACK_LIMIT: usize = 64 << 20;

/// How a pack is encoded, as its record says (`cache-format/SPEC.md` §5.1).
pub const PACK_ENCODING: &str = "lz4-frame";

/// The artifact `files` as one blob: its manifest, then every file the manifest lists, in
/// the manifest's (path) order, in one LZ4 frame; `None` past [`PACK_LIMIT`]. One object
/// per project lets a warm cache restore a whole artifact with one read (one request from
/// a remote) instead of one per file, and since every wrapper carries the same runtime, the
/// frame is about a twelfth of the files' size.
pub fn pack(files: &BTreeMap<String, OutputFile>) -> Option<Vec<u8>> {
    let manifest = files.get(MANIFEST_FILE)?;
    let size: usize = files.values().map(|file| file.bytes.len()).sum();
    if size > PACK_LIMIT {
        return None;
    }
    // Independent 256 KiB blocks: nearly the ratio of one 4 MiB block (the runtime repeats
    // every ~17 KB), and decoding stays within the CPU's caches (3x faster).
    let frame = FrameInfo::new()
        .block_size(BlockSize::Max256KB)
        .block_mode(BlockMode::Independent)
        .content_size(Some(size as u64));
    let mut encoder = FrameEncoder::with_frame_info(frame, Vec::with_capacity(size / 8));
    encoder.write_all(&manifest.bytes).ok()?;
    for (_, file) in files.iter().filter(|(path, _)| *path != MANIFEST_FILE) {
        encoder.write_all(&file.bytes).ok()?;
    }
    encoder.finish().ok()
}

/// The files of a [`pack`] whose manifest is its first `manifest_len` bytes and hashes to
/// `manifest`, or `None` unless the frame decodes to exactly that manifest and the files it
/// lists (at most [`PACK_LIMIT`] bytes in all, so a frame that would inflate further is
/// never read past it). The pack's own bytes were verified against its name when the cache
/// read it, so the frame carries no checksum of its own.
pub fn unpack(pack: &[u8], manifest_len: usize, manifest: &Hash) -> Option<(BTreeMap<String, OutputFile>, Summary)> {
    // (One frame and nothing after it, as the spec has it: a decoder reads on into a second.)
    if manifest_len > PACK_LIMIT || lz4_frame_len(pack) != Some(pack.len()) {
        return None;
    }
    let mut frame = FrameDecoder::new(pack);
    let text = take_exact(&mut frame, manifest_len)?;
    // (A manifest no build writes would make a folder no later publish may replace.)
    if Hash::of(&text) != *manifest || !crate::emit::manifest::is_written(&text) {
        return None;
    }
    let listed = Manifest::parse(&text).ok()?;
    let size = listed.files.iter().try_fold(manifest_len as u64, |size, row| size.checked_add(row.bytes))?;
    if size > PACK_LIMIT as u64 {
        return None;
    }
    let mut files = BTreeMap::new();
    files.insert(MANIFEST_FILE.to_owned(), OutputFile::generated(MANIFEST_FILE, text));
    for row in &listed.files {
        if !crate::output::is_artifact_path(&row.path) {
            return None;
        }
        let file = OutputFile {
            path: row.path.to_string(),
            bytes: take_exact(&mut frame, usize::try_from(row.bytes).ok()?)?,
            executable: row.executable,
            kind: row.kind,
        };
        files.insert(file.path.clone(), file);
    }
    let ended = frame.fill_buf().is_ok_and(|rest| rest.is_empty());
    // (No file where another's folder goes: no build lays out such files, and publishing
    // them fails.)
    let laid_out = crate::output::folders_of(files.keys().map(String::as_str)).iter().all(|f| !files.contains_key(*f));
    (ended && laid_out && files.len() == listed.files.len() + 1).then(|| (files, listed.summary()))
}

/// The length of the LZ4 frame `bytes` begin with, read from its header and block sizes
/// (the frame format's own layout), if they begin with a whole one.
fn lz4_frame_len(bytes: &[u8]) -> Option<usize> {
    const MAGIC: [u8; 4] = 0x184D_2204_u32.to_le_bytes();
    let flags = *bytes.get(4)?;
    if bytes.get(..4)? != MAGIC || flags >> 6 != 0b01 {
        return None;
    }
    let has = |bit: u8| flags & (1 << bit) != 0;
    let (block_checksums, content_size, content_checksum, dictionary) = (has(4), has(3), has(2), has(0));
    // Magic, flags, block descriptor, the optional content size and dictionary id, the
    // header's checksum.
    let mut at = 6 + if content_size { 8 } else { 0 } + if dictionary { 4 } else { 0 } + 1;
    loop {
        let size = u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?);
        at += 4;
        if size == 0 {
            break; // The end mark.
        }
        at += (size & 0x7FFF_FFFF) as usize + if block_checksums { 4 } else { 0 };
    }
    at += if content_checksum { 4 } else { 0 };
    (at <= bytes.len()).then_some(at)
}

/// The next `len` bytes `frame` decodes. A file within one decoded block (most of them) is
/// copied once, straight from the decoder's buffer; no buffer is zeroed first.
fn take_exact(frame: &mut impl BufRead, len: usize) -> Option<Arc<[u8]>> {
    let block = frame.fill_buf().ok()?;
    if let Some(bytes) = block.get(..len) {
        let bytes = Arc::from(bytes);
        frame.consume(len);
        return Some(bytes);
    }
    let mut bytes = Vec::with_capacity(len);
    while bytes.len() < len {
        let block = frame.fill_buf().ok()?;
        if block.is_empty() {
            return None;
        }
        let n = block.len().min(len - bytes.len());
        bytes.extend_from_slice(&block[..n]);
        frame.consume(n);
    }
    Some(bytes.into())
}

/// What the artifact at `dir` holds, if it is exactly the one whose manifest hashes to
/// `manifest`: that manifest, every file it lists with its size, mode and blake3, and no
/// other file. Every byte is read, so an artifact edited in place never passes.
pub fn matches_manifest(dir: &Path, manifest: &Hash) -> Option<Summary> {
    let text = crate::stamp::read_state_file(&dir.join(MANIFEST_FILE))?;
    if Hash::of(&text) != *manifest {
        return None;
    }
    let listed = Manifest::parse(&text).ok()?;
    let expected = listed.paths();
    let folders = crate::output::folders_of(expected.iter().copied());
    let mut on_disk = Vec::with_capacity(listed.files.len() + 1);
    for entry in walkdir::WalkDir::new(dir).min_depth(1) {
        let entry = entry.ok()?;
        let relative = entry.path().strip_prefix(dir).ok()?.to_str()?;
        match entry.file_type().is_dir() {
            // A folder no listed file lies in (an empty `skills/`) is not what was published.
            true if !folders.contains(relative) => return None,
            true => {}
            false => on_disk.push(relative.to_owned()),
        }
    }
    on_disk.sort_unstable();
    if on_disk != expected || listed.files.iter().any(|row| differs(dir, row).is_some()) {
        return None;
    }
    Some(listed.summary())
}

/// How a file of an artifact differs from its manifest's row.
#[derive(Debug, PartialEq, Eq)]
pub enum Difference {
    Missing,
    /// Not a regular file, or not readable: why.
    Unreadable(String),
    /// Its size, where the row says another.
    Size(u64),
    /// Executable where the row says it is not, or the reverse.
    Mode,
    Bytes,
}

/// How the file `row` lists differs in the artifact at `dir`, if it does: every byte is read.
pub fn differs(dir: &Path, row: &FileRow) -> Option<Difference> {
    let path = dir.join(&*row.path);
    match crate::loader::read_file(&path) {
        Ok(Some((bytes, _))) if bytes.len() as u64 != row.bytes => Some(Difference::Size(bytes.len() as u64)),
        Ok(Some((_, executable))) if executable != row.executable => Some(Difference::Mode),
        Ok(Some((bytes, _))) if Hash::of(&bytes).to_hex() != row.blake3 => Some(Difference::Bytes),
        Ok(Some(_)) => None,
        Ok(None) if std::fs::symlink_metadata(&path).is_ok() => {
            Some(Difference::Unreadable("not a regular file".into()))
        }
        Ok(None) => Some(Difference::Missing),
        Err(error) => Some(Difference::Unreadable(error.to_string())),
    }
}

/// The inputs `manifest` names (the files its build read) that differ now in the project the
/// artifact at `artifact` was built in, its parent folder: edited or gone since. Payload
/// files are left out (copied as they are, no wrapper reads them), and so is the whole check
/// where that folder holds no config of the manifest's inputs (an artifact copied elsewhere,
/// `--out`).
pub fn changed_inputs(artifact: &Path, manifest: &Manifest<'_>) -> Vec<String> {
    let Some(root) = artifact.canonicalize().ok().and_then(|artifact| artifact.parent().map(Path::to_path_buf)) else {
        return Vec::new();
    };
    let is_config = |input: &InputRow<'_>| crate::config::CONFIG_FILE_NAMES.contains(&&*input.path);
    if !manifest.inputs.iter().filter(|input| is_config(input)).any(|input| root.join(&*input.path).is_file()) {
        return Vec::new();
    }
    let in_payload = |input: &InputRow<'_>| {
        manifest
            .payloads
            .iter()
            .any(|payload| input.path.strip_prefix(&*payload.source).is_some_and(|rest| rest.starts_with('/')))
    };
    let read = |path: &str| crate::loader::read_file(&root.join(path)).ok().flatten();
    let differs = |input: &&InputRow<'_>| {
        !in_payload(input) && read(&input.path).is_none_or(|(bytes, _)| Hash::of(&bytes).to_hex() != input.blake3)
    };
    manifest.inputs.iter().filter(differs).map(|input| input.path.to_string()).collect()
}

/// The single hook of `host` whose name or id is `wanted`.
pub fn find_hook<'a>(hooks: &'a [HookRow], host: Target, wanted: &str) -> Result<&'a HookRow, String> {
    let on_host = || hooks.iter().filter(|h| h.host == host);
    if let Some(hook) = on_host().find(|h| h.name == wanted || h.id == wanted) {
        return Ok(hook);
    }
    // The name without its hash (`before-tool-guard`), which a change of the hook's
    // declaration does not change (though `before-tool-guard-writes` starts with it), or
    // else a start of one hook's name. Prebuilt hooks are never simulated.
    let runnable = || on_host().filter(|h| !h.is_prebuilt());
    let unhashed: Vec<&HookRow> = runnable().filter(|h| without_hash(&h.name) == wanted).collect();
    if let [hook] = unhashed.as_slice() {
        return Ok(hook);
    }
    let starting: Vec<&HookRow> = runnable().filter(|h| !wanted.is_empty() && h.name.starts_with(wanted)).collect();
    let takes_no_hooks = || crate::hosts::table(host).hooks.is_none();
    match starting.as_slice() {
        [hook] => Ok(hook),
        [] if takes_no_hooks() => {
            Err(format!("{} takes no hooks: no {host} hook can be simulated", crate::hosts::table(host).display_name))
        }
        [] => {
            // A prebuilt hook (the simulator says why it cannot run it), or one built for other hosts.
            let named =
                |h: &&HookRow| without_hash(&h.name) == wanted || (!wanted.is_empty() && h.name.starts_with(wanted));
            match on_host().filter(|h| h.is_prebuilt()).filter(named).collect::<Vec<_>>()[..] {
                [] => {}
                [prebuilt] => return Ok(prebuilt),
                ref several => {
                    let names: Vec<&str> = several.iter().map(|h| h.name.as_str()).collect();
                    return Err(format!(
                        "\"{wanted}\" names {} prebuilt {host} hooks, which run as they are and cannot be simulated: {}",
                        names.len(),
                        names.join(", ")
                    ));
                }
            }
            let asked_for = |h: &&HookRow| h.host != host && (h.name == wanted || h.id == wanted || named(h));
            let mut elsewhere: Vec<&str> = hooks.iter().filter(asked_for).map(|h| h.host.as_str()).collect();
            elsewhere.sort_unstable();
            elsewhere.dedup();
            let names: Vec<&str> = runnable().map(|h| h.name.as_str()).collect();
            let known = if names.is_empty() { "none".to_owned() } else { names.join(", ") };
            let built_for = match elsewhere.as_slice() {
                [] => String::new(),
                hosts => format!(": it is built for {} only", crate::diagnostics::and_list(hosts)),
            };
            Err(format!(
                "no {host} hook is named \"{wanted}\" or has a name starting with it{built_for} (hooks for {host}: \
                 {known})"
            ))
        }
        several => {
            let names: Vec<&str> = several.iter().map(|h| h.name.as_str()).collect();
            Err(format!(
                "\"{wanted}\" starts the names of {} {host} hooks: {}; give more of one",
                names.len(),
                names.join(", ")
            ))
        }
    }
}

/// A hook's name without the hash of its declaration that ends it (`-1a2b3c4d`).
fn without_hash(name: &str) -> &str {
    match name.rsplit_once('-') {
        Some((stem, hash))
            if hash.len() == crate::model::NAME_HASH_LEN && hash.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            stem
        }
        _ => name,
    }
}

/// Why `hook` cannot be simulated in `mode`, if it cannot: a prebuilt handler, which runs
/// as it is, or a shared route with no standalone form, asked to render standalone.
pub fn refused(hook: &HookRow, mode: SharedMode) -> Option<String> {
    if hook.is_prebuilt() {
        return Some(format!(
            "hook {} is prebuilt: prebuilt handlers are run as they are and cannot be simulated",
            hook.name
        ));
    }
    (hook.is_shared() && mode == SharedMode::Standalone && hook.fallback != Some(true))
        .then(|| format!("route {} has no standalone form (its config has no `fallback: 'standalone'`)", hook.name))
}

/// The start of what a wrapper printed, as a message quotes it.
fn excerpt(printed: &str) -> String {
    const SHOWN: usize = 120;
    let shown: String = printed.chars().take(SHOWN).flat_map(char::escape_debug).collect();
    let more = if printed.chars().count() > SHOWN { "…" } else { "" };
    if printed.trim().is_empty() { "nothing".to_owned() } else { format!("`{shown}{more}`") }
}

/// What a simulated run returned.
#[derive(Clone, Debug)]
pub struct Simulation {
    /// What the wrapper made of the input, gave the host and decoded of it (`null` when it
    /// failed).
    pub native_input: serde_json::Value,
    pub native_output: serde_json::Value,
    pub result: serde_json::Value,
    pub stderr: String,
    pub elapsed: Duration,
    /// What rendered a route: `shared` (the runtime the simulator started) or `standalone`.
    pub rendered_by: Option<&'static str>,
    /// Why the hook failed, as the host would see it fail: it exited non-zero
    /// (`exit_code`), or did not answer in time (no exit code).
    pub failure: Option<String>,
    pub exit_code: Option<i32>,
}

impl Simulation {
    /// A run that failed before the wrapper could run (no `node`, an input too large).
    pub fn not_run(failure: String) -> Simulation {
        Simulation {
            native_input: serde_json::Value::Null,
            native_output: serde_json::Value::Null,
            result: serde_json::Value::Null,
            stderr: String::new(),
            elapsed: Duration::ZERO,
            rendered_by: None,
            failure: Some(failure),
            exit_code: None,
        }
    }
}

/// Where `hooks simulate` renders a shared route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedMode {
    /// In the artifact's own shared runtime, started for the run.
    Runtime,
    /// In the wrapper's standalone fallback, with no runtime live.
    Standalone,
}

/// What `hooks simulate` is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputForm {
    /// Canonical fields (`sessionId`), which the wrapper encodes into the host's envelope.
    Canonical,
    /// The host's own envelope (`session_id`), as captured from it, passed unchanged.
    Native,
}

impl InputForm {
    /// The wrapper's one argument under simulation, which names the form (a host runs it
    /// with none).
    fn simulation_argument(self) -> &'static str {
        match self {
            InputForm::Canonical => "--agent-bundle-simulation=canonical",
            InputForm::Native => "--agent-bundle-simulation=native",
        }
    }
}

/// A wrapper reads at most this much (the runtime's `STDIN_CAP`); simulation input is held
/// to the same limit.
pub const MAX_INPUT: usize = 64 * 1024 * 1024;
pub const INPUT_TOO_BIG: &str = "simulation input exceeds the 64 MiB limit";

/// Runs the emitted wrapper of `hook` with `input`, exactly as the host would run it, plus
/// the argument that names the input's form ([`InputForm`]: the wrapper encodes canonical
/// input into the host's envelope, or takes the host's envelope; either way it reports what
/// it sent back). A shared route talks to a
/// runtime started from the artifact for this run (`SharedMode::Runtime`), or to none, so
/// its fallback renders; either way in a private socket directory, never a live session's.
pub fn simulate(
    artifact: &Path,
    hook: &HookRow,
    input: &serde_json::Value,
    mode: SharedMode,
    form: InputForm,
) -> Result<Simulation, String> {
    if let Some(why) = refused(hook, mode) {
        return Err(why);
    }
    let Some(path) = hook.path.as_deref() else {
        return Err(format!("hook {} names no wrapper", hook.name));
    };
    if !input.is_object() {
        return Err("input must be a JSON object".into());
    }
    let input = input.to_string();
    if input.len() > MAX_INPUT {
        return Err(INPUT_TOO_BIG.into());
    }
    if !crate::output::is_artifact_path(path) {
        return Err(format!("the manifest names {path:?} for hook {}, a path outside the artifact", hook.name));
    }
    let artifact = artifact.canonicalize().map_err(|e| format!("cannot open {}: {e}", artifact.display()))?;
    let wrapper = own_file(&artifact, path)?;
    // From here on node runs: a signal stops it and the scratch folder goes too.
    crate::interrupt::install();
    let scratch = Scratch::new()?;
    let runtime = match (hook.is_shared(), mode) {
        (true, SharedMode::Runtime) => Some(SharedRuntime::start(&artifact, hook.host.as_str(), &scratch)?),
        _ => None,
    };
    let rendered_by = match (hook.runtime.as_deref(), &runtime) {
        (None, _) => None,
        (Some(_), Some(_)) => Some("shared"),
        (Some(_), None) => Some("standalone"),
    };
    let target = hook.host;
    let (timeout, by_config) = match hook.timeout {
        // (No host waits longer than a day; a tampered manifest may say anything.)
        Some(seconds) => (
            Duration::from_secs(u64::from(seconds).clamp(1, MAX_SIMULATION_SECONDS)),
            "its config's `timeout`".to_owned(),
        ),
        None => (DEFAULT_SIMULATION_TIMEOUT, simulation_limit(target)),
    };
    let started = Instant::now();
    let mut command = scratch.hook_node(target, &artifact)?;
    command.arg(&wrapper).arg(form.simulation_argument());
    if hook.is_shared() && runtime.is_none() {
        // None was started: the wrapper waits for none a host may be starting.
        command.arg("--agent-bundle-no-runtime");
    }
    let crate::child::Ran { status, stdout, mut stderr } =
        crate::child::run(&mut command, input.into_bytes(), timeout).map_err(node_missing)?;
    let elapsed = started.elapsed();
    let failed = |failure: String, stderr: String, exit_code: Option<i32>| Simulation {
        stderr,
        elapsed,
        rendered_by,
        exit_code,
        ..Simulation::not_run(failure)
    };
    let Some(status) = status else {
        // What the hook printed, not the runtime's log.
        let late = format!("the wrapper did not answer within {} s ({by_config})", timeout.as_secs());
        return Ok(failed(with_printed(late, &stderr), stderr, None));
    };
    // What a shared route printed as it rendered, and what the runtime said of it.
    let runtime_log = runtime.map(|runtime| without_start_line(&runtime.shut_down())).unwrap_or_default();
    if !status.success() {
        let failure = match (wrapper_failure(&stderr, status), runtime_log.trim_end()) {
            (failure, "") => failure,
            (failure, log) => format!("{failure}\nthe shared runtime printed:\n{}", indented(log)),
        };
        stderr.push_str(&runtime_log);
        return Ok(failed(failure, stderr, status.code()));
    }
    stderr.push_str(&runtime_log);
    // The wrapper's report ends its output, an object whose first field is `nativeInput`;
    // what comes before it reached the host's stdout past the wrapper (`fs.writeSync(1, …)`,
    // a child with inherited stdio), with a line break or without.
    let stdout = stdout.trim_end();
    // (The first such object that is all that follows: one written before it is followed by
    // the report, and one inside the report, by the report's end.)
    let report_at = stdout
        .match_indices(r#"{"nativeInput":"#)
        .map(|(at, _)| at)
        .find(|&at| serde_json::from_str::<serde::de::IgnoredAny>(&stdout[at..]).is_ok());
    let (before, last) = report_at.map_or(("", stdout), |at| stdout.split_at(at));
    let report = match read_simulated_json(last) {
        Ok(report) => report,
        Err(None) => {
            let failure = format!(
                "the wrapper's answer nests {MAX_SIMULATED_DEPTH} levels deep or more, past what the simulator reads"
            );
            return Ok(failed(failure, stderr, status.code()));
        }
        Err(Some(_)) => {
            let failure = format!("the wrapper gave no answer the simulator can read: it printed {}", excerpt(stdout));
            return Ok(failed(failure, stderr, status.code()));
        }
    };
    if !before.trim().is_empty() {
        let failure = format!(
            "the handler wrote {} to file descriptor 1, before the answer: the host reads it with the answer, \
             and Claude Code and Codex then ignore the answer (write with `console`, which goes to stderr, or pipe a \
             child's output)",
            excerpt(before.trim_end())
        );
        return Ok(failed(failure, stderr, status.code()));
    }
    Ok(Simulation {
        native_input: report["nativeInput"].clone(),
        native_output: report["nativeOutput"].clone(),
        result: report["result"].clone(),
        stderr,
        elapsed,
        rendered_by,
        failure: None,
        exit_code: Some(0),
    })
}

/// The artifact's own file at `path` (in the artifact at `artifact`, a canonical path): a
/// regular file reached through no link. Run, what a link there leads to would be code the
/// artifact does not hold (`validate` reports the link: AB6004).
fn own_file(artifact: &Path, path: &str) -> Result<PathBuf, String> {
    let full = artifact.join(path);
    let rebuild = "build again (`agent-bundle validate` checks the whole artifact)";
    let what = match std::fs::symlink_metadata(&full) {
        Ok(metadata) if metadata.is_file() && full.canonicalize().is_ok_and(|real| real == full) => return Ok(full),
        Ok(metadata) if metadata.is_file() || metadata.is_symlink() => {
            "not a file of the artifact's own (a link, or behind one)"
        }
        Ok(metadata) if metadata.is_dir() => "a folder, where the artifact's manifest lists a file",
        Ok(_) => "a special file, where the artifact's manifest lists a file",
        // (A part of its path that is a file: it is missing too.)
        Err(error) if matches!(error.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory) => {
            "missing, though the artifact's manifest lists it"
        }
        Err(error) => return Err(format!("cannot read {}: {error}", full.display())),
    };
    Err(format!("{} is {what}: {rebuild}", full.display()))
}

/// Why a wrapper failed: the runtime's own message (from its first `agent-bundle hook` line
/// on), with what the hook printed before it set apart below: the handler's log is not the
/// error.
fn wrapper_failure(stderr: &str, status: std::process::ExitStatus) -> String {
    let stderr = stderr.trim();
    let runtime_said = stderr
        .match_indices("agent-bundle hook ")
        .map(|(at, _)| at)
        .find(|&at| at == 0 || stderr[..at].ends_with('\n'));
    match runtime_said {
        _ if stderr.is_empty() => format!("the wrapper failed ({status})"),
        Some(at) => with_printed(stderr[at..].to_owned(), &stderr[..at]),
        None => stderr.to_owned(),
    }
}

/// `error`, followed by what the hook printed (if anything), set apart.
fn with_printed(error: String, printed: &str) -> String {
    match printed.trim_end() {
        "" => error,
        printed => format!("{error}\nwhat the hook printed before that:\n{}", indented(printed)),
    }
}

fn indented(text: &str) -> String {
    text.lines().map(|line| format!("  {line}")).collect::<Vec<_>>().join("\n")
}

/// A shared runtime's log without the line every start prints (`listening on …`).
fn without_start_line(log: &str) -> String {
    log.lines().filter(|line| !line.contains(": listening on ")).map(|line| format!("{line}\n")).collect()
}

/// Moves the shared runtime's socket directory (read by the wrappers and the runtime alike).
const RUNTIME_DIR_VAR: &str = "AGENT_BUNDLE_RUNTIME_DIR";
/// How long a starting runtime may take to answer MCP `initialize`.
const RUNTIME_START: Duration = Duration::from_secs(10);

/// The artifact's shared runtime, run the way a host runs its MCP server: ready once it
/// answers `initialize` (it owns its socket before it reads stdin), stopped by closing stdin.
pub(crate) struct SharedRuntime {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Taken by `shut_down`.
    stderr: Option<crate::child::Drain>,
}

/// The scratch folder of a simulation or a validation: the shared runtime's socket folder
/// (`runtime/`, created 0700 by a runtime when one starts), and a working folder (`work/`,
/// empty at first) that the node processes it runs share. A host runs a hook in the user's project, never
/// in the plugin's or in the artifact: a handler that reads a file relative to its working
/// folder fails here as it would there, wherever the command was started.
pub(crate) struct Scratch {
    dir: tempfile::TempDir,
    /// Where `runtime/` goes when `dir` is too deep for a socket address in it (macOS's
    /// per-user `$TMPDIR`, as the runtime's own `runtimeDir()` finds): a folder of its own
    /// under `/tmp`, private as `dir` is, removed with it.
    sockets: Option<tempfile::TempDir>,
}

/// A socket path must fit `sun_path` (the terminator included), as `ipc.mjs` checks it.
const MAX_SOCKET_PATH: usize = if cfg!(target_os = "linux") { 107 } else { 103 };
/// A runtime socket's name, `event-<32 hex>.sock`.
const SOCKET_NAME_LEN: usize = "event-.sock".len() + 32;

/// Whether a runtime's socket fits a socket address in `dir`.
fn holds_sockets(dir: &Path) -> bool {
    dir.as_os_str().len() + 1 + SOCKET_NAME_LEN <= MAX_SOCKET_PATH
}

impl Scratch {
    pub(crate) fn new() -> Result<Scratch, String> {
        let cannot = |e: std::io::Error| format!("cannot create a scratch folder: {e}");
        let mut folder = tempfile::Builder::new();
        // Private: the runtime's socket folder is in it (the runtime refuses one open to others).
        folder.prefix("agent-bundle-run-").permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
        let dir = folder.tempdir().map_err(cannot)?;
        std::fs::create_dir(dir.path().join("work")).map_err(cannot)?;
        let sockets = match holds_sockets(&dir.path().join("runtime")) {
            true => None,
            false => Some(folder.tempdir_in("/tmp").map_err(cannot)?),
        };
        Ok(Scratch { dir, sockets })
    }

    /// The shared runtime's socket folder.
    fn runtime_dir(&self) -> PathBuf {
        self.sockets.as_ref().unwrap_or(&self.dir).path().join("runtime")
    }

    /// `node`, to be run in the working folder, finding the runtime's sockets here, without
    /// what the caller's shell holds of any host's hook variables: a handler or a route must
    /// not pass here for reading what its host never sets.
    pub(crate) fn node(&self) -> Command {
        let mut command = Command::new("node");
        command.current_dir(self.dir.path().join("work")).env(RUNTIME_DIR_VAR, self.runtime_dir());
        for name in hosts::hook_env_names() {
            command.env_remove(name);
        }
        command
    }

    /// `node` with the environment `target` gives a hook, as it gives it: the plugin's root
    /// is the artifact, its data and home folders ones made here, the project the working
    /// folder.
    fn hook_node(&self, target: Target, artifact: &Path) -> Result<Command, String> {
        let mut command = self.node();
        for &(name, value) in hosts::table(target).hooks.as_ref().map_or(&[][..], |hooks| hooks.env) {
            let fresh = |name: &str| {
                let folder = self.dir.path().join(name);
                std::fs::create_dir_all(&folder).map_err(|e| format!("cannot create a scratch folder: {e}"))?;
                Ok::<_, String>(folder)
            };
            let path = match value {
                HookEnv::PluginRoot => artifact.to_path_buf(),
                HookEnv::PluginData => fresh("data")?,
                HookEnv::HostHome => fresh("home")?,
                HookEnv::ProjectDir => self.dir.path().join("work"),
            };
            command.env(name, path);
        }
        Ok(command)
    }
}

impl SharedRuntime {
    pub(crate) fn start(artifact: &Path, host: &str, scratch: &Scratch) -> Result<SharedRuntime, String> {
        let artifact = artifact.canonicalize().map_err(|e| format!("cannot open {}: {e}", artifact.display()))?;
        let mut child = spawn_node(scratch.node().arg(own_file(&artifact, RUNTIME_PATH)?).args(["--target", host]))?;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = crate::child::Drain::start(child.stderr.take().expect("stderr is piped"));
        let (answered, answer) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = answered.send(line);
        });
        let initialize = serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": { "name": "agent-bundle hooks simulate", "version": env!("CARGO_PKG_VERSION") } },
        });
        let _ = writeln!(stdin, "{initialize}");
        let mut runtime = SharedRuntime { child, stdin: Some(stdin), stderr: Some(stderr) };
        let initialized = |line: &str| {
            serde_json::from_str::<serde_json::Value>(line)
                .is_ok_and(|reply| reply["id"] == 1 && reply["result"].is_object())
        };
        match crate::child::wait_unless_interrupted(&answer, RUNTIME_START) {
            Ok(Some(line)) if initialized(&line) => Ok(runtime),
            waited => {
                let _ = runtime.child.kill();
                let log = runtime.shut_down();
                match waited {
                    Err(interrupted) => Err(interrupted.to_string()),
                    // It loads every route before it answers: one whose module never finishes
                    // loading (a loop, a top-level wait) holds it.
                    Ok(None) => Err(format!(
                        "the shared runtime {RUNTIME_PATH} did not answer MCP `initialize` within {} s: a route's \
                         module that does not finish loading holds it{}",
                        RUNTIME_START.as_secs(),
                        match log.trim() {
                            "" => String::new(),
                            _ => format!(" (it printed: {})", crate::child::node_failure(&log)),
                        }
                    )),
                    Ok(Some(_)) => Err(format!(
                        "the shared runtime {RUNTIME_PATH} did not start: {}",
                        crate::child::node_failure(&log)
                    )),
                }
            }
        }
    }

    /// Closes stdin (a clean shutdown), waits briefly, and returns what the runtime logged.
    pub(crate) fn shut_down(mut self) -> String {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.stderr.take().map(crate::child::Drain::text).unwrap_or_default()
    }
}

impl Drop for SharedRuntime {
    /// A runtime not shut down (an error on the way) is stopped all the same: it must not
    /// outlive its scratch folder.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `command` (a `node` run), with every stdio stream piped.
fn spawn_node(command: &mut Command) -> Result<Child, String> {
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(node_missing)
}

/// How deep the JSON `hooks simulate` reads may nest, its input and the wrapper's answer
/// alike (the wrapper itself reads any depth): a reader of more would need a deeper stack.
pub const MAX_SIMULATED_DEPTH: usize = 1_000;

/// `text` read as one JSON value nested less than [`MAX_SIMULATED_DEPTH`] levels deep
/// (`Err(None)` where it nests deeper).
pub fn read_simulated_json(text: &str) -> Result<serde_json::Value, Option<serde_json::Error>> {
    if json_depth(text) >= MAX_SIMULATED_DEPTH {
        // (Unless it is no JSON at all: its skipping reader keeps a stack of its own.)
        return Err(serde_json::from_str::<serde::de::IgnoredAny>(text).err());
    }
    // (The reader recurses: on a deep stack, a few KiB a level as a debug build goes.)
    crate::threads::on_deep_pool(|| {
        let mut reader = serde_json::Deserializer::from_str(text);
        reader.disable_recursion_limit();
        let value = serde::Deserialize::deserialize(&mut reader).map_err(Some)?;
        reader.end().map_err(Some)?;
        Ok(value)
    })
}

/// How deep `text` nests its arrays and objects, brackets in strings left out.
fn json_depth(text: &str) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0, false, false);
    for byte in text.bytes() {
        match (in_string, byte) {
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (true, b'"') | (false, b'"') => in_string = !in_string,
            (false, b'[' | b'{') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

pub(crate) fn node_missing(error: std::io::Error) -> String {
    format!("cannot run node: {error} (agent-bundle needs Node.js 20 or newer on PATH)")
}

/// The longest a simulated hook may take, whatever its manifest says.
const MAX_SIMULATION_SECONDS: u64 = 24 * 60 * 60;

/// How long a simulated hook may take when its config sets no `timeout` (hosts default to
/// minutes; a simulation is run by hand and should not hang that long).
const DEFAULT_SIMULATION_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a hook with no `timeout` was stopped at the simulation's own limit, and how long its
/// host would have waited.
fn simulation_limit(target: Target) -> String {
    let table = hosts::table(target);
    let waits = match table.hooks.as_ref().and_then(|hooks| hooks.default_timeout) {
        Some(seconds) if seconds % 60 == 0 => format!("{} minutes", seconds / 60),
        Some(seconds) => format!("{seconds} s"),
        None => "its own default".to_owned(),
    };
    format!(
        "the simulation's own limit: the config sets no `timeout`, and {} waits {waits}; set `timeout` to what \
         the hook needs",
        table.display_name
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// JSON is read to 999 levels, brackets in strings not counted; deeper is said apart
    /// from invalid.
    #[test]
    fn simulated_json_is_read_below_its_depth() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(read_simulated_json(&nested(MAX_SIMULATED_DEPTH - 1)).is_ok());
        assert!(matches!(read_simulated_json(&nested(MAX_SIMULATED_DEPTH)), Err(None)));
        let quoted = format!("{{\"a\": \"{}\\\"[\"}}", "[".repeat(2_000));
        assert_eq!(json_depth(&quoted), 1);
        assert!(read_simulated_json(&quoted).is_ok());
        assert!(matches!(read_simulated_json("{} {}"), Err(Some(_))));
        // Deep and invalid is invalid.
        assert!(matches!(read_simulated_json(&format!("{} []", nested(MAX_SIMULATED_DEPTH))), Err(Some(_))));
        assert!(matches!(read_simulated_json(&"[".repeat(MAX_SIMULATED_DEPTH)), Err(Some(_))));
    }
    use crate::output::FileKind;

    #[test]
    fn a_hook_is_found_by_its_name_its_id_or_a_start_that_names_one() {
        let row = |name: &str, host: Target| HookRow {
            id: format!("hook:{name}"),
            name: name.to_owned(),
            event: "beforeTool".into(),
            host,
            native_event: "PreToolUse".into(),
            command: String::new(),
            kind: crate::emit::manifest::HookKind::Config,
            path: None,
            matcher: None,
            timeout: None,
            runtime: None,
            fallback: None,
        };
        let hooks = [
            row("before-tool-guard-1a2b3c4d", Target::Claude),
            row("before-tool-guard-writes-3c4d5e6f", Target::Claude),
        ];
        let found = |wanted: &str| find_hook(&hooks, Target::Claude, wanted).map(|hook| hook.name.as_str());
        assert_eq!(found("before-tool-guard-1a2b3c4d"), Ok("before-tool-guard-1a2b3c4d"));
        assert_eq!(found("before-tool-guard"), Ok("before-tool-guard-1a2b3c4d"), "unhashed, though it starts another");
        assert_eq!(found("hook:before-tool-guard-writes-3c4d5e6f"), Ok("before-tool-guard-writes-3c4d5e6f"));
        assert_eq!(found("before-tool-guard-w"), Ok("before-tool-guard-writes-3c4d5e6f"));
        assert_eq!(
            found("before-tool"),
            Err("\"before-tool\" starts the names of 2 claude hooks: before-tool-guard-1a2b3c4d, \
                 before-tool-guard-writes-3c4d5e6f; give more of one"
                .to_owned())
        );
        let none = find_hook(&hooks, Target::Codex, "before-tool-guard").unwrap_err();
        assert_eq!(
            none,
            "no codex hook is named \"before-tool-guard\" or has a name starting with it: it is built for claude \
             only (hooks for codex: none)"
        );
        assert!(find_hook(&hooks, Target::Claude, "").is_err());
        let on_claude = find_hook(&hooks, Target::Cursor, "before-tool-guard-writes").unwrap_err();
        assert_eq!(
            on_claude,
            "no cursor hook is named \"before-tool-guard-writes\" or has a name starting with it: it is built for \
             claude only (hooks for cursor: none)"
        );
        // A prebuilt hook is found (the simulator then says it runs as it is); several are named.
        let prebuilt =
            |name: &str| HookRow { kind: crate::emit::manifest::HookKind::Prebuilt, ..row(name, Target::Codex) };
        let one = [prebuilt("stop-check-5e6f7a8b")];
        assert_eq!(
            find_hook(&one, Target::Codex, "stop-check").map(|hook| hook.name.as_str()),
            Ok("stop-check-5e6f7a8b")
        );
        let two = [prebuilt("stop-check-5e6f7a8b"), prebuilt("stop-check-6f7a8b9c")];
        assert_eq!(
            find_hook(&two, Target::Codex, "stop-check").unwrap_err(),
            "\"stop-check\" names 2 prebuilt codex hooks, which run as they are and cannot be simulated: \
             stop-check-5e6f7a8b, stop-check-6f7a8b9c"
        );
        let portable = find_hook(&hooks, Target::Portable, "before-tool-guard").unwrap_err();
        assert_eq!(portable, "Agent Plugins takes no hooks: no portable hook can be simulated");
    }

    fn artifact() -> BTreeMap<String, OutputFile> {
        // (Begun as a build writes a manifest: a pack of another is never restored.)
        let rows = serde_json::json!({
            "compiler": { "name": "agent-bundle", "version": "0" },
            "plugin": { "name": "p", "version": "1.0.0" },
            "targets": ["claude"],
            "files": [
                { "path": "bin/run", "bytes": 3, "blake3": Hash::of(b"#!x").to_hex(), "kind": "prebuilt", "executable": true },
                { "path": "hooks/a.mjs", "bytes": 1, "blake3": Hash::of(b"a").to_hex(), "kind": "bundle" },
            ],
        });
        let files = [
            OutputFile::generated(MANIFEST_FILE, serde_json::to_string_pretty(&rows).unwrap().into_bytes().into()),
            OutputFile {
                path: "bin/run".into(),
                bytes: b"#!x".as_slice().into(),
                executable: true,
                kind: FileKind::Prebuilt,
            },
            OutputFile {
                path: "hooks/a.mjs".into(),
                bytes: b"a".as_slice().into(),
                executable: false,
                kind: FileKind::Bundle,
            },
        ];
        files.into_iter().map(|file| (file.path.clone(), file)).collect()
    }

    #[test]
    fn a_pack_unpacks_to_the_same_files_and_nothing_else_does() {
        let files = artifact();
        let manifest = &files[MANIFEST_FILE].bytes;
        let (len, hash) = (manifest.len(), Hash::of(manifest));
        let pack = pack(&files).unwrap();
        let (unpacked, summary) = unpack(&pack, len, &hash).unwrap();
        assert_eq!(unpacked, files);
        assert_eq!((summary.plugin.as_str(), summary.files), ("p", 3));

        let mut contents = Vec::new();
        std::io::Read::read_to_end(&mut FrameDecoder::new(pack.as_slice()), &mut contents).unwrap();
        let framed = |bytes: &[u8]| {
            let mut encoder = FrameEncoder::new(Vec::new());
            encoder.write_all(bytes).unwrap();
            encoder.finish().unwrap()
        };
        assert_eq!(unpack(&framed(&contents), len, &hash).unwrap().0, files, "any LZ4 frame of the contents");
        let longer = [contents.as_slice(), b"!"].concat();
        assert!(unpack(&framed(&longer), len, &hash).is_none(), "bytes the manifest does not list");
        assert!(unpack(&framed(&contents[..contents.len() - 1]), len, &hash).is_none(), "a truncated file");
        assert!(unpack(&pack[..pack.len() / 2], len, &hash).is_none(), "a truncated frame");
        assert!(unpack(&contents, len, &hash).is_none(), "the contents unframed");
        assert!(unpack(&pack, len - 1, &hash).is_none(), "another manifest length");
        assert!(unpack(&pack, len, &Hash::of(b"other")).is_none(), "another manifest");
        assert!(unpack(&pack, PACK_LIMIT + 1, &hash).is_none(), "a manifest past the bound");
        assert!(unpack(&[pack.as_slice(), &framed(b"")].concat(), len, &hash).is_none(), "a second frame");
        assert!(unpack(&[pack.as_slice(), &[0; 3]].concat(), len, &hash).is_none(), "bytes after the frame");
        let compact = serde_json::to_vec(&serde_json::from_slice::<serde_json::Value>(manifest).unwrap()).unwrap();
        let contents_compact = [compact.as_slice(), &contents[len..]].concat();
        let hash_compact = Hash::of(&compact);
        assert!(
            unpack(&framed(&contents_compact), compact.len(), &hash_compact).is_none(),
            "a manifest no build writes"
        );
        let text = String::from_utf8(manifest.to_vec()).unwrap();
        for huge in [u64::MAX, u64::MAX - 1024, PACK_LIMIT as u64] {
            let claimed = text.replace("\"bytes\": 1,", &format!("\"bytes\": {huge},"));
            assert_ne!(claimed, text);
            let frame = framed(&[claimed.as_bytes(), &contents[len..]].concat());
            let hash = Hash::of(claimed.as_bytes());
            assert!(unpack(&frame, claimed.len(), &hash).is_none(), "a manifest listing {huge} bytes is not allocated");
        }

        // A manifest listing `path` for `bin/run`: a pack whoever may write the remote can make.
        let unpacks_with = |path: &str| {
            let mut renamed = files.clone();
            let json_path = serde_json::to_string(path).unwrap();
            let manifest = String::from_utf8(renamed[MANIFEST_FILE].bytes.to_vec()).unwrap();
            let manifest = manifest.replace("\"bin/run\"", &json_path);
            renamed.insert(MANIFEST_FILE.into(), OutputFile::generated(MANIFEST_FILE, manifest.as_bytes().into()));
            let pack = super::pack(&renamed).unwrap();
            unpack(&pack, manifest.len(), &Hash::of(manifest.as_bytes())).is_some()
        };
        assert!(unpacks_with("bin/walk"), "another plain path");
        assert!(!unpacks_with("../run"), "a path outside the artifact");
        // `hooks/a.mjs/x` beside the file `hooks/a.mjs`: no folder where a file goes.
        assert!(!unpacks_with("hooks/a.mjs/x"), "a file in a file");
        let long_name = "n".repeat(300);
        for unwritable in ["PWNED\0.txt", "a\\b", &long_name] {
            assert!(!unpacks_with(unwritable), "{unwritable:?}: a name no file system takes");
        }
    }
}
