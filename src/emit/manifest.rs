//! The artifact's manifest, `agent-bundle.manifest.json`: its one schema, written by the
//! build and read back by `hooks list/simulate`, `build --json`, the stamp, the cache's
//! packs and `validate`.
//!
//! Every struct declares its fields in sorted order, the order canonical JSON writes keys in
//! (a test holds that), so that thousands of payload files serialize with no map per row.
//! A pack's manifest (`cache-format/SPEC.md` §5.1) needs only `plugin`, `targets` and
//! `files`: the other fields default when absent to [`Manifest::parse`], while
//! [`Manifest::read`] (an artifact's, for `hooks`, `build --json` and `validate`) asks for
//! every field a build writes, in its version.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::cache::Hash;
use crate::hosts::{HostPlan, PlannedHook, RouteForm};
use crate::model::{Model, Target, Trigger};
use crate::output::{FileKind, OutputFile};
use crate::stamp::Summary;

/// The name of the manifest at the artifact root.
pub const MANIFEST_FILE: &str = "agent-bundle.manifest.json";
/// The compiler a manifest names: what tells an artifact of this tool's from a folder that
/// merely holds a file of the manifest's name.
const COMPILER_NAME: &str = "agent-bundle";
/// How every manifest a build writes begins: canonical JSON, its keys sorted, so `compiler`
/// first (a test holds the writer to it).
const MANIFEST_HEAD: &[u8] = b"{\n  \"compiler\": {\n    \"name\": \"agent-bundle\",";

/// What marks a folder as an artifact of agent-bundle's.
#[derive(Debug, PartialEq, Eq)]
pub enum Mark {
    /// A manifest as a build writes it, of any version.
    Manifest,
    /// A file of the manifest's name holding anything else (empty, `{}`, another tool's).
    Foreign,
    None,
}

/// What marks `dir` as an artifact, reading no more of its manifest than its head: a folder
/// whose manifest names no agent-bundle build is the user's, which a publish would empty.
pub fn mark(dir: &Path) -> Mark {
    match crate::output::begins_with(&dir.join(MANIFEST_FILE), MANIFEST_HEAD) {
        None => Mark::None,
        Some(true) => Mark::Manifest,
        Some(false) => Mark::Foreign,
    }
}

/// Whether `bytes` (a manifest's, or its head) begin as a build writes a manifest.
pub fn is_written(bytes: &[u8]) -> bool {
    bytes.starts_with(MANIFEST_HEAD)
}

/// Whether `dir` holds an artifact a publish may replace ([`mark`]).
pub fn holds_artifact(dir: &Path) -> bool {
    mark(dir) == Mark::Manifest
}
/// Bumped whenever the manifest's shape changes.
pub const MANIFEST_VERSION: u32 = 1;

/// The manifest. Written borrowing from the build; read back owning its text.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest<'a> {
    #[serde(default)]
    pub compiler: Compiler<'a>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_runtime: Option<EventRuntime<'a>>,
    pub files: Vec<FileRow<'a>>,
    #[serde(default)]
    pub hooks: Vec<HookRow>,
    #[serde(default)]
    pub inputs: Vec<InputRow<'a>>,
    #[serde(default)]
    pub manifest_version: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub payloads: Vec<PayloadRow<'a>>,
    pub plugin: Plugin<'a>,
    pub targets: Vec<Target>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Compiler<'a> {
    pub name: Cow<'a, str>,
    pub version: Cow<'a, str>,
}

/// The shared runtime, when a route asks for it.
#[derive(Debug, Serialize, Deserialize)]
pub struct EventRuntime<'a> {
    /// Changes whenever what it runs changes (`db::event_runtime`).
    pub epoch: Cow<'a, str>,
    pub path: Cow<'a, str>,
}

/// A file of the artifact (the manifest itself excepted).
#[derive(Debug, Serialize, Deserialize)]
pub struct FileRow<'a> {
    pub blake3: Cow<'a, str>,
    pub bytes: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub executable: bool,
    pub kind: FileKind,
    pub path: Cow<'a, str>,
}

/// One row of the hook index (what `hooks list` and `hooks simulate` read).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookRow {
    pub command: String,
    pub event: String,
    /// For shared routes: whether a standalone form answers when no runtime is live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<bool>,
    pub host: Target,
    pub id: String,
    pub kind: HookKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    pub name: String,
    pub native_event: String,
    /// The wrapper; `None` for a prebuilt handler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// For routes: `shared` or `standalone`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u32>,
}

/// What runs a hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HookKind {
    /// A config hook's handler, in its wrapper.
    Config,
    /// An event route, in its wrapper.
    EventRoute,
    /// A prebuilt script of a payload (no wrapper: it cannot be simulated).
    Prebuilt,
}

/// A file the build read.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub struct InputRow<'a> {
    pub blake3: Cow<'a, str>,
    pub path: Cow<'a, str>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct PayloadRow<'a> {
    pub name: Cow<'a, str>,
    /// The project folder it was copied from.
    pub source: Cow<'a, str>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Plugin<'a> {
    #[serde(default)]
    pub description: Option<Cow<'a, str>>,
    pub name: Cow<'a, str>,
    pub version: Cow<'a, str>,
}

/// A file the build read, by its project-relative path and the blake3 of its bytes.
pub struct Input<'a> {
    pub path: &'a str,
    pub hash: Hash,
}

impl HookRow {
    /// The row of `planned`, one of `target`'s hooks.
    pub fn of(target: Target, planned: &PlannedHook) -> HookRow {
        let kind = match (planned.trigger, &planned.wrapper) {
            (_, None) => HookKind::Prebuilt,
            (Trigger::Route(_), Some(_)) => HookKind::EventRoute,
            (Trigger::Config(_), Some(_)) => HookKind::Config,
        };
        HookRow {
            command: planned.command.clone(),
            event: planned.trigger.key().to_owned(),
            fallback: planned.route.and_then(RouteForm::fallback),
            host: target,
            id: planned.hook_id.clone(),
            kind,
            matcher: planned.matcher.clone(),
            name: planned.hook_name.clone(),
            native_event: planned.native_event.to_owned(),
            path: planned.wrapper.clone(),
            runtime: planned.route.map(|route| route.runtime().to_owned()),
            timeout: planned.timeout,
        }
    }

    pub fn is_shared(&self) -> bool {
        self.runtime.as_deref() == Some("shared")
    }

    pub fn is_prebuilt(&self) -> bool {
        self.kind == HookKind::Prebuilt
    }

    /// Whether the host would run this hook for the tool `native_input` names: `None` when
    /// the hook has no matcher (or names no tool), else whether its matcher matches the
    /// tool's name or one the host matches it by too, as the host's regex engine would (a
    /// matcher no engine takes: no).
    pub fn matches_tool(&self, native_input: &serde_json::Value) -> Option<bool> {
        let (matcher, tool) = (self.matcher.as_deref()?, native_input.get("tool_name")?.as_str()?);
        let Ok(regex) = regex_automata::meta::Regex::new(matcher) else { return Some(false) };
        let names: Vec<&str> = match &crate::hosts::table(self.host).hooks {
            Some(hooks) => hooks.tools.matched_as(tool).collect(),
            None => vec![tool],
        };
        Some(names.iter().any(|name| regex.is_match(name)))
    }
}

/// The manifest of an artifact of `files` (every one but the manifest), built from `model`
/// with the hooks of `plans`, as canonical JSON. `hashes` holds the blake3 of the files
/// hashed already (a payload's, hashed once per content).
pub fn render(
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
            blake3: hashes.get(&file.path).copied().unwrap_or_else(|| Hash::of(&file.bytes)).to_hex().into(),
            bytes: file.bytes.len() as u64,
            executable: file.executable,
            kind: file.kind,
            path: file.path.as_str().into(),
        })
        .collect();
    let mut inputs: Vec<_> =
        inputs.iter().map(|input| InputRow { blake3: input.hash.to_hex().into(), path: input.path.into() }).collect();
    inputs.sort_by(|a, b| a.path.cmp(&b.path));
    inputs.dedup();
    let manifest = Manifest {
        compiler: Compiler { name: COMPILER_NAME.into(), version: env!("CARGO_PKG_VERSION").into() },
        event_runtime: runtime_epoch
            .map(|epoch| EventRuntime { epoch: epoch.into(), path: crate::hosts::RUNTIME_PATH.into() }),
        files,
        hooks: plans.iter().flat_map(|plan| plan.hooks.iter().map(|hook| HookRow::of(plan.target, hook))).collect(),
        inputs,
        manifest_version: MANIFEST_VERSION,
        payloads: model
            .emitted_payloads()
            .map(|payload| PayloadRow { name: payload.name.as_str().into(), source: payload.source.as_str().into() })
            .collect(),
        plugin: Plugin {
            description: model.description.as_deref().map(Cow::Borrowed),
            name: model.name.as_str().into(),
            version: model.version.as_str().into(),
        },
        targets: model.targets.clone(),
    };
    manifest.text()
}

impl Manifest<'static> {
    /// The manifest `text` holds.
    pub fn parse(text: &[u8]) -> serde_json::Result<Manifest<'static>> {
        serde_json::from_slice(text)
    }

    /// The manifest of the artifact at `dir`, holding every field a build writes, in the
    /// version it writes (a pack's shorter manifest, read by `parse`, would pass `validate`
    /// vacuously, and list no hooks), or what keeps it from being read.
    pub fn read(dir: &Path) -> Result<Manifest<'static>, String> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct AsWritten {
            #[serde(rename = "compiler")]
            _compiler: serde::de::IgnoredAny,
            #[serde(rename = "hooks")]
            _hooks: serde::de::IgnoredAny,
            #[serde(rename = "inputs")]
            _inputs: serde::de::IgnoredAny,
            manifest_version: u32,
        }
        let as_written = |bytes: &[u8]| match serde_json::from_slice::<AsWritten>(bytes)?.manifest_version {
            MANIFEST_VERSION => Ok(()),
            other => Err(serde::de::Error::custom(format!(
                "its manifestVersion is {other}, where this agent-bundle writes {MANIFEST_VERSION}"
            ))),
        };
        let path = dir.join(MANIFEST_FILE);
        let bytes = crate::artifact::read_regular(&path).map_err(|e| {
            // A project's folder given for its artifact (`--artifact .`): say where that is.
            if crate::config::holds_config_file(dir) {
                let artifact = dir.join(crate::build::DEFAULT_ARTIFACT);
                format!(
                    "{e} ({} holds a project; its artifact is {} unless built with --out)",
                    dir.display(),
                    artifact.display()
                )
            } else {
                format!("{e} (is it an artifact built by `agent-bundle build`?)")
            }
        })?;
        Manifest::parse(&bytes)
            .and_then(|manifest| as_written(&bytes).map(|()| manifest))
            .map_err(|e| format!("{} is not a valid agent-bundle manifest: {e}", path.display()))
    }
}

impl Manifest<'_> {
    /// The manifest as a build writes it.
    fn text(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("the manifest always serializes");
        text.push('\n');
        text
    }

    /// Enough to report the artifact as an up-to-date build's.
    pub fn summary(&self) -> Summary {
        Summary {
            plugin: self.plugin.name.to_string(),
            version: self.plugin.version.to_string(),
            targets: self.targets.iter().map(|target| target.as_str().to_owned()).collect(),
            files: self.files.len() + 1,
            payload_sources: self.payloads.iter().map(|row| row.source.to_string()).collect(),
        }
    }

    /// Every file's path, the manifest's too, sorted.
    pub fn paths(&self) -> Vec<&str> {
        let mut paths: Vec<&str> = self.files.iter().map(|row| &*row.path).chain([MANIFEST_FILE]).collect();
        paths.sort_unstable();
        paths
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serialized rows keep their fields in sorted order: canonical JSON, with no map per row.
    #[test]
    fn every_row_writes_its_fields_in_sorted_order() {
        let rows = serde_json::json!({
            "manifest": Manifest {
                compiler: Compiler::default(),
                event_runtime: Some(EventRuntime { epoch: "e".into(), path: "p".into() }),
                files: vec![FileRow { blake3: "h".into(), bytes: 1, executable: true, kind: FileKind::Bundle, path: "a".into() }],
                hooks: vec![HookRow {
                    command: "c".into(), event: "e".into(), fallback: Some(true), host: Target::Claude, id: "i".into(),
                    kind: HookKind::EventRoute, matcher: Some("m".into()), name: "n".into(), native_event: "N".into(),
                    path: Some("p".into()), runtime: Some("shared".into()), timeout: Some(1),
                }],
                inputs: vec![InputRow { blake3: "h".into(), path: "i".into() }],
                manifest_version: MANIFEST_VERSION,
                payloads: vec![PayloadRow { name: "n".into(), source: "s".into() }],
                plugin: Plugin { description: Some("d".into()), name: "n".into(), version: "v".into() },
                targets: vec![Target::Claude],
            },
        });
        fn sorted(value: &serde_json::Value) -> bool {
            match value {
                serde_json::Value::Object(map) => map.keys().is_sorted() && map.values().all(sorted),
                serde_json::Value::Array(items) => items.iter().all(sorted),
                _ => true,
            }
        }
        assert!(sorted(&rows), "{rows:#}");
        let manifest = &rows["manifest"];
        let hook = manifest["hooks"][0].as_object().unwrap();
        assert_eq!(hook.len(), 12, "every field of a hook row written: {hook:?}");
        let file = manifest["files"][0].as_object().unwrap();
        assert_eq!(file.len(), 5, "every field of a file row written: {file:?}");
    }

    /// A manifest as a build writes it begins as [`mark`] reads it; a file of its name holding
    /// anything else is no artifact's.
    #[test]
    fn a_written_manifest_marks_its_folder_and_no_other_file_does() {
        let manifest = Manifest {
            compiler: Compiler { name: COMPILER_NAME.into(), version: "9.9.9".into() },
            event_runtime: None,
            files: Vec::new(),
            hooks: Vec::new(),
            inputs: Vec::new(),
            manifest_version: MANIFEST_VERSION,
            payloads: Vec::new(),
            plugin: Plugin { description: None, name: "p".into(), version: "1.0.0".into() },
            targets: vec![Target::Claude],
        };
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(mark(dir.path()), Mark::None);
        std::fs::write(dir.path().join(MANIFEST_FILE), manifest.text()).unwrap();
        assert_eq!(mark(dir.path()), Mark::Manifest);
        for other in
            ["", "{}", "{\"compiler\":{\"name\":\"agent-bundle\"}}", "{\n  \"compiler\": {\n    \"name\": \"other\","]
        {
            std::fs::write(dir.path().join(MANIFEST_FILE), other).unwrap();
            assert_eq!(mark(dir.path()), Mark::Foreign, "{other:?}");
        }
    }

    /// A pack's manifest (`plugin`, `targets`, `files`, as the spec's vectors hold) reads;
    /// the fields it lacks take their defaults.
    #[test]
    fn a_manifest_of_plugin_targets_and_files_alone_reads() {
        let text = br#"{"plugin":{"name":"p","version":"1.0.0"},"targets":["claude"],"files":[{"path":"a","bytes":1,"blake3":"h","kind":"prebuilt"}]}"#;
        let manifest = Manifest::parse(text).unwrap();
        assert_eq!((manifest.manifest_version, manifest.hooks.len(), manifest.files[0].executable), (0, 0, false));
        assert_eq!(manifest.paths(), ["a", MANIFEST_FILE]);
        assert!(Manifest::parse(br#"{"plugin":{"name":"p","version":"1"},"targets":["vim"],"files":[]}"#).is_err());
    }

    /// A matcher matches a tool as its host does: Codex matches `apply_patch` by `Edit` and
    /// `Write` too, though its input names `apply_patch`; Claude Code has no such alias.
    #[test]
    fn a_matcher_matches_a_tool_by_the_names_its_host_matches_it_by() {
        let row = |host: Target, matcher: &str| {
            let row = serde_json::json!({
                "command": "", "event": "beforeTool", "host": host, "id": "", "kind": "config",
                "matcher": matcher, "name": "", "nativeEvent": "PreToolUse",
            });
            serde_json::from_value::<HookRow>(row).unwrap()
        };
        let input = |tool: &str| serde_json::json!({ "tool_name": tool });
        assert_eq!(row(Target::Codex, "^Edit$").matches_tool(&input("apply_patch")), Some(true));
        assert_eq!(row(Target::Codex, "^Edit$").matches_tool(&input("Bash")), Some(false));
        assert_eq!(row(Target::Claude, "^Edit$").matches_tool(&input("apply_patch")), Some(false));
        assert_eq!(row(Target::Claude, "^Edit$").matches_tool(&input("Edit")), Some(true));
        assert_eq!(row(Target::Claude, "^Edit$").matches_tool(&serde_json::json!({})), None);
    }
}
