//! Unit tests of the local cache: the format vectors, round trips, corruption, concurrency,
//! gc and stats. The remote is tested against a real nginx in `tests/cache_remote.rs`; here
//! only against a scripted server, for answers nginx never gives.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::maintenance::default_dir_from;
use super::*;

const VECTORS: &str = include_str!("../../cache-format/vectors.json");

fn open(dir: &Path) -> Cache {
    Cache::open(&CacheOptions { dir: Some(dir.to_owned()), remote: None }).unwrap()
}

fn object_path(dir: &Path, hash: &Hash) -> PathBuf {
    let hex = hash.to_hex();
    dir.join("v1/cas").join(&hex[..2]).join(hex)
}

fn action_path(dir: &Path, key: &Hash) -> PathBuf {
    let hex = key.to_hex();
    dir.join("v1/ac").join(&hex[..2]).join(hex)
}

fn record(outputs: &[(&str, Hash)], values: &[(&str, &str)]) -> ActionRecord {
    ActionRecord {
        outputs: outputs.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        values: values.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
    }
}

fn flip_byte(path: &Path, at: usize) {
    let mut bytes = fs::read(path).unwrap();
    bytes[at] ^= 0x01;
    fs::write(path, bytes).unwrap();
}

fn set_mtime(path: &Path, age: Duration) {
    File::options().write(true).open(path).unwrap().set_modified(SystemTime::now() - age).unwrap();
}

fn tmp_is_empty(dir: &Path) -> bool {
    fs::read_dir(dir.join("v1/tmp")).unwrap().next().is_none()
}

fn hex_bytes(hex: &str) -> Vec<u8> {
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect()
}

fn str_map(value: &Value) -> BTreeMap<String, String> {
    value.as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned())).collect()
}

#[test]
fn the_format_vectors_hold() {
    let vectors: Value = serde_json::from_str(VECTORS).unwrap();
    assert_eq!(vectors["format"], "agent-bundle-cache/1");
    assert_eq!(vectors["key_context"], KEY_CONTEXT);
    assert_eq!(vectors["record_format"], record::RECORD_FORMAT);
    let dir = tempfile::tempdir().unwrap();
    let cache = open(dir.path());

    let objects = vectors["objects"].as_array().unwrap();
    assert!(objects.len() >= 3);
    for object in objects {
        let bytes = hex_bytes(object["bytes_hex"].as_str().unwrap());
        let name: Hash = object["name"].as_str().unwrap().parse().unwrap();
        assert_eq!(Hash::of(&bytes), name);
        assert_eq!(cache.put_object(&bytes), name);
        let path = dir.path().join(object["path"].as_str().unwrap());
        assert_eq!(fs::read(&path).unwrap(), bytes, "object stored at the specified path");
    }

    let keys = vectors["keys"].as_array().unwrap();
    assert!(keys.len() >= 5);
    for (i, vector) in keys.iter().enumerate() {
        let mut builder = KeyBuilder::new(vector["kind"].as_str().unwrap());
        for field in vector["fields"].as_array().unwrap() {
            let value = match (field.get("value_utf8"), field.get("value_hex")) {
                (Some(text), None) => text.as_str().unwrap().as_bytes().to_vec(),
                (None, Some(hex)) => hex_bytes(hex.as_str().unwrap()),
                _ => panic!("field needs value_utf8 or value_hex: {field}"),
            };
            builder = builder.field(field["name"].as_str().unwrap(), &value);
        }
        let key = builder.finish();
        assert_eq!(key.to_hex(), vector["key"].as_str().unwrap(), "key vector {i}");
        // The preimage is what the spec says is hashed, in derive-key mode.
        let preimage = hex_bytes(vector["preimage_hex"].as_str().unwrap());
        assert_eq!(blake3::derive_key(KEY_CONTEXT, &preimage), key.0, "key vector {i} preimage");
        let path = vector["path"].as_str().unwrap();
        cache.put_action(&key, &ActionRecord::default());
        assert!(dir.path().join(path).is_file(), "record stored at {path}");
    }

    let records = vectors["records"].as_array().unwrap();
    assert!(records.len() >= 3);
    for (i, vector) in records.iter().enumerate() {
        let outputs = str_map(&vector["outputs"]).into_iter().map(|(k, v)| (k, v.parse().unwrap())).collect();
        let values = str_map(&vector["values"]);
        let expected = ActionRecord { outputs, values };
        let file = vector["file_utf8"].as_str().unwrap().as_bytes();
        assert_eq!(record::encode(&expected), file, "record vector {i} encodes");
        assert_eq!(record::decode(file), Some(expected.clone()), "record vector {i} decodes");
        let key = KeyBuilder::new("record-vector").field("i", &[i as u8]).finish();
        cache.put_action(&key, &expected);
        assert_eq!(fs::read(action_path(dir.path(), &key)).unwrap(), file, "record vector {i} file bytes");
    }

    let invalid = vectors["invalid_records"].as_array().unwrap();
    assert!(invalid.len() >= 10);
    for vector in invalid {
        let file = vector["file_utf8"].as_str().unwrap().as_bytes();
        assert_eq!(record::decode(file), None, "must be rejected: {}", vector["why"]);
    }
}

/// Packs framed by another LZ4 implementation (§5.1) restore exactly their files, through
/// the artifact record as a build reads it.
#[test]
fn the_pack_vectors_restore_their_files() {
    let vectors: Value = serde_json::from_str(VECTORS).unwrap();
    let packs = vectors["packs"].as_array().unwrap();
    assert!(packs.len() >= 2);
    let dir = tempfile::tempdir().unwrap();
    let cache = open(dir.path());
    for (i, vector) in packs.iter().enumerate() {
        let pack = cache.put_object(&hex_bytes(vector["pack_hex"].as_str().unwrap()));
        let key = KeyBuilder::new("pack-vector").field("i", &[i as u8]).finish();
        let values = str_map(&vector["values"]);
        cache.put_action(&key, &ActionRecord { outputs: BTreeMap::from([("pack".to_owned(), pack)]), values });
        let published = crate::actions::published_artifact(&cache, &key, &Default::default()).unwrap();
        let (files, _) = crate::actions::restore_artifact(&cache, &published).expect("the pack restores");
        let manifest = vector["manifest_utf8"].as_str().unwrap();
        assert_eq!(&*files[crate::emit::MANIFEST_FILE].bytes, manifest.as_bytes());
        let listed: Vec<(String, Vec<u8>, bool, serde_json::Value)> = vector["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let text = |name: &str| f[name].as_str().unwrap().to_owned();
                (text("path"), hex_bytes(&text("bytes_hex")), f["executable"].as_bool().unwrap(), f["kind"].clone())
            })
            .collect();
        let restored: Vec<(String, Vec<u8>, bool, serde_json::Value)> = files
            .values()
            .filter(|file| file.path != crate::emit::MANIFEST_FILE)
            .map(|file| (file.path.clone(), file.bytes.to_vec(), file.executable, serde_json::json!(file.kind)))
            .collect();
        assert_eq!(restored, listed, "pack vector {i}: {}", vector["why"]);
    }
}

#[test]
fn hashes_print_and_parse_as_hex() {
    let hash = Hash::of(b"abc");
    let hex = hash.to_string();
    assert_eq!(hex.len(), 64);
    assert_eq!(hex, hash.to_hex());
    assert!(hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
    assert_eq!(hex.parse::<Hash>().unwrap(), hash);
    assert_eq!(hex.to_uppercase().parse::<Hash>().unwrap(), hash);
    assert_eq!(Hash::of(b""), "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262".parse().unwrap());
    for bad in ["", "abc", &hex[..63], &format!("{hex}0"), &format!("{}g", &hex[..63])] {
        assert!(bad.parse::<Hash>().is_err(), "{bad:?}");
    }
}

#[test]
fn key_fields_have_boundaries() {
    let key = |kind: &str, fields: &[(&str, &[u8])]| {
        fields.iter().fold(KeyBuilder::new(kind), |b, (n, v)| b.field(n, v)).finish()
    };
    assert_ne!(key("k", &[("ab", b"c")]), key("k", &[("a", b"bc")]));
    assert_ne!(key("k", &[("a", b"b"), ("c", b"")]), key("k", &[("a", b"bc")]));
    assert_ne!(key("k", &[("", b"ab")]), key("k", &[("a", b"b")]));
    assert_ne!(key("ka", &[("b", b"")]), key("k", &[("ab", b"")]));
    assert_ne!(key("k", &[("a", b"1"), ("b", b"2")]), key("k", &[("b", b"2"), ("a", b"1")]), "order matters");
    assert_ne!(key("k", &[]), key("k", &[("", b"")]));
    assert_eq!(key("k", &[("a", b"1")]), key("k", &[("a", b"1")]));
    // Not a plain blake3 of the concatenation: derive-key mode with our context.
    assert_ne!(key("k", &[]).0, *blake3::hash(b"\x01\0\0\0\0\0\0\0k").as_bytes());
}

#[test]
fn a_cachedir_tag_a_killed_build_left_empty_is_written_again() {
    let dir = tempfile::tempdir().unwrap();
    let tag = dir.path().join("CACHEDIR.TAG");
    fs::write(&tag, "").unwrap();
    open(dir.path());
    assert!(fs::read_to_string(&tag).unwrap().starts_with("Signature: 8a477f597d28d172789f06886806bc55\n"));
}

#[test]
fn objects_and_actions_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let cache = open(dir.path());
    assert!(dir.path().join("CACHEDIR.TAG").is_file());
    let key = KeyBuilder::new("module-chunk").field("source", b"x").finish();
    assert_eq!(cache.get_action(&key), None);
    assert_eq!(cache.get_object(&Hash::of(b"export {}")), None);

    let a = cache.put_object(b"export {}");
    let b = cache.put_object(&[0u8; 100_000]);
    assert_eq!(a, Hash::of(b"export {}"));
    let rec = record(&[("chunk.js", a), ("big.bin", b)], &[("exports", "default,x"), ("weird", "\"\\\n\u{1}é")]);
    cache.put_action(&key, &rec);

    // A new process: nothing memoized.
    let again = open(dir.path());
    assert_eq!(again.get_action(&key), Some(rec));
    assert_eq!(&*again.get_object(&a).unwrap(), b"export {}");
    assert_eq!(again.get_object(&b).unwrap().len(), 100_000);
    assert_eq!(again.stats(), CacheStats { action_hits: 1, object_hits: 2, ..CacheStats::default() });
    assert!(again.take_warnings().is_empty());
    assert!(tmp_is_empty(dir.path()));

    let stats = cache.stats();
    assert_eq!((stats.action_misses, stats.object_misses), (1, 1));
    assert_eq!(stats.bytes_written, 9 + 100_000 + fs::metadata(action_path(dir.path(), &key)).unwrap().len());
}

#[test]
fn a_present_object_is_not_written_again() {
    let dir = tempfile::tempdir().unwrap();
    let cache = open(dir.path());
    let hash = cache.put_object(b"same");
    let path = object_path(dir.path(), &hash);
    let inode = std::os::unix::fs::MetadataExt::ino(&fs::metadata(&path).unwrap());
    cache.put_object(b"same");
    open(dir.path()).put_object(b"same");
    assert_eq!(std::os::unix::fs::MetadataExt::ino(&fs::metadata(&path).unwrap()), inode);
    assert_eq!(cache.stats().bytes_written, 4);

    // The same record under the same key is not rewritten either; a different one replaces it.
    let key = Hash::of(b"key");
    cache.put_action(&key, &record(&[("o", hash)], &[]));
    let written = cache.stats().bytes_written;
    cache.put_action(&key, &record(&[("o", hash)], &[]));
    assert_eq!(cache.stats().bytes_written, written);
    cache.put_action(&key, &record(&[("o", hash)], &[("v", "1")]));
    assert_eq!(cache.get_action(&key), Some(record(&[("o", hash)], &[("v", "1")])));
}

#[test]
fn a_corrupt_object_is_a_miss_and_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let cache = open(dir.path());
    let hash = cache.put_object(b"export const answer = 42;\n");
    let path = object_path(dir.path(), &hash);
    flip_byte(&path, 7);
    assert_eq!(cache.get_object(&hash), None);
    assert!(!path.exists(), "a corrupt entry is removed when read");
    assert_eq!(cache.stats().object_misses, 1);
    // The next put heals it.
    cache.put_object(b"export const answer = 42;\n");
    assert_eq!(&*cache.get_object(&hash).unwrap(), b"export const answer = 42;\n");

    // A truncated object with the right name, and one of the wrong length.
    fs::write(&path, b"export const").unwrap();
    assert_eq!(cache.get_object(&hash), None);
}

#[test]
fn a_fifo_or_a_link_in_the_store_is_a_miss_and_a_put_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let cache = open(dir.path());
    let bytes = b"export const answer = 42;\n";
    let hash = cache.put_object(bytes);
    let path = object_path(dir.path(), &hash);
    let elsewhere = dir.path().join("elsewhere");
    fs::write(&elsewhere, bytes).unwrap();
    let fifo = |path: &Path| {
        let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
    };
    let plant: [&dyn Fn(&Path); 2] = [&fifo, &|path| std::os::unix::fs::symlink(&elsewhere, path).unwrap()];
    for plant in plant {
        fs::remove_file(&path).unwrap();
        plant(&path);
        assert_eq!(cache.get_object(&hash), None, "never opened as an entry (a FIFO would block)");
        cache.put_object(bytes);
        assert!(fs::symlink_metadata(&path).unwrap().is_file());
        assert_eq!(&*cache.get_object(&hash).unwrap(), bytes);
    }
}

#[test]
fn a_corrupt_or_truncated_record_is_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let cache = open(dir.path());
    let object = cache.put_object(b"o");
    let rec = record(&[("out.js", object)], &[("k", "v")]);
    let len = record::encode(&rec).len();

    // A flipped byte in the body, in the trailer, a truncation, an empty file.
    type Damage = Box<dyn Fn(&Path)>;
    let cases: [(&str, Damage); 5] = [
        ("body", Box::new(|p: &Path| flip_byte(p, 20))),
        ("trailer", Box::new(move |p: &Path| flip_byte(p, len - 10))),
        ("truncated", Box::new(move |p: &Path| fs::write(p, &fs::read(p).unwrap()[..len - 30]).unwrap())),
        ("no newline", Box::new(move |p: &Path| fs::write(p, &fs::read(p).unwrap()[..len - 1]).unwrap())),
        ("empty", Box::new(|p: &Path| fs::write(p, b"").unwrap())),
    ];
    for (i, (what, damage)) in cases.iter().enumerate() {
        let key = KeyBuilder::new("case").field("i", &[i as u8]).finish();
        cache.put_action(&key, &rec);
        assert_eq!(cache.get_action(&key), Some(rec.clone()));
        damage(&action_path(dir.path(), &key));
        assert_eq!(cache.get_action(&key), None, "{what}");
        assert!(!action_path(dir.path(), &key).exists(), "{what}: removed");
    }
}

#[test]
fn verify_finds_and_removes_corrupt_entries() {
    let dir = tempfile::tempdir().unwrap();
    let cache = open(dir.path());
    let good = cache.put_object(b"good");
    let bad = cache.put_object(b"bad object");
    let key_good = Hash::of(b"k1");
    let key_flipped = Hash::of(b"k2");
    let key_truncated = Hash::of(b"k3");
    for key in [key_good, key_flipped, key_truncated] {
        cache.put_action(&key, &record(&[("a", good)], &[]));
    }
    flip_byte(&object_path(dir.path(), &bad), 0);
    flip_byte(&action_path(dir.path(), &key_flipped), 30);
    let truncated = action_path(dir.path(), &key_truncated);
    fs::write(&truncated, &fs::read(&truncated).unwrap()[..50]).unwrap();
    // A stray file in a shard, and an entry in the wrong shard.
    let stray = dir.path().join("v1/cas/00/not-a-hash");
    fs::create_dir_all(stray.parent().unwrap()).unwrap();
    fs::write(&stray, b"x").unwrap();
    let misplaced = dir.path().join("v1/cas/00").join(good.to_hex());
    fs::write(&misplaced, b"good").unwrap();
    // Files beside the shards.
    let (loose_object, loose_record) =
        (dir.path().join("v1/cas/junk"), dir.path().join("v1/ac").join(key_good.to_hex()));
    fs::write(&loose_object, b"x").unwrap();
    fs::write(&loose_record, b"x").unwrap();
    // A folder beside them that is no shard, with what it holds.
    let no_shard = dir.path().join("v1/cas/zz");
    fs::create_dir(&no_shard).unwrap();
    fs::write(no_shard.join("garbage"), b"x").unwrap();
    // A FIFO there would make a read wait for ever.
    let fifo = dir.path().join("v1/cas/fifo");
    let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);

    let report = verify(dir.path()).unwrap();
    assert_eq!(report.checked, 11);
    let mut expected = vec![
        object_path(dir.path(), &bad),
        action_path(dir.path(), &key_flipped),
        truncated,
        stray,
        misplaced,
        loose_object,
        loose_record,
        no_shard,
        fifo,
    ];
    expected.sort();
    assert_eq!(report.corrupt, expected);
    assert!(expected.iter().all(|p| !p.exists()));
    assert_eq!(verify(dir.path()).unwrap(), VerifyReport { checked: 2, corrupt: vec![], unreadable: vec![] });
    assert!(cache.get_action(&key_good).is_some());
    assert!(cache.get_object(&good).is_some());
}

#[test]
fn concurrent_puts_leave_one_valid_file_and_no_litter() {
    let dir = tempfile::tempdir().unwrap();
    let bytes: Arc<Vec<u8>> = Arc::new((0..2_000_000u32).map(|i| (i % 251) as u8).collect());
    let shared = Arc::new(open(dir.path()));
    let key = Hash::of(b"concurrent");
    let threads: Vec<_> = (0..16)
        .map(|i| {
            let bytes = Arc::clone(&bytes);
            // Half share one Cache, half open their own, as separate processes would.
            let cache = if i % 2 == 0 { Arc::clone(&shared) } else { Arc::new(open(dir.path())) };
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                for _ in 0..4 {
                    let hash = cache.put_object(&bytes);
                    cache.put_action(&key, &record(&[("o", hash)], &[]));
                    // A reader racing the writers sees a whole entry or none.
                    if let Some(read) = cache.get_object(&hash) {
                        seen.push(read.len());
                    }
                }
                assert!(cache.take_warnings().is_empty());
                seen
            })
        })
        .collect();
    for thread in threads {
        assert!(thread.join().unwrap().iter().all(|&n| n == bytes.len()));
    }
    let hash = Hash::of(&bytes);
    let shard = object_path(dir.path(), &hash).parent().unwrap().to_owned();
    assert_eq!(fs::read_dir(&shard).unwrap().count(), 1);
    assert_eq!(fs::read(object_path(dir.path(), &hash)).unwrap(), *bytes);
    assert!(tmp_is_empty(dir.path()), "no temp litter");
    assert_eq!(verify(dir.path()).unwrap().corrupt, Vec::<PathBuf>::new());
    assert_eq!(open(dir.path()).get_action(&key), Some(record(&[("o", hash)], &[])));
}

/// An action with one output object of `size` bytes, last used `age` ago.
fn put_entry(cache: &Cache, dir: &Path, name: &str, size: usize, age: Duration) -> (Hash, Hash) {
    let object = cache.put_object(&vec![name.as_bytes()[0]; size]);
    let key = Hash::of(name.as_bytes());
    cache.put_action(&key, &record(&[("out", object)], &[]));
    set_mtime(&object_path(dir, &object), age);
    set_mtime(&action_path(dir, &key), age);
    (key, object)
}

/// A gc that cannot write what it keeps says where: a read-only cache, or here a file where
/// its temporary folder goes, which it refuses before it removes anything.
#[test]
fn a_gc_that_cannot_record_the_size_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let cache = open(dir.path());
    put_entry(&cache, dir.path(), "a", 100, Duration::ZERO);
    let temporary = dir.path().join("v1/tmp");
    let _ = fs::remove_dir_all(&temporary);
    fs::write(&temporary, "in the way").unwrap();
    let error = gc(dir.path(), &GcOptions { max_bytes: Some(0), max_age: None }).unwrap_err();
    let expected = format!("{} is not a folder of the cache's own (a link, or a file): remove it", temporary.display());
    assert_eq!(error.to_string(), expected);
    assert_eq!(dir_stats(dir.path()).unwrap().objects, 1, "nothing removed");
}

#[test]
fn gc_by_size_removes_least_recently_used_first() {
    let dir = tempfile::tempdir().unwrap();
    let cache = open(dir.path());
    // Ages beyond the touch granularity (a day), so a read moves an entry to the front.
    let day = Duration::from_secs(24 * 3600);
    let (key_a, obj_a) = put_entry(&cache, dir.path(), "a", 10_000, day * 4);
    let (key_b, obj_b) = put_entry(&cache, dir.path(), "b", 10_000, day * 3);
    let (key_c, obj_c) = put_entry(&cache, dir.path(), "c", 10_000, day * 2);
    // Reading `a` makes it the most recently used.
    let reader = open(dir.path());
    assert!(reader.get_action(&key_a).is_some());
    assert!(reader.get_object(&obj_a).is_some());
    let record_len = fs::metadata(action_path(dir.path(), &key_a)).unwrap().len();

    let before = dir_stats(dir.path()).unwrap();
    assert_eq!((before.objects, before.actions), (3, 3));
    // 3 × (10,000 + record) bytes: b, now the least recently used, goes first...
    let report = gc(dir.path(), &GcOptions { max_bytes: Some(25_000), max_age: None }).unwrap();
    assert_eq!(
        report,
        GcReport {
            removed_entries: 2,
            removed_bytes: 10_000 + record_len,
            kept_entries: 4,
            kept_bytes: 20_000 + 2 * record_len,
        }
    );
    assert!(!object_path(dir.path(), &obj_b).exists() && object_path(dir.path(), &obj_c).exists());
    // ...then c; a, read most recently, stays.
    let report = gc(dir.path(), &GcOptions { max_bytes: Some(15_000), max_age: None }).unwrap();
    assert_eq!(
        report,
        GcReport {
            removed_entries: 2,
            removed_bytes: 10_000 + record_len,
            kept_entries: 2,
            kept_bytes: 10_000 + record_len
        }
    );
    assert!(cache.get_action(&key_a).is_some() && cache.get_object(&obj_a).is_some());
    for (key, object) in [(key_b, obj_b), (key_c, obj_c)] {
        assert!(!action_path(dir.path(), &key).exists() && !object_path(dir.path(), &object).exists());
    }
    // Within bounds: nothing to do.
    let report = gc(dir.path(), &GcOptions { max_bytes: Some(15_000), max_age: Some(day * 5) }).unwrap();
    assert_eq!(report.removed_entries, 0);
    assert_eq!(report.kept_entries, 2);
}

fn usage(dir: &Path) -> Option<u64> {
    let value: Value = serde_json::from_slice(&fs::read(dir.join("v1/usage.json")).ok()?).ok()?;
    value["bytes"].as_u64()
}

#[test]
fn the_size_bound_collects_only_once_the_estimate_passes_it() {
    let dir = tempfile::tempdir().unwrap();
    let cache = open(dir.path());
    assert_eq!(usage(dir.path()), Some(0), "a new cache starts its estimate");
    let day = Duration::from_secs(24 * 3600);
    let (key_a, obj_a) = put_entry(&cache, dir.path(), "a", 10_000, day * 3);
    put_entry(&cache, dir.path(), "b", 10_000, day * 2);
    let written = cache.stats().bytes_written;
    let record_len = fs::metadata(action_path(dir.path(), &key_a)).unwrap().len();
    assert_eq!(written, 20_000 + 2 * record_len);

    // Under the bound: nothing is scanned or removed, the estimate grows by what was written.
    assert_eq!(bound(dir.path(), 100_000, written).unwrap(), None);
    assert_eq!(usage(dir.path()), Some(written));
    // A build that takes it past the bound: least recently used first, down to 80% of it.
    let report = bound(dir.path(), 20_000, 1).unwrap().expect("collected");
    assert_eq!((report.removed_entries, report.kept_bytes), (2, 10_000 + record_len));
    assert!(!object_path(dir.path(), &obj_a).exists());
    assert_eq!(usage(dir.path()), Some(report.kept_bytes), "the estimate is reset to what is left");

    // The estimate is trusted: that is what makes the check cheap.
    fs::write(dir.path().join("v1/usage.json"), "{\"bytes\":0,\"format\":\"agent-bundle-usage/1\"}\n").unwrap();
    assert_eq!(bound(dir.path(), 1_000, 1).unwrap(), None);
    // Without one (a cache from an older version, a damaged file) the entries are counted.
    for damaged in [None, Some("{\"bytes\":\"x\"}")] {
        match damaged {
            Some(text) => fs::write(dir.path().join("v1/usage.json"), text).unwrap(),
            None => fs::remove_file(dir.path().join("v1/usage.json")).unwrap(),
        }
        assert_eq!(bound(dir.path(), 100_000, 1).unwrap(), None);
        assert_eq!(usage(dir.path()), Some(10_000 + record_len));
    }
    // A gc where there is no cache creates none.
    let nowhere = dir.path().join("nowhere");
    assert_eq!(gc(&nowhere, &GcOptions::default()).unwrap(), GcReport::default());
    assert!(!nowhere.exists());
}

#[test]
fn gc_by_age_removes_old_entries_and_never_leaves_a_dangling_record() {
    let dir = tempfile::tempdir().unwrap();
    let cache = open(dir.path());
    let day = Duration::from_secs(86_400);
    let (old_key, old_obj) = put_entry(&cache, dir.path(), "old", 100, day * 40);
    let (new_key, new_obj) = put_entry(&cache, dir.path(), "new", 100, day);
    // Its time 30.5 days back, its last use maybe half a day later: kept.
    let (edge_key, _) = put_entry(&cache, dir.path(), "edge", 100, day * 61 / 2);
    // A recent record naming an old object: the object goes, so the record must go too.
    let mixed_key = Hash::of(b"mixed");
    cache.put_action(&mixed_key, &record(&[("a", old_obj), ("b", new_obj)], &[]));
    // Litter of a killed process.
    let litter = dir.path().join("v1/tmp/123-0-0.tmp");
    fs::write(&litter, b"half").unwrap();
    set_mtime(&litter, day);
    let fresh_litter = dir.path().join("v1/tmp/124-0-0.tmp");
    fs::write(&fresh_litter, b"being written").unwrap();

    let report = gc(dir.path(), &GcOptions { max_bytes: None, max_age: Some(day * 30) }).unwrap();
    assert_eq!((report.removed_entries, report.kept_entries), (3, 4));
    assert!(action_path(dir.path(), &edge_key).exists(), "maybe used within the age");
    assert!(!action_path(dir.path(), &old_key).exists());
    assert!(!object_path(dir.path(), &old_obj).exists());
    assert!(!action_path(dir.path(), &mixed_key).exists(), "no record outlives its objects");
    assert!(cache.get_action(&new_key).is_some() && cache.get_object(&new_obj).is_some());
    assert!(!litter.exists() && fresh_litter.exists());
}

#[test]
fn opening_the_cache_removes_what_killed_processes_left_in_tmp() {
    let dir = tempfile::tempdir().unwrap();
    open(dir.path());
    let (old, fresh) = (dir.path().join("v1/tmp/1-0-0.tmp"), dir.path().join("v1/tmp/2-0-0.tmp"));
    fs::write(&old, b"half").unwrap();
    set_mtime(&old, Duration::from_secs(2 * 3600));
    fs::write(&fresh, b"being written").unwrap();
    open(dir.path());
    assert!(!old.exists() && fresh.exists());
}

#[test]
fn gc_keeps_an_entry_used_after_the_scan_started() {
    // The race itself cannot be staged deterministically; its guard can: an entry whose
    // mtime moved past what the scan saw is kept.
    let dir = tempfile::tempdir().unwrap();
    let cache = open(dir.path());
    let day = Duration::from_secs(24 * 3600);
    let (key, object) = put_entry(&cache, dir.path(), "x", 10, day * 2);
    assert!(cache.get_action(&key).is_some() && cache.get_object(&object).is_some());
    let report = gc(dir.path(), &GcOptions { max_bytes: None, max_age: Some(day) }).unwrap();
    assert_eq!(report.removed_entries, 0);
}

#[test]
fn dir_stats_counts_entries_and_reads_the_last_build() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(dir_stats(&dir.path().join("absent")).unwrap(), DirStats::default());
    let cache = open(dir.path());
    assert_eq!(dir_stats(dir.path()).unwrap(), DirStats::default());
    let a = cache.put_object(b"12345");
    let b = cache.put_object(b"123");
    cache.put_action(&Hash::of(b"k"), &record(&[("a", a), ("b", b)], &[]));
    cache.get_action(&Hash::of(b"absent"));
    let record_len = fs::metadata(action_path(dir.path(), &Hash::of(b"k"))).unwrap().len();
    record_build(dir.path(), &cache.stats()).unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("v1/last-build.json")).unwrap(),
        format!(
            "{{\"action_hits\":0,\"action_misses\":1,\"bytes_written\":{},\"format\":\"agent-bundle-last-build/1\",\"object_hits\":0,\"object_misses\":0,\"remote_errors\":0,\"remote_hits\":0}}\n",
            8 + record_len
        )
    );
    let stats = dir_stats(dir.path()).unwrap();
    assert_eq!(
        stats,
        DirStats {
            objects: 2,
            object_bytes: 8,
            actions: 1,
            action_bytes: record_len,
            last_build: Some(CacheStats { action_misses: 1, bytes_written: 8 + record_len, ..CacheStats::default() }),
        }
    );
    assert!(tmp_is_empty(dir.path()));
    // An unreadable last-build file is simply absent.
    fs::write(dir.path().join("v1/last-build.json"), b"{").unwrap();
    assert_eq!(dir_stats(dir.path()).unwrap().last_build, None);
}

#[test]
fn a_disabled_cache_misses_uncounted_and_drops_puts() {
    let cache = Cache::disabled();
    let hash = cache.put_object(b"x");
    assert_eq!(hash, Hash::of(b"x"));
    cache.put_action(&hash, &ActionRecord::default());
    assert_eq!(cache.get_object(&hash), None);
    assert_eq!(cache.get_action(&hash), None);
    assert_eq!(cache.stats(), CacheStats::default(), "--no-cache reports no misses");
    assert!(cache.take_warnings().is_empty());
    let none = Cache::open(&CacheOptions::default()).unwrap();
    assert_eq!(none.get_object(&hash), None);
}

/// A folder holding other files is no cache to make: its tag would mark them for backups to
/// skip. One with a cache in it, or only a tag, is one.
#[test]
fn a_folder_of_other_files_is_not_made_a_cache() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("Documents")).unwrap();
    let cache = Cache::open(&CacheOptions { dir: Some(dir.path().to_path_buf()), remote: None }).unwrap();
    let warnings = cache.take_warnings();
    assert!(warnings.len() == 1 && warnings[0].contains("it holds `Documents`"), "{warnings:?}");
    assert!(!dir.path().join("CACHEDIR.TAG").exists() && !dir.path().join("v1").exists());
    fs::remove_dir(dir.path().join("Documents")).unwrap();
    fs::create_dir(dir.path().join("lost+found")).unwrap();
    fs::write(dir.path().join(".gitkeep"), "").unwrap();
    fs::write(dir.path().join("CACHEDIR.TAG"), "Signature: 8a477f597d28d172789f06886806bc55\n").unwrap();
    let cache = Cache::open(&CacheOptions { dir: Some(dir.path().to_path_buf()), remote: None }).unwrap();
    assert_eq!(cache.take_warnings(), Vec::<String>::new());
    assert!(dir.path().join("v1").is_dir());
}

#[test]
fn open_rejects_bad_remote_options_and_warns_of_an_unusable_dir() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    fs::write(&file, b"").unwrap();
    let unusable = Cache::open(&CacheOptions { dir: Some(file.join("cache")), remote: None }).unwrap();
    let warnings = unusable.take_warnings();
    assert!(warnings.len() == 1 && warnings[0].contains("building without a local cache"), "{warnings:?}");
    unusable.put_object(b"dropped");
    assert_eq!(unusable.get_object(&Hash::of(b"dropped")), None);
    let remote = |url: &str, ca_file: Option<PathBuf>| CacheOptions {
        dir: None,
        remote: Some(RemoteOptions { url: url.into(), ca_file, ..RemoteOptions::default() }),
    };
    assert!(Cache::open(&remote("localhost:9", None)).is_err());
    assert!(Cache::open(&remote("http://127.0.0.1:9/prefix/", None)).is_ok(), "not contacted at open");
    assert!(Cache::open(&remote("https://cache.example/x", None)).is_ok());
    let missing = Cache::open(&remote("https://h/x", Some(dir.path().join("missing.pem")))).unwrap_err();
    assert!(missing.contains("missing.pem"), "{missing}");
    let empty = Cache::open(&remote("https://h/x", Some(file.clone()))).unwrap_err();
    assert!(empty.contains("no PEM certificate"), "{empty}");
    let with_token = |url: &str| CacheOptions {
        dir: None,
        remote: Some(RemoteOptions { url: url.into(), token: Some("secret".into()), ..RemoteOptions::default() }),
    };
    let warned = |url: &str| Cache::open(&with_token(url)).unwrap().take_warnings();
    let clear = warned("http://cache.example/x");
    assert!(clear.len() == 1 && clear[0].contains("unencrypted") && !clear[0].contains("secret"), "{clear:?}");
    assert_eq!(warned("https://cache.example/x"), Vec::<String>::new());
    assert_eq!(warned("http://127.0.0.1:9/x"), Vec::<String>::new());
    let token = RemoteOptions {
        url: "http://ci:pass/word@h".into(),
        token: Some("hunter2".into()),
        read_only: true,
        ca_file: None,
        s3: Default::default(),
    };
    assert!(!format!("{token:?}").contains("hunter2"), "Debug redacts the token");
    assert!(!format!("{token:?}").contains("word"), "and the URL's credentials");
}

#[test]
fn a_cache_is_shared_by_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Cache>();
}

#[test]
fn the_default_dir_follows_the_environment() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| OsString::from(v))
    };
    assert_eq!(
        default_dir_from(env(&[("AGENT_BUNDLE_CACHE_DIR", "/c"), ("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])),
        Some(PathBuf::from("/c"))
    );
    assert_eq!(
        default_dir_from(env(&[("AGENT_BUNDLE_CACHE_DIR", ""), ("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])),
        Some(PathBuf::from("/x/agent-bundle/cache"))
    );
    assert_eq!(
        default_dir_from(env(&[("XDG_CACHE_HOME", "relative"), ("HOME", "/h")])),
        Some(PathBuf::from("/h/.cache/agent-bundle/cache"))
    );
    assert_eq!(default_dir_from(env(&[])), None);
}

/// A loopback HTTP server answering `GET` 404, `HEAD` 200 (a stale cache in front of a
/// store) and `PUT` 201, on kept-alive connections; returns its URL and the requests seen.
fn server_with_a_stale_head() -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/cache", listener.local_addr().unwrap());
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let (mut stream, log) = (stream.unwrap(), log.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                loop {
                    let mut request = String::new();
                    if reader.read_line(&mut request).unwrap_or(0) == 0 {
                        return;
                    }
                    let mut length = 0;
                    loop {
                        let mut header = String::new();
                        reader.read_line(&mut header).unwrap();
                        if header.trim().is_empty() {
                            break;
                        }
                        if let Some((name, value)) = header.split_once(':')
                            && name.eq_ignore_ascii_case("content-length")
                        {
                            length = value.trim().parse().unwrap();
                        }
                    }
                    reader.by_ref().take(length).read_to_end(&mut Vec::new()).unwrap();
                    let line: Vec<&str> = request.split_whitespace().take(2).collect();
                    let status = match line[0] {
                        "GET" => "404 Not Found",
                        "HEAD" => "200 OK",
                        _ => "201 Created",
                    };
                    log.lock().unwrap().push(line.join(" "));
                    write!(stream, "HTTP/1.1 {status}\r\nContent-Length: 0\r\n\r\n").unwrap();
                }
            });
        }
    });
    (url, seen)
}

#[test]
fn an_object_the_remote_answered_missing_is_uploaded_again_whatever_head_says() {
    let (url, seen) = server_with_a_stale_head();
    let options = CacheOptions { dir: None, remote: Some(RemoteOptions { url, ..RemoteOptions::default() }) };
    let cache = Cache::open(&options).unwrap();
    // Large enough to be asked about with HEAD before an upload.
    let bytes = vec![7u8; PROBE_BEFORE_UPLOAD + 1];
    let hash = Hash::of(&bytes);
    assert!(cache.get_object(&hash).is_none());
    assert_eq!(cache.put_object(&bytes), hash);
    let path = format!("/cache/cas/{}", hash.to_hex());
    assert_eq!(*seen.lock().unwrap(), [format!("GET {path}"), format!("PUT {path}")]);

    // Never seen missing: HEAD is trusted, and nothing is sent.
    let other = vec![8u8; PROBE_BEFORE_UPLOAD + 1];
    cache.put_object(&other);
    assert_eq!(seen.lock().unwrap().last().unwrap(), &format!("HEAD /cache/cas/{}", Hash::of(&other).to_hex()));
}

/// A shard folder that is a link is not the store's, as `verify` has it: a build reads
/// nothing through it, and a put replaces the link with a folder, leaving what it led to.
#[test]
fn a_shard_that_is_a_link_is_a_miss_and_a_put_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let cache = open(dir.path());
    let bytes = b"export const answer = 42;\n";
    let hash = cache.put_object(bytes);
    let shard = object_path(dir.path(), &hash).parent().unwrap().to_owned();
    let elsewhere = dir.path().join("elsewhere");
    fs::rename(&shard, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &shard).unwrap();
    assert_eq!(cache.get_object(&hash), None);
    cache.put_object(bytes);
    assert!(fs::symlink_metadata(&shard).unwrap().is_dir());
    assert_eq!(&*cache.get_object(&hash).unwrap(), bytes);
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 1, "what the link led to is left alone");
}

/// A store folder that is a link to elsewhere (a project shipping its own `.cache/`, built
/// with `--cache-dir .cache`) is never read, written or cleaned through: the build goes on
/// without a local cache, and `verify` and `gc` refuse it, leaving what it points to as it was.
#[test]
fn a_store_folder_that_is_a_link_is_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("elsewhere");
    fs::create_dir_all(elsewhere.join("ab")).unwrap();
    fs::write(elsewhere.join("old.txt"), "precious").unwrap();
    fs::write(elsewhere.join("ab/file"), "precious").unwrap();
    let long_ago = SystemTime::now() - Duration::from_secs(3 * 86400);
    File::options().write(true).open(elsewhere.join("old.txt")).unwrap().set_modified(long_ago).unwrap();
    for linked in ["tmp", "ac", "cas", "v1"] {
        let cache = dir.path().join(format!("cache-{linked}"));
        fs::create_dir_all(&cache).unwrap();
        let link = if linked == "v1" { cache.join("v1") } else { cache.join("v1").join(linked) };
        fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        let opened = open(&cache);
        assert!(opened.take_warnings().iter().any(|w| w.contains("is not a folder of the cache's own")), "{linked}");
        opened.put_object(b"an object");
        let _ = maintenance::record_build(&cache, &CacheStats { action_misses: 1, ..CacheStats::default() });
        let verified = maintenance::verify(&cache);
        let collected = maintenance::gc(&cache, &GcOptions { max_bytes: Some(0), max_age: None });
        assert!(verified.is_err() && collected.is_err(), "{linked}");
        let left: Vec<_> = walkdir::WalkDir::new(&elsewhere).into_iter().map(|e| e.unwrap().into_path()).collect();
        assert_eq!(left.len(), 4, "{linked}: {left:?}");
    }
}

/// A cache any user may write in is used, and said to be: what another user puts there would
/// end up in this user's artifacts.
#[test]
fn a_cache_others_may_write_in_is_said_to_be() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    drop(open(&cache));
    assert_eq!(open(&cache).take_warnings(), Vec::<String>::new());
    // A cache folder that is a link (to a larger disk, say) is judged by what it leads to.
    let linked = dir.path().join("linked");
    std::os::unix::fs::symlink(&cache, &linked).unwrap();
    assert_eq!(open(&linked).take_warnings(), Vec::<String>::new());
    fs::set_permissions(cache.join("v1/ac"), fs::Permissions::from_mode(0o777)).unwrap();
    let warnings = open(&cache).take_warnings();
    assert!(warnings.len() == 1 && warnings[0].contains("v1/ac may be written by any user"), "{warnings:?}");
}

/// An entry larger than any entry of its kind (a sparse file claims any size) is a miss,
/// never read, and `verify` removes it as corrupt.
#[test]
fn an_entry_past_its_kind_bound_is_never_read() {
    let dir = tempfile::tempdir().unwrap();
    let cache = open(dir.path());
    let hash = cache.put_object(b"an object");
    let key = KeyBuilder::new("k").finish();
    cache.put_action(&key, &record(&[("out", hash)], &[]));
    for path in [object_path(dir.path(), &hash), action_path(dir.path(), &key)] {
        File::options().write(true).open(path).unwrap().set_len(1 << 40).unwrap();
    }
    let kept = open(dir.path()).put_object(b"another object");
    let cache = open(dir.path());
    assert_eq!((cache.get_object(&hash), cache.get_action(&key)), (None, None));
    // Counted for nothing: a size bound evicts no real entry for them.
    let stats = maintenance::dir_stats(dir.path()).unwrap();
    assert_eq!((stats.objects, stats.actions, stats.object_bytes), (1, 0, 14));
    maintenance::gc(dir.path(), &GcOptions { max_bytes: Some(1 << 20), max_age: None }).unwrap();
    assert_eq!(open(dir.path()).get_object(&kept).as_deref(), Some(b"another object".as_slice()));
    let report = maintenance::verify(dir.path()).unwrap();
    assert_eq!(report.corrupt.len(), 2, "{report:?}");
}
