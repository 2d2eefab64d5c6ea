//! The command line: parse arguments, call the library, print, map to an exit code.
//!
//! Architecture invariant: this is the only module that prints or decides exit codes (but
//! for a panic's, 101, which `main` gives).
//! Exit codes: 0 success, 1 the work failed (diagnostics, a failing hook), 2 bad usage,
//! 130 stopped by a signal (Ctrl-C, SIGTERM, SIGHUP), but for `watch`, which ends so (0).

/// `print!` and `println!` without their panic when stdout fails (see
/// [`report::write_stdout`]).
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::report::write_stdout(format_args!($($arg)*)) };
}
macro_rules! outln {
    ($($arg:tt)*) => { $crate::cli::report::write_stdout(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprint!` and `eprintln!` without their panic when stderr fails (a terminal closed under
/// a watch session): what cannot be said is not said, and the command ends as it would.
macro_rules! err {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod cache;
mod inspect;
mod report;
mod types;
mod watch;
mod workspace;

use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::artifact;
use crate::build::{self, BuildOptions, DEFAULT_ARTIFACT};
use crate::emit::manifest::{HookRow, Manifest};
use crate::model::Target;

#[derive(Parser, Debug)]
#[command(
    name = "agent-bundle",
    version,
    about = "Compile one TypeScript plugin into native Claude Code, Codex, Cursor and Agent Plugins artifacts."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compile the project into one artifact folder every selected host loads natively.
    Build(BuildArgs),
    /// Build, then rebuild on every change until Ctrl-C (or SIGTERM, SIGHUP).
    // (`build`'s `--watch` is this command: not listed here.)
    #[command(mut_arg("watch", |arg| arg.hide(true)))]
    Watch(BuildArgs),
    /// Show how each hook lands on each host, without writing anything.
    Inspect(InspectArgs),
    /// List or run the hooks of a built artifact.
    #[command(subcommand)]
    Hooks(HooksCommand),
    /// Check a built artifact: hashes, host documents, hook commands, wrappers, and the host's own validator.
    Validate(ValidateArgs),
    /// Inspect and maintain the local build cache.
    #[command(subcommand)]
    Cache(cache::CacheCommand),
    /// Write the TypeScript declarations of agent-bundle's imports into the project's
    /// .agent-bundle/ (and a tsconfig.json extending them, when it has none), for editors and tsc.
    Types(TypesArgs),
    /// Print the event and hook matrix (Markdown), rendered from the host tables.
    Matrix {
        /// Print it as one JSON object: per config event, route family and tool selector, each host's
        /// native event, outcome channels and fields, or matcher
        #[arg(long)]
        json: bool,
    },
    /// Print the diagnostics reference (Markdown).
    Diagnostics {
        /// Print every code as `{ code, name, summary }` in one JSON object, for editors and CI
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Debug)]
struct SourceArgs {
    /// Project root (the directory holding agent-bundle.config.ts).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Config file, relative to the root (or, found only there, to the current directory;
    /// default: agent-bundle.config.{ts,mts,js,mjs}).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Target to build (repeatable); replaces the config's `targets`.
    #[arg(long = "target", value_parser = parse_target)]
    targets: Vec<Target>,
    /// Print machine-readable JSON on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct BuildArgs {
    #[command(flatten)]
    source: SourceArgs,
    #[command(flatten)]
    cache: cache::CacheArgs,
    /// Artifact directory (default: <root>/artifact). Publishing replaces it whole, so it may
    /// not be the project, a folder holding it, its .agent-bundle or a folder of other files.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Keep running: rebuild and republish on every change (same as `agent-bundle watch`).
    #[arg(long)]
    watch: bool,
    /// Build every plugin project (directory with an agent-bundle.config.*) below DIR, in
    /// parallel; `.gitignore` and `.ignore` are honoured, and `node_modules`, `.venv`,
    /// `target`, `.git`, `.jj`, caches such as `__pycache__` and built artifacts are skipped.
    /// Each project publishes to its own `artifact/`.
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = ".", conflicts_with_all = ["out", "config", "root"])]
    workspace: Option<PathBuf>,
    /// With --workspace: only projects whose path (relative to DIR; `.` for DIR itself)
    /// contains this text, as the report names them, a leading `./` and trailing `/`s
    /// aside (repeatable).
    // (`requires` alone lets it pass beside `--root`, which `--workspace` conflicts with.)
    #[arg(long, requires = "workspace", conflicts_with_all = ["out", "config", "root"])]
    filter: Vec<String>,
    /// Threads to build on (default: one per core; with a remote cache 16 per core, 16 to
    /// 64, since its requests wait on the network).
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    jobs: Option<u16>,
}

#[derive(Args, Debug)]
struct InspectArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Show hooks: canonical event, native event and matcher per host, wrapper path (the
    /// one view, shown without it too).
    #[arg(long)]
    hooks: bool,
}

#[derive(Args, Debug)]
struct TypesArgs {
    /// Project root (the directory holding agent-bundle.config.ts).
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Write them into every plugin project below DIR (default: the current directory), as
    /// `build --workspace` finds them.
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = ".", conflicts_with = "root")]
    workspace: Option<PathBuf>,
    /// Print what was written as JSON on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct ValidateArgs {
    /// The artifact folder `agent-bundle build` wrote.
    #[arg(long, default_value = DEFAULT_ARTIFACT)]
    artifact: PathBuf,
    /// Also run `claude plugin validate` (default: on when `claude` is on PATH or
    /// AGENT_BUNDLE_CLAUDE names the binary).
    #[arg(long, overrides_with = "no_host_validation")]
    host_validation: bool,
    /// Never run `claude plugin validate`, even when it is on PATH.
    #[arg(long)]
    no_host_validation: bool,
    /// Print the outcome and every diagnostic as JSON on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand, Debug)]
enum HooksCommand {
    /// List the simulatable hooks of an artifact.
    List {
        /// The artifact folder `agent-bundle build` wrote.
        #[arg(long, default_value = DEFAULT_ARTIFACT)]
        artifact: PathBuf,
        /// Only this host's hooks (claude, codex, cursor; portable takes none).
        #[arg(long, value_parser = parse_target)]
        target: Option<Target>,
        /// Print the manifest's hook rows as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run a hook's real emitted wrapper on a canonical input (or the host's own), as its host would.
    #[command(group = clap::ArgGroup::new("input_source").required(true))]
    Simulate {
        /// The artifact folder `agent-bundle build` wrote.
        #[arg(long, default_value = DEFAULT_ARTIFACT)]
        artifact: PathBuf,
        /// The host whose wrapper runs (claude, codex, cursor).
        #[arg(long, value_parser = parse_target)]
        target: Target,
        /// The hook name that `hooks list` prints (or its id, which `hooks list --json` gives),
        /// that name without the hash that ends it (`before-tool-guard`), or a start of one name.
        #[arg(long)]
        hook: String,
        /// The input as a JSON object: canonical, with the event's fields on that host (docs/matrix.md; e.g. a sessionStart on claude or codex '{"sessionId":"s","cwd":"/tmp","transcriptPath":"/tmp/t","source":"startup"}'), or the host's own with --native.
        #[arg(long, group = "input_source")]
        input: Option<String>,
        /// File holding the input (`-`: standard input).
        #[arg(long, group = "input_source")]
        input_file: Option<PathBuf>,
        /// The input is the host's own hook input (its stdin, as captured from it), passed to
        /// the wrapper unchanged, not canonical.
        #[arg(long)]
        native: bool,
        /// Render a shared route in its standalone fallback instead of in the artifact's
        /// shared runtime (which the simulator otherwise starts for the run).
        #[arg(long)]
        standalone: bool,
        /// Print the native input, native output, outcome and stderr as one JSON object.
        #[arg(long)]
        json: bool,
    },
}

/// `command` reading no variable that is set but empty: such a variable counts as unset,
/// as the `AWS_*` ones do (a CI job whose secret a pull request from a fork does not get
/// has it set to ""). With `no_cache`, it reads none of the cache's either: `--no-cache`
/// overrides them, and a bad value set for a whole job must not refuse a build without one.
fn without_ignored_env(command: clap::Command, no_cache: bool) -> clap::Command {
    let ignored = |name: &std::ffi::OsStr| {
        let of_cache = name.to_str().is_some_and(|name| {
            ["AGENT_BUNDLE_CACHE_", "AGENT_BUNDLE_REMOTE_CACHE"].iter().any(|prefix| name.starts_with(prefix))
        });
        (no_cache && of_cache) || std::env::var_os(name).is_some_and(|value| value.is_empty())
    };
    command
        .mut_args(|arg| if arg.get_env().is_some_and(ignored) { arg.env(None) } else { arg })
        .mut_subcommands(|command| without_ignored_env(command, no_cache))
}

fn parse_target(name: &str) -> Result<Target, String> {
    let help = format!("targets are {}", Target::names());
    let known = Target::ALL.map(Target::as_str);
    Target::parse(name)
        .ok_or_else(|| format!("unknown target `{name}`: {}", crate::diagnostics::suggesting(name, known, &help)))
}

/// Runs the CLI with the process arguments.
pub fn run() -> ExitCode {
    let no_cache = std::env::args_os().any(|arg| arg == "--no-cache");
    let parsed = without_ignored_env(Cli::command(), no_cache)
        .try_get_matches()
        .and_then(|matches| Cli::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(error) => {
            let printed = error.print();
            if !error.use_stderr() {
                // --help, --version
                return printed.map_or_else(|error| unwritable_stdout(&error), |()| ExitCode::SUCCESS);
            }
            let mut message = usage_error_message(&error);
            if let Some(variable) = invalid_value_from_environment(&error) {
                let note = format!("that value is the environment variable {variable}'s, not the command line's");
                errln!("note: {note}");
                message = format!("{message} ({note})");
            }
            if asked_for_json(std::env::args_os()) {
                report::print_json(&serde_json::json!({ "ok": false, "error": message }));
            }
            return ExitCode::from(2);
        }
    };
    let json = cli.command.wants_json();
    // What a signal would otherwise cut short: a publish (staging beside the artifact).
    // `validate` and `hooks simulate` install the handler once they run node; watch has its
    // own; every other command is stopped by a signal at once.
    let building = matches!(&cli.command, Command::Build(args) if !args.watch);
    if building {
        crate::interrupt::install();
    }
    let result = match cli.command {
        Command::Build(args) if args.watch => watch::run(args),
        Command::Build(args) if args.workspace.is_some() => workspace::run(args),
        Command::Build(args) => build_command(args),
        Command::Watch(args) => watch::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Validate(args) => validate_command(args),
        Command::Cache(command) => cache::run(command),
        Command::Hooks(HooksCommand::List { artifact, target, json }) => {
            artifact_dir(&artifact).and_then(|()| list_command(&artifact, target, json))
        }
        Command::Hooks(HooksCommand::Simulate {
            artifact,
            target,
            hook,
            input,
            input_file,
            native,
            standalone,
            json,
        }) => {
            let mode = if standalone { artifact::SharedMode::Standalone } else { artifact::SharedMode::Runtime };
            let form = if native { artifact::InputForm::Native } else { artifact::InputForm::Canonical };
            artifact_dir(&artifact)
                .and_then(|()| input_text(input, input_file))
                .and_then(|text| simulate_command(&artifact, target, &hook, &text, mode, form, json))
        }
        Command::Types(args) => types::run(&args),
        Command::Matrix { json: false } => {
            out!("{}", crate::hosts::matrix::render_markdown());
            Ok(true)
        }
        Command::Matrix { json: true } => {
            report::print_json(&crate::hosts::matrix::render_json());
            Ok(true)
        }
        Command::Diagnostics { json: false } => {
            out!("{}", crate::diagnostics::reference_markdown());
            Ok(true)
        }
        Command::Diagnostics { json: true } => {
            report::print_json(&crate::diagnostics::reference_json());
            Ok(true)
        }
    };
    if crate::interrupt::cut_short() {
        let left = if building { ": what was published is whole, the rest is left as it was" } else { "" };
        errln!("interrupted{left}");
        if json && result.is_err() {
            // A command that stopped before reporting (one that reported, a workspace build
            // say, said what it published); `--json` still gets a document.
            report::print_json(&serde_json::json!({ "ok": false, "error": "interrupted" }));
        }
        return ExitCode::from(130);
    }
    if let Some(error) = report::stdout_error() {
        return unwritable_stdout(&error);
    }
    let (message, code) = match result {
        Ok(true) => return ExitCode::SUCCESS,
        Ok(false) => return ExitCode::from(1),
        Err(Failure::Usage(message)) => (message, 2),
        Err(Failure::Run(message)) => (message, 1),
    };
    errln!("error: {message}");
    if json {
        // A reader of `--json` gets a document however the command ended.
        report::print_json(&serde_json::json!({ "ok": false, "error": message }));
    }
    ExitCode::from(code)
}

/// What a command whose output could not be written ends with: that is an error.
fn unwritable_stdout(error: &dyn std::fmt::Display) -> ExitCode {
    errln!("error: cannot write to standard output: {error}");
    ExitCode::from(1)
}

/// Whether a command line that did not parse asked for `--json` (before any `--`).
fn asked_for_json(args: impl Iterator<Item = std::ffi::OsString>) -> bool {
    args.skip(1).take_while(|arg| arg != "--").any(|arg| arg == "--json")
}

/// The environment variable an invalid value came from, when its option was not given:
/// clap names the option either way, which the user never typed.
fn invalid_value_from_environment(error: &clap::Error) -> Option<String> {
    let clap::error::ContextValue::String(invalid) = error.get(clap::error::ContextKind::InvalidArg)? else {
        return None;
    };
    let option = invalid.split([' ', '=']).next()?;
    let long = option.strip_prefix("--")?;
    fn variable(command: &clap::Command, long: &str) -> Option<std::ffi::OsString> {
        let own = command.get_arguments().find(|arg| arg.get_long() == Some(long)).and_then(|arg| arg.get_env());
        own.map(ToOwned::to_owned).or_else(|| command.get_subcommands().find_map(|sub| variable(sub, long)))
    }
    let variable = variable(&Cli::command(), long).filter(|variable| std::env::var_os(variable).is_some())?;
    // (Arguments need not be UTF-8.)
    let typed = |arg: std::ffi::OsString| {
        let arg = arg.as_encoded_bytes();
        arg == option.as_bytes() || arg.strip_prefix(option.as_bytes()).is_some_and(|rest| rest.starts_with(b"="))
    };
    let given = std::env::args_os().any(typed);
    (!given).then(|| variable.to_string_lossy().into_owned())
}

/// A parse error's message without clap's `error: ` and its usage lines.
fn usage_error_message(error: &clap::Error) -> String {
    // The message runs to the first blank line (a missing argument is named on the next).
    let rendered = error.render().to_string();
    let message: Vec<&str> = rendered.lines().take_while(|line| !line.trim().is_empty()).map(str::trim).collect();
    let message = message.join(" ");
    message.strip_prefix("error: ").unwrap_or(&message).to_owned()
}

impl Command {
    /// Whether the command was asked for `--json`.
    fn wants_json(&self) -> bool {
        match self {
            Command::Build(args) | Command::Watch(args) => args.source.json,
            Command::Inspect(args) => args.source.json,
            Command::Validate(args) => args.json,
            Command::Types(args) => args.json,
            Command::Cache(command) => command.wants_json(),
            Command::Hooks(HooksCommand::List { json, .. } | HooksCommand::Simulate { json, .. }) => *json,
            Command::Diagnostics { json } | Command::Matrix { json } => *json,
        }
    }
}

/// Why `out` cannot hold the artifact of the project at `root`, if it cannot. Publishing
/// replaces the folder whole, and a build never reads it as input: the project itself, its
/// state folder or another artifact would be lost or would vanish from the build's view.
/// `holds_artifact` tells a folder holding one (a workspace asks once per folder).
fn out_dir_problem(
    root: &Path,
    resolved: &Path,
    holds_artifact: &mut dyn FnMut(&Path) -> bool,
) -> Option<&'static str> {
    if root.starts_with(resolved) {
        return Some("it is the project, or a folder holding it, which a publish would replace whole");
    }
    if resolved.starts_with(root.join(crate::stamp::STATE_DIR)) {
        return Some("it is inside the project's state folder");
    }
    // (A manifest of no build's there, a project's stray `{}`, makes no artifact of it.)
    if crate::emit::publish::inside_artifact(resolved, holds_artifact) {
        return Some(crate::emit::publish::INSIDE_ARTIFACT);
    }
    None
}

/// Why `resolved` holds what a publish would lose: a file, or a folder of files but no
/// artifact.
fn occupied(resolved: &Path) -> Option<&'static str> {
    use crate::emit::{manifest::Mark, publish};
    if resolved.exists() && !resolved.is_dir() {
        return Some(publish::NO_FOLDER);
    }
    let holds_files = || std::fs::read_dir(resolved).is_ok_and(|mut entries| entries.next().is_some());
    match crate::emit::manifest::mark(resolved) {
        Mark::Manifest => None,
        Mark::Foreign => Some(publish::FOREIGN_MANIFEST),
        Mark::None => holds_files().then_some(publish::USER_FILES),
    }
}

/// Why a command stopped before doing its work.
enum Failure {
    /// The invocation is wrong (exit 2).
    Usage(String),
    /// The work could not be done (exit 1).
    Run(String),
}

impl SourceArgs {
    /// [`Self::build_options`] of a command that publishes to `out` (or `<root>/artifact`):
    /// a folder it cannot publish to is refused before anything runs.
    fn publishing_options(
        &self,
        out: Option<&Path>,
        cache: &cache::CacheArgs,
        watching: bool,
    ) -> Result<BuildOptions, Failure> {
        // (Checked before the cache is opened, which makes its folder.)
        let options = self.build_options(out, None)?;
        // A watch session says so of a file or folder of the user's at the usual place on
        // each build, and goes on (they may move it); one named with `--out` is a mistake.
        let occupied = || if watching && out.is_none() { None } else { occupied(&options.out_dir) };
        let holds_artifact = &mut crate::emit::manifest::holds_artifact;
        if let Some(problem) = out_dir_problem(&options.root, &options.out_dir, holds_artifact).or_else(occupied) {
            let message = format!("the artifact folder {}: {problem}", options.out_dir.display());
            return Err(if out.is_some() { Failure::Usage(message) } else { Failure::Run(message) });
        }
        // Every publish replaces the artifact folder whole, a cache in it with it.
        if let Some(dir) = cache.dir().map(|dir| std::path::absolute(&dir).unwrap_or(dir))
            && dir.starts_with(&options.out_dir)
        {
            let message =
                format!("the cache folder {} is inside the artifact folder, which every build replaces", dir.display());
            return Err(Failure::Usage(message));
        }
        Ok(BuildOptions { cache: cache.open()?, ..options })
    }

    /// The options of a build of this source; without `cache` (a command that only reads
    /// the project), none is opened.
    fn build_options(&self, out: Option<&Path>, cache: Option<&cache::CacheArgs>) -> Result<BuildOptions, Failure> {
        let cwd =
            std::env::current_dir().map_err(|e| Failure::Run(format!("cannot read the current directory: {e}")))?;
        let root = cwd.join(&self.root);
        project_folder("--root", &self.root, &root)?;
        // A root reached through a symbolic link is walked, stamped and watched as the
        // directory itself: the link's own times say nothing about the entries.
        let root = root.canonicalize().unwrap_or(root);
        let config = match &self.config {
            None => None,
            Some(path) => Some(config_in_root(path, &cwd, &root)?),
        };
        let targets = (!self.targets.is_empty()).then(|| self.targets.clone());
        let cache = match cache {
            Some(cache) => cache.open()?,
            None => std::sync::Arc::new(crate::cache::Cache::disabled()),
        };
        Ok(BuildOptions { config, targets, ..BuildOptions::new(root, out.map(|out| cwd.join(out)), cache) })
    }
}

/// `--config`'s path relative to the root, as a POSIX path: relative to the root as `--help`
/// says, or (a path the shell completed) relative to the current directory, if a file is
/// there and none at the first, and it lands in the root. (A file at neither is the build's
/// AB4001.)
fn config_in_root(path: &Path, cwd: &Path, root: &Path) -> Result<String, Failure> {
    let (from_root, from_cwd) = (root.join(path), cwd.join(path));
    let chosen = if !from_root.is_file() && from_cwd.is_file() { from_cwd } else { from_root };
    // Its folder as the root is (`sub/..`, a link to the root), the file itself not followed:
    // the loader reads no linked config.
    let chosen = crate::emit::publish::resolved_but_last(&chosen);
    let inside = |relative: &Path| relative.components().all(|part| matches!(part, std::path::Component::Normal(_)));
    match chosen.strip_prefix(root) {
        Ok(relative) if inside(relative) => Ok(relative.to_string_lossy().into_owned()),
        _ => Err(Failure::Usage(format!(
            "--config {} must be inside the project root {}",
            path.display(),
            root.display()
        ))),
    }
}

fn build_command(args: BuildArgs) -> Result<bool, Failure> {
    let options = args.source.publishing_options(args.out.as_deref(), &args.cache, false)?;
    let started = Instant::now();
    // A pool of its own only when asked for or needed, and only once the stages run: a
    // build answered by its stamp or the cache would pay for its threads.
    let on_pool = |stages: &mut (dyn FnMut() + Send)| match args.thread_pool(&options.cache) {
        Ok(pool) => pool.install(stages),
        // The stages move onto a deep pool of one thread per core themselves
        // (`threads::on_deep_pool`): as well built, only with fewer requests at once.
        Err(_) => stages(),
    };
    let output = if args.jobs.is_some() || options.cache.has_remote() {
        build::build_on(&options, &on_pool)
    } else {
        build::build(&options)
    };
    // Queued uploads go out (and the statistics are kept) even when the build failed.
    let warnings = args.cache.finish(&options.cache);
    let elapsed = started.elapsed();
    let output = match output {
        Ok(output) => output,
        // (One that compiled says what it compiled: its warnings. One Ctrl-C stopped is said
        // as every command's is.)
        Err(error) if args.source.json && error.kind() != io::ErrorKind::Interrupted => {
            errln!("error: {error}");
            let mut value = report::outcome_json(&options, &Err(error), elapsed);
            value["work"]["cacheWarnings"] = serde_json::json!(warnings);
            report::print_json(&value);
            return Ok(false);
        }
        Err(error) => {
            if let Some(compiled) = crate::build::Unpublished::compiled(&error) {
                report::print_diagnostics(
                    compiled,
                    report::shown_root(&options.root).as_deref(),
                    Some(&options.out_dir),
                );
            }
            report::print_cache_warnings(&warnings);
            return Err(Failure::Run(error.to_string()));
        }
    };
    let compiled = &output.compiled;
    if args.source.json {
        let mut value = report::build_json(&options, &output, elapsed);
        value["work"]["cacheWarnings"] = serde_json::json!(warnings);
        report::print_json(&value);
    } else {
        report::print_diagnostics(compiled, report::shown_root(&options.root).as_deref(), Some(&options.out_dir));
        report::print_cache_warnings(&warnings);
        if let Some((summary, by)) = &output.shortcut {
            let targets = summary.targets.join(", ");
            let ms = elapsed.as_millis();
            match (by, &output.published) {
                (build::Shortcut::Restored, Some(stats)) => outln!(
                    "Restored {} {} for {targets} from the cache → {} ({} files: {} written, {} unchanged, {} removed; nothing transpiled or bundled) in {ms} ms",
                    summary.plugin,
                    summary.version,
                    report::display_path(&options.out_dir),
                    summary.files,
                    stats.written.len(),
                    stats.unchanged,
                    stats.removed_files(),
                ),
                _ => {
                    let proof = if *by == build::Shortcut::Cache { ", checked against the cache" } else { "" };
                    outln!(
                        "{} {} for {targets} is up to date ({} files{proof}) in {ms} ms",
                        summary.plugin,
                        summary.version,
                        summary.files
                    );
                }
            }
        }
        if let (Some(model), Some(stats)) = (&compiled.model, &output.published) {
            let targets: Vec<_> = model.targets.iter().map(|t| t.as_str()).collect();
            outln!(
                "Built {} {} for {} → {} ({} files: {} written, {} unchanged, {} removed; {} transpiled, {} bundled) in {} ms",
                model.name,
                model.version,
                targets.join(", "),
                report::display_path(&options.out_dir),
                compiled.files.len(),
                stats.written.len(),
                stats.unchanged,
                stats.removed_files(),
                output.work.transpiled,
                output.work.bundled,
                elapsed.as_millis()
            );
        }
    }
    Ok(output.published.is_some())
}

impl BuildArgs {
    fn thread_pool(&self, cache: &crate::cache::Cache) -> Result<rayon::ThreadPool, Failure> {
        crate::threads::thread_pool(cache, self.jobs.map(usize::from)).map_err(|e| Failure::Run(e.to_string()))
    }
}

/// That the folder a `flag` names as `shown` is one at `path`, or the usage error: it is
/// missing, something else, or cannot be reached (a path longer than the system takes).
fn folder(flag: &str, shown: &Path, path: &Path) -> Result<(), Failure> {
    let what = match std::fs::metadata(path) {
        Ok(metadata) if metadata.is_dir() => return Ok(()),
        Ok(_) => "is not a directory".to_owned(),
        Err(e) if matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => {
            if std::fs::symlink_metadata(path).is_ok() { "is not a directory" } else { "does not exist" }.to_owned()
        }
        Err(e) => format!("cannot be read: {e}"),
    };
    Err(Failure::Usage(format!("{flag} {} {what}", shown.display())))
}

/// [`folder`] for a flag naming a project (or a workspace of them): its config named instead
/// (`--root plugin/agent-bundle.config.ts`) is told to name the config's folder.
fn project_folder(flag: &str, shown: &Path, path: &Path) -> Result<(), Failure> {
    folder(flag, shown, path).map_err(|failure| match (failure, config_file_parent(shown)) {
        (Failure::Usage(message), Some(parent)) if path.is_file() => {
            Failure::Usage(format!("{message}: name the folder of the config, {}", parent.display()))
        }
        (failure, _) => failure,
    })
}

/// The folder of `path` where it names a config file (`.` for a bare name).
fn config_file_parent(path: &Path) -> Option<&Path> {
    let name = path.file_name()?.to_str()?;
    let parent = path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    crate::config::CONFIG_FILE_NAMES.contains(&name).then_some(parent)
}

/// `--artifact` names a folder (a mistyped one is a usage error, as `--root` is).
fn artifact_dir(dir: &Path) -> Result<(), Failure> {
    if dir.is_dir() {
        Ok(())
    } else if dir == Path::new(DEFAULT_ARTIFACT) && !dir.exists() {
        // Left to its default, where no build has run.
        Err(Failure::Usage(format!(
            "no artifact here: ./{DEFAULT_ARTIFACT} (--artifact's default) does not exist; run `agent-bundle build` \
             first, or pass --artifact"
        )))
    } else {
        folder("--artifact", dir, dir)
    }
}

fn list_command(dir: &Path, target: Option<Target>, json: bool) -> Result<bool, Failure> {
    let manifest = Manifest::read(dir).map_err(Failure::Run)?;
    let hooks = &manifest.hooks;
    let on_host = |hook: &&HookRow| target.is_none_or(|t| hook.host == t);
    let (prebuilt, rows): (Vec<&HookRow>, Vec<&HookRow>) =
        hooks.iter().filter(on_host).partition(|hook| hook.is_prebuilt());
    if json {
        report::print_json(&serde_json::json!({ "ok": true, "hooks": rows, "prebuilt": prebuilt }));
        return Ok(true);
    }
    for hook in &rows {
        let matcher = hook.matcher.as_deref().map(|m| format!(" matcher {m}")).unwrap_or_default();
        outln!(
            "{}  {}  {} → {}{}  {}{}",
            hook.name,
            hook.host,
            hook.event,
            hook.native_event,
            matcher,
            hook.path.as_deref().unwrap_or(""),
            inspect::runtime_note(hook.runtime.as_deref(), hook.fallback)
        );
    }
    let prebuilt = prebuilt.len();
    let from = target.map(|t| format!(" from {}", t.as_str())).unwrap_or_default();
    let note = match target {
        Some(target) if rows.is_empty() && !manifest.targets.contains(&target) => {
            let built_for: Vec<_> = manifest.targets.iter().map(|t| t.as_str()).collect();
            format!(" (the artifact was not built for {}: its targets are {})", target.as_str(), built_for.join(", "))
        }
        Some(target) if crate::hosts::table(target).hooks.is_none() => {
            format!(" ({} takes no hooks)", crate::hosts::table(target).display_name)
        }
        _ if prebuilt > 0 => format!(" ({prebuilt} prebuilt hook(s) not listed: they cannot be simulated)"),
        _ => String::new(),
    };
    outln!("Listed {} hook(s){from}{note}", rows.len());
    Ok(true)
}

/// The text of `--input-file`, read no further than the input limit (`/dev/zero` never ends).
fn read_input_file(path: &Path) -> Result<String, Failure> {
    use std::io::Read;
    let cannot =
        |e: &dyn std::fmt::Display| Failure::Usage(format!("cannot read --input-file {}: {e}", path.display()));
    let mut bytes = Vec::new();
    let limit = artifact::MAX_INPUT as u64 + 1;
    let read = if path.as_os_str() == "-" {
        std::io::stdin().lock().take(limit).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|file| file.take(limit).read_to_end(&mut bytes))
    };
    read.map_err(|e| cannot(&e))?;
    if bytes.len() > artifact::MAX_INPUT {
        return Err(Failure::Usage(artifact::INPUT_TOO_BIG.into()));
    }
    // (An editor's byte-order mark is no part of the JSON, as Node's JSON.parse of a file
    // read by most tools takes it.)
    let text = String::from_utf8(bytes).map_err(|e| cannot(&e))?;
    Ok(text.strip_prefix('\u{feff}').map(str::to_owned).unwrap_or(text))
}

/// The simulation input, given inline or in a file.
fn input_text(input: Option<String>, input_file: Option<PathBuf>) -> Result<String, Failure> {
    match (input, input_file) {
        (Some(text), None) => Ok(text),
        (None, Some(path)) => read_input_file(&path),
        _ => Err(Failure::Usage("provide exactly one of --input or --input-file".into())),
    }
}

fn simulate_command(
    dir: &Path,
    target: Target,
    wanted: &str,
    text: &str,
    mode: artifact::SharedMode,
    form: artifact::InputForm,
    json: bool,
) -> Result<bool, Failure> {
    let input = artifact::read_simulated_json(text).map_err(|error| {
        Failure::Usage(match error {
            None => format!(
                "input nests {} levels deep or more, past what `hooks simulate` reads (a wrapper run by a host reads \
                 any depth)",
                artifact::MAX_SIMULATED_DEPTH
            ),
            Some(error) => format!("input must be valid JSON: {error}"),
        })
    })?;
    if !input.is_object() {
        return Err(Failure::Usage("input must be a JSON object".into()));
    }
    // A capture of a hook's run (as `reference` payloads are kept) holds the input beside
    // the environment.
    if let Some(capture) = input.as_object().filter(|object| object.len() == 2)
        && capture.contains_key("env")
        && capture.get("stdin").is_some_and(serde_json::Value::is_object)
    {
        return Err(Failure::Usage(
            "the input holds `env` and `stdin`, as a capture of a hook's run does: pass its `stdin`".into(),
        ));
    }
    let manifest = Manifest::read(dir).map_err(Failure::Run)?;
    let changed = artifact::changed_inputs(dir, &manifest);
    let hooks = manifest.hooks;
    // A name the artifact does not have is a wrong invocation, like a wrong option.
    let hook = artifact::find_hook(&hooks, target, wanted).map_err(Failure::Usage)?;
    if let Some(first) = changed.first() {
        let others = match changed.len() {
            1 => String::new(),
            more => format!(" and {} more", more - 1),
        };
        errln!(
            "note: {first}{others} changed since the artifact was built: this runs what it holds (run `agent-bundle \
             build` to simulate the project as it is)"
        );
    }
    // (A prebuilt hook, or `--standalone` for a route that has no such form, is a wrong
    // invocation too.)
    if let Some(why) = artifact::refused(hook, mode) {
        return Err(Failure::Usage(why));
    }
    // (Reported as a run that failed, in the same shape: `node` missing, say.)
    let simulation = artifact::simulate(dir, hook, &input, mode, form).unwrap_or_else(artifact::Simulation::not_run);
    if crate::interrupt::cut_short() {
        // A hook stopped on the way says nothing true of what it answers.
        return Err(Failure::Run("interrupted".into()));
    }
    let matched = hook.matches_tool(&simulation.native_input);
    if json {
        // (A hook that failed is reported whole too: what it printed, how it exited.)
        report::print_json(&serde_json::json!({
            "ok": simulation.failure.is_none(), "error": simulation.failure,
            "hook": hook.name, "host": hook.host, "nativeEvent": hook.native_event,
            "renderedBy": simulation.rendered_by, "matcherMatches": matched,
            "nativeInput": simulation.native_input, "nativeOutput": simulation.native_output,
            "result": simulation.result, "stderr": simulation.stderr, "exitCode": simulation.exit_code,
            "changedInputs": changed,
        }));
        if let Some(failure) = &simulation.failure {
            // (As every failure with `--json` is said on stderr too.)
            errln!("error: {failure}");
        }
        return Ok(simulation.failure.is_none());
    }
    if let Some(failure) = simulation.failure {
        return Err(Failure::Run(failure));
    }
    if !simulation.stderr.is_empty() {
        err!("{}", simulation.stderr);
    }
    let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default();
    outln!("native input ({} {}):\n{}", hook.host, hook.native_event, pretty(&simulation.native_input));
    let output = if simulation.native_output.is_null() {
        "(nothing: the host continues)".to_owned()
    } else {
        pretty(&simulation.native_output)
    };
    outln!("native output:\n{output}");
    outln!("outcome:\n{}", pretty(&simulation.result));
    if matched == Some(false) {
        errln!(
            "note: {} would not run this hook for {}: its matcher is {} (the simulation ran it all the same)",
            hook.host,
            simulation.native_input["tool_name"].as_str().unwrap_or_default(),
            hook.matcher.as_deref().unwrap_or_default()
        );
    }
    let by = match simulation.rendered_by {
        Some("shared") => " (rendered by the shared runtime)",
        Some(_) => " (rendered standalone)",
        None => "",
    };
    outln!("Simulated {} on {} in {} ms{by}", hook.name, hook.host, simulation.elapsed.as_millis());
    Ok(true)
}

fn validate_command(args: ValidateArgs) -> Result<bool, Failure> {
    use crate::validate::{HostValidation, claude_on_path, validate};
    // (Set but empty, it counts as unset, as every variable the tool reads does.)
    let named = std::env::var_os("AGENT_BUNDLE_CLAUDE").filter(|name| !name.is_empty());
    let claude = named.map(PathBuf::from).or_else(claude_on_path);
    let host_validation = match (args.host_validation, args.no_host_validation, claude) {
        (_, true, _) => HostValidation::Off,
        (true, false, None) => {
            return Err(Failure::Usage("--host-validation needs `claude` on PATH (or AGENT_BUNDLE_CLAUDE)".into()));
        }
        (_, false, Some(binary)) => HostValidation::Claude(binary),
        (false, false, None) => HostValidation::Off,
    };
    artifact_dir(&args.artifact)?;
    let progress = report::progress_bar(0, "wrappers", args.json);
    let validation = validate(&args.artifact, &host_validation, &progress);
    progress.finish_and_clear();
    if crate::interrupt::cut_short() {
        // The checks cut short report nothing true.
        return Err(Failure::Run("interrupted".into()));
    }
    let diagnostics = &validation.diagnostics;
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    if args.json {
        let rows: Vec<_> = diagnostics.iter().map(|d| crate::diagnostics::Located::new(d, None).to_json()).collect();
        report::print_json(&serde_json::json!({
            "ok": errors == 0,
            "hostValidation": validation.host_validated,
            "diagnostics": rows,
        }));
    } else {
        let color = color();
        for diagnostic in diagnostics {
            errln!("{}\n", crate::diagnostics::Located::new(diagnostic, None).render_human(color));
        }
        if errors == 0 {
            let with = if validation.host_validated { " (with claude plugin validate)" } else { "" };
            outln!("Validation succeeded{with}: {}", report::display_path(&args.artifact));
        } else {
            outln!("Validation reported {errors} error(s)");
        }
    }
    Ok(errors == 0)
}

/// Whether stderr wants colors: a terminal that draws them (not `TERM=dumb`, an editor's
/// shell buffer), without `NO_COLOR` (no-color.org: set and not empty).
fn color() -> bool {
    std::io::stderr().is_terminal()
        && std::env::var_os("TERM").is_none_or(|term| term != "dumb")
        && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn a_usage_error_says_all_of_its_message_and_workspace_builds_take_no_root() {
        let error = |args: &[&str]| super::Cli::command().try_get_matches_from(args).unwrap_err();
        let missing = super::usage_error_message(&error(&["agent-bundle", "build", "--filter", "x"]));
        assert_eq!(missing, "the following required arguments were not provided: --workspace [<DIR>]");
        let conflict = super::usage_error_message(&error(&["agent-bundle", "build", "--workspace", "--root", "a"]));
        assert!(conflict.contains("cannot be used with '--root <ROOT>'"), "{conflict}");
        let filter = super::usage_error_message(&error(&["agent-bundle", "build", "--filter", "x", "--root", "a"]));
        assert!(filter.contains("'--filter <FILTER>' cannot be used with '--root <ROOT>'"), "{filter}");
    }

    /// Every subcommand and option of every command says what it is for in `--help`.
    #[test]
    fn every_command_and_option_has_help() {
        fn check(command: &clap::Command, path: &str, missing: &mut Vec<String>) {
            if command.get_about().is_none() {
                missing.push(path.to_owned());
            }
            for arg in command.get_arguments().filter(|arg| !["help", "version"].contains(&arg.get_id().as_str())) {
                if arg.get_help().is_none() {
                    missing.push(format!("{path} --{}", arg.get_id()));
                }
            }
            for sub in command.get_subcommands().filter(|sub| sub.get_name() != "help") {
                check(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        check(&super::Cli::command(), "agent-bundle", &mut missing);
        assert!(missing.is_empty(), "without help: {missing:?}");
    }
}
