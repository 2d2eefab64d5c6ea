//! The JS runtime is tested by Node's own test runner; this runs that suite under `cargo test`.

use crate::support::repo;

#[test]
fn node_test_suite_of_the_runtime_passes() {
    let output = std::process::Command::new("node")
        .args(["--test", "src/runtime/"])
        .current_dir(repo())
        .output()
        .expect("node is installed");
    assert!(
        output.status.success(),
        "node --test src/runtime/ failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
