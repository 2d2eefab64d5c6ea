//! Cacheable actions: how each expensive stage derives its action key and stores its outputs
//! in the content-addressed cache (`cache/`), so another process or machine that has done
//! the work already never repeats it.
//!
//! Every key starts with [`COMPILER`] (this binary's version, sources and action format
//! revision), then every input that can change the output, and nothing else: no absolute
//! paths, no timestamps. Results with errors are never cached (they are cheap to recompute
//! and must always be reported); a module chunk is cached with its warnings, which a build
//! from the cache reports again.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use crate::bundle::{self, Assembled, ModuleChunk, ModuleImport, ResolveFailure, Resolved, Span, Transpiled};
use crate::cache::{ActionRecord, Cache, Hash, KeyBuilder};
use crate::db::{Settings, WorkCounters};
use crate::diagnostics::Diagnostic;
use crate::emit::MANIFEST_FILE;
use crate::loader::DiskFiles;
use crate::output::OutputFile;
use crate::stamp::{Clean, Summary};

/// Names this compiler in every action key: its version, the revision of what its actions
/// record, and a fingerprint of the sources it was built from (`build.rs`: host tables,
/// linker, runtime, Cargo.lock), so a compiler edited without a version bump never meets
/// outputs another build of it cached. Bump the revision when an action's encoding or
/// meaning changes (its history: `cache-format/SPEC.md`, §4.1).
pub const COMPILER: &str =
    concat!("agent-bundle ", env!("CARGO_PKG_VERSION"), " actions/12 source/", env!("AGENT_BUNDLE_SOURCE_HASH"));

/// Outputs up to this size live inside their action record rather than as a separate
/// object. Why: creating a file is the dominant cost of a cold cache here (about 0.5 ms on
/// the development machine), and most chunks and documents are a few hundred bytes, so one
/// file per action halves the cache's writes and reads.
const INLINE_LIMIT: usize = 64 * 1024;

fn store_output(cache: &Cache, record: &mut ActionRecord, name: &str, bytes: &[u8]) {
    if bytes.len() <= INLINE_LIMIT
        && let Ok(text) = std::str::from_utf8(bytes)
    {
        record.values.insert(format!("inline:{name}"), text.to_owned());
        return;
    }
    record.outputs.insert(name.to_owned(), cache.put_object(bytes));
}

fn load_output(cache: &Cache, record: &ActionRecord, name: &str) -> Option<std::sync::Arc<[u8]>> {
    match record.values.get(&format!("inline:{name}")) {
        Some(text) => Some(text.as_bytes().into()),
        None => cache.get_object(record.outputs.get(name)?),
    }
}

/// `compile_module`, through the cache.
///
/// Two actions, so a warm cache never parses: `module-imports` maps the module's source to
/// the specifiers it imports; resolving those against the current project is cheap, and
/// `module-chunk` maps source plus resolutions to the linked chunk (resolution decides the
/// keys embedded in the chunk, so it must be part of the key).
pub fn module_chunk(
    cache: &Cache,
    key: &str,
    source: &str,
    transpile: &mut dyn FnMut() -> Transpiled,
    resolve: &mut dyn FnMut(&str) -> Result<Resolved, ResolveFailure>,
) -> ModuleChunk {
    let source_hash = Hash::of(source.as_bytes());
    let imports_key = KeyBuilder::new("module-imports")
        .field("compiler", COMPILER.as_bytes())
        .field("module", key.as_bytes())
        .field("source", source_hash.to_hex().as_bytes())
        .finish();
    if let Some(specifiers) = cache.get_action(&imports_key).and_then(|r| specifiers(&r)) {
        let resolutions: Vec<(String, String)> = specifiers
            .into_iter()
            .map(|specifier| {
                let resolution = describe(&resolve(&specifier));
                (specifier, resolution)
            })
            .collect();
        if let Some(chunk) =
            cache.get_action(&chunk_key(key, &source_hash, &resolutions)).and_then(|r| decode_chunk(cache, &r))
        {
            return chunk;
        }
        let unlisted: Vec<String> =
            resolutions.iter().filter(|(_, resolution)| resolution == UNLISTED).map(|(s, _)| s.clone()).collect();
        if !unlisted.is_empty() {
            return ModuleChunk::pending(key, unlisted);
        }
    }
    let mut resolutions: Vec<(String, String)> = Vec::new();
    let chunk = bundle::link_module(key, transpile(), &mut |specifier| {
        let resolved = resolve(specifier);
        if !resolutions.iter().any(|(s, _)| s == specifier) {
            resolutions.push((specifier.to_owned(), describe(&resolved)));
        }
        resolved
    });
    // The specifiers are the source's whatever they resolve to: kept when only resolving
    // failed (an import outside the root is resolved again once its directory is listed).
    let errors = chunk.diagnostics.iter().filter(|d| d.is_error());
    if errors.clone().all(|d| d.kind == bundle::BundleErrorKind::UnresolvedImport) {
        let specifiers: Vec<&str> = resolutions.iter().map(|(s, _)| s.as_str()).collect();
        let record = ActionRecord {
            outputs: BTreeMap::new(),
            values: BTreeMap::from([("specifiers".to_owned(), json!(specifiers).to_string())]),
        };
        cache.put_action(&imports_key, &record);
    }
    // A chunk with warnings is kept with them: a build from the cache says them again.
    if !chunk.diagnostics.iter().any(bundle::BundleDiagnostic::is_error) {
        cache.put_action(&chunk_key(key, &source_hash, &resolutions), &encode_chunk(cache, &chunk));
    }
    chunk
}

/// How an import into an outside directory not listed yet resolves, in a chunk's key.
const UNLISTED: &str = "unlisted";

fn chunk_key(key: &str, source: &Hash, resolutions: &[(String, String)]) -> Hash {
    let mut builder = KeyBuilder::new("module-chunk")
        .field("compiler", COMPILER.as_bytes())
        .field("module", key.as_bytes())
        .field("source", source.to_hex().as_bytes());
    for (specifier, resolution) in resolutions {
        builder = builder.field("specifier", specifier.as_bytes()).field("resolution", resolution.as_bytes());
    }
    builder.finish()
}

fn describe(resolved: &Result<Resolved, ResolveFailure>) -> String {
    match resolved {
        Ok(Resolved::Module(key)) => format!("module:{key}"),
        Ok(Resolved::Builtin(name)) => format!("builtin:{name}"),
        Err(ResolveFailure::Bare) => "bare".to_owned(),
        Err(ResolveFailure::NotFound) => "not-found".to_owned(),
        Err(ResolveFailure::Unlisted) => UNLISTED.to_owned(),
    }
}

fn specifiers(record: &ActionRecord) -> Option<Vec<String>> {
    serde_json::from_str(record.values.get("specifiers")?).ok()
}

/// What a chunk holds besides its code, as its record's values: the wrapper key covers
/// them too, since linking reads them (a side-effect `import 'node:os'` lives in
/// `builtins` alone).
fn chunk_values(chunk: &ModuleChunk) -> [(&'static str, String); 8] {
    let imports: Vec<Value> =
        chunk.imports.iter().map(|i| json!([i.specifier, i.key, i.span.start, i.span.end])).collect();
    [
        ("imports", json!(imports).to_string()),
        ("builtins", printed(&chunk.builtins)),
        ("links", printed(&chunk.links)),
        ("mappings", printed(&chunk.mappings)),
        ("renders", printed(&chunk.renders)),
        ("returns", printed(&chunk.returns)),
        ("components", printed(&chunk.components)),
        ("warnings", printed(&chunk.diagnostics)),
    ]
}

/// `value` as JSON, printed straight from it (every wrapper key prints each chunk it links;
/// `json!` would build a tree of it first).
fn printed(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).expect("strings, numbers and string-keyed maps print as JSON")
}

fn encode_chunk(cache: &Cache, chunk: &ModuleChunk) -> ActionRecord {
    let values = chunk_values(chunk).map(|(name, value)| (name.to_owned(), value));
    let mut record = ActionRecord { outputs: BTreeMap::new(), values: BTreeMap::from(values) };
    store_output(cache, &mut record, "code", chunk.code.as_bytes());
    record
}

fn decode_chunk(cache: &Cache, record: &ActionRecord) -> Option<ModuleChunk> {
    let code = String::from_utf8(load_output(cache, record, "code")?.to_vec()).ok()?;
    let imports: Vec<(String, String, u32, u32)> = serde_json::from_str(record.values.get("imports")?).ok()?;
    let builtins: Vec<String> = serde_json::from_str(record.values.get("builtins")?).ok()?;
    let links = serde_json::from_str(record.values.get("links")?).ok()?;
    let mappings = serde_json::from_str(record.values.get("mappings")?).ok()?;
    let renders = serde_json::from_str(record.values.get("renders")?).ok()?;
    let returns = serde_json::from_str(record.values.get("returns")?).ok()?;
    let components = serde_json::from_str(record.values.get("components")?).ok()?;
    let diagnostics = serde_json::from_str(record.values.get("warnings")?).ok()?;
    let imports = imports
        .into_iter()
        .map(|(specifier, key, start, end)| ModuleImport { specifier, key, span: Span { start, end } })
        .collect();
    Some(ModuleChunk {
        code,
        imports,
        builtins,
        links,
        mappings,
        unresolved: Vec::new(),
        diagnostics,
        renders,
        returns,
        components,
        // (Only a chunk without errors is recorded, and every such chunk was linked.)
        linked: true,
    })
}

/// Linking a handler with the runtime (the body every host's wrapper of it shares), through
/// the cache: keyed by the header and every linked chunk: its module key, code and values.
pub fn wrapper<'a>(
    cache: &Cache,
    counters: &WorkCounters,
    header: &str,
    chunks: impl Iterator<Item = (&'a str, &'a ModuleChunk)>,
    assemble: impl FnOnce() -> Assembled,
) -> Assembled {
    let hex = |text: &str| Hash::of(text.as_bytes()).to_hex();
    let mut builder =
        KeyBuilder::new("wrapper").field("compiler", COMPILER.as_bytes()).field("header", hex(header).as_bytes());
    for (module, chunk) in chunks {
        builder = builder.field("module", module.as_bytes()).field("code", hex(&chunk.code).as_bytes());
        for (name, value) in chunk_values(chunk) {
            builder = builder.field(name, hex(&value).as_bytes());
        }
    }
    let key = builder.finish();
    let text = |record: &ActionRecord, name| String::from_utf8(load_output(cache, record, name)?.to_vec()).ok();
    if let Some(record) = cache.get_action(&key)
        && let (Some(code), Some(source_map)) = (text(&record, "wrapper"), text(&record, "sourceMap"))
    {
        return Assembled { code, source_map };
    }
    counters.bundled.fetch_add(1, Ordering::Relaxed);
    let assembled = assemble();
    let mut record = ActionRecord::default();
    store_output(cache, &mut record, "wrapper", assembled.code.as_bytes());
    store_output(cache, &mut record, "sourceMap", assembled.source_map.as_bytes());
    cache.put_action(&key, &record);
    assembled
}

/// A host's emitted documents, through the cache, keyed by everything they are written from.
pub fn documents(cache: &Cache, identity: &str, write: impl FnOnce() -> Vec<OutputFile>) -> Vec<OutputFile> {
    let key = KeyBuilder::new("host-documents")
        .field("compiler", COMPILER.as_bytes())
        .field("identity", identity.as_bytes())
        .finish();
    if let Some(record) = cache.get_action(&key)
        && let Some(paths) = record.values.get("paths").and_then(|p| serde_json::from_str::<Vec<String>>(p).ok())
        && paths.iter().all(|path| crate::output::is_artifact_path(path) && path != MANIFEST_FILE)
        && crate::output::folders_of(paths.iter().map(String::as_str)).iter().all(|f| !paths.iter().any(|p| p == f))
    {
        let restored: Option<Vec<OutputFile>> = paths
            .into_iter()
            .map(|path| Some(OutputFile::generated(path.clone(), load_output(cache, &record, &path)?)))
            .collect();
        if let Some(files) = restored {
            return files;
        }
    }
    let files = write();
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let mut record = ActionRecord {
        outputs: BTreeMap::new(),
        values: BTreeMap::from([("paths".to_owned(), json!(paths).to_string())]),
    };
    for file in &files {
        store_output(cache, &mut record, &file.path, &file.bytes);
    }
    cache.put_action(&key, &record);
    files
}

/// Every loaded file's mode and content hash (`None`: it could not be read), by path: what
/// [`artifact_key`] and [`outside_dirs_key`] cover, each file hashed once for both (and for
/// every round).
pub type InputHashes = BTreeMap<String, (bool, Option<Hash>)>;

/// The [`InputHashes`] of `files`.
pub fn input_hashes(files: &DiskFiles) -> InputHashes {
    let hash = |bytes: &crate::loader::FileBytes| bytes.as_deref().ok().map(Hash::of);
    files.iter().map(|(path, (bytes, executable))| (path.clone(), (*executable, hash(bytes)))).collect()
}

/// The key of a whole project build: the settings and every file the loader read. Queries
/// see nothing else (no query touches the file system), so equal keys mean equal artifacts.
pub fn artifact_key(settings: &Settings, inputs: &InputHashes) -> Hash {
    inputs_key("artifact", settings, inputs)
}

/// The key of the `outside-dirs` action: which folders above the project root a build with
/// exactly these inputs loaded lists next (`build::compile_reaching_out`). Those follow from
/// the imports of the loaded modules alone, so a fresh checkout can load what the clean
/// build loaded, round by round, and reach the `artifact` key of all of it without compiling.
pub fn outside_dirs_key(settings: &Settings, inputs: &InputHashes) -> Hash {
    inputs_key("outside-dirs", settings, inputs)
}

/// A key over the settings and every loaded file (path, mode and content).
fn inputs_key(kind: &str, settings: &Settings, inputs: &InputHashes) -> Hash {
    inputs_key_of(kind, COMPILER, settings, inputs)
}

/// [`inputs_key`] for the compiler named `compiler`, as `cache-format/SPEC.md` §5.1 derives
/// it: the settings as the command line gave them (`config`, then each `target`), then each
/// file in byte order of its path.
fn inputs_key_of(kind: &str, compiler: &str, settings: &Settings, inputs: &InputHashes) -> Hash {
    let settings = keyed_settings(settings, inputs);
    let mut builder = KeyBuilder::new(kind).field("compiler", compiler.as_bytes());
    if let Some(config) = &settings.config_file {
        builder = builder.field("config", config.as_bytes());
    }
    for target in settings.target_override.iter().flatten() {
        builder = builder.field("target", target.as_str().as_bytes());
    }
    for (path, (executable, hash)) in inputs {
        builder = builder.field("path", path.as_bytes()).field("executable", if *executable { b"1" } else { b"0" });
        // A build that needs an unreadable file fails and records nothing; one that does
        // not is the same whatever the file holds.
        builder = match hash {
            Some(hash) => builder.field("source", hash.to_hex().as_bytes()),
            None => builder.field("unreadable", b""),
        };
    }
    builder.finish()
}

/// `settings` as a key sees them: `--config` naming the one config of the usual names among
/// `inputs` reads what a build without it reads, and warns of no other: the same key.
fn keyed_settings(settings: &Settings, inputs: &InputHashes) -> Settings {
    let present: Vec<&str> =
        crate::config::CONFIG_FILE_NAMES.iter().copied().filter(|name| inputs.contains_key(*name)).collect();
    match (&settings.config_file, present.as_slice()) {
        (Some(named), [only]) if named == only => Settings { config_file: None, ..settings.clone() },
        _ => settings.clone(),
    }
}

/// Records the folders a build with [`outside_dirs_key`] `key`'s files loaded listed next.
pub fn record_outside_dirs(cache: &Cache, key: &Hash, dirs: &[&str]) {
    let values = BTreeMap::from([("dirs".to_owned(), json!(dirs).to_string())]);
    cache.put_action(key, &ActionRecord { outputs: BTreeMap::new(), values });
}

/// The folders a build with [`outside_dirs_key`] `key`'s files loaded listed next, if known.
pub fn outside_dirs(cache: &Cache, key: &Hash) -> Option<Vec<String>> {
    let dirs: Vec<String> = serde_json::from_str(cache.probe_action(key)?.values.get("dirs")?).ok()?;
    // Only normalized keys above the root: a record is data, never a path to read anywhere else.
    let normal =
        |dir: &str| dir.split('/').skip_while(|part| *part == "..").all(|part| !matches!(part, "" | "." | ".."));
    dirs.iter().all(|dir| crate::loader::is_outside(dir) && normal(dir)).then_some(dirs)
}

/// What the clean build of an [`artifact_key`]'s inputs published.
pub struct PublishedArtifact {
    /// The blake3 of its manifest, and its warnings.
    pub clean: Clean,
    /// Its [`crate::artifact::pack`] and the manifest's length at the pack's start.
    pack: Option<(Hash, usize)>,
}

/// What the cache knows the clean build of `key`'s `inputs` published (a lookup that counts
/// no miss: `build` counts one when neither this nor [`outside_dirs`] answers).
pub fn published_artifact(cache: &Cache, key: &Hash, inputs: &InputHashes) -> Option<PublishedArtifact> {
    let record = cache.probe_action(key)?;
    let manifest = record.values.get("manifest")?.parse().ok()?;
    // (Warnings this build cannot read, a code it does not know: no answer.)
    let warnings: Vec<Diagnostic> = match record.values.get("warnings") {
        Some(warnings) => serde_json::from_str(warnings).ok()?,
        None => Vec::new(),
    };
    // A record is data: what it calls a warning is one, about one of the inputs (a build
    // answered by it shows the text of that file; a record naming `/etc/passwd` would print it).
    let said_of_inputs = |warning: &Diagnostic| {
        !warning.is_error() && warning.file.as_ref().is_none_or(|file| inputs.contains_key(file))
    };
    if !warnings.iter().all(said_of_inputs) {
        return None;
    }
    // A pack in an encoding this build does not read is no pack: the stages answer instead.
    let readable = record.values.get("packEncoding").is_some_and(|e| e == crate::artifact::PACK_ENCODING);
    let manifest_len = record.values.get("manifestBytes").and_then(|n| decimal(n)).filter(|_| readable);
    let pack = record.outputs.get("pack").copied().zip(manifest_len);
    Some(PublishedArtifact { clean: Clean { manifest, warnings }, pack })
}

/// `text` as a decimal number written as SPEC.md has it: digits only, no leading zero.
fn decimal(text: &str) -> Option<usize> {
    crate::source::is_plain_decimal(text).then(|| text.parse().ok()).flatten()
}

/// The files of `published`, from its pack in the cache (verified), or `None`.
pub fn restore_artifact(
    cache: &Cache,
    published: &PublishedArtifact,
) -> Option<(BTreeMap<String, OutputFile>, Summary)> {
    let (pack, manifest_len) = published.pack?;
    crate::artifact::unpack(&cache.get_object(&pack)?, manifest_len, &published.clean.manifest)
}

/// Records that a clean build of `key`'s inputs published `files` with `warnings`: their
/// manifest's hash, the warnings (when there are any), and every file in one pack object
/// unless they are larger than [`crate::artifact::PACK_LIMIT`].
pub fn record_published_artifact(
    cache: &Cache,
    key: &Hash,
    files: &BTreeMap<String, OutputFile>,
    warnings: &[Diagnostic],
) {
    let Some(manifest) = files.get(MANIFEST_FILE) else {
        return;
    };
    let mut record = ActionRecord {
        outputs: BTreeMap::new(),
        values: BTreeMap::from([("manifest".to_owned(), Hash::of(&manifest.bytes).to_hex())]),
    };
    if !warnings.is_empty() {
        record.values.insert("warnings".to_owned(), printed(&warnings));
    }
    if let Some(pack) = crate::artifact::pack(files) {
        record.outputs.insert("pack".to_owned(), cache.put_object(&pack));
        record.values.insert("manifestBytes".to_owned(), manifest.bytes.len().to_string());
        record.values.insert("packEncoding".to_owned(), crate::artifact::PACK_ENCODING.to_owned());
    }
    cache.put_action(key, &record);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn files(entries: &[(&str, &str, bool)]) -> DiskFiles {
        entries
            .iter()
            .map(|(path, text, executable)| ((*path).to_owned(), (Ok(Arc::from(text.as_bytes())), *executable)))
            .collect()
    }

    #[test]
    fn an_outside_dirs_record_names_normalized_folders_above_the_root_or_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let options = crate::cache::CacheOptions { dir: Some(dir.path().to_owned()), remote: None };
        let cache = Cache::open(&options).unwrap();
        let answer = |dirs: &[&str]| {
            let key = Hash::of(format!("{dirs:?}").as_bytes());
            record_outside_dirs(&cache, &key, dirs);
            outside_dirs(&cache, &key)
        };
        assert_eq!(answer(&["../../shared", ".."]), Some(vec!["../../shared".to_owned(), "..".to_owned()]));
        for bad in ["src", "../a/../b", "../a//b", "../.", "/etc"] {
            assert_eq!(answer(&["../ok", bad]), None, "{bad}");
        }
    }

    #[test]
    fn the_artifact_key_covers_every_input_byte_mode_path_and_setting() {
        let base = files(&[("agent-bundle.config.ts", "export default {};\n", false), ("bin/run", "x", true)]);
        let key = artifact_key(&Settings::default(), &input_hashes(&base));
        assert_eq!(key, artifact_key(&Settings::default(), &input_hashes(&base.clone())));
        let variants = [
            files(&[("agent-bundle.config.ts", "export default { };\n", false), ("bin/run", "x", true)]),
            files(&[("agent-bundle.config.ts", "export default {};\n", false), ("bin/run", "x", false)]),
            files(&[("agent-bundle.config.ts", "export default {};\n", false), ("bin/run2", "x", true)]),
            files(&[("agent-bundle.config.ts", "export default {};\n", false)]),
        ];
        for variant in &variants {
            assert_ne!(artifact_key(&Settings::default(), &input_hashes(variant)), key);
        }
        let other = Settings { config_file: Some("other.config.ts".into()), target_override: None };
        assert_ne!(artifact_key(&other, &input_hashes(&base)), key);
        // `--config` naming the one usual config there keys as no `--config` does; beside
        // another of the usual names (which a build without it warns of), it does not.
        let named = Settings { config_file: Some("agent-bundle.config.ts".into()), target_override: None };
        assert_eq!(artifact_key(&named, &input_hashes(&base)), key);
        let mut two = base.clone();
        two.extend(files(&[("agent-bundle.config.mjs", "export default {};\n", false)]));
        assert_ne!(artifact_key(&named, &input_hashes(&two)), artifact_key(&Settings::default(), &input_hashes(&two)));
    }

    /// An artifact within the bound is recorded with its pack, and restores; a larger one
    /// only with its manifest's hash; a record whose pack is not an LZ4 frame, without one.
    #[test]
    fn artifacts_past_the_pack_limit_are_recorded_without_a_pack() {
        let dir = tempfile::tempdir().unwrap();
        let cache =
            Cache::open(&crate::cache::CacheOptions { dir: Some(dir.path().to_owned()), remote: None }).unwrap();
        let artifact = |payload: Vec<u8>| {
            let rows = json!({
                "compiler": { "name": "agent-bundle", "version": "0" },
                "plugin": { "name": "p", "version": "1.0.0" },
                "targets": [],
                "files": [{ "path": "big.bin", "bytes": payload.len(), "blake3": Hash::of(&payload).to_hex(), "kind": "prebuilt" }],
            });
            // (Begun as a build writes a manifest, as a restored one must.)
            let text = serde_json::to_string_pretty(&rows).unwrap();
            let manifest = OutputFile::generated(MANIFEST_FILE, text.into_bytes().into());
            let payload = crate::emit::payload_file("big.bin".into(), payload.into(), false);
            BTreeMap::from([(MANIFEST_FILE.to_owned(), manifest), ("big.bin".to_owned(), payload)])
        };
        let (small, large) = (Hash::of(b"small"), Hash::of(b"large"));
        let files = artifact(vec![7; 16]);
        record_published_artifact(&cache, &small, &files, &[]);
        let restored =
            restore_artifact(&cache, &published_artifact(&cache, &small, &InputHashes::new()).unwrap()).unwrap();
        assert_eq!(restored.0, files);
        let mut unmarked = cache.probe_action(&small).unwrap();
        unmarked.values.remove("packEncoding");
        cache.put_action(&Hash::of(b"unmarked"), &unmarked);
        let published = published_artifact(&cache, &Hash::of(b"unmarked"), &InputHashes::new()).unwrap();
        assert!(published.pack.is_none(), "a pack without its encoding (a raw one of an older build) is not read");
        record_published_artifact(&cache, &large, &artifact(vec![7; crate::artifact::PACK_LIMIT + 1]), &[]);
        let published = published_artifact(&cache, &large, &InputHashes::new()).unwrap();
        assert!(published.pack.is_none() && restore_artifact(&cache, &published).is_none());
    }

    /// The `artifact` key is derived as `cache-format/SPEC.md` §5.1 says, which another
    /// tool checks against the vectors its own implementation wrote.
    #[test]
    fn the_artifact_key_matches_the_spec_vectors() {
        let vectors: Value = serde_json::from_str(include_str!("../cache-format/vectors.json")).unwrap();
        let cases = vectors["artifact_keys"].as_array().unwrap();
        assert_eq!(cases.len(), 2);
        for case in cases {
            let targets = case["targets"].as_array().map(|targets| {
                targets.iter().map(|t| crate::model::Target::parse(t.as_str().unwrap()).unwrap()).collect()
            });
            let config_file = case["config"].as_str().map(str::to_owned);
            let settings = Settings { config_file, target_override: targets };
            let inputs: InputHashes = case["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|file| {
                    let source = file["utf8"].as_str().map(|text| Hash::of(text.as_bytes()));
                    (file["path"].as_str().unwrap().to_owned(), (file["executable"].as_bool().unwrap(), source))
                })
                .collect();
            let key = inputs_key_of("artifact", case["compiler"].as_str().unwrap(), &settings, &inputs);
            assert_eq!(key.to_hex(), case["key"].as_str().unwrap());
        }
    }

    /// A record is data: one whose warning is an error, or is about a file the build did not
    /// read (`/etc/passwd`, which a build answered by it would show), is no answer; nor is a
    /// manifest length written other than as plain decimal digits a pack.
    #[test]
    fn a_record_claiming_more_than_a_clean_build_said_is_no_answer() {
        let dir = tempfile::tempdir().unwrap();
        let cache =
            Cache::open(&crate::cache::CacheOptions { dir: Some(dir.path().to_owned()), remote: None }).unwrap();
        let inputs = input_hashes(&files(&[("agent-bundle.config.ts", "export default {};\n", false)]));
        let manifest = OutputFile::generated(MANIFEST_FILE, b"{}".as_slice().into());
        let artifact = BTreeMap::from([(MANIFEST_FILE.to_owned(), manifest)]);
        let warn = |warning: Diagnostic| {
            let key = Hash::of(format!("{warning:?}").as_bytes());
            record_published_artifact(&cache, &key, &artifact, &[warning]);
            published_artifact(&cache, &key, &inputs).is_some()
        };
        let warning = || Diagnostic::warning(crate::diagnostics::Code::HookTargetNotSelected, "x");
        assert!(warn(warning()));
        assert!(warn(warning().in_file("agent-bundle.config.ts".to_owned())));
        assert!(!warn(warning().in_file("/etc/passwd".to_owned())));
        assert!(!warn(warning().in_file("../../etc/hostname".to_owned())));
        assert!(!warn(Diagnostic::error(crate::diagnostics::Code::HookTargetNotSelected, "x")));
        assert_eq!(decimal("489"), Some(489));
        assert_eq!(decimal("0"), Some(0));
        for written in ["+489", "0489", "", " 489", "4_89", "-1"] {
            assert_eq!(decimal(written), None, "{written:?}");
        }
    }

    /// A documents record naming a path outside the artifact (as a hostile remote could
    /// write) is a miss: the documents are written again.
    #[test]
    fn a_documents_record_with_an_escaping_path_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache =
            Cache::open(&crate::cache::CacheOptions { dir: Some(dir.path().to_owned()), remote: None }).unwrap();
        let document = |path: &str| vec![OutputFile::generated(path, b"{}".as_slice().into())];
        documents(&cache, "identity", || document("../escaped.json"));
        let again = documents(&cache, "identity", || document("hooks.json"));
        assert_eq!(again, document("hooks.json"));
        assert_eq!(documents(&cache, "identity", || panic!("a hit")), document("hooks.json"));
        // Nor one naming the manifest, which only the build writes, or a file in a file.
        documents(&cache, "other", || document(MANIFEST_FILE));
        assert_eq!(documents(&cache, "other", || document("hooks.json")), document("hooks.json"));
        let nested = || [document("hooks"), document("hooks/hooks.json")].concat();
        documents(&cache, "nested", nested);
        assert_eq!(documents(&cache, "nested", || document("hooks.json")), document("hooks.json"));
    }
}
