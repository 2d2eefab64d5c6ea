//! Fingerprints the compiler's own sources for the cache keys (`actions::COMPILER`).
//!
//! An action key must change whenever the output can: a host table, the linker, the runtime
//! or a dependency (Cargo.lock) edited without a version bump would otherwise meet outputs
//! cached by the binary before it. Hashing the sources here costs nothing at run time, and
//! builds of the same sources with the same toolchain agree on any machine, so a remote cache
//! is still shared. Nothing pins the toolchain (`rust-version` is a minimum), and
//! `DefaultHasher` may hash otherwise in another Rust release: a binary built with another
//! toolchain only misses what this one cached.

use std::hash::{DefaultHasher, Hasher};
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=Cargo.lock");
    let mut files = Vec::new();
    collect(Path::new("src"), &mut files);
    files.sort();
    files.push(PathBuf::from("Cargo.lock"));
    let mut hasher = DefaultHasher::new();
    for path in &files {
        // A missing Cargo.lock (a library consumer's build) hashes as empty.
        let bytes = std::fs::read(path).unwrap_or_default();
        hasher.write(path.to_string_lossy().as_bytes());
        hasher.write_u64(bytes.len() as u64);
        hasher.write(&bytes);
    }
    println!("cargo:rustc-env=AGENT_BUNDLE_SOURCE_HASH={:016x}", hasher.finish());
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the source folder is readable") {
        let path = entry.expect("the source folder is readable").path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}
