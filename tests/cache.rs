//! The content-addressed cache across processes and checkouts.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::support::{self, artifact_files, work};

fn build(dir: &Path, cache: &Path) -> Value {
    let cache = cache.to_str().unwrap();
    let (code, report) = support::build_json(dir, &["--cache-dir", cache]);
    assert_eq!(code, 0, "{report:#}");
    report
}

fn cache_files(cache: &Path, kind: &str) -> Vec<std::path::PathBuf> {
    walkdir::WalkDir::new(cache.join("v1").join(kind))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect()
}

/// With no cache directory to be found (no `--cache-dir`, no `AGENT_BUNDLE_CACHE_DIR`,
/// `XDG_CACHE_HOME` or `HOME`: a bare CI container), a build goes on without a local cache
/// and says so once; the `cache` commands, which have nothing to work on, say what to set.
#[test]
fn no_cache_directory_to_be_found_is_one_warning_and_a_usage_error_for_the_cache_commands() {
    let dir = support::example("guarded");
    let without_dir = |args: &[&str]| {
        let mut command = support::bin();
        for name in ["AGENT_BUNDLE_CACHE_DIR", "XDG_CACHE_HOME", "HOME"] {
            command.env_remove(name);
        }
        command.args(args).current_dir(dir.path()).output().unwrap()
    };
    let built = without_dir(&["build", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&built.stdout).unwrap();
    assert_eq!(built.status.code(), Some(0), "{report:#}");
    let warnings = report["work"]["cacheWarnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{report:#}");
    assert!(warnings[0].as_str().unwrap().starts_with("no cache directory: pass --cache-dir, or set"), "{report:#}");
    let stats = without_dir(&["cache", "stats"]);
    assert_eq!(stats.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&stats.stderr).contains("AGENT_BUNDLE_CACHE_DIR"));
}

/// A folder of the user's own files named as the cache is never written, its remote's
/// failure or its statistics included: its tag would mark the files for backups to skip.
#[test]
fn a_folder_of_other_files_named_as_the_cache_is_never_written() {
    let dir = support::example("guarded");
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("notes.txt"), "mine").unwrap();
    let output = support::bin()
        .args(["build", "--json", "--remote-cache", "http://127.0.0.1:9/", "--cache-dir"])
        .arg(home.path())
        .current_dir(dir.path())
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{report:#}");
    let warnings = report["work"]["cacheWarnings"].to_string();
    assert!(warnings.contains("it holds `notes.txt`") && warnings.contains("continuing without a cache"), "{warnings}");
    let names: Vec<_> = std::fs::read_dir(home.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["notes.txt"]);
}

#[test]
fn a_second_build_in_a_new_process_transpiles_and_bundles_nothing_and_rewrites_nothing() {
    let cache = tempfile::tempdir().unwrap();
    let dir = support::example("policy");
    let cold = build(dir.path(), cache.path());
    assert!(work(&cold, "transpiled") > 0 && work(&cold, "bundled") == 6, "{:#}", cold["work"]);
    let warm = build(dir.path(), cache.path());
    assert_eq!((work(&warm, "transpiled"), work(&warm, "bundled")), (0, 0), "{:#}", warm["work"]);
    assert_eq!(warm["published"]["written"], serde_json::json!([]));
}

/// `--config` naming the config the root holds anyway is no option: a fresh checkout's build
/// so spelled is restored from the cache a build without it filled.
#[test]
fn config_naming_the_default_config_keeps_the_cache_key() {
    let cache = tempfile::tempdir().unwrap();
    let (dir, checkout) = (support::example("policy"), support::example("policy"));
    build(dir.path(), cache.path());
    let args = ["--cache-dir", cache.path().to_str().unwrap(), "--config", "agent-bundle.config.ts"];
    let (code, report) = support::build_json(checkout.path(), &args);
    assert_eq!((code, &report["restoredFromCache"]), (0, &Value::from(true)), "{report:#}");
}

/// A build that warns is a clean build like any other: the next one in a new process runs
/// nothing (answered by the cache, then by the stamp), and a fresh checkout is restored,
/// each saying the warning again, located. A module is cached with its warnings too.
#[test]
fn a_build_with_warnings_is_answered_without_running_and_says_them_again() {
    let cache = tempfile::tempdir().unwrap();
    let config =
        "export default { plugin: { name: 'warns' }, targets: ['claude'], hooks: { stop: './src/stop.ts' } };\n";
    let handler = "import { readFileSync } from 'node:fs';\nexport default () => { void readFileSync(0); };\n";
    let files = [("agent-bundle.config.ts", config), ("src/stop.ts", handler)];
    let dir = support::project(&files);
    let said = |report: &Value| -> Vec<(String, String, u64, u64)> {
        let said = report["diagnostics"].as_array().unwrap().iter();
        let field = |d: &Value, key: &str| d[key].as_str().unwrap().to_owned();
        said.map(|d| (field(d, "code"), field(d, "file"), d["line"].as_u64().unwrap(), d["column"].as_u64().unwrap()))
            .collect()
    };
    let warning = [("AB4840".to_owned(), "src/stop.ts".to_owned(), 2, 29)];
    let cold = build(dir.path(), cache.path());
    assert_eq!(said(&cold), warning);
    let warm = build(dir.path(), cache.path());
    assert_eq!(warm["upToDateBy"], "cache", "{warm:#}");
    assert_eq!(said(&warm), warning, "said again");
    // Past the racy window of the first build's writes.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let no_op = (0..2).map(|_| build(dir.path(), cache.path())).find(|report| report["upToDateBy"] == "stamp");
    assert_eq!(said(&no_op.expect("a no-op answered by the stamp")), warning);

    let checkout = support::project(&files);
    let fresh = build(checkout.path(), cache.path());
    assert_eq!(fresh["restoredFromCache"], true, "{fresh:#}");
    assert_eq!(said(&fresh), warning);
    fs::remove_file(cache.path().join("v1/last-build.json")).ok();
    fs::remove_dir_all(checkout.path().join("artifact")).unwrap();
    let stages = support::build_json(checkout.path(), &["--no-cache"]).1;
    assert_eq!(said(&stages), warning, "the stages say what the cache said");
}

/// Without the stamp (a touched or copied checkout), the inputs' hash finds the manifest the
/// last clean build published, and an artifact that still matches it byte for byte is left
/// alone; one edited in place does not match and is rebuilt.
#[test]
fn an_artifact_matching_the_cached_manifest_is_up_to_date_without_running_a_stage() {
    use std::os::unix::fs::MetadataExt;
    let cache = tempfile::tempdir().unwrap();
    let dir = support::example("policy");
    let built = build(dir.path(), cache.path());
    let wrapper = fs::read_dir(dir.path().join("artifact/hooks"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "mjs"))
        .unwrap();
    let inode = fs::metadata(&wrapper).unwrap().ino();

    fs::remove_dir_all(dir.path().join(".agent-bundle")).unwrap();
    let checked = build(dir.path(), cache.path());
    assert_eq!(checked["upToDateBy"], "cache", "{checked:#}");
    assert_eq!((&checked["files"], &checked["hooks"]), (&built["files"], &built["hooks"]), "what the artifact holds");
    assert_eq!((work(&checked, "transpiled"), work(&checked, "bundled")), (0, 0));
    assert_eq!(fs::metadata(&wrapper).unwrap().ino(), inode, "nothing is rewritten");
    assert!(dir.path().join(".agent-bundle/stamp.json").is_file(), "the check leaves a stamp");

    // Same size, one byte changed: only reading the bytes can tell.
    let original = fs::read(&wrapper).unwrap();
    let mut edited = original.clone();
    edited[0] ^= 0x01;
    fs::write(&wrapper, &edited).unwrap();
    fs::remove_dir_all(dir.path().join(".agent-bundle")).unwrap();
    let rebuilt = build(dir.path(), cache.path());
    assert_eq!(rebuilt["upToDate"], false, "{rebuilt:#}");
    let relative = wrapper.strip_prefix(dir.path().join("artifact")).unwrap().to_str().unwrap();
    assert_eq!(rebuilt["published"]["written"], serde_json::json!([relative]));
    assert_eq!(fs::read(&wrapper).unwrap(), original);
}

/// Inputs touched but not changed (a branch switched and back): each is read and hashed
/// again, finding the manifest of the last clean build, and the stamp, whose artifact
/// states still hold, vouches for the artifact as a no-op trusts it (its wrappers are not
/// read again). The stamp is renewed, so the build after that is a no-op.
#[test]
fn touched_inputs_are_hashed_again_and_the_stamp_vouches_for_the_artifact() {
    let cache = tempfile::tempdir().unwrap();
    let dir = support::example("policy");
    build(dir.path(), cache.path());
    // Every input's time moved back (past the racy window, so the renewed stamp holds).
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(5);
    let inputs = walkdir::WalkDir::new(dir.path())
        .into_iter()
        .filter_entry(|entry| !["artifact", ".agent-bundle"].contains(&entry.file_name().to_str().unwrap()));
    for entry in inputs.map(Result::unwrap).filter(|entry| entry.file_type().is_file()) {
        fs::File::options().append(true).open(entry.path()).unwrap().set_modified(past).unwrap();
    }
    // Edited in place, sizes and folders unchanged: only reading every byte would tell,
    // which is what a lost stamp costs (see above) and a touched checkout does not.
    let wrapper = fs::read_dir(dir.path().join("artifact/hooks")).unwrap().next().unwrap().unwrap().path();
    let mut bytes = fs::read(&wrapper).unwrap();
    bytes[0] ^= 0x01;
    fs::write(&wrapper, &bytes).unwrap();

    let touched = build(dir.path(), cache.path());
    assert_eq!(touched["upToDateBy"], "cache", "{touched:#}");
    assert_eq!((work(&touched, "transpiled"), work(&touched, "bundled")), (0, 0));
    assert_eq!(fs::read(&wrapper).unwrap(), bytes, "the artifact was trusted by its states");
    let next = build(dir.path(), cache.path());
    assert_eq!(next["upToDateBy"], "stamp", "{next:#}");
}

/// A fresh checkout (no artifact, no stamp) of inputs a clean build has seen is published
/// from the one pack that build stored: nothing runs, bytes and modes are the same, and the
/// next build finds it up to date.
#[test]
fn a_fresh_checkout_at_another_path_is_restored_from_the_cache_byte_for_byte() {
    let cache = tempfile::tempdir().unwrap();
    let first = support::example("prebuilt-plugin");
    build(first.path(), cache.path());
    let second = support::example("prebuilt-plugin");
    let report = build(second.path(), cache.path());
    assert_eq!(report["restoredFromCache"], true, "{report:#}");
    assert_eq!(work(&report, "cacheMisses"), 0, "{:#}", report["work"]);
    assert_eq!((work(&report, "transpiled"), work(&report, "bundled")), (0, 0));
    let (built, restored) = (first.path().join("artifact"), second.path().join("artifact"));
    assert_eq!(artifact_files(&built), artifact_files(&restored));
    assert_eq!(modes(&built), modes(&restored));
    assert!(modes(&restored).values().any(|mode| mode & 0o111 != 0), "the example has an executable payload");
    // (By the cache rather than the stamp here: files younger than a second are never
    // trusted by their times.)
    assert_eq!(build(second.path(), cache.path())["upToDate"], true, "the restored artifact is what a build publishes");
}

/// Inputs no clean build has seen as a whole (here one more file, which no stage reads)
/// miss the artifact action; every stage's own action still hits.
#[test]
fn a_fresh_checkout_with_other_inputs_is_all_stage_hits_and_byte_identical() {
    let cache = tempfile::tempdir().unwrap();
    let first = support::example("policy");
    build(first.path(), cache.path());
    let second = support::example("policy");
    fs::write(second.path().join("NOTES.md"), "read by the loader, used by no stage\n").unwrap();
    let report = build(second.path(), cache.path());
    assert_eq!(report["restoredFromCache"], false, "{report:#}");
    assert_eq!(work(&report, "cacheMisses"), 1, "only the artifact action misses: {:#}", report["work"]);
    assert_eq!((work(&report, "transpiled"), work(&report, "bundled")), (0, 0));
    assert_eq!(artifact_files(&first.path().join("artifact")), artifact_files(&second.path().join("artifact")));
}

#[test]
fn an_edit_that_changes_only_what_a_module_links_misses_the_wrapper_action() {
    // A side-effect import of a builtin leaves the module's code as it was: only what it
    // links changes, and the wrapper must be bundled again, in both directions.
    let plain = "export default () => undefined;\n";
    let importing = "import 'node:os';\nexport default () => undefined;\n";
    for (before, after) in [(plain, importing), (importing, plain)] {
        let cache = tempfile::tempdir().unwrap();
        let config =
            "export default { plugin: { name: 'links' }, targets: ['claude'], hooks: { stop: './src/stop.ts' } };";
        let project = support::project(&[("agent-bundle.config.ts", config), ("src/stop.ts", before)]);
        build(project.path(), cache.path());
        fs::write(project.path().join("src/stop.ts"), after).unwrap();
        let report = build(project.path(), cache.path());
        assert_eq!(work(&report, "bundled"), 1, "{:#}", report["work"]);
        let (code, _) = support::build_json(project.path(), &["--no-cache", "--out", "uncached"]);
        assert_eq!(code, 0);
        let cached = artifact_files(&project.path().join("artifact"));
        assert_eq!(cached, artifact_files(&project.path().join("uncached")), "{after}");
        let wrapper = cached.iter().find(|(path, _)| path.ends_with(".claude.mjs")).unwrap().1;
        assert_eq!(String::from_utf8_lossy(wrapper).contains("\"node:os\""), after == importing);
    }
}

/// A line of types above the code moves no code, only where it came from: the wrapper is
/// bundled again, and its source map, as an uncached build makes it, says the new line.
#[test]
fn an_edit_that_moves_only_where_code_came_from_misses_the_wrapper_action() {
    let before = "export default () => { throw new Error('x'); };\n";
    let after = format!("type Unused = 1;\n{before}");
    let cache = tempfile::tempdir().unwrap();
    let config = "export default { plugin: { name: 'moved' }, targets: ['claude'], hooks: { stop: './src/stop.ts' } };";
    let project = support::project(&[("agent-bundle.config.ts", config), ("src/stop.ts", before)]);
    build(project.path(), cache.path());
    fs::write(project.path().join("src/stop.ts"), &after).unwrap();
    let report = build(project.path(), cache.path());
    assert_eq!((work(&report, "transpiled"), work(&report, "bundled")), (1, 1), "{:#}", report["work"]);
    let (code, _) = support::build_json(project.path(), &["--no-cache", "--out", "uncached"]);
    assert_eq!(code, 0);
    assert_eq!(artifact_files(&project.path().join("artifact")), artifact_files(&project.path().join("uncached")));
}

fn modes(dir: &Path) -> std::collections::BTreeMap<String, u32> {
    use std::os::unix::fs::PermissionsExt;
    walkdir::WalkDir::new(dir)
        .into_iter()
        .map(Result::unwrap)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            (
                e.path().display().to_string().replace(&dir.display().to_string(), ""),
                e.metadata().unwrap().permissions().mode(),
            )
        })
        .collect()
}

#[test]
fn a_flipped_byte_in_a_cache_object_is_detected_and_the_output_stays_right() {
    let cache = tempfile::tempdir().unwrap();
    let reference = support::example("policy");
    build(reference.path(), cache.path());
    let entries = [cache_files(cache.path(), "cas"), cache_files(cache.path(), "ac")].concat();
    for object in entries {
        let mut bytes = fs::read(&object).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x20;
        fs::write(&object, bytes).unwrap();
    }
    let rebuilt = support::example("policy");
    let report = build(rebuilt.path(), cache.path());
    assert!(work(&report, "transpiled") > 0, "corrupt objects are never served: {:#}", report["work"]);
    assert_eq!(artifact_files(&reference.path().join("artifact")), artifact_files(&rebuilt.path().join("artifact")));
}

/// An object found corrupt is counted, and `cache stats` says so in words too.
#[test]
fn cache_stats_says_how_many_objects_were_missing_or_corrupt() {
    let cache = tempfile::tempdir().unwrap();
    build(support::example("prebuilt-plugin").path(), cache.path());
    for object in cache_files(cache.path(), "cas") {
        let mut bytes = fs::read(&object).unwrap();
        bytes[0] ^= 0x20;
        fs::write(&object, bytes).unwrap();
    }
    let report = build(support::example("prebuilt-plugin").path(), cache.path());
    assert_eq!(report["restoredFromCache"], false, "a corrupt pack is never served: {report:#}");
    assert!(work(&report, "objectMisses") > 0, "the build says so too: {:#}", report["work"]);
    let stats = support::run(cache.path(), &["cache", "stats", "--cache-dir", cache.path().to_str().unwrap()]);
    let text = String::from_utf8(stats.stdout).unwrap();
    assert!(text.contains("; 1 object(s) missing or corrupt"), "{text}");
    // A relative `--cache-dir` is named absolute in `--json`, as every folder there is.
    let parent = cache.path().parent().unwrap();
    let relative = cache.path().file_name().unwrap().to_str().unwrap();
    let stats = support::run(parent, &["cache", "stats", "--json", "--cache-dir", relative]);
    let report: Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert_eq!(report["dir"], cache.path().to_str().unwrap());
}

/// A shard folder `cache verify` may not list is said to be unread, and every other entry is
/// checked (a corrupt one removed); `cache stats`, which would count what is not so, fails
/// naming it.
#[test]
fn verify_goes_on_past_a_shard_it_cannot_list() {
    use std::os::unix::fs::PermissionsExt;
    let cache = tempfile::tempdir().unwrap();
    build(support::example("policy").path(), cache.path());
    let records = cache_files(cache.path(), "ac");
    let (hidden, corrupt) = (records[0].parent().unwrap().to_owned(), records.last().unwrap().clone());
    assert_ne!(Some(hidden.as_path()), corrupt.parent(), "two shards");
    fs::write(&corrupt, b"not a record").unwrap();
    fs::set_permissions(&hidden, fs::Permissions::from_mode(0o000)).unwrap();
    let run = |args: &[&str]| {
        let trees: &[&Path] = if args[1] == "verify" { &[cache.path()] } else { &[] };
        crate::builds::unprivileged_command(trees).args(args).arg("--cache-dir").arg(cache.path()).output().unwrap()
    };
    let verified = run(&["cache", "verify", "--json"]);
    assert_eq!(verified.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&verified.stdout).unwrap();
    assert_eq!(report["unreadable"], serde_json::json!([hidden.to_str().unwrap()]), "{report:#}");
    assert_eq!(report["corrupt"], serde_json::json!([corrupt.to_str().unwrap()]), "{report:#}");
    assert!(!corrupt.exists());
    let stats = run(&["cache", "stats"]);
    assert_eq!(stats.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&stats.stderr).contains(&format!("cannot read {}", hidden.display())));
}

/// A folder where an entry goes is no entry: the next store replaces it (with no warning),
/// and `verify` removes it as corrupt.
#[test]
fn a_folder_in_an_entry_s_place_is_replaced_and_verified_away() {
    let cache = tempfile::tempdir().unwrap();
    let dir = support::example("policy");
    build(dir.path(), cache.path());
    let in_place_of = |entry: &Path| {
        fs::remove_file(entry).unwrap();
        fs::create_dir_all(entry.join("inside")).unwrap();
    };
    let pack = &cache_files(cache.path(), "cas")[0];
    in_place_of(pack);
    let fresh = support::example("policy");
    let report = build(fresh.path(), cache.path());
    assert_eq!(report["work"]["cacheWarnings"], serde_json::json!([]), "{report:#}");
    assert!(pack.is_file(), "stored again as a file");

    let action = &cache_files(cache.path(), "ac")[0];
    in_place_of(action);
    let cache_dir = cache.path().to_str().unwrap();
    let verify = support::run(dir.path(), &["cache", "verify", "--cache-dir", cache_dir, "--json"]);
    assert_eq!(verify.status.code(), Some(1));
    let verify: Value = serde_json::from_slice(&verify.stdout).unwrap();
    assert_eq!(verify["corrupt"], serde_json::json!([action.display().to_string()]));
    assert!(!action.exists());
}

#[test]
fn cache_stats_verify_and_gc() {
    let cache = tempfile::tempdir().unwrap();
    let dir = support::example("hooks-and-scripts");
    build(dir.path(), cache.path());
    build(dir.path(), cache.path());
    let cache_dir = cache.path().to_str().unwrap();
    let stats = support::run(dir.path(), &["cache", "stats", "--cache-dir", cache_dir, "--json"]);
    let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert!(stats["actions"].as_u64().unwrap() > 0);
    assert_eq!((&stats["ok"], &stats["exists"]), (&true.into(), &true.into()), "{stats:#}");
    // A folder mistyped is said to be none, in text and JSON.
    let typo = cache.path().join("typo");
    let typo = typo.to_str().unwrap();
    let missing = support::run(dir.path(), &["cache", "stats", "--cache-dir", typo]);
    assert!(String::from_utf8_lossy(&missing.stdout).starts_with(&format!("{typo} (no such folder")));
    let missing = support::run(dir.path(), &["cache", "stats", "--cache-dir", typo, "--json"]);
    assert_eq!(serde_json::from_slice::<Value>(&missing.stdout).unwrap()["exists"], false);
    // The compiler its keys start with: the one the build's stamp names.
    let stamp: Value = serde_json::from_slice(&fs::read(dir.path().join(".agent-bundle/stamp.json")).unwrap()).unwrap();
    assert_eq!(stats["compiler"], stamp["compiler"], "{stats:#}");
    assert_eq!(stats["lastBuild"]["hitRate"], 1.0, "{stats:#}");
    assert_eq!(stats["lastBuild"]["objectMisses"], 0, "{stats:#}");

    let object = &cache_files(cache.path(), "ac")[0];
    let mut bytes = fs::read(object).unwrap();
    bytes[0] ^= 1;
    fs::write(object, bytes).unwrap();
    let verify = support::run(dir.path(), &["cache", "verify", "--cache-dir", cache_dir, "--json"]);
    assert_eq!(verify.status.code(), Some(1));
    assert!(!object.exists(), "the corrupt entry is removed");
    let verify: Value = serde_json::from_slice(&verify.stdout).unwrap();
    assert_eq!(verify["corrupt"], serde_json::json!([object.display().to_string()]));
    assert_eq!(verify["ok"], false, "as its exit code: {verify:#}");
    let entries = stats["objects"].as_u64().unwrap() + stats["actions"].as_u64().unwrap();
    assert_eq!(verify["checked"], entries);

    let gc = support::run(dir.path(), &["cache", "gc", "--cache-dir", cache_dir, "--max-size", "0", "--json"]);
    assert_eq!(gc.status.code(), Some(0));
    assert!(cache_files(cache.path(), "cas").is_empty() && cache_files(cache.path(), "ac").is_empty());
    let gc: Value = serde_json::from_slice(&gc.stdout).unwrap();
    assert_eq!((gc["removedEntries"].as_u64(), gc["keptEntries"].as_u64()), (Some(entries - 1), Some(0)));
    assert_eq!(gc["ok"], true, "{gc:#}");
}

/// The bytes of a cache directory's entries, as `cache stats` counts them.
pub(crate) fn cache_bytes(cache: &Path) -> u64 {
    let stats = support::run(cache, &["cache", "stats", "--cache-dir", cache.to_str().unwrap(), "--json"]);
    let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
    stats["objectBytes"].as_u64().unwrap() + stats["actionBytes"].as_u64().unwrap()
}

#[test]
fn a_build_that_takes_the_cache_past_its_size_bound_collects_it() {
    let unbounded = tempfile::tempdir().unwrap();
    let first = support::example("policy");
    build_with(first.path(), &["--cache-dir", unbounded.path().to_str().unwrap(), "--cache-max-size", "0"]);
    let whole = cache_bytes(unbounded.path());

    // A bound above what one build writes: nothing is removed.
    let roomy = tempfile::tempdir().unwrap();
    let bound = (whole + 1).to_string();
    build_with(
        support::example("policy").path(),
        &["--cache-dir", roomy.path().to_str().unwrap(), "--cache-max-size", &bound],
    );
    assert_eq!(cache_bytes(roomy.path()), whole);

    // Half of it: the build still publishes, then the least recently used entries go, down
    // to 80% of the bound; a later build is still right.
    let tight = tempfile::tempdir().unwrap();
    let half = (whole / 2).to_string();
    let args = ["--cache-dir", tight.path().to_str().unwrap(), "--cache-max-size", half.as_str()];
    let second = support::example("policy");
    let (report, _) = build_with(second.path(), &args);
    assert_eq!(report["ok"], true);
    let kept = cache_bytes(tight.path());
    assert!(kept <= whole / 2 * 80 / 100, "{kept} of {whole} kept");
    let third = support::example("policy");
    build_with(third.path(), &args);
    assert_eq!(artifact_files(&first.path().join("artifact")), artifact_files(&third.path().join("artifact")));

    // What builds without a bound wrote is counted all the same: the first build with one
    // collects the cache they filled.
    let stop = first.path().join("src/hooks/stop.ts");
    fs::write(&stop, format!("{}\n// edited\n", fs::read_to_string(&stop).unwrap())).unwrap();
    build_with(first.path(), &["--cache-dir", unbounded.path().to_str().unwrap(), "--cache-max-size", &half]);
    let kept = cache_bytes(unbounded.path());
    assert!(kept <= whole / 2 * 80 / 100, "{kept} of {whole} kept");
}

fn build_with(dir: &Path, args: &[&str]) -> (Value, String) {
    build_with_env(dir, args, &[])
}

fn build_with_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (Value, String) {
    let mut command = support::bin();
    command.arg("build").arg("--json").args(args).current_dir(dir).envs(env.iter().copied());
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    (serde_json::from_slice(&output.stdout).unwrap(), String::from_utf8(output.stderr).unwrap())
}

#[test]
fn two_machines_share_one_remote_cache_over_nginx() {
    let nginx = crate::cache_remote::Nginx::start();
    let url = nginx.url();
    let remote = ["--remote-cache", url.as_str(), "--remote-cache-token", "secret"];

    let (first_cache, second_cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = support::example("policy");
    let mut args = vec!["--cache-dir", first_cache.path().to_str().unwrap()];
    args.extend(remote);
    let (cold, _) = build_with(first.path(), &args);
    assert!(work(&cold, "transpiled") > 0);

    // A second machine: empty local cache, the same remote.
    let second = support::example("policy");
    let mut args = vec!["--cache-dir", second_cache.path().to_str().unwrap()];
    args.extend(remote);
    let (warm, _) = build_with(second.path(), &args);
    assert_eq!((work(&warm, "transpiled"), work(&warm, "bundled")), (0, 0), "{:#}", warm["work"]);
    assert!(work(&warm, "remoteHits") > 0);
    assert_eq!(artifact_files(&first.path().join("artifact")), artifact_files(&second.path().join("artifact")));

    // A read-only job (a pull request) with changed sources uploads nothing. It is set up
    // as the README says, by the environment.
    let before = nginx.snapshot();
    let third = support::example("policy");
    fs::write(third.path().join("src/hooks/stop.ts"), "export default () => undefined;\n").unwrap();
    let third_cache = tempfile::tempdir().unwrap();
    let (edited, _) = build_with_env(
        third.path(),
        &["--cache-dir", third_cache.path().to_str().unwrap()],
        &[
            ("AGENT_BUNDLE_REMOTE_CACHE", url.as_str()),
            ("AGENT_BUNDLE_REMOTE_CACHE_TOKEN", "secret"),
            ("AGENT_BUNDLE_REMOTE_CACHE_READ_ONLY", "1"),
        ],
    );
    assert_eq!(nginx.snapshot(), before, "read-only never writes");
    // No whole artifact matches these inputs; every stage but the edited module's is shared.
    assert_eq!(edited["restoredFromCache"], false);
    assert_eq!(work(&edited, "transpiled"), 1, "{:#}", edited["work"]);
    assert!(work(&edited, "remoteHits") > 0, "{:#}", edited["work"]);
}

/// The same over https, with the server's private CA given: a second machine transpiles
/// nothing. Without the CA the certificate is not trusted: one warning, a local build.
#[test]
fn an_https_remote_behind_a_private_ca_is_shared_and_an_untrusted_one_is_refused() {
    let nginx = crate::cache_remote::Nginx::start_tls();
    let (url, ca) = (nginx.url(), nginx.ca_file());
    let remote =
        ["--remote-cache", url.as_str(), "--remote-cache-token", "secret", "--remote-cache-ca", ca.to_str().unwrap()];
    let first_cache = tempfile::tempdir().unwrap();
    let first = support::example("policy");
    let mut args = vec!["--cache-dir", first_cache.path().to_str().unwrap()];
    args.extend(remote);
    build_with(first.path(), &args);

    let second_cache = tempfile::tempdir().unwrap();
    let second = support::example("policy");
    let mut args = vec!["--cache-dir", second_cache.path().to_str().unwrap()];
    args.extend(remote);
    let (warm, _) = build_with(second.path(), &args);
    assert_eq!((work(&warm, "transpiled"), work(&warm, "bundled")), (0, 0), "{:#}", warm["work"]);
    assert!(work(&warm, "remoteHits") > 0, "{:#}", warm["work"]);
    assert_eq!(artifact_files(&first.path().join("artifact")), artifact_files(&second.path().join("artifact")));

    let untrusting = tempfile::tempdir().unwrap();
    let third = support::example("policy");
    let (report, _) =
        build_with(third.path(), &["--cache-dir", untrusting.path().to_str().unwrap(), "--remote-cache", &url]);
    let warnings = report["work"]["cacheWarnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].as_str().unwrap().to_lowercase().contains("certificate"), "{warnings:?}");
    assert_eq!(work(&report, "remoteHits"), 0);
}

#[test]
fn a_dead_remote_costs_one_warning_and_the_build_goes_on() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let cache = tempfile::tempdir().unwrap();
    let dir = support::example("policy");
    let url = format!("http://127.0.0.1:{port}/cache");
    let (report, stderr) =
        build_with(dir.path(), &["--cache-dir", cache.path().to_str().unwrap(), "--remote-cache", &url]);
    assert_eq!(report["ok"], true);
    assert_eq!(report["work"]["cacheWarnings"].as_array().unwrap().len(), 1, "{:#}", report["work"]);
    assert!(stderr.is_empty(), "--json puts the warning in the report: {stderr}");
}

#[test]
fn an_unusable_cache_dir_costs_one_warning_and_the_build_goes_on() {
    let parent = tempfile::tempdir().unwrap();
    let file = parent.path().join("a-file");
    fs::write(&file, "").unwrap();
    let dir = support::example("policy");
    let (report, _) = build_with(dir.path(), &["--cache-dir", file.join("cache").to_str().unwrap()]);
    assert_eq!(report["ok"], true);
    let warnings = report["work"]["cacheWarnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].as_str().unwrap().contains("a-file/cache"), "{warnings:?}");
    assert!(dir.path().join("artifact/agent-bundle.manifest.json").is_file());
}

/// `--no-cache` wins over a cache configured in the environment (a shell profile, a CI
/// job): nothing is read or written, and no remote is contacted.
#[test]
fn no_cache_overrides_the_cache_settings_in_the_environment() {
    let dir = support::example("policy");
    let cache = tempfile::tempdir().unwrap();
    let unused = cache.path().join("from-env");
    let output = support::bin()
        .args(["build", "--json", "--no-cache"])
        .env("AGENT_BUNDLE_CACHE_DIR", &unused)
        .env("AGENT_BUNDLE_REMOTE_CACHE", "http://127.0.0.1:9/cache")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(work(&report, "transpiled") > 0);
    assert_eq!((work(&report, "cacheHits"), work(&report, "cacheMisses")), (0, 0), "{:#}", report["work"]);
    assert_eq!(report["work"]["cacheWarnings"], serde_json::json!([]));
    assert!(!unused.exists(), "no cache directory is created");
}

/// A variable set but empty counts as unset: a CI job whose secrets a pull request from a
/// fork does not get has them set to "".
#[test]
fn empty_cache_variables_count_as_unset() {
    let dir = support::example("policy");
    let xdg = tempfile::tempdir().unwrap();
    let mut command = support::bin();
    // No --cache-dir: the empty AGENT_BUNDLE_CACHE_DIR leaves the default, under XDG_CACHE_HOME.
    command.args(["build", "--json"]).current_dir(dir.path()).env("XDG_CACHE_HOME", xdg.path());
    for name in ["CACHE_DIR", "CACHE_MAX_SIZE", "REMOTE_CACHE", "REMOTE_CACHE_READ_ONLY", "REMOTE_CACHE_TOKEN"] {
        command.env(format!("AGENT_BUNDLE_{name}"), "");
    }
    let output = command.env("AGENT_BUNDLE_REMOTE_CACHE_CA", "").output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["work"]["cacheWarnings"], serde_json::json!([]), "no remote: {:#}", report["work"]);
    assert!(work(&report, "cacheMisses") > 0, "a cache was used: {:#}", report["work"]);
    assert!(xdg.path().join("agent-bundle/cache").is_dir(), "the default cache folder was used");
}

/// A remote's options without a remote (a token a CI job sets for every build, where the URL
/// variable is misspelt) do nothing: one warning says so.
#[test]
fn remote_cache_options_without_a_remote_are_one_warning() {
    let dir = support::example("policy");
    let cache = tempfile::tempdir().unwrap();
    let mut command = support::bin();
    command.args(["build", "--json", "--remote-cache-read-only", "--cache-dir"]).arg(cache.path());
    let output = command.env("AGENT_BUNDLE_REMOTE_CACHE_TOKEN", "t").current_dir(dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let warnings = report["work"]["cacheWarnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let warning = warnings[0].as_str().unwrap();
    assert!(warning.starts_with("--remote-cache-token, --remote-cache-read-only given"), "{warning}");
    assert!(warning.ends_with("no remote cache is used"), "{warning}");
}

/// `build --help` names the remote's variables but never prints their values: a URL may
/// hold credentials, as a token does.
#[test]
fn help_hides_the_remote_cache_variables_values() {
    let mut command = support::bin();
    command.args(["build", "--help"]).env("AGENT_BUNDLE_REMOTE_CACHE", "http://ci:hun/ter2@cache.example/x");
    let output = command.env("AGENT_BUNDLE_REMOTE_CACHE_TOKEN", "hunter2").output().unwrap();
    let help = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{help}");
    assert!(help.contains("AGENT_BUNDLE_REMOTE_CACHE") && !help.contains("ter2"), "{help}");
}

/// Several processes filling one cache at once (CI jobs on one machine): every build
/// succeeds, every entry verifies, and a later checkout is served whole from it.
#[test]
fn processes_building_at_once_share_one_cache_safely() {
    let cache = tempfile::tempdir().unwrap();
    let checkouts: Vec<_> = (0..4).map(|_| support::example("routes")).collect();
    std::thread::scope(|scope| {
        for checkout in &checkouts {
            let cache = cache.path();
            scope.spawn(move || build(checkout.path(), cache));
        }
    });
    let verify = support::run(cache.path(), &["cache", "verify", "--cache-dir", cache.path().to_str().unwrap()]);
    assert_eq!(verify.status.code(), Some(0), "{}", String::from_utf8_lossy(&verify.stdout));
    let tmp_litter: Vec<_> = fs::read_dir(cache.path().join("v1/tmp")).unwrap().collect();
    assert!(tmp_litter.is_empty(), "no temporary file is left behind");
    let later = support::example("routes");
    let report = build(later.path(), cache.path());
    assert_eq!(report["restoredFromCache"], true, "{report:#}");
    assert_eq!(artifact_files(&checkouts[0].path().join("artifact")), artifact_files(&later.path().join("artifact")));
}
