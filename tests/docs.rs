//! Generated documents are committed and must stay current.

use crate::support::{self, repo};

fn assert_current(path: &str, command: &[&str]) {
    let output = support::run(&repo(), command);
    assert!(output.status.success());
    let generated = String::from_utf8(output.stdout).unwrap();
    let committed = std::fs::read_to_string(repo().join(path)).unwrap_or_default();
    assert!(
        committed == generated,
        "{path} is out of date: run `cargo run -- {} > {path}` and commit it",
        command.join(" ")
    );
}

#[test]
fn the_event_matrix_is_current() {
    assert_current("docs/matrix.md", &["matrix"]);
}

#[test]
fn the_diagnostics_reference_is_current() {
    assert_current("docs/diagnostics.md", &["diagnostics"]);
}

/// The README's sample `build` line says what building the example really prints.
#[test]
fn the_readme_sample_build_line_is_current() {
    let dir = support::example("policy");
    let output = support::run(dir.path(), &["build", "--no-cache"]);
    assert!(output.status.success());
    let printed = String::from_utf8(output.stdout).unwrap();
    let (built, rest) = printed.split_once(" → ").unwrap();
    let files = rest.split_once(" (").and_then(|(_, counts)| counts.split_once(" files")).unwrap().0;
    let sample = format!("{built} → examples/policy/artifact/ ({files} files: …)");
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(readme.contains(&sample), "README.md should show `{sample}`");
}
