//! Watch mode: an edit rewrites only what depends on it; a broken edit keeps the last good
//! artifact; a fix publishes again; Ctrl-C exits cleanly.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use crate::support::{self, artifact_files};

#[test]
fn watch_rebuilds_only_what_an_edit_touches_and_survives_a_broken_edit() {
    let dir = support::example("policy");
    let mut child = support::bin()
        .args(["watch", "--json"])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (lines, builds) = mpsc::channel::<Value>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let _ = lines.send(serde_json::from_str(&line.unwrap()).unwrap());
        }
    });
    let next = || builds.recv_timeout(Duration::from_secs(30)).expect("a build report within 30 s");

    let initial = next();
    assert_eq!(initial["ok"], true, "{initial:#}");
    let stop = dir.path().join("src/hooks/stop.ts");
    let original = std::fs::read_to_string(&stop).unwrap();

    std::fs::write(&stop, original.replace("summarize what you changed", "list what you changed")).unwrap();
    let edited = next();
    assert_eq!(edited["ok"], true, "{edited:#}");
    assert_eq!(edited["changed"], serde_json::json!(["src/hooks/stop.ts"]));
    let written: Vec<&str> =
        edited["published"]["written"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    assert_eq!(written.len(), 4, "three stop wrappers and the manifest: {written:?}");
    assert!(
        written.iter().all(|p| p.starts_with("hooks/stop-stop-") || *p == "agent-bundle.manifest.json"),
        "{written:?}"
    );
    // Only the edited module and what depends on it ran again.
    assert!(
        edited["queriesExecuted"].as_u64().unwrap() < initial["queriesExecuted"].as_u64().unwrap() / 2,
        "{edited:#}"
    );

    let good = artifact_files(&dir.path().join("artifact"));
    std::fs::write(&stop, "export default (").unwrap();
    let broken = next();
    assert_eq!(broken["ok"], false);
    assert_eq!(broken["diagnostics"][0]["file"], "src/hooks/stop.ts");
    assert_eq!(artifact_files(&dir.path().join("artifact")), good, "the last good artifact stays");

    std::fs::write(&stop, &original).unwrap();
    let fixed = next();
    assert_eq!(fixed["ok"], true, "{fixed:#}");

    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert!(status.success(), "watch exits cleanly on Ctrl-C: {status}");
}
