//! Emission: the composite artifact as a map of path → bytes, its manifest, and the one
//! publisher that writes it to disk.
//!
//! Architecture invariant: nothing but `publish` writes an artifact's files (watch mode
//! putting back a manifest removed by hand does so in publish's turn), and it writes
//! nothing when the build has errors.

pub mod manifest;
pub mod publish;

use std::collections::BTreeMap;

use crate::cache::Hash;
use crate::diagnostics::{Code, Diagnostic};
use crate::hosts::HostPlan;
use crate::model::Model;
use crate::output::{FileKind, OutputFile};
pub use manifest::{Input, MANIFEST_FILE};

/// The artifact being composed from every host's files.
#[derive(Default)]
pub struct Artifact {
    files: BTreeMap<String, OutputFile>,
    /// The hashes of files added with theirs (a payload's, hashed once per content).
    hashes: BTreeMap<String, Hash>,
    diagnostics: Vec<Diagnostic>,
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
        let manifest = manifest::render(model, plans, &self.files, &self.hashes, inputs, runtime_epoch);
        self.add(OutputFile::generated(MANIFEST_FILE, manifest.into_bytes().into()));
        (self.files, self.diagnostics)
    }
}

/// A payload file as it lands in the artifact.
pub fn payload_file(artifact_path: String, bytes: std::sync::Arc<[u8]>, executable: bool) -> OutputFile {
    OutputFile { path: artifact_path, bytes, executable, kind: FileKind::Prebuilt }
}
