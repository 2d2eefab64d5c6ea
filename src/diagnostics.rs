//! Diagnostics: one registry of stable `AB####` codes, one `Diagnostic` type, and the
//! human and JSON renderers.
//!
//! Every stage reports problems as values (never by printing or panicking). A diagnostic
//! names the file and, where it comes from the config, the JSON path of the offending
//! value; the span is resolved from that path when the diagnostic is rendered, so the
//! model below the config stage stays free of source positions (and salsa can backdate
//! it when only whitespace moves).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::ops::Range;

use annotate_snippets::{AnnotationKind, Element, Group, Level, Renderer, Snippet};

use crate::model::Target;
use crate::source::{LineIndex, Related, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

macro_rules! codes {
    ($($variant:ident = $code:literal, $name:literal, $summary:literal;)*) => {
        /// Every diagnostic the compiler can report. Codes are never reused.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code { $($variant,)* }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The stable code, e.g. `AB4202`.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $code,)* }
            }

            /// The code whose [`Code::as_str`] is `code`.
            pub fn parse(code: &str) -> Option<Code> {
                Code::ALL.iter().copied().find(|known| known.as_str() == code)
            }

            /// A kebab-case name for the pattern the diagnostic flags.
            pub fn name(self) -> &'static str {
                match self { $(Code::$variant => $name,)* }
            }

            /// One line for the diagnostics reference.
            pub fn summary(self) -> &'static str {
                match self { $(Code::$variant => $summary,)* }
            }
        }
    };
}

codes! {
    ConfigNotFound = "AB4001", "config-not-found", "No `agent-bundle.config.{ts,mts,js,mjs}` at the project root (or at `--config`).";
    ConfigSyntax = "AB4002", "config-syntax-error", "The config file does not parse as TypeScript/JavaScript, or nests too deep (brackets over 1,000 levels, or 50,000 with operators, counted in the text as written: in strings and comments too).";
    UnknownConfigKey = "AB4003", "unknown-config-key", "A key the config schema does not define.";
    InvalidConfigValue = "AB4004", "invalid-config-value", "A config value of the wrong type or shape.";
    MissingPluginName = "AB4005", "missing-plugin-name", "`plugin.name` is required.";
    ShadowedConfig = "AB4006", "shadowed-config", "A second `agent-bundle.config.*` at the project root, which the build ignores.";
    UnreadablePackageVersion = "AB4007", "unreadable-package-version", "The config sets no `plugin.version` and `package.json` gives none it can read.";
    UnreadableInput = "AB4008", "unreadable-input", "A file the build needs (the config, a module, a route, a payload's file, `package.json` for the version) may not be read by this user, or holds more than 1 GiB (an error; files the build does not need may be either), or a folder of the project may not be listed (a warning: nothing in it is read), nor one above the root that a failing import points into.";
    StateUnwritable = "AB4009", "state-unwritable", "The build's stamp cannot be written in the project's `.agent-bundle/` folder (a warning: the build is whole, but every build reads the whole project).";
    ArtifactPathNotUtf8 = "AB4010", "artifact-path-not-utf8", "The artifact's folder has a path that is not UTF-8, from which Node loads no file (a warning: `hooks simulate`, `validate` and a host running the plugin where it was built fail; a host that installs a copy elsewhere does not).";
    UnknownTarget = "AB4100", "unknown-target", "A target that is not `claude`, `codex`, `cursor` or `portable`.";
    DuplicateHook = "AB4101", "duplicate-hook", "Two declarations normalize to the same hook.";
    InvalidPluginName = "AB4102", "invalid-plugin-name", "A plugin name that some selected host rejects.";
    InvalidPluginVersion = "AB4104", "invalid-plugin-version", "A plugin version that is empty or not one path segment (Codex installs each version in a folder of its name).";
    OutputCollision = "AB4103", "output-collision", "Two hosts want different bytes at one artifact path.";
    EmptyHandler = "AB4200", "empty-handler", "A hook without a handler path.";
    ToolsOnNonToolEvent = "AB4201", "tools-on-non-tool-event", "`tools` on an event other than `beforeTool` or `afterTool`.";
    UnknownSelector = "AB4202", "unknown-selector", "A tool selector that is neither canonical nor `<target>:<native-name>`, or names a host's tool in the wrong case (`claude:bash`, which matches no tool).";
    HookTargetNotSelected = "AB4203", "hook-target-not-selected", "A hook names a target the build does not select (a warning: nothing is emitted for it).";
    EventNotSupportedByHost = "AB4204", "event-not-supported-by-host", "A config hook for an event a host lacks (`workspaceOpen` on every host), or a hook naming a host without its event.";
    InvalidTimeout = "AB4205", "invalid-timeout", "A timeout that is not a positive whole number of seconds.";
    NativeToolNeverMatched = "AB4206", "native-tool-never-matched", "A `<target>:<native-tool>` selector naming a tool the host never fires tool hooks for (Codex's internal `shell` or `write_stdin`, Claude Code's `EndConversation`), or an MCP tool name not of the host's form (`claude:mcp__memory`, no tool named): the hook would never run for it.";
    RouteBudgetCapped = "AB4208", "route-budget-capped", "A route whose config sets a `timeoutMs` longer than a host lets its event's hooks run, whatever their `timeout` (Claude Code's `SessionEnd`: 1.5 s); a warning, since a user can raise the host's limit.";
    UndocumentedNativeTool = "AB4207", "undocumented-native-tool", "A `<target>:<native-tool>` selector naming no tool the host is documented to fire tool hooks for (`cursor:Bash`: Cursor's shell is `Shell`); a warning, since a host newer than its contract may have it.";
    NativeSelectorOutsideTargets = "AB4212", "native-selector-outside-targets", "A `<target>:<name>` selector for a host the hook does not reach.";
    UnknownEvent = "AB4213", "unknown-event", "A hook key that is not one of the seven canonical events.";
    UnmappedSelector = "AB4214", "unmapped-selector", "A canonical selector with no native tool on a selected host.";
    NoApplicableSelector = "AB4215", "no-applicable-selector", "A hook that selects tools leaves a host with an empty matcher.";
    HookReachesNoHost = "AB4216", "hook-reaches-no-host", "No selected host can receive the hook: an error where the config names no `targets` (the build is for `portable` alone), else a warning.";
    MissingHandler = "AB4217", "missing-handler", "The handler file does not exist.";
    HandlerWithoutDefault = "AB4218", "handler-without-default-export", "A handler or route module has no default export.";
    DefaultNotFunction = "AB4219", "default-export-not-function", "A handler or route module default-exports something no host could call (a string, an object, a class, a generator).";
    UnknownRouteFamily = "AB4800", "unknown-route-family", "A file under src/events/ whose path names no event family.";
    RouteLeftOut = "AB4802", "route-left-out", "Something under src/events/ that agent-bundle does not read (a symbolic link, a special file, a name that is not UTF-8, a folder it may not list): a route there would be missing.";
    StrayRoute = "AB4803", "stray-route", "A module named like a route in a folder that is almost `src/events/` (`src/event/`, `src/Events/`, `events/`): no host runs it (a warning).";
    DuplicateRoute = "AB4801", "duplicate-route", "Two route files for one event family.";
    RouteConfig = "AB4806", "invalid-route-config", "A route `config` that is not a literal of the route config shape; or (a warning, since every setting then takes its default) a `config` object the route declares without exporting, or exports under a name a letter off (`confg`, `Config`).";
    SharedRuntimeFallback = "AB4816", "shared-runtime-fallback", "A shared route runs standalone: no generated MCP server hosts the shared runtime on that host, or the host runs the route's family once it has stopped it (Claude Code's `SessionEnd`) (a warning).";
    SharedRuntimeUnavailable = "AB4817", "shared-runtime-unavailable", "A route needs the shared runtime where no generated MCP entry hosts it, or where the host runs its family once it has stopped it (Claude Code's `SessionEnd`), and it has no standalone fallback.";
    ContextNotTaken = "AB4818", "context-not-taken", "A route renders `Agent.Context`, or a config hook's handler returns `additionalContext`, for a host that takes no context for its event (a warning: such a run fails there).";
    InvalidPayload = "AB4741", "invalid-payload", "A payload name or source that cannot be packaged.";
    PayloadOutsideRoot = "AB4742", "payload-outside-root", "A payload source outside the project root, or the root itself.";
    PrebuiltOutsidePayload = "AB4744", "prebuilt-outside-payload", "A prebuilt handler that is not inside a declared payload, or inside one the build leaves out while a host it builds for registers the hook.";
    InvalidArgs = "AB4746", "invalid-args", "`args` on a compiled handler, or with shell-unsafe characters.";
    PayloadLeftOut = "AB4745", "payload-left-out", "A payload source holding what no artifact carries: a folder agent-bundle never reads (`node_modules`, `.venv`, `target`, `.git`, `.jj`, `.agent-bundle`, a built artifact) or may not list, a symbolic link, a special file, a name that is not UTF-8, or one no artifact path can hold (a control character or a backslash, a name or a path too long).";
    MissingPayload = "AB4747", "missing-payload", "A payload source directory that is missing or empty, or lies in a folder agent-bundle never reads.";
    MissingPrebuilt = "AB4748", "missing-prebuilt", "The prebuilt handler file does not exist in its payload.";
    UnsafePrebuiltPath = "AB4749", "unsafe-prebuilt-path", "A prebuilt handler path holding a character a shell would read in the hook command.";
    PrebuiltNotJavaScript = "AB4750", "prebuilt-not-javascript", "A prebuilt handler Node cannot run (a `.sh`, `.py` or `.ts` file): hosts run it as `node <file>`.";
    HandlerInPayload = "AB4751", "handler-in-payload", "A module handler inside a payload, which ships its files as they are: a script meant to run as it is is a `{ prebuilt }` handler (a warning).";
    ModuleSyntax = "AB4836", "module-syntax-error", "A handler module does not parse or transpile, uses syntax Node 20 cannot run (an `import` or `export` below the top level, an export list in a namespace), TypeScript a per-module transpile cannot keep (a namespace's `export let`, a name another declaration of a namespace exports, an enum a later declaration exports again, a namespace declared `declare` too, a `declare const enum` read as a value, parameter properties before a nested `super()`), or nests too deep (brackets or statements over 1,000 levels, or 50,000 with operators, brackets counted in strings and comments too; a file of 100 KB or more is compiled first where an overflow of the stack harms nothing; functions over 400; namespaces over 100; expressions Node recurses through over 1,500; `else if` chains over 2,000).";
    UnsupportedImport = "AB4837", "unsupported-import", "An import the bundler cannot link into a self-contained wrapper, or CommonJS's `require`, `module`, `exports`, `__dirname` or `__filename`, which the ES module a wrapper is lacks.";
    MissingExport = "AB4838", "missing-export", "An import names an export its module does not have, or has ambiguously through two `export *` (or a route renders an `Agent` component there is none of).";
    UndefinedComponent = "AB4839", "undefined-component", "A JSX tag names a component nothing in its module declares or imports (or, in a module under `src/events/`, an HTML element, which no route renders).";
    ReadsStdin = "AB4840", "reads-stdin", "A module reads the hook's stdin, which the wrapper has read already (a warning: it finds nothing).";
    ResultNotTaken = "AB4841", "result-not-taken", "A route renders an `Agent.Result`, or a config hook's handler returns a result written out, that denies, allows, asks or gives a new tool input where its event takes none, or an `allow` or `ask` where a host it is built for has no channel for it, or what no host takes (a deny with a new tool input or no reason, a reason with no decision, an outcome no event has, text written in it outside `Agent.Context`) (a warning: such a run fails).";
    BundledModuleFeature = "AB4842", "bundled-module-feature", "A handler module uses what a bundled wrapper cannot give it: top-level `await` (its modules are evaluated synchronously, in order), `import.meta` (it would describe the wrapper, not the source file), or a name starting with `__ab_` (the bundle runtime's); a direct `eval` is a warning (it cannot see the module's imports, which the wrapper reads under other names).";
    SharedGuardWithoutFallback = "AB4843", "shared-guard-without-fallback", "A shared route that denies, with no `fallback: 'standalone'`: while its runtime is down the hook fails, and the host goes on as though nothing had denied (a tool call runs, a prompt goes through) (a warning).";
    ArtifactManifest = "AB6000", "artifact-manifest-invalid", "The artifact has no readable agent-bundle.manifest.json.";
    ArtifactFiles = "AB6004", "artifact-files-mismatch", "A listed file is missing or edited after the build, or the artifact holds a file, link or empty folder its manifest does not list.";
    WrapperLoad = "AB6005", "wrapper-does-not-load", "An emitted wrapper fails to load in a clean node process.";
    HostDocument = "AB6011", "host-document-invalid", "A host manifest, hook document or MCP document lacks the host's shape, or is missing where the hook index needs it (a manifest's pointer to it too; an MCP server other than the shared runtime a build registers, too).";
    HookCommandTarget = "AB6018", "hook-command-target-missing", "A hook command does not run a file inside the artifact.";
    HostValidation = "AB6019", "host-validation-finding", "The host's own validator (claude plugin validate) reported a problem (an error or warning), or could not run (a warning: the host's check was skipped).";
}

/// One reported problem. Stored as a [`DiagnosticRecord`] where a build says its warnings
/// again without running (the stamp, the cache's `artifact` records).
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(into = "DiagnosticRecord", try_from = "DiagnosticRecord")]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    /// Project-relative path of the file the problem is in.
    pub file: Option<String>,
    /// Byte range in `file`; filled from `json_path` at render time when absent.
    pub span: Option<Span>,
    /// Where in the config the offending value sits, e.g. `hooks.beforeTool[1].tools[0]`.
    pub json_path: Option<String>,
    /// Whether the fault is the name of the key at `json_path` (`hooks.PreToolUse`), not its
    /// value: the span is then the key's.
    pub at_key: bool,
    pub host: Option<Target>,
    pub help: Option<String>,
    /// Other places in `file` it points at (where an unclosed brace was opened).
    pub related: Vec<Related>,
}

impl Diagnostic {
    pub fn error(code: Code, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Error, message)
    }

    pub fn warning(code: Code, message: impl Into<String>) -> Self {
        Self::new(code, Severity::Warning, message)
    }

    fn new(code: Code, severity: Severity, message: impl Into<String>) -> Self {
        Self {
            code,
            severity,
            message: message.into(),
            file: None,
            span: None,
            json_path: None,
            at_key: false,
            host: None,
            help: None,
            related: Vec::new(),
        }
    }

    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }

    pub fn at(mut self, span: Span) -> Self {
        self.span = Some(span);
        self
    }

    pub fn at_path(mut self, json_path: impl Into<String>) -> Self {
        self.json_path = Some(json_path.into());
        self
    }

    /// At the name of the key `json_path` leads to ([`Diagnostic::at_key`]).
    pub fn at_key_of(mut self, json_path: impl Into<String>) -> Self {
        self.json_path = Some(json_path.into());
        self.at_key = true;
        self
    }

    pub fn for_host(mut self, host: Target) -> Self {
        self.host = Some(host);
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn with_related(mut self, related: Vec<Related>) -> Self {
        self.related = related;
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The help `help`, led by the `known` word `given` is most likely a typo of ([`suggesting`]).
    pub fn with_help_suggesting<'a>(self, given: &str, known: impl IntoIterator<Item = &'a str>, help: &str) -> Self {
        self.with_help(suggesting(given, known, help))
    }
}

/// A [`Diagnostic`] as stored: its code, severity and host by name, its span as
/// `[start, end]`; a record naming a code or host this build does not know is refused.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct DiagnosticRecord {
    code: String,
    severity: String,
    message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    span: Option<[u32; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    json_path: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    at_key: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    help: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    related: Vec<Related>,
}

impl From<Diagnostic> for DiagnosticRecord {
    fn from(d: Diagnostic) -> DiagnosticRecord {
        DiagnosticRecord {
            code: d.code.as_str().to_owned(),
            severity: d.severity.as_str().to_owned(),
            message: d.message,
            file: d.file,
            span: d.span.map(|span| [span.start, span.end]),
            json_path: d.json_path,
            at_key: d.at_key,
            host: d.host.map(|host| host.as_str().to_owned()),
            help: d.help,
            related: d.related,
        }
    }
}

impl TryFrom<DiagnosticRecord> for Diagnostic {
    type Error = String;

    fn try_from(record: DiagnosticRecord) -> Result<Diagnostic, String> {
        let code = Code::parse(&record.code).ok_or_else(|| format!("unknown code {}", record.code))?;
        let severity = match record.severity.as_str() {
            "error" => Severity::Error,
            "warning" => Severity::Warning,
            other => return Err(format!("unknown severity {other}")),
        };
        let host = match &record.host {
            Some(name) => Some(Target::parse(name).ok_or_else(|| format!("unknown host {name}"))?),
            None => None,
        };
        Ok(Diagnostic {
            code,
            severity,
            message: record.message,
            file: record.file,
            span: record.span.map(|[start, end]| Span { start, end }),
            json_path: record.json_path,
            at_key: record.at_key,
            host,
            help: record.help,
            related: record.related,
        })
    }
}

/// `a`, `a and b`, `a, b and c`: names as a message lists them.
pub fn and_list<S: AsRef<str>>(items: &[S]) -> String {
    listed(items, "and")
}

/// `a`, `a or b`, `a, b or c`.
pub fn or_list<S: AsRef<str>>(items: &[S]) -> String {
    listed(items, "or")
}

fn listed<S: AsRef<str>>(items: &[S], last_word: &str) -> String {
    match items {
        [] => String::new(),
        [only] => only.as_ref().to_owned(),
        [others @ .., last] => {
            let others: Vec<&str> = others.iter().map(AsRef::as_ref).collect();
            format!("{} {last_word} {}", others.join(", "), last.as_ref())
        }
    }
}

pub fn has_errors(diagnostics: &[Diagnostic]) -> bool {
    diagnostics.iter().any(Diagnostic::is_error)
}

/// `help`, led by the `known` word `given` is most likely a typo of, if any is close (as clap
/// suggests a mistyped option): "did you mean `beforeTool`? …".
pub fn suggesting<'a>(given: &str, known: impl IntoIterator<Item = &'a str>, help: &str) -> String {
    match closest(given, known) {
        Some(word) => format!("did you mean `{word}`? {help}"),
        None => help.to_owned(),
    }
}

/// Whether one of the `known` words is close enough to `given` to be suggested.
pub fn has_suggestion<'a>(given: &str, known: impl IntoIterator<Item = &'a str>) -> bool {
    closest(given, known).is_some()
}

/// The `known` word `given` is most likely a typo of: the nearest in edits (a swap of two
/// letters is one; case is none), if a third of its letters or fewer, or one, differ.
fn closest<'a>(given: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let given = given.to_lowercase();
    let length = given.chars().count();
    let near = known.into_iter().filter_map(|word| {
        let allowed = (word.chars().count() / 3).max(1);
        let lower = word.to_lowercase();
        // No fewer edits than the lengths differ by: a word that far off is not measured (a
        // megabyte pasted as an import would take seconds against each builtin's name).
        if length.abs_diff(lower.chars().count()) > allowed {
            return None;
        }
        let edits = strsim::damerau_levenshtein(&given, &lower);
        (edits <= allowed).then_some((edits, word))
    });
    near.min_by_key(|(edits, _)| *edits).map(|(_, word)| word)
}

/// A diagnostic with its position resolved against the file's text, ready to print.
#[derive(Clone, Debug)]
pub struct Located<'a> {
    pub diagnostic: &'a Diagnostic,
    /// 1-based line and UTF-16 column of the span start.
    pub line_col: Option<(u32, u32)>,
    /// The lines the span covers, for the code frame.
    frame: Option<Frame<'a>>,
    /// Each related place's frame (a frame of its own: one spanning both would end at an
    /// error after the file's last line break, which the renderer puts on the line before),
    /// label, and 1-based line and UTF-16 column.
    related: Vec<(Frame<'a>, &'a str, (u32, u32))>,
}

/// The lines of a file a span covers: the frame shows these, not the whole file (which the
/// renderer would scan again for every diagnostic).
#[derive(Clone, Debug)]
struct Frame<'a> {
    /// 1-based number of the first line.
    first_line: usize,
    lines: &'a str,
    /// The span, relative to `lines`.
    span: Range<usize>,
}

impl<'a> Frame<'a> {
    /// The frame of `span` in `text`, with the line and column where it starts.
    fn of(span: Span, text: &'a str, index: &LineIndex) -> (Frame<'a>, (u32, u32)) {
        // Nothing starts inside a byte order mark: line 1 starts after it (a span at 0 is
        // the file's start).
        let span_start = (span.start as usize).max(index.line_range(1).start);
        let end = text.ceil_char_boundary((span.end as usize).max(span_start + 1).min(text.len()));
        let start = text.floor_char_boundary(span_start.min(end));
        let line_col = index.line_col(start as u32);
        let last_line = index.line_col(end.saturating_sub(1).max(start) as u32).0;
        let from = index.line_range(line_col.0).start;
        let to = index.line_range(last_line).end.max(end);
        let frame = Frame { first_line: line_col.0 as usize, lines: &text[from..to], span: start - from..end - from };
        (frame, line_col)
    }
}

impl<'a> Located<'a> {
    /// Resolves one diagnostic; [`Located::all`] shares each file's line index.
    pub fn new(diagnostic: &'a Diagnostic, text: Option<&'a str>) -> Self {
        let index = text.map(LineIndex::new);
        Self::with_index(diagnostic, text.zip(index.as_ref()))
    }

    /// Resolves `diagnostics` against the texts of their files, indexing each file once.
    pub fn all(diagnostics: &'a [Diagnostic], text_of: impl Fn(&str) -> Option<&'a str>) -> Vec<Located<'a>> {
        let mut indexes: HashMap<&str, Option<(&'a str, LineIndex)>> = HashMap::new();
        diagnostics
            .iter()
            .map(|diagnostic| {
                let source = diagnostic.file.as_deref().and_then(|file| {
                    let entry = indexes.entry(file).or_insert_with(|| text_of(file).map(|t| (t, LineIndex::new(t))));
                    entry.as_ref().map(|(text, index)| (*text, index))
                });
                Self::with_index(diagnostic, source)
            })
            .collect()
    }

    fn with_index(diagnostic: &'a Diagnostic, source: Option<(&'a str, &LineIndex)>) -> Self {
        let Some((span, (text, index))) = diagnostic.span.zip(source) else {
            return Self { diagnostic, line_col: None, frame: None, related: Vec::new() };
        };
        let (frame, line_col) = Frame::of(span, text, index);
        let related = diagnostic.related.iter().map(|related| {
            let (frame, line_col) = Frame::of(related.span, text, index);
            (frame, related.label.as_str(), line_col)
        });
        Self { diagnostic, line_col: Some(line_col), frame: Some(frame), related: related.collect() }
    }

    /// The same diagnostic shown as `diagnostic` (another file name, say), same position.
    pub fn showing(self, diagnostic: &'a Diagnostic) -> Self {
        Self { diagnostic, ..self }
    }

    /// `file:line:col`, or as much of it as is known.
    pub fn location(&self) -> Option<String> {
        let file = self.diagnostic.file.as_deref()?;
        Some(match self.line_col {
            Some((line, col)) => format!("{file}:{line}:{col}"),
            None => file.to_owned(),
        })
    }

    /// Renders the diagnostic with a code frame, as a compiler would.
    pub fn render_human(&self, color: bool) -> String {
        let d = self.diagnostic;
        let level = match d.severity {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
        };
        let mut title = d.message.clone();
        if let Some(host) = d.host {
            let _ = write!(title, " [{}]", host.as_str());
        }
        let mut elements: Vec<Element<'_>> = Vec::new();
        match (d.file.as_deref(), &self.frame) {
            (Some(file), Some(frame)) => {
                let label =
                    d.json_path.as_deref().filter(|p| !p.is_empty()).map(|p| format!("at `{p}`")).unwrap_or_default();
                elements.push(
                    Snippet::source(frame.lines)
                        .line_start(frame.first_line)
                        .path(file)
                        .annotation(AnnotationKind::Primary.span(frame.span.clone()).label(label))
                        .into(),
                );
                for (frame, label, _) in &self.related {
                    let place = AnnotationKind::Context.span(frame.span.clone()).label(*label);
                    let snippet = Snippet::source(frame.lines).line_start(frame.first_line).path(file);
                    elements.push(snippet.annotation(place).into());
                }
            }
            (Some(file), None) => {
                let mut note = format!("in {file}");
                if let Some(path) = &d.json_path {
                    let _ = write!(note, " at `{path}`");
                }
                elements.push(Level::NOTE.message(note).into());
            }
            _ => {}
        }
        if let Some(help) = &d.help {
            elements.push(Level::HELP.message(help.as_str()).into());
        }
        let group = level.primary_title(title).id(d.code.as_str()).elements(elements);
        let renderer = if color { Renderer::styled() } else { Renderer::plain() };
        let report: [Group<'_>; 1] = [group];
        renderer.render(&report).to_string()
    }

    /// One line, without a code frame: `error[AB4202]: message [host] (file:line:col)`.
    pub fn render_short(&self) -> String {
        let d = self.diagnostic;
        let mut line = format!("{}[{}]: {}", d.severity.as_str(), d.code.as_str(), d.message);
        if let Some(host) = d.host {
            let _ = write!(line, " [{}]", host.as_str());
        }
        if let Some(location) = self.location() {
            let _ = write!(line, " ({location})");
        }
        line
    }

    /// The machine-readable form printed by `--json`.
    pub fn to_json(&self) -> serde_json::Value {
        let d = self.diagnostic;
        let mut object = serde_json::Map::new();
        object.insert("code".into(), d.code.as_str().into());
        object.insert("name".into(), d.code.name().into());
        object.insert("severity".into(), d.severity.as_str().into());
        object.insert("message".into(), d.message.clone().into());
        if let Some(file) = &d.file {
            object.insert("file".into(), file.clone().into());
        }
        if let Some((line, column)) = self.line_col {
            object.insert("line".into(), line.into());
            object.insert("column".into(), column.into());
        }
        if let Some(path) = &d.json_path {
            object.insert("jsonPath".into(), path.clone().into());
        }
        if let Some(host) = d.host {
            object.insert("host".into(), host.as_str().into());
        }
        if let Some(help) = &d.help {
            object.insert("help".into(), help.clone().into());
        }
        if !self.related.is_empty() {
            let related = self.related.iter().map(
                |(_, label, (line, column))| serde_json::json!({ "line": line, "column": column, "label": label }),
            );
            object.insert("related".into(), related.collect());
        }
        serde_json::Value::Object(object)
    }
}

/// Every code as `{ "ok": true, "codes": [{ "code", "name", "summary" }] }`, by number.
pub fn reference_json() -> serde_json::Value {
    let codes: Vec<serde_json::Value> = by_number()
        .into_iter()
        .map(|code| serde_json::json!({ "code": code.as_str(), "name": code.name(), "summary": code.summary() }))
        .collect();
    serde_json::json!({ "ok": true, "codes": codes })
}

/// Every code by number, where a reader looks one up.
fn by_number() -> Vec<Code> {
    let mut codes = Code::ALL.to_vec();
    codes.sort_unstable_by_key(|code| code.as_str());
    codes
}

/// The diagnostics reference (docs/diagnostics.md), generated from the registry.
pub fn reference_markdown() -> String {
    let mut out = String::from(
        "# Diagnostics\n\n<!-- Generated by `agent-bundle diagnostics`; a test keeps it current. -->\n\n\
         Every diagnostic has a stable code. Errors fail the build (exit code 1), and nothing turns one into a warning; a few codes are an error in some cases and a warning in others (each diagnostic's severity says which).\n\n\
         | Code | Name | Meaning |\n| --- | --- | --- |\n",
    );
    for code in by_number() {
        let _ = writeln!(out, "| {} | `{}` | {} |", code.as_str(), code.name(), code.summary());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_close_word_is_suggested_and_a_far_one_is_not() {
        let events = ["sessionStart", "beforeTool", "afterTool", "stop"];
        assert_eq!(closest("beforTool", events), Some("beforeTool"));
        assert_eq!(closest("aftertool", events), Some("afterTool"));
        assert_eq!(closest("target", ["hooks", "payload", "plugin", "targets"]), Some("targets"));
        assert_eq!(closest("mpc", ["shell", "mcp", "agent"]), Some("mcp"), "a swap is one edit");
        assert_eq!(closest("onPrompt", events), None);
        assert_eq!(closest("vscode", ["claude", "codex", "cursor", "portable"]), None);
        // A word far longer than any known one is no typo of one (and is not measured).
        assert_eq!(closest(&"claude".repeat(20_000), ["claude", "codex"]), None);
        let help =
            Diagnostic::error(Code::UnknownTarget, "x").with_help_suggesting("claud", ["claude"], "targets are …");
        assert_eq!(help.help.as_deref(), Some("did you mean `claude`? targets are …"));
    }

    #[test]
    fn the_json_reference_lists_every_code_by_number() {
        let reference = reference_json();
        let codes: Vec<&str> =
            reference["codes"].as_array().unwrap().iter().map(|c| c["code"].as_str().unwrap()).collect();
        assert_eq!(codes.len(), Code::ALL.len());
        assert!(codes.is_sorted(), "{codes:?}");
        assert_eq!(reference["codes"][0]["name"], Code::parse(codes[0]).unwrap().name());
    }

    #[test]
    fn codes_and_names_are_unique() {
        let mut codes: Vec<_> = Code::ALL.iter().map(|c| c.as_str()).collect();
        let mut names: Vec<_> = Code::ALL.iter().map(|c| c.name()).collect();
        codes.sort_unstable();
        names.sort_unstable();
        let (code_count, name_count) = (codes.len(), names.len());
        codes.dedup();
        names.dedup();
        assert_eq!(codes.len(), code_count, "duplicate code");
        assert_eq!(names.len(), name_count, "duplicate name");
        assert!(Code::ALL.iter().all(|c| c.as_str().len() == 6 && c.as_str().starts_with("AB")));
    }

    #[test]
    fn renders_a_code_frame_with_location() {
        let text = "export default {\n  plugin: { name: 1 },\n};\n";
        let diagnostic = Diagnostic::error(Code::InvalidConfigValue, "plugin.name must be a string")
            .in_file("agent-bundle.config.ts")
            .at(Span { start: 35, end: 36 })
            .at_path("plugin.name")
            .with_help("write a string");
        let located = Located::new(&diagnostic, Some(text));
        assert_eq!(located.location().as_deref(), Some("agent-bundle.config.ts:2:19"));
        let rendered = located.render_human(false);
        assert!(rendered.contains("error[AB4004]: plugin.name must be a string"), "{rendered}");
        assert!(rendered.contains("agent-bundle.config.ts:2:19"), "{rendered}");
        assert!(rendered.contains("help: write a string"), "{rendered}");
        let json = located.to_json();
        assert_eq!(json["line"], 2);
        assert_eq!(json["jsonPath"], "plugin.name");
    }

    #[test]
    fn the_frame_holds_the_lines_of_the_span_numbered_as_in_the_file() {
        let text = "const a = 1;\nconst b = [\n  2,\n];\nconst c = 3;\n";
        let start = text.find('[').unwrap() as u32;
        let end = text.find(']').unwrap() as u32 + 1;
        let diagnostic = Diagnostic::error(Code::InvalidConfigValue, "bad").in_file("x.ts").at(Span { start, end });
        let located = Located::new(&diagnostic, Some(text));
        assert_eq!(located.location().as_deref(), Some("x.ts:2:11"));
        let rendered = located.render_human(false);
        assert!(rendered.contains("2 |   const b = [") && rendered.contains("4 | | ];"), "{rendered}");
        assert!(!rendered.contains("const a") && !rendered.contains("const c"), "{rendered}");
        // Files indexed once for all their diagnostics resolve the same.
        let all = Located::all(std::slice::from_ref(&diagnostic), |_| Some(text));
        assert_eq!(all[0].render_human(false), rendered);
    }

    /// Another place a diagnostic points at (an unclosed brace) is framed with its label, on
    /// its own (the lines between are not shown), and listed by `--json` with its line and
    /// column.
    #[test]
    fn a_related_place_is_framed_and_listed() {
        let text = format!("const a = {{\n{}const b = 2;\n", "  x: 1,\n".repeat(20));
        let opened = text.find('{').unwrap() as u32;
        let end = text.len() as u32 - 1;
        let diagnostic = Diagnostic::error(Code::ConfigSyntax, "Expected `}` but found `EOF`")
            .in_file("x.ts")
            .at(Span::new(end, end))
            .with_related(vec![Related { span: Span::new(opened, opened + 1), label: "Opened here".into() }]);
        let located = Located::new(&diagnostic, Some(&text));
        assert_eq!(located.location().as_deref(), Some("x.ts:22:13"));
        let rendered = located.render_human(false);
        assert!(rendered.contains("1 | const a = {") && rendered.contains("- Opened here"), "{rendered}");
        assert!(rendered.contains("--> x.ts:22:13") && rendered.contains("22 | const b = 2;"), "{rendered}");
        assert!(rendered.contains("::: x.ts:1:11") && !rendered.contains("x: 1,"), "{rendered}");
        let json = located.to_json();
        assert_eq!(json["related"], serde_json::json!([{ "line": 1, "column": 11, "label": "Opened here" }]));
        // A diagnostic with none lists none.
        let alone = Diagnostic::error(Code::ConfigSyntax, "x").in_file("x.ts").at(Span::new(0, 1));
        assert!(Located::new(&alone, Some(&text)).to_json().get("related").is_none());
    }

    /// A file that starts with a byte order mark: a span at its start (a module without a
    /// default export) is where line 1 starts, after the mark.
    #[test]
    fn a_span_at_the_start_of_a_file_with_a_byte_order_mark_is_framed() {
        let text = "\u{feff}const a = 1;\n";
        for span in [Span::new(0, 0), Span::new(0, 1), Span::new(3, 8)] {
            let diagnostic = Diagnostic::error(Code::InvalidConfigValue, "bad").in_file("x.ts").at(span);
            let located = Located::new(&diagnostic, Some(text));
            assert_eq!(located.location().as_deref(), Some("x.ts:1:1"), "{span:?}");
            let rendered = located.render_human(false);
            assert!(rendered.contains("1 | const a = 1;"), "{rendered}");
        }
    }
}
