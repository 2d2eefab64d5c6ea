//! `agent-bundle build --workspace`: per-project results, a progress bar, a summary; and
//! `agent-bundle watch --workspace`.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::{BuildArgs, Failure, report};
use crate::build::{BuildOptions, BuildOutput};
use crate::cache::Cache;
use crate::model::Target;
use crate::threads::Threads;
use crate::watch::{Found, Projects};
use crate::workspace::{Discovery, ProjectBuild, build_all, discover, filter, project_name, search};

/// The projects `--workspace` and `--filter` select, over one cache: a module shared by
/// two plugins is compiled once.
struct Selection {
    base: PathBuf,
    filters: Vec<String>,
    targets: Option<Vec<Target>>,
    cache: Arc<Cache>,
}

impl Selection {
    fn new(args: &BuildArgs) -> Result<Selection, Failure> {
        let base = base(args.workspace.as_deref())?;
        let targets = (!args.source.targets.is_empty()).then(|| args.source.targets.clone());
        // (Checked before the cache is opened, which makes its folder: in a project's
        // `artifact/`, which every build of it replaces, as a build of it alone refuses.)
        if let Some(dir) = args.cache.dir().map(|dir| std::path::absolute(&dir).unwrap_or(dir))
            && let Some(artifact) = dir.ancestors().find(|folder| is_project_artifact(folder))
        {
            let message = format!(
                "the cache folder {} is inside the artifact folder {}, which every build replaces",
                dir.display(),
                artifact.display()
            );
            return Err(Failure::Usage(message));
        }
        let cache = args.cache.open()?;
        Ok(Selection { base, filters: args.filter.clone(), targets, cache })
    }

    /// The options of the selected `roots`, one per project, sorted; an error when none is.
    fn projects(&self, roots: Vec<PathBuf>) -> Result<Vec<BuildOptions>, Failure> {
        /// Names listed in the error; the rest are counted.
        const LISTED: usize = 10;
        let names: Vec<String> = roots.iter().map(|root| crate::workspace::project_name(&self.base, root)).collect();
        let options = self.options_for(roots);
        if options.is_empty() {
            let filters: Vec<String> = self.filters.iter().map(|f| format!("--filter {f}")).collect();
            let below = self.base.display();
            let mut listed: Vec<&str> = names.iter().take(LISTED).map(String::as_str).collect();
            let more = format!("{} more", names.len().saturating_sub(LISTED));
            if names.len() > LISTED {
                listed.push(&more);
            }
            let message = format!(
                "none of the {} project(s) below {below} matches {} (a filter is a part of a project's name: {})",
                names.len(),
                filters.join(" or "),
                listed.join(", ")
            );
            return Err(Failure::Usage(message));
        }
        Ok(options)
    }

    /// The options of the `roots` that `--filter` keeps. Each project counts its own cache
    /// use (for its report) besides the run's totals.
    fn options_for(&self, roots: Vec<PathBuf>) -> Vec<BuildOptions> {
        let roots = filter(roots, &self.base, &self.filters);
        let options = |root: PathBuf| BuildOptions {
            targets: self.targets.clone(),
            ..BuildOptions::new(root, None, Arc::new(self.cache.scoped()))
        };
        roots.into_iter().map(options).collect()
    }

    fn name(&self, root: &Path) -> String {
        project_name(&self.base, root)
    }

    /// Why each of `projects` may not publish, if it may not: as a build of it alone says
    /// (its artifact folder no place for one), or since, through links, its artifact folder
    /// is another's too, or inside another's.
    fn refusals(&self, projects: &[BuildOptions], found: &[PathBuf]) -> Vec<Option<String>> {
        // Every project found, the selected first: one `--filter` leaves out still publishes
        // where its artifact folder is when built.
        let selected: std::collections::HashSet<&Path> =
            projects.iter().map(|options| options.root.as_path()).collect();
        let left_out = found.iter().filter(|root| !selected.contains(root.as_path()));
        let all: Vec<(&Path, PathBuf)> = projects
            .iter()
            .map(|options| (options.root.as_path(), options.out_dir.clone()))
            .chain(left_out.map(|root| (root.as_path(), artifact_folder(root))))
            .collect();
        // (The folders above the projects are mostly theirs in common: each is read once.)
        let mut artifacts: HashMap<PathBuf, bool> = HashMap::new();
        let mut holds_artifact = |folder: &Path| {
            *artifacts.entry(folder.to_path_buf()).or_insert_with(|| crate::emit::manifest::holds_artifact(folder))
        };
        let mut refused: Vec<Option<String>> = all
            .iter()
            .map(|(root, out)| {
                let problem = super::out_dir_problem(root, out, &mut holds_artifact)?;
                Some(format!("the artifact folder {}: {problem}", out.display()))
            })
            .collect();
        // Among those that would publish, each one's clashes: those whose folder is its own
        // (each would replace the other's artifact: both refused), or holds it (it would
        // publish inside another artifact, as a build of it alone refuses once that one is
        // there: it alone refused), found by the ancestors' paths (not project by project: a
        // workspace may hold a thousand).
        let publishing: Vec<usize> = (0..all.len()).filter(|&index| refused[index].is_none()).collect();
        let mut by_folder: HashMap<&Path, Vec<usize>> = HashMap::new();
        for &index in &publishing {
            by_folder.entry(&all[index].1).or_default().push(index);
        }
        let name = |other: usize| format!("{}'s ({})", self.name(all[other].0), all[other].1.display());
        for index in publishing.into_iter().filter(|&index| index < projects.len()) {
            let out = &all[index].1;
            let same: Vec<String> =
                by_folder[out.as_path()].iter().filter(|&&other| other != index).map(|&other| name(other)).collect();
            // (A folder of files the other cannot publish to holds no artifact of its: that
            // one fails at its publish, as a build of it alone does.)
            let holding: Vec<String> = out
                .ancestors()
                .skip(1)
                .filter(|folder| by_folder.contains_key(folder) && super::occupied(folder).is_none())
                .flat_map(|folder| by_folder.get(folder).into_iter().flatten())
                .map(|&other| name(other))
                .collect();
            refused[index] = if !same.is_empty() {
                Some(format!(
                    "its artifact folder {} is {} too: each build would replace the other's artifact; give each \
                     project its own",
                    out.display(),
                    crate::diagnostics::and_list(&same)
                ))
            } else if !holding.is_empty() {
                Some(format!(
                    "its artifact folder {} is inside the artifact folder of {}, which each build of that one \
                     replaces whole",
                    out.display(),
                    crate::diagnostics::and_list(&holding)
                ))
            } else {
                None
            };
        }
        refused.truncate(projects.len());
        refused
    }
}

/// Where the project at `root` publishes, as a build of it resolves it.
fn artifact_folder(root: &Path) -> PathBuf {
    use crate::emit::publish::{artifact_dir, resolved_but_last};
    artifact_dir(&resolved_but_last(&root.join(crate::build::DEFAULT_ARTIFACT)))
}

/// Whether `folder` is a project's own artifact folder: `artifact/` beside a config.
fn is_project_artifact(folder: &Path) -> bool {
    let project = folder.parent().filter(|_| folder.file_name() == Some(crate::build::DEFAULT_ARTIFACT.as_ref()));
    project.is_some_and(crate::config::holds_config_file)
}

/// The workspace folder `--workspace` names (`.` when it names none): absolute, and a linked
/// one as itself, as for a project root.
pub(super) fn base(dir: Option<&Path>) -> Result<PathBuf, Failure> {
    let cwd = std::env::current_dir().map_err(|e| Failure::Run(e.to_string()))?;
    let base = cwd.join(dir.unwrap_or(Path::new(".")));
    super::project_folder("--workspace", &base, &base)?;
    Ok(base.canonicalize().unwrap_or(base))
}

/// The projects below `base` (nothing to do when there is none: a usage error, as a
/// `--filter` keeping none is), and the warnings of the search, each said on stderr.
pub(super) fn projects_below(base: &Path) -> Result<(Vec<PathBuf>, Vec<String>), Failure> {
    let found = discover(base);
    let warnings = found.unreadable;
    warnings.iter().for_each(|warning| errln!("warning: {warning}"));
    if found.roots.is_empty() {
        let left_out = || {
            let config = crate::workspace::ignored_project(base)?;
            let shown = config.strip_prefix(base).unwrap_or(&config).display().to_string();
            Some(format!(" (the ignore rules leave out {shown}: an ignored project is not built)"))
        };
        let why = crate::workspace::ignored_workspace(base)
            .map(|why| format!(": {why}, so nothing below it is searched"))
            .or_else(left_out);
        Err(Failure::Usage(format!(
            "no agent-bundle projects found below {}{}",
            base.display(),
            why.unwrap_or_default()
        )))
    } else {
        Ok((found.roots, warnings))
    }
}

/// `watch --workspace`: every selected project in one session, including those that appear
/// while it runs.
pub(super) fn watch(args: BuildArgs) -> Result<bool, Failure> {
    let selection = Selection::new(&args)?;
    // Each unreadable directory is reported once a session, not at every search.
    let reported = RefCell::new(BTreeSet::new());
    let roots_of = |found: Discovery| {
        for why in found.unreadable {
            if reported.borrow_mut().insert(why.clone()) {
                errln!("warning: {why}");
            }
        }
        found.roots
    };
    // What a build would refuse to publish is not watched (as `build --workspace` fails it),
    // said each time it comes to be refused.
    let refused_roots: RefCell<BTreeSet<PathBuf>> = RefCell::new(BTreeSet::new());
    let publishable = |projects: Vec<BuildOptions>, found: &[PathBuf]| {
        let refusals = selection.refusals(&projects, found);
        let mut refused = BTreeSet::new();
        let mut kept = Vec::new();
        for (options, why) in projects.into_iter().zip(refusals) {
            match why {
                None => kept.push(options),
                Some(why) => {
                    if !refused_roots.borrow().contains(&options.root) {
                        errln!("[watch] {}: not watched: {why}", selection.name(&options.root));
                    }
                    refused.insert(options.root);
                }
            }
        }
        refused_roots.replace(refused);
        kept
    };
    let (found, dirs) = search(&selection.base);
    let roots = roots_of(found);
    // The session's first search is this one (the watches it adds then tell whether the
    // tree changed meanwhile).
    let selected = selection.options_for(roots.clone());
    let shown = report::display_path(&selection.base);
    if selected.is_empty() && !roots.is_empty() {
        // Projects there, none of them selected: a mistyped `--filter`, as for a build.
        return selection.projects(roots).map(|_| false);
    }
    let found_some = !selected.is_empty();
    let projects = publishable(selected, &roots);
    if projects.is_empty() {
        // Unlike a build, a session waits: the first project may be on its way.
        // (Where an ignore rule leaves the workspace out, none can appear until it changes.)
        let why = crate::workspace::ignored_workspace(&selection.base).map(|why| format!(" ({why})"));
        let why = why.unwrap_or_default();
        let which = if found_some { " that can publish" } else { "" };
        errln!("No agent-bundle project{which} below {shown} yet{why}; watching for one to appear (Ctrl-C to stop)");
    } else {
        errln!("Watching the projects below {shown} (Ctrl-C to stop)");
    }
    let first = Cell::new(Some(Found { projects, roots, dirs }));
    let find = || {
        first.take().unwrap_or_else(|| {
            let (found, dirs) = search(&selection.base);
            let roots = roots_of(found);
            Found { projects: publishable(selection.options_for(roots.clone()), &roots), roots, dirs }
        })
    };
    let name = |root: &Path| Some(selection.name(root));
    let pool = args.thread_pool(&selection.cache)?;
    let refused = |root: &Path| refused_roots.borrow().contains(root);
    super::watch::session(&args, Projects::Found(Box::new(find)), &selection.cache, &pool, name, refused)
}

pub(super) fn run(args: BuildArgs) -> Result<bool, Failure> {
    let selection = Selection::new(&args)?;
    let (roots, mut warnings) = projects_below(&selection.base)?;
    let projects = selection.projects(roots.clone())?;
    let progress = report::progress_bar(projects.len(), "projects", args.source.json);
    let started = Instant::now();
    let threads = Threads::new(&selection.cache, args.jobs.map(usize::from));
    let refused = selection.refusals(&projects, &roots);
    let results = build_all(&projects, &refused, threads, |done| {
        progress.inc(1);
        progress.set_message(selection.name(&done.options.root));
    })
    .map_err(|e| Failure::Run(e.to_string()))?;
    progress.finish_and_clear();
    for warning in same_plugin_names(&results, |root| selection.name(root)) {
        errln!("warning: {warning}");
        warnings.push(warning);
    }
    // (Measured once the uploads are done, which `finish` waits for.)
    let cache_warnings = args.cache.finish(&selection.cache);
    let elapsed = started.elapsed();
    report::print_cache_warnings(&cache_warnings);
    warnings.extend(cache_warnings);
    let failed = results.iter().filter(|r| !r.succeeded()).count();
    let interrupted = results.iter().filter(|r| r.interrupted()).count();
    if args.source.json {
        let projects: Vec<_> = results
            .iter()
            .map(|result| {
                let mut value = report::outcome_json(result.options, &result.output, result.elapsed);
                value["project"] = selection.name(&result.options.root).into();
                value
            })
            .collect();
        report::print_json(&serde_json::json!({
            "ok": failed == 0,
            "projects": projects,
            // (As the summary says them: those Ctrl-C stopped apart.)
            "failed": failed - interrupted,
            "interrupted": interrupted,
            "warnings": warnings,
            "elapsedMs": elapsed.as_millis() as u64,
        }));
    } else {
        // One write for the whole report (a hundred projects are a hundred lines), made
        // before each project's diagnostics (a failure's errors, a success's warnings) so
        // they stay under their line on a terminal.
        let mut out = String::new();
        // (Those Ctrl-C stopped are counted in the summary, not a line each.)
        for result in results.iter().filter(|result| !result.interrupted()) {
            let name = selection.name(&result.options.root);
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
                    None => writeln!(out, "FAILED  {name}"),
                },
                Err(error) => writeln!(out, "FAILED  {name}: {error}"),
            };
            if let Some(compiled) = report::compiled_of(&result.output)
                && !compiled.diagnostics.is_empty()
            {
                out!("{}", std::mem::take(&mut out));
                let shown = report::shown_root(&result.options.root);
                report::print_diagnostics(compiled, shown.as_deref(), Some(&result.options.out_dir));
            }
        }
        let _ = writeln!(
            out,
            "Built {} of {} project(s) in {} ms{}",
            results.len() - failed,
            results.len(),
            elapsed.as_millis(),
            match (failed - interrupted, interrupted) {
                (0, 0) => String::new(),
                (0, stopped) => format!("; {stopped} not built (interrupted)"),
                (failed, 0) if failed == results.len() => format!("; {failed} failed"),
                (failed, 0) => format!("; {failed} failed (the others published)"),
                (failed, stopped) => format!("; {failed} failed, {stopped} not built (interrupted)"),
            }
        );
        out!("{out}");
    }
    Ok(failed == 0)
}

/// A warning for each plugin name more than one project builds: a host, or a marketplace,
/// holds one plugin of a name, so installing one would replace the other.
fn same_plugin_names(results: &[ProjectBuild<'_>], name: impl Fn(&Path) -> String) -> Vec<String> {
    let mut by_plugin: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for result in results {
        if let Some((plugin, _)) = result.output.as_ref().ok().and_then(BuildOutput::plugin) {
            by_plugin.entry(plugin).or_default().push(name(&result.options.root));
        }
    }
    let shared = by_plugin.into_iter().filter(|(_, projects)| projects.len() > 1);
    shared
        .map(|(plugin, projects)| {
            let projects = projects.join(", ");
            format!("projects {projects} are all plugin `{plugin}`: installing one would replace another")
        })
        .collect()
}
