//! Static extraction of a plugin's config value from `agent-bundle.config.ts` (and of
//! `export const config = { ... }` from route files).
//!
//! The file is parsed with oxc and the exported value is read off the syntax tree. Nothing is
//! ever executed: a build must not run plugin code, must give the same answer on every machine,
//! and must be able to point at the exact character that is wrong. So only a JSON-like literal
//! subset of TypeScript is accepted (objects, arrays, strings, numbers, booleans, `null`, plus
//! TS-only wrappers such as `as const` and `satisfies`), and everything else is reported as a
//! located error with the JSON path of the offending value. The result matches what Node's
//! `JSON.stringify` would print for the evaluated value, including JavaScript's key order.

use std::path::Path;

use oxc_allocator::Allocator;
use oxc_ast::ast::{
    Argument, ArrayExpression, ArrayExpressionElement, BindingIdentifier, BindingPattern, Declaration,
    ExportDefaultDeclarationKind, Expression, IdentifierReference, ImportDeclarationSpecifier, ObjectExpression,
    ObjectPropertyKind, Program, PropertyKey, PropertyKind, Statement, VariableDeclaration, VariableDeclarationKind,
};
use oxc_ast_visit::Visit;
use oxc_parser::{ParseOptions, Parser};
use oxc_semantic::{Scoping, SemanticBuilder};
use oxc_span::{GetSpan, SourceType};
use oxc_syntax::operator::{BinaryOperator, UnaryOperator};
use oxc_syntax::symbol::SymbolId;

use crate::diagnostics::{Code, Diagnostic};
use crate::source::{Related, Span};

/// Which export of the file holds the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExtractTarget {
    /// `export default defineConfig({ ... })` / `export default { ... }` (plugin configs).
    DefaultExport,
    /// `export const <name> = { ... }` (route files use `NamedConst("config")`).
    NamedConst(&'static str),
}

impl ExtractTarget {
    /// The export's name: `default`, or the const's.
    fn export_name(self) -> &'static str {
        match self {
            ExtractTarget::DefaultExport => "default",
            ExtractTarget::NamedConst(name) => name,
        }
    }

    /// How the export is written, for help: `` `export default defineConfig({ ... })` ``.
    fn written_form(self) -> String {
        match self {
            ExtractTarget::DefaultExport => "`export default defineConfig({ ... })`".to_owned(),
            ExtractTarget::NamedConst(name) => format!("`export const {name} = {{ ... }}`"),
        }
    }
}

/// A literal value read from the source, with the span of the expression that produced it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Value {
    pub kind: ValueKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ValueKind {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Value>),
    /// Properties in the order `JSON.stringify` prints them, without duplicates.
    Object(Vec<Property>),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Property {
    pub key: String,
    /// The key as written; for a duplicated key, the last occurrence (the one whose value won).
    pub key_span: Span,
    pub value: Value,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ExtractErrorKind {
    /// oxc could not parse the file.
    Syntax,
    /// The target export does not exist.
    MissingExport,
    /// The target export does not exist, but the module has what was likely meant: the name
    /// declared without `export`, or exported as a likely typo of it (a route's `confg`).
    MisnamedExport,
    /// The config is a function (`defineConfig(() => ({ ... }))`).
    ConfigFactory,
    /// Something other than a literal where a literal is required.
    NotLiteral,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ExtractError {
    pub kind: ExtractErrorKind,
    pub span: Span,
    /// JSON path of the offending value (`hooks.beforeTool[1].handler`); `""` is the root.
    pub path: String,
    pub message: String,
    pub help: String,
    /// Other places it points at (where an unclosed brace was opened).
    pub related: Vec<Related>,
}

impl ExtractError {
    fn new(kind: ExtractErrorKind, span: Span, path: impl Into<String>, message: String, help: String) -> Self {
        Self { kind, span, path: path.into(), message, help, related: Vec::new() }
    }

    /// The error as a diagnostic with `code`, located in `file` at its span and JSON path.
    pub fn to_diagnostic(&self, file: &str, code: Code) -> Diagnostic {
        let mut diagnostic = Diagnostic::error(code, self.message.clone())
            .in_file(file)
            .at(self.span)
            .with_related(self.related.clone());
        if !self.path.is_empty() {
            diagnostic = diagnostic.at_path(self.path.clone());
        }
        if !self.help.is_empty() {
            diagnostic = diagnostic.with_help(self.help.clone());
        }
        diagnostic
    }
}

/// The outcome of [`extract`]: `value` is `Some` exactly when `errors` is empty.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Extracted {
    pub value: Option<Value>,
    pub errors: Vec<ExtractError>,
}

const LITERAL_HELP: &str = "write a literal value: agent-bundle reads this file statically and never executes it";

/// What to write for the hook of `event` (its `handler`, `in_entry`), given as a value the
/// build does not run.
fn handler_help(event: &str, in_entry: bool, given: Given<'_>) -> String {
    let key = if in_entry { "handler" } else { event };
    match given {
        Given::Name if in_entry => format!(
            "write the handler's module path here: `handler: './src/hooks/{event}.ts'`; agent-bundle reads this file \
             statically and never executes it"
        ),
        Given::Function => format!(
            "a handler is the path of its module, which the build compiles: `{key}: './src/hooks/{event}.ts'`, \
             whose module default-exports the function"
        ),
        Given::DefaultImport(source) => format!(
            "a handler is the path of its module, which the build compiles: `{key}: {}`, with the module's \
             extension",
            super::js_quoted(source)
        ),
        Given::Name => format!(
            "write the hook here: its handler module's path (`{event}: './src/hooks/{event}.ts'`), or an entry \
             `{{ handler: … }}`; agent-bundle reads this file statically and never executes it"
        ),
    }
}

/// What a hook is given as, where the build wants a path or an entry.
#[derive(Clone, Copy)]
enum Given<'a> {
    /// A function written there.
    Function,
    /// The default import of the module `source` (a handler's, perhaps).
    DefaultImport(&'a str),
    /// Another name: a named import, a variable (which may hold an entry).
    Name,
}

impl<'a> Given<'a> {
    /// What the binding `name` of `program` is, as a hook: a function it declares is one.
    fn name(program: &Program<'a>, name: &str) -> Given<'a> {
        match import_of(program, name) {
            // (`import { default as onStop }` too.)
            Some((Origin::Module(source), ImportDeclarationSpecifier::ImportDefaultSpecifier(_))) => {
                Given::DefaultImport(source)
            }
            Some((Origin::Module(source), ImportDeclarationSpecifier::ImportSpecifier(named)))
                if named.imported.name() == "default" =>
            {
                Given::DefaultImport(source)
            }
            None if declared(program, name) == Some(Declared::Function) => Given::Function,
            _ => Given::Name,
        }
    }
}
const FACTORY_MESSAGE: &str =
    "config factories are not supported: agent-bundle reads the config statically and never runs it";

/// Reads the target export of `source` as a literal value, without executing anything.
///
/// `file_name` picks the dialect (`.ts`, `.mts`, `.tsx`, `.js`, `.mjs`, ...; anything else is
/// read as TypeScript) and names the file in messages.
pub fn extract(file_name: &str, source: &str, target: ExtractTarget) -> Extracted {
    // A large config is read first in a copy of the process (see `transpile`).
    match crate::source::refusal_to_compile(source, || drop(read(file_name, source, target))) {
        Some(refusal) => syntax_error(Span::default(), refusal),
        None => read(file_name, source, target),
    }
}

fn syntax_error(span: Span, message: String) -> Extracted {
    let error = ExtractError::new(ExtractErrorKind::Syntax, span, "", message, String::new());
    Extracted { value: None, errors: vec![error] }
}

/// [`extract`], without trying it first.
fn read(file_name: &str, source: &str, target: ExtractTarget) -> Extracted {
    if let Some((span, message)) = crate::source::too_deep(source) {
        return syntax_error(span, message);
    }
    let source_type = SourceType::from_path(file_name).unwrap_or_else(|_| SourceType::ts());
    // Parse only: nothing downstream hashes identifiers, so skip precomputing their hashes.
    let options = ParseOptions { enable_ident_hashes: false, ..ParseOptions::default() };
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, source_type).with_options(options).parse();

    // What a module may not hold beyond the grammar (`010`, `'\101'`, a `let` declared
    // twice) is an error of the file as Node would load it, though nothing of it runs.
    let syntax = syntax_errors(&parsed.diagnostics, source);
    if !syntax.is_empty() || parsed.panicked {
        return Extracted { value: None, errors: syntax };
    }
    let semantic = SemanticBuilder::new().with_check_syntax_error(true).build(&parsed.program);
    let syntax = syntax_errors(&semantic.diagnostics, source);
    if !syntax.is_empty() {
        return Extracted { value: None, errors: syntax };
    }

    let file = Path::new(file_name).file_name().and_then(|name| name.to_str()).unwrap_or(file_name);
    let scoping = semantic.semantic.scoping();
    let mut reader =
        Reader { source, program: &parsed.program, scoping, target, errors: Vec::new(), path: String::new() };
    let (found, duplicates) = find_target(&parsed.program, target);
    if !duplicates.is_empty() {
        let message = match target {
            ExtractTarget::DefaultExport => {
                "duplicate `export default`: a module has only one default export".to_string()
            }
            ExtractTarget::NamedConst(name) => {
                format!("duplicate export of `{name}`: a module exports a name only once")
            }
        };
        let errors = duplicates
            .into_iter()
            .map(|span| {
                ExtractError::new(ExtractErrorKind::Syntax, span, "", message.clone(), "remove the extra export".into())
            })
            .collect();
        return Extracted { value: None, errors };
    }
    let value = match found {
        Found::Expr(expr) => reader.root(expr, false),
        Found::Const(id, expr) => reader.unchanged(id, None).and_then(|()| reader.root(expr, false)),
        Found::Local(name, span) => reader.follow(name, span),
        Found::Error(error) => {
            reader.errors.push(error);
            None
        }
        Found::Missing => {
            let message = match target {
                ExtractTarget::DefaultExport => format!("{file} has no `export default`"),
                ExtractTarget::NamedConst(name) => format!("{file} has no `export const {name}`"),
            };
            let help = format!("add {}", target.written_form());
            let missing = || ExtractError::new(ExtractErrorKind::MissingExport, Span::default(), "", message, help);
            reader.errors.push(misnamed_export(&parsed.program, target).unwrap_or_else(missing));
            None
        }
    };
    let errors = reader.errors;
    let value = if errors.is_empty() { value } else { None };
    Extracted { value, errors }
}

impl Value {
    /// The JSON `JSON.stringify` would print for the evaluated value (the tests compare what
    /// is extracted so; the stages read `Value`s themselves).
    #[cfg(test)]
    pub fn to_json(&self) -> serde_json::Value {
        match &self.kind {
            ValueKind::Null => serde_json::Value::Null,
            ValueKind::Bool(b) => serde_json::Value::Bool(*b),
            ValueKind::Number(n) => serde_json::Value::Number(n.clone()),
            ValueKind::String(s) => serde_json::Value::String(s.clone()),
            ValueKind::Array(items) => items.iter().map(Value::to_json).collect(),
            ValueKind::Object(props) => {
                serde_json::Value::Object(props.iter().map(|p| (p.key.clone(), p.value.to_json())).collect())
            }
        }
    }

    /// Looks a key up in an object; `None` for a missing key or a non-object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match &self.kind {
            ValueKind::Object(props) => props.iter().find(|p| p.key == key).map(|p| &p.value),
            _ => None,
        }
    }

    /// `"a string"`, `"an array"`, ... for messages.
    pub fn describe(&self) -> &'static str {
        match self.kind {
            ValueKind::Null => "null",
            ValueKind::Bool(_) => "a boolean",
            ValueKind::Number(_) => "a number",
            ValueKind::String(_) => "a string",
            ValueKind::Array(_) => "an array",
            ValueKind::Object(_) => "an object",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Finding the export

enum Found<'x, 'a> {
    Expr(&'x Expression<'a>),
    /// `export const config = …`: the value of the exported `const` itself.
    Const(&'x BindingIdentifier<'a>, &'x Expression<'a>),
    /// `export { local as default }`: the value is the top-level `const local`.
    Local(&'x str, Span),
    Error(ExtractError),
    Missing,
}

fn not_literal(span: impl Into<Span>, path: &str, message: String, help: String) -> ExtractError {
    ExtractError::new(ExtractErrorKind::NotLiteral, span.into(), path, message, help)
}

/// The statement exporting the target, plus the spans of any further statements exporting the
/// same name (an early error in JavaScript that oxc's parser leaves to semantic analysis).
fn find_target<'x, 'a>(program: &'x Program<'a>, target: ExtractTarget) -> (Found<'x, 'a>, Vec<Span>) {
    let mut found = Found::Missing;
    let mut duplicates = Vec::new();
    for statement in &program.body {
        match exported_by(statement, target) {
            None => {}
            Some(this) if matches!(found, Found::Missing) => found = this,
            Some(_) => duplicates.push(statement.span().into()),
        }
    }
    (found, duplicates)
}

/// What a module without `export const <name>` likely meant to be it: an object literal it
/// declares as `<name>` without exporting, or exports under a name one edit from it, case
/// aside (`confg`, `Config`). Not any binding of such a name: a route may keep its own.
fn misnamed_export(program: &Program<'_>, target: ExtractTarget) -> Option<ExtractError> {
    let ExtractTarget::NamedConst(wanted) = target else { return None };
    let objects = |declaration: &VariableDeclaration<'_>| -> Vec<(String, Span)> {
        if declaration.declare {
            return Vec::new();
        }
        let object = |init: &Expression<'_>| matches!(init.get_inner_expression(), Expression::ObjectExpression(_));
        let named = declaration.declarations.iter().filter_map(|declarator| match &declarator.id {
            BindingPattern::BindingIdentifier(id) if declarator.init.as_ref().is_some_and(object) => {
                Some((id.name.as_str().to_owned(), Span::from(id.span)))
            }
            _ => None,
        });
        named.collect()
    };
    let misnamed = |span, message: String| {
        let help = format!("write `export const {wanted} = {{ ... }}`: without it, every setting takes its default");
        ExtractError::new(ExtractErrorKind::MisnamedExport, span, "", message, help)
    };
    let near = |name: &str| strsim::damerau_levenshtein(&name.to_lowercase(), wanted) <= 1;
    program.body.iter().find_map(|statement| match statement {
        Statement::VariableDeclaration(declaration) => objects(declaration)
            .into_iter()
            .find(|(name, _)| name == wanted)
            .map(|(_, span)| misnamed(span, format!("`{wanted}` is declared but not exported"))),
        Statement::ExportDeclaration(export) => match &export.declaration {
            Declaration::VariableDeclaration(declaration) => objects(declaration)
                .into_iter()
                .find(|(name, _)| near(name))
                .map(|(name, span)| misnamed(span, format!("`{name}` is exported, not `{wanted}`"))),
            _ => None,
        },
        _ => None,
    })
}

/// What `statement` exports under the target's name, if anything.
fn exported_by<'x, 'a>(statement: &'x Statement<'a>, target: ExtractTarget) -> Option<Found<'x, 'a>> {
    let wanted = target.export_name();
    let const_help = || {
        format!(
            "write `export const {wanted} = {{ ... }}` with a literal object: agent-bundle reads this file statically and never executes it"
        )
    };
    let wrong_form = |span: oxc_span::Span, form: &str| {
        Found::Error(not_literal(
            span,
            "",
            format!("`export {form} {wanted}` cannot be read statically: write `export const {wanted} = {{ ... }}`"),
            const_help(),
        ))
    };
    let found = match statement {
        Statement::ExportDefaultDeclaration(export) if wanted == "default" => match &export.declaration {
            ExportDefaultDeclarationKind::FunctionDeclaration(function) => {
                Found::Error(factory_error(function.span.into(), target))
            }
            ExportDefaultDeclarationKind::ClassDeclaration(class) => {
                Found::Error(not_literal(class.span, "", "found a class".into(), factory_help(target)))
            }
            ExportDefaultDeclarationKind::TSInterfaceDeclaration(interface) => Found::Error(not_literal(
                interface.span,
                "",
                "found an interface, which is a type and has no value".into(),
                factory_help(target),
            )),
            other => Found::Expr(other.as_expression()?),
        },
        Statement::ExportDeclaration(export) => match &export.declaration {
            Declaration::VariableDeclaration(declaration) => {
                declaration.declarations.iter().find_map(|declarator| match &declarator.id {
                    BindingPattern::BindingIdentifier(id) if id.name.as_str() == wanted => {
                        Some(match (declaration.kind, &declarator.init) {
                            (VariableDeclarationKind::Const, Some(init)) => Found::Const(id, init),
                            (VariableDeclarationKind::Const, None) => Found::Error(not_literal(
                                declarator.span,
                                "",
                                format!("`{wanted}` has no value: write `export const {wanted} = {{ ... }}`"),
                                const_help(),
                            )),
                            (VariableDeclarationKind::Var, _) => wrong_form(declaration.span, "var"),
                            (VariableDeclarationKind::Let, _) => wrong_form(declaration.span, "let"),
                            (VariableDeclarationKind::Using, _) => wrong_form(declaration.span, "using"),
                            (VariableDeclarationKind::AwaitUsing, _) => {
                                wrong_form(declaration.span, "await using")
                            }
                        })
                    }
                    BindingPattern::BindingIdentifier(_) => None,
                    pattern => pattern
                        .get_binding_identifiers()
                        .iter()
                        .any(|id| id.name.as_str() == wanted)
                        .then(|| {
                            Found::Error(not_literal(
                                declarator.span,
                                "",
                                format!("`{wanted}` is destructured and cannot be read statically: write `export const {wanted} = {{ ... }}`"),
                                const_help(),
                            ))
                        }),
                })?
            }
            Declaration::FunctionDeclaration(function)
                if function.id.as_ref().is_some_and(|id| id.name.as_str() == wanted) =>
            {
                wrong_form(function.span, "function")
            }
            Declaration::ClassDeclaration(class)
                if class.id.as_ref().is_some_and(|id| id.name.as_str() == wanted) =>
            {
                wrong_form(class.span, "class")
            }
            Declaration::TSEnumDeclaration(declaration) if declaration.id.name.as_str() == wanted => {
                wrong_form(declaration.span, "enum")
            }
            _ => return None,
        },
        Statement::ExportNamedDeclaration(export) => {
            let specifier = export.specifiers.iter().find(|specifier| {
                specifier.exported.name().as_str() == wanted && specifier.export_kind.is_value()
            })?;
            Found::Local(specifier.local.name().as_str(), specifier.local.span().into())
        }
        Statement::ExportFromDeclaration(export) => {
            let specifier =
                export.specifiers.iter().find(|specifier| specifier.exported.name().as_str() == wanted)?;
            let form = target.written_form();
            Found::Error(not_literal(
                specifier.span,
                "",
                format!(
                    "found a re-export from {}, which cannot be followed statically",
                    super::js_quoted(export.source.value.as_str())
                ),
                format!("write the value in this file: {form}"),
            ))
        }
        _ => return None,
    };
    Some(found)
}

/// Where `program`'s exports name its top-level `name` (`export { config as c }`, `export
/// default config`): uses that change nothing.
/// Where the value of `symbol` is first read, `besides` those reads.
fn other_use(program: &Program<'_>, scoping: &Scoping, symbol: SymbolId, besides: &[Span]) -> Option<Span> {
    struct Reads<'s> {
        scoping: &'s Scoping,
        symbol: SymbolId,
        found: Vec<Span>,
    }
    impl<'a> Visit<'a> for Reads<'_> {
        fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
            let reference = self.scoping.get_reference(it.reference_id());
            if reference.symbol_id() == Some(self.symbol) && reference.is_value() && !reference.flags().is_type() {
                self.found.push(it.span.into());
            }
        }
    }
    let mut reads = Reads { scoping, symbol, found: Vec::new() };
    reads.visit_program(program);
    reads.found.into_iter().find(|span| !besides.contains(span))
}

fn export_spans(program: &Program<'_>, name: &str) -> Vec<Span> {
    let mut spans = Vec::new();
    for statement in &program.body {
        match statement {
            // (`export type { config as C }` reads no value: not an export of one.)
            Statement::ExportNamedDeclaration(export) if export.export_kind.is_value() => spans.extend(
                export
                    .specifiers
                    .iter()
                    .filter(|specifier| specifier.export_kind.is_value() && specifier.local.name().as_str() == name)
                    .map(|specifier| Span::from(specifier.local.span())),
            ),
            Statement::ExportDefaultDeclaration(export) => {
                let named = export.declaration.as_expression().map(Expression::get_inner_expression);
                if let Some(Expression::Identifier(id)) = named
                    && id.name == name
                {
                    spans.push(id.span.into());
                }
            }
            _ => {}
        }
    }
    spans
}

fn factory_help(target: ExtractTarget) -> String {
    format!("export the object literal directly: {}", target.written_form())
}

fn factory_error(span: Span, target: ExtractTarget) -> ExtractError {
    ExtractError::new(ExtractErrorKind::ConfigFactory, span, "", FACTORY_MESSAGE.into(), factory_help(target))
}

/// A top-level `const name = value` (exported or not).
struct TopLevelConst<'x, 'a> {
    id: &'x BindingIdentifier<'a>,
    value: &'x Expression<'a>,
    /// The declarator's.
    span: Span,
}

fn top_level_const<'x, 'a>(program: &'x Program<'a>, name: &str) -> Option<TopLevelConst<'x, 'a>> {
    program.body.iter().find_map(|statement| {
        let declaration = match statement {
            Statement::VariableDeclaration(declaration) => declaration,
            Statement::ExportDeclaration(export) => match &export.declaration {
                Declaration::VariableDeclaration(declaration) => declaration,
                _ => return None,
            },
            _ => return None,
        };
        if declaration.kind != VariableDeclarationKind::Const {
            return None;
        }
        declaration.declarations.iter().find_map(|declarator| match (&declarator.id, &declarator.init) {
            (BindingPattern::BindingIdentifier(id), Some(value)) if id.name.as_str() == name => {
                Some(TopLevelConst { id, value, span: declarator.span.into() })
            }
            _ => None,
        })
    })
}

/// Whether `callee` is agent-bundle's `defineConfig`: imported from `agent-bundle` or
/// `agent-bundle/config` under that name or another (`import { defineConfig as define }`),
/// or through a namespace (`ab.defineConfig`); or named so and imported from nowhere.
fn is_define_config(program: &Program<'_>, callee: &Expression<'_>) -> bool {
    match callee {
        Expression::Identifier(id) => match import_of(program, &id.name) {
            None => id.name == "defineConfig" && !declares(program, &id.name),
            Some((origin, ImportDeclarationSpecifier::ImportSpecifier(specifier))) => {
                origin.is_agent_bundle() && specifier.imported.name() == "defineConfig"
            }
            Some(_) => false,
        },
        Expression::StaticMemberExpression(member) => {
            member.property.name == "defineConfig"
                && matches!(&member.object, Expression::Identifier(namespace)
                    if matches!(import_of(program, &namespace.name),
                        Some((origin, ImportDeclarationSpecifier::ImportNamespaceSpecifier(_))) if origin.is_agent_bundle()))
        }
        _ => false,
    }
}

/// Why a `defineConfig` is not agent-bundle's, where that is the likely reason the call is
/// refused: imported from elsewhere (a package of another name, a mistyped
/// `agent-bundle/confg`), imported as a type only, or declared in the file.
fn foreign_define_config(program: &Program<'_>, callee: &Expression<'_>) -> Option<String> {
    let (origin, specifier) = match callee {
        Expression::Identifier(id) if id.name == "defineConfig" && declares(program, &id.name) => {
            return Some("this `defineConfig` is declared in this file, not agent-bundle's".to_owned());
        }
        Expression::Identifier(id) => import_of(program, &id.name)?,
        Expression::StaticMemberExpression(member) if member.property.name == "defineConfig" => {
            let Expression::Identifier(namespace) = &member.object else { return None };
            let origin = import_source(program, &namespace.name).filter(|origin| !origin.is_agent_bundle())?;
            return Some(format!("this `defineConfig` is {}", origin.not_agent_bundle()));
        }
        _ => return None,
    };
    let ImportDeclarationSpecifier::ImportSpecifier(specifier) = specifier else { return None };
    (specifier.imported.name() == "defineConfig" && !origin.is_agent_bundle())
        .then(|| format!("this `defineConfig` is {}", origin.not_agent_bundle()))
}

/// Where an imported binding comes from.
#[derive(Clone, Copy)]
enum Origin<'a> {
    Module(&'a str),
    /// `import type`: no value (`defineConfig` imported so is undefined when Node loads the
    /// file).
    TypeOnly,
}

impl Origin<'_> {
    /// Whether it is a module agent-bundle's `defineConfig` is imported from.
    fn is_agent_bundle(self) -> bool {
        matches!(self, Origin::Module("agent-bundle" | "agent-bundle/config"))
    }

    /// Why a name imported so is none of agent-bundle's.
    fn not_agent_bundle(self) -> String {
        match self {
            Origin::Module(source) => format!("imported from {}, not from agent-bundle", super::js_quoted(source)),
            Origin::TypeOnly => "imported as a type only (`import type`), which gives no value".to_owned(),
        }
    }

    /// What a name imported so is to a file that is never executed.
    fn never_loaded(self) -> String {
        match self {
            Origin::Module(source) => format!("imported from {}, which is never loaded", super::js_quoted(source)),
            Origin::TypeOnly => "imported as a type only (`import type`), which gives no value".to_owned(),
        }
    }
}

/// The import that binds `name` in the file: where from, and its specifier.
fn import_of<'p, 'a>(program: &'p Program<'a>, name: &str) -> Option<(Origin<'a>, &'p ImportDeclarationSpecifier<'a>)> {
    program.body.iter().find_map(|statement| {
        let Statement::ImportDeclaration(import) = statement else { return None };
        let specifier = import.specifiers.as_ref()?.iter().find(|specifier| specifier.local().name == name)?;
        let type_only = import.import_kind.is_type()
            || matches!(specifier, ImportDeclarationSpecifier::ImportSpecifier(named) if named.import_kind.is_type());
        let origin = if type_only { Origin::TypeOnly } else { Origin::Module(import.source.value.as_str()) };
        Some((origin, specifier))
    })
}

/// Whether the file declares `name` at its top level itself (a function of its own named
/// `defineConfig` is not agent-bundle's).
fn declares(program: &Program<'_>, name: &str) -> bool {
    declared(program, name).is_some()
}

/// How the file declares `name` at its top level, if it does.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Declared {
    /// `function f() {}`, or a variable holding a function written there.
    Function,
    Other,
    /// `var x;`, which gives it no value.
    Bare,
}

fn declared(program: &Program<'_>, name: &str) -> Option<Declared> {
    let is_function = |init: &Expression<'_>| {
        matches!(
            init.get_inner_expression(),
            Expression::ArrowFunctionExpression(_) | Expression::FunctionExpression(_)
        )
    };
    let declared = |declaration: &Declaration<'_>| match declaration {
        Declaration::FunctionDeclaration(function) => {
            function.id.as_ref().filter(|id| id.name == name).map(|_| Declared::Function)
        }
        Declaration::ClassDeclaration(class) => class.id.as_ref().filter(|id| id.name == name).map(|_| Declared::Other),
        Declaration::VariableDeclaration(declaration) => declaration.declarations.iter().find_map(|declarator| {
            let BindingPattern::BindingIdentifier(id) = &declarator.id else { return None };
            match &declarator.init {
                _ if id.name != name => None,
                Some(init) if is_function(init) => Some(Declared::Function),
                None if declaration.kind == VariableDeclarationKind::Var => Some(Declared::Bare),
                _ => Some(Declared::Other),
            }
        }),
        _ => None,
    };
    // (The last of a `var` declared twice is what it holds; `var x;` gives it nothing.)
    let mut all = program.body.iter().rev().filter_map(|statement| match statement {
        Statement::ExportDeclaration(export) => declared(&export.declaration),
        statement => declared(statement.as_declaration()?),
    });
    let first = all.next()?;
    Some(match first {
        Declared::Bare => all.find(|declared| *declared != Declared::Bare).unwrap_or(Declared::Other),
        declared => declared,
    })
}

/// Where an imported binding comes from, for messages.
fn import_source<'a>(program: &Program<'a>, name: &str) -> Option<Origin<'a>> {
    import_of(program, name).map(|(origin, _)| origin)
}

// ---------------------------------------------------------------------------------------------
// Reading literals

struct Reader<'x, 'a> {
    source: &'x str,
    program: &'x Program<'a>,
    /// The file's bindings, to tell that the config's `const` is used nowhere else.
    scoping: &'x Scoping,
    target: ExtractTarget,
    errors: Vec<ExtractError>,
    /// JSON path of the value being read; segments are pushed and truncated as we descend.
    path: String,
}

impl<'x, 'a> Reader<'x, 'a> {
    fn error(&mut self, span: impl Into<Span>, message: String, help: impl Into<String>) {
        let path = self.path.clone();
        self.errors.push(not_literal(span, &path, message, help.into()));
    }

    /// `export default config` / `export { config as default }`: read the top-level `const`
    /// it names, once.
    fn follow(&mut self, name: &str, span: Span) -> Option<Value> {
        match top_level_const(self.program, name) {
            Some(constant) => {
                // (An export specifier reads nothing as the module runs: no order to keep.)
                let value = self.read_only_const(constant, span, false)?;
                self.root(value, true)
            }
            None => {
                let message = match import_source(self.program, name) {
                    Some(origin) => format!("found identifier `{name}` {}", origin.never_loaded()),
                    None => format!("found identifier `{name}`, which is not a top-level `const` in this file"),
                };
                let help = match self.target {
                    ExtractTarget::DefaultExport => format!(
                        "export the object literal directly ({}) or a top-level `const` holding it",
                        self.target.written_form()
                    ),
                    ExtractTarget::NamedConst(_) => format!("write {}", self.target.written_form()),
                };
                self.error(span, message, help);
                None
            }
        }
    }

    /// The value of the config's `const`, exported at `used`: read as written only if nothing
    /// else in the file reads or changes it (`config.targets.push`), and, where the export
    /// reads it as the module runs (`export default config`, `evaluated`), if it is declared
    /// before (the module would throw otherwise).
    fn read_only_const(
        &mut self,
        TopLevelConst { id, value, span }: TopLevelConst<'x, 'a>,
        used: Span,
        evaluated: bool,
    ) -> Option<&'x Expression<'a>> {
        let name = id.name.as_str();
        if evaluated && span.start > used.start {
            let message = format!("`{name}` is exported before it is declared, which throws when Node loads the file");
            self.error(used, message, "write the whole config in the object literal, and export it once");
            return None;
        }
        self.unchanged(id, Some(used))?;
        Some(value)
    }

    /// `Some` where the config's `const` `id` has no value uses but the exports that name it
    /// and the one the build `followed` here from (`defineConfig(config)`), if any: anything
    /// else might change it (`config.tools.push`) where the build, reading its literal as
    /// written, would not see it.
    fn unchanged(&mut self, id: &BindingIdentifier<'a>, followed: Option<Span>) -> Option<()> {
        let exports = export_spans(self.program, &id.name);
        // (Value uses only: `typeof config` in a type reads nothing when Node loads the file.)
        let uses = id.symbol_id.get().map_or(0, |symbol| {
            let references = self.scoping.get_resolved_references(symbol);
            references.filter(|reference| reference.is_value() && !reference.flags().is_type()).count()
        });
        let followed_elsewhere = followed.is_some_and(|span| !exports.contains(&span));
        if uses <= exports.len() + usize::from(followed_elsewhere) {
            return Some(());
        }
        let message = format!(
            "`{}` is used elsewhere in this file too: agent-bundle reads the config as its literal is written, and a \
             change made to it afterwards would not be seen",
            id.name
        );
        // Where it is used so (the declaration, if that use cannot be found).
        let besides: Vec<Span> = exports.into_iter().chain(followed).collect();
        let at = id.symbol_id.get().and_then(|symbol| other_use(self.program, self.scoping, symbol, &besides));
        self.error(
            at.unwrap_or(id.span.into()),
            message,
            "write the whole config in the object literal, and export it once",
        );
        None
    }

    /// The exported expression: an object literal, possibly inside `defineConfig(...)`
    /// (default export only) and possibly named by one top-level `const`.
    fn root(&mut self, expr: &'x Expression<'a>, mut followed: bool) -> Option<Value> {
        let mut expr = expr.get_inner_expression();
        let mut in_define = false;
        loop {
            match expr {
                Expression::ObjectExpression(object) => return self.object(object),
                Expression::Identifier(id) if !followed && id.name.as_str() != "undefined" => {
                    let span = id.span.into();
                    let name = id.name.as_str();
                    match top_level_const(self.program, name) {
                        Some(constant) => {
                            followed = true;
                            expr = self.read_only_const(constant, span, true)?.get_inner_expression();
                        }
                        None => return self.follow(name, span),
                    }
                }
                Expression::ArrowFunctionExpression(_) | Expression::FunctionExpression(_) => {
                    self.errors.push(factory_error(expr.span().into(), self.target));
                    return None;
                }
                Expression::CallExpression(call)
                    if !in_define
                        && self.target == ExtractTarget::DefaultExport
                        && is_define_config(self.program, &call.callee) =>
                {
                    in_define = true;
                    match call.arguments.as_slice() {
                        [Argument::SpreadElement(spread)] => {
                            self.error(spread.span, "spread is not allowed".into(), factory_help(self.target));
                            return None;
                        }
                        [argument] => {
                            expr = argument.as_expression().expect("not a spread").get_inner_expression();
                        }
                        arguments => {
                            self.error(
                                call.span,
                                format!(
                                    "`defineConfig` takes exactly one object literal, found {} arguments",
                                    arguments.len()
                                ),
                                factory_help(self.target),
                            );
                            return None;
                        }
                    }
                }
                _ => {
                    let (message, help) = match literal_kind(expr) {
                        Some(kind) if in_define => {
                            (format!("`defineConfig` expects an object literal, found {kind}"), factory_help(self.target))
                        }
                        Some(kind) => (format!("expected an object literal, found {kind}"), factory_help(self.target)),
                        None => match expr {
                            Expression::CallExpression(call) if self.target == ExtractTarget::DefaultExport => {
                                match foreign_define_config(self.program, &call.callee) {
                                    Some(why) => (
                                        why,
                                        "import it from agent-bundle: `import { defineConfig } from 'agent-bundle/config'`".to_string(),
                                    ),
                                    None => (
                                        self.found(expr),
                                        "only `defineConfig({ ... })` may wrap the config: agent-bundle reads this file statically and never executes it".to_string(),
                                    ),
                                }
                            }
                            _ => (self.found(expr), LITERAL_HELP.to_string()),
                        },
                    };
                    self.error(expr.span(), message, help);
                    return None;
                }
            }
        }
    }

    fn value(&mut self, expr: &Expression<'a>) -> Option<Value> {
        let expr = expr.get_inner_expression();
        let span = Span::from(expr.span());
        let kind = match expr {
            Expression::NullLiteral(_) => ValueKind::Null,
            Expression::BooleanLiteral(b) => ValueKind::Bool(b.value),
            Expression::NumericLiteral(n) => ValueKind::Number(self.number(n.value, span)?),
            Expression::StringLiteral(s) => {
                if s.lone_surrogates {
                    self.error(
                        span,
                        "found a string with a lone surrogate, which has no UTF-8 form".into(),
                        "write the text without it: half of a surrogate pair (`\\uD800` alone) is no character",
                    );
                    return None;
                }
                ValueKind::String(s.value.as_str().to_string())
            }
            Expression::TemplateLiteral(t) => {
                let quasi = match (t.expressions.is_empty(), t.quasis.as_slice()) {
                    (true, [quasi]) => quasi,
                    _ => {
                        self.error(span, "found a template literal with substitutions".into(), LITERAL_HELP);
                        return None;
                    }
                };
                match &quasi.value.cooked {
                    Some(cooked) if !quasi.lone_surrogates => ValueKind::String(cooked.as_str().to_string()),
                    _ => {
                        self.error(
                            span,
                            "found a template literal that cannot be decoded to UTF-8".into(),
                            LITERAL_HELP,
                        );
                        return None;
                    }
                }
            }
            Expression::UnaryExpression(u)
                if matches!(u.operator, UnaryOperator::UnaryNegation | UnaryOperator::UnaryPlus) =>
            {
                let negative = u.operator == UnaryOperator::UnaryNegation;
                match u.argument.get_inner_expression() {
                    Expression::NumericLiteral(n) => {
                        ValueKind::Number(self.number(if negative { -n.value } else { n.value }, span)?)
                    }
                    Expression::Identifier(id) if matches!(id.name.as_str(), "Infinity" | "NaN") => {
                        self.error(
                            span,
                            format!("found `{}`; JSON has no such number", self.snippet(span)),
                            "write a finite number literal: agent-bundle reads this file statically and never executes it",
                        );
                        return None;
                    }
                    _ => {
                        let message =
                            format!("found a unary `{}` expression `{}`", u.operator.as_str(), self.snippet(span));
                        self.error(span, message, LITERAL_HELP);
                        return None;
                    }
                }
            }
            Expression::ArrayExpression(array) => ValueKind::Array(self.array(array)?),
            Expression::ObjectExpression(object) => return self.object(object),
            // (A key holding it is absent: only an element reaches here.)
            Expression::Identifier(id) if id.name.as_str() == "undefined" => {
                let help = "remove the element instead";
                self.error(span, "found `undefined`, which JSON cannot represent".into(), help);
                return None;
            }
            _ => {
                let message = self.found(expr);
                let given = match expr {
                    Expression::ArrowFunctionExpression(_) | Expression::FunctionExpression(_) => Some(Given::Function),
                    Expression::Identifier(id) => Some(Given::name(self.program, &id.name)),
                    _ => None,
                };
                let help = match (self.handler_slot(), given, self.joined_across_lines(expr)) {
                    (Some((event, in_entry)), Some(given), _) => handler_help(event, in_entry, given),
                    (_, _, Some(how)) => format!(
                        "is a `,` missing at the end of the line above? Without it, the value there and the next \
                         line read as one expression ({how})"
                    ),
                    _ => LITERAL_HELP.to_owned(),
                };
                self.error(span, message, &help);
                return None;
            }
        };
        Some(Value { kind, span })
    }

    /// The event whose handler the value being read is (`hooks.stop`, `hooks.stop[1]`,
    /// `hooks.stop.handler`), if it is one, and whether it is an entry's `handler`.
    fn handler_slot(&self) -> Option<(&str, bool)> {
        let rest = self.path.strip_prefix("hooks.")?;
        let (rest, in_entry) = rest.strip_suffix(".handler").map_or((rest, false), |rest| (rest, true));
        let event = match rest.split_once('[') {
            Some((event, index)) => {
                index.strip_suffix(']').filter(|n| n.bytes().all(|b| b.is_ascii_digit())).map(|_| event)?
            }
            None => rest,
        };
        (!event.is_empty() && !event.contains(['.', '['])).then_some((event, in_entry))
    }

    fn number(&mut self, value: f64, span: Span) -> Option<serde_json::Number> {
        let number = json_number(value);
        if number.is_none() {
            let message = format!("found the number `{}`, which overflows to Infinity", self.snippet(span));
            self.error(
                span,
                message,
                "write a finite number literal: agent-bundle reads this file statically and never executes it",
            );
        }
        number
    }

    fn array(&mut self, array: &ArrayExpression<'a>) -> Option<Vec<Value>> {
        let mut items = Vec::with_capacity(array.elements.len());
        let mut ok = true;
        let len = self.path.len();
        for (index, element) in array.elements.iter().enumerate() {
            use std::fmt::Write as _;
            let _ = write!(self.path, "[{index}]");
            let item = match element {
                ArrayExpressionElement::SpreadElement(spread) => {
                    self.error(spread.span, "spread is not allowed".into(), LITERAL_HELP);
                    None
                }
                ArrayExpressionElement::Elision(hole) => {
                    self.error(
                        hole.span,
                        "array holes are not allowed".into(),
                        "write `null` or remove the extra comma",
                    );
                    None
                }
                element => self.value(element.as_expression().expect("expression element")),
            };
            self.path.truncate(len);
            match item {
                Some(item) if ok => items.push(item),
                Some(_) => {}
                None => ok = false,
            }
        }
        ok.then_some(items)
    }

    fn object(&mut self, object: &ObjectExpression<'a>) -> Option<Value> {
        let mut props = Vec::new();
        let mut ok = true;
        let len = self.path.len();
        let mut seen = std::collections::HashSet::new();
        for property in &object.properties {
            let property = match property {
                ObjectPropertyKind::SpreadProperty(spread) => {
                    self.error(spread.span, "spread is not allowed".into(), LITERAL_HELP);
                    ok = false;
                    continue;
                }
                ObjectPropertyKind::ObjectProperty(property) => property,
            };
            let key_span = Span::from(property.key.span());
            let key = if property.computed {
                self.error(
                    key_span,
                    "computed keys are not allowed".into(),
                    "write the key as a plain name or a quoted string",
                );
                None
            } else {
                self.key(&property.key, key_span)
            };
            if let Some(key) = &key {
                self.path = super::join_key(&self.path, key);
                if !seen.insert(key.clone()) {
                    // As tsc says (TS1117): JavaScript would drop the earlier value silently.
                    let message = format!("`{key}` appears twice in this object");
                    self.error(key_span, message, "remove one of them: only the later would count");
                }
            }
            let name = key.as_deref().unwrap_or("");
            let rejected = match (property.kind, property.method, property.shorthand) {
                (PropertyKind::Get, ..) => Some((format!("found a getter `{name}`"), LITERAL_HELP.to_string())),
                (PropertyKind::Set, ..) => Some((format!("found a setter `{name}`"), LITERAL_HELP.to_string())),
                (_, true, _) => Some((format!("found a method `{name}`"), LITERAL_HELP.to_string())),
                (_, _, true) => Some((
                    format!("shorthand property `{name}` refers to a variable"),
                    match self.handler_slot() {
                        Some((event, in_entry)) => handler_help(event, in_entry, Given::name(self.program, name)),
                        None => format!(
                            "write the value inline: `{name}: ...`; agent-bundle reads this file statically and never \
                             executes it"
                        ),
                    },
                )),
                _ => None,
            };
            let value = if let Some((message, help)) = rejected {
                self.error(property.span, message, help);
                None
            } else if !property.computed && key.as_deref() == Some("__proto__") {
                self.path.truncate(len);
                self.error(
                    key_span,
                    "`__proto__` keys are not allowed: JavaScript sets the prototype instead of adding a key".into(),
                    "rename the key",
                );
                None
            } else if matches!(property.value.get_inner_expression(), Expression::Identifier(id) if id.name == "undefined")
            {
                // Absent, as JSON writes it and TypeScript takes an optional key.
                self.path.truncate(len);
                continue;
            } else {
                self.value(&property.value)
            };
            self.path.truncate(len);
            match (key, value) {
                (Some(key), Some(value)) if ok => props.push(Property { key, key_span, value }),
                (Some(_), Some(_)) => {}
                _ => ok = false,
            }
        }
        ok.then(|| Value { kind: ValueKind::Object(in_js_order(props)), span: object.span.into() })
    }

    /// The string a non-computed key stands for.
    fn key(&mut self, key: &PropertyKey<'a>, span: Span) -> Option<String> {
        match key {
            PropertyKey::StaticIdentifier(id) => Some(id.name.as_str().to_string()),
            PropertyKey::StringLiteral(s) if !s.lone_surrogates => Some(s.value.as_str().to_string()),
            PropertyKey::StringLiteral(_) => {
                self.error(
                    span,
                    "found a key with a lone surrogate, which has no UTF-8 form".into(),
                    "write the key as a valid Unicode string",
                );
                None
            }
            PropertyKey::NumericLiteral(n) => Some(js_number_to_string(n.value)),
            PropertyKey::BigIntLiteral(_) => {
                self.error(span, "bigint keys are not allowed".into(), "write the key as a quoted string");
                None
            }
            _ => {
                self.error(
                    span,
                    format!("unsupported key `{}`", self.snippet(span)),
                    "write the key as a plain name or a quoted string",
                );
                None
            }
        }
    }

    /// Source text for a message: one line, at most 40 characters.
    /// What `expr` makes of a value and what follows it on a later line, where that is most
    /// likely a list's next entry after a missing comma (`'a'` then `['b']` reads as an
    /// index): an index, a call, a tagged template or a subtraction.
    fn joined_across_lines(&self, expr: &Expression<'a>) -> Option<&'static str> {
        let (value_end, next, how) = match expr {
            Expression::ComputedMemberExpression(member) => {
                (member.object.span().end, member.expression.span().start, "an index")
            }
            Expression::CallExpression(call) => (call.callee.span().end, call.span.end, "a call"),
            Expression::TaggedTemplateExpression(tagged) => {
                (tagged.tag.span().end, tagged.quasi.span.start, "a tagged template")
            }
            Expression::BinaryExpression(binary) if binary.operator == BinaryOperator::Subtraction => {
                (binary.left.span().end, binary.right.span().start, "a subtraction")
            }
            _ => return None,
        };
        let gap = self.source.get(value_end as usize..next as usize)?;
        // (A call's arguments follow its opening parenthesis.)
        let gap = if how == "a call" { &gap[..gap.find('(')?] } else { gap };
        gap.contains('\n').then_some(how)
    }

    fn snippet(&self, span: impl Into<Span>) -> String {
        let span = span.into();
        let text = self.source.get(span.range()).unwrap_or("");
        let first_line = text.lines().next().unwrap_or("");
        let truncated = first_line.len() < text.len() || first_line.chars().count() > 40;
        let mut out: String = first_line.chars().take(40).collect();
        if truncated {
            out.push('…');
        }
        out
    }

    /// "found ..." for an expression that is not a literal.
    fn found(&self, expr: &Expression<'a>) -> String {
        let snippet = || self.snippet(expr.span());
        match expr {
            Expression::Identifier(id) => match import_source(self.program, id.name.as_str()) {
                Some(origin) => format!("found identifier `{}` {}", id.name.as_str(), origin.never_loaded()),
                None => format!("found identifier `{}`", id.name.as_str()),
            },
            Expression::CallExpression(call) => {
                format!("found a function call `{}(...)`", self.snippet(call.callee.span()))
            }
            Expression::NewExpression(new) => {
                format!("found a `new` expression `new {}(...)`", self.snippet(new.callee.span()))
            }
            Expression::ArrowFunctionExpression(_) => "found an arrow function".into(),
            Expression::FunctionExpression(_) => "found a function".into(),
            Expression::ClassExpression(_) => "found a class".into(),
            Expression::TemplateLiteral(_) => "found a template literal with substitutions".into(),
            Expression::TaggedTemplateExpression(t) => {
                format!("found a tagged template `{}`...``", self.snippet(t.tag.span()))
            }
            Expression::RegExpLiteral(_) => format!("found a regular expression `{}`", snippet()),
            Expression::BigIntLiteral(_) => format!("found a bigint `{}`", snippet()),
            Expression::BinaryExpression(b) => {
                format!("found a binary `{}` expression `{}`", b.operator.as_str(), snippet())
            }
            Expression::LogicalExpression(l) => {
                format!("found a logical `{}` expression `{}`", l.operator.as_str(), snippet())
            }
            Expression::ConditionalExpression(_) => {
                format!("found a conditional expression `{}`", snippet())
            }
            Expression::UnaryExpression(u) => {
                format!("found a unary `{}` expression `{}`", u.operator.as_str(), snippet())
            }
            Expression::UpdateExpression(_) => {
                format!("found an update expression `{}`", snippet())
            }
            Expression::AssignmentExpression(_) => format!("found an assignment `{}`", snippet()),
            Expression::SequenceExpression(_) => {
                format!("found a comma expression `{}`", snippet())
            }
            Expression::AwaitExpression(_) => {
                format!("found an `await` expression `{}`", snippet())
            }
            Expression::YieldExpression(_) => format!("found a `yield` expression `{}`", snippet()),
            Expression::ImportExpression(_) => format!("found a dynamic import `{}`", snippet()),
            Expression::ImportMeta(_) => "found `import.meta`".into(),
            Expression::NewTarget(_) => "found `new.target`".into(),
            Expression::ThisExpression(_) => "found `this`".into(),
            Expression::Super(_) => "found `super`".into(),
            Expression::ChainExpression(_) => format!("found an optional chain `{}`", snippet()),
            Expression::StaticMemberExpression(_)
            | Expression::ComputedMemberExpression(_)
            | Expression::PrivateFieldExpression(_) => {
                format!("found a member expression `{}`", snippet())
            }
            Expression::JSXElement(_) | Expression::JSXFragment(_) => "found JSX".into(),
            Expression::TSInstantiationExpression(_) => {
                format!("found an instantiation expression `{}`", snippet())
            }
            _ => format!("found the expression `{}`", snippet()),
        }
    }
}

/// The errors of `diagnostics` (oxc's), as this reader reports them.
fn syntax_errors(diagnostics: &oxc_diagnostics::Diagnostics, source: &str) -> Vec<ExtractError> {
    let error = |diagnostic: &oxc_diagnostics::OxcDiagnostic| {
        let (span, related) = crate::source::oxc_span(diagnostic);
        let help = match diagnostic.help.as_deref() {
            Some(help) => help.to_owned(),
            None => separator_help(&diagnostic.message, source, span).unwrap_or_default(),
        };
        ExtractError {
            related,
            ..ExtractError::new(ExtractErrorKind::Syntax, span, "", diagnostic.message.to_string(), help)
        }
    };
    diagnostics.errors().map(error).collect()
}

/// What most likely stopped the parser where it says "Expected `,` or `<closer>` but found
/// `<token>`" at `span` of a config, where it says no more: a `,` missing between two values
/// (its most frequent cause, a key after them included); but the `closer` itself where what
/// follows can be no value (a statement, or a key in an array); a `:` after a key written
/// bare on the line of its value (`name 'x'`). `None` where the parser met a closing
/// bracket, `;`, `=>` or a key's `:`: a bracket is missing or misplaced then, which its
/// message says.
fn separator_help(message: &str, source: &str, span: crate::source::Span) -> Option<String> {
    // What starts a statement, never a value (`function`, `class` and `async` may start a
    // value too, an inline handler: where a call's `)` is expected, they are statements).
    const STATEMENTS: [&str; 18] = [
        "const",
        "let",
        "var",
        "export",
        "import",
        "if",
        "return",
        "type",
        "interface",
        "enum",
        "declare",
        "for",
        "while",
        "do",
        "switch",
        "throw",
        "try",
        "namespace",
    ];
    const VALUE_STATEMENTS: [&str; 3] = ["function", "class", "async"];
    let (closer, found) = message.strip_prefix("Expected `,` or `")?.split_once("` but found ")?;
    let found = found.strip_prefix('`')?.strip_suffix('`')?;
    if [")", ";", "}", "]", "=>", ":"].contains(&found) {
        return None;
    }
    let before = source.get(..span.start as usize)?;
    let line_start = before.rfind('\n').map_or(0, |at| at + 1);
    // (In an import's or export's list of names, what looks like a statement is a name.)
    let listing = open_brace(before).is_some_and(lists_names);
    let comma =
        || Some("is a `,` missing after the value before it (perhaps at the end of the line above)?".to_owned());
    let closer_missing = || {
        Some(format!("is the `{closer}` closing what is open above missing (perhaps at the end of the line above)?"))
    };
    // A key follows (a keyword may be one): in an array, its closer is missing; in an object,
    // the comma before the key; in a call's arguments, a `}` before it closed the object early.
    if source.get(span.end as usize..)?.trim_start().starts_with(':') {
        return match closer {
            "]" => closer_missing(),
            ")" => {
                Some("is the `}` before it one too many, where a `,` belongs (closing the object early)?".to_owned())
            }
            _ => comma(),
        };
    }
    // A name right after a string's closing quote: a quote inside the string ended it.
    if let Some(quote) = before.chars().next_back().filter(|c| ['\'', '"'].contains(c) && found == "Identifier") {
        let other = if quote == '\'' { '"' } else { '\'' };
        return Some(format!(
            "is a quote inside the string before it unescaped? Write it `\\{quote}`, or quote the string with {other}"
        ));
    }
    // A statement's word (where a call's `)` is expected, or at a line's start, a function or
    // class too: an inline handler is indented in its object), but in a list of imported names.
    let declares = VALUE_STATEMENTS.contains(&found) && (closer == ")" || line_start == span.start as usize);
    if !listing && (STATEMENTS.contains(&found) || declares) {
        return closer_missing();
    }
    match bare_key_before(before, value_starts(found)).filter(|_| closer == "}") {
        Some(key) => Some(format!("is a `:` missing after the key `{key}`?")),
        None => comma(),
    }
}

/// Whether the token oxc names `found` can only start a value, never a key: after a bare
/// name, on the next line too, it asks for the `:` between them.
fn value_starts(found: &str) -> bool {
    ["string", "[", "{", "decimal", "true", "false", "null"].contains(&found)
}

/// The name `text` ends with where it stands as an object literal's key (after `{` or `,`,
/// a comment aside; not in an import's or a declaration's braces) with its value after it:
/// on the same line, or on the next where what follows can only be a value (`across`);
/// else a shorthand and the next key are likelier.
fn bare_key_before(text: &str, across: bool) -> Option<&str> {
    let mut text = if across { text.trim_end() } else { text.trim_end_matches([' ', '\t']) };
    if let Some(comment) = text.strip_suffix("*/").and_then(|inside| inside.rfind("/*")) {
        text = text[..comment].trim_end_matches([' ', '\t']);
    }
    let start = after_last(text, |c| !(c.is_alphanumeric() || c == '_' || c == '$'));
    let key = &text[start..];
    let before = without_line_comment(trim_js_end(&text[..start]));
    let is_name = key.chars().next().is_some_and(|first| !first.is_ascii_digit());
    (is_name && before.ends_with(['{', ',']) && in_object_literal(before)).then_some(key)
}

/// `text` without the white space it ends with, as JavaScript reads it: a byte order mark is
/// one too.
fn trim_js_end(text: &str) -> &str {
    text.trim_end_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}

/// Where the text after the last character of `text` that `is` starts (0 when none is):
/// past that character, however many bytes it takes (a no-break space before a name does).
fn after_last(text: &str, is: impl Fn(char) -> bool) -> usize {
    text.char_indices().rev().find(|&(_, c)| is(c)).map_or(0, |(at, c)| at + c.len_utf8())
}

/// `text` without the comments it ends with: a `// …` ending its last line (not one in a
/// string), a `/* … */`, and lines holding comments alone.
fn without_line_comment(text: &str) -> &str {
    let mut text = text.trim_end();
    loop {
        if let Some(inside) = text.strip_suffix("*/").and_then(|inside| inside.rfind("/*")) {
            text = text[..inside].trim_end();
            continue;
        }
        let line_start = text.rfind('\n').map_or(0, |at| at + 1);
        match line_comment(&text[line_start..]) {
            Some(at) => text = text[..line_start + at].trim_end(),
            None => return text,
        }
    }
}

/// Where the `//` comment of `line` starts, outside its strings, if it has one.
fn line_comment(line: &str) -> Option<usize> {
    let mut quote = None;
    let mut chars = line.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => _ = chars.next(),
            (Some(open), c) if c == open => quote = None,
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '/') if chars.peek().is_some_and(|(_, next)| *next == '/') => return Some(at),
            _ => {}
        }
    }
    None
}

/// Where the brace that is open at the end of `text` starts, if one is (not a bracket or
/// parenthesis opened after it), with the text before it.
fn open_brace(text: &str) -> Option<&str> {
    let mut depth = 0usize;
    for (at, c) in text.char_indices().rev() {
        match c {
            '}' | ']' | ')' => depth += 1,
            '(' | '[' | '{' if depth > 0 => depth -= 1,
            '{' => return Some(&text[..at]),
            '(' | '[' => return None,
            _ => {}
        }
    }
    None
}

/// Whether the open brace whose text before is `before` lists names: an import's or an
/// export's (`import {`, `import x, {`, `export {`, `export type {`).
fn lists_names(before: &str) -> bool {
    let line = before.rsplit('\n').next().unwrap_or("").trim_start();
    line.starts_with("import") || line.starts_with("export {") || line.starts_with("export type")
}

/// Whether `text`, which ends inside braces, is inside an object literal's: the brace that
/// opens them lists no names, nor follows `const`, `let`, `var` or `type`.
fn in_object_literal(text: &str) -> bool {
    open_brace(text).is_some_and(|before| {
        let word = trim_js_end(before);
        let word = &word[after_last(word, |c| !c.is_alphanumeric())..];
        !lists_names(before) && !["import", "export", "type", "const", "let", "var"].contains(&word)
    })
}

/// "a string", "an array", ... when `expr` is a literal this reader would accept.
fn literal_kind(expr: &Expression<'_>) -> Option<&'static str> {
    Some(match expr {
        Expression::NullLiteral(_) => "null",
        Expression::BooleanLiteral(_) => "a boolean",
        Expression::NumericLiteral(_) => "a number",
        Expression::UnaryExpression(u)
            if matches!(u.operator, UnaryOperator::UnaryNegation | UnaryOperator::UnaryPlus)
                && matches!(u.argument.get_inner_expression(), Expression::NumericLiteral(_)) =>
        {
            "a number"
        }
        Expression::StringLiteral(_) => "a string",
        Expression::TemplateLiteral(t) if t.expressions.is_empty() => "a string",
        Expression::ArrayExpression(_) => "an array",
        Expression::Identifier(id) if id.name.as_str() == "undefined" => "`undefined`",
        _ => return None,
    })
}

/// Object properties in JavaScript order: array-index keys first, ascending, then the others
/// as written (keys are unique: a repeated one is an error).
fn in_js_order(mut props: Vec<Property>) -> Vec<Property> {
    if props.iter().any(|p| array_index(&p.key).is_some()) {
        // Stable: non-index keys keep insertion order.
        props.sort_by_key(|p| array_index(&p.key).map_or((1, 0), |i| (0, i)));
    }
    props
}

/// `Some(n)` when `key` is a canonical array index ("0" ..= "4294967294").
fn array_index(key: &str) -> Option<u32> {
    let bytes = key.as_bytes();
    let canonical = match bytes {
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] => rest.len() < 10 && rest.iter().all(u8::is_ascii_digit),
        _ => false,
    };
    if !canonical {
        return None;
    }
    key.parse::<u64>().ok().filter(|&n| n < u64::from(u32::MAX)).map(|n| n as u32)
}

/// A finite JavaScript number as JSON: whole numbers become integers when they fit (printed
/// with the digits JavaScript prints), everything else stays a float. `None` for ±Infinity/NaN.
fn json_number(value: f64) -> Option<serde_json::Number> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if !value.is_finite() {
        return None;
    }
    if value.fract() == 0.0 {
        if (0.0..=EXACT).contains(&value) {
            return Some((value as u64).into());
        }
        if (-EXACT..0.0).contains(&value) {
            return Some((value as i64).into());
        }
        if value.abs() < 1e21 {
            // JavaScript prints the shortest round-trip digits padded with zeros
            // (2**60 → 1152921504606847000); Rust's `Display` does the same.
            let digits = value.to_string();
            if let Ok(n) = digits.parse::<u64>() {
                return Some(n.into());
            }
            if let Ok(n) = digits.parse::<i64>() {
                return Some(n.into());
            }
        }
    }
    serde_json::Number::from_f64(value)
}

/// JavaScript's `Number.prototype.toString()` (the property key a numeric key stands for).
fn js_number_to_string(value: f64) -> String {
    if value.is_nan() {
        return "NaN".into();
    }
    if value == 0.0 {
        return "0".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if value < 0.0 {
        return format!("-{}", js_number_to_string(-value));
    }
    // Shortest round-trip digits and exponent: "1.5e0", "1e21", "1.2345e-7".
    let exp_form = format!("{value:e}");
    let (mantissa, exponent) = exp_form.split_once('e').expect("`{:e}` has an exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i32;
    let n = exponent.parse::<i32>().expect("integer exponent") + 1;
    if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let sign = if n - 1 < 0 { '-' } else { '+' };
        let rest = if k > 1 { format!(".{}", &digits[1..]) } else { String::new() };
        format!("{}{rest}e{sign}{}", &digits[..1], (n - 1).abs())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::source::LineIndex;

    const SEED_HOOKS_AND_SCRIPTS: &str = r#"import { defineConfig } from 'agent-bundle/config';
export default defineConfig({
  hooks: { sessionStart: { handler: './src/hooks/session-start.ts' } },
  plugin: { name: 'hooks-and-scripts', description: 'Release preparation helpers.' },
  targets: ['portable', 'codex', 'claude'],
});
"#;

    /// The seed's guarded config (the config reader's tests use it too).
    pub(crate) const SEED_GUARDED: &str = r#"import { defineConfig } from 'agent-bundle/config';
export default defineConfig({
  hooks: {
    beforeTool: [
      './src/hooks/audit.ts',
      { handler: './src/hooks/guard-writes.ts', targets: ['claude'], timeout: 10, tools: ['file.write', 'shell'] },
    ],
  },
  plugin: { description: 'Guarded tooling.', name: 'guarded' },
  targets: ['portable', 'claude'],
});
"#;

    const SEED_PREBUILT: &str = r#"import { defineConfig } from 'agent-bundle/config';
export default defineConfig({
  hooks: {
    afterTool: [{ args: ['--host', 'claude'], handler: { prebuilt: './dist/runtime/hook/index.js' }, targets: ['claude'], tools: ['file.write'] }],
  },
  payload: { runtime: { source: './dist/runtime', targets: ['claude'] } },
  plugin: { description: 'Self-compiled runtime.', name: 'prebuilt-plugin' },
  targets: ['claude'],
});
"#;

    const CONFIG: &str = "agent-bundle.config.ts";

    fn value(source: &str) -> Value {
        let out = extract(CONFIG, source, ExtractTarget::DefaultExport);
        assert_eq!(out.errors, vec![], "unexpected errors for:\n{source}");
        out.value.expect("a value when there are no errors")
    }

    /// Serialized, so that key order is compared too.
    fn json(source: &str) -> String {
        serde_json::to_string(&value(source).to_json()).unwrap()
    }

    fn errors(source: &str) -> Vec<ExtractError> {
        errors_for(ExtractTarget::DefaultExport, source)
    }

    fn errors_for(target: ExtractTarget, source: &str) -> Vec<ExtractError> {
        let out = extract(CONFIG, source, target);
        assert!(out.value.is_none(), "no value when there are errors");
        assert!(!out.errors.is_empty(), "expected errors for:\n{source}");
        out.errors
    }

    fn single(source: &str) -> ExtractError {
        let mut errors = errors(source);
        assert_eq!(errors.len(), 1, "{errors:#?}");
        errors.remove(0)
    }

    fn wrap(body: &str) -> String {
        format!("import {{ defineConfig }} from 'agent-bundle/config';\nexport default defineConfig({{ {body} }});\n")
    }

    fn text(source: &str, span: Span) -> &str {
        &source[span.range()]
    }

    // --- accepted forms ----------------------------------------------------------------------

    #[test]
    fn seed_configs_match_node_json_stringify() {
        // Expected strings printed by node 20 for `JSON.stringify(cfg)` with `defineConfig = x => x`.
        assert_eq!(
            json(SEED_HOOKS_AND_SCRIPTS),
            r#"{"hooks":{"sessionStart":{"handler":"./src/hooks/session-start.ts"}},"plugin":{"name":"hooks-and-scripts","description":"Release preparation helpers."},"targets":["portable","codex","claude"]}"#
        );
        assert_eq!(
            json(SEED_GUARDED),
            r#"{"hooks":{"beforeTool":["./src/hooks/audit.ts",{"handler":"./src/hooks/guard-writes.ts","targets":["claude"],"timeout":10,"tools":["file.write","shell"]}]},"plugin":{"description":"Guarded tooling.","name":"guarded"},"targets":["portable","claude"]}"#
        );
        assert_eq!(
            json(SEED_PREBUILT),
            r#"{"hooks":{"afterTool":[{"args":["--host","claude"],"handler":{"prebuilt":"./dist/runtime/hook/index.js"},"targets":["claude"],"tools":["file.write"]}]},"payload":{"runtime":{"source":"./dist/runtime","targets":["claude"]}},"plugin":{"description":"Self-compiled runtime.","name":"prebuilt-plugin"},"targets":["claude"]}"#
        );
    }

    #[test]
    fn spans_and_lookup() {
        let v = value(SEED_GUARDED);
        assert_eq!(v.describe(), "an object");
        let name = v.get("plugin").and_then(|p| p.get("name")).unwrap();
        assert_eq!(name.kind, ValueKind::String("guarded".into()));
        assert_eq!(text(SEED_GUARDED, name.span), "'guarded'");
        let ValueKind::Object(props) = &v.kind else { panic!() };
        assert_eq!(text(SEED_GUARDED, props[1].key_span), "plugin");
        let before = v.get("hooks").unwrap().get("beforeTool").unwrap();
        assert_eq!(before.describe(), "an array");
        let ValueKind::Array(items) = &before.kind else { panic!() };
        assert_eq!(items[0].describe(), "a string");
        assert_eq!(items[1].get("timeout").unwrap().describe(), "a number");
        assert_eq!(items[1].get("timeout").unwrap().kind, ValueKind::Number(10u64.into()));
        assert!(v.get("missing").is_none());
        assert!(items[0].get("x").is_none());
        assert_eq!(value("export default { a: null, b: true };").get("a").unwrap().describe(), "null");
        assert_eq!(value("export default { a: null, b: true };").get("b").unwrap().describe(), "a boolean");
    }

    #[test]
    fn typescript_wrappers_are_peeled() {
        let expected = r#"{"a":["x",1],"b":{"c":true}}"#;
        for source in [
            "export default defineConfig({ a: ['x', 1] as const, b: { c: true } satisfies Record<string, boolean> });",
            "export default defineConfig({ a: ['x', 1], b: { c: true } } as const);",
            "import type { AgentBundleConfig } from 'agent-bundle';\nexport default { a: ['x', 1], b: { c: true } } satisfies AgentBundleConfig;",
            "export default defineConfig({ a: ['x', 1], b: { c: true } } satisfies AgentBundleConfig) as unknown as AgentBundleConfig;",
            "export default defineConfig(<AgentBundleConfig>{ a: [('x'), 1!], b: ({ c: (true as boolean) })! });",
            "export default ((defineConfig<AgentBundleConfig>(({ a: ['x' as string, <number>1], b: { c: true } }))));",
        ] {
            assert_eq!(json(source), expected, "{source}");
        }
    }

    #[test]
    fn export_default_forms() {
        assert_eq!(json("export default { a: 1 };"), r#"{"a":1}"#);
        assert_eq!(json("export default {};"), "{}");
        assert_eq!(json("const config = { a: 1 };\nexport default config;"), r#"{"a":1}"#);
        assert_eq!(
            json(
                "import { defineConfig } from 'agent-bundle';\nconst config = defineConfig({ a: 1 });\nexport default config;"
            ),
            r#"{"a":1}"#
        );
        assert_eq!(
            json("const config = { a: 1 } as const;\nexport default config satisfies AgentBundleConfig;"),
            r#"{"a":1}"#
        );
        assert_eq!(json("const config = { a: 1 };\nexport default defineConfig(config);"), r#"{"a":1}"#);
        assert_eq!(json("export const shared = { a: 1 };\nexport default shared;"), r#"{"a":1}"#);
        assert_eq!(json("const config = { a: 1 };\nexport { config as default };"), r#"{"a":1}"#);
        // Other imports and statements are fine as long as the value does not use them.
        assert_eq!(
            json(
                "import path from 'node:path';\nimport * as fs from 'node:fs';\nconsole.log('never run');\nexport default defineConfig({ a: 'x' });"
            ),
            r#"{"a":"x"}"#
        );
        // JavaScript dialects.
        for file in
            ["agent-bundle.config.js", "agent-bundle.config.mjs", "agent-bundle.config.mts", "agent-bundle.config.tsx"]
        {
            let out = extract(file, "export default defineConfig({ a: [1] });", ExtractTarget::DefaultExport);
            assert_eq!(out.errors, vec![], "{file}");
            assert_eq!(out.value.unwrap().to_json(), serde_json::json!({ "a": [1] }));
        }
    }

    #[test]
    fn following_is_one_level_only() {
        let source = "const inner = { a: 1 };\nconst config = inner;\nexport default config;";
        let e = single(source);
        assert_eq!(e.kind, ExtractErrorKind::NotLiteral);
        assert_eq!(e.message, "found identifier `inner`");
        assert_eq!(text(source, e.span), "inner");
        let source = "let config = { a: 1 };\nexport default config;";
        let e = single(source);
        assert_eq!(e.message, "found identifier `config`, which is not a top-level `const` in this file");
        let source = "import config from './shared';\nexport default config;";
        let e = single(source);
        assert_eq!(e.message, "found identifier `config` imported from './shared', which is never loaded");
        assert_eq!(text(source, e.span), "config");
    }

    #[test]
    fn numbers() {
        let v = value(
            "export default { n: [30_000, 0x10, 0o17, 0b101, 1e3, 2.5e-3, -7, +8, -0, -1.5, 1_000.000_1, .5, 5., 0xFFFF_FFFF, 1152921504606846976, -9007199254740993, 1e21, 12345678901234567890, -(3), -4 as number] };",
        );
        let node: serde_json::Value = serde_json::from_str(
            "[30000,16,15,5,1000,0.0025,-7,8,0,-1.5,1000.0001,0.5,5,4294967295,1152921504606847000,-9007199254740992,1e+21,12345678901234567000,-3,-4]",
        )
        .unwrap();
        assert_eq!(v.get("n").unwrap().to_json(), node);
        let ValueKind::Array(items) = &v.get("n").unwrap().kind else { panic!() };
        // Whole numbers are integers, fractions are floats.
        assert!(items[0].to_json().is_u64());
        assert!(items[6].to_json().is_i64());
        assert!(items[8].to_json().is_u64()); // -0
        assert!(items[9].to_json().is_f64());
        assert!(items[16].to_json().is_f64()); // 1e21 does not fit
        assert_eq!(serde_json::to_string(&items[14].to_json()).unwrap(), "1152921504606847000");
    }

    #[test]
    fn define_config_may_be_imported_under_another_name_or_through_a_namespace() {
        for source in [
            "import { defineConfig as define } from 'agent-bundle/config';\nexport default define({ a: 1 });",
            "import * as ab from 'agent-bundle';\nexport default ab.defineConfig({ a: 1 });",
        ] {
            assert_eq!(json(source), r#"{"a":1}"#, "{source}");
        }
        // Another module's function of that name, or a call of anything else, is no config.
        for source in [
            "import { defineConfig as define } from './mine';\nexport default define({ a: 1 });",
            "import * as other from 'other';\nexport default other.defineConfig({ a: 1 });",
            "import { defineConfig } from './mine';\nexport default defineConfig({ a: 1 });",
        ] {
            assert!(single(source).message.ends_with("not from agent-bundle"), "{source}");
        }
        let source = "import { other as define } from 'agent-bundle/config';\nexport default define({ a: 1 });";
        assert!(single(source).message.starts_with("found "), "{source}");
        // Nor is a type, which gives no value, or a function of the file's own.
        let source = "import type { defineConfig } from 'agent-bundle/config';\nexport default defineConfig({ a: 1 });";
        assert!(single(source).message.contains("imported as a type only"), "{source}");
        for own in ["function defineConfig(c: object) { return c; }", "export const defineConfig = (c: object) => c;"] {
            let source = format!("{own}\nexport default defineConfig({{ a: 1 }});");
            assert_eq!(single(&source).message, "this `defineConfig` is declared in this file, not agent-bundle's");
        }
    }

    /// The config's `const` is read as its literal is written: one the file changes
    /// afterwards, or exports before declaring it (which throws in Node), is refused where it
    /// is named.
    #[test]
    fn a_config_const_is_read_only_if_nothing_else_uses_it() {
        assert_eq!(json("const config = { a: 1 };\nexport default config;"), r#"{"a":1}"#);
        assert_eq!(json("const config = { a: 1 };\nexport { config as default };"), r#"{"a":1}"#);
        let typed = "const config = { a: 1 };\ntype C = typeof config;\nexport default config as typeof config;";
        assert_eq!(json(typed), r#"{"a":1}"#, "a use in a type reads nothing");
        let changed = single("const config = { a: [1] };\nconfig.a.push(2);\nexport default config;");
        assert!(changed.message.starts_with("`config` is used elsewhere in this file too"), "{changed:?}");
        assert_eq!(changed.span, Span::new(27, 33), "at the use");
        assert_eq!(json("export { config as default };\nconst config = { a: 1 };"), r#"{"a":1}"#);
        let early = single("export default config;\nconst config = { a: 1 };");
        assert!(early.message.starts_with("`config` is exported before it is declared"), "{early:?}");
        assert_eq!(early.span, Span::new(15, 21));
    }

    #[test]
    fn legacy_octal_literals_are_refused_as_a_module_refuses_them() {
        let cases = [
            ("{ n: 010 }", "010"),
            ("{ n: -010 }", "010"),
            ("{ n: 08 }", "08"),
            ("{ n: [1, 0777] }", "0777"),
            ("{ 010: 1 }", "010"),
            (r"{ s: 'a\101' }", r"\101"),
            (r"{ s: 'a\8' }", r"\8"),
            (r"{ s: 'a\01' }", r"\01"),
            (r#"{ "k\7": 1 }"#, r"\7"),
        ];
        for (value, at) in cases {
            let source = format!("export default {value};");
            let e = single(&source);
            assert_eq!(e.kind, ExtractErrorKind::Syntax, "{value}");
            assert!(text(&source, e.span).contains(at), "{value}: {e:?}");
        }
        // Anywhere in the file, read or not, and whatever a module may not hold.
        for source in ["const unused = 010;\nexport default {};", "let a = 1;\nlet a = 2;\nexport default {};"] {
            assert_eq!(single(source).kind, ExtractErrorKind::Syntax, "{source}");
        }
        assert_eq!(json(r"export default { s: 'a\0b\\1', n: 0, f: 0.5 };"), r#"{"s":"a\u0000b\\1","n":0,"f":0.5}"#);
    }

    #[test]
    fn strings_and_templates() {
        let source = r#"export default { s: 'a\tb\u00e9\u{1F600}\x41\'"\\', t: `line1
line2 \u0041 \${x}`, e: '', d: "dq" };"#;
        assert_eq!(json(source), r#"{"s":"a\tbé😀A'\"\\","t":"line1\nline2 A ${x}","e":"","d":"dq"}"#);
    }

    #[test]
    fn key_order_matches_javascript() {
        let source = "export default { z: 1, 'a b': 2, 10: 3, '2': 4, 1.50: 5, 0x10: 6, '01': 7, 1e21: 8, 4294967295: 9, 4294967294: 10, 'x-y': 11, 0: 12, $ok: 13, _u: 14, 1_000: 15 };";
        assert_eq!(
            json(source),
            r#"{"0":12,"2":4,"10":3,"16":6,"1000":15,"4294967294":10,"z":1,"a b":2,"1.5":5,"01":7,"1e+21":8,"4294967295":9,"x-y":11,"$ok":13,"_u":14}"#
        );
        let v = value(source);
        let ValueKind::Object(props) = &v.kind else { panic!() };
        assert_eq!(text(source, props[0].key_span), "0");
        assert_eq!(text(source, props[4].key_span), "1_000");
    }

    #[test]
    fn a_key_given_twice_is_an_error_at_each_repeat() {
        let source = "export default { a: 1, b: 2, a: 3, 1: 'x', c: 4, 1: 'y', 'b': 5 };";
        let found: Vec<_> = errors(source).into_iter().map(|e| (e.path, text(source, e.span).to_owned())).collect();
        assert_eq!(found, [("a".into(), "a".into()), ("[\"1\"]".into(), "1".into()), ("b".into(), "'b'".into())]);
        let nested = "export default { hooks: { stop: './a.ts', stop: './b.ts' } };";
        assert_eq!(errors(nested)[0].path, "hooks.stop");
        // Index keys come first, in order; the others as written.
        assert_eq!(json("export default { b: 1, 2: 'x', a: 2, 0: 'y' };"), r#"{"0":"y","2":"x","b":1,"a":2}"#);
    }

    #[test]
    fn many_keys_are_ordered_like_javascript() {
        let body: Vec<String> = (0..30).rev().map(|i| format!("{i}: 0, x{i}: 1")).collect();
        let v = value(&format!("export default {{ {} }};", body.join(", ")));
        let ValueKind::Object(props) = &v.kind else { panic!() };
        let keys: Vec<&str> = props.iter().map(|p| p.key.as_str()).collect();
        let mut expected: Vec<String> = (0..30).map(|i| i.to_string()).collect();
        expected.extend((0..30).rev().map(|i| format!("x{i}")));
        assert_eq!(keys, expected);
    }

    // --- config factories --------------------------------------------------------------------

    #[test]
    fn config_factories_are_rejected() {
        for (source, span) in [
            ("export default defineConfig(() => ({}));", "() => ({})"),
            ("export default defineConfig(async () => ({ a: 1 }));", "async () => ({ a: 1 })"),
            ("export default defineConfig(function () { return {}; });", "function () { return {}; }"),
            ("export default () => ({});", "() => ({})"),
            ("export default function () { return {}; }", "function () { return {}; }"),
            ("export default function config() { return {}; }", "function config() { return {}; }"),
            ("const config = () => ({});\nexport default config;", "() => ({})"),
            ("export default defineConfig((() => ({})) as any);", "() => ({})"),
        ] {
            let e = single(source);
            assert_eq!(e.kind, ExtractErrorKind::ConfigFactory, "{source}");
            assert_eq!(
                e.message,
                "config factories are not supported: agent-bundle reads the config statically and never runs it"
            );
            assert_eq!(e.help, "export the object literal directly: `export default defineConfig({ ... })`");
            assert_eq!(e.path, "");
            assert_eq!(text(source, e.span), span, "{source}");
        }
    }

    // --- not literal ---------------------------------------------------------------------------

    /// (property body, offending text, path, message)
    #[rustfmt::skip]
    const NOT_LITERAL: &[(&str, &str, &str, &str)] = &[
        ("hooks: { beforeTool: ['./a.ts', { handler: path.join('a', 'b') }] }", "path.join('a', 'b')", "hooks.beforeTool[1].handler", "found a function call `path.join(...)`"),
        ("plugin: { name: name }", "name", "plugin.name", "found identifier `name`"),
        ("plugin: { name }", "name", "plugin.name", "shorthand property `name` refers to a variable"),
        ("plugin: { [key]: 'x' }", "key", "plugin", "computed keys are not allowed"),
        ("plugin: { ['name']: 'x' }", "'name'", "plugin", "computed keys are not allowed"),
        ("plugin: { ...base }", "...base", "plugin", "spread is not allowed"),
        ("targets: ['claude', ...more]", "...more", "targets[1]", "spread is not allowed"),
        ("targets: ['claude', , 'codex']", ",", "targets[1]", "array holes are not allowed"),
        ("plugin: { name: `hooks-${suffix}` }", "`hooks-${suffix}`", "plugin.name", "found a template literal with substitutions"),
        ("plugin: { name: /x/g }", "/x/g", "plugin.name", "found a regular expression `/x/g`"),
        ("timeout: 10n", "10n", "timeout", "found a bigint `10n`"),
        ("hooks: { handler: () => {} }", "() => {}", "hooks.handler", "found an arrow function"),
        ("hooks: { handler: function () {} }", "function () {}", "hooks.handler", "found a function"),
        ("hooks: { handler() {} }", "handler() {}", "hooks.handler", "found a method `handler`"),
        ("plugin: { get name() { return 'x'; } }", "get name() { return 'x'; }", "plugin.name", "found a getter `name`"),
        ("plugin: { set name(v) {} }", "set name(v) {}", "plugin.name", "found a setter `name`"),
        ("when: new Date()", "new Date()", "when", "found a `new` expression `new Date(...)`"),
        ("timeout: 10 * 1000", "10 * 1000", "timeout", "found a binary `*` expression `10 * 1000`"),
        ("plugin: { name: 'a' + 'b' }", "'a' + 'b'", "plugin.name", "found a binary `+` expression `'a' + 'b'`"),
        ("plugin: { name: process.env.NAME }", "process.env.NAME", "plugin.name", "found a member expression `process.env.NAME`"),
        ("plugin: { name: names[0] }", "names[0]", "plugin.name", "found a member expression `names[0]`"),
        ("plugin: { name: a ?? 'x' }", "a ?? 'x'", "plugin.name", "found a logical `??` expression `a ?? 'x'`"),
        ("plugin: { name: a ? 'x' : 'y' }", "a ? 'x' : 'y'", "plugin.name", "found a conditional expression `a ? 'x' : 'y'`"),
        ("timeout: -Infinity", "-Infinity", "timeout", "found `-Infinity`; JSON has no such number"),
        ("timeout: Infinity", "Infinity", "timeout", "found identifier `Infinity`"),
        ("timeout: NaN", "NaN", "timeout", "found identifier `NaN`"),
        ("timeout: 1e999", "1e999", "timeout", "found the number `1e999`, which overflows to Infinity"),
        ("timeout: -'5'", "-'5'", "timeout", "found a unary `-` expression `-'5'`"),
        ("enabled: !0", "!0", "enabled", "found a unary `!` expression `!0`"),
        ("timeout: - -5", "- -5", "timeout", "found a unary `-` expression `- -5`"),
        ("plugin: { name: String.raw`x` }", "String.raw`x`", "plugin.name", "found a tagged template `String.raw`...``"),
        ("plugin: { name: import.meta.url }", "import.meta.url", "plugin.name", "found a member expression `import.meta.url`"),
        ("plugin: { name: await load() }", "await load()", "plugin.name", "found an `await` expression `await load()`"),
        ("plugin: { name: import('./x') }", "import('./x')", "plugin.name", "found a dynamic import `import('./x')`"),
        ("plugin: { name: a?.b }", "a?.b", "plugin.name", "found an optional chain `a?.b`"),
        ("plugin: { name: class {} }", "class {}", "plugin.name", "found a class"),
        ("plugin: { __proto__: { name: 'x' } }", "__proto__", "plugin", "`__proto__` keys are not allowed: JavaScript sets the prototype instead of adding a key"),
        ("'a b': { 'c.d': [0, { 1: x }] }", "x", "[\"a b\"][\"c.d\"][1][\"1\"]", "found identifier `x`"),
        ("x: { 1n: 'x' }", "1n", "x", "bigint keys are not allowed"),
        ("x: { 'a\\uD800': 1 }", "'a\\uD800'", "x", "found a key with a lone surrogate, which has no UTF-8 form"),
        ("x: ['\\uDC00']", "'\\uDC00'", "x[0]", "found a string with a lone surrogate, which has no UTF-8 form"),
    ];

    #[test]
    fn each_non_literal_is_reported_with_path_and_span() {
        for &(body, offending, path, message) in NOT_LITERAL {
            let source = wrap(body);
            let e = single(&source);
            assert_eq!(e.kind, ExtractErrorKind::NotLiteral, "{body}");
            assert_eq!(e.message, message, "{body}");
            assert_eq!(e.path, path, "{body}");
            assert_eq!(text(&source, e.span), offending, "{body}");
            assert!(!e.help.is_empty());
        }
    }

    /// A key holding `undefined` is absent, as in JSON and as TypeScript takes an optional key;
    /// an element holding it is an error.
    #[test]
    fn a_key_holding_undefined_is_absent() {
        assert_eq!(json("export default { a: 1, b: undefined, c: { d: (undefined) } };"), r#"{"a":1,"c":{}}"#);
        let e = single(&wrap("targets: [undefined]"));
        assert_eq!(e.help, "remove the element instead");
    }

    #[test]
    fn help_texts() {
        let e = single(&wrap("plugin: { name: path.join('a') }"));
        assert_eq!(e.help, "write a literal value: agent-bundle reads this file statically and never executes it");
        // A handler written as a function or a default import says to name its module; a
        // named import or a variable (an entry, perhaps) to write the hook in the config.
        let module = "a handler is the path of its module, which the build compiles: ";
        for (body, help) in [
            (
                "hooks: { stop: () => {} }",
                format!("{module}`stop: './src/hooks/stop.ts'`, whose module default-exports"),
            ),
            ("hooks: { stop: [{ handler: function () {} }] }", format!("{module}`handler: './src/hooks/stop.ts'`")),
            ("hooks: { stop }", format!("{module}`stop: './src/hooks/stop'`, with the module's extension")),
            ("hooks: { stop: [check] }", format!("{module}`stop: './lib/check'`, with the module's extension")),
            ("hooks: { stop: [named] }", "write the hook here: its handler module's path".to_owned()),
            ("hooks: { stop: entry }", "write the hook here: its handler module's path".to_owned()),
            ("hooks: { stop: { handler: path } }", "write the handler's module path here: `handler: '".to_owned()),
            ("hooks: { stop: local }", format!("{module}`stop: './src/hooks/stop.ts'`, whose module")),
            ("hooks: { stop: exported }", format!("{module}`stop: './src/hooks/stop.ts'`, whose module")),
            ("hooks: { stop: arrow }", format!("{module}`stop: './src/hooks/stop.ts'`, whose module")),
            ("hooks: { stop: onStop }", format!("{module}`stop: './src/on-stop'`, with the module's extension")),
            ("hooks: { stop: twice }", format!("{module}`stop: './src/hooks/stop.ts'`, whose module")),
            ("hooks: { stop: clock }", format!("{module}`stop: './src/o\\'clock'`, with the module's extension")),
        ] {
            let imports = "import stop from './src/hooks/stop';\nimport check, { named } from './lib/check';\n\
                           import { default as onStop } from './src/on-stop';\nimport clock from \"./src/o'clock\";\n";
            let declared = "const entry = { handler: './h.ts' };\nconst path = './h.ts';\nfunction local() {}\n\
                            export function exported() {}\nconst arrow = () => {};\nvar twice = 1;\n\
                            var twice = () => {};\nvar twice;\n";
            let e = single(&format!("{imports}{declared}{}", wrap(body)));
            assert!(e.help.starts_with(&help), "{body}: {}", e.help);
        }
        // Elsewhere in `hooks` (a tool selector) it is any literal.
        let e = single(&wrap("hooks: { beforeTool: { handler: './a.ts', tools: [tool] } }"));
        assert!(e.help.starts_with("write a literal value"), "{}", e.help);
        // A value and the next line's entry read as one expression: a comma is missing there;
        // on one line, it is some expression.
        for (next, what) in
            [("['b']", "an index"), ("`b`", "a tagged template"), ("('b')", "a call"), ("-1", "a subtraction")]
        {
            let e = single(&wrap(&format!("targets: ['a'\n  {next}]")));
            assert!(e.help.starts_with("is a `,` missing at the end of the line above?"), "{next}: {}", e.help);
            assert!(e.help.ends_with(&format!("({what})")), "{next}: {}", e.help);
        }
        let e = single(&wrap("targets: ['a'['b']]"));
        assert!(e.help.starts_with("write a literal value"), "{}", e.help);
    }

    #[test]
    fn line_and_column_of_errors() {
        let source = "import { defineConfig } from 'agent-bundle/config';
import path from 'node:path';
export default defineConfig({
  plugin: { name: 'x' },
  hooks: {
    beforeTool: ['./a.ts', { handler: path.join('a', 'b') }],
  },
  targets: [name],
});
";
        let index = LineIndex::new(source);
        let errors = errors(source);
        assert_eq!(errors.len(), 2);
        assert_eq!(errors[0].path, "hooks.beforeTool[1].handler");
        assert_eq!(index.line_col(errors[0].span.start), (6, 39));
        assert_eq!(index.line_col(errors[0].span.end), (6, 58));
        assert_eq!(errors[1].path, "targets[0]");
        assert_eq!(errors[1].message, "found identifier `name`");
        assert_eq!(index.line_col(errors[1].span.start), (8, 13));
    }

    #[test]
    fn utf16_columns_after_non_ascii() {
        // 'é' is 2 bytes / 1 UTF-16 unit, '😀' is 4 bytes / 2 units.
        let source = "export default { plugin: { description: 'café 😀', name: nom } };";
        let e = single(source);
        assert_eq!(e.path, "plugin.name");
        let byte = source.find("nom").unwrap() as u32;
        assert_eq!(e.span.start, byte);
        let prefix = &source[..byte as usize];
        assert_eq!(LineIndex::new(source).line_col(e.span.start), (1, prefix.encode_utf16().count() as u32 + 1));
        assert_eq!(LineIndex::new(source).line_col(e.span.start), (1, 58));
        assert_eq!(byte, 60);
    }

    #[test]
    fn all_errors_are_reported_in_one_pass() {
        let source = wrap(
            "hooks: { sessionStart: { handler: resolve('x') } }, plugin: { name, description: `v${1}` }, targets: ['claude', ...extra], timeout: 2 ** 10",
        );
        let errors = errors(&source);
        let summary: Vec<(&str, &str)> = errors.iter().map(|e| (e.path.as_str(), e.message.as_str())).collect();
        assert_eq!(
            summary,
            vec![
                ("hooks.sessionStart.handler", "found a function call `resolve(...)`"),
                ("plugin.name", "shorthand property `name` refers to a variable"),
                ("plugin.description", "found a template literal with substitutions"),
                ("targets[1]", "spread is not allowed"),
                ("timeout", "found a binary `**` expression `2 ** 10`"),
            ]
        );
        assert!(errors.iter().all(|e| e.kind == ExtractErrorKind::NotLiteral));
    }

    #[test]
    fn root_must_be_an_object_literal() {
        let e = single("export default createConfig({ a: 1 });");
        assert_eq!(e.kind, ExtractErrorKind::NotLiteral);
        assert_eq!(e.message, "found a function call `createConfig(...)`");
        assert!(e.help.contains("defineConfig({ ... })"));
        let e = single("export default defineConfig('x');");
        assert_eq!(e.message, "`defineConfig` expects an object literal, found a string");
        let e = single("export default [1, 2];");
        assert_eq!(e.message, "expected an object literal, found an array");
        let e = single("export default defineConfig({ a: 1 }, { b: 2 });");
        assert_eq!(e.message, "`defineConfig` takes exactly one object literal, found 2 arguments");
        let e = single("export default defineConfig();");
        assert_eq!(e.message, "`defineConfig` takes exactly one object literal, found 0 arguments");
        let e = single("export default defineConfig(...parts);");
        assert_eq!(e.message, "spread is not allowed");
        let e = single("export default defineConfig(defineConfig({}));");
        assert_eq!(e.message, "found a function call `defineConfig(...)`");
        let e = single("export default class {}");
        assert_eq!(e.message, "found a class");
        let e = single("export { default } from './shared';");
        assert_eq!(e.message, "found a re-export from './shared', which cannot be followed statically");
    }

    /// A `defineConfig` of another package (or a mistyped path) is named as the reason.
    #[test]
    fn a_define_config_imported_from_elsewhere_says_where_from() {
        for (source, from) in [
            (
                "import { defineConfig } from '@agent-bundle/sdk';\nexport default defineConfig({});",
                "@agent-bundle/sdk",
            ),
            ("import { defineConfig as d } from 'agent-bundle/confg';\nexport default d({});", "agent-bundle/confg"),
            ("import * as ab from 'vite';\nexport default ab.defineConfig({});", "vite"),
        ] {
            let e = single(source);
            assert_eq!(e.message, format!("this `defineConfig` is imported from '{from}', not from agent-bundle"));
            assert!(e.help.contains("from 'agent-bundle/config'"), "{}", e.help);
        }
        // agent-bundle's own, as a default import, is only refused as a call.
        let e = single("import ab from 'agent-bundle';\nexport default ab.defineConfig({});");
        assert_eq!(e.message, "found a function call `ab.defineConfig(...)`");
    }

    #[test]
    fn syntax_errors() {
        let source = "export default defineConfig({ a: 1, b: });";
        let out = extract(CONFIG, source, ExtractTarget::DefaultExport);
        assert!(out.value.is_none());
        assert!(!out.errors.is_empty());
        let e = &out.errors[0];
        assert_eq!(e.kind, ExtractErrorKind::Syntax);
        assert!(!e.message.is_empty());
        assert_eq!(e.path, "");
        assert_eq!(LineIndex::new(source).line_col(e.span.start), (1, 40));
        // Several syntax errors are all reported; `as` is not JavaScript.
        let out = extract("agent-bundle.config.js", "export default { a: 1 } as const;", ExtractTarget::DefaultExport);
        assert!(out.errors.iter().all(|e| e.kind == ExtractErrorKind::Syntax));
        assert!(!out.errors.is_empty());
        // A missing comma, found at the next key, asks whether one is missing; a `;` or `)` where
        // a `,` or `}` belongs does not.
        let out = extract(CONFIG, "export default {\n  a: 1\n  b: 2,\n};", ExtractTarget::DefaultExport);
        assert!(out.errors[0].help.starts_with("is a `,` missing"), "{:?}", out.errors);
        let entries = "export default {\n  a: ['x'\n    { b: 1 }],\n};";
        let out = extract(CONFIG, entries, ExtractTarget::DefaultExport);
        assert!(out.errors[0].help.starts_with("is a `,` missing"), "before an entry: {:?}", out.errors);
        for source in [
            "export default defineConfig({\n  a: { b: 1,\n  c: 2,\n});",
            "export default {\n  a: { b: 1 };\n};",
            "export default {\n  a: ['x', 'y'\n};",
            "export default {\n  a: ['x',\n    b: 1 },\n};",
        ] {
            let out = extract(CONFIG, source, ExtractTarget::DefaultExport);
            assert!(out.errors.iter().all(|e| !e.help.starts_with("is a `,` missing")), "{source}: {:?}", out.errors);
        }
        // A closer missing where what follows is no value: a key after an array's last entry,
        // a statement after a call; a `:` missing after a key written bare.
        let help = |source: &str| extract(CONFIG, source, ExtractTarget::DefaultExport).errors[0].help.clone();
        for source in [
            "export default {\n  a: ['x', 'y'\n  b: { c: 1 },\n};",
            "export default {\n  a: ['x'\n  'b': 1,\n};",
            "export default defineConfig({\n  a: 1,\n}\nconst b = 1;",
        ] {
            assert!(help(source).starts_with("is the `"), "{source}: {}", help(source));
        }
        for (source, key) in [
            ("export default { a: { name 'x' } };", "name"),
            ("export default { a: { minify true } };", "minify"),
            ("export default { plugin { name: 'x' } };", "plugin"),
            ("export default {\n  b: 1,\n  targets ['claude'] };", "targets"),
        ] {
            assert_eq!(help(source), format!("is a `:` missing after the key `{key}`?"), "{source}");
        }
        // A value that is a name, before a key on the next line: the comma.
        assert!(help("export default {\n  a: x\n  b: 2 };").starts_with("is a `,` missing"));
        // A keyword as a key after a missing comma, a shorthand before a key or another
        // shorthand on the next line, names in an import's or a declaration's braces, a
        // comment before a value: the comma. A declaration after an unclosed call: its `)`.
        for source in [
            "export default {\n  a: './a'\n  import: './b' };",
            "export default { plugin\n  hooks };",
            "export default { plugin\n  targets: ['claude'] };",
            "import { defineConfig HookEntry } from 'agent-bundle/config';\nexport default {};",
            "const base = { name: 'x', version: '1' };\nconst { name version } = base;\nexport default {};",
        ] {
            assert!(help(source).starts_with("is a `,` missing"), "{source}: {}", help(source));
        }
        assert_eq!(
            help("export default { a: { name /* the name */ 'p' } };"),
            "is a `:` missing after the key `name`?"
        );
        // Across lines, a value that can be no key after a bare name: its `:`; a quote ending
        // a string early; a `}` closing the config early; an inline handler after a missing
        // comma; an import's type list.
        assert_eq!(help("export default { a: { b\n    'x' } };"), "is a `:` missing after the key `b`?");
        assert_eq!(help("export default { a: { n\n    5 } };"), "is a `:` missing after the key `n`?");
        assert!(
            help("export default { a: 'Keep the agent's hands off.' };").starts_with("is a quote inside the string")
        );
        assert!(help("export default { a: \"Blocks \"rm\" now\" };").contains("Write it `\\\"`"));
        let early = "export default defineConfig({\n  a: {\n    b: 1,\n  }}\n  c: 2,\n});";
        assert_eq!(help(early), "is the `}` before it one too many, where a `,` belongs (closing the object early)?");
        // A key right after a string (a comma and a space missing) is no unescaped quote; a
        // declaration at a line's start after an object left open wants its `}`; a name of
        // an import's list is no statement; a comment after the entry before a bare key.
        assert!(help("export default { a: 'x'b: 1 };").starts_with("is a `,` missing"));
        let open = "export default {\n  a: ['x']\n\nfunction helper() {}\n";
        assert!(help(open).starts_with("is the `}` closing"), "{}", help(open));
        let listed = "import { defineConfig type Config } from 'agent-bundle/config';\nexport default {};";
        assert!(help(listed).starts_with("is a `,` missing"), "{}", help(listed));
        let commented = "export default { a: {\n  b: 'x', // kebab-case\n  c\n    'y' } };";
        assert_eq!(help(commented), "is a `:` missing after the key `c`?");
        for before in [
            "b: 'See https://example.com', // docs",
            "b: \"Don't touch\", // note",
            "b: \"Don't write // comments\",",
            "b: 'x',\n  // one\n  // two",
            "b: 'x', /* shown */",
        ] {
            let source = format!("export default {{ a: {{\n  {before}\n  c\n    'y' }} }};");
            assert_eq!(help(&source), "is a `:` missing after the key `c`?", "{source}");
        }
        // A key after a space of more than one byte (a no-break space pasted from a page, a
        // line or paragraph separator, an ideographic space) or a byte order mark.
        for space in ['\u{a0}', '\u{2028}', '\u{2029}', '\u{3000}', '\u{feff}'] {
            let source = format!("export default {{ plugin: {{{space}name 'x' }} }};");
            assert_eq!(help(&source), "is a `:` missing after the key `name`?", "{source:?}");
            let source = format!("export default {{ plugin:{space}{{ name 1 }} }};");
            assert_eq!(help(&source), "is a `:` missing after the key `name`?", "{source:?}");
            assert!(!help(&format!("export default {{{space}a b }};")).is_empty());
        }
        // An import or export after an object left open wants its `}`; a name on its own line
        // of an import's list is a name.
        let exported = "const shared = {\n  targets: ['claude']\n\nexport { shared };\nexport default {};";
        assert!(help(exported).starts_with("is the `}` closing"), "{}", help(exported));
        let prettier = "import {\n  defineConfig\n  type HookEntry,\n} from 'agent-bundle/config';\nexport default {};";
        assert!(help(prettier).starts_with("is a `,` missing"), "{}", help(prettier));
        for source in [
            "export default { a: {\n  b: './b.ts'\n  async c(event) { return undefined; },\n} };",
            "import type { Config HookEntry } from 'agent-bundle/config';\nexport default {};",
        ] {
            assert!(help(source).starts_with("is a `,` missing"), "{source}: {}", help(source));
        }
        for statement in ["type X = 1;", "interface X {}", "enum X { A }", "async function f() {}"] {
            let source = format!("export default defineConfig({{\n  a: 1,\n}}\n{statement}");
            assert!(help(&source).starts_with("is the `)`"), "{source}: {}", help(&source));
        }
    }

    #[test]
    fn missing_default_export() {
        for source in [
            "",
            "import { defineConfig } from 'agent-bundle/config';\nconst config = defineConfig({});",
            "export const config = {};",
        ] {
            let e = single(source);
            assert_eq!(e.kind, ExtractErrorKind::MissingExport);
            assert_eq!(e.message, "agent-bundle.config.ts has no `export default`");
            assert_eq!(e.help, "add `export default defineConfig({ ... })`");
            assert_eq!(e.span, Span { start: 0, end: 0 });
            assert_eq!(e.path, "");
        }
        let out = extract("/plugins/x/agent-bundle.config.ts", "", ExtractTarget::DefaultExport);
        assert_eq!(out.errors[0].message, "agent-bundle.config.ts has no `export default`");
    }

    #[test]
    fn duplicate_exports_are_syntax_errors() {
        let source = "export default { a: 1 };\nexport default { b: 2 };";
        let e = single(source);
        assert_eq!(e.kind, ExtractErrorKind::Syntax);
        assert_eq!(e.message, "duplicate `export default`: a module has only one default export");
        assert_eq!(text(source, e.span), "export default { b: 2 };");
        let out = extract(
            "route.ts",
            "export const config = {};\nconst c = {};\nexport { c as config };",
            ExtractTarget::NamedConst("config"),
        );
        assert_eq!(out.errors.len(), 1);
        assert_eq!(out.errors[0].kind, ExtractErrorKind::Syntax);
        assert_eq!(out.errors[0].message, "duplicate export of `config`: a module exports a name only once");
    }

    // --- routes: `export const config` -------------------------------------------------------

    const ROUTE: ExtractTarget = ExtractTarget::NamedConst("config");

    fn route(source: &str) -> Extracted {
        extract("src/events/before-tool.ts", source, ROUTE)
    }

    #[test]
    fn route_config_forms() {
        let source = "import type { AgentEventRouteConfig } from 'agent-bundle';
export const config = {
  targets: ['claude'],
  timeoutMs: 30_000,
} satisfies AgentEventRouteConfig;
export default async function handler() {}
";
        let out = route(source);
        assert_eq!(out.errors, vec![]);
        assert_eq!(
            serde_json::to_string(&out.value.unwrap().to_json()).unwrap(),
            r#"{"targets":["claude"],"timeoutMs":30000}"#
        );
        for source in [
            "export const config: AgentEventRouteConfig = { timeoutMs: 5 };",
            "export const other = 1, config = { timeoutMs: 5 } as const;",
            "const config = { timeoutMs: 5 };\nexport { config };",
            "const base = { timeoutMs: 5 };\nexport const config = base;",
        ] {
            let out = route(source);
            assert_eq!(out.errors, vec![], "{source}");
            assert_eq!(out.value.unwrap().to_json(), serde_json::json!({ "timeoutMs": 5 }), "{source}");
        }
    }

    /// A route's `config` is read as its literal is written: one the file uses otherwise (and
    /// so may change) is refused where it is declared, as the project config's is.
    #[test]
    fn a_route_config_the_file_uses_otherwise_is_refused() {
        for source in [
            "export const config = { tools: ['shell'] };\nconfig.tools.push('file.write');",
            "export const config = { timeoutMs: 5000 };\nObject.assign(config, { timeoutMs: 100 });",
            "export const config = { timeoutMs: 5 };\nexport default () => config.timeoutMs;",
        ] {
            let out = route(source);
            let [error] = out.errors.as_slice() else { panic!("{source}: {:?}", out.errors) };
            assert!(error.message.starts_with("`config` is used elsewhere in this file too"), "{source}");
            assert_eq!(text(source, error.span), "config", "{source}");
        }
        let typed = "export const config = { timeoutMs: 5 };\ntype C = typeof config;";
        assert_eq!(route(typed).errors, vec![], "a use in a type reads nothing");
        let exported = "export const config = { timeoutMs: 5 };\nexport { config as routeConfig };";
        assert_eq!(route(exported).errors, vec![], "an export changes nothing");
        let hidden = "export const config = { timeoutMs: 5 };\nexport type { config as C };\nconfig.timeoutMs = 9;";
        assert_eq!(route(hidden).errors.len(), 1, "a type export exports no value");
    }

    #[test]
    fn route_config_errors() {
        let cases: &[(&str, ExtractErrorKind, &str)] = &[
            (
                "export let config = { a: 1 };",
                ExtractErrorKind::NotLiteral,
                "`export let config` cannot be read statically: write `export const config = { ... }`",
            ),
            (
                "export var config = { a: 1 };",
                ExtractErrorKind::NotLiteral,
                "`export var config` cannot be read statically: write `export const config = { ... }`",
            ),
            (
                "export function config() { return {}; }",
                ExtractErrorKind::NotLiteral,
                "`export function config` cannot be read statically: write `export const config = { ... }`",
            ),
            (
                "export const { config } = shared;",
                ExtractErrorKind::NotLiteral,
                "`config` is destructured and cannot be read statically: write `export const config = { ... }`",
            ),
            (
                "export const config = () => ({});",
                ExtractErrorKind::ConfigFactory,
                "config factories are not supported: agent-bundle reads the config statically and never runs it",
            ),
            (
                "export const config = defineConfig({});",
                ExtractErrorKind::NotLiteral,
                "found a function call `defineConfig(...)`",
            ),
            (
                "export const config = { timeoutMs: ms('30s') };",
                ExtractErrorKind::NotLiteral,
                "found a function call `ms(...)`",
            ),
            (
                "export default { a: 1 };",
                ExtractErrorKind::MissingExport,
                "before-tool.ts has no `export const config`",
            ),
            (
                "export const configuration = {};",
                ExtractErrorKind::MissingExport,
                "before-tool.ts has no `export const config`",
            ),
            // What was likely meant: the name not exported, or exported as a typo of it.
            ("const config = {};", ExtractErrorKind::MisnamedExport, "`config` is declared but not exported"),
            ("export const confg = {};", ExtractErrorKind::MisnamedExport, "`confg` is exported, not `config`"),
            (
                "export let x = 1, Config = {} satisfies object;",
                ExtractErrorKind::MisnamedExport,
                "`Config` is exported, not `config`",
            ),
            // Not so a binding of another kind, or a name further off: a route's own.
            (
                "export const confirm = () => true;",
                ExtractErrorKind::MissingExport,
                "before-tool.ts has no `export const config`",
            ),
            ("export const conf = {};", ExtractErrorKind::MissingExport, "before-tool.ts has no `export const config`"),
            (
                "const config = JSON.parse('{}');",
                ExtractErrorKind::MissingExport,
                "before-tool.ts has no `export const config`",
            ),
            (
                "declare const config: {};",
                ExtractErrorKind::MissingExport,
                "before-tool.ts has no `export const config`",
            ),
        ];
        for &(source, ref kind, message) in cases {
            let out = route(source);
            assert!(out.value.is_none(), "{source}");
            assert_eq!(out.errors.len(), 1, "{source}: {:#?}", out.errors);
            assert_eq!(&out.errors[0].kind, kind, "{source}");
            assert_eq!(out.errors[0].message, message, "{source}");
        }
        let out = route("export const config = () => ({});");
        assert_eq!(out.errors[0].help, "export the object literal directly: `export const config = { ... }`");
        let out = route("");
        assert_eq!(out.errors[0].help, "add `export const config = { ... }`");
        let out = route("export const config = { timeoutMs: ms('30s') };");
        assert_eq!(out.errors[0].path, "timeoutMs");
    }

    // --- helpers -------------------------------------------------------------------------------

    #[test]
    fn javascript_number_to_string() {
        for (value, expected) in [
            (0.0, "0"),
            (1.0, "1"),
            (1.5, "1.5"),
            (16.0, "16"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123e-20, "1.23e-18"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (5e-324, "5e-324"),
            (1.2345678901234569e23, "1.2345678901234569e+23"),
            (2f64.powi(60), "1152921504606847000"),
            (-2.5, "-2.5"),
            (f64::INFINITY, "Infinity"),
        ] {
            assert_eq!(js_number_to_string(value), expected);
        }
    }

    #[test]
    fn array_index_keys() {
        assert_eq!(array_index("0"), Some(0));
        assert_eq!(array_index("4294967294"), Some(4_294_967_294));
        assert_eq!(array_index("4294967295"), None);
        assert_eq!(array_index("01"), None);
        assert_eq!(array_index("-1"), None);
        assert_eq!(array_index("1.5"), None);
        assert_eq!(array_index(""), None);
        assert_eq!(array_index("99999999999"), None);
    }

    #[test]
    fn fast_enough() {
        let start = std::time::Instant::now();
        let runs = 200;
        for _ in 0..runs {
            for seed in [SEED_HOOKS_AND_SCRIPTS, SEED_GUARDED, SEED_PREBUILT] {
                assert!(extract(CONFIG, seed, ExtractTarget::DefaultExport).value.is_some());
            }
        }
        let per_config = start.elapsed() / (runs * 3);
        // Generous bound: debug builds on a loaded CI machine; release runs take ~10 µs.
        assert!(per_config < std::time::Duration::from_millis(5), "{per_config:?} per config");
    }
}
