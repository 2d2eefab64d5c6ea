//! The front end's checks on the original AST, before anything is transpiled: what would fail
//! every run of a module is an error there, located in the source as written, and what a
//! route renders is recorded for the build to check against each host.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use oxc_ast::ast::{
    AccessorProperty, AwaitExpression, BindingIdentifier, CallExpression, Class, ClassElement, Declaration, Decorator,
    ExportAllDeclaration, ExportDeclaration, ExportDefaultDeclaration, ExportDefaultDeclarationKind,
    ExportFromDeclaration, ExportNamedDeclaration, Expression, ForOfStatement, Function, IdentifierReference,
    ImportDeclaration, ImportDeclarationSpecifier, ImportExpression, ImportMeta, JSXAttributeItem, JSXAttributeValue,
    JSXChild, JSXElement, JSXElementName, JSXExpression, JSXFragment, JSXIdentifier, JSXMemberExpressionObject,
    JSXOpeningElement, ModuleDeclaration, ModuleExportName, ObjectPropertyKind, Program, RegExpLiteral, Statement,
    StaticMemberExpression, StringLiteral, TSExportAssignment, TSExternalModuleDeclaration, TSGlobalDeclaration,
    TSImportEqualsDeclaration, TSModuleBlock, TSModuleReference, TSNamespaceDeclaration, TSNamespaceDeclarationBody,
    TryStatement, UnaryExpression, VariableDeclaration, VariableDeclarationKind, WithClause,
};
use oxc_ast_visit::{Visit, walk};
use oxc_semantic::Scoping;
use oxc_span::GetSpan;
use oxc_syntax::operator::UnaryOperator;
use oxc_syntax::scope::ScopeFlags;
use oxc_syntax::symbol::{SymbolFlags, SymbolId};

use super::default_export;
use super::namespaces::{NamespaceDeclarations, NamespaceName, is_instantiated};
use super::renders::{Component, ComponentUse, Components, Renders, UsedComponent};
use super::transpile::{
    BundleDiagnostic, BundleErrorKind, ImportedMemberTag, Span, Transpiled, declared_ids, declared_names,
    is_json_module, source_type_for,
};

/// Identifiers with this prefix belong to the bundle runtime.
pub(crate) const RESERVED_PREFIX: &str = "__ab_";

/// `with { type: "json" }` (or the older `assert`), the only import attributes Node 20 knows.
fn is_json_attribute(clause: &WithClause<'_>) -> bool {
    matches!(clause.with_entries.as_slice(), [entry] if entry.key.as_arena_str() == "type" && entry.value.value == "json")
}

/// `import(specifier, { with: { type: "json" } })` (or `assert`), as Node 20 wants a JSON
/// module imported.
fn is_json_import_options(options: &Expression<'_>) -> bool {
    let json = |value: &Expression<'_>| matches!(value.without_parentheses(), Expression::StringLiteral(s) if s.value == "json");
    only_property(options, &["with", "assert"])
        .and_then(|attributes| only_property(attributes, &["type"]))
        .is_some_and(json)
}

/// The value of `object`'s one property, if it is an object literal with one, named one of `names`.
fn only_property<'b, 'a>(object: &'b Expression<'a>, names: &[&str]) -> Option<&'b Expression<'a>> {
    let Expression::ObjectExpression(object) = object.without_parentheses() else { return None };
    match object.properties.as_slice() {
        [ObjectPropertyKind::ObjectProperty(property)]
            if !property.computed && property.key.static_name().is_some_and(|name| names.contains(&&*name)) =>
        {
            Some(&property.value)
        }
        _ => None,
    }
}

struct Request {
    specifier: String,
    span: Span,
    type_only: bool,
}

/// A namespace declaration being walked: its name and its whole text.
struct OpenNamespace {
    name: NamespaceName,
    span: oxc_span::Span,
}

/// Checks on the original AST, so that every diagnostic points into the original source.
pub(super) struct Checker<'s> {
    source: &'s str,
    /// Which identifiers are bound (a local `require` is no CommonJS call).
    scoping: &'s Scoping,
    /// Nesting depth of functions; 0 is module top level.
    function_depth: u32,
    /// Nesting depth of non-arrow functions (which have their own `arguments`).
    ordinary_function_depth: u32,
    diagnostics: Vec<BundleDiagnostic>,
    requests: Vec<Request>,
    first_jsx: Option<Span>,
    reserved_reported: Vec<Span>,
    export_spans: BTreeMap<String, Span>,
    default_export_span: Option<Span>,
    /// Where the names of function signatures without a body (overloads, `function f(): T;`)
    /// start: declarations for TypeScript alone.
    signatures: BTreeSet<u32>,
    imported_name_spans: BTreeMap<(String, String), Span>,
    imported_member_tags: Vec<ImportedMemberTag>,
    /// What each value imported from a module is: its specifier and the name imported.
    import_origins: HashMap<SymbolId, (String, String)>,
    /// Every value export name, where it is first exported.
    exported: BTreeMap<String, Span>,
    /// The namespace declarations being walked, innermost last.
    namespaces: Vec<OpenNamespace>,
    /// How many of them are `declare namespace`s: all that is in one is for TypeScript alone.
    ambient_namespaces: u32,
    /// Every namespace declaration's name, and what each exports (a namespace declared again
    /// merges with its other declarations).
    namespace_declarations: NamespaceDeclarations,
    /// Where an `import` or `export` may be: the statements directly in the module, or in a
    /// namespace's body (by where they start).
    module_level: BTreeSet<u32>,
    /// Whether the module tests one of CommonJS's variables with `typeof` somewhere: code
    /// meant for both kinds of module, whose CommonJS branch an ES module never takes, however
    /// it is written (`?:`, `if`, an early return, a flag), so their uses are left alone.
    commonjs_tested: bool,
    /// The uses of CommonJS's variables nothing catches, said once the walk has seen whether
    /// the module tests them (the test may come after a use).
    commonjs_uses: Vec<(Span, String)>,
    /// The function depth of each `try` block with a `catch` that encloses the node: what
    /// fails at that depth is caught (in a function written there, which may run after the
    /// block, it is not).
    caught_at: Vec<u32>,
    /// The local bindings of `Agent` imported from the route components' module.
    agent_bindings: Vec<SymbolId>,
    /// The first `<Agent.Context>` tag, and the first `Agent.Result` deciding or rewriting.
    renders: Renders,
    /// The statements directly in the module that declare values, by where they start, with
    /// the names they declare: what each renders is their components'.
    component_statements: HashMap<u32, Vec<String>>,
    components: Components,
    /// See [`Transpiled::type_exports`].
    type_exports: BTreeSet<String>,
    /// What the module imports from `node:fs` that reads a file.
    fs_reads: FsReads,
    /// Whether the module is one of the event routes' (under `src/events/`), whose JSX a
    /// route renders: elsewhere JSX may build plain data.
    renders_routes: bool,
    /// Whether the module is this tool's own (the runtime, which reads the hook's stdin).
    tool_module: bool,
    /// The function declarations given a body so far, in TypeScript (where a JavaScript
    /// module implements one twice, the parser says so).
    implemented: Option<HashSet<SymbolId>>,
    /// Where the `export import X = N.Y` of types alone start ([`Checker::aliases_types_only`]).
    type_only_aliases: HashSet<u32>,
    /// The direct `eval` calls ([`Checker::direct_eval`]).
    direct_evals: Vec<oxc_span::Span>,
}

impl<'s> Checker<'s> {
    /// The checker of `program`, module `key`, with what it reads of the whole program first.
    pub(super) fn of(key: &str, source: &'s str, scoping: &'s Scoping, program: &Program<'_>) -> Self {
        let (component_statements, exported_components) = top_level_values(program);
        Self {
            source,
            scoping,
            function_depth: 0,
            ordinary_function_depth: 0,
            diagnostics: Vec::new(),
            requests: Vec::new(),
            first_jsx: None,
            reserved_reported: Vec::new(),
            export_spans: BTreeMap::new(),
            default_export_span: None,
            signatures: function_signatures(program),
            imported_member_tags: Vec::new(),
            import_origins: import_origins(program),
            imported_name_spans: BTreeMap::new(),
            exported: BTreeMap::new(),
            namespaces: Vec::new(),
            ambient_namespaces: 0,
            module_level: BTreeSet::new(),
            // (Only TypeScript has namespaces; `module N {}` is one too.)
            namespace_declarations: if source_type_for(key).is_some_and(|source| source.is_typescript())
                && ["namespace", "module"].iter().any(|word| source.contains(word))
            {
                NamespaceDeclarations::of(program, scoping)
            } else {
                NamespaceDeclarations::default()
            },
            commonjs_tested: false,
            commonjs_uses: Vec::new(),
            caught_at: Vec::new(),
            agent_bindings: agent_bindings(program),
            renders: Renders::default(),
            component_statements,
            components: Components { exported: exported_components, ..Components::default() },
            type_exports: BTreeSet::new(),
            fs_reads: fs_reads(program),
            renders_routes: key.starts_with(crate::routes::EVENTS_DIR),
            tool_module: super::virtual_module(key).is_some(),
            implemented: source_type_for(key).filter(|source| source.is_typescript()).map(|_| HashSet::new()),
            type_only_aliases: HashSet::new(),
            direct_evals: Vec::new(),
        }
    }

    /// Checks the program it was made for and hands what it found to `out`; returns where the
    /// statements start that the transpiled module leaves out.
    pub(super) fn check(mut self, program: &Program<'_>, out: &mut Transpiled) -> HashSet<u32> {
        self.visit_program(program);
        self.say_commonjs_uses();
        self.warn_of_direct_evals();
        out.diagnostics.append(&mut self.diagnostics);
        out.fallback_span = self.first_jsx.unwrap_or(Span::new(0, 0));
        out.renders = self.renders;
        // (A config hook's handler may be anywhere, a route's `lib/` among them.)
        if !self.tool_module {
            let (not_function, returns) = default_export::read(program, self.scoping);
            out.named_default_not_function = not_function;
            out.returns = returns;
        }
        out.components = self.components.declared_only();
        out.type_exports = self.type_exports;
        // Value imports first, then type-only ones (the transpiler drops those).
        let (values, types): (Vec<_>, Vec<_>) = self.requests.into_iter().partition(|request| !request.type_only);
        for request in values.into_iter().chain(types) {
            out.request_spans.entry(request.specifier).or_default().push_back(request.span);
        }
        out.export_spans = self.export_spans;
        out.default_export_span = self.default_export_span;
        out.imported_name_spans = self.imported_name_spans;
        out.imported_member_tags = self.imported_member_tags;
        self.type_only_aliases
    }

    fn error(&mut self, kind: BundleErrorKind, span: Span, message: impl Into<String>, help: &str) {
        self.diagnostics.push(BundleDiagnostic::error(kind, span, message).with_help(help));
    }

    fn imported_name(&mut self, specifier: &str, name: String, span: oxc_span::Span) {
        self.imported_name_spans.entry((specifier.to_owned(), name)).or_insert(span.into());
    }

    fn request(&mut self, specifier: &str, span: oxc_span::Span, type_only: bool) {
        self.requests.push(Request { specifier: specifier.to_owned(), span: span.into(), type_only });
    }

    /// The request of a declaration naming `source` with import attributes `clause`:
    /// `with { type: "json" }` promises a JSON module, which Node refuses on any other.
    fn attributed_request(&mut self, source: &StringLiteral<'_>, clause: Option<&WithClause<'_>>, type_only: bool) {
        self.request(&source.value, source.span, type_only);
        if clause.is_some_and(is_json_attribute) && !is_json_module(&source.value) {
            self.error(
                BundleErrorKind::Syntax,
                source.span.into(),
                format!("`with {{ type: \"json\" }}` imports \"{}\", which is not a .json file", source.value),
                "import a JavaScript or TypeScript module without attributes",
            );
        }
    }

    /// Whether `member` is the global `process.stdin`.
    fn is_process_stdin(&self, member: &StaticMemberExpression<'_>) -> bool {
        member.property.name == "stdin"
            && matches!(&member.object, Expression::Identifier(object) if object.name == "process" && !self.bound_at_run_time(object))
    }

    /// A hook's stdin, which the wrapper has read already: what a handler reads there is
    /// nothing (a script ported from a host's hooks reads its input so).
    fn reads_stdin(&mut self, span: oxc_span::Span) {
        if self.tool_module {
            return;
        }
        self.diagnostics.push(
            BundleDiagnostic::warning(
                BundleErrorKind::ReadsStdin,
                span.into(),
                "this reads the hook's stdin, which the wrapper has read already (in the shared runtime, stdin \
                 is the MCP server's): it finds nothing the host sent",
            )
            .with_help(
                "a handler gets the host's input decoded as its first argument (`event`), and as the host sent \
                 it as `context.nativeInput` (a route: the `native` prop)",
            ),
        );
    }

    /// `eval(code)` (parenthesized too; not `eval?.()`, `(0, eval)()` or `globalThis.eval()`,
    /// which see global names only) reads the names around it, where the bundle has rewritten
    /// each import to a read of the imported module under another name (as esbuild, a warning
    /// where the module imports anything: `warn_of_direct_evals`).
    fn direct_eval(&mut self, call: &CallExpression<'_>) {
        let Expression::Identifier(callee) = call.callee.without_parentheses() else { return };
        // (A module's code is strict: no binding of its own may be named `eval`.)
        if callee.name == "eval" && !call.optional {
            self.direct_evals.push(call.span);
        }
    }

    fn warn_of_direct_evals(&mut self) {
        if !self.requests.iter().any(|request| !request.type_only) {
            return;
        }
        for span in std::mem::take(&mut self.direct_evals) {
            self.diagnostics.push(
                BundleDiagnostic::warning(
                    BundleErrorKind::DirectEval,
                    span.into(),
                    "direct `eval` cannot see this module's imports: the bundle reads them from the modules \
                     they come from, under other names",
                )
                .with_help("pass the code the values it needs as arguments: `new Function('val', code)(val)`"),
            );
        }
    }

    /// A value read of a `declare const enum`: tsc writes each member's value where it is
    /// read, from what it knows of the whole program; compiled module by module (as with
    /// `isolatedModules`), the read is left to run, of a name nothing declares.
    fn ambient_const_enum_read(&mut self, name: &IdentifierReference<'_>) {
        let reference = self.scoping.get_reference(name.reference_id());
        let const_enum = reference
            .symbol_id()
            .is_some_and(|symbol| self.scoping.symbol_flags(symbol).contains(SymbolFlags::ConstEnum));
        if const_enum && reference.flags().is_value() && !self.bound_at_run_time(name) {
            self.error(
                BundleErrorKind::Syntax,
                name.span.into(),
                format!(
                    "`{}` is a `declare const enum`, whose members nothing defines when the module runs",
                    name.name
                ),
                "declare it without `declare` (a `const enum` of a module), or as a `const` object",
            );
        }
    }

    /// Whether `name` is the route components' `Agent`, imported.
    fn is_agent(&self, name: &IdentifierReference<'_>) -> bool {
        let symbol = self.scoping.get_reference(name.reference_id()).symbol_id();
        symbol.is_some_and(|symbol| self.agent_bindings.contains(&symbol))
    }

    /// Whether `name` is bound to something that exists when the module runs: one of its
    /// declarations is a value (or a value import) not only written for TypeScript: `declare
    /// function require`, a function signature without a body, `declare class`, `interface`,
    /// `import type` bind nothing. (A value,
    /// a function or a class merged with a `declare namespace` of its name is there.)
    fn bound_at_run_time(&self, name: &IdentifierReference<'_>) -> bool {
        let symbol = self.scoping.get_reference(name.reference_id()).symbol_id();
        let runs = |flags: SymbolFlags, span: oxc_span::Span| {
            let value = SymbolFlags::Value | SymbolFlags::CatchVariable | SymbolFlags::Import;
            let signature = flags.contains(SymbolFlags::Function) && self.signatures.contains(&span.start);
            flags.intersects(value) && !flags.intersects(SymbolFlags::Ambient | SymbolFlags::TypeImport) && !signature
        };
        symbol.is_some_and(|symbol| match self.scoping.symbol_redeclarations(symbol) {
            [] => runs(self.scoping.symbol_flags(symbol), self.scoping.symbol_span(symbol)),
            declarations => declarations.iter().any(|declaration| runs(declaration.flags, declaration.span)),
        })
    }

    /// Whether `name`, one of CommonJS's variables, is used as itself where nothing catches
    /// its absence: a value (not in a type), bound to nothing, not directly in a `try` block
    /// with a `catch`.
    fn commonjs_used(&self, name: &IdentifierReference<'_>) -> bool {
        let value = self.scoping.get_reference(name.reference_id()).flags().is_value();
        let caught = self.caught_at.last() == Some(&self.function_depth);
        value && !self.bound_at_run_time(name) && !caught
    }

    /// The uses of CommonJS's variables the walk found, unless the module tests one of them.
    fn say_commonjs_uses(&mut self) {
        if self.commonjs_tested {
            return;
        }
        for (span, name) in std::mem::take(&mut self.commonjs_uses) {
            let help = commonjs_help(&name).expect("only CommonJS's variables are kept");
            let shown = if name == "require" { "require()" } else { name.as_str() };
            self.error(
                BundleErrorKind::CommonJs,
                span,
                format!("`{shown}` does not exist in the ES modules hooks run as"),
                help,
            );
        }
    }

    /// A component's tag names something declared or imported: rendered, an undeclared one
    /// throws a ReferenceError on every run (no component is a global).
    fn component_declared(&mut self, tag: &IdentifierReference<'_>) {
        if self.bound_at_run_time(tag) {
            return;
        }
        let help = match tag.name.as_str() {
            "Agent" => format!("import it: `import {{ Agent }} from \"{AGENT_SPECIFIER}\"`"),
            "Fragment" => "import it: `import { Fragment } from \"agent-bundle\"`, or write `<>…</>`".to_owned(),
            name => format!("declare or import `{name}`"),
        };
        let declared = self.scoping.get_reference(tag.reference_id()).symbol_id().is_some();
        let message = if declared {
            format!("`{}` is declared for TypeScript only: nothing of that name exists when the module runs", tag.name)
        } else {
            format!("`{}` is not declared or imported in this module", tag.name)
        };
        self.error(BundleErrorKind::UndefinedComponent, tag.span.into(), message, &help);
    }

    /// Records `<Tag>` where `Tag` is imported, or declared at the module's top level: what
    /// it renders is the module's too, which only the linked graph knows of an imported one.
    fn component_used(&mut self, tag: &IdentifierReference<'_>) {
        let Some(symbol) = self.scoping.get_reference(tag.reference_id()).symbol_id() else { return };
        let component = match self.import_origins.get(&symbol) {
            Some((specifier, name)) => UsedComponent::Imported { specifier: specifier.clone(), name: name.clone() },
            None if self.scoping.symbol_scope_id(symbol) == self.scoping.root_scope_id() => {
                UsedComponent::Local(tag.name.to_string())
            }
            None => return,
        };
        self.components.uses.push(ComponentUse { component, span: tag.span.into() });
    }

    /// `<Agent.X>` names one of the route components (`Agent.Contxt` would be `undefined`,
    /// which fails every render).
    fn agent_component(&mut self, object: &IdentifierReference<'_>, property: &JSXIdentifier<'_>) {
        if !self.is_agent(object) {
            return;
        }
        if property.name == "Context" {
            self.renders.context.get_or_insert(property.span.into());
        }
        if let Some((message, help)) = agent_component_problem(&object.name, &property.name) {
            let error = BundleDiagnostic::error(BundleErrorKind::MissingExport, property.span.into(), message);
            self.diagnostics.push(error.with_help(help));
        }
    }

    /// Records `<X.Y>` where `X` is imported from a module other than the route components'
    /// (whose `Agent` this module checks itself): linked, it may be their `Agent`.
    fn imported_member_tag(&mut self, object: &IdentifierReference<'_>, property: &JSXIdentifier<'_>) {
        let symbol = self.scoping.get_reference(object.reference_id()).symbol_id();
        let Some((specifier, name)) = symbol.and_then(|symbol| self.import_origins.get(&symbol)) else { return };
        self.imported_member_tags.push(ImportedMemberTag {
            specifier: specifier.clone(),
            name: name.clone(),
            local: object.name.to_string(),
            member: property.name.to_string(),
            span: property.span.into(),
        });
    }

    /// What an `<Agent.Result value={{ … }}>` written out as an object asks of its host
    /// (`{ … } satisfies RouteResult<…>` and `c ? { … } : undefined` too).
    fn result_value(&mut self, attributes: &[JSXAttributeItem<'_>]) {
        let value = attributes.iter().find_map(|item| match item {
            JSXAttributeItem::Attribute(attribute) if attribute.is_identifier("value") => attribute.value.as_ref(),
            _ => None,
        });
        let Some(JSXAttributeValue::ExpressionContainer(container)) = value else { return };
        let Some(value) = container.expression.as_expression() else { return };
        default_export::written_objects(value, &mut |object| {
            default_export::record_result(&mut self.renders, object, default_export::AGENT_RESULT_FIELDS);
        });
    }

    fn reserved(&mut self, name: &str, span: oxc_span::Span) {
        let span = Span::from(span);
        if name.starts_with(RESERVED_PREFIX) && !self.reserved_reported.contains(&span) {
            self.reserved_reported.push(span);
            self.error(
                BundleErrorKind::ReservedName,
                span,
                format!("`{name}` uses the reserved prefix `{RESERVED_PREFIX}`"),
                "names starting with `__ab_` belong to the bundle runtime; rename this binding",
            );
        }
    }

    fn unsupported_phase(&mut self, span: oxc_span::Span) {
        let span = self.keyword_span(span.start, span.end, "import");
        self.error(
            BundleErrorKind::Syntax,
            span,
            "`import source` and `import defer` are not supported",
            "use a plain import",
        );
    }

    /// Records a value export; a name exported twice is an error (the TypeScript parser lets
    /// it through, as overloads and merged declarations repeat names legitimately).
    fn exports(&mut self, name: &str, span: oxc_span::Span) {
        if self.exported.contains_key(name) {
            self.error(
                BundleErrorKind::Syntax,
                span.into(),
                format!("`{name}` is exported twice"),
                "a module has one binding per export name: rename or remove one of them",
            );
        } else {
            self.exported.insert(name.to_owned(), span.into());
        }
    }

    /// A member an earlier declaration of `namespace` exports, exported again by `block`
    /// (TypeScript's TS2393, TS2451): transpiled, the later would replace the earlier without
    /// a word. Namespaces merge, and are not members declared again; an enum would merge in
    /// TypeScript, but oxc makes the later enum a new object that replaces the earlier member.
    fn refuse_members_declared_again(&mut self, namespace: &OpenNamespace, block: &TSModuleBlock<'_>) {
        let NamespaceName { path, key } = &namespace.name;
        let exported_before = |name: &str| self.namespace_declarations.exported_before(key, name, namespace.span.start);
        let mut again = Vec::new();
        for statement in &block.body {
            let Statement::ExportDeclaration(export) = statement else { continue };
            let ids = match &export.declaration {
                declaration if declaration.declare() => continue,
                // (They merge; an overload signature declares nothing.)
                Declaration::TSNamespaceDeclaration(_) => continue,
                Declaration::FunctionDeclaration(function) if function.body.is_none() => continue,
                declaration => declared_ids(declaration),
            };
            again.extend(
                ids.into_iter().filter(|id| exported_before(&id.name)).map(|id| (id.name.to_string(), id.span)),
            );
        }
        for (name, span) in again {
            self.error(
                BundleErrorKind::Syntax,
                span.into(),
                format!("`{name}` is exported by another declaration of namespace `{path}` already"),
                "rename or remove one (or declare an enum's members in one declaration): the later would replace the earlier",
            );
        }
    }

    /// A namespace declared with `declare` too (`declare namespace Env { … }`): TypeScript
    /// merges the two, reading the ambient members through the namespace; oxc, seeing an
    /// ambient declaration, emits the other without binding its name.
    fn refuse_merge_with_ambient(&mut self, it: &TSNamespaceDeclaration<'_>) {
        if !is_instantiated(it, self.scoping) {
            return;
        }
        self.error(
            BundleErrorKind::Syntax,
            it.id.span.into(),
            format!("namespace `{}` is declared with `declare` elsewhere in this module too", it.id.name),
            "merge them into one declaration without `declare`, or give the ambient one another name",
        );
    }

    /// oxc exports a namespace's `let` or `var` as a copy taken when it is declared, where
    /// TypeScript reads and writes the namespace's member: an assignment (in the namespace, or
    /// through it from anywhere: `Cfg.level = 5`, `Cfg['level']`, an alias, `Object.assign`)
    /// reaches one of the two, which no check can follow everywhere.
    fn refuse_exported_variables(&mut self, namespace: &OpenNamespace, block: &TSModuleBlock<'_>) {
        for statement in &block.body {
            let Statement::ExportDeclaration(export) = statement else { continue };
            let Declaration::VariableDeclaration(variables) = &export.declaration else { continue };
            if variables.kind == VariableDeclarationKind::Const || variables.declare {
                continue;
            }
            let keyword = variables.kind.as_str();
            for id in variables.declarations.iter().flat_map(|declarator| declarator.id.get_binding_identifiers()) {
                self.error(
                    BundleErrorKind::Syntax,
                    id.span.into(),
                    format!(
                        "namespace `{}` exports `{}` as a `{keyword}`: transpiled, the namespace's code and its member are two copies, and an assignment changes one of them",
                        namespace.name.path, id.name
                    ),
                    "export a `const` (an object whose fields change, if it must change)",
                );
            }
        }
    }

    /// Whether `import X = N.Y` (or `= N`) names what a namespace of this module holding types
    /// alone declares: TypeScript leaves out an exported one, which oxc would keep, reading
    /// `N`, which is not there.
    fn aliases_types_only(&self, alias: &TSImportEqualsDeclaration<'_>) -> bool {
        let root = match &alias.module_reference {
            TSModuleReference::IdentifierReference(name) => Some(&**name),
            TSModuleReference::QualifiedName(name) => name.left.get_identifier_reference(),
            TSModuleReference::ExternalModuleReference(_) => None,
        };
        let symbol = root.and_then(|root| self.scoping.get_reference(root.reference_id()).symbol_id());
        let types_only = |symbol: SymbolId| {
            let flags = self.scoping.symbol_flags(symbol);
            flags.contains(SymbolFlags::NamespaceModule) && !flags.intersects(SymbolFlags::Value)
        };
        !alias.import_kind.is_type() && symbol.is_some_and(types_only)
    }

    /// The span of `word` between `start` and `end` in the source, or `start..start + len`.
    fn keyword_span(&self, start: u32, end: u32, word: &str) -> Span {
        let (from, to) = (start as usize, (end as usize).min(self.source.len()));
        let found = self.source.get(from..to).and_then(|text| text.find(word));
        let at = found.map_or(start, |offset| start + offset as u32);
        Span::new(at, at + word.len() as u32)
    }
}

impl<'a> Visit<'a> for Checker<'_> {
    fn visit_function(&mut self, it: &Function<'a>, flags: ScopeFlags) {
        // TypeScript's TS2393 (an overload signature has no body): the later would replace the
        // earlier without a word, where a JavaScript module is refused.
        if let (Some(id), Some(_), Some(implemented)) = (&it.id, &it.body, &mut self.implemented)
            && it.is_declaration()
            && let Some(symbol) = id.symbol_id.get()
            && !implemented.insert(symbol)
        {
            self.error(
                BundleErrorKind::Syntax,
                id.span.into(),
                format!("function `{}` is implemented twice in this scope", id.name),
                "rename or remove one: the later would replace the earlier (an overload signature has no body)",
            );
        }
        self.function_depth += 1;
        self.ordinary_function_depth += 1;
        walk::walk_function(self, it, flags);
        self.ordinary_function_depth -= 1;
        self.function_depth -= 1;
    }

    fn visit_class(&mut self, it: &Class<'a>) {
        for call in misplaced_super_calls(it) {
            self.error(
                BundleErrorKind::Syntax,
                call.into(),
                "this `super(...)` is no statement of its own directly in the constructor, whose parameter properties the transpiled class sets before it runs",
                "call `super(...)` as a statement directly in the constructor's body (TypeScript's TS2401), or assign the fields yourself after it",
            );
        }
        walk::walk_class(self, it);
    }

    fn visit_arrow_function_expression(&mut self, it: &oxc_ast::ast::ArrowFunctionExpression<'a>) {
        self.function_depth += 1;
        walk::walk_arrow_function_expression(self, it);
        self.function_depth -= 1;
    }

    fn visit_await_expression(&mut self, it: &AwaitExpression<'a>) {
        if self.function_depth == 0 {
            self.error(
                BundleErrorKind::TopLevelAwait,
                self.keyword_span(it.span.start, it.span.end, "await"),
                "top-level `await` is not supported in bundled modules",
                "modules are evaluated synchronously; move the `await` into the handler or an async function",
            );
        }
        walk::walk_await_expression(self, it);
    }

    fn visit_unary_expression(&mut self, it: &UnaryExpression<'a>) {
        // `typeof __dirname` (parenthesized, or under a TypeScript assertion, too).
        self.commonjs_tested |= it.operator == UnaryOperator::Typeof
            && matches!(it.argument.get_inner_expression(), Expression::Identifier(name) if is_commonjs_variable(&name.name));
        walk::walk_unary_expression(self, it);
    }

    fn visit_try_statement(&mut self, it: &TryStatement<'a>) {
        let caught = it.handler.is_some();
        if caught {
            self.caught_at.push(self.function_depth);
        }
        self.visit_block_statement(&it.block);
        if caught {
            self.caught_at.pop();
        }
        if let Some(handler) = &it.handler {
            self.visit_catch_clause(handler);
        }
        if let Some(finalizer) = &it.finalizer {
            self.visit_block_statement(finalizer);
        }
    }

    fn visit_for_of_statement(&mut self, it: &ForOfStatement<'a>) {
        // `for await (const chunk of process.stdin)`.
        if let Expression::StaticMemberExpression(stream) = it.right.get_inner_expression()
            && self.is_process_stdin(stream)
        {
            self.reads_stdin(it.right.span());
        }
        if it.r#await && self.function_depth == 0 {
            let span = self.keyword_span(it.span.start, it.left.span().start, "await");
            self.error(
                BundleErrorKind::TopLevelAwait,
                span,
                "top-level `for await` is not supported in bundled modules",
                "modules are evaluated synchronously; move the loop into the handler or an async function",
            );
        }
        walk::walk_for_of_statement(self, it);
    }

    fn visit_variable_declaration(&mut self, it: &VariableDeclaration<'a>) {
        if matches!(it.kind, VariableDeclarationKind::Using | VariableDeclarationKind::AwaitUsing) {
            let span = self.keyword_span(it.span.start, it.span.end, "using");
            self.error(
                BundleErrorKind::Syntax,
                span,
                "`using` declarations are not supported",
                "Node 20 has no explicit resource management; call the dispose method in a `finally` block",
            );
        }
        walk::walk_variable_declaration(self, it);
    }

    fn visit_accessor_property(&mut self, it: &AccessorProperty<'a>) {
        let span = self.keyword_span(it.span.start, it.span.end, "accessor");
        self.error(
            BundleErrorKind::Syntax,
            span,
            "`accessor` class fields are not supported",
            "Node 20 has no auto-accessors; write a private field with a getter and a setter",
        );
        walk::walk_accessor_property(self, it);
    }

    fn visit_with_clause(&mut self, it: &WithClause<'a>) {
        if !it.with_entries.is_empty() && !is_json_attribute(it) {
            self.error(
                BundleErrorKind::Syntax,
                it.span.into(),
                "import attributes other than `with { type: \"json\" }` are not supported",
                "the bundler links JavaScript, TypeScript and JSON modules, each by its file's extension",
            );
        }
    }

    fn visit_reg_exp_literal(&mut self, it: &RegExpLiteral<'a>) {
        let node20_lacks = oxc_regular_expression::RegexUnsupportedPatterns {
            named_capture_groups: false,
            duplicate_named_capture_groups: true,
            unicode_property_escapes: false,
            look_behind_assertions: false,
            pattern_modifiers: true,
        };
        if let Some(pattern) = &it.regex.pattern.pattern
            && oxc_regular_expression::has_unsupported_regular_expression_pattern(pattern, &node20_lacks)
        {
            self.error(
                BundleErrorKind::Syntax,
                it.span.into(),
                "this regular expression uses syntax Node 20 does not have (pattern modifiers or a group name used twice)",
                "write it without `(?i:…)` modifiers, and give every named group its own name",
            );
        }
    }

    fn visit_decorator(&mut self, it: &Decorator<'a>) {
        self.error(
            BundleErrorKind::Syntax,
            it.span.into(),
            "decorators are not supported",
            "Node 20 cannot run decorators; call the decorating function explicitly",
        );
        walk::walk_decorator(self, it);
    }

    fn visit_import_meta(&mut self, it: &ImportMeta) {
        self.error(
            BundleErrorKind::ImportMeta,
            it.span.into(),
            "`import.meta` is not supported in bundled modules",
            "it would describe the bundle, not this source file; pass paths in explicitly",
        );
    }

    fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
        // What a hook script reads its input with: an imported `readFileSync(0)` or
        // `fs.readFileSync('/dev/stdin')`, and `process.stdin`'s reading methods.
        let bound_to = |name: &IdentifierReference<'_>, symbols: &[SymbolId]| {
            let symbol = self.scoping.get_reference(name.reference_id()).symbol_id();
            symbol.is_some_and(|symbol| symbols.contains(&symbol))
        };
        let reads_file = match &it.callee {
            Expression::Identifier(callee) => bound_to(callee, &self.fs_reads.functions),
            Expression::StaticMemberExpression(callee) => {
                matches!(callee.property.name.as_str(), "readFileSync" | "readSync")
                    && matches!(&callee.object, Expression::Identifier(object) if bound_to(object, &self.fs_reads.modules))
            }
            _ => false,
        };
        let stdin = match it.arguments.first().and_then(|argument| argument.as_expression()) {
            Some(Expression::NumericLiteral(fd)) => fd.value == 0.0,
            Some(Expression::StringLiteral(path)) => path.value == "/dev/stdin",
            _ => false,
        };
        let reads_stream = match &it.callee {
            Expression::StaticMemberExpression(callee) => {
                STREAM_READS.contains(&callee.property.name.as_str())
                    && matches!(callee.object.get_inner_expression(), Expression::StaticMemberExpression(stream) if self.is_process_stdin(stream))
            }
            _ => false,
        };
        if (reads_file && stdin) || reads_stream {
            self.reads_stdin(it.span);
        }
        self.direct_eval(it);
        walk::walk_call_expression(self, it);
    }

    /// A route's (or its component's) read of which host it renders for:
    /// `canonical.provenance`. (A handler's, of its `context`, is `default_export`'s.)
    fn visit_static_member_expression(&mut self, it: &StaticMemberExpression<'a>) {
        self.renders.reads_host |= it.property.name == "provenance";
        walk::walk_static_member_expression(self, it);
    }

    /// `canonical['provenance']` (or `` [`provenance`] ``), as `canonical.provenance` is.
    fn visit_computed_member_expression(&mut self, it: &oxc_ast::ast::ComputedMemberExpression<'a>) {
        self.renders.reads_host |= match it.expression.get_inner_expression() {
            Expression::StringLiteral(name) => name.value == "provenance",
            Expression::TemplateLiteral(name) => name.single_quasi().is_some_and(|name| name == "provenance"),
            _ => false,
        };
        walk::walk_computed_member_expression(self, it);
    }

    /// `({ provenance } = canonical)`, as `const { provenance } = canonical` is.
    fn visit_assignment_target_property_identifier(
        &mut self,
        it: &oxc_ast::ast::AssignmentTargetPropertyIdentifier<'a>,
    ) {
        self.renders.reads_host |= it.binding.name == "provenance";
        walk::walk_assignment_target_property_identifier(self, it);
    }

    /// `({ provenance: p } = canonical)`.
    fn visit_assignment_target_property_property(&mut self, it: &oxc_ast::ast::AssignmentTargetPropertyProperty<'a>) {
        self.renders.reads_host |= it.name.static_name().is_some_and(|name| name == "provenance");
        walk::walk_assignment_target_property_property(self, it);
    }

    /// `const { provenance } = canonical`, `({ canonical: { provenance } })`: a read of the
    /// provenance as a `.provenance` is.
    fn visit_binding_property(&mut self, it: &oxc_ast::ast::BindingProperty<'a>) {
        self.renders.reads_host |= it.key.static_name().is_some_and(|name| name == "provenance");
        walk::walk_binding_property(self, it);
    }

    fn visit_import_expression(&mut self, it: &ImportExpression<'a>) {
        if it.phase.is_some() {
            self.unsupported_phase(it.span);
        }
        let json_module = literal_specifier(&it.source).is_some_and(is_json_module);
        if let Some(options) = it.options.as_ref().filter(|options| !(json_module && is_json_import_options(options))) {
            self.error(
                BundleErrorKind::DynamicImport,
                options.span().into(),
                "`import()` options other than `{ with: { type: \"json\" } }` for a .json module are not supported",
                "pass only the specifier: the bundler knows a JSON module by its .json extension",
            );
        }
        match literal_specifier(&it.source) {
            Some(specifier) => self.request(specifier, it.source.span(), false),
            None => self.error(
                BundleErrorKind::DynamicImport,
                it.source.span().into(),
                "dynamic `import()` needs a string literal specifier",
                "the bundler must know which module to include: write `import(\"./module\")` or use a static import",
            ),
        }
        walk::walk_import_expression(self, it);
    }

    fn visit_import_declaration(&mut self, it: &ImportDeclaration<'a>) {
        let type_only = it.import_kind.is_type()
            || it.specifiers.as_ref().is_some_and(|specifiers| {
                !specifiers.is_empty()
                    && specifiers.iter().all(|specifier| {
                        matches!(specifier, ImportDeclarationSpecifier::ImportSpecifier(s) if s.import_kind.is_type())
                    })
            });
        self.attributed_request(&it.source, it.with_clause.as_deref(), type_only);
        for specifier in it.specifiers.iter().flatten() {
            let (name, span) = match specifier {
                ImportDeclarationSpecifier::ImportSpecifier(s) => (s.imported.name().to_string(), s.imported.span()),
                ImportDeclarationSpecifier::ImportDefaultSpecifier(s) => ("default".to_owned(), s.local.span),
                ImportDeclarationSpecifier::ImportNamespaceSpecifier(_) => continue,
            };
            self.imported_name(&it.source.value, name, span);
        }
        if it.phase.is_some() {
            self.unsupported_phase(it.span);
        }
        walk::walk_import_declaration(self, it);
    }

    fn visit_export_from_declaration(&mut self, it: &ExportFromDeclaration<'a>) {
        for specifier in &it.specifiers {
            self.imported_name(&it.source.value, specifier.local.name().to_string(), specifier.local.span());
            if it.export_kind.is_type() || specifier.export_kind.is_type() {
                self.type_exports.insert(specifier.exported.name().to_string());
            } else {
                self.exports(&specifier.exported.name(), specifier.exported.span());
            }
        }
        let type_only = it.export_kind.is_type()
            || (!it.specifiers.is_empty() && it.specifiers.iter().all(|s| s.export_kind.is_type()));
        self.attributed_request(&it.source, it.with_clause.as_deref(), type_only);
        walk::walk_export_from_declaration(self, it);
    }

    fn visit_export_named_declaration(&mut self, it: &ExportNamedDeclaration<'a>) {
        for specifier in &it.specifiers {
            self.export_spans.entry(specifier.local.name().to_string()).or_insert(specifier.local.span().into());
            if !it.export_kind.is_type() && !specifier.export_kind.is_type() {
                self.exports(&specifier.exported.name(), specifier.exported.span());
            }
            // `export type { Props }`, or `export { Props }` of a local interface or alias.
            let local_type = match &specifier.local {
                ModuleExportName::IdentifierReference(local) => {
                    self.scoping.get_reference(local.reference_id()).symbol_id().is_some_and(|symbol| {
                        let flags = self.scoping.symbol_flags(symbol);
                        flags.intersects(SymbolFlags::Interface | SymbolFlags::TypeAlias) && !flags.is_value()
                    })
                }
                _ => false,
            };
            if self.namespaces.is_empty() && (it.export_kind.is_type() || specifier.export_kind.is_type() || local_type)
            {
                self.type_exports.insert(specifier.exported.name().to_string());
            }
        }
        walk::walk_export_named_declaration(self, it);
    }

    fn visit_export_declaration(&mut self, it: &ExportDeclaration<'a>) {
        if let Declaration::TSImportEqualsDeclaration(alias) = &it.declaration
            && self.aliases_types_only(alias)
        {
            self.type_only_aliases.insert(it.span.start);
            if self.namespaces.is_empty() {
                self.type_exports.insert(alias.id.name.to_string());
            }
        }
        // Only what exists at run time; overload signatures, `declare`, types, enums and
        // namespaces (which merge) do not bind a name twice. A namespace's exports are its
        // members, not the module's.
        if !self.namespaces.is_empty() {
            return walk::walk_export_declaration(self, it);
        }
        match &it.declaration {
            Declaration::TSInterfaceDeclaration(interface) => {
                self.type_exports.insert(interface.id.name.to_string());
            }
            Declaration::TSTypeAliasDeclaration(alias) => {
                self.type_exports.insert(alias.id.name.to_string());
            }
            Declaration::VariableDeclaration(variables) if !variables.declare => {
                for declarator in &variables.declarations {
                    for id in declarator.id.get_binding_identifiers() {
                        self.exports(&id.name, id.span);
                    }
                }
            }
            Declaration::FunctionDeclaration(function) if function.body.is_some() && !function.declare => {
                if let Some(id) = &function.id {
                    self.exports(&id.name, id.span);
                }
            }
            Declaration::ClassDeclaration(class) if !class.declare => {
                if let Some(id) = &class.id {
                    self.exports(&id.name, id.span);
                }
            }
            _ => {}
        }
        walk::walk_export_declaration(self, it);
    }

    fn visit_export_default_declaration(&mut self, it: &ExportDefaultDeclaration<'a>) {
        let overload =
            matches!(&it.declaration, ExportDefaultDeclarationKind::FunctionDeclaration(f) if f.body.is_none());
        if !overload && !matches!(it.declaration, ExportDefaultDeclarationKind::TSInterfaceDeclaration(_)) {
            let span = self.keyword_span(it.span.start, it.span.end, "default");
            self.exports("default", oxc_span::Span::new(span.start, span.end));
            self.default_export_span.get_or_insert(span);
        }
        walk::walk_export_default_declaration(self, it);
    }

    fn visit_export_all_declaration(&mut self, it: &ExportAllDeclaration<'a>) {
        if let Some(name) = it.exported.as_ref().filter(|_| !it.export_kind.is_type()) {
            self.exports(&name.name(), name.span());
        }
        self.attributed_request(&it.source, it.with_clause.as_deref(), it.export_kind.is_type());
        walk::walk_export_all_declaration(self, it);
    }

    fn visit_ts_import_equals_declaration(&mut self, it: &TSImportEqualsDeclaration<'a>) {
        if !it.import_kind.is_type()
            && let TSModuleReference::ExternalModuleReference(reference) = &it.module_reference
        {
            self.error(
                BundleErrorKind::Syntax,
                reference.span.into(),
                "`import x = require(...)` is CommonJS and is not supported",
                "use an ES import: `import x from \"...\"`",
            );
        }
        walk::walk_ts_import_equals_declaration(self, it);
    }

    fn visit_ts_export_assignment(&mut self, it: &TSExportAssignment<'a>) {
        self.error(
            BundleErrorKind::Syntax,
            it.span.into(),
            "`export =` is CommonJS and is not supported",
            "use `export default` instead",
        );
        walk::walk_ts_export_assignment(self, it);
    }

    // `declare module 'x' {}` and `declare global {}` describe other modules and the global
    // scope to TypeScript: nothing in them is this module's, or runs.
    fn visit_ts_external_module_declaration(&mut self, _: &TSExternalModuleDeclaration<'a>) {}

    fn visit_ts_global_declaration(&mut self, _: &TSGlobalDeclaration<'a>) {}

    fn visit_ts_namespace_declaration(&mut self, it: &TSNamespaceDeclaration<'a>) {
        let name = self.namespace_declarations.name(it.span.start, &it.id.name);
        self.namespaces.push(OpenNamespace { name, span: it.span });
        self.ambient_namespaces += u32::from(it.declare);
        walk::walk_ts_namespace_declaration(self, it);
        let ambient = self.ambient_namespaces > 0;
        self.ambient_namespaces -= u32::from(it.declare);
        if !ambient && self.namespace_declarations.declared_ambient(&self.namespaces.last().expect("pushed").name.key) {
            self.refuse_merge_with_ambient(it);
        }
        if let (Some(namespace), TSNamespaceDeclarationBody::TSModuleBlock(block)) = (self.namespaces.pop(), &it.body) {
            self.refuse_members_declared_again(&namespace, block);
            if !ambient {
                self.refuse_exported_variables(&namespace, block);
            }
        }
    }

    fn visit_program(&mut self, it: &Program<'a>) {
        self.module_level.extend(it.body.iter().map(|statement| statement.span().start));
        walk::walk_program(self, it);
    }

    /// What a statement declaring components renders, and the components it renders, are
    /// theirs (and the module's).
    fn visit_statement(&mut self, it: &Statement<'a>) {
        let Some(names) = self.component_statements.remove(&it.span().start) else {
            return walk::walk_statement(self, it);
        };
        let first_use = self.components.uses.len();
        let outer = std::mem::take(&mut self.renders);
        walk::walk_statement(self, it);
        let renders = std::mem::replace(&mut self.renders, outer);
        self.renders.add(&renders);
        let uses = &self.components.uses[first_use..];
        if renders != Renders::default() || !uses.is_empty() {
            let component = Component { renders, uses: uses.to_vec() };
            for name in names {
                self.components.declared.insert(name, component.clone());
            }
        }
    }

    fn visit_ts_module_block(&mut self, it: &TSModuleBlock<'a>) {
        self.module_level.extend(it.body.iter().map(|statement| statement.span().start));
        walk::walk_ts_module_block(self, it);
    }

    /// An `import` or `export` in a function or a block is a syntax error to Node, which
    /// would refuse every run of the wrapper: said where it is written, and not read as
    /// one of the module's (its names would mislead every later check).
    fn visit_module_declaration(&mut self, it: &ModuleDeclaration<'a>) {
        if let ModuleDeclaration::ExportNamedDeclaration(list) = it
            && !list.export_kind.is_type()
            && !self.namespaces.is_empty()
            && self.ambient_namespaces == 0
        {
            // TypeScript's TS1194: a namespace exports what it declares.
            self.error(
                BundleErrorKind::Syntax,
                self.keyword_span(list.span.start, list.span.end, "export"),
                "a namespace cannot export a list of names",
                "export each where it is declared: `export const a = …`",
            );
            return;
        }
        if self.module_level.contains(&it.span().start) {
            walk::walk_module_declaration(self, it);
            return;
        }
        let keyword = if matches!(it, ModuleDeclaration::ImportDeclaration(_)) { "import" } else { "export" };
        self.error(
            BundleErrorKind::Syntax,
            self.keyword_span(it.span().start, it.span().end, keyword),
            format!("`{keyword}` may only appear at the top level of a module"),
            "move it out of the function or block, to the top level of the file",
        );
    }

    fn visit_binding_identifier(&mut self, it: &BindingIdentifier<'a>) {
        self.reserved(&it.name, it.span);
    }

    fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
        self.reserved(&it.name, it.span);
        // TypeScript reads a name another declaration of the same namespace exports (earlier
        // or later in the module) as that namespace's member, before any binding outside this
        // declaration; transpiled, each declaration is a function of its own, where the bare
        // name is bound to nothing or to that outer binding (an import of the same name, say).
        // (A type, `typeof`, `extends` or `implements` is stripped: where it names such a
        // member, nothing is left to run.)
        let bound_outside = |block: oxc_span::Span| {
            let reference = self.scoping.get_reference(it.reference_id());
            reference.flags().is_value()
                && reference
                    .symbol_id()
                    .is_none_or(|symbol| !block.contains_inclusive(self.scoping.symbol_span(symbol)))
        };
        let exported_elsewhere = |namespace: &&OpenNamespace| {
            self.namespace_declarations.exported_elsewhere(&namespace.name.key, &it.name, namespace.span.start)
        };
        if let Some(namespace) = self.namespaces.iter().rev().find(exported_elsewhere)
            && bound_outside(namespace.span)
        {
            let (path, name) = (namespace.name.path.clone(), it.name.to_string());
            self.error(
                BundleErrorKind::Syntax,
                it.span.into(),
                format!("`{name}` is exported by another declaration of namespace `{path}`, which is not merged into this one"),
                &format!("write `{path}.{name}`, or declare the namespace once"),
            );
        }
        self.ambient_const_enum_read(it);
        // CommonJS's module variables, which an ES module lacks: Node would throw on every
        // run. (Code meant for both kinds of module tests them with `typeof` first.)
        if is_commonjs_variable(&it.name) && self.commonjs_used(it) {
            self.commonjs_uses.push((it.span.into(), it.name.to_string()));
        }
        // Bundled, a module is a function, whose `arguments` a reference would read.
        if it.name == "arguments"
            && self.ordinary_function_depth == 0
            && self.scoping.get_reference(it.reference_id()).symbol_id().is_none()
        {
            self.error(
                BundleErrorKind::Syntax,
                it.span.into(),
                "`arguments` does not exist at a module's top level",
                "use rest parameters in a function: `(...args) => …`",
            );
        }
    }

    fn visit_jsx_opening_element(&mut self, it: &JSXOpeningElement<'a>) {
        match &it.name {
            JSXElementName::Identifier(tag) if self.renders_routes => self.error(
                BundleErrorKind::UndefinedComponent,
                tag.span.into(),
                format!("`<{}>` is an HTML element, which a route cannot render", tag.name),
                "render `Agent.Result` or `Agent.Context`, text, or a component (a capitalized name)",
            ),
            JSXElementName::IdentifierReference(tag) if self.is_agent(tag) => self.error(
                BundleErrorKind::MissingExport,
                tag.span.into(),
                format!("`{}` holds the route components and is none itself", tag.name),
                &format!("render `{0}.Result` or `{0}.Context`", tag.name),
            ),
            JSXElementName::IdentifierReference(tag) => {
                self.component_declared(tag);
                self.component_used(tag);
            }
            JSXElementName::MemberExpression(member) => {
                // (`globalThis` is there in every module.)
                if let JSXMemberExpressionObject::IdentifierReference(object) = &member.object
                    && object.name != "globalThis"
                {
                    self.component_declared(object);
                    self.agent_component(object, &member.property);
                    self.imported_member_tag(object, &member.property);
                    if member.property.name == "Result" && self.is_agent(object) {
                        self.result_value(&it.attributes);
                    }
                }
            }
            _ => {}
        }
        walk::walk_jsx_opening_element(self, it);
    }

    fn visit_jsx_element(&mut self, it: &JSXElement<'a>) {
        self.first_jsx.get_or_insert(it.span.into());
        if let JSXElementName::MemberExpression(member) = &it.opening_element.name
            && let JSXMemberExpressionObject::IdentifierReference(object) = &member.object
            && member.property.name == "Result"
            && self.is_agent(object)
        {
            // (Whitespace alone is no text: the runtime passes over it, as JSX keeps a space
            // between two tags on one line.)
            let text = it.children.iter().find_map(|child| match child {
                JSXChild::Text(text) if !text.value.trim().is_empty() => Some(text.span),
                JSXChild::ExpressionContainer(container) => match &container.expression {
                    JSXExpression::StringLiteral(_)
                    | JSXExpression::TemplateLiteral(_)
                    | JSXExpression::NumericLiteral(_) => Some(container.span),
                    _ => None,
                },
                _ => None,
            });
            if let Some(span) = text {
                self.renders.stray_text.get_or_insert(span.into());
            }
        }
        walk::walk_jsx_element(self, it);
    }

    fn visit_jsx_fragment(&mut self, it: &JSXFragment<'a>) {
        self.first_jsx.get_or_insert(it.span.into());
        walk::walk_jsx_fragment(self, it);
    }
}

/// The statements directly in `program` that declare values, by where they start, with the
/// names they declare (`default` for an anonymous default export), and each name the module
/// exports of its own, with the local name it exports: where a component's tags lead.
fn top_level_values(program: &Program<'_>) -> (HashMap<u32, Vec<String>>, BTreeMap<String, String>) {
    let (mut statements, mut exported) = (HashMap::new(), BTreeMap::new());
    for statement in &program.body {
        let names = match statement {
            Statement::ExportNamedDeclaration(export) => {
                for specifier in &export.specifiers {
                    exported.insert(specifier.exported.name().to_string(), specifier.local.name().to_string());
                }
                continue;
            }
            Statement::ExportDeclaration(export) => {
                let names = declared_names(&export.declaration);
                exported.extend(names.iter().map(|name| (name.clone(), name.clone())));
                names
            }
            Statement::ExportDefaultDeclaration(export) => {
                let local = match &export.declaration {
                    ExportDefaultDeclarationKind::FunctionDeclaration(function) => function.id.as_ref(),
                    ExportDefaultDeclarationKind::ClassDeclaration(class) => class.id.as_ref(),
                    ExportDefaultDeclarationKind::Identifier(local) => {
                        exported.insert("default".to_owned(), local.name.to_string());
                        continue;
                    }
                    _ => None,
                };
                let local = local.map_or_else(|| "default".to_owned(), |id| id.name.to_string());
                exported.insert("default".to_owned(), local.clone());
                vec![local]
            }
            statement => statement.as_declaration().map(declared_names).unwrap_or_default(),
        };
        if !names.is_empty() {
            statements.insert(statement.span().start, names);
        }
    }
    (statements, exported)
}

/// The `super(...)` calls of a derived class's constructor with parameter properties
/// (`constructor(readonly a: number)`) that are not statements of their own directly in its
/// body: oxc sets the properties right after the first call that is, or first thing in the
/// body when none is, where `this` does not exist yet.
fn misplaced_super_calls(class: &Class<'_>) -> Vec<oxc_span::Span> {
    #[derive(Default)]
    struct SuperCalls(Vec<oxc_span::Span>);
    impl<'a> Visit<'a> for SuperCalls {
        fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
            if it.callee.is_super() {
                self.0.push(it.span);
            }
            walk::walk_call_expression(self, it);
        }
        // (Another function or class has its own `super`; an arrow function shares it.)
        fn visit_function(&mut self, _: &Function<'a>, _: ScopeFlags) {}
        fn visit_class(&mut self, _: &Class<'a>) {}
    }
    // (The implementation: an overload signature has no body, nor parameter properties.)
    let constructor = class.body.body.iter().find_map(|element| match element {
        ClassElement::MethodDefinition(method) if method.kind.is_constructor() && method.value.body.is_some() => {
            Some(&*method.value)
        }
        _ => None,
    });
    let with_properties = |constructor: &&Function<'_>| constructor.params.items.iter().any(|p| p.has_modifier());
    let derived = class.heritage.is_some();
    let Some(body) = constructor.filter(|c| derived && with_properties(c)).and_then(|c| c.body.as_ref()) else {
        return Vec::new();
    };
    let at_root: Vec<oxc_span::Span> = body
        .statements
        .iter()
        .filter_map(|statement| match statement {
            Statement::ExpressionStatement(statement) if statement.expression.is_super_call_expression() => {
                Some(statement.expression.span())
            }
            _ => None,
        })
        .collect();
    let mut calls = SuperCalls::default();
    calls.visit_function_body(body);
    calls.0.retain(|call| !at_root.contains(call));
    calls.0
}

/// The specifier routes import their components from, and the components `Agent` holds
/// (`src/runtime/agent.mjs`).
pub(crate) const AGENT_SPECIFIER: &str = "@agent-bundle/runtime";
const AGENT_COMPONENTS: [&str; 2] = ["Result", "Context"];

/// The methods of a readable stream that read it (`process.stdin.on('data', …)`).
const STREAM_READS: [&str; 9] =
    ["read", "on", "once", "addListener", "prependListener", "pipe", "setEncoding", "resume", "toArray"];

/// What to write instead of CommonJS's module variable `name`, which an ES module lacks
/// (`None`: not one of them).
fn commonjs_help(name: &str) -> Option<&'static str> {
    Some(match name {
        "require" => {
            "import it instead: `import fs from \"node:fs\"`, `import data from \"./data.json\"`, or \
             `await import(\"./module\")` in an async function"
        }
        "module" | "exports" => "export instead: `export default …`, `export const …`",
        "__dirname" | "__filename" => {
            "this file's folder is not there when the hook runs: data it needs ships inside the wrapper as an \
             import (`import rules from './rules.json'`)"
        }
        _ => return None,
    })
}

fn is_commonjs_variable(name: &str) -> bool {
    commonjs_help(name).is_some()
}

/// Where the names of `program`'s function signatures without a body start
/// ([`Checker::signatures`]).
fn function_signatures(program: &Program<'_>) -> BTreeSet<u32> {
    #[derive(Default)]
    struct Signatures(BTreeSet<u32>);
    impl<'a> Visit<'a> for Signatures {
        fn visit_function(&mut self, it: &Function<'a>, flags: ScopeFlags) {
            if let (None, Some(id)) = (&it.body, &it.id) {
                self.0.insert(id.span.start);
            }
            walk::walk_function(self, it, flags);
        }
    }
    let mut signatures = Signatures::default();
    signatures.visit_program(program);
    signatures.0
}

/// What is wrong with `<local.member>` where `local` is the route components' `Agent`: the
/// message and help when `member` is none of them.
pub(crate) fn agent_component_problem(local: &str, member: &str) -> Option<(String, String)> {
    if AGENT_COMPONENTS.contains(&member) {
        return None;
    }
    let components: Vec<String> = AGENT_COMPONENTS.iter().map(|c| format!("`{local}.{c}`")).collect();
    let help = format!("the route components are {}", components.join(" and "));
    Some((
        format!("`Agent` has no component `{member}`"),
        crate::diagnostics::suggesting(member, AGENT_COMPONENTS, &help),
    ))
}

/// What each value `program` imports by name or as a default is: the specifier and the name
/// imported (`default` for a default import), but for the route components' module.
fn import_origins(program: &Program<'_>) -> HashMap<SymbolId, (String, String)> {
    let mut origins = HashMap::new();
    for statement in &program.body {
        let Statement::ImportDeclaration(import) = statement else { continue };
        if import.import_kind.is_type() || import.source.value == AGENT_SPECIFIER {
            continue;
        }
        for specifier in import.specifiers.iter().flatten() {
            let (local, name) = match specifier {
                ImportDeclarationSpecifier::ImportSpecifier(named) if !named.import_kind.is_type() => {
                    (&named.local, named.imported.name().to_string())
                }
                ImportDeclarationSpecifier::ImportDefaultSpecifier(default) => (&default.local, "default".to_owned()),
                _ => continue,
            };
            if let Some(symbol) = local.symbol_id.get() {
                origins.insert(symbol, (import.source.value.to_string(), name));
            }
        }
    }
    origins
}

/// What `program`'s import declarations of any of `sources` bind.
fn imported_from<'p, 'a>(
    program: &'p Program<'a>,
    sources: &'p [&str],
) -> impl Iterator<Item = &'p ImportDeclarationSpecifier<'a>> {
    let imports = program.body.iter().filter_map(|statement| match statement {
        Statement::ImportDeclaration(import) if sources.contains(&import.source.value.as_str()) => {
            import.specifiers.as_ref()
        }
        _ => None,
    });
    imports.flatten()
}

/// The local bindings of what `node:fs` gives to read a file with: `readFileSync` and
/// `readSync` (renamed or not), and the module itself (`import fs`, `import * as fs`).
#[derive(Default)]
struct FsReads {
    functions: Vec<SymbolId>,
    modules: Vec<SymbolId>,
}

fn fs_reads(program: &Program<'_>) -> FsReads {
    let mut reads = FsReads::default();
    for specifier in imported_from(program, &["fs", "node:fs"]) {
        match specifier {
            ImportDeclarationSpecifier::ImportSpecifier(named) => {
                if matches!(named.imported.name().as_str(), "readFileSync" | "readSync") {
                    reads.functions.extend(named.local.symbol_id.get());
                }
            }
            ImportDeclarationSpecifier::ImportDefaultSpecifier(module) => {
                reads.modules.extend(module.local.symbol_id.get())
            }
            ImportDeclarationSpecifier::ImportNamespaceSpecifier(module) => {
                reads.modules.extend(module.local.symbol_id.get());
            }
        }
    }
    reads
}

/// The local bindings of `import { Agent } from "@agent-bundle/runtime"` (renamed or not).
fn agent_bindings(program: &Program<'_>) -> Vec<SymbolId> {
    imported_from(program, &[AGENT_SPECIFIER])
        .filter_map(|specifier| match specifier {
            ImportDeclarationSpecifier::ImportSpecifier(named) if named.imported.name() == "Agent" => {
                named.local.symbol_id.get()
            }
            _ => None,
        })
        .collect()
}

/// The specifier of `import(<literal>)`: a string or a template without substitutions.
pub(crate) fn literal_specifier<'a>(source: &Expression<'a>) -> Option<&'a str> {
    match source.without_parentheses() {
        Expression::StringLiteral(literal) => Some(literal.value.as_str()),
        Expression::TemplateLiteral(template) if template.expressions.is_empty() => {
            template.quasis.first().and_then(|quasi| quasi.value.cooked).map(|cooked| cooked.as_str())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::transpile::tests::{errors, one};
    use super::super::transpile::{Severity, transpile};
    use super::*;

    /// A function implemented twice in one scope, or a member two declarations of a namespace
    /// export, is refused in TypeScript as in JavaScript; overloads, functions of other scopes
    /// and a namespace merged with a function are fine.
    #[test]
    fn a_function_implemented_twice_is_an_error() {
        let twice = "function f() { return 1; }\nfunction f() { return 2; }\nexport default f;\n";
        assert_eq!(errors("src/a.ts", twice), one(BundleErrorKind::Syntax, "f"));
        // A namespace declared twice merges: a member both export is declared twice.
        let merged = "namespace N { export function f() { return 1; } export const c = 1; export const m = 1; }\n\
                      namespace N { export function f() { return 2; } export const c = 2; export import m = Math.max; export namespace M {} }\n\
                      namespace N { export namespace M { export const v = 1; } }\nexport default N;\n";
        let found: Vec<_> = errors("src/a.ts", merged).into_iter().map(|(_, text)| text).collect();
        assert_eq!(found, ["f", "c", "m"]);
        // An enum a later block exports would replace the earlier member, enum or namespace
        // (oxc's enum is a new object); one block's enums merge, as does a later namespace.
        let enums = "namespace G { export enum S { a = 1 } export namespace T { export const v = 1; } export const c = 1; }\n\
                     namespace G { export enum S { b = 2 } export enum T { b = 2 } export enum c { d } }\n\
                     namespace H { export enum S { a = 1 } export enum S { b = 2 } }\n\
                     namespace H { export namespace S { export const w = 4; } }\nexport default [G, H];\n";
        let found: Vec<_> = errors("src/a.ts", enums).into_iter().map(|(_, text)| text).collect();
        assert_eq!(found, ["S", "T", "c"]);
        // A namespace its enclosing one does not export is that declaration's own: two of them
        // merge with nothing (`namespace A.B` is exported from `A`).
        let own = "namespace A { namespace B { export function f() { return 1; } } export const one = B.f(); }\n\
                   namespace A { namespace B { export function f() { return 2; } export const x = 1; } export const two = B.f(); }\n\
                   namespace A.B { export const x = 2; }\nexport default A;\n";
        assert_eq!(errors("src/a.ts", own), []);
        assert_eq!(errors("src/a.js", twice).len(), 1, "the parser's own error, once");
        let fine = "function g(x: string): string;\nfunction g(x: number): number;\nfunction g(x: any) { return x; }\n\
                    function h() { function f() {} return f; }\nfunction k() { function f() {} return f; }\n\
                    function m() {}\nnamespace m { export const v = 1; }\nexport default [g, h, k, m];\n";
        assert_eq!(errors("src/a.ts", fine), []);
    }

    #[test]
    fn top_level_await_is_an_error() {
        let source = "await Promise.resolve();\nfor await (const x of []) {}\nasync function ok() { await 1; for await (const y of []) {} }\nconst f = async () => await 2;\nclass C { async m() { await 3; } }\n";
        assert_eq!(
            errors("src/a.ts", source),
            [
                (BundleErrorKind::TopLevelAwait, "await".to_owned()),
                (BundleErrorKind::TopLevelAwait, "await".to_owned())
            ]
        );
        let out = transpile("src/a.ts", source);
        assert_eq!(out.diagnostics[0].span, Span::new(0, 5));
        assert_eq!(out.diagnostics[1].span, Span::new(29, 34));
    }

    #[test]
    fn import_meta_is_an_error() {
        assert_eq!(
            errors("src/a.ts", "export const here = import.meta.url;\n"),
            one(BundleErrorKind::ImportMeta, "import.meta")
        );
    }

    /// A route's tags name what exists: `Agent`'s components, imported; a component declared
    /// or imported. Either mistake fails every render.
    #[test]
    fn a_tag_names_a_declared_component_and_one_of_agents() {
        let import = "import { Agent } from '@agent-bundle/runtime';\n";
        let route = |body: &str| format!("{import}function Note() {{ return 'n'; }}\nexport default () => {body};\n");
        assert_eq!(
            errors("src/events/stop.tsx", &route("<Agent.Contxt>x</Agent.Contxt>")),
            one(BundleErrorKind::MissingExport, "Contxt")
        );
        let help =
            transpile("src/events/stop.tsx", &route("<Agent.Contxt>x</Agent.Contxt>")).diagnostics[0].help.clone();
        assert_eq!(
            help.as_deref(),
            Some("did you mean `Context`? the route components are `Agent.Result` and `Agent.Context`")
        );
        assert_eq!(
            errors("src/events/stop.tsx", "export default () => <Agent.Context>x</Agent.Context>;\n"),
            one(BundleErrorKind::UndefinedComponent, "Agent")
        );
        assert_eq!(
            errors("src/events/stop.tsx", &route("<Notes />")),
            one(BundleErrorKind::UndefinedComponent, "Notes")
        );
        let fine = "import { Agent as A } from '@agent-bundle/runtime';\nconst Local = { Box: () => null };\n\
                    function Note() { return 'n'; }\n\
                    export default () => <A.Result value={{}}><A.Context><Note /></A.Context><Local.Box /><globalThis.X /></A.Result>;\n";
        assert_eq!(errors("src/events/stop.tsx", fine), []);
        // What `declare module` and `declare global` hold is no export of this module's.
        let shims = "declare module '*.svg' { const c: string; export default c; }\n\
                     declare module '*.txt' { const c: string; export default c; }\n\
                     declare module 'legacy' { function legacy(x: string): number; export = legacy; }\n\
                     declare global { interface Window { x: number } }\nexport default () => null;\n";
        assert_eq!(errors("src/a.ts", shims), []);
        // A function, or a value, merged with a `declare namespace` of its name is there.
        let merged = "export function Card() { return null; }\nexport declare namespace Card { interface Props {} }\n\
                      const Box = () => null;\ndeclare namespace Box { type Props = {}; }\n\
                      export default () => <><Card /><Box /></>;\n";
        assert_eq!(errors("src/events/stop.tsx", merged), []);
        // What exists for TypeScript alone, an HTML element, `Agent` itself: none renders.
        for ghost in [
            "declare const Ghost: any;",
            "declare class Ghost {}",
            "declare function Ghost(): null;",
            "function Ghost(): null;",
            "interface Ghost {}",
        ] {
            assert_eq!(
                errors("src/events/stop.tsx", &format!("{ghost}\nexport default () => <Ghost />;\n")),
                one(BundleErrorKind::UndefinedComponent, "Ghost"),
                "{ghost}"
            );
        }
        assert_eq!(errors("src/events/stop.tsx", &route("<div />")), one(BundleErrorKind::UndefinedComponent, "div"));
        assert_eq!(errors("src/events/stop.tsx", &route("<Agent />")), one(BundleErrorKind::MissingExport, "Agent"));
    }

    /// Reading the hook's stdin finds nothing: the wrapper has read it. A warning, at the read.
    #[test]
    fn a_read_of_stdin_is_warned_of() {
        let warnings = |source: &str| -> Vec<String> {
            let out = transpile("src/h.ts", source);
            out.diagnostics
                .iter()
                .filter(|d| d.kind == BundleErrorKind::ReadsStdin && d.severity == Severity::Warning)
                .map(|d| source[d.span.range()].to_owned())
                .collect()
        };
        let reads = "import { readFileSync, readSync } from 'node:fs';\nimport * as fs from 'node:fs';\n\
                     export const a = readFileSync(0, 'utf8');\nexport const b = fs.readFileSync('/dev/stdin');\n\
                     export const c = process.stdin.read();\nexport const d = readSync(0, Buffer.alloc(9));\n\
                     export async function e() { for await (const chunk of process.stdin) void chunk; }\n";
        let expected = [
            "readFileSync(0, 'utf8')",
            "fs.readFileSync('/dev/stdin')",
            "process.stdin.read()",
            "readSync(0, Buffer.alloc(9))",
            "process.stdin",
        ];
        assert_eq!(warnings(reads), expected);
        // What reads nothing: the stream's state, methods that read nothing, a local or
        // another object's `readFileSync`.
        let renamed = "import { readFileSync as slurp } from 'node:fs';\nexport const a = slurp(0, 'utf8');\n";
        assert_eq!(warnings(renamed), ["slurp(0, 'utf8')"]);
        let project_own = "import { readSync } from './db.js';\nexport const a = readSync(0);\n";
        assert_eq!(warnings(project_own), Vec::<String>::new());
        let others = "import { isatty } from 'node:tty';\nexport const a = (process.stdin as any).isTTY;\n\
                      export const { isTTY } = process.stdin;\nexport const b = isatty(process.stdin.fd);\n\
                      export const c = () => process.stdin.pause();\nconst archive = { readFileSync: (i: number) => i };\n\
                      export const d = archive.readFileSync(0);\nfunction readSync(i: number) { return i; }\nexport const e = readSync(0);\n";
        assert_eq!(warnings(others), Vec::<String>::new());
        let fine = "import { readFileSync } from 'node:fs';\nexport const tty = process.stdin.isTTY;\n\
                    export const rules = readFileSync('rules.txt');\n\
                    export function local() { const process = { stdin: 1 }; return process.stdin; }\n";
        assert_eq!(warnings(fine), Vec::<String>::new());
        assert!(
            transpile(crate::bundle::RUNTIME_KEY, crate::bundle::virtual_module(crate::bundle::RUNTIME_KEY).unwrap())
                .diagnostics
                .is_empty()
        );
    }

    /// A member of a `declare const enum`, which tsc writes in where it is read, is nothing
    /// when the module runs, compiled on its own: refused where it is read as a value.
    #[test]
    fn a_declared_const_enum_read_as_a_value_is_an_error() {
        let read = "declare const enum DCE { k = 7 }\nexport default () => [DCE.k, DCE['k']];\n";
        assert_eq!(
            errors("src/a.ts", read),
            [(BundleErrorKind::Syntax, "DCE".into()), (BundleErrorKind::Syntax, "DCE".into())]
        );
        // As a type, or declared where it runs (a `const enum`, a `declare enum`'s global).
        let fine = "declare const enum DCE { k = 7 }\nconst enum CE { k = 7 }\ndeclare enum DE { j = 3 }\n\
                    export const f = (k: DCE): DCE.k | typeof DCE => k;\nexport default () => [CE.k, DE.j];\n";
        assert_eq!(errors("src/a.ts", fine), []);
    }

    /// A direct `eval` is warned of: it cannot see the module's imports, which the bundle
    /// rewrites. An indirect one sees global names only.
    #[test]
    fn a_direct_eval_is_warned_of() {
        let warned = |source: &str| -> Vec<String> {
            let out = transpile("src/h.ts", source);
            out.diagnostics
                .iter()
                .filter(|d| d.kind == BundleErrorKind::DirectEval && d.severity == Severity::Warning)
                .map(|d| source[d.span.range()].to_owned())
                .collect()
        };
        let direct = "import { val } from './a';\nexport default () => [val, eval('val'), (eval)('1')];\n";
        assert_eq!(warned(direct), ["eval('val')", "(eval)('1')"]);
        let indirect = "import { val } from './a';\nexport const a = [val, (0, eval)('1'), globalThis.eval('1'), eval?.('1')];\n\
                        const vm = { eval: (code: string) => code };\nexport const b = vm.eval('1');\n";
        assert_eq!(warned(indirect), Vec::<String>::new());
        assert_eq!(errors("src/h.ts", indirect), []);
        // A module that imports nothing: its names are its own, which eval sees.
        let alone = "const local = 1;\nexport default () => eval('local');\n";
        assert_eq!(warned(alone), Vec::<String>::new());
    }

    /// CommonJS's `__dirname` and `__filename` would throw on every run; tested with
    /// `typeof`, or declared, they are fine.
    #[test]
    fn commonjs_module_variables_are_an_error_unless_tested_or_declared() {
        assert_eq!(
            errors(
                "src/a.ts",
                "import { join } from 'node:path';\nexport const rules = join(__dirname, 'rules.txt');\n"
            ),
            one(BundleErrorKind::CommonJs, "__dirname")
        );
        assert_eq!(
            errors("src/a.ts", "export default () => __filename;\n"),
            one(BundleErrorKind::CommonJs, "__filename")
        );
        let guarded = "export const here = typeof (__dirname as unknown) === 'string' ? 'cjs' : 'esm';\n\
                       export const dir = typeof __dirname !== 'undefined' ? __dirname : process.cwd();\n\
                       export function file() { if (typeof __filename === 'string') return __filename; return ''; }\n\
                       export const either = (typeof __dirname === 'string' && __dirname) || '.';\n";
        assert_eq!(errors("src/a.ts", guarded), []);
        let declared = "const __filename = 'x';\nexport const file = __filename;\n\
                        export const isCjs = typeof __dirname === 'string';\n\
                        export const fs = typeof require === 'function' ? require('node:fs') : null;\n";
        assert_eq!(errors("src/a.ts", declared), []);
        // `require` as a value, `module.exports`, `exports.x`: each is CommonJS's.
        let cjs = "export const where = require.resolve('x');\nmodule.exports = 1;\nexports.y = 2;\n";
        let found: Vec<String> = errors("src/a.ts", cjs).into_iter().map(|(_, text)| text).collect();
        assert_eq!(found, ["require", "module", "exports"]);
        // One of them tested says the module is written for both kinds: the others are left
        // alone too; and what a `try` block's `catch` catches fails nothing.
        let either = "export const isCjs = typeof require === 'function';\nexport const f = isCjs ? __filename : '';\n\
                      if (typeof exports === 'object') { module.exports = {}; }\n";
        assert_eq!(errors("src/a.ts", either), []);
        let caught = "let dir: string;\ntry { dir = __dirname; } catch { dir = '.'; }\nexport { dir };\n";
        assert_eq!(errors("src/a.ts", caught), []);
        let finally = "try { void 0; } finally { void __dirname; }\nexport {};\n";
        assert_eq!(errors("src/a.ts", finally), one(BundleErrorKind::CommonJs, "__dirname"));
        // A function written in a `try` block runs where it is called, which no catch covers.
        let later =
            "let f = () => 'x';\ntry { f = () => __dirname; } catch { /* never */ }\nexport const v = () => f();\n";
        assert_eq!(errors("src/a.ts", later), one(BundleErrorKind::CommonJs, "__dirname"));
        // UMD: tested first.
        let umd = "if (typeof module === 'object' && module.exports) { module.exports = {}; }\nexport {};\n";
        assert_eq!(errors("src/a.ts", umd), []);
        // Tested once, anywhere (an early return, a flag), or named in a type only.
        let early = "export function dir() {\n  if (typeof __dirname === 'undefined') return '.';\n  return __dirname;\n}\n\
                     export type Dir = typeof __filename;\nexport let file: typeof __filename;\n";
        assert_eq!(errors("src/a.ts", early), []);
        // Declared for TypeScript alone, it is still not there.
        assert_eq!(
            errors("src/a.ts", "declare const __dirname: string;\nexport default () => __dirname;\n"),
            one(BundleErrorKind::CommonJs, "__dirname")
        );
    }

    #[test]
    fn a_commonjs_require_is_an_error_and_a_local_one_is_not() {
        assert_eq!(
            errors("src/a.ts", "const fs = require(\"node:fs\");\nexport default () => fs;\n"),
            one(BundleErrorKind::CommonJs, "require")
        );
        let local = "const require = (name: string) => name;\nexport default () => require(\"x\");\n";
        assert!(transpile("src/a.ts", local).diagnostics.is_empty());
        // Declared for TypeScript's sake (no `@types/node`), it is still not there.
        let declared = "declare function require(name: string): any;\nexport default () => require(\"node:fs\");\n";
        assert_eq!(errors("src/a.ts", declared), one(BundleErrorKind::CommonJs, "require"));
        let signature = "function require(name: string): any;\nexport default () => require(\"node:fs\");\n";
        assert_eq!(errors("src/a.ts", signature), one(BundleErrorKind::CommonJs, "require"));
        // Overloads with the implementation are there.
        let overloaded = "function require(name: string): string;\nfunction require(name: any) { return name; }\n\
                          export default () => require(\"x\");\n";
        assert!(transpile("src/a.ts", overloaded).diagnostics.is_empty());
    }

    #[test]
    fn syntax_node_20_cannot_load_is_an_error_where_it_is_written() {
        let syntax = |text: &str| one(BundleErrorKind::Syntax, text);
        assert_eq!(errors("src/a.ts", "class A { accessor x = 1; }\nexport default A;\n"), syntax("accessor"));
        assert_eq!(errors("src/a.ts", "export const r = /(?i:a)b/;\n"), syntax("/(?i:a)b/"));
        assert_eq!(errors("src/a.ts", "export const r = /(?<n>a)|(?<n>b)/;\n"), syntax("/(?<n>a)|(?<n>b)/"));
        // Node refuses a module with an invalid regular expression as a whole.
        assert_eq!(errors("src/a.ts", "export const r = /(/;\n").len(), 1);
        // What Node 20 has: lookbehind, named groups, property escapes, the `v` flag.
        let fine = "export const r = [/(?<=a)(?<n>b)\\p{L}/u, /[\\p{L}--[a-z]]/v];\n";
        assert!(transpile("src/a.ts", fine).diagnostics.is_empty(), "{:?}", transpile("src/a.ts", fine).diagnostics);
    }

    #[test]
    fn a_name_exported_twice_is_located_where_it_is_exported_again() {
        let twice = |source: &str| errors("src/a.ts", source);
        let syntax = |text: &str| one(BundleErrorKind::Syntax, text);
        assert_eq!(twice("export default () => 1;\nexport default () => 2;\n"), syntax("default"));
        assert_eq!(twice("export const x = 1;\nconst y = 2;\nexport { y as x };\n"), syntax("x"));
        assert_eq!(twice("export { a as b } from './a';\nexport * as b from './b';\n"), syntax("b"));
        // What TypeScript repeats legitimately: overloads, merged namespaces and enums, types.
        let fine = "export function f(a: string): void;\nexport function f(a: unknown) {}\n\
                    export namespace N { export const a = 1; }\nexport namespace N { export const b = 2; }\n\
                    export enum E { A }\nexport enum E { B = 1 }\n\
                    export interface I { a: 1 }\nexport interface I { b: 2 }\nexport type T = 1;\nexport { type T as U };\n\
                    export declare const d: number;\nexport default function g(): void;\nexport default function g() {}\n";
        assert_eq!(twice(fine), [], "{fine}");
    }

    #[test]
    fn a_namespace_s_members_are_its_own_and_another_declaration_s_are_not_in_scope() {
        let module = |source: &str| errors("src/a.ts", source);
        // Members of two namespaces, and of a namespace merged with a function, are fine.
        let fine = "namespace A { export const y = 1; }\nnamespace B { export const y = 2; }\n\
                    function g() {}\nnamespace g { export const v = 1; }\n\
                    namespace A { export const z = A.y + 1; const y = 5; export const w = y; }\n\
                    namespace K { export class C {} }\nnamespace K { export const c: C | undefined = undefined; }\n\
                    namespace T { export const x = 1; }\nnamespace T { type X = typeof x; export const y: X = 2; }\n\
                    namespace T { export const z = ({ a: 2 }) satisfies { a: typeof x }; }\n\
                    namespace K { export interface I extends C {} }\nnamespace K { export class D implements C {} }\n";
        assert_eq!(module(fine), [], "{fine}");
        // Transpiled, each declaration is a function of its own: a bare name another one
        // exported would be bound to nothing.
        let merged = "namespace A { export function f() { return 1; } }\nnamespace A { export const y = f(); }\n\
                      namespace A { export namespace C { export const z = y; } }\n\
                      namespace D.E { export const x = 1; }\nnamespace D { export const w = E.x; }\n\
                      namespace F { export import M = Math; }\nnamespace F { export const v = M.max(1, 2); }\n";
        assert_eq!(module(merged), ["f", "y", "E", "M"].map(|name| (BundleErrorKind::Syntax, name.to_owned())));
        // Nor is it the binding of the same name outside the namespace (an import, a
        // module-level `const`), which the transpiled code would read instead.
        let shadowing = "import { limit } from './cfg';\nconst x = 'outer';\n\
                         namespace Cfg { export const limit = 5; export const x = 1; }\n\
                         namespace Cfg { export function check(n: number) { return n <= limit; } export const y = x; }\n\
                         export default () => limit + x;\n";
        assert_eq!(module(shadowing), ["limit", "x"].map(|name| (BundleErrorKind::Syntax, name.to_owned())));
        // A later declaration's members too: TypeScript reads them from the merged namespace
        // when the code runs (a nested namespace of the first included, and `namespace A.B`).
        let later = "const mode = 'outer';\nnamespace P { export function f() { return mode; } }\n\
                     namespace P { export const mode = 'inner'; }\n\
                     namespace App { export function version() { return Config.version; } }\n\
                     namespace App.Config { export const version = '2.0'; }\n\
                     namespace X { export namespace Y { export function f() { return z; } } }\n\
                     namespace X { export const z = 'X.z'; }\nexport default () => [P.f(), App.version(), X.Y.f()];\n";
        assert_eq!(module(later), ["mode", "Config", "z"].map(|name| (BundleErrorKind::Syntax, name.to_owned())));
        // What another declaration exports that holds no value (a namespace of types, a
        // `declare`d const) is no member a bare name could mean, earlier or later: the outer
        // binding it is; nor is what the name is bound to in the declaration itself.
        let types = "namespace Geo { export namespace Shape { export type T = number; } export declare const d: 1; export const z = 3; }\n";
        let uses = "namespace Geo { export const s = Shape; export const e = d; export function f() { const z = 1; return z; } }\n";
        for (first, second) in [(types, uses), (uses, types)] {
            let source = format!("import {{ Shape, d }} from './shapes';\n{first}{second}export default Geo;\n");
            assert_eq!(module(&source), [], "{source}");
        }
        // Nor what a namespace its enclosing one does not export declares.
        let own = "import { z } from './z';\nnamespace A { namespace B { export const v = z; } export const w = B.v; }\n\
                   namespace A { namespace B { export const z = 2; } export const y = B.z; }\nexport default A;\n";
        assert_eq!(module(own), []);
    }

    /// A namespace's exported `let` or `var` is a copy in the transpiled code: what assigns it
    /// (the namespace, another module through it, `Cfg['level']`, an alias, `Object.assign`)
    /// cannot all be seen, so each is refused, assigned or not.
    #[test]
    fn a_namespace_s_exported_let_or_var_is_an_error() {
        let written = "namespace N { export let v = 3; export function bump() { v++; } }\n";
        assert_eq!(errors("src/a.ts", written), one(BundleErrorKind::Syntax, "v"));
        assert_eq!(transpile("src/a.ts", written).diagnostics.len(), 1, "said once (oxc warns of it too)");
        let exported = "namespace Cfg { export var name = 'x'; export let n = 1, m = 2; export function get() { return n; } }\n\
                        const alias = Cfg;\nalias.n = 5;\nObject.assign(Cfg, { m: 3 });\nexport default Cfg;\n";
        let found: Vec<_> = errors("src/a.ts", exported).into_iter().map(|(_, text)| text).collect();
        assert_eq!(found, ["name", "n", "m"]);
        // A `const`, a `declare`d one, one in a declared namespace: nothing is copied.
        let fine = "namespace Cfg { export const o = { level: 1 }; export declare let d: number; }\n\
                    declare namespace Env { export let mode: string; }\nexport default () => [Cfg.o.level, Env.mode];\n";
        assert_eq!(errors("src/a.ts", fine), []);
    }

    /// oxc sets parameter properties after the `super(...)` statement directly in the
    /// constructor: one nested elsewhere (TypeScript's TS2401) would run after them, which
    /// throws as `this` is used before it.
    #[test]
    fn parameter_properties_need_super_called_directly_in_the_constructor() {
        let nested = "class Base { constructor(..._: unknown[]) {} }\n\
                      class Q extends Base { constructor(readonly a: number) { try { super(); } finally {} } }\n\
                      class R extends Base { constructor(public a: number) { const init = () => super(a); init(); } }\n\
                      class O extends Base { constructor(a: number); constructor(readonly a: number) { try { super(); } finally {} } }\n\
                      export default [Q, R, O];\n";
        let found: Vec<_> = errors("src/a.ts", nested).into_iter().map(|(_, text)| text).collect();
        assert_eq!(found, ["super()", "super(a)", "super()"], "an overload signature first too");
        // Directly in the body, after other code too; without parameter properties, or in a
        // class of another's own, anywhere.
        let fine = "class Base { constructor(..._: unknown[]) {} }\n\
                    class Q extends Base { constructor(private a: number) { console.log(1); super(a); } }\n\
                    class R extends Base { constructor(a: number) { if (a) { super(a); } else { super(); } } }\n\
                    class S extends Base { constructor(public a: number) { super(class extends Base { constructor(b: number) { try { super(b); } finally {} } }); } }\n\
                    class T { constructor(public a: number) {} }\nexport default [Q, R, S, T];\n";
        assert_eq!(errors("src/a.ts", fine), []);
    }

    /// A namespace in a function is refused as TypeScript refuses it (TS1235), and merges with
    /// no namesake outside: the error is said once, not again of the names it exports.
    #[test]
    fn a_namespace_in_a_function_is_one_error() {
        let source = "function f() { namespace Inner { export const a = 1; } return Inner; }\n\
                      namespace Inner { export const b = a; }\nexport default f;\n";
        let found: Vec<_> = errors("src/a.ts", source).into_iter().map(|(kind, _)| kind).collect();
        assert_eq!(found, [BundleErrorKind::Syntax]);
    }

    /// A namespace declared with `declare` and without: oxc emits the real one without binding
    /// its name. One holding types alone emits nothing, and is fine.
    #[test]
    fn a_namespace_also_declared_ambient_is_an_error() {
        let mixed = "declare namespace Env { export const mode: string; }\n\
                     namespace Env { export function get() { return 'x'; } }\n\
                     declare namespace Types { export interface T { a: number } }\n\
                     namespace Types { export type U = string; }\nexport default Env.get;\n";
        assert_eq!(errors("src/a.ts", mixed), one(BundleErrorKind::Syntax, "Env"));
    }

    #[test]
    fn import_attributes_are_an_error() {
        assert_eq!(
            errors("src/a.ts", "import data from './d.css' with { type: 'css' };\nexport default data;\n"),
            one(BundleErrorKind::Syntax, "{ type: 'css' }")
        );
        assert_eq!(
            errors("src/a.ts", "import data from './d.js' with { type: 'json' };\nexport default data;\n"),
            one(BundleErrorKind::Syntax, "'./d.js'")
        );
        assert_eq!(errors("src/a.ts", "import d from './d.json' assert { type: 'json' };\nexport default d;\n"), []);
        assert_eq!(errors("src/a.ts", "import d from './d.js' with {};\nexport default d;\n"), []);
        let node_s_own = "export const m = () => import('./d.json', { with: { type: 'json' } });\n";
        assert_eq!(errors("src/a.ts", node_s_own), []);
        assert_eq!(
            errors("src/a.ts", "export const m = () => import('./d.js', { with: { type: 'json' } });\n"),
            one(BundleErrorKind::DynamicImport, "{ with: { type: 'json' } }")
        );
    }

    #[test]
    fn top_level_arguments_is_an_error_and_a_function_s_is_not() {
        assert_eq!(
            errors("src/a.ts", "export const n = arguments.length;\nexport default () => arguments;\n"),
            [(BundleErrorKind::Syntax, "arguments".into()), (BundleErrorKind::Syntax, "arguments".into())]
        );
        let fine = "export default function () { return [arguments, () => arguments]; }\nconst arguments_ = 1;\n";
        assert!(transpile("src/a.ts", fine).diagnostics.is_empty());
    }

    #[test]
    fn dynamic_import_needs_a_literal() {
        assert_eq!(
            errors("src/a.ts", "const name = \"./x\";\nexport const m = () => import(name);\n"),
            one(BundleErrorKind::DynamicImport, "name")
        );
        assert_eq!(
            errors("src/a.ts", "export const m = (n: string) => import(`./x/${n}`);\n"),
            one(BundleErrorKind::DynamicImport, "`./x/${n}`")
        );
        let out = transpile("src/a.ts", "export const m = () => import(`./x`);\n");
        assert!(out.diagnostics.is_empty());
        assert_eq!(out.request_spans["./x"], [Span::new(30, 35)]);
    }

    #[test]
    fn reserved_names_are_errors() {
        assert_eq!(
            errors(
                "src/a.ts",
                "const __ab_x = 1;\nfunction f(__ab_p: number) { return __ab_require; }\nimport { y as __ab_y } from \"./y\";\nconst ok = { __ab_prop: 1 }.__ab_prop;\n"
            ),
            [
                (BundleErrorKind::ReservedName, "__ab_x".to_owned()),
                (BundleErrorKind::ReservedName, "__ab_p".to_owned()),
                (BundleErrorKind::ReservedName, "__ab_require".to_owned()),
                (BundleErrorKind::ReservedName, "__ab_y".to_owned()),
            ]
        );
    }

    #[test]
    fn unsupported_syntax_is_reported() {
        assert_eq!(
            errors("src/a.ts", "function dec(..._: unknown[]) {}\n@dec class A {}\n"),
            one(BundleErrorKind::Syntax, "@dec")
        );
        assert_eq!(
            errors("src/a.ts", "export function f() { using r = { [Symbol.dispose]() {} }; }\n"),
            one(BundleErrorKind::Syntax, "using")
        );
        assert_eq!(
            errors("src/a.ts", "import fs = require(\"fs\");\nfs;\n"),
            one(BundleErrorKind::Syntax, "require(\"fs\")")
        );
        assert_eq!(errors("src/a.ts", "export = 1;\n"), one(BundleErrorKind::Syntax, "export = 1;"));
        assert!(errors("src/a.ts", "import type fs = require(\"fs\");\nlet x: typeof fs;\n").is_empty());
        assert_eq!(
            errors("src/a.js", "import defer * as ns from \"./x\";\nns;\n"),
            one(BundleErrorKind::Syntax, "import")
        );
    }

    /// `import` and `export` in a function or a block are syntax errors to Node: refused
    /// where they are written; in a namespace's body they are its members.
    #[test]
    fn import_and_export_below_the_top_level_are_refused() {
        for nested in [
            "export default () => {\n  export const x = 1;\n};\n",
            "{ export const x = 1; }\nexport default () => 1;\n",
            "if (1) { export * from './nope.js'; }\nexport default () => 1;\n",
            "function f() { import { a } from './nope.js'; }\nexport default () => 1;\n",
            "class C { m() { { export default 1; } } }\nexport default () => 1;\n",
        ] {
            let found = errors("src/h.ts", nested);
            assert_eq!(found.len(), 1, "{nested}: {found:?}");
            assert_eq!(found[0].0, BundleErrorKind::Syntax, "{nested}");
            assert!(["import", "export"].contains(&found[0].1.as_str()), "{nested}: {found:?}");
            // Not read as the module's: nothing to resolve.
            assert!(transpile("src/h.ts", nested).request_spans.is_empty(), "{nested}");
        }
        let members = "namespace N { export const x = 1; export namespace M { export const y = 2; } }\n\
                       export type { T };\ntype T = 1;\nexport default () => N.x + N.M.y;\n";
        assert!(errors("src/h.ts", members).is_empty());
        // A namespace exports what it declares: a list is TypeScript's TS1194, and Node's
        // syntax error once transpiled.
        let list = "namespace N { const a = 1; export { a }; }\nexport default () => 1;\n";
        assert_eq!(errors("src/h.ts", list), one(BundleErrorKind::Syntax, "export"));
        // A declared namespace is TypeScript's alone, and may.
        let declared = "declare namespace N { const a: number; export { a }; }\nexport default () => 1;\n";
        assert!(errors("src/h.ts", declared).is_empty());
    }

    /// What each top-level component renders and which components it renders, by local name,
    /// with the module's own export names of them: what the build follows from a route.
    #[test]
    fn components_say_what_they_render_and_which_they_render() {
        let source = "import { Agent } from '@agent-bundle/runtime';\nimport { Base } from './base.tsx';\n\
                      export function Deny() { return <Agent.Result value={{ outcome: 'deny' }} />; }\n\
                      const Quiet = () => <Base />;\nexport { Quiet as Silent };\n\
                      export default () => <><Deny /><Agent.Context>x</Agent.Context></>;\n\
                      export const log = () => {};\n";
        let components = transpile("src/events/components/ui.tsx", source).components;
        let names: Vec<_> = components.declared.keys().map(String::as_str).collect();
        assert_eq!(names, ["Deny", "Quiet", "default"]);
        let exported: Vec<_> = components.exported.iter().map(|(e, l)| (e.as_str(), l.as_str())).collect();
        assert_eq!(exported, [("Deny", "Deny"), ("Silent", "Quiet"), ("default", "default")]);
        let (deny, quiet, default) =
            (&components.declared["Deny"], &components.declared["Quiet"], &components.declared["default"]);
        assert!(deny.renders.deny.is_some() && deny.renders.context.is_none() && deny.uses.is_empty());
        let base = UsedComponent::Imported { specifier: "./base.tsx".into(), name: "Base".into() };
        assert_eq!(quiet.uses.iter().map(|used| &used.component).collect::<Vec<_>>(), [&base]);
        assert_eq!(quiet.renders, super::Renders::default());
        assert!(default.renders.context.is_some() && default.renders.deny.is_none());
        assert_eq!(
            default.uses.iter().map(|used| &used.component).collect::<Vec<_>>(),
            [&UsedComponent::Local("Deny".into())]
        );
        let all: Vec<&ComponentUse> = components.uses.iter().collect();
        assert_eq!(all.len(), 2);
    }

    /// An `Agent.Result` whose value is written out as an object is read for what it asks:
    /// a deny, a new tool input; anything else (a value computed, another `Result`) for
    /// nothing.
    #[test]
    fn what_an_agent_result_asks_is_recorded_where_it_is_written() {
        let renders = |body: &str| {
            let source = format!("import {{ Agent }} from '@agent-bundle/runtime';\nexport default () => {body};\n");
            let renders = transpile("src/events/stop.tsx", &source).renders;
            let text = |span: Option<Span>| span.map(|span| source[span.start as usize..span.end as usize].to_owned());
            (text(renders.deny), text(renders.rewrite))
        };
        let both = renders("<Agent.Result value={{ outcome: 'deny', updatedInput: {} }} />");
        assert_eq!(both, (Some("outcome: 'deny'".to_owned()), Some("updatedInput: {}".to_owned())));
        assert_eq!(renders("<Agent.Result value={{ outcome: 'continue' }} />"), (None, None));
        let typed = renders("<Agent.Result value={{ outcome: ('deny' as const), updatedInput: [] }} />");
        assert_eq!(typed, (Some("outcome: ('deny' as const)".to_owned()), Some("updatedInput: []".to_owned())));
        // Passed on, it may be `undefined`, which asks for nothing.
        let passed = "<Agent.Result value={{ outcome: undefined, updatedInput: props.input }} />";
        assert_eq!(renders(&passed.replace("props.input", "undefined")), (None, None));
        assert_eq!(renders(passed), (None, None));
        assert_eq!(renders("<Agent.Result value={computed()} />"), (None, None));
        // Typed, bracketed or chosen, it is the object written out.
        let deny = Some("outcome: 'deny'".to_owned());
        for value in [
            "{ outcome: 'deny', reason: 'r' } satisfies object",
            "({ outcome: 'deny', reason: 'r' }) as const",
            "props.bad ? { outcome: 'deny', reason: 'r' } : undefined",
            "props.ok || { outcome: 'deny', reason: 'r' }",
        ] {
            assert_eq!(renders(&format!("<Agent.Result value={{{value}}} />")), (deny.clone(), None), "{value}");
        }
        let other = "<><Result value={{ outcome: 'deny' }} /></>;\nconst Result = (_: object) => null";
        assert_eq!(renders(other), (None, None), "not agent-bundle's");
    }
}
