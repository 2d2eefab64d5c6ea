//! The build driver: runs the query graph over a loaded project, fans hosts and wrappers out
//! over rayon (one database clone per task), composes the artifact and publishes it.
//!
//! Fan-out happens here, never inside a query: each task warms the memo of one
//! `host_plan`/`wrapper`, and composition then reads the memoized values in order, so the
//! result does not depend on scheduling.

use std::collections::{BTreeMap, BTreeSet};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use crate::cache::{Cache, CacheStats, Hash};
use crate::db::{self, Database, Db, Project, Settings, TargetKey, WrapperKey};
use crate::diagnostics::{Code, Diagnostic, has_errors};
use crate::emit::{self, Artifact, Input, publish::PublishStats};
use crate::hosts::{self, HostPlan};
use crate::loader::{BeforeListing, DiskFiles, LoadedProject, OutsideDir};
use crate::model::{Hook, Model, Target};
use crate::output::{FileKind, OutputFile};
use crate::{actions, stamp};

/// What `agent-bundle build` is asked to do.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// Project root (absolute).
    pub root: PathBuf,
    /// `--config`, relative to the root.
    pub config: Option<String>,
    /// `--target`, replacing the config's targets.
    pub targets: Option<Vec<Target>>,
    /// Artifact directory (absolute; a symbolic link already followed, see
    /// [`crate::emit::publish::artifact_dir`]).
    pub out_dir: PathBuf,
    /// The artifact directory as asked for (`<root>/artifact`, `--out`; its folders resolved,
    /// itself not followed): where `out_dir` is reached from. A watch session follows it
    /// again when it changes (a link pointed elsewhere or removed).
    pub out_dir_as_named: PathBuf,
    /// The content-addressed cache the stages read and fill (`Cache::disabled()` for none).
    pub cache: Arc<Cache>,
}

/// Where `build` puts the artifact in its root, and where the commands reading one look.
pub const DEFAULT_ARTIFACT: &str = "artifact";

impl BuildOptions {
    /// A build of the project at `root` (absolute) into `out` (absolute; `<root>/artifact`
    /// when `None`), for the config's own targets: the artifact's path taken as watch events
    /// name it (its folders resolved), and followed where it is a link.
    pub fn new(root: PathBuf, out: Option<PathBuf>, cache: Arc<Cache>) -> BuildOptions {
        let named = out.unwrap_or_else(|| root.join(DEFAULT_ARTIFACT));
        let out_dir_as_named = emit::publish::resolved_but_last(&named);
        let out_dir = emit::publish::artifact_dir(&out_dir_as_named);
        BuildOptions { root, config: None, targets: None, out_dir, out_dir_as_named, cache }
    }

    pub fn settings(&self) -> Settings {
        Settings { config_file: self.config.clone(), target_override: self.targets.clone() }
    }
}

/// Everything a compile produced, before or without publishing.
#[derive(Default)]
pub struct Compiled {
    pub model: Option<Model>,
    pub plans: Vec<HostPlan>,
    /// The artifact; empty when there are errors.
    pub files: BTreeMap<String, OutputFile>,
    /// Diagnostics with spans resolved.
    pub diagnostics: Vec<Diagnostic>,
    /// Text of every file a diagnostic points into, for code frames.
    pub texts: BTreeMap<String, Arc<str>>,
    /// Directories outside the root that imports which named no module point into
    /// (`bundle::outside_dirs`): listing them may resolve those imports.
    pub outside_dirs: BTreeSet<String>,
}

impl Compiled {
    pub fn has_errors(&self) -> bool {
        has_errors(&self.diagnostics)
    }
}

pub struct BuildOutput {
    pub compiled: Compiled,
    /// `None` when errors prevented publishing.
    pub published: Option<PublishStats>,
    /// Real work done (not served by the cache or salsa): modules transpiled, wrappers bundled.
    pub work: Work,
    /// Set when a check before the stages answered the build, so no stage ran and
    /// `compiled` is empty: the artifact was up to date, or restored from the cache.
    pub shortcut: Option<(stamp::Summary, Shortcut)>,
}

impl BuildOutput {
    /// A build that stopped at `compiled`'s errors before any work.
    pub fn unpublished(compiled: Compiled) -> BuildOutput {
        BuildOutput { compiled, published: None, work: Work::default(), shortcut: None }
    }

    /// The plugin's name and version: the compiled model's, or the artifact's when a check
    /// answered the build.
    pub fn plugin(&self) -> Option<(&str, &str)> {
        match (&self.shortcut, &self.compiled.model) {
            (Some((summary, _)), _) => Some((&summary.plugin, &summary.version)),
            (None, Some(model)) => Some((&model.name, &model.version)),
            (None, None) => None,
        }
    }

    /// What a build that published without errors leaves for a stamp or the cache to answer
    /// from: its manifest's hash and its warnings. `None` for any other build.
    pub fn clean(&self) -> Option<stamp::Clean> {
        let published = self.published.is_some() && !self.compiled.has_errors();
        let manifest = published.then(|| self.compiled.files.get(emit::MANIFEST_FILE)).flatten()?;
        Some(stamp::Clean { manifest: Hash::of(&manifest.bytes), warnings: self.compiled.diagnostics.clone() })
    }
}

/// How a build was answered without running a stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shortcut {
    /// Up to date: inputs and artifact have the states the last clean build's stamp recorded.
    Stamp,
    /// Up to date: the inputs hash to a key whose published manifest the artifact matches
    /// byte for byte.
    Cache,
    /// The inputs hash to a key whose whole published artifact the cache holds (one pack
    /// object); it was published from there.
    Restored,
}

impl Shortcut {
    /// `Some("stamp" | "cache")` when nothing had to be published.
    pub fn up_to_date_by(self) -> Option<&'static str> {
        match self {
            Shortcut::Stamp => Some("stamp"),
            Shortcut::Cache => Some("cache"),
            Shortcut::Restored => None,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    pub transpiled: u64,
    pub bundled: u64,
    /// The cache's counters for this process so far.
    pub cache: CacheStats,
}

/// Loads the project at `options.root`, compiles it and publishes the artifact.
///
/// Two checks come before any stage runs. The stamp (file states, no reads) answers a
/// project untouched since its last clean build. Otherwise the inputs are read and hashed
/// into the `artifact` action key, whose record holds what a clean build of exactly these
/// inputs published: when the artifact on disk is still that one, nothing runs (a touched
/// checkout: the stamp vouches for the artifact as a no-op trusts it; a lost stamp: every
/// byte is read and checked against the manifest); when it is not (a fresh checkout), the
/// whole artifact is published from the record's pack. Nothing runs either way.
pub fn build(options: &BuildOptions) -> std::io::Result<BuildOutput> {
    build_on(options, &|stages| stages())
}

/// [`build`], running the stages (if the checks before them do not answer) through
/// `on_pool`, e.g. inside a thread pool of their own: a build answered by its stamp or the
/// cache does not pay for starting its threads.
pub fn build_on(options: &BuildOptions, on_pool: &dyn Fn(&mut (dyn FnMut() + Send))) -> std::io::Result<BuildOutput> {
    if let Some(compiled) = without_config(options) {
        return Ok(BuildOutput::unpublished(compiled));
    }
    match check(options)? {
        Checked::UpToDate(output) => Ok(*output),
        Checked::Stale(stale) => build_stale(options, stale, on_pool),
    }
}

/// What a build's first check, the stamp, found.
pub enum Checked {
    /// Answered by the stamp: nothing else to do.
    UpToDate(Box<BuildOutput>),
    /// The build goes on ([`build_stale`]) from these inputs.
    Stale(Stale),
}

/// The inputs of a project its stamp did not answer for, as the check found them.
pub struct Stale {
    settings: String,
    snapshot: stamp::Snapshot,
    /// The last clean build's stamp, which may still vouch for the artifact.
    previous: Option<Box<stamp::Stamp>>,
}

/// The stamp check alone: file states, no reads. Cheap enough to run for every project of
/// a workspace before starting the threads that the stale ones build on.
pub fn check(options: &BuildOptions) -> std::io::Result<Checked> {
    let settings = stamp_settings(options);
    if options.cache.is_off() {
        // `--no-cache`: the stamp is state a previous build left too, trusted for nothing.
        let snapshot = stamp::Snapshot::take(&options.root, &options.out_dir)?;
        return Ok(Checked::Stale(Stale { settings, snapshot, previous: None }));
    }
    Ok(match stamp::check(&options.root, &options.out_dir, &settings)? {
        stamp::Found::UpToDate(stamp) => {
            let mut output = answered(options, stamp.summary.clone(), Shortcut::Stamp, None, stamp.warnings());
            note_unlistable(&mut output.compiled, stamp.unlistable());
            note_artifact_path(&mut output.compiled, &options.out_dir);
            Checked::UpToDate(Box::new(output))
        }
        stamp::Found::Stale(snapshot, previous) => {
            Checked::Stale(Stale { settings, snapshot, previous: previous.map(Box::new) })
        }
    })
}

/// [`build_on`] after its [`check`] found the project stale.
pub fn build_stale(
    options: &BuildOptions,
    stale: Stale,
    on_pool: &dyn Fn(&mut (dyn FnMut() + Send)),
) -> std::io::Result<BuildOutput> {
    let unlistable = stale.snapshot.unlistable().to_vec();
    let mut output = answer_stale(options, stale, on_pool)?;
    note_unlistable(&mut output.compiled, &unlistable);
    note_artifact_path(&mut output.compiled, &options.out_dir);
    Ok(output)
}

/// Warns of each folder of the project this process may not list (`unlistable`), once
/// the build is over: nothing in them was read, so they change neither what was built nor
/// whether it is stamped.
pub fn note_unlistable<'a>(compiled: &mut Compiled, unlistable: impl IntoIterator<Item = &'a String>) {
    compiled.diagnostics.extend(unlistable.into_iter().map(|key| {
        Diagnostic::warning(
            Code::UnreadableInput,
            format!("cannot list `{key}/` (permission denied): nothing in it is read"),
        )
        .with_help("if the plugin needs what it holds, make it readable for the user running agent-bundle")
    }));
}

/// Warns when the artifact's path (made absolute) is not UTF-8: Node reads the path of the
/// script it runs as UTF-8, so a wrapper there cannot be loaded by its path.
pub fn note_artifact_path(compiled: &mut Compiled, out_dir: &Path) {
    let absolute = std::path::absolute(out_dir).unwrap_or_else(|_| out_dir.to_path_buf());
    if absolute.to_str().is_some() {
        return;
    }
    compiled.diagnostics.push(
        Diagnostic::warning(
            Code::ArtifactPathNotUtf8,
            format!("the artifact's path {} is not UTF-8: Node cannot load its files from there", absolute.display()),
        )
        .with_help(
            "`hooks simulate`, `validate` and a host running the plugin in place fail there (a host that installs \
             a copy elsewhere does not): build into a folder whose path is UTF-8 (`--out` names one; in a workspace, \
             rename the project's folder)",
        ),
    );
}

/// Why an import above the root does not resolve: each folder there that it needed and this
/// process may not list (`outside`, by round). A build without errors says nothing of them: it
/// resolved its imports elsewhere, nothing it needs is in such a folder, and its stamp stays
/// clean.
pub fn note_unlistable_outside(compiled: &mut Compiled, outside: &[Vec<OutsideDir>]) {
    if !compiled.has_errors() {
        return;
    }
    let unlistable: BTreeSet<&String> =
        outside.iter().flatten().filter(|dir| dir.is_unlistable()).map(|dir| &dir.key).collect();
    // (A folder below another is said by the other.)
    let below =
        |key: &String| unlistable.iter().any(|above| key != *above && crate::loader::is_at_or_below(key, above));
    note_unlistable(compiled, unlistable.iter().copied().filter(|key| !below(key)));
}

/// Fails the build of a payload that would not arrive whole: each one whose source holds
/// what the walk does not read (`loader::left_out_of_payload`) is an error (AB4745) naming
/// it, since the hooks or servers shipped in it would find it missing. (Only a build that
/// would publish is checked.)
fn check_payloads_whole(compiled: &mut Compiled, (db, project): (&Database, Project), root: &Path, out_dir: &Path) {
    /// Entries named in one error; `--json` has no more (the first ones say what to fix).
    const NAMED: usize = 5;
    let Some(model) = compiled.model.as_ref().filter(|_| !compiled.has_errors()) else { return };
    let mut errors = Vec::new();
    for payload in model.emitted_payloads() {
        let left_out = crate::loader::left_out_of_payload(root, &payload.source, &[out_dir.to_path_buf()]);
        if left_out.is_empty() {
            continue;
        }
        let mut named: Vec<String> = left_out.iter().take(NAMED).map(|(key, why)| format!("`{key}` ({why})")).collect();
        if left_out.len() > NAMED {
            named.push(format!("{} more", left_out.len() - NAMED));
        }
        let message =
            format!("payload `{}` would not arrive whole: {} would be left out", payload.name, named.join(", "));
        let help = "an artifact carries a payload's regular files only: remove these from the payload, or make \
                    them files (a payload's dependencies bundled into it, e.g. by esbuild --bundle, rather than a \
                    node_modules or a virtual environment)";
        errors.push(Diagnostic::error(Code::PayloadLeftOut, message).at_path(&payload.source_path).with_help(help));
    }
    if !errors.is_empty() {
        compiled.files.clear();
        locate(db, project, &mut errors, &mut compiled.texts);
        compiled.diagnostics.splice(0..0, errors);
    }
}

/// Fails a build where the walk passes over what could be or hold a route (a symbolic link,
/// a special file, a folder it may not list or never enters, on the way to `src/events/` or
/// in it), each named (AB4802): the route would be missing, and a missing guard is worse than
/// a failed build. (Only a build that would publish is checked.)
fn check_routes_whole(compiled: &mut Compiled, root: &Path, out_dir: &Path) {
    // (As for payloads: a failed build writes nothing.)
    if compiled.has_errors() {
        return;
    }
    let routes = crate::routes::EVENTS_DIR.trim_end_matches('/');
    let left_out = crate::loader::left_out_of_folder(root, routes, &[out_dir.to_path_buf()]);
    let errors: Vec<Diagnostic> = left_out
        .into_iter()
        .filter(|(key, _)| crate::routes::may_hold_route(key))
        .map(|(key, why)| {
            let message = format!("`{key}` ({why}) is never read: a route there would be missing");
            Diagnostic::error(Code::RouteLeftOut, message).with_help(
                "a route is a regular file in folders the build can list: make it so, or move it out of src/",
            )
        })
        .collect();
    if !errors.is_empty() {
        compiled.files.clear();
        compiled.diagnostics.splice(0..0, errors);
    }
}

/// Says what is where a module handler was said not to exist, where something is that the
/// walk passes over (`ls` shows it there): a link, a special file or an empty folder, or a
/// link to a folder on the way.
fn name_what_is_at_absent_handlers(compiled: &mut Compiled, (db, project): (&Database, Project), root: &Path) {
    for absent in &db::normalize(db, project).absent_handlers {
        let Some((what, help)) = what_is_at(root, &absent.path) else { continue };
        let said = compiled
            .diagnostics
            .iter_mut()
            .find(|d| d.code == Code::MissingHandler && d.json_path.as_deref() == Some(absent.at.as_str()));
        if let Some(diagnostic) = said {
            if let Some(what) = what {
                diagnostic.message = format!("handler `{}` {what}", absent.path);
            }
            if let Some(help) = help {
                diagnostic.help = Some(help.to_owned());
            }
        }
    }
}

/// What is at the project path `path`, or on the way to it, that no walk reads, said of a
/// module there (`None`: as normalizing said it), and what to do (`None`: as normalizing
/// said it); `None` where nothing is, or a file the walk reads (made since it).
fn what_is_at(root: &Path, path: &str) -> Option<(Option<String>, Option<&'static str>)> {
    const LINK_HELP: Option<&str> = Some("name the module's own file: links are not followed");
    let skipped = crate::loader::skipped_folder_key(path);
    let metadata = match std::fs::symlink_metadata(root.join(path)) {
        Ok(metadata) => Some(metadata),
        // (Nothing there, through links too: it does not exist, as normalizing said; nor is
        // there a module to move out of a folder never read, as its help would have it.)
        Err(error) if matches!(error.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return skipped.map(|_| (None, Some(crate::model::NO_SUCH_MODULE_HELP)));
        }
        // (What cannot be looked at may be there: in a folder this process may not list, or
        // at the end of a loop of links.)
        Err(_) => None,
    };
    let folder = crate::loader::parent_key(path);
    let passed_over = crate::loader::passed_over_on_the_way(root, folder).ok().flatten().filter(|_| !folder.is_empty());
    // Whichever comes first on the way; a folder never entered by its name before what is
    // passed over at it (listing it, say, would not help).
    match (passed_over, skipped) {
        (Some((passed_over, why)), skipped) if skipped.is_none_or(|skipped| passed_over.len() < skipped.len()) => {
            // (Past it, a folder never read: only moving the module helps.)
            let help = match why {
                _ if skipped.is_some() => Some("move the module out of it"),
                crate::loader::A_SYMBOLIC_LINK => LINK_HELP,
                crate::loader::A_FOLDER_NOT_LISTED => {
                    Some("make it readable for the user running agent-bundle, or move the module out of it")
                }
                _ => Some("move the module out of it"),
            };
            return Some((Some(format!("is in `{passed_over}`, {why}, which the build never reads")), help));
        }
        // (Its help names the folder, and those never read.)
        (_, Some(_)) => return Some((Some("is in a folder the build never reads".to_owned()), None)),
        _ => {}
    }
    let metadata = metadata?;
    let (what, help) = if metadata.is_symlink() {
        ("is a symbolic link, which is never read as a module".to_owned(), LINK_HELP)
    } else if metadata.is_dir() {
        (
            "is a folder, not a module file".to_owned(),
            Some("a handler names its module's file, such as './src/hooks/guard.ts'"),
        )
    } else if !metadata.is_file() {
        (
            "is a special file (a FIFO, a socket or a device), which is never read as a module".to_owned(),
            Some("a handler is a regular file: make it one"),
        )
    } else {
        return None;
    };
    Some((Some(what), help))
}

/// A payload file whose artifact path no artifact can hold (AB4745): a name with a control
/// character or a backslash, a name or a path too long.
fn unwritable_payload_file(payload: &crate::model::Payload, path: &str) -> Diagnostic {
    let message = format!(
        "payload `{}` would not arrive whole: `{}` has a name no artifact path can hold",
        payload.name,
        path.escape_debug()
    );
    let help = format!(
        "rename it: an artifact's names hold no control character or backslash, each at most {} bytes and the \
         whole path at most {}",
        crate::output::MAX_ARTIFACT_NAME,
        crate::output::MAX_ARTIFACT_PATH
    );
    Diagnostic::error(Code::PayloadLeftOut, message).at_path(&payload.source_path).with_help(help)
}

/// [`build_stale`], before its warnings.
fn answer_stale(
    options: &BuildOptions,
    stale: Stale,
    on_pool: &dyn Fn(&mut (dyn FnMut() + Send)),
) -> std::io::Result<BuildOutput> {
    let Stale { settings, mut snapshot, previous } = stale;
    let mut disk = snapshot.read()?;
    let mut hashes = actions::input_hashes(&disk);
    // The folders above the root that a clean build of these inputs listed (a fresh checkout
    // of a monorepo's plugin that imports shared code), found from the cache.
    let mut found: Vec<OutsideDir> = Vec::new();
    let (artifact_key, published) = published_for(options, &mut disk, &mut hashes, &mut found)?;
    // What the walk passed over in a payload (not an input: the inputs are those of the
    // recorded artifact) may be new there, which only a compile can tell
    // (`check_payloads_whole`): no answer from the cache for it.
    let whole = |summary: &stamp::Summary| !summary.loses_any_of(snapshot.losses());
    if let Some(published) = published {
        if let Some(previous) = previous {
            let mut now = snapshot.clone();
            now.add_outside(found.clone());
            if let Some(summary) = stamp::renew(&options.root, &options.out_dir, *previous, &published.clean, now) {
                return Ok(answered(options, summary, Shortcut::Cache, None, &published.clean.warnings));
            }
        }
        let clean = &published.clean;
        if let Some(summary) = crate::artifact::matches_manifest(&options.out_dir, &clean.manifest).filter(whole) {
            snapshot.add_outside(found);
            return Ok(answered_and_stamped(options, &settings, snapshot, summary, clean, Shortcut::Cache, None));
        }
        if let Some((files, summary)) =
            actions::restore_artifact(&options.cache, &published).filter(|(_, summary)| whole(summary))
        {
            let stats = emit::publish::publish(&options.out_dir, &options.root, &files, None)
                .map_err(|error| Unpublished::wrap(error, recorded(options, &clean.warnings)))?;
            snapshot.add_outside(found);
            let by = Shortcut::Restored;
            return Ok(answered_and_stamped(options, &settings, snapshot, summary, clean, by, Some(stats)));
        }
    }
    let mut loaded = LoadedProject::new(Database::new().with_cache(options.cache.clone()), options.root.clone());
    let assumed = found.iter().map(|dir| (dir.key.clone(), dir.is_found()));
    loaded.assume_outside(snapshot.outside_dirs().map(|key| (key, true)).chain(assumed));
    let project = loaded.sync(disk, options.settings());
    let mut compiled = None;
    on_pool(&mut || compiled = Some(compile_and_publish(&mut loaded, project, options, &mut |_| {}, None)));
    let (mut output, rounds) = compiled.expect("on_pool runs the stages")?;
    match (&output.compiled.model, output.clean()) {
        (Some(model), Some(clean)) => {
            let from_stamp: BTreeSet<String> = snapshot.outside_dirs().collect();
            if !from_stamp.is_empty() {
                let listed = found.iter().chain(rounds.iter().flatten()).map(|dir| dir.key.clone());
                record_outside_dirs_at_once(options, &hashes, from_stamp.into_iter().chain(listed).collect());
            }
            // The key covers every input, the outside files the build listed too.
            let artifact_key = if rounds.is_empty() {
                artifact_key
            } else {
                // Rounds that started from a stamp's folders (which leave out those where
                // nothing was found) are not the rounds a fresh checkout goes through.
                let record = snapshot.outside_dirs().next().is_none();
                key_after_rounds(options, hashes, &loaded.inputs(), &rounds, record)
            };
            snapshot.add_outside(found.into_iter().chain(rounds.into_iter().flatten()).collect());
            actions::record_published_artifact(&options.cache, &artifact_key, &output.compiled.files, &clean.warnings);
            let summary = stamp::Summary {
                plugin: model.name.clone(),
                version: model.version.clone(),
                targets: model.targets.iter().map(|t| t.as_str().to_owned()).collect(),
                files: output.compiled.files.len(),
                payload_sources: model.emitted_payloads().map(|payload| payload.source.clone()).collect(),
            };
            let unsaved = save_stamp(options, &settings, snapshot, summary, &clean);
            output.compiled.diagnostics.extend(unsaved);
        }
        _ => stamp::clear(&options.root),
    }
    Ok(output)
}

/// [`answered`], with the stamp saved for the next build (one it could not save is a warning).
fn answered_and_stamped(
    options: &BuildOptions,
    settings: &str,
    snapshot: stamp::Snapshot,
    summary: stamp::Summary,
    clean: &stamp::Clean,
    by: Shortcut,
    published: Option<PublishStats>,
) -> BuildOutput {
    let unsaved = save_stamp(options, settings, snapshot, summary.clone(), clean);
    let mut output = answered(options, summary, by, published, &clean.warnings);
    output.compiled.diagnostics.extend(unsaved);
    output
}

/// [`stamp::save`]s a clean build's stamp. The stamp is an optimization: failing to write
/// it fails nothing, but is said (a warning), since every build then reads the whole project.
fn save_stamp(
    options: &BuildOptions,
    settings: &str,
    snapshot: stamp::Snapshot,
    summary: stamp::Summary,
    clean: &stamp::Clean,
) -> Option<Diagnostic> {
    let error = stamp::save(&options.root, &options.out_dir, settings, snapshot, summary, clean).err()?;
    let message = format!("cannot record this build's stamp ({}): {error}", stamp::stamp_path(&options.root).display());
    let help = "without it, every build reads and hashes the whole project";
    Some(Diagnostic::warning(Code::StateUnwritable, message).with_help(help))
}

/// What a stamp records of the options: those that change what is built, and where.
fn stamp_settings(options: &BuildOptions) -> String {
    format!("{:?} -> {}", options.settings(), options.out_dir.display())
}

/// Saves the stamp a clean build leaves, for the last build of `loaded`, which published
/// `files`, the artifact whose manifest hashes to `clean.manifest`, without an error: when
/// the project on disk still holds exactly the inputs that build read and the artifact is
/// still the one it published (every file checked). It records the artifact in the cache
/// too, as a build of those inputs would (the `artifact` action, and for a project whose
/// imports reach folders above it the `outside-dirs` one that leads a fresh checkout to
/// them), for a stamp no later build trusts, an edit made within a second of it. Watch mode
/// does so as it ends, so that the next `build` of an unchanged project runs no stage.
/// Returns whether it saved one.
pub fn stamp_last_build(
    options: &BuildOptions,
    loaded: &LoadedProject,
    clean: &stamp::Clean,
    files: &BTreeMap<String, OutputFile>,
) -> std::io::Result<bool> {
    // The states first: a file edited after them leaves the stamp stale, never the reverse.
    let mut snapshot = stamp::Snapshot::take(&options.root, &options.out_dir)?;
    let mut disk = snapshot.read()?;
    let outside_keys = loaded.outside_keys();
    let mut outside = Vec::new();
    for key in &outside_keys {
        let (dir, files) = crate::loader::list_outside_dir(&options.root, key, &mut |_| {})?;
        disk.extend(files);
        outside.push(dir);
    }
    if disk != loaded.inputs() {
        return Ok(false);
    }
    // (What the walk passed over in a payload may have come there since the last compile
    // checked it: that is for the next build to tell.)
    let summary = crate::artifact::matches_manifest(&options.out_dir, &clean.manifest);
    let Some(summary) = summary.filter(|summary| !summary.loses_any_of(snapshot.losses())) else {
        return Ok(false);
    };
    let hashes = actions::input_hashes(&disk);
    if !outside_keys.is_empty() {
        // A fresh checkout lists them all at once (`published_for`), reaching these inputs.
        record_outside_dirs_at_once(options, &hashes, outside_keys);
    }
    let key = actions::artifact_key(&options.settings(), &hashes);
    actions::record_published_artifact(&options.cache, &key, files, &clean.warnings);
    snapshot.add_outside(outside);
    stamp::save(&options.root, &options.out_dir, &stamp_settings(options), snapshot, summary, clean)?;
    Ok(true)
}

/// What the cache knows a clean build of the inputs `disk` (hashed in `hashes`) published,
/// and its key. While the `artifact` action misses and the `outside-dirs` one names folders
/// above the root that a build with these inputs listed next, they are listed (into `disk`,
/// `hashes` and `found`) and the lookup is made again: a fresh checkout reaches its shared
/// code without compiling.
fn published_for(
    options: &BuildOptions,
    disk: &mut DiskFiles,
    hashes: &mut actions::InputHashes,
    found: &mut Vec<OutsideDir>,
) -> std::io::Result<(Hash, Option<actions::PublishedArtifact>)> {
    let settings = options.settings();
    loop {
        let key = actions::artifact_key(&settings, hashes);
        if let Some(published) = actions::published_artifact(&options.cache, &key, hashes) {
            return Ok((key, Some(published)));
        }
        let next = actions::outside_dirs(&options.cache, &actions::outside_dirs_key(&settings, hashes));
        let new: Vec<String> =
            next.unwrap_or_default().into_iter().filter(|dir| !found.iter().any(|f| &f.key == dir)).collect();
        if new.is_empty() {
            options.cache.count_action_miss();
            return Ok((key, None));
        }
        for dir in new {
            let (listed, files) = crate::loader::list_outside_dir(&options.root, &dir, &mut |_| {})?;
            hashes.extend(actions::input_hashes(&files));
            disk.extend(files);
            found.push(listed);
        }
    }
}

/// Records every outside folder a clean build read (`dirs`) under the `outside-dirs` key
/// of the project's own files in `hashes`. For a build that started from its stamp's
/// folders: it went through no rounds a fresh checkout could follow, so the checkout lists
/// them all at once, reaching the same inputs and so the same artifact key.
fn record_outside_dirs_at_once(options: &BuildOptions, hashes: &actions::InputHashes, dirs: BTreeSet<String>) {
    let own: actions::InputHashes =
        hashes.iter().filter(|(key, _)| !crate::loader::is_outside(key)).map(|(k, v)| (k.clone(), *v)).collect();
    let dirs: Vec<&str> = dirs.iter().map(String::as_str).collect();
    actions::record_outside_dirs(&options.cache, &actions::outside_dirs_key(&options.settings(), &own), &dirs);
}

/// The artifact key of everything a clean build read: `hashes` (the inputs it started from)
/// plus each round's outside files (from `inputs`), each hashed once. With `record`, each
/// round's folders are stored under the `outside-dirs` key of the inputs loaded before it.
fn key_after_rounds(
    options: &BuildOptions,
    mut hashes: actions::InputHashes,
    inputs: &DiskFiles,
    rounds: &[Vec<OutsideDir>],
    record: bool,
) -> Hash {
    let settings = options.settings();
    for round in rounds {
        if record {
            let dirs: Vec<&str> = round.iter().map(|dir| dir.key.as_str()).collect();
            actions::record_outside_dirs(&options.cache, &actions::outside_dirs_key(&settings, &hashes), &dirs);
        }
        let listed = round.iter().flat_map(|dir| &dir.files).filter_map(|(key, _)| inputs.get_key_value(key));
        let listed: DiskFiles = listed.map(|(key, file)| (key.clone(), file.clone())).collect();
        hashes.extend(actions::input_hashes(&listed));
    }
    actions::artifact_key(&settings, &hashes)
}

/// The output of a build answered by `by`; `published` is what a restore wrote (an
/// up-to-date artifact is left as it is).
fn answered(
    options: &BuildOptions,
    summary: stamp::Summary,
    by: Shortcut,
    published: Option<PublishStats>,
    warnings: &[Diagnostic],
) -> BuildOutput {
    let published = published.unwrap_or(PublishStats { unchanged: summary.files, ..PublishStats::default() });
    BuildOutput {
        compiled: recorded(options, warnings),
        published: Some(published),
        work: Work { cache: options.cache.stats(), ..Work::default() },
        shortcut: Some((summary, by)),
    }
}

/// The compile a clean build recorded, as far as a report needs it: its `warnings`, with the
/// texts they point into. Those are the inputs the build that said them read: the files on
/// disk now (only a frame is missing, should one have changed since).
fn recorded(options: &BuildOptions, warnings: &[Diagnostic]) -> Compiled {
    let mut compiled = Compiled { diagnostics: warnings.to_vec(), ..Compiled::default() };
    for file in warnings.iter().filter_map(|warning| warning.file.as_ref()) {
        if !compiled.texts.contains_key(file)
            && let Ok(Some((bytes, _))) = crate::loader::read_file(&options.root.join(file))
        {
            compiled.texts.insert(file.clone(), Arc::from(String::from_utf8_lossy(&bytes)));
        }
    }
    compiled
}

/// A project whose root holds no config the walk would read fails before anything is walked
/// (a build, an inspection or a watch session started in a home folder by mistake would
/// read all of it first): the compile's result, AB4001, as the config stage says it, with
/// what is at the config's name instead, or the folder above that holds a config.
pub fn without_config(options: &BuildOptions) -> Option<Compiled> {
    let names: Vec<&str> = match &options.config {
        Some(config) => vec![config],
        None => crate::config::CONFIG_FILE_NAMES.to_vec(),
    };
    // (A `--config` name is the one meant: nothing above or beside the root is looked for.)
    let found = crate::loader::missing_config(&options.root, &names, options.config.is_none())?;
    let mut diagnostic = crate::db::config_not_found(options.config.as_deref(), Some(&options.root));
    let mut helps = Vec::new();
    if let Some((name, what)) = &found.unread {
        let root = options.root.display();
        diagnostic.message = format!("`{name}` in {root} is {what}, which is never read as the config");
        helps.push(match (&options.config, *what) {
            // (The flag names a file: a folder given to it is a slip, not a config to make.)
            (Some(_), "a folder") => "--config names the config file itself: pass its path".to_owned(),
            _ => format!("make `{name}` a regular file holding the config (a link is not followed)"),
        });
    }
    if let Some(project) = &found.project_above {
        // Started in a folder of a project (`src/hooks`): say where its root is.
        let root = project.display();
        helps.push(format!("{root} holds one: build there, or pass --root {root}"));
    }
    helps.extend(workspace_help(&options.root, &found.projects));
    if let Some(config) = found.misnamed_configs.first() {
        // (A CommonJS one cannot be read as a config at all, by --config either.)
        let or_pass = if config.ends_with(".cjs") { String::new() } else { format!(", or pass --config {config}") };
        helps.push(format!(
            "rename `{config}` to agent-bundle.config.ts (or .mts, .js, .mjs, the names read without --config){or_pass}"
        ));
    }
    if let Some(config) = found.other_configs.first() {
        helps.push(format!("if `{config}` is the config, pass --config {config}"));
    }
    if !helps.is_empty() {
        diagnostic.help = Some(helps.join("; or "));
    }
    Some(Compiled { diagnostics: vec![diagnostic], ..Compiled::default() })
}

/// Folders of `root` that hold projects: it may be a workspace's root.
fn workspace_help(root: &Path, projects: &[String]) -> Option<String> {
    if projects.is_empty() {
        return None;
    }
    let shown: Vec<&str> = projects.iter().take(3).map(String::as_str).collect();
    let more = if projects.len() > 3 { format!(" and {} more", projects.len() - 3) } else { String::new() };
    let (folders, hold) =
        if projects.len() == 1 { ("folder", "holds a project") } else { ("folders", "hold projects") };
    Some(format!(
        "its {folders} {}{more} {hold}: build them all with `agent-bundle build --workspace {}`",
        shown.join(", "),
        root.display()
    ))
}

/// Compiles `loaded`'s `project` (following its imports out of the root) and publishes
/// its artifact unless there are errors; also returns the outside directories it listed, by
/// round. `last` is what this process published last (see `emit::publish::publish`).
pub fn compile_and_publish(
    loaded: &mut LoadedProject,
    project: Project,
    options: &BuildOptions,
    before_listing: BeforeListing,
    last: Option<&BTreeMap<String, OutputFile>>,
) -> std::io::Result<(BuildOutput, Vec<Vec<OutsideDir>>)> {
    let (transpiled_before, bundled_before) = loaded.db.work();
    let (project, mut compiled, outside) = compile_reaching_out(loaded, project, before_listing)?;
    note_unlistable_outside(&mut compiled, &outside);
    check_payloads_whole(&mut compiled, (&loaded.db, project), &loaded.root, &options.out_dir);
    check_routes_whole(&mut compiled, &loaded.root, &options.out_dir);
    if let Some(model) = &compiled.model {
        loaded.note_payload_sources(model.emitted_payloads().map(|payload| payload.source.clone()).collect());
    }
    let (transpiled, bundled) = loaded.db.work();
    let work = Work {
        transpiled: transpiled - transpiled_before,
        bundled: bundled - bundled_before,
        cache: options.cache.stats(),
    };
    let published = if compiled.has_errors() {
        None
    } else {
        match emit::publish::publish(&options.out_dir, &options.root, &compiled.files, last) {
            Ok(stats) => Some(stats),
            Err(error) => return Err(Unpublished::wrap(error, compiled)),
        }
    };
    Ok((BuildOutput { compiled, published, work, shortcut: None }, outside))
}

/// A build that compiled but could not publish: it fails as its publish did (and says so in
/// the same words), with the compile's diagnostics, its warnings, still to be reported.
pub struct Unpublished {
    error: std::io::Error,
    /// The compile's diagnostics and the texts they point into (not its files).
    compiled: Compiled,
}

impl Unpublished {
    /// The error of a build that compiled `compiled` and failed to publish with `error`. An
    /// interrupt stays itself: a build Ctrl-C stopped reports nothing.
    fn wrap(error: std::io::Error, compiled: Compiled) -> std::io::Error {
        if error.kind() == ErrorKind::Interrupted {
            return error;
        }
        let Compiled { diagnostics, texts, .. } = compiled;
        let compiled = Compiled { diagnostics, texts, ..Compiled::default() };
        std::io::Error::new(error.kind(), Unpublished { error, compiled })
    }

    /// The compile of a build that failed with `error`, if it failed to publish one.
    pub fn compiled(error: &std::io::Error) -> Option<&Compiled> {
        Some(&error.get_ref()?.downcast_ref::<Unpublished>()?.compiled)
    }
}

impl std::fmt::Display for Unpublished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::fmt::Debug for Unpublished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unpublished").field("error", &self.error).finish_non_exhaustive()
    }
}

// (No `source`: it displays as its publish's error, which a chain would print twice.)
impl std::error::Error for Unpublished {}

/// Compiles `project`; while some import names no module and points into directories outside
/// the root that are not listed yet (no walk of the project reaches them), lists them and
/// compiles again. If the imports still fail, the directories where nothing was found are
/// listed once more (they may have appeared unseen: only their parent's events tell, where
/// it is watched). Returns the
/// project as last loaded, its compile, and the directories listed in each round.
pub fn compile_reaching_out(
    loaded: &mut LoadedProject,
    mut project: Project,
    before_listing: BeforeListing,
) -> std::io::Result<(Project, Compiled, Vec<Vec<OutsideDir>>)> {
    let mut listed: Vec<Vec<OutsideDir>> = Vec::new();
    let mut looked_again = false;
    loop {
        let mut compiled = compile(&loaded.db, project);
        name_what_is_at_absent_handlers(&mut compiled, (&loaded.db, project), &loaded.root);
        let dirs = compiled.outside_dirs.iter();
        let mut wanted: Vec<String> = dirs.clone().filter(|key| !loaded.lists_outside(key)).cloned().collect();
        if wanted.is_empty() && !looked_again {
            looked_again = true;
            wanted = dirs.filter(|key| loaded.found_nothing_at(key)).cloned().collect();
        }
        if wanted.is_empty() {
            return Ok((project, compiled, listed));
        }
        let (reloaded, dirs) = loaded.reach_out(&wanted, before_listing)?;
        project = reloaded;
        listed.push(dirs);
    }
}

/// Runs every stage for `project`, on deep stacks ([`crate::threads::on_deep_pool`]).
pub fn compile(db: &Database, project: Project) -> Compiled {
    let db = db.clone();
    crate::threads::on_deep_pool(move || compile_here(&db, project))
}

fn compile_here(db: &Database, project: Project) -> Compiled {
    let mut diagnostics: Vec<Diagnostic> = db::parse_config(db, project).diagnostics.clone();
    diagnostics.extend(db::routes(db, project).diagnostics.iter().cloned());
    diagnostics.extend(db::normalize(db, project).diagnostics.iter().cloned());
    let Some(model) = db::model(db, project).clone() else {
        return finish(db, project, None, Vec::new(), BTreeMap::new(), diagnostics);
    };

    let plans: Vec<HostPlan> = model
        .targets
        .par_iter()
        .map_with(db.clone(), |db, &target| db::host_plan(&*db, project, TargetKey::new(&*db, target)).clone())
        .collect();
    diagnostics.extend(hosts::check_plugin_name(&model.name, &model.targets));
    for plan in &plans {
        diagnostics.extend(plan.diagnostics.iter().cloned());
    }
    diagnostics.extend(hosts::checks::prebuilt_scripts_left_out(&model, &plans));
    // (Where the config has errors, a mistyped target say, what reaches no host follows from
    // them: said again per hook, it would bury them.)
    if !has_errors(&diagnostics) {
        diagnostics.extend(hosts::checks::unreached_hooks(&model));
    }

    let requests: Vec<(String, Target, String)> = plans
        .iter()
        .flat_map(|plan| plan.hooks.iter().filter_map(|h| Some((h.hook_name.clone(), plan.target, h.wrapper.clone()?))))
        .collect();
    let wrappers: Vec<(String, db::WrapperReturn)> = requests
        .par_iter()
        .map_with(db.clone(), |db, (name, target, path)| {
            let key = WrapperKey::new(&*db, name.clone(), *target);
            (path.clone(), db::wrapper(&*db, project, key).clone())
        })
        .collect();
    diagnostics.extend(answers_not_taken(db, project, &model, &plans));
    let runtime = db::event_runtime(db, project).as_ref();
    let mut seen_modules = std::collections::HashSet::new();
    let bundles = wrappers.iter().map(|(_, w)| &w.diagnostics).chain(runtime.map(|r| &r.diagnostics));
    for bundle_diagnostics in bundles {
        // A module shared by several wrappers reports its problems once.
        for diagnostic in bundle_diagnostics {
            if seen_modules.insert(diagnostic.clone()) {
                diagnostics.push(diagnostic.clone());
            }
        }
    }
    if has_errors(&diagnostics) {
        let mut compiled = finish(db, project, Some(model), plans, BTreeMap::new(), diagnostics);
        let modules = wrappers.iter().map(|(_, w)| &w.modules).chain(runtime.map(|r| &r.modules));
        compiled.outside_dirs = outside_dirs_wanted(db, project, modules.flatten());
        return compiled;
    }

    let (files, compose_diagnostics) = compose(db, project, &model, &plans, &wrappers, runtime);
    diagnostics.extend(compose_diagnostics);
    let files = if has_errors(&diagnostics) { BTreeMap::new() } else { files };
    finish(db, project, Some(model), plans, files, diagnostics)
}

/// The outside directories that the unresolved imports of `modules` point into.
fn outside_dirs_wanted<'a>(
    db: &Database,
    project: Project,
    modules: impl Iterator<Item = &'a String>,
) -> BTreeSet<String> {
    let modules: BTreeSet<&String> = modules.collect();
    let mut dirs = BTreeSet::new();
    for module in modules {
        let chunk = db::module_chunk(db, project, db::ModuleKey::new(db, module.clone()));
        for specifier in &chunk.unresolved {
            dirs.extend(crate::bundle::outside_dirs(module, specifier));
        }
    }
    dirs
}

/// What a route renders, or a config hook's handler returns, that no run of it can take:
/// `Agent.Context` (`additionalContext`) for a host with no context channel for its family
/// (Cursor's `beforeSubmitPrompt`; AB4818, per host), a result that denies or gives a new
/// tool input where the family takes none (a deny on `session/end`; AB4841). Every run that
/// renders or returns it fails. Warnings, since the hook may answer so only where it is
/// taken, or on a path that never runs. For a route, what its own file writes, and what the
/// components it imports render, each where the route renders it (a module exporting such a
/// component beside what the route renders says nothing); for a handler, the objects its
/// default-exported function returns as written.
fn answers_not_taken(db: &Database, project: Project, model: &Model, plans: &[HostPlan]) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    // Config hooks running one handler on one event return alike: their hosts together,
    // said once.
    let mut handlers: Vec<(&Hook, &String, Vec<&str>)> = Vec::new();
    let planned_for = |names: &[&str]| -> Vec<&HostPlan> {
        plans
            .iter()
            .filter(|plan| plan.hooks.iter().any(|planned| names.contains(&planned.hook_name.as_str())))
            .collect()
    };
    for hook in &model.hooks {
        let crate::model::Handler::Module(module) = &hook.handler else { continue };
        if hook.route.is_none() {
            match handlers.iter_mut().find(|(seen, handler, _)| seen.trigger == hook.trigger && *handler == module) {
                Some((_, _, names)) => names.push(&hook.name),
                None => handlers.push((hook, module, vec![&hook.name])),
            }
            continue;
        }
        let planned = planned_for(&[&hook.name]);
        if planned.is_empty() {
            continue;
        }
        let graph = crate::bundle::ModuleGraph::collect(&[module], |key| {
            db::module_chunk(db, project, db::ModuleKey::new(db, key.to_owned()))
        });
        let own = graph.chunk(module).map(|chunk| chunk.renders).unwrap_or_default();
        let rendering = |renders, via| crate::bundle::Rendering { hook, module, renders, via, planned: &planned };
        diagnostics.extend(rendering(own, String::new()).not_taken());
        for through in graph.rendered_through_imports(module) {
            // (The route may choose the component by host.)
            let renders =
                crate::bundle::Renders { reads_host: own.reads_host || through.renders.reads_host, ..through.renders };
            let via = format!(" (through `{}`, {})", through.component, through.module);
            diagnostics.extend(rendering(renders, via).not_taken());
        }
    }
    for (hook, module, names) in handlers {
        let planned = planned_for(&names);
        if planned.is_empty() {
            continue;
        }
        let chunk = db::module_chunk(db, project, db::ModuleKey::new(db, module.clone()));
        let returning =
            crate::bundle::Rendering { hook, module, renders: chunk.returns, via: String::new(), planned: &planned };
        diagnostics.extend(returning.not_taken());
    }
    // (One component two routes render, or one handler on two events, may say one thing.)
    let mut said = std::collections::HashSet::new();
    diagnostics.retain(|diagnostic| said.insert(diagnostic.clone()));
    diagnostics
}

fn compose(
    db: &Database,
    project: Project,
    model: &Model,
    plans: &[HostPlan],
    wrappers: &[(String, db::WrapperReturn)],
    runtime: Option<&db::RuntimeReturn>,
) -> (BTreeMap<String, OutputFile>, Vec<Diagnostic>) {
    let files = project.files(db);
    let mut artifact = Artifact::default();
    let mut inputs: Vec<Input<'_>> = Vec::new();
    let runtime_in_artifact = runtime.is_some();
    for plan in plans {
        // The documents are a function of the model, the plan and where the runtime is (and
        // this compiler).
        let identity = format!("{model:?}\n{plan:?}\n{runtime_in_artifact}");
        let write = || (hosts::table(plan.target).documents)(model, plan, runtime_in_artifact);
        for file in crate::actions::documents(db.cache(), &identity, write) {
            artifact.add(file);
        }
    }
    let bundles = wrappers
        .iter()
        .map(|(path, w)| (path.as_str(), &w.code, &w.modules))
        .chain(runtime.map(|r| (hosts::RUNTIME_PATH, &r.code, &r.modules)));
    for (path, code, modules) in bundles {
        let code = code.as_ref().expect("bundles without errors have code");
        artifact.add(OutputFile {
            path: path.to_owned(),
            bytes: Arc::clone(code).into(),
            executable: false,
            kind: FileKind::Bundle,
        });
        // (A module that was linked was read.)
        let read = modules.iter().filter_map(|m| files.get(m)).filter_map(|&f| Some((f, db::content_hash(db, f)?)));
        inputs.extend(read.map(|(f, hash)| Input { path: f.path(db), hash }));
    }
    let mut diagnostics = Vec::new();
    for payload in model.emitted_payloads() {
        let prefix = format!("{}/", payload.source);
        for (path, file) in files.range(prefix.clone()..).take_while(|(path, _)| path.starts_with(&prefix)) {
            let bytes = match file.bytes(db) {
                Ok(bytes) => bytes,
                Err(why) => {
                    diagnostics.push(db::unreadable(path, why));
                    continue;
                }
            };
            let artifact_path = format!("{}/{}", payload.name, &path[prefix.len()..]);
            if !crate::output::is_artifact_path(&artifact_path) {
                diagnostics.push(unwritable_payload_file(payload, path));
                continue;
            }
            let hash = db::content_hash(db, *file).expect("a file read has a hash");
            artifact.add_hashed(emit::payload_file(artifact_path, bytes.clone(), file.executable(db)), hash);
            inputs.push(Input { path, hash });
        }
    }
    for file in [db::config_file(db, project), files.get("package.json").copied()].into_iter().flatten() {
        if let Some(hash) = db::content_hash(db, file) {
            inputs.push(Input { path: file.path(db), hash });
        }
    }
    if !diagnostics.is_empty() {
        return (BTreeMap::new(), diagnostics);
    }
    let plan_refs: Vec<&HostPlan> = plans.iter().collect();
    artifact.finish(model, &plan_refs, runtime.and_then(|r| r.epoch.as_deref()), &inputs)
}

fn finish(
    db: &Database,
    project: Project,
    model: Option<Model>,
    plans: Vec<HostPlan>,
    files: BTreeMap<String, OutputFile>,
    mut diagnostics: Vec<Diagnostic>,
) -> Compiled {
    let mut texts = BTreeMap::new();
    locate(db, project, &mut diagnostics, &mut texts);
    // Errors first, then warnings; within each, the order the stages reported them.
    diagnostics.sort_by_key(|d| d.severity);
    Compiled { model, plans, files, diagnostics, texts, outside_dirs: BTreeSet::new() }
}

/// Gives each diagnostic that points into the config by JSON path its file and span, and
/// adds the text of each file they point into to `texts`.
fn locate(db: &Database, project: Project, diagnostics: &mut [Diagnostic], texts: &mut BTreeMap<String, Arc<str>>) {
    let config_name = db::config_file_name(db, project);
    // Each file whose extracted config value diagnostics may point into by JSON path.
    let mut values: BTreeMap<&str, &crate::config::extract::Value> =
        db::routes(db, project).configs.iter().map(|(file, value)| (file.as_str(), value)).collect();
    if let Some(value) = db::parse_config(db, project).value.as_ref() {
        values.insert(config_name.as_str(), value);
    }
    let sources = project.files(db);
    for diagnostic in diagnostics {
        if diagnostic.json_path.is_some() && diagnostic.file.is_none() {
            diagnostic.file = Some(config_name.clone());
        }
        if diagnostic.span.is_none()
            && let (Some(path), Some(value)) =
                (&diagnostic.json_path, diagnostic.file.as_deref().and_then(|f| values.get(f)))
        {
            diagnostic.span = if diagnostic.at_key {
                crate::config::key_span_of(value, path)
            } else {
                Some(crate::config::span_of(value, path))
            };
        }
        if let Some(file) = &diagnostic.file
            && !texts.contains_key(file)
            && let Some(Ok(bytes)) = sources.get(file).map(|source| source.bytes(db))
        {
            // Invalid UTF-8 shows as U+FFFD; offsets up to the first invalid byte are the file's.
            texts.insert(file.clone(), Arc::from(String::from_utf8_lossy(bytes)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::CacheOptions;
    use crate::loader::DiskFiles;
    use std::sync::Mutex;

    const CONFIG: &str = "export default { plugin: { name: 'incremental' }, targets: ['claude', 'codex'],\n  hooks: { stop: './src/a.ts', sessionStart: './src/b.ts' } };\n";

    fn files(entries: &[(&str, &str)]) -> DiskFiles {
        entries.iter().map(|(path, text)| ((*path).to_owned(), (Ok(Arc::from(text.as_bytes())), false))).collect()
    }

    fn project(config: &str, a: &str) -> DiskFiles {
        files(&[
            ("agent-bundle.config.ts", config),
            ("src/a.ts", a),
            ("src/b.ts", "import { note } from './lib.ts';\nexport default () => ({ additionalContext: note });\n"),
            ("src/lib.ts", "export const note = 'hello';\n"),
        ])
    }

    /// The manifest is written as canonical JSON (sorted keys, two-space indent, a newline):
    /// its typed rows declare their fields in that order, with every optional part present
    /// here (a payload's executable file, the shared runtime, a description).
    #[test]
    fn the_manifest_is_canonical_json() {
        let config = "export default { plugin: { name: 'm', description: 'd' }, targets: ['claude', 'codex'],\n  \
                      payload: { bin: './bin' }, hooks: { stop: './src/a.ts' } };\n";
        let mut disk = files(&[
            ("agent-bundle.config.ts", config),
            ("src/a.ts", "export default () => undefined;\n"),
            (
                "src/events/prompt/submit.tsx",
                "export const config = { runtime: 'shared' };\nexport default () => null;\n",
            ),
        ]);
        disk.insert("bin/run".to_owned(), (Ok(Arc::from(&b"#!/bin/sh\n"[..])), true));
        let mut loaded = LoadedProject::new(Database::new(), PathBuf::from("/virtual"));
        let project = loaded.sync(disk, Settings::default());
        let compiled = compile(&loaded.db, project);
        assert!(!compiled.has_errors(), "{:?}", compiled.diagnostics);
        let text = std::str::from_utf8(&compiled.files[emit::MANIFEST_FILE].bytes).unwrap().to_owned();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        for key in ["eventRuntime", "payloads"] {
            assert!(value.get(key).is_some(), "{key} in {text}");
        }
        assert!(value["files"].as_array().unwrap().iter().any(|row| row["executable"] == true));
        assert_eq!(text, crate::output::to_canonical_json(&value));
    }

    /// The names of the queries salsa executed, sorted (parallel fan-out has no fixed order).
    fn executed(log: &Mutex<Vec<String>>) -> Vec<String> {
        let mut names: Vec<String> =
            log.lock().unwrap().drain(..).map(|entry| entry.split('(').next().unwrap_or_default().to_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn an_edit_reruns_only_what_depends_on_it() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut loaded = LoadedProject::new(Database::with_query_log(log.clone()), PathBuf::from("/virtual"));
        let first = loaded.sync(project(CONFIG, "export default () => undefined;\n"), Settings::default());
        assert!(!compile(&loaded.db, first).has_errors());
        executed(&log);

        // Editing one handler: its module and its two wrappers, and its hash for the
        // manifest, nothing else.
        let edited = loaded.sync(project(CONFIG, "export default () => { return undefined; };\n"), Settings::default());
        assert!(!compile(&loaded.db, edited).has_errors());
        assert_eq!(
            executed(&log),
            ["content_hash", "linked_handler", "module_chunk", "transpiled", "wrapper", "wrapper"]
        );

        // Reformatting the config: it is re-read (and hashed for the manifest), and everything
        // after it is reused.
        let reformatted = loaded.sync(
            project(&CONFIG.replace(", ", ",\n    "), "export default () => { return undefined; };\n"),
            Settings::default(),
        );
        assert!(!compile(&loaded.db, reformatted).has_errors());
        assert_eq!(executed(&log), ["config", "content_hash", "parse_config"]);

        // A file added where no import looks re-runs no module.
        let mut grown = project(&CONFIG.replace(", ", ",\n    "), "export default () => { return undefined; };\n");
        grown.insert("notes/todo.md".to_owned(), (Ok(Arc::from(&b"later"[..])), false));
        let grown = loaded.sync(grown, Settings::default());
        assert!(!compile(&loaded.db, grown).has_errors());
        let executed_now = executed(&log);
        assert!(executed_now.contains(&"folder".to_owned()), "{executed_now:?}");
        assert!(!executed_now.contains(&"module_chunk".to_owned()), "{executed_now:?}");
        let shrunk = loaded.sync(
            project(&CONFIG.replace(", ", ",\n    "), "export default () => { return undefined; };\n"),
            Settings::default(),
        );
        compile(&loaded.db, shrunk);
        executed(&log);

        // Touching nothing runs nothing.
        let same = loaded.sync(
            project(&CONFIG.replace(", ", ",\n    "), "export default () => { return undefined; };\n"),
            Settings::default(),
        );
        compile(&loaded.db, same);
        assert_eq!(executed(&log), Vec::<String>::new());
    }

    /// `disk` with `path` unreadable.
    fn unreadable(mut disk: DiskFiles, path: &str) -> DiskFiles {
        let why = crate::loader::Unreadable("permission denied".into());
        disk.insert(path.to_owned(), (Err(why), false));
        disk
    }

    fn codes_and_files(disk: DiskFiles) -> Vec<(&'static str, Option<String>, String)> {
        let mut loaded = LoadedProject::new(Database::new(), PathBuf::from("/virtual"));
        let project = loaded.sync(disk, Settings::default());
        let compiled = compile(&loaded.db, project);
        compiled.diagnostics.into_iter().map(|d| (d.code.as_str(), d.file, d.message)).collect()
    }

    /// Deep input compiles from any thread (a test's has 2 MiB of stack, which 10,000 levels
    /// overflow): `compile` moves onto deep stacks itself, where the module is parsed whole
    /// and then refused as deeper than Node parses.
    #[test]
    fn deep_input_compiles_from_a_shallow_thread() {
        let depth = 10_000;
        let deep = format!("export default () => {}1{};\n", "1?".repeat(depth), ":1".repeat(depth));
        assert!(depth < crate::source::MAX_NESTING);
        let compiled = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || codes_and_files(project(CONFIG, &deep)))
            .unwrap()
            .join()
            .unwrap();
        let codes: Vec<_> = compiled.iter().map(|(code, file, _)| (*code, file.as_deref())).collect();
        assert_eq!(codes, [("AB4836", Some("src/a.ts"))], "{compiled:?}");
        assert!(compiled[0].2.starts_with("expressions nest more than"), "{compiled:?}");
    }

    #[test]
    fn an_unreadable_file_fails_the_build_only_where_it_is_needed() {
        let readable = project(CONFIG, "export default () => undefined;\n");
        assert!(codes_and_files(unreadable(readable.clone(), ".env")).is_empty());

        let cannot_read =
            |path: &str| vec![("AB4008", Some(path.to_owned()), format!("cannot read `{path}`: permission denied"))];
        for needed in ["src/a.ts", "src/lib.ts", "agent-bundle.config.ts"] {
            assert_eq!(codes_and_files(unreadable(readable.clone(), needed)), cannot_read(needed), "{needed}");
        }

        let with_payload = |mut disk: DiskFiles| {
            disk.insert(
                "agent-bundle.config.ts".to_owned(),
                (Ok(Arc::from(CONFIG.replace("hooks:", "payload: { docs: './docs' },\n  hooks:").as_bytes())), false),
            );
            disk.insert("docs/readme.md".to_owned(), (Ok(Arc::from(&b"# docs"[..])), false));
            disk
        };
        assert!(codes_and_files(with_payload(readable.clone())).is_empty());
        let payload_file = unreadable(with_payload(readable.clone()), "docs/secret.md");
        assert_eq!(codes_and_files(payload_file), cannot_read("docs/secret.md"));
        // A payload file whose name no artifact path can hold is said, not published.
        for name in ["docs/back\\slash", "docs/tab\there", "docs/next\u{85}line"] {
            let mut disk = with_payload(readable.clone());
            disk.insert(name.to_owned(), (Ok(Arc::from(&b"x"[..])), false));
            let said = codes_and_files(disk);
            assert_eq!(said.iter().map(|(code, ..)| *code).collect::<Vec<_>>(), ["AB4745"], "{name:?}");
            assert!(said[0].2.contains(&format!("`{}`", name.escape_debug())), "{said:?}");
        }

        let route = unreadable(readable.clone(), "src/events/stop.tsx");
        assert_eq!(codes_and_files(route), cannot_read("src/events/stop.tsx"));

        // Its version is the plugin's, unless the config sets one.
        assert_eq!(codes_and_files(unreadable(readable.clone(), "package.json")), cannot_read("package.json"));
        let mut versioned = unreadable(readable, "package.json");
        let config = CONFIG.replace("name: 'incremental'", "name: 'incremental', version: '1.0.0'");
        versioned.insert("agent-bundle.config.ts".to_owned(), (Ok(Arc::from(config.as_bytes())), false));
        assert!(codes_and_files(versioned).is_empty());
    }

    /// What a watch session stamps as it ends holds only for the inputs its last build read:
    /// an input edited since (read again and compared, whatever its state) leaves no stamp,
    /// and so does an artifact file changed since.
    #[test]
    fn a_session_stamps_only_the_inputs_its_last_build_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        for (path, (bytes, _)) in project(CONFIG, "export default () => undefined;\n") {
            std::fs::create_dir_all(root.join(&path).parent().unwrap()).unwrap();
            std::fs::write(root.join(&path), &*bytes.unwrap()).unwrap();
        }
        let cache = Arc::new(Cache::open(&CacheOptions { dir: Some(root.join(".cache")), remote: None }).unwrap());
        let options = BuildOptions::new(root.clone(), None, cache);
        let mut loaded = LoadedProject::new(Database::new(), root.clone());
        let project = loaded.load(options.settings(), std::slice::from_ref(&options.out_dir), &mut |_| {}).unwrap();
        let (output, _) = compile_and_publish(&mut loaded, project, &options, &mut |_| {}, None).unwrap();
        let clean = output.clean().expect("a clean build");
        let stamped = || stamp_last_build(&options, &loaded, &clean, &output.compiled.files).unwrap();

        let handler = root.join("src/a.ts");
        std::fs::write(&handler, "export default () => null;\n").unwrap();
        assert!(!stamped(), "an input edited since");
        std::fs::write(&handler, "export default () => undefined;\n").unwrap();
        assert!(stamped(), "the same bytes again, whatever their state");
        // The cache answers these inputs too, as a build would have recorded them.
        let hashes = actions::input_hashes(&loaded.inputs());
        let key = actions::artifact_key(&options.settings(), &hashes);
        let published =
            actions::published_artifact(&options.cache, &key, &hashes).expect("the artifact action recorded");
        assert_eq!(published.clean, clean);
        let wrapper = output.compiled.files.keys().find(|path| path.ends_with(".mjs")).unwrap();
        std::fs::write(options.out_dir.join(wrapper), "edited").unwrap();
        assert!(!stamped(), "an artifact file edited since");
    }
}
