//! `agent-bundle validate`: checks a built artifact without rebuilding it.
//!
//! The manifest must list every file with the right hash; every selected host's manifest and
//! hook document must parse and have the host's shape; every hook command must point at a
//! file inside the artifact, and every MCP server be the shared runtime a build registers
//! (run from the artifact, every argument as written); every wrapper must load in a clean `node`
//! process, and the shared runtime must start and answer MCP `initialize`. Optionally
//! the real Claude Code CLI judges the Claude projection (`claude plugin validate`).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use indicatif::ProgressBar;
use rayon::prelude::*;
use serde_json::Value;

use crate::artifact::Difference;
use crate::diagnostics::{Code, Diagnostic};
use crate::emit::manifest::{HookRow, MANIFEST_FILE, Manifest};
use crate::hosts::{self, DocumentStyle, HostTable};
use crate::model::{Family, HookEvent, Target};

/// How to run the optional host-side validation.
#[derive(Clone, Debug)]
pub enum HostValidation {
    Off,
    /// Run this Claude Code binary's `plugin validate`.
    Claude(std::path::PathBuf),
}

/// What [`validate`] found.
pub struct Validation {
    /// Empty when the artifact is sound.
    pub diagnostics: Vec<Diagnostic>,
    /// Whether the host's own validator ran and answered (it is asked only about an
    /// artifact for its host).
    pub host_validated: bool,
}

/// Validates the artifact at `dir`, counting the wrappers it loads on `progress` and naming
/// the check under way as its message.
pub fn validate(dir: &Path, host_validation: &HostValidation, progress: &ProgressBar) -> Validation {
    let mut diagnostics = Vec::new();
    let manifest = match Manifest::read(dir).and_then(manifest_shape) {
        Ok(manifest) => manifest,
        Err(message) => {
            let diagnostic = Diagnostic::error(Code::ArtifactManifest, message)
                .in_file(MANIFEST_FILE)
                .with_help("validate an artifact written by `agent-bundle build`");
            return Validation { diagnostics: vec![diagnostic], host_validated: false };
        }
    };
    let on_disk = on_disk(dir);
    check_files(&manifest, &on_disk, dir, &mut diagnostics);
    let targets = &manifest.targets;
    for target in targets {
        check_host(dir, hosts::table(*target), &manifest, &on_disk.files, &mut diagnostics);
    }
    // From here on node runs: a signal stops it, and the report is not printed.
    crate::interrupt::install();
    check_wrappers(dir, &manifest, &on_disk.files, progress, &mut diagnostics);
    if crate::interrupt::stops_here() {
        // Stopped: what is left would start more processes only to stop them.
        return Validation { diagnostics, host_validated: false };
    }
    progress.set_message("loaded; starting the shared runtime");
    check_runtime(dir, &manifest, &mut diagnostics);
    let mut host_validated = false;
    if let HostValidation::Claude(binary) = host_validation
        && targets.contains(&Target::Claude)
    {
        progress.set_message("loaded; running claude plugin validate");
        let findings = claude_plugin_validate(binary, dir);
        host_validated = findings.is_ok();
        diagnostics.extend(findings.unwrap_or_else(|warning| vec![warning]));
    }
    Validation { diagnostics, host_validated }
}

/// How long one wrapper may take to load and refuse an empty stdin.
const WRAPPER_LOAD_TIMEOUT: Duration = Duration::from_secs(10);
/// How long `claude plugin validate` may take.
const HOST_VALIDATOR_TIMEOUT: Duration = Duration::from_secs(60);

fn read_json(dir: &Path, path: &str) -> Result<Value, String> {
    let bytes = crate::artifact::read_regular(&dir.join(path))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{path} is not valid JSON: {e}"))
}

/// `manifest` if it names a target and no path outside the artifact.
fn manifest_shape(manifest: Manifest<'static>) -> Result<Manifest<'static>, String> {
    if manifest.targets.is_empty() {
        return Err(format!("{MANIFEST_FILE} has no `targets`"));
    }
    let paths = manifest.files.iter().map(|row| &*row.path);
    let paths = paths.chain(manifest.hooks.iter().filter_map(|hook| hook.path.as_deref()));
    if let Some(path) = paths.into_iter().find(|path| !crate::output::is_artifact_path(path)) {
        return Err(format!("{MANIFEST_FILE} lists {path:?}, a path outside the artifact"));
    }
    if let Some(problem) = manifest.hooks.iter().find_map(|hook| foreign_hook(&manifest.targets, hook)) {
        return Err(format!("{MANIFEST_FILE} {problem}"));
    }
    Ok(manifest)
}

/// What a hook row names that no build writes: a host the artifact is not built for (or one
/// that runs no hooks), an event no config hook or route has, a matcher no host's engine
/// takes (`hooks simulate` reads all three).
fn foreign_hook(targets: &[Target], hook: &HookRow) -> Option<String> {
    let name = &hook.name;
    if !targets.contains(&hook.host) || hosts::table(hook.host).hooks.is_none() {
        return Some(format!("gives hook {name} the host {}, which the artifact has no hooks for", hook.host));
    }
    let event = &hook.event;
    if HookEvent::from_key(event).is_none() && Family::from_key(event).is_none() {
        return Some(format!("gives hook {name} the event {event:?}, which no hook has"));
    }
    let matcher = hook.matcher.as_deref().filter(|matcher| regex_automata::meta::Regex::new(matcher).is_err());
    matcher.map(|matcher| format!("gives hook {name} the matcher {matcher:?}, which no host's engine takes"))
}

/// What the artifact holds, by artifact-relative path.
struct OnDisk {
    files: BTreeSet<String>,
    folders: Vec<String>,
    /// Anything else (a build never makes one), or what could not be listed, with what it is.
    others: Vec<(String, &'static str)>,
}

fn on_disk(dir: &Path) -> OnDisk {
    let mut found = OnDisk { files: BTreeSet::new(), folders: Vec::new(), others: Vec::new() };
    let relative = |path: &Path| path.strip_prefix(dir).ok().map(|p| p.to_string_lossy().into_owned());
    for entry in walkdir::WalkDir::new(dir).min_depth(1).sort_by_file_name() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                // (What it holds is unknown: no check can pass it.)
                if let Some(path) = error.path().and_then(relative) {
                    found.others.push((path, "a folder validate may not list, whose files were not checked"));
                }
                continue;
            }
        };
        let Some(path) = relative(entry.path()) else { continue };
        let kind = entry.file_type();
        if kind.is_file() {
            found.files.insert(path);
        } else if kind.is_dir() {
            found.folders.push(path);
        } else {
            let what = if kind.is_symlink() {
                "a symbolic link, which a build never makes"
            } else {
                "a special file (a pipe, a socket), which a build never makes"
            };
            found.others.push((path, what));
        }
    }
    found
}

fn check_files(manifest: &Manifest, on_disk: &OnDisk, dir: &Path, diagnostics: &mut Vec<Diagnostic>) {
    let mut listed = BTreeSet::new();
    for row in &manifest.files {
        let path = &*row.path;
        listed.insert(path);
        if on_disk.others.iter().any(|(other, _)| other == path) {
            continue; // A link or a pipe where the file should be: reported with the others below.
        }
        let Some(difference) = crate::artifact::differs(dir, row) else { continue };
        let (message, file) = match difference {
            Difference::Missing => (format!("{path} is listed in the manifest but missing"), MANIFEST_FILE),
            Difference::Unreadable(why) => {
                (format!("{path} is listed in the manifest but unreadable ({why})"), MANIFEST_FILE)
            }
            Difference::Size(size) => {
                (format!("{path} holds {size} bytes, where the manifest says {}", row.bytes), path)
            }
            Difference::Mode => {
                let (is, listed) = if row.executable { ("not ", "") } else { ("", "not ") };
                (format!("{path} is {is}executable, where the manifest lists it as {listed}executable"), path)
            }
            Difference::Bytes => {
                (format!("{path} does not match its hash in the manifest (edited after the build?)"), path)
            }
        };
        diagnostics.push(
            Diagnostic::error(Code::ArtifactFiles, message)
                .in_file(file.to_owned())
                .with_help("rebuild the artifact; never edit it by hand"),
        );
    }
    for path in on_disk.files.iter().filter(|p| p.as_str() != MANIFEST_FILE && !listed.contains(p.as_str())) {
        diagnostics.push(
            Diagnostic::error(Code::ArtifactFiles, format!("{path} is in the artifact but not in its manifest"))
                .in_file(path.clone())
                .with_help("rebuild the artifact; never add files to it by hand"),
        );
    }
    // A build makes no folder without a file in it (what a folder holds is reported itself).
    let held = on_disk.files.iter().chain(on_disk.others.iter().map(|(path, _)| path));
    let occupied = crate::output::folders_of(held.map(String::as_str));
    let is_other = |path: &&String| on_disk.others.iter().any(|(other, _)| other == *path);
    let empty_folders = on_disk.folders.iter().filter(|path| !occupied.contains(path.as_str()) && !is_other(path));
    let empty_folders = empty_folders.map(|path| (path, "an empty folder"));
    let others = on_disk.others.iter().map(|(path, what)| (path, *what));
    for (path, what) in empty_folders.chain(others) {
        diagnostics.push(
            Diagnostic::error(Code::ArtifactFiles, format!("{path} in the artifact is {what}"))
                .in_file(path.clone())
                .with_help("rebuild the artifact; never add to it by hand"),
        );
    }
}

fn check_host(
    dir: &Path,
    table: &HostTable,
    manifest: &Manifest,
    on_disk: &BTreeSet<String>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let (targets, plugin_name) = (manifest.targets.as_slice(), &*manifest.plugin.name);
    let target = table.target;
    let manifest_path = (table.manifest_path)(targets);
    let document_error = |file: &str, message: String| {
        Diagnostic::error(Code::HostDocument, message).in_file(file.to_owned()).for_host(target)
    };
    // What the index says the host runs: hooks, and routes in the shared runtime; and whether
    // any host does, for which a build gives every host that finds its MCP document through
    // its manifest one (empty where it runs none), lest it read another host's.
    let indexed: Vec<_> = manifest.hooks.iter().filter(|hook| hook.host == target).collect();
    let shared = indexed.iter().any(|hook| hook.is_shared());
    let any_shared = manifest.hooks.iter().any(|hook| hook.is_shared());
    match read_json(dir, manifest_path) {
        Err(message) => diagnostics.push(document_error(manifest_path, message)),
        Ok(manifest) => {
            if manifest["name"].as_str() != Some(plugin_name) {
                diagnostics.push(document_error(
                    manifest_path,
                    format!("{} manifest `name` must be `{plugin_name}`", table.display_name),
                ));
            }
            for problem in pointer_problems(table, &manifest, on_disk, any_shared) {
                diagnostics.push(document_error(manifest_path, problem));
            }
        }
    }
    check_mcp_document(dir, table, plugin_name, on_disk, shared, diagnostics);
    let Some(hooks) = &table.hooks else { return };
    if !on_disk.contains(hooks.document_path) {
        // (One a manifest points to is said missing by the pointer's check.)
        if !indexed.is_empty() && !hooks.manifest_pointer {
            let message = match indexed.len() {
                1 => format!(
                    "{} is missing: {} does not run the hook the manifest's hook index lists for it",
                    hooks.document_path, table.display_name
                ),
                count => format!(
                    "{} is missing: {} runs none of the {count} hooks the manifest's hook index lists for it",
                    hooks.document_path, table.display_name
                ),
            };
            diagnostics.push(document_error(hooks.document_path, message));
        }
        return;
    }
    let document = match read_json(dir, hooks.document_path) {
        Ok(document) => document,
        Err(message) => return diagnostics.push(document_error(hooks.document_path, message)),
    };
    for problem in hook_document_problems(&document, hooks.document_style) {
        diagnostics.push(document_error(hooks.document_path, problem));
    }
    let registered = registrations(&document, hooks.document_style);
    for problem in unlisted_registrations(&registered, manifest, target) {
        diagnostics.push(document_error(hooks.document_path, problem));
    }
    for Registration { command, .. } in registered {
        match command_target(&command, hooks.root_token) {
            Some(path) if on_disk.contains(&path) => {}
            _ => diagnostics.push(
                Diagnostic::error(
                    Code::HookCommandTarget,
                    format!("hook command `{command}` does not run a file in the artifact"),
                )
                .in_file(hooks.document_path)
                .for_host(target),
            ),
        }
    }
}

/// The host's MCP document holds the shared runtime as a build registers it, and nothing
/// else; it is there where the index runs routes in it for this host (`shared`; one a
/// manifest points to is its pointer's to find).
fn check_mcp_document(
    dir: &Path,
    table: &HostTable,
    plugin_name: &str,
    on_disk: &BTreeSet<String>,
    shared: bool,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let Some(mcp) = &table.mcp else { return };
    let error =
        |code, message: String| Diagnostic::error(code, message).in_file(mcp.document_path).for_host(table.target);
    let runtime_missing = || {
        format!(
            "{} never starts the shared runtime the manifest's hook index runs routes in: its server `{}` is not \
             registered",
            table.display_name,
            crate::hosts::runtime_server_name(plugin_name)
        )
    };
    if !on_disk.contains(mcp.document_path) {
        if shared && !mcp.manifest_pointer {
            diagnostics
                .push(error(Code::HostDocument, format!("{} is missing: {}", mcp.document_path, runtime_missing())));
        }
        return;
    }
    let document = match read_json(dir, mcp.document_path) {
        Ok(document) => document,
        Err(message) => return diagnostics.push(error(Code::HostDocument, message)),
    };
    let Some(servers) = document["mcpServers"].as_object() else {
        return diagnostics.push(error(Code::HostDocument, "`mcpServers` must be an object".into()));
    };
    // The one server a build registers is the shared runtime, run from the artifact, every
    // argument as written (its script, its host, its working folder).
    let runtime = (crate::hosts::runtime_server_name(plugin_name), mcp.runtime_server(table.target));
    for (name, server) in servers {
        if (name, server) != (&runtime.0, &runtime.1) || !on_disk.contains(crate::hosts::RUNTIME_PATH) {
            diagnostics.push(error(
                Code::HostDocument,
                format!("MCP server `{name}` is not the shared runtime a build registers: {}", runtime.1),
            ));
        }
    }
    if shared && !servers.contains_key(&runtime.0) {
        diagnostics.push(error(Code::HostDocument, runtime_missing()));
    }
}

/// What is wrong with the pointers of the host's plugin `manifest` (a JSON document) to its
/// hook and MCP documents, one problem per pointer: where the host finds a document only
/// so, one missing or other than the build writes (the one to its hooks always; the one to
/// its MCP document where any host runs routes in the shared runtime, `shared`), and any
/// where the build writes none; where the host loads its document by itself, any (what it
/// names would count besides); elsewhere, one naming no file in the artifact (`on_disk`).
/// (Without its own, Codex and Cursor read `hooks/hooks.json`, Claude Code's.)
fn pointer_problems(table: &HostTable, manifest: &Value, on_disk: &BTreeSet<String>, shared: bool) -> Vec<String> {
    let host = table.display_name;
    let documents = [
        ("hooks", table.hooks.as_ref().map(|h| (h.manifest_pointer, h.document_path)), true, "its hooks"),
        ("mcpServers", table.mcp.as_ref().map(|m| (m.manifest_pointer, m.document_path)), shared, "its MCP servers"),
    ];
    let names_no_file = |pointer: &&str| !pointer.strip_prefix("./").is_some_and(|path| on_disk.contains(path));
    documents
        .into_iter()
        .filter_map(|(key, document, wanted, what)| {
            let value = &manifest[key];
            let given = value.as_str();
            let no_file = |pointer| format!("the `{key}` pointer {pointer} does not name a file in the artifact");
            match document {
                Some((true, path)) if wanted => {
                    let pointer = hosts::pointer_to(path);
                    if given != Some(pointer.as_str()) {
                        Some(format!("`{key}` must be `{pointer}`: {host} finds {what} through it"))
                    } else {
                        given.filter(names_no_file).map(no_file)
                    }
                }
                // (Only where a host runs routes in the shared runtime does a build write it.)
                Some((true, _)) if !value.is_null() => Some(format!(
                    "`{key}` is set, which a build writes only where a route runs in the shared runtime: {host} \
                     would start what it names"
                )),
                Some((false, path)) if !value.is_null() => Some(if given == Some(&hosts::pointer_to(path)) {
                    format!("`{key}` names {path}, which {host} loads by itself: each of its entries would count twice")
                } else {
                    format!(
                        "`{key}` is set, which a build never writes: {host} loads {path} by itself, and would run \
                         what it names besides"
                    )
                }),
                _ => given.filter(names_no_file).map(no_file),
            }
        })
        .collect()
}

/// The shared runtime starts for every host that forwards a route to it, in a private socket
/// directory, and answers MCP `initialize`.
fn check_runtime(dir: &Path, manifest: &Manifest, diagnostics: &mut Vec<Diagnostic>) {
    let Some(runtime) = &manifest.event_runtime else { return };
    let path = &*runtime.path;
    let hosts: BTreeSet<&str> =
        manifest.hooks.iter().filter(|hook| hook.is_shared()).map(|hook| hook.host.as_str()).collect();
    for host in hosts {
        // Kept until the runtime is shut down: its working folder and its sockets are there.
        let scratch = crate::artifact::Scratch::new();
        let started = scratch
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|scratch| crate::artifact::SharedRuntime::start(dir, host, scratch));
        match started {
            // It serves on without a route that failed to load, which fails every request.
            Ok(runtime) => diagnostics.extend(unloaded_routes(&runtime.shut_down()).map(|failure| {
                Diagnostic::error(Code::WrapperLoad, format!("the shared runtime for {host}: {failure}"))
                    .in_file(path.to_owned())
            })),
            Err(message) => diagnostics
                .push(Diagnostic::error(Code::WrapperLoad, format!("for {host}, {message}")).in_file(path.to_owned())),
        }
    }
}

/// What a shared runtime said, on stderr, of each route it could not load.
fn unloaded_routes(stderr: &str) -> impl Iterator<Item = &str> {
    stderr
        .lines()
        .filter_map(|line| line.strip_prefix("agent-bundle event runtime: "))
        .filter(|message| message.starts_with("route ") && message.contains(" failed to load: "))
}

/// Shape problems of a hook document, as the host's loader would see them.
fn hook_document_problems(document: &Value, style: DocumentStyle) -> Vec<String> {
    let mut problems = Vec::new();
    let allowed_root: &[&str] = match style {
        DocumentStyle::Grouped => &["hooks"],
        DocumentStyle::Flat => &["hooks", "version"],
    };
    let Some(root) = document.as_object() else {
        return vec!["the hook document must be an object".into()];
    };
    for key in root.keys().filter(|k| !allowed_root.contains(&k.as_str())) {
        problems.push(format!("unexpected root key `{key}`"));
    }
    if style == DocumentStyle::Flat && document["version"] != 1 {
        problems.push("`version` must be 1".into());
    }
    let Some(events) = document["hooks"].as_object() else {
        problems.push("`hooks` must be an object keyed by event".into());
        return problems;
    };
    for (event, entries) in events {
        let Some(entries) = entries.as_array() else {
            problems.push(format!("`hooks.{event}` must be an array"));
            continue;
        };
        for entry in entries {
            let handlers: Vec<&Value> = match style {
                DocumentStyle::Grouped => match entry["hooks"].as_array() {
                    Some(handlers) => handlers.iter().collect(),
                    None => {
                        problems.push(format!("a `{event}` group has no `hooks` array"));
                        continue;
                    }
                },
                DocumentStyle::Flat => vec![entry],
            };
            if entry.get("matcher").is_some_and(|m| !m.is_string()) {
                problems.push(format!("a `{event}` matcher must be a string"));
            }
            for handler in handlers {
                if !handler["command"].is_string() {
                    problems.push(format!("a `{event}` hook has no `command` string"));
                }
                if style == DocumentStyle::Grouped && handler["type"] != "command" {
                    problems.push(format!("a `{event}` hook must have `type: \"command\"`"));
                }
                if handler.get("timeout").is_some_and(|t| t.as_u64().is_none_or(|t| t == 0)) {
                    problems.push(format!("a `{event}` timeout must be a positive whole number of seconds"));
                }
            }
        }
    }
    problems
}

/// A hook a host document registers: its native event, matcher, command and timeout, as the
/// manifest's hook index lists them.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Registration {
    event: String,
    matcher: Option<String>,
    command: String,
    timeout: Option<u64>,
}

impl std::fmt::Display for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} `{}`", self.event, self.command)?;
        if let Some(matcher) = &self.matcher {
            write!(f, " (matcher `{matcher}`)")?;
        }
        // (Compared too: two that differ by it alone must say how.)
        match self.timeout {
            Some(timeout) => write!(f, " (timeout {timeout} s)"),
            None => write!(f, " (no timeout)"),
        }
    }
}

fn registrations(document: &Value, style: DocumentStyle) -> Vec<Registration> {
    let mut found = Vec::new();
    for (event, entries) in document["hooks"].as_object().into_iter().flatten() {
        for entry in entries.as_array().into_iter().flatten() {
            let handlers: Vec<&Value> = match style {
                DocumentStyle::Grouped => entry["hooks"].as_array().into_iter().flatten().collect(),
                DocumentStyle::Flat => vec![entry],
            };
            for handler in handlers {
                let Some(command) = handler["command"].as_str() else { continue };
                found.push(Registration {
                    event: event.clone(),
                    matcher: entry["matcher"].as_str().map(str::to_owned),
                    command: command.to_owned(),
                    timeout: handler["timeout"].as_u64(),
                });
            }
        }
    }
    found
}

/// What a host document registers that the manifest's hook index does not list for
/// `target`, and the reverse: `hooks list` and `hooks simulate` read the index, the host
/// reads the document, and the two must agree (the hashes alone pass a document edited and
/// re-hashed to match).
fn unlisted_registrations(registered: &[Registration], manifest: &Manifest, target: Target) -> Vec<String> {
    let mut listed: Vec<Registration> = manifest
        .hooks
        .iter()
        .filter(|hook| hook.host == target)
        .map(|hook| Registration {
            event: hook.native_event.clone(),
            matcher: hook.matcher.clone(),
            command: hook.command.clone(),
            timeout: hook.timeout.map(u64::from),
        })
        .collect();
    listed.sort();
    let mut problems = Vec::new();
    for registration in registered {
        match listed.binary_search(registration) {
            Ok(at) => {
                listed.remove(at);
            }
            Err(_) => problems.push(format!("registers {registration}, which the manifest's hook index does not list")),
        }
    }
    problems
        .extend(listed.iter().map(|hook| format!("does not register {hook}, which the manifest's hook index lists")));
    problems
}

/// The artifact path a `node "<root>/<path>" args…` command runs.
fn command_target(command: &str, root_token: &str) -> Option<String> {
    let rest = command.strip_prefix("node \"")?.strip_prefix(root_token)?.strip_prefix('/')?;
    Some(rest[..rest.find('"')?].to_owned())
}

/// Every wrapper must load and start: run with empty stdin, it must fail exactly the way
/// the runtime reports empty input (which proves the module linked and the runtime ran).
/// It runs in an empty folder, as `hooks simulate` runs it (`artifact::Scratch`).
fn check_wrappers(
    dir: &Path,
    manifest: &Manifest,
    on_disk: &BTreeSet<String>,
    progress: &ProgressBar,
    diagnostics: &mut Vec<Diagnostic>,
) {
    // (Every hook's, two naming one file included: each must find its own name there.)
    let wrappers: BTreeSet<(&str, &str)> =
        manifest.hooks.iter().filter_map(|hook| Some((hook.path.as_deref()?, hook.name.as_str()))).collect();
    // (A listed file that is missing is said by `check_files`.)
    let listed = |path: &str| manifest.files.iter().any(|row| row.path == path);
    for (path, name) in wrappers.iter().filter(|(path, _)| !listed(path)) {
        diagnostics.push(
            Diagnostic::error(
                Code::ArtifactFiles,
                format!("hook {name}'s wrapper {path} is no file the manifest lists"),
            )
            .in_file(MANIFEST_FILE)
            .with_help("rebuild the artifact; never edit it by hand"),
        );
    }
    let wrappers: Vec<(&str, &str)> = wrappers.into_iter().filter(|(path, _)| on_disk.contains(*path)).collect();
    progress.set_length(wrappers.len() as u64);
    progress.set_message("loading in node");
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
    let scratch = match crate::artifact::Scratch::new() {
        Ok(scratch) => scratch,
        Err(message) => return diagnostics.push(Diagnostic::error(Code::WrapperLoad, message)),
    };
    // No node at all is one problem of this machine's, not one of each wrapper's.
    let node_missing = std::sync::Mutex::new(None);
    let failures: Vec<Diagnostic> = wrappers
        .par_iter()
        .filter_map(|(path, name)| {
            let expected = format!("agent-bundle hook {name}: stdin must contain exactly one JSON value");
            let mut node = scratch.node();
            node.arg(dir.join(path));
            let outcome = crate::child::run(&mut node, Vec::new(), WRAPPER_LOAD_TIMEOUT);
            progress.inc(1);
            let problem = match outcome {
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                    *node_missing.lock().expect("no panics while locked") = Some(error);
                    return None;
                }
                Err(error) => format!("cannot run node on {path}: {error}"),
                Ok(ran) if ran.status.is_none() => {
                    let late = format!("{path} did not load in node within {} s", WRAPPER_LOAD_TIMEOUT.as_secs());
                    match ran.stderr.trim().is_empty() {
                        true => late,
                        false => format!("{late}: {}", crate::child::node_failure(&ran.stderr)),
                    }
                }
                Ok(ran) => {
                    let stderr = &ran.stderr;
                    let code = ran.status.and_then(|status| status.code());
                    // The runtime's refusal comes last: a module may print as it loads.
                    let refused = stderr.trim_end().lines().next_back() == Some(expected.as_str());
                    if code == Some(1) && ran.stdout.is_empty() && refused {
                        return None;
                    }
                    format!("{path} fails as node loads it: {}", crate::child::node_failure(stderr))
                }
            };
            Some(Diagnostic::error(Code::WrapperLoad, problem).in_file((*path).to_owned()))
        })
        .collect();
    if let Some(error) = node_missing.into_inner().expect("no panics while locked") {
        diagnostics.push(Diagnostic::error(Code::WrapperLoad, crate::artifact::node_missing(error)));
    }
    diagnostics.extend(failures);
}

/// How many lines of what a host validator that gave no report printed are quoted.
const SAID_LINES: usize = 4;

/// Findings of `claude plugin validate --json`, as diagnostics; a warning saying why when
/// it did not run or answer.
fn claude_plugin_validate(binary: &Path, dir: &Path) -> Result<Vec<Diagnostic>, Diagnostic> {
    let mut command = Command::new(binary);
    command.args(["plugin", "validate", "--json"]).arg(dir);
    command.env("DISABLE_AUTOUPDATER", "1").env("DISABLE_TELEMETRY", "1");
    let validator = format!("{} plugin validate", binary.display());
    let message = match crate::child::run(&mut command, Vec::new(), HOST_VALIDATOR_TIMEOUT) {
        Ok(ran) => match (ran.status, serde_json::from_str::<Value>(&ran.stdout)) {
            (None, _) => format!("{validator} did not answer within {} s", HOST_VALIDATOR_TIMEOUT.as_secs()),
            (Some(_), Ok(report)) => return Ok(findings(&report, dir)),
            (Some(status), Err(_)) => {
                // Its first lines: why it failed comes first, advice after.
                let said: Vec<&str> =
                    ran.stderr.lines().map(str::trim).filter(|line| !line.is_empty()).take(SAID_LINES).collect();
                match said.is_empty() {
                    true => format!("{validator} printed no JSON report ({status})"),
                    false => format!("{validator} printed no JSON report ({status}; it said: {})", said.join(" / ")),
                }
            }
        },
        Err(error) => format!("could not run {validator}: {error}"),
    };
    Err(Diagnostic::warning(Code::HostValidation, message).for_host(Target::Claude))
}

/// The errors and warnings of a `claude plugin validate --json` report.
fn findings(report: &Value, dir: &Path) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let sections = std::iter::once(&report["manifest"]).chain(report["contents"].as_array().into_iter().flatten());
    for section in sections {
        let file =
            section["file"].as_str().and_then(|f| Path::new(f).strip_prefix(dir).ok()).map(|p| p.display().to_string());
        for (key, error) in [("errors", true), ("warnings", false)] {
            for finding in section[key].as_array().into_iter().flatten() {
                let message = format!(
                    "claude plugin validate: {}{}",
                    finding["path"].as_str().map(|p| format!("{p}: ")).unwrap_or_default(),
                    finding["message"].as_str().unwrap_or("(no message)")
                );
                let mut diagnostic = if error {
                    Diagnostic::error(Code::HostValidation, message)
                } else {
                    Diagnostic::warning(Code::HostValidation, message)
                };
                diagnostic = diagnostic.for_host(Target::Claude);
                if let Some(file) = &file {
                    diagnostic = diagnostic.in_file(file.clone());
                }
                diagnostics.push(diagnostic);
            }
        }
    }
    if report["success"] != true && !diagnostics.iter().any(Diagnostic::is_error) {
        diagnostics.push(
            Diagnostic::error(Code::HostValidation, "claude plugin validate rejected the artifact")
                .for_host(Target::Claude),
        );
    }
    diagnostics
}

/// `claude` on PATH, if any (host validation defaults to on when it is there).
pub fn claude_on_path() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join("claude")).find(|candidate| {
        Command::new(candidate)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_targets_are_read_relative_to_the_root_token() {
        let command = "node \"${PLUGIN_ROOT}/hooks/a.codex.mjs\"";
        assert_eq!(command_target(command, "${PLUGIN_ROOT}").as_deref(), Some("hooks/a.codex.mjs"));
        assert_eq!(
            command_target("node \"${PLUGIN_ROOT}/runtime/x.js\" --host claude", "${PLUGIN_ROOT}").as_deref(),
            Some("runtime/x.js")
        );
        assert_eq!(command_target(command, "${CLAUDE_PLUGIN_ROOT}"), None);
        assert_eq!(command_target("bash x.sh", "${PLUGIN_ROOT}"), None);
    }

    #[test]
    fn hook_documents_are_checked_for_their_host_shape() {
        let grouped =
            serde_json::json!({"$schema": "x", "hooks": {"Stop": [{"hooks": [{"command": "node x", "timeout": 0}]}]}});
        let problems = hook_document_problems(&grouped, DocumentStyle::Grouped);
        assert_eq!(
            problems,
            [
                "unexpected root key `$schema`",
                "a `Stop` hook must have `type: \"command\"`",
                "a `Stop` timeout must be a positive whole number of seconds"
            ]
        );
        let flat = serde_json::json!({"version": 1, "hooks": {"stop": [{"command": "node x"}]}});
        assert!(hook_document_problems(&flat, DocumentStyle::Flat).is_empty());
    }
}
