//! Emission: the composite artifact as a map of path → bytes, its manifest, and the one
//! publisher that writes it to disk.
//!
//! Architecture invariant: nothing but `publish` writes an artifact's files (watch mode
//! putting back a manifest removed by hand does so in publish's turn), and it writes
//! nothing when the build has errors.

pub mod publish;

use std::collections::BTreeMap;

use crate::cache::Hash;
use crate::diagnostics::{Code, Diagnostic};
use crate::hosts::HostPlan;
use crate::model::Model;
use crate::output::{FileKind, OutputFile};

/// The name of the manifest at the artifact root.
pub const MANIFEST_FILE: &str = "agent-bundle.manifest.json";
/// Bumped whenever the manifest's shape changes.
pub const MANIFEST_VERSION: u32 = 1;

/// The artifact being composed from every host's files.
#[derive(Default)]
pub struct Artifact {
    files: BTreeMap<String, OutputFile>,
    /// The hashes of files added with theirs (a payload's, hashed once per content).
    hashes: BTreeMap<String, Hash>,
    diagnostics: Vec<Diagnostic>,
}

/// A file the build read, recorded in the manifest.
pub struct Input<'a> {
    pub path: &'a str,
    pub hash: Hash,
}

impl Artifact {
    /// Adds a file; the same bytes at one path are kept once, different bytes are AB4103.
    pub fn add(&mut self, file: OutputFile) {
        match self.files.get(&file.path) {
            Some(existing) if existing.bytes == file.bytes && existing.executable == file.executable => {}
            Some(_) => self.diagnostics.push(
                Diagnostic::error(
                    Code::OutputCollision,
                    format!("two outputs want different contents at `{}`", file.path),
                )
                .with_help("rename the payload or hook that produces this path"),
            ),
            None => {
                self.files.insert(file.path.clone(), file);
            }
        }
    }

    /// [`Artifact::add`] of a file whose bytes hash to `hash`.
    pub fn add_hashed(&mut self, file: OutputFile, hash: Hash) {
        if !self.files.contains_key(&file.path) {
            self.hashes.insert(file.path.clone(), hash);
        }
        self.add(file);
    }

    /// Adds the manifest and returns every file with the composition diagnostics.
    pub fn finish(
        mut self,
        model: &Model,
        plans: &[&HostPlan],
        runtime_epoch: Option<&str>,
        inputs: &[Input<'_>],
    ) -> (BTreeMap<String, OutputFile>, Vec<Diagnostic>) {
        let manifest = manifest(model, plans, &self.files, &self.hashes, inputs, runtime_epoch);
        self.add(OutputFile::generated(MANIFEST_FILE, manifest.into_bytes().into()));
        (self.files, self.diagnostics)
    }
}

/// The manifest, as canonical JSON: every row typed, its fields declared in the sorted order
/// canonical JSON writes them in (the test below holds that), so that thousands of payload
/// files cost no map per row.
fn manifest(
    model: &Model,
    plans: &[&HostPlan],
    files: &BTreeMap<String, OutputFile>,
    hashes: &BTreeMap<String, Hash>,
    inputs: &[Input<'_>],
    runtime_epoch: Option<&str>,
) -> String {
    let files = files
        .values()
        .map(|file| FileRow {
            blake3: hashes.get(&file.path).copied().unwrap_or_else(|| Hash::of(&file.bytes)).to_hex(),
            bytes: file.bytes.len(),
            executable: file.executable,
            kind: file.kind.as_str(),
            path: &file.path,
        })
        .collect();
    let hooks: Vec<_> = plans.iter().flat_map(|plan| plan.hooks.iter().map(|h| hook_row(plan.target, h))).collect();
    let mut inputs: Vec<_> =
        inputs.iter().map(|input| InputRow { blake3: input.hash.to_hex(), path: input.path }).collect();
    inputs.sort_by(|a, b| a.path.cmp(b.path));
    inputs.dedup();
    let payloads: Vec<_> =
        model.emitted_payloads().map(|payload| PayloadRow { name: &payload.name, source: &payload.source }).collect();
    let manifest = Manifest {
        compiler: Compiler { name: "agent-bundle", version: env!("CARGO_PKG_VERSION") },
        event_runtime: runtime_epoch.map(|epoch| EventRuntime { epoch, path: crate::hosts::RUNTIME_PATH }),
        files,
        hooks: crate::output::Sorted(&serde_json::Value::Array(hooks)),
        inputs,
        manifest_version: MANIFEST_VERSION,
        payloads,
        plugin: Plugin { description: model.description.as_deref(), name: &model.name, version: &model.version },
        targets: model.targets.iter().map(|t| t.as_str()).collect(),
    };
    let mut text = serde_json::to_string_pretty(&manifest).expect("the manifest always serializes");
    text.push('\n');
    text
}

// The manifest's shape; every struct's fields in sorted order (see `manifest`).
#[derive(serde::Serialize)]
struct Manifest<'a> {
    compiler: Compiler,
    #[serde(rename = "eventRuntime", skip_serializing_if = "Option::is_none")]
    event_runtime: Option<EventRuntime<'a>>,
    files: Vec<FileRow<'a>>,
    hooks: crate::output::Sorted<'a>,
    inputs: Vec<InputRow<'a>>,
    #[serde(rename = "manifestVersion")]
    manifest_version: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    payloads: Vec<PayloadRow<'a>>,
    plugin: Plugin<'a>,
    targets: Vec<&'static str>,
}

#[derive(serde::Serialize)]
struct Compiler {
    name: &'static str,
    version: &'static str,
}

#[derive(serde::Serialize)]
struct EventRuntime<'a> {
    epoch: &'a str,
    path: &'static str,
}

#[derive(serde::Serialize)]
struct FileRow<'a> {
    blake3: String,
    bytes: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    executable: bool,
    kind: &'static str,
    path: &'a str,
}

#[derive(serde::Serialize, PartialEq)]
struct InputRow<'a> {
    blake3: String,
    path: &'a str,
}

#[derive(serde::Serialize)]
struct PayloadRow<'a> {
    name: &'a str,
    source: &'a str,
}

#[derive(serde::Serialize)]
struct Plugin<'a> {
    description: Option<&'a str>,
    name: &'a str,
    version: &'a str,
}

/// One row of the hook index (the manifest's `hooks`, read back by `hooks list/simulate`).
pub fn hook_row(target: crate::model::Target, planned: &crate::hosts::PlannedHook) -> serde_json::Value {
    let mut row = serde_json::json!({
        "id": planned.hook_id,
        "name": planned.hook_name,
        "event": planned.trigger.key(),
        "host": target.as_str(),
        "nativeEvent": planned.native_event,
        "command": planned.command,
        "kind": match (planned.trigger, &planned.wrapper) {
            (_, None) => "prebuilt",
            (crate::model::Trigger::Route(_), Some(_)) => "event-route",
            (crate::model::Trigger::Config(_), Some(_)) => "config",
        },
    });
    if let Some(wrapper) = &planned.wrapper {
        row["path"] = wrapper.clone().into();
    }
    if let Some(matcher) = &planned.matcher {
        row["matcher"] = matcher.clone().into();
    }
    if let Some(timeout) = planned.timeout {
        row["timeout"] = timeout.into();
    }
    if let Some(route) = planned.route {
        route.write_fields(&mut row);
    }
    row
}

/// A payload file as it lands in the artifact.
pub fn payload_file(artifact_path: String, bytes: std::sync::Arc<[u8]>, executable: bool) -> OutputFile {
    OutputFile { path: artifact_path, bytes, executable, kind: FileKind::Prebuilt }
}
