//! Printing build results: diagnostics with code frames, and the `--json` documents.

use std::io::{self, Write};
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use crate::build::{BuildOptions, BuildOutput, Compiled, Unpublished};
use crate::diagnostics::{Diagnostic, Located, Severity};
use crate::emit::manifest::{HookRow, Manifest};

/// The first failure to write to stdout (a full disk, a closed descriptor).
static STDOUT_ERROR: OnceLock<String> = OnceLock::new();

/// Writes to stdout. A failure is remembered, not a panic: the command finishes its work
/// (an artifact is published whole or not at all either way) and then exits 1 with it.
pub(super) fn write_stdout(args: std::fmt::Arguments<'_>) {
    if let Err(error) = io::stdout().lock().write_fmt(args) {
        let _ = STDOUT_ERROR.set(error.to_string());
    }
}

/// The first failure to write to stdout, once what is buffered is flushed.
pub(super) fn stdout_error() -> Option<String> {
    if let Err(error) = io::stdout().lock().flush() {
        let _ = STDOUT_ERROR.set(error.to_string());
    }
    STDOUT_ERROR.get().cloned()
}

/// A progress bar on stderr counting `unit`s, drawn only where a person watches: a terminal,
/// and no `--json` (`json`).
pub(super) fn progress_bar(len: usize, unit: &str, json: bool) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if json || !io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len as u64);
    let template = format!("{{bar:30}} {{pos}}/{{len}} {unit} {{msg}}");
    bar.set_style(indicatif::ProgressStyle::with_template(&template).expect("a valid template"));
    bar
}

pub(super) fn print_json(value: &serde_json::Value) {
    outln!("{}", serde_json::to_string_pretty(value).expect("JSON values serialize"));
}

fn located(compiled: &Compiled) -> Vec<Located<'_>> {
    Located::all(&compiled.diagnostics, |file| compiled.texts.get(file).map(|text| &**text))
}

/// Prints `compiled`'s diagnostics with code frames; their files are shown below `project`
/// (the project's folder, [`shown_root`]) when given. With errors, a summary line follows: of a
/// build whose artifact is `artifact`, or of an inspection (`None`).
pub(super) fn print_diagnostics(compiled: &Compiled, project: Option<&str>, artifact: Option<&Path>) {
    /// Code frames shown; the rest are one line each (`--json` has every field of all).
    /// Each frame renders a whole source line, and thousands of them are read by no one.
    const FRAMES: usize = 100;
    let color = super::color();
    for (index, located) in located(compiled).into_iter().enumerate() {
        let shown = project.zip(located.diagnostic.file.as_ref()).map(|(project, file)| Diagnostic {
            file: Some(format!("{project}/{file}")),
            ..located.diagnostic.clone()
        });
        let diagnostic = shown.as_ref().unwrap_or(located.diagnostic);
        let located = located.showing(diagnostic);
        if index < FRAMES {
            errln!("{}\n", located.render_human(color));
        } else {
            errln!("{}", located.render_short());
        }
    }
    let errors = compiled.diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
    let warnings = compiled.diagnostics.len() - errors;
    if errors == 0 {
        return;
    }
    let counts = format!("{errors} error(s), {warnings} warning(s)");
    match artifact {
        // (A failed build writes nothing: what is there is the last good build's, if any.)
        Some(artifact) if crate::emit::manifest::holds_artifact(artifact) => {
            errln!("Build failed: {counts}; the previous artifact was left as it was.")
        }
        Some(_) => errln!("Build failed: {counts}; no artifact was written."),
        None => errln!("Inspection failed: {counts}."),
    }
}

pub(super) fn diagnostics_json(compiled: &Compiled) -> serde_json::Value {
    serde_json::Value::Array(located(compiled).iter().map(Located::to_json).collect())
}

/// [`build_json`] of a build that may have failed to read or publish its project
/// (`{ ok: false, error }`, and the `diagnostics` of a compile that could not publish).
pub(super) fn outcome_json(
    options: &BuildOptions,
    output: &std::io::Result<BuildOutput>,
    elapsed: Duration,
) -> serde_json::Value {
    match output {
        Ok(output) => build_json(options, output, elapsed),
        Err(error) => {
            let mut value = serde_json::json!({ "ok": false, "error": error.to_string() });
            if let Some(compiled) = Unpublished::compiled(error) {
                value["diagnostics"] = diagnostics_json(compiled);
            }
            value
        }
    }
}

/// What a build compiled, whether it published or not (a build that could not read its
/// project compiled nothing).
pub(super) fn compiled_of(output: &std::io::Result<BuildOutput>) -> Option<&Compiled> {
    match output {
        Ok(output) => Some(&output.compiled),
        Err(error) => Unpublished::compiled(error),
    }
}

pub(super) fn build_json(options: &BuildOptions, output: &BuildOutput, elapsed: Duration) -> serde_json::Value {
    let compiled = &output.compiled;
    // (A build with errors has no artifact, and no hooks, whatever its plans say.)
    let planned = compiled.plans.iter().filter(|_| !compiled.has_errors());
    let mut hooks: Vec<HookRow> =
        planned.flat_map(|plan| plan.hooks.iter().map(|h| HookRow::of(plan.target, h))).collect();
    let plugin = output.plugin().map(|(name, version)| serde_json::json!({"name": name, "version": version}));
    let mut targets =
        compiled.model.as_ref().map(|m| serde_json::json!(m.targets.iter().map(|t| t.as_str()).collect::<Vec<_>>()));
    let mut files: Vec<String> = compiled.files.keys().cloned().collect();
    if let Some((summary, _)) = &output.shortcut {
        // Nothing ran: report what the artifact holds.
        targets = Some(serde_json::json!(summary.targets));
        let manifest = Manifest::read(&options.out_dir).ok();
        files = manifest.as_ref().map(|m| m.paths().into_iter().map(str::to_owned).collect()).unwrap_or_default();
        hooks = manifest.map(|m| m.hooks).unwrap_or_default();
    }
    let published = output.published.as_ref().map(
        |stats| serde_json::json!({ "written": stats.written, "unchanged": stats.unchanged, "removed": stats.removed }),
    );
    let up_to_date_by = output.shortcut.as_ref().and_then(|(_, by)| by.up_to_date_by());
    serde_json::json!({
        "ok": output.published.is_some(),
        "upToDate": up_to_date_by.is_some(),
        "upToDateBy": up_to_date_by,
        "restoredFromCache": output.shortcut.as_ref().is_some_and(|(_, by)| *by == crate::build::Shortcut::Restored),
        "plugin": plugin,
        "targets": targets,
        "out": options.out_dir.display().to_string(),
        "files": files,
        "published": published,
        "hooks": hooks,
        "diagnostics": diagnostics_json(compiled),
        "work": {
            "transpiled": output.work.transpiled,
            "bundled": output.work.bundled,
            "cacheHits": output.work.cache.action_hits,
            "cacheMisses": output.work.cache.action_misses,
            "objectMisses": output.work.cache.object_misses,
            "remoteHits": output.work.cache.remote_hits,
        },
        "elapsedMs": elapsed.as_millis() as u64,
    })
}

/// Cache warnings (an unreachable remote, …) are warnings of the build, never failures.
pub(super) fn print_cache_warnings(warnings: &[String]) {
    for warning in warnings {
        errln!("warning: {warning}");
    }
}

/// A path relative to the working directory when it is below it (`./` for that directory).
pub(super) fn display_path(path: &Path) -> String {
    match below_cwd(path) {
        Some(relative) if relative.is_empty() => "./".to_owned(),
        Some(relative) => format!("{relative}/"),
        None => path.display().to_string(),
    }
}

/// How diagnostics name a project's folder before their files: relative to the working
/// directory, so that `file:line:col` opens from where the command ran (`None`: it is
/// that directory).
pub(super) fn shown_root(root: &Path) -> Option<String> {
    match below_cwd(root) {
        Some(relative) if relative.is_empty() => None,
        Some(relative) => Some(relative),
        None => Some(root.display().to_string()),
    }
}

/// `path` relative to the working directory, if it is below it (empty: that directory).
fn below_cwd(path: &Path) -> Option<String> {
    let cwd = std::env::current_dir().ok()?;
    path.strip_prefix(cwd).ok().map(|relative| relative.display().to_string())
}
