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
