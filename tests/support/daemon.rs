//! A throwaway server started on loopback by one of the project's scripts
//! (`scripts/nginx-cache-server.sh`, `scripts/s3-cache-server.sh`), stopped on drop.

use std::collections::BTreeMap;
use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::repo;

pub struct Daemon {
    pub root: tempfile::TempDir,
    pub port: u16,
    pid: u32,
}

impl Daemon {
    /// Runs `scripts/<script> [flags] <root> <port>` on a free port, which prints the
    /// server's pid once it accepts connections. Exit 127 means the server is not
    /// installed: the test fails with `missing`.
    pub fn start(script: &str, flags: &[&str], missing: &str) -> Daemon {
        let script = repo().join("scripts").join(script);
        let mut last_error = String::new();
        for _ in 0..3 {
            let root = tempfile::tempdir().unwrap();
            let port = free_port();
            let output =
                Command::new("bash").arg(&script).args(flags).arg(root.path()).arg(port.to_string()).output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
            if output.status.code() == Some(127) {
                panic!("{missing}\n{stderr}");
            }
            if output.status.success() {
                let pid = String::from_utf8_lossy(&output.stdout).trim().parse().unwrap();
                return Daemon { root, port, pid };
            }
            last_error = stderr; // most likely the port was taken meanwhile: try another
        }
        panic!("could not start a server with {}:\n{last_error}", script.display());
    }

    /// Every file under `<root>/store` with its bytes.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        walkdir::WalkDir::new(self.root.path().join("store"))
            .into_iter()
            .map(Result::unwrap)
            .filter(|entry| entry.file_type().is_file())
            .map(|entry| (entry.path().to_owned(), fs::read(entry.path()).unwrap()))
            .collect()
    }

    pub fn path(&self, relative: impl AsRef<Path>) -> PathBuf {
        self.root.path().join(relative)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg("-TERM").arg(self.pid.to_string()).status();
        // Wait until it has exited (a zombie counts as exited).
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            match fs::read_to_string(format!("/proc/{}/stat", self.pid)) {
                Ok(stat) if !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z') => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                _ => break,
            }
        }
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
