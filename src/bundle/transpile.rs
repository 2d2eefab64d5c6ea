//! Front end: parse the original TS/JS, report problems at spans of the original source, and
//! transpile it to plain JavaScript (types stripped, JSX lowered) with oxc.

use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::path::Path;

use oxc_allocator::Allocator;
use oxc_ast::ast::{BindingIdentifier, Declaration, Program, Statement};
use oxc_ast_visit::{VisitMut, walk_mut};
use oxc_codegen::{Codegen, CodegenOptions, CommentOptions};
use oxc_parser::{ParseOptions, Parser};
use oxc_semantic::SemanticBuilder;
use oxc_span::{GetSpan, SourceType};
use oxc_transformer::{JsxOptions, JsxRuntime, TransformOptions, Transformer};

pub use crate::source::Span;
use crate::source::{ModuleLanguage, Related};

use super::check::Checker;
use super::nesting::NestingBound;
use super::renders::{Components, Renders};
use super::source_map::Origin;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum BundleErrorKind {
    Syntax,
    BareImport,
    UnresolvedImport,
    DynamicImport,
    /// CommonJS's `require`, `module`, `exports`, `__dirname` or `__filename`, which the ES
    /// modules hooks run as do not have.
    CommonJs,
    TopLevelAwait,
    ImportMeta,
    ReservedName,
    /// A module file the loader could not read.
    Unreadable,
    /// A name a module does not export (`Agent.Contxt`).
    MissingExport,
    /// A JSX tag naming nothing declared or imported.
    UndefinedComponent,
    /// A read of the hook's stdin, which the wrapper has read (a warning).
    ReadsStdin,
    /// A direct `eval`, which cannot see the module's imports as the bundle links them (a
    /// warning).
    DirectEval,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct BundleDiagnostic {
    pub kind: BundleErrorKind,
    pub severity: Severity,
    pub span: Span,
    pub message: String,
    pub help: Option<String>,
    /// (Not in the records of warnings cached before it was.)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<Related>,
}

impl BundleDiagnostic {
    pub(crate) fn error(kind: BundleErrorKind, span: Span, message: impl Into<String>) -> Self {
        Self::new(kind, Severity::Error, span, message)
    }

    pub(crate) fn warning(kind: BundleErrorKind, span: Span, message: impl Into<String>) -> Self {
        Self::new(kind, Severity::Warning, span, message)
    }

    fn new(kind: BundleErrorKind, severity: Severity, span: Span, message: impl Into<String>) -> Self {
        Self { kind, severity, span, message: message.into(), help: None, related: Vec::new() }
    }

    pub(crate) fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub(crate) fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The transpiled module and what the original source said about its imports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transpiled {
    /// Plain JavaScript (ESM); `None` when parsing or transforming failed.
    pub code: Option<String>,
    pub diagnostics: Vec<BundleDiagnostic>,
    /// Original spans of module requests, per specifier, in source order (value imports first).
    pub request_spans: BTreeMap<String, VecDeque<Span>>,
    /// Where to point at a request the transpiler added itself (the JSX runtime import).
    pub fallback_span: Span,
    /// Where the module first renders what some route families or hosts do not take.
    pub renders: Renders,
    /// What its default-exported function returns that some events or hosts do not take (a
    /// handler's; none for a route or the tool's own modules).
    pub returns: Renders,
    /// What the default export is, where it names a top-level declaration that can be no
    /// function, and where it names it (the transpiled code's linking sees only the name).
    pub named_default_not_function: Option<(&'static str, Span)>,
    /// What each of its components renders, and which it renders in turn: what the build
    /// follows from a route into the modules it imports components from.
    pub components: Components,
    /// The names the module exports as types only (`export interface Props`), which the
    /// transpiled code no longer has.
    pub type_exports: BTreeSet<String>,
    /// Original spans of the local names of `export { ... }` lists.
    pub export_spans: BTreeMap<String, Span>,
    /// Where the module's `export default` is (its `default` keyword).
    pub default_export_span: Option<Span>,
    /// Original spans of the names imported or re-exported from each specifier (`default`
    /// for a default import), where each is first named: what a missing export points at.
    pub imported_name_spans: BTreeMap<(String, String), Span>,
    /// JSX tags `<X.Y>` whose `X` is imported from another module (`import { Agent } from
    /// './ui'`, which may be the route components' `Agent` re-exported): only the linked
    /// graph can tell what `Y` must be.
    pub imported_member_tags: Vec<ImportedMemberTag>,
    /// Where the code came from, in code order (none for the tool's own modules).
    pub origins: Vec<Origin>,
}

impl Transpiled {
    /// The original span of the next request of `specifier` in the transpiled output.
    pub fn take_request_span(&mut self, specifier: &str) -> Span {
        match self.request_spans.get_mut(specifier) {
            Some(spans) if spans.len() > 1 => spans.pop_front().unwrap_or(self.fallback_span),
            Some(spans) => spans.front().copied().unwrap_or(self.fallback_span),
            None => self.fallback_span,
        }
    }
}

pub(super) fn source_type_for(key: &str) -> Option<SourceType> {
    let source_type = match crate::source::module_language(key)? {
        ModuleLanguage::TypeScript => SourceType::ts(),
        ModuleLanguage::Tsx => SourceType::tsx(),
        ModuleLanguage::JavaScript => SourceType::mjs(),
        ModuleLanguage::Jsx => SourceType::jsx(),
    };
    Some(source_type.with_module(true))
}

/// Whether `source`, which does not parse as TypeScript, parses as TSX: JSX written in a
/// `.ts` file (the parser's own message, "Expected '>'", does not say so).
fn is_jsx_in_plain_typescript(source: &str, source_type: SourceType) -> bool {
    if !source_type.is_typescript() || source_type.is_jsx() {
        return false;
    }
    let allocator = Allocator::default();
    let as_tsx = Parser::new(&allocator, source, SourceType::tsx().with_module(true)).parse();
    !as_tsx.panicked && as_tsx.diagnostics.errors().next().is_none()
}

/// Whether the module `key` is JSON data.
pub fn is_json_module(key: &str) -> bool {
    key.ends_with(".json")
}

/// A JSON module as Node makes one: its default export is `JSON.parse` of its text (so a
/// `"__proto__"` key stays a key, as an object literal's would not). The text is checked
/// here, where a mistake can be shown in the file.
fn transpile_json(source: &str, mut out: Transpiled) -> Transpiled {
    // Node's JSON modules skip a byte order mark, which `JSON.parse` would refuse.
    let text = source.strip_prefix(crate::source::BYTE_ORDER_MARK).unwrap_or(source);
    // Valid as `JSON.parse` has it: serde_json's skipping pass takes any number, a lone
    // surrogate escape and any depth, as it does (a tree would refuse `1e400`).
    let Err(error) = serde_json::from_str::<serde::de::IgnoredAny>(text) else {
        out.code = Some(format!("export default JSON.parse({});\n", super::link::js_string(text)));
        return out;
    };
    // The tree's reader words the same error better ("trailing comma", not "key must be a
    // string"), when it stops at the same place.
    let at = |error: &serde_json::Error| (error.line(), error.column());
    let worded = serde_json::from_str::<serde_json::Value>(text).err().filter(|tree| at(tree) == at(&error));
    let error = worded.unwrap_or(error);
    let (at, message) = crate::source::json_error_at(text.as_bytes(), &error);
    let offset = (source.len() - text.len()) as u32 + at;
    out.diagnostics.push(BundleDiagnostic::error(
        BundleErrorKind::Syntax,
        Span::new(offset, offset),
        format!("invalid JSON: {message}"),
    ));
    out
}

/// Every oxc diagnostic of `diagnostics`, as the bundler reports it.
fn push_oxc_diagnostics(out: &mut Vec<BundleDiagnostic>, diagnostics: &oxc_diagnostics::Diagnostics) {
    let errors = diagnostics.errors().map(|d| (Severity::Error, d));
    for (severity, diagnostic) in errors.chain(diagnostics.warnings().map(|d| (Severity::Warning, d))) {
        let (span, related) = crate::source::oxc_span(diagnostic);
        out.push(BundleDiagnostic {
            help: diagnostic.help.as_ref().map(ToString::to_string),
            related,
            ..BundleDiagnostic::new(BundleErrorKind::Syntax, severity, span, diagnostic.message.to_string())
        });
    }
}

/// Parse, check and transpile one module. `key` picks the language by its extension. A
/// large module is compiled and linked first in a copy of the process
/// ([`crate::source::refusal_to_compile`]); one that would overflow the stack there is
/// refused.
pub fn transpile(key: &str, source: &str) -> Transpiled {
    // (JSON's reader stops at 128 levels.)
    if is_json_module(key) && u32::try_from(source.len()).is_ok() {
        return transpile_json(source, Transpiled::default());
    }
    let linked = || drop(super::link_module(key, compile(key, source), &mut |_| Err(super::ResolveFailure::Bare)));
    let Some(refusal) = crate::source::refusal_to_compile(source, linked) else { return compile(key, source) };
    let mut out = Transpiled::default();
    out.diagnostics.push(BundleDiagnostic::error(BundleErrorKind::Syntax, Span::new(0, 0), refusal));
    out
}

/// [`transpile`] of a module that is no JSON, without trying it first.
fn compile(key: &str, source: &str) -> Transpiled {
    let mut out = Transpiled::default();
    let source_type = match refused_unparsed(key, source) {
        Ok(source_type) => source_type,
        Err(refusal) => {
            out.diagnostics.push(refusal);
            return out;
        }
    };
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, source_type).with_options(parse_options()).parse();
    push_oxc_diagnostics(&mut out.diagnostics, &parsed.diagnostics);
    if parsed.panicked || out.diagnostics.iter().any(BundleDiagnostic::is_error) {
        if is_jsx_in_plain_typescript(source, source_type) {
            let first = out.diagnostics.iter_mut().find(|d| d.is_error());
            if let Some(first) = first {
                first.help = Some("this is JSX, which a .ts file cannot hold: rename the file .tsx".to_owned());
            }
        }
        return out;
    }
    let mut program = parsed.program;
    if let Some(too_deep) = NestingBound::first_past(&program) {
        out.diagnostics.push(too_deep);
        return out;
    }
    if source_type.is_typescript() {
        drop_empty_imports(&mut program);
    }

    let semantic = SemanticBuilder::new()
        .with_check_syntax_error(true)
        .with_excess_capacity(2.0)
        .with_enum_eval(true)
        .build(&program);
    push_oxc_diagnostics(&mut out.diagnostics, &semantic.diagnostics);
    let early_errors = out.diagnostics.iter().any(BundleDiagnostic::is_error);
    let left_out = Checker::of(key, source, semantic.semantic.scoping(), &program).check(&program, &mut out);
    if early_errors {
        return out;
    }
    // (A walk of the whole module, for what few modules have: only TypeScript has enums, and
    // only where the word is.)
    let computed_enum_members = if source_type.is_typescript() && source.contains("enum") {
        super::enums::computed_members(&program, semantic.semantic.scoping())
    } else {
        HashSet::new()
    };
    let scoping = semantic.semantic.into_scoping();
    drop_statements(&mut program, &left_out);
    // Errors of the checker leave a valid AST: transpile anyway, so that linking can report
    // unresolvable imports too. The caller drops the code.
    let transformed =
        Transformer::new(&allocator, Path::new(key), &transform_options()).build_with_scoping(scoping, &mut program);
    let mut transforming = Vec::new();
    push_oxc_diagnostics(&mut transforming, &transformed.diagnostics);
    // A warning where the checker refused something already (a namespace's exported `let`)
    // would say it twice.
    let within = |outer: Span, inner: Span| outer.start <= inner.start && inner.end <= outer.end;
    transforming.retain(|d| d.is_error() || !out.diagnostics.iter().any(|e| e.is_error() && within(d.span, e.span)));
    let failed = transforming.iter().any(BundleDiagnostic::is_error);
    out.diagnostics.extend(transforming);
    if failed {
        return out;
    }
    super::enums::map_back_numbers_only(&mut program, &computed_enum_members, &allocator);
    let generated = Codegen::new().with_options(codegen_options(key)).build(&program);
    if let Some(map) = &generated.map {
        out.origins = super::source_map::origins(&generated.code, map);
    }
    out.code = Some(generated.code);
    out
}

/// How a module of `key` is parsed, or why it is refused before parsing: too large for 32-bit
/// spans, of no module type, nested deeper than the parser can recurse.
fn refused_unparsed(key: &str, source: &str) -> Result<SourceType, BundleDiagnostic> {
    let at_start = Span::new(0, 0);
    if u32::try_from(source.len()).is_err() {
        return Err(BundleDiagnostic::error(
            BundleErrorKind::Syntax,
            at_start,
            format!("{key} is too large to compile"),
        ));
    }
    let Some(source_type) = source_type_for(key) else {
        return Err(BundleDiagnostic::error(
            BundleErrorKind::Syntax,
            at_start,
            format!("unsupported module type: {key}"),
        )
        .with_help("modules must be .ts, .tsx, .mts, .js, .mjs, .jsx or .json files"));
    };
    if let Some((span, message)) = crate::source::too_deep(source) {
        return Err(BundleDiagnostic::error(BundleErrorKind::Syntax, Span::new(span.start, span.end), message));
    }
    Ok(source_type)
}

/// Regular expressions are checked too: Node refuses a module with an invalid one.
fn parse_options() -> ParseOptions {
    ParseOptions { parse_regular_expression: true, ..ParseOptions::default() }
}

/// The embedded runtime's comments are for its maintainers (they are in `src/runtime/`);
/// a wrapper is parsed on every tool call, so they stay out of it (about a fifth of a
/// wrapper's bytes). A handler's own comments are kept: that is the code its author reads.
/// Only the plugin's own modules are mapped: a stack trace names where in them it failed.
fn codegen_options(key: &str) -> CodegenOptions {
    let mut options = CodegenOptions::default();
    if super::virtual_module(key).is_some() {
        options.comments = CommentOptions { normal: false, jsdoc: false, ..CommentOptions::default() };
    } else {
        options.source_map_path = Some(key.into());
    }
    options
}

fn transform_options() -> TransformOptions {
    let mut options = TransformOptions::from_target("node20").unwrap_or_default();
    options.jsx = JsxOptions {
        runtime: JsxRuntime::Automatic,
        import_source: Some("agent-bundle".into()),
        development: false,
        pure: true,
        ..JsxOptions::enable()
    };
    options
}

/// The values a declaration binds.
pub(super) fn declared_names(declaration: &Declaration<'_>) -> Vec<String> {
    declared_ids(declaration).into_iter().map(|id| id.name.to_string()).collect()
}

/// The bindings of the values a declaration binds.
pub(super) fn declared_ids<'d, 'a>(declaration: &'d Declaration<'a>) -> Vec<&'d BindingIdentifier<'a>> {
    match declaration {
        Declaration::VariableDeclaration(variables) => {
            variables.declarations.iter().flat_map(|declarator| declarator.id.get_binding_identifiers()).collect()
        }
        Declaration::FunctionDeclaration(function) => function.id.iter().collect(),
        Declaration::ClassDeclaration(class) => class.id.iter().collect(),
        Declaration::TSEnumDeclaration(enumeration) => vec![&enumeration.id],
        Declaration::TSNamespaceDeclaration(namespace) => vec![&namespace.id],
        Declaration::TSImportEqualsDeclaration(alias) if !alias.import_kind.is_type() => vec![&alias.id],
        _ => Vec::new(),
    }
}

/// A JSX tag `<X.Y>` whose `X` is imported: `name` of the module `specifier`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ImportedMemberTag {
    pub specifier: String,
    pub name: String,
    /// `X` and `Y`, as written.
    pub local: String,
    pub member: String,
    /// The member (`Y`).
    pub span: Span,
}

/// TypeScript drops `import {} from './x'` and `export {} from './x'` (they take no name, as
/// those of types only do), so that module does not run: as tsc and esbuild, and before
/// anything records the import. (`import './x'` is kept: it asks for the module's effects.)
fn drop_empty_imports(program: &mut Program<'_>) {
    program.body.retain(|statement| match statement {
        Statement::ImportDeclaration(import) => import.specifiers.as_ref().is_none_or(|s| !s.is_empty()),
        Statement::ExportFromDeclaration(export) => !export.specifiers.is_empty(),
        _ => true,
    });
}

/// Leaves out of `program` the statements, anywhere, that start at `starts`.
fn drop_statements(program: &mut Program<'_>, starts: &HashSet<u32>) {
    struct Dropping<'s>(&'s HashSet<u32>);
    impl<'a> VisitMut<'a> for Dropping<'_> {
        fn visit_statements(&mut self, it: &mut oxc_allocator::Vec<'a, Statement<'a>>) {
            it.retain(|statement| !self.0.contains(&statement.span().start));
            walk_mut::walk_statements(self, it);
        }
    }
    if !starts.is_empty() {
        Dropping(starts).visit_program(program);
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// `(kind, text at the span)` of every error of `source` compiled as `key`.
    pub(in crate::bundle) fn errors(key: &str, source: &str) -> Vec<(BundleErrorKind, String)> {
        let out = transpile(key, source);
        out.diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| (d.kind, source[d.span.start as usize..d.span.end as usize].to_owned()))
            .collect()
    }

    pub(in crate::bundle) fn one(kind: BundleErrorKind, text: &str) -> Vec<(BundleErrorKind, String)> {
        vec![(kind, text.to_owned())]
    }

    #[test]
    fn clean_typescript_transpiles() {
        let out = transpile(
            "src/a.ts",
            "import type { T } from \"pkg\";\nexport const x: T = { a: 1 } satisfies object as const;\nenum E { A }\n",
        );
        assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
        let code = out.code.unwrap();
        assert!(code.contains("export const x = { a: 1 };"), "{code}");
        assert!(!code.contains("pkg"));
        assert_eq!(out.request_spans["pkg"], [Span::new(23, 28)]);
    }

    #[test]
    fn syntax_errors_are_located_in_bytes() {
        let source = "const s = \"héllo wörld\";\nconst b = ;\n";
        let out = transpile("src/a.ts", source);
        assert!(out.code.is_none());
        assert_eq!(out.diagnostics.len(), 1);
        let d = &out.diagnostics[0];
        assert_eq!((d.kind, d.severity), (BundleErrorKind::Syntax, Severity::Error));
        let at = source.find(" ;").unwrap() as u32 + 1;
        assert_eq!(d.span, Span::new(at, at + 1));
        assert_eq!(d.message, "Unexpected token");
        assert_eq!(d.help, None, "no JSX in it");
    }

    #[test]
    fn jsx_in_a_ts_file_says_to_rename_it() {
        let source =
            "import { Agent } from '@agent-bundle/runtime';\nexport default () => <Agent.Context>hi</Agent.Context>;\n";
        let out = transpile("src/events/prompt/submit.ts", source);
        let help = out.diagnostics.iter().find(|d| d.is_error()).and_then(|d| d.help.as_deref());
        assert_eq!(help, Some("this is JSX, which a .ts file cannot hold: rename the file .tsx"));
        assert!(transpile("src/events/prompt/submit.tsx", source).diagnostics.is_empty());
    }

    #[test]
    fn early_errors_are_syntax_errors() {
        assert_eq!(errors("src/a.ts", "let a = 1;\nlet a = 2;\n"), one(BundleErrorKind::Syntax, "a"));
        assert_eq!(errors("src/a.js", "const X = 1;\nconst x = <X/>;\n").len(), 1);
        assert!(errors("src/a.jsx", "const X = 1;\nexport const x = <X/>;\n").is_empty());
    }

    #[test]
    fn unsupported_module_types() {
        for key in ["src/a.cjs", "src/a.cts", "src/README"] {
            let out = transpile(key, "{}");
            assert_eq!(out.diagnostics.len(), 1, "{key}");
            assert_eq!(out.diagnostics[0].kind, BundleErrorKind::Syntax);
            assert!(out.diagnostics[0].message.contains(key));
        }
    }

    #[test]
    fn checker_errors_still_resolve_imports() {
        let source = "import { a } from \"lodash\";\nexport const x = import.meta.url + a;\n";
        let chunk = super::super::compile_module("src/a.ts", source, &mut |_| Err(super::super::ResolveFailure::Bare));
        let kinds: Vec<BundleErrorKind> = chunk.diagnostics.iter().map(|d| d.kind).collect();
        assert_eq!(kinds, [BundleErrorKind::BareImport, BundleErrorKind::ImportMeta]);
        assert!(chunk.code.is_empty());
    }
}
