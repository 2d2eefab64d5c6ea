//! `agent-bundle watch` (and `build --watch`), for one project or a workspace: a status
//! line per build (or a JSON line), a summary of a workspace's first builds.

use std::path::Path;
use std::time::Duration;

use super::{BuildArgs, Failure, report};
use crate::cache::Cache;
use crate::watch::{DEFAULT_DEBOUNCE, Projects, WatchBuild};

pub(super) fn run(args: BuildArgs) -> Result<bool, Failure> {
    if args.workspace.is_some() {
        return super::workspace::watch(args);
    }
    let options = args.source.publishing_options(args.out.as_deref(), &args.cache, true)?;
    if let Some(compiled) = crate::build::without_config(&options) {
        // Nothing to watch for: the first build says why, as a session reports it, and no
        // session starts (it would watch every folder below, a home folder's too).
        let failed = WatchBuild {
            options: &options,
            output: Ok(crate::build::BuildOutput::unpublished(compiled)),
            initial: true,
            changed: Vec::new(),
            artifact_in_place: crate::emit::manifest::holds_artifact(&options.out_dir),
            artifact_went: false,
            artifact_moved: false,
            unread_changed: false,
            queries_executed: 0,
            nothing_to_say: false,
            elapsed: Duration::ZERO,
        };
        print_round(&[failed], Duration::ZERO, args.source.json, &|_| None, &[]);
        if !args.source.json {
            errln!("Not watching: {} holds no project", report::display_path(&options.root));
        }
        return Ok(false);
    }
    errln!("Watching {} (Ctrl-C to stop)", report::display_path(&options.root));
    let (cache, pool) = (options.cache.clone(), args.thread_pool(&options.cache)?);
    session(&args, Projects::One(options), &cache, &pool, |_| None, |_| false)
}

/// Runs a watch session over `projects` until Ctrl-C, reporting every build under the name
/// `name` gives its root, if any; a project dropped that `refused` (its refusal said
/// already) gets no line of its own but in JSON.
pub(super) fn session(
    args: &BuildArgs,
    projects: Projects<'_>,
    cache: &Cache,
    pool: &rayon::ThreadPool,
    name: impl Fn(&Path) -> Option<String>,
    refused: impl Fn(&Path) -> bool,
) -> Result<bool, Failure> {
    let report_round = |builds: &[WatchBuild<'_>], dropped: &[std::path::PathBuf], elapsed: Duration| {
        // The round's last write to the cache comes before its report: whoever acts on the
        // report finds the session idle.
        args.cache.keep_bounded(cache);
        print_dropped(dropped, args.source.json, &name, &refused);
        // Said in the round it happened in: a session may run for hours without its remote.
        let warnings = cache.take_warnings();
        print_round(builds, elapsed, args.source.json, &name, &warnings);
    };
    let ended = crate::watch::watch(projects, DEFAULT_DEBOUNCE, pool, report_round);
    // Queued uploads go out (and the statistics are kept) however the session ended.
    report::print_cache_warnings(&args.cache.finish(cache));
    ended.map_err(|e| Failure::Run(e.to_string()))?;
    errln!("Stopped watching.");
    Ok(true)
}

/// A line (or JSON line) for each project a workspace session no longer has.
fn print_dropped(
    dropped: &[std::path::PathBuf],
    json: bool,
    name: &impl Fn(&Path) -> Option<String>,
    refused: &impl Fn(&Path) -> bool,
) {
    for root in dropped {
        let project = name(root).unwrap_or_else(|| root.display().to_string());
        if json {
            outln!("{}", serde_json::json!({ "project": project, "dropped": true }));
        } else if !refused(root) {
            errln!("[watch] {project}: no longer a project (its config is gone or ignored); stopped watching it");
        }
    }
}

/// One round's builds, each as a JSON line or its diagnostics and status line; the first
/// builds of several projects at once are one summary line, but for failures and builds
/// with warnings. The cache's
/// `warnings` of the round go into the first JSON line (`work.cacheWarnings`, as `build
/// --json` has them), or to stderr before the status lines.
fn print_round(
    builds: &[WatchBuild<'_>],
    elapsed: Duration,
    json: bool,
    name: &impl Fn(&Path) -> Option<String>,
    warnings: &[String],
) {
    let first_builds = builds.iter().filter(|build| build.initial).count();
    // (One with warnings gets its own lines, as a failure does: a summary would hide them.)
    let quiet = |build: &WatchBuild<'_>| report::compiled_of(&build.output).is_none_or(|c| c.diagnostics.is_empty());
    let summarized = |build: &WatchBuild<'_>| {
        !json && first_builds > 1 && build.initial && build.published().is_some() && quiet(build)
    };
    let shown: Vec<&WatchBuild<'_>> =
        builds.iter().filter(|build| !summarized(build) && !build.has_nothing_to_say()).collect();
    // (Before the round's status lines, which end it: after them, they read as the next's.)
    if !json || shown.is_empty() {
        report::print_cache_warnings(warnings);
    }
    for (index, build) in shown.iter().enumerate() {
        let project = name(&build.options.root);
        if json {
            let mut value = watch_build_json(build, project);
            value["work"]["cacheWarnings"] = serde_json::json!(if index == 0 { warnings } else { &[] });
            outln!("{value}");
        } else {
            if let Some(compiled) = report::compiled_of(&build.output) {
                let shown = report::shown_root(&build.options.root);
                report::print_diagnostics(compiled, shown.as_deref(), Some(&build.options.out_dir));
            }
            errln!("{}", status_line(build, project.as_deref()));
        }
    }
    if builds.iter().any(summarized) {
        let ok = builds.iter().filter(|build| build.initial && build.published().is_some()).count();
        let published = builds.iter().filter(|b| b.initial && b.published().is_some_and(|s| s.changed()));
        errln!(
            "[watch] first builds of {first_builds} projects: {ok} ok ({} published), {} failed ({} ms)",
            published.count(),
            first_builds - ok,
            elapsed.as_millis()
        );
    }
}

/// One status line per watch build: what changed, what was rebuilt and rewritten, how long;
/// `project` names the project in a session of several.
fn status_line(build: &WatchBuild<'_>, project: Option<&str>) -> String {
    let tag = project.map_or_else(|| "[watch]".to_owned(), |project| format!("[watch] {project}:"));
    let trigger = trigger(build);
    let ms = build.elapsed.as_millis();
    let kept = if build.artifact_in_place { "the last good artifact is kept" } else { "no artifact is published" };
    let output = match &build.output {
        Ok(output) => output,
        // What changed is unknown: the project could not be read.
        Err(error) => return format!("{tag} {error}; {kept} ({ms} ms)"),
    };
    let rebuilt = format!(
        "{} transpiled, {} bundled, {} queries re-run, {ms} ms",
        output.work.transpiled, output.work.bundled, build.queries_executed
    );
    match &output.published {
        Some(stats) if !stats.changed() => format!("{tag} {trigger}: artifact unchanged ({rebuilt})"),
        Some(stats) => format!("{tag} {trigger}: published ({}; {rebuilt})", what_was_published(stats)),
        None => format!("{tag} {trigger}: build failed, {kept} ({ms} ms)"),
    }
}

/// What made the build: the inputs that changed, else what changed that is no input.
fn trigger(build: &WatchBuild<'_>) -> String {
    match build.changed.as_slice() {
        _ if build.initial => "initial build".to_owned(),
        [] if build.artifact_moved => "the artifact's link changed".to_owned(),
        [] if build.artifact_went => "the artifact lost files".to_owned(),
        [] if build.unread_changed => "a payload or src/events changed".to_owned(),
        [] => "no input changed".to_owned(),
        [one] => format!("{one} changed"),
        [first, rest @ ..] => format!("{first} and {} more changed", rest.len()),
    }
}

/// The files a publish wrote (named, up to three) and how many it removed. The manifest
/// changes with every other file: it is named only when it alone changed.
fn what_was_published(stats: &crate::emit::publish::PublishStats) -> String {
    let written: Vec<&str> =
        stats.written.iter().filter(|path| *path != crate::emit::MANIFEST_FILE).map(String::as_str).collect();
    // (Named, the manifest, rewritten by every publish, would only hide what changed;
    // counted, it is one of the files, as `build` counts it.)
    let mut shown = match written.len() {
        0 => vec![],
        1..=3 => vec![written.join(", ")],
        _ => vec![format!("{} files", stats.written.len())],
    };
    if stats.removed_files() > 0 {
        shown.push(format!("{} removed", stats.removed_files()));
    }
    if shown.is_empty() {
        shown.push(crate::emit::MANIFEST_FILE.to_owned());
    }
    shown.join(", ")
}

/// `build --json`'s object for one watch build, plus `changed`, `queriesExecuted` and, in a
/// workspace, `project`.
fn watch_build_json(build: &WatchBuild<'_>, project: Option<String>) -> serde_json::Value {
    let mut value = report::outcome_json(build.options, &build.output, build.elapsed);
    value["changed"] = serde_json::json!(build.changed);
    value["queriesExecuted"] = build.queries_executed.into();
    if let Some(project) = project {
        value["project"] = project.into();
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::BuildOptions;

    #[test]
    fn a_build_that_could_not_read_its_project_says_why_not_what_changed() {
        let options = BuildOptions::new("/p".into(), None, std::sync::Arc::new(Cache::disabled()));
        let mut build = WatchBuild {
            options: &options,
            output: Err(std::io::Error::other("cannot read /p/src/a.ts: Permission denied")),
            initial: false,
            changed: Vec::new(),
            artifact_in_place: true,
            artifact_went: false,
            artifact_moved: false,
            unread_changed: false,
            queries_executed: 0,
            nothing_to_say: false,
            elapsed: Duration::from_millis(3),
        };
        assert_eq!(
            status_line(&build, Some("plugins/p")),
            "[watch] plugins/p: cannot read /p/src/a.ts: Permission denied; the last good artifact is kept (3 ms)"
        );
        build.artifact_in_place = false;
        assert_eq!(
            status_line(&build, None),
            "[watch] cannot read /p/src/a.ts: Permission denied; no artifact is published (3 ms)"
        );

        // What made a build: inputs first, then the artifact's link, its loss, a payload's change.
        assert_eq!(trigger(&build), "no input changed");
        build.unread_changed = true;
        assert_eq!(trigger(&build), "a payload or src/events changed");
        build.artifact_went = true;
        assert_eq!(trigger(&build), "the artifact lost files");
        build.artifact_moved = true;
        assert_eq!(trigger(&build), "the artifact's link changed");
        build.changed = vec!["src/a.ts".into(), "src/b.ts".into()];
        assert_eq!(trigger(&build), "src/a.ts and 1 more changed");
    }

    #[test]
    fn a_publish_names_what_it_wrote_and_the_manifest_only_when_alone() {
        let stats = |written: &[&str], removed: usize| crate::emit::publish::PublishStats {
            written: written.iter().map(|path| path.to_string()).collect(),
            unchanged: 0,
            removed: (0..removed).map(|i| format!("gone-{i}")).collect(),
        };
        let manifest = crate::emit::MANIFEST_FILE;
        assert_eq!(what_was_published(&stats(&[manifest, "hooks/a.mjs"], 0)), "hooks/a.mjs");
        assert_eq!(what_was_published(&stats(&[manifest, "a", "b", "c", "d"], 2)), "5 files, 2 removed");
        assert_eq!(what_was_published(&stats(&[manifest], 1)), "1 removed");
        assert_eq!(what_was_published(&stats(&[manifest], 0)), manifest);
    }
}
