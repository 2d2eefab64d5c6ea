//! `build --workspace`: every project below a directory, in parallel, each on its own.

use std::fs;

use crate::support::{self, copy_tree, repo};

#[test]
fn a_workspace_build_publishes_every_good_project_and_fails_on_a_bad_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    copy_tree(&repo().join("examples/policy"), &root.join("plugins/policy"));
    copy_tree(&repo().join("examples/guarded"), &root.join("plugins/guarded"));
    copy_tree(&repo().join("examples/guarded"), &root.join("plugins/broken"));
    fs::write(root.join("plugins/broken/src/hooks/audit.ts"), "export default (").unwrap();
    copy_tree(&repo().join("examples/guarded"), &root.join("scratch/ignored"));
    fs::write(root.join(".gitignore"), "scratch/\n").unwrap();
    // `ignore` honours .gitignore inside git repositories.
    fs::create_dir(root.join(".git")).unwrap();

    let output = support::run(root, &["build", "--workspace", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let projects: Vec<(&str, bool)> = report["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["project"].as_str().unwrap(), p["ok"].as_bool().unwrap()))
        .collect();
    assert_eq!(projects, [("plugins/broken", false), ("plugins/guarded", true), ("plugins/policy", true)]);
    assert!(root.join("plugins/policy/artifact/agent-bundle.manifest.json").is_file());
    assert!(!root.join("plugins/broken/artifact").exists());

    let output = support::run(root, &["build", "--workspace", ".", "--filter", "policy", "--json"]);
    assert_eq!(output.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["projects"].as_array().unwrap().len(), 1);
}
