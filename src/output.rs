//! Files the build produces, as bytes in memory, and the one JSON serialization they use.
//!
//! Emitted JSON is deterministic: keys sorted, two-space indent, one trailing newline. The
//! same inputs give the same bytes on any machine.

use std::sync::Arc;

/// How a file came to be, recorded in the artifact manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    /// A manifest or hook document written from the host tables.
    Generated,
    /// A wrapper bundled from handler modules and the runtime.
    Bundle,
    /// A payload file copied byte for byte.
    Prebuilt,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OutputFile {
    /// Artifact-relative POSIX path.
    pub path: String,
    pub bytes: Arc<[u8]>,
    pub executable: bool,
    pub kind: FileKind,
}

impl OutputFile {
    pub fn json(path: impl Into<String>, value: &serde_json::Value) -> Self {
        Self::generated(path, to_canonical_json(value).into_bytes().into())
    }

    pub fn generated(path: impl Into<String>, bytes: Arc<[u8]>) -> Self {
        OutputFile { path: path.into(), bytes, executable: false, kind: FileKind::Generated }
    }
}

/// The longest artifact path, in bytes: far past any file a build emits, and short enough
/// that the out dir plus it stays under the file systems' path limits (4,096 on Linux).
pub const MAX_ARTIFACT_PATH: usize = 1024;

/// The longest name of one part of an artifact path, in bytes: the limit of common file
/// systems (ext4, APFS, NTFS).
pub const MAX_ARTIFACT_NAME: usize = 255;

/// Whether `path` names a file inside an artifact: relative, made of plain names only (no
/// `.`, `..` or empty part) that every file system can take (no control character or `\`,
/// a path separator on Windows; none over [`MAX_ARTIFACT_NAME`] bytes; at most
/// [`MAX_ARTIFACT_PATH`] bytes in all). Paths also come from cache records, which whoever
/// may write the remote controls, so nothing is written or restored under any other path,
/// and no record names a file that publishing it would fail on.
pub fn is_artifact_path(path: &str) -> bool {
    path.len() <= MAX_ARTIFACT_PATH && path.split('/').all(is_plain_name)
}

/// Whether `name` is one part of an artifact path (see [`is_artifact_path`]).
fn is_plain_name(name: &str) -> bool {
    let writable = |c: char| !c.is_control() && c != '\\';
    !name.is_empty() && name != "." && name != ".." && name.len() <= MAX_ARTIFACT_NAME && name.chars().all(writable)
}

/// Every folder the artifact paths `paths` lie in (`a` and `a/b` for `a/b/c.mjs`), parents
/// first.
pub fn folders_of<'a>(paths: impl IntoIterator<Item = &'a str>) -> std::collections::BTreeSet<&'a str> {
    paths.into_iter().flat_map(|path| path.match_indices('/').map(move |(end, _)| &path[..end])).collect()
}

/// Serializes `value` with sorted keys, two-space indent and a trailing newline.
pub fn to_canonical_json(value: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(&Sorted(value)).expect("JSON values always serialize");
    text.push('\n');
    text
}

/// `value` serialized with every object's keys in order, without copying the tree.
pub(crate) struct Sorted<'a>(pub &'a serde_json::Value);

impl serde::Serialize for Sorted<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            serde_json::Value::Object(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                let mut out = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    out.serialize_entry(key, &Sorted(value))?;
                }
                out.end()
            }
            serde_json::Value::Array(items) => {
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    out.serialize_element(&Sorted(item))?;
                }
                out.end()
            }
            scalar => scalar.serialize(serializer),
        }
    }
}

/// Whether the file at `path` begins with `prefix`, reading no more than that; `None` when
/// it is no regular file (a link, or a pipe, whose open would wait for a writer).
pub fn begins_with(path: &std::path::Path, prefix: &[u8]) -> Option<bool> {
    use std::io::Read;
    if !std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.is_file()) {
        return None;
    }
    let mut head = vec![0; prefix.len()];
    let read = std::fs::File::open(path).and_then(|mut file| file.read_exact(&mut head));
    Some(read.is_ok() && head == prefix)
}

/// How a temporary file [`replace_whole`] writes ends, after its writer's process id.
const TEMPORARY_SUFFIX: &str = ".tmp";

/// The process id of the writer of the temporary file named `name`, if [`replace_whole`]
/// names it so.
pub fn temporary_writer(name: &str) -> Option<u32> {
    name.strip_suffix(TEMPORARY_SUFFIX)?.rsplit_once('.')?.1.parse().ok()
}

/// Replaces the file at `path` with `bytes`, whole or not at all: written beside it under a
/// name of this process's (`<name>.<pid>.tmp`), then renamed over it; the temporary file
/// goes if either step fails.
pub fn replace_whole(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut name = path.file_name().expect("a file to replace has a name").to_owned();
    name.push(format!(".{}{TEMPORARY_SUFFIX}", std::process::id()));
    let temporary = path.with_file_name(name);
    let written = std::fs::write(&temporary, bytes).and_then(|()| std::fs::rename(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifact_paths_stay_inside_the_artifact() {
        for good in ["a.json", "hooks/a.claude.mjs", ".claude-plugin/plugin.json", "x/.y/z"] {
            assert!(is_artifact_path(good), "{good}");
        }
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "./a", "a/./b", "a//b", "a/", ".."] {
            assert!(!is_artifact_path(bad), "{bad}");
        }
        // Names a file system refuses: publishing them would fail every build that restores them.
        for bad in ["PWNED\0.txt", "a\nb", "a/\x1b[31m", "a\u{7f}", "a\u{85}", "..\\x", "a\\b"] {
            assert!(!is_artifact_path(bad), "{bad:?}");
        }
        let name = "n".repeat(MAX_ARTIFACT_NAME);
        assert!(is_artifact_path(&name) && !is_artifact_path(&format!("{name}n")), "a name of 256 bytes");
        let deep = "a/".repeat(MAX_ARTIFACT_PATH / 2 - 1) + "bc";
        assert!(is_artifact_path(&deep) && !is_artifact_path(&format!("{deep}d")), "a path of 1,025 bytes");
        assert!(!is_artifact_path("a/".repeat(3000).trim_end_matches('/')), "3,000 levels deep");
    }

    #[test]
    fn canonical_json_sorts_keys_recursively() {
        let value = serde_json::json!({"b": 1, "a": {"d": [ {"z": 1, "y": 2} ], "c": null}});
        assert_eq!(
            to_canonical_json(&value),
            "{\n  \"a\": {\n    \"c\": null,\n    \"d\": [\n      {\n        \"y\": 2,\n        \"z\": 1\n      }\n    ]\n  },\n  \"b\": 1\n}\n"
        );
    }
}
