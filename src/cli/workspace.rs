//! `agent-bundle build --workspace`: per-project results, a progress bar, a summary.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::Instant;

use super::{BuildArgs, Failure, report};
use crate::build::BuildOptions;
use crate::workspace::{build_all, discover, filter};

pub(super) fn run(args: BuildArgs) -> Result<bool, Failure> {
    let cwd = std::env::current_dir().map_err(|e| Failure::Run(e.to_string()))?;
    let base = cwd.join(args.workspace.as_deref().unwrap_or(std::path::Path::new(".")));
    if !base.is_dir() {
        return Err(Failure::Usage(format!("--workspace {} is not a directory", base.display())));
    }
    let roots = filter(discover(&base), &base, &args.filter);
    if roots.is_empty() {
        return Err(Failure::Run(format!("no agent-bundle projects found below {}", base.display())));
    }
    let targets = (!args.source.targets.is_empty()).then(|| args.source.targets.clone());
    // One cache for every project: a module shared by two plugins is compiled once.
    let cache = args.source.cache.open()?;
    let options_for = |root: &std::path::Path| BuildOptions {
        root: root.to_path_buf(),
        config: None,
        targets: targets.clone(),
        out_dir: root.join("artifact"),
        // Counted per project (for its report) and in the run's totals.
        cache: Arc::new(cache.scoped()),
    };
    let progress = (std::io::stderr().is_terminal() && !args.source.json).then(|| {
        let bar = indicatif::ProgressBar::new(roots.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} projects {msg}").expect("a valid template"),
        );
        bar
    });
    let started = Instant::now();
    let results = build_all(&roots, options_for, |done| {
        if let Some(bar) = &progress {
            bar.inc(1);
            bar.set_message(done.root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
        }
    });
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    let elapsed = started.elapsed();
    let warnings = args.source.cache.finish(&cache);
    report::print_cache_warnings(&warnings);
    let failed = results.iter().filter(|r| !r.succeeded()).count();
    let relative = |root: &std::path::Path| root.strip_prefix(&base).unwrap_or(root).display().to_string();
    if args.source.json {
        let projects: Vec<_> = results
            .iter()
            .map(|result| match &result.output {
                Ok(output) => {
                    let mut value = report::build_json(&options_for(&result.root), output, result.elapsed);
                    value["project"] = relative(&result.root).into();
                    value
                }
                Err(error) => {
                    serde_json::json!({ "project": relative(&result.root), "ok": false, "error": error.to_string() })
                }
            })
            .collect();
        report::print_json(&serde_json::json!({
            "ok": failed == 0,
            "projects": projects,
            "failed": failed,
            "elapsedMs": elapsed.as_millis() as u64,
        }));
    } else {
        // One write for the whole report (a hundred projects are a hundred lines), flushed
        // before each failure's diagnostics so they stay under their line on a terminal.
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        for result in &results {
            let name = relative(&result.root);
            let ms = result.elapsed.as_millis();
            let _ = match &result.output {
                Ok(output) => match &output.published {
                    Some(stats) if let Some((summary, by)) = &output.shortcut => match by.up_to_date_by() {
                        Some(_) => writeln!(out, "ok      {name} (up to date, {} files) {ms} ms", summary.files),
                        None => writeln!(
                            out,
                            "ok      {name} ({} files, {} written, restored from the cache) {ms} ms",
                            summary.files,
                            stats.written.len()
                        ),
                    },
                    Some(stats) => writeln!(
                        out,
                        "ok      {name} ({} files, {} written) {ms} ms",
                        output.compiled.files.len(),
                        stats.written.len()
                    ),
                    None => {
                        let _ = writeln!(out, "FAILED  {name}").and_then(|()| out.flush());
                        report::print_diagnostics(&output.compiled);
                        Ok(())
                    }
                },
                Err(error) => writeln!(out, "FAILED  {name}: {error}"),
            };
        }
        let _ = writeln!(
            out,
            "Built {} of {} project(s) in {} ms{}",
            results.len() - failed,
            results.len(),
            elapsed.as_millis(),
            if failed > 0 { format!("; {failed} failed (the others published)") } else { String::new() }
        );
    }
    Ok(failed == 0)
}
