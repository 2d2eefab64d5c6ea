//! `agent-bundle types`: the TypeScript declarations written into a project, or into every
//! project of a workspace (`crate::declarations`).

use std::path::Path;

use super::{Failure, TypesArgs, report};
use crate::declarations::{ProjectTsconfig, Written};

pub(super) fn run(args: &TypesArgs) -> Result<bool, Failure> {
    let Some(dir) = &args.workspace else {
        super::project_folder("--root", &args.root, &args.root)?;
        let written = write_types(&args.root).map_err(Failure::Run)?;
        if args.json {
            report::print_json(&types_json(&written));
        } else {
            outln!("Wrote the TypeScript declarations to .agent-bundle/ {}", types_summary(&written));
        }
        return Ok(true);
    };
    let base = super::workspace::base(Some(dir))?;
    let (roots, _) = super::workspace::projects_below(&base)?;
    let results: Vec<_> = roots.iter().map(|root| (root, write_types(root))).collect();
    let shown = |root: &Path| crate::workspace::project_name(&base, root);
    if args.json {
        let projects: Vec<_> = results
            .iter()
            .map(|(root, result)| {
                let mut row = match result {
                    Ok(written) => types_json(written),
                    Err(error) => serde_json::json!({ "ok": false, "error": error }),
                };
                row["project"] = shown(root).into();
                row
            })
            .collect();
        let ok = results.iter().all(|(_, result)| result.is_ok());
        report::print_json(&serde_json::json!({ "ok": ok, "projects": projects }));
        return Ok(ok);
    }
    for (root, result) in &results {
        match result {
            Ok(written) => outln!("{}: {}", shown(root), types_summary(written)),
            Err(error) => errln!("{}: error: {error}", shown(root)),
        }
    }
    Ok(results.iter().all(|(_, result)| result.is_ok()))
}

/// `agent-bundle types` for the project at `root`, which must hold a config.
fn write_types(root: &Path) -> Result<Written, String> {
    let entries = crate::config::CONFIG_FILE_NAMES
        .iter()
        .filter_map(|name| Some((name, std::fs::symlink_metadata(root.join(name)).ok()?)));
    let entries: Vec<_> = entries.collect();
    if !entries.iter().any(|(_, meta)| meta.is_file()) {
        let names = crate::config::CONFIG_FILE_NAMES.join(", ");
        let instead = match entries.first() {
            // (The loader reads regular files alone, never through a link.)
            Some((name, meta)) if meta.is_symlink() => format!(" (`{name}` is a symbolic link, which is never read)"),
            Some((name, meta)) if meta.is_dir() => format!(" (`{name}` is a folder)"),
            Some((name, _)) => format!(" (`{name}` is no regular file)"),
            None => format!(" (none of {names})"),
        };
        return Err(format!(
            "no agent-bundle config found in {}{instead}: run `agent-bundle types` in a plugin project, or pass --root",
            root.display()
        ));
    }
    crate::declarations::write(root).map_err(|e| format!("cannot write the declarations into {}: {e}", root.display()))
}

fn types_json(written: &Written) -> serde_json::Value {
    serde_json::json!({
        "ok": true,
        "written": written.written,
        "unchanged": written.unchanged,
        "removed": written.removed,
        "tsconfig": written.tsconfig.as_str(),
        "tsconfigOverrides": written.overrides.iter().map(|option| option.as_str()).collect::<Vec<_>>(),
    })
}

/// "(6 written, 0 unchanged); created tsconfig.json, …".
fn types_summary(written: &Written) -> String {
    let tsconfig = match written.tsconfig {
        ProjectTsconfig::Created => {
            "created tsconfig.json, extending .agent-bundle/tsconfig.json: `npx tsc` checks the project"
        }
        ProjectTsconfig::Extends if !written.overrides.is_empty() => &format!(
            "note: tsconfig.json extends .agent-bundle/tsconfig.json, but sets {} itself, which TypeScript takes \
             instead of what that gives: {}",
            crate::diagnostics::and_list(
                &written.overrides.iter().map(|option| format!("`{}`", option.as_str())).collect::<Vec<_>>()
            ),
            written.overrides.iter().map(|option| option.fix()).collect::<Vec<_>>().join("; ")
        ),
        ProjectTsconfig::Extends => "tsconfig.json extends .agent-bundle/tsconfig.json",
        ProjectTsconfig::Other => {
            "note: tsconfig.json does not extend the declarations: make \"./.agent-bundle/tsconfig.json\" (one of) its \
             \"extends\""
        }
        ProjectTsconfig::Malformed => {
            "note: tsconfig.json does not parse as JSON with comments (`npx tsc` says where), so what it extends is not \
             known"
        }
    };
    let removed = match written.removed.len() {
        0 => String::new(),
        count => format!(", {count} removed: {}", written.removed.join(", ")),
    };
    format!("({} written, {} unchanged{removed}); {tsconfig}", written.written.len(), written.unchanged.len())
}
