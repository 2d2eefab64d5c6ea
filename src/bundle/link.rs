//! Back end: rewrite one transpiled module into a registration chunk, and concatenate chunks
//! into a bundle.
//!
//! The transpiled JavaScript is parsed again and edited as text at known spans; no AST is built.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

use oxc_allocator::Allocator;
use oxc_ast::ast::{
    AssignmentTargetPropertyIdentifier, CallExpression, ExportDefaultDeclarationKind, Expression, IdentifierReference,
    ImportDeclarationSpecifier, ImportExpression, ModuleDeclaration, ModuleExportName, ObjectProperty, Statement,
    TaggedTemplateExpression,
};
use oxc_ast_visit::{Visit, walk};
use oxc_parser::Parser;
use oxc_semantic::{Scoping, SemanticBuilder};
use oxc_span::{GetSpan, SourceType};
use oxc_syntax::symbol::SymbolId;

use super::check::literal_specifier;
use super::resolve::{ResolveFailure, Resolved};
use super::source_map::{self, Copied, Mapping};
use super::transpile::{BundleDiagnostic, BundleErrorKind, Span, Transpiled};

/// One JS/TS module compiled into a self-contained registration chunk.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ModuleChunk {
    /// `__ab_define("src/hooks/x.ts", function* (__ab_exports) { ... });\n`; empty on error.
    pub code: String,
    /// Resolved module imports (static, dynamic and re-exports) in source order, one per key.
    pub imports: Vec<ModuleImport>,
    /// Node builtins the chunk uses, normalized (`node:fs`), sorted and deduplicated.
    pub builtins: Vec<String>,
    /// What the module's imports ask of other modules and what its exports offer them.
    pub links: ModuleLinks,
    /// Where its lines came from, for the bundle's source map (none for the tool's modules).
    pub mappings: Vec<Mapping>,
    /// Specifiers that named no module, in source order, each once (the build lists the
    /// directories outside the root they point into, `resolve::outside_dirs`, and tries again).
    pub unresolved: Vec<String>,
    pub diagnostics: Vec<BundleDiagnostic>,
    /// What the module renders that some families or hosts do not take (`Transpiled::renders`).
    pub renders: super::renders::Renders,
    /// What its default-exported function returns (`Transpiled::returns`).
    pub returns: super::renders::Renders,
    /// What its components render (`Transpiled::components`).
    pub components: super::renders::Components,
    /// Whether `links` says what the module imports and exports: its code transpiled and was
    /// linked, though a check may have failed (a module that does not parse, or could not be
    /// read, links nothing, and one re-exporting from a module that did not resolve says not
    /// all it exports: the graph takes nothing of either as missing).
    pub linked: bool,
}

impl ModuleChunk {
    pub fn has_default_export(&self) -> bool {
        self.links.exports.contains_key("default")
    }
}

/// A module's side of linking, which only the whole graph can check (`ModuleGraph`): ESM
/// refuses an import of a name its module does not export, or exports ambiguously through
/// two `export *` of different bindings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ModuleLinks {
    /// Every export name, with where its binding lives when another module holds it
    /// (`export { x } from`, an imported binding exported again, `export * as ns`: `*`).
    pub exports: BTreeMap<String, Option<Binding>>,
    /// The sources of `export *`, in source order.
    pub stars: Vec<LinkSource>,
    /// The names imported from other modules (`import { x }`, `import x`, `export { x } from`),
    /// each with the span of its specifier.
    pub imported: Vec<(Binding, Span)>,
    /// What the default export is when no handler or route can be it, and why (`a string,
    /// not a function`), with where it is exported: a handler or route module must
    /// default-export a function.
    pub default_not_function: Option<(String, Option<Span>)>,
    /// The names the module exports as types only (`Transpiled::type_exports`): re-exporting
    /// one without `type` is what TypeScript allows (an import of one the transpiler kept is
    /// used as a value, which it has not).
    pub type_exports: BTreeSet<String>,
    /// JSX tags `<X.Y>` whose `X` is an imported binding (`Transpiled::imported_member_tags`):
    /// the graph checks those that are the route components' `Agent`.
    pub member_tags: Vec<MemberTag>,
}

/// A JSX tag `<local.member>` whose `local` is `binding`, imported.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct MemberTag {
    pub binding: Binding,
    pub local: String,
    pub member: String,
    /// The member's.
    pub span: Span,
}

/// A name in a module's exports (`*` for its namespace).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct Binding {
    pub source: LinkSource,
    pub name: String,
}

/// Where a request resolved to: a bundled module, or a Node builtin (whose exports are
/// `builtins`' table).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum LinkSource {
    Module(String),
    Builtin(String),
}

/// A module import: the specifier as written, the key it resolved to, and where it was written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ModuleImport {
    pub specifier: String,
    pub key: String,
    pub span: Span,
}

/// Local name of the namespace of the bundle-level `import * as` of a builtin.
///
/// Injective: letters and digits stay, `_` doubles, `/` becomes `$`, anything else `_<hex>_`.
pub(crate) fn builtin_local(specifier: &str) -> String {
    let name = specifier.strip_prefix("node:").unwrap_or(specifier);
    let mut local = String::from("__ab_node_");
    for ch in name.chars() {
        match ch {
            'a'..='z' | 'A'..='Z' | '0'..='9' => local.push(ch),
            '_' => local.push_str("__"),
            '/' => local.push('$'),
            other => {
                let _ = write!(local, "_{:x}_", u32::from(other));
            }
        }
    }
    local
}

/// A JavaScript string literal for `value` (JSON-style escaping, plus U+2028/U+2029).
pub(crate) fn js_string(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for ch in value.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `object.name` or `object["name"]`.
fn member(object: &str, name: &str) -> String {
    if crate::source::is_plain_identifier(name) {
        format!("{object}.{name}")
    } else {
        format!("{object}[{}]", js_string(name))
    }
}

/// A key of an object literal. `__proto__` must be computed: a plain or quoted one would set
/// the prototype instead of defining a property.
fn property_key(name: &str) -> String {
    if name == "__proto__" {
        format!("[{}]", js_string(name))
    } else if crate::source::is_plain_identifier(name) {
        name.to_owned()
    } else {
        js_string(name)
    }
}

/// Transpile (TS/TSX/JS/MJS/JSX by the extension of `key`) and rewrite one module: what a
/// build does in two cache actions, in one call, for tests.
///
/// `resolve` is called for every import specifier that survives transpiling (type-only imports
/// vanish first): static imports, `export ... from`, and `import()` with a literal. Failures
/// become diagnostics at the specifier in the original source. Any error leaves `code` empty.
#[cfg(test)]
pub fn compile_module(
    key: &str,
    source: &str,
    resolve: &mut dyn FnMut(&str) -> Result<Resolved, ResolveFailure>,
) -> ModuleChunk {
    link_module(key, super::transpile(key, source), resolve)
}

/// Rewrites one module `transpile` made (which does not
/// depend on how its imports resolve, so a module linked again need not be transpiled again).
pub fn link_module(
    key: &str,
    mut transpiled: Transpiled,
    resolve: &mut dyn FnMut(&str) -> Result<Resolved, ResolveFailure>,
) -> ModuleChunk {
    let mut chunk = ModuleChunk {
        diagnostics: std::mem::take(&mut transpiled.diagnostics),
        renders: transpiled.renders,
        returns: transpiled.returns,
        components: std::mem::take(&mut transpiled.components),
        ..ModuleChunk::default()
    };
    // Checks on the original source may have failed while the transpiled code is still sound:
    // link it anyway, to report unresolvable imports too.
    let type_exports = std::mem::take(&mut transpiled.type_exports);
    let Some(code) = transpiled.code.take() else {
        return chunk;
    };
    chunk.linked = Linker::new(key, &mut transpiled, resolve, &mut chunk).link(&code);
    chunk.links.type_exports = type_exports;
    if super::transpile::is_json_module(key) {
        chunk.links.default_not_function = Some(("JSON data, not a function".to_owned(), None));
    }
    chunk.diagnostics.sort_by_key(|d| (d.span.start, d.span.end));
    if chunk.diagnostics.iter().any(BundleDiagnostic::is_error) {
        chunk.code.clear();
        chunk.mappings.clear();
    }
    chunk
}

/// A text edit on the transpiled code: replace `start..end` with `text`.
struct Edit {
    start: u32,
    end: u32,
    text: String,
}

/// What references to an imported binding become.
struct Replacement {
    /// A JavaScript expression: `__ab_i0.name`, `__ab_node_fs.default` or `__ab_i0`. Export
    /// getters use it too: `__ab_i0` is bound before anything can call them.
    expr: String,
    /// A member access: calling it must not pass the namespace as `this`.
    is_member: bool,
}

/// How a module reaches the namespace of one of its imports.
struct Namespace {
    /// `__ab_i0` (a const bound as the module links) or `__ab_node_fs`.
    local: String,
    /// How the runtime finds the names of an `export *` of it: `"src/x.ts"` or `__ab_node_fs`.
    star_source: String,
    /// What it is, for the graph's checks, and where it was requested.
    source: LinkSource,
    span: Span,
}

impl Namespace {
    fn member(&self, name: &str) -> Replacement {
        Replacement { expr: member(&self.local, name), is_member: true }
    }

    fn binding(&self, name: &str) -> Binding {
        Binding { source: self.source.clone(), name: name.to_owned() }
    }

    fn whole(&self) -> Replacement {
        Replacement { expr: self.local.clone(), is_member: false }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Request {
    /// `import` declarations and `export … from`.
    Static,
    /// `import("…")`.
    Dynamic,
}

struct Linker<'c> {
    key: &'c str,
    transpiled: &'c mut Transpiled,
    resolve: &'c mut dyn FnMut(&str) -> Result<Resolved, ResolveFailure>,
    chunk: &'c mut ModuleChunk,
    edits: Vec<Edit>,
    /// Imports found, with their position in the transpiled code (for source order).
    imports: Vec<(u32, ModuleImport)>,
    builtins: BTreeSet<String>,
    /// Namespace locals of required modules, by key.
    locals: BTreeMap<String, String>,
    /// Namespace bindings of the imported modules, `const __ab_i0 = __ab_module(key);`.
    namespaces: String,
    /// Statements run before the body: requires and star re-exports, in source order.
    prologue: String,
    /// Export name -> getter expression.
    getters: BTreeMap<String, String>,
    links: ModuleLinks,
    /// The binding each imported local stands for, by its symbol.
    imported_bindings: HashMap<SymbolId, Binding>,
    /// Sources of `export *`, in source order (see [`Namespace::star_source`]).
    stars: Vec<String>,
    /// Set when an anonymous `export default function` was named `__ab_default`.
    rename_default_function: bool,
    replacements: HashMap<SymbolId, Replacement>,
    /// Original span of each request, by its position in the transpiled code.
    site_spans: BTreeMap<u32, Span>,
    /// Set when a re-export's module did not resolve: what the module exports is then not
    /// all known (`ModuleChunk::linked`).
    exports_unknown: bool,
}

impl<'c> Linker<'c> {
    fn new(
        key: &'c str,
        transpiled: &'c mut Transpiled,
        resolve: &'c mut dyn FnMut(&str) -> Result<Resolved, ResolveFailure>,
        chunk: &'c mut ModuleChunk,
    ) -> Self {
        Self {
            key,
            transpiled,
            resolve,
            chunk,
            edits: Vec::new(),
            imports: Vec::new(),
            builtins: BTreeSet::new(),
            locals: BTreeMap::new(),
            namespaces: String::new(),
            prologue: String::new(),
            getters: BTreeMap::new(),
            links: ModuleLinks::default(),
            imported_bindings: HashMap::new(),
            stars: Vec::new(),
            rename_default_function: false,
            replacements: HashMap::new(),
            site_spans: BTreeMap::new(),
            exports_unknown: false,
        }
    }

    /// Links the transpiled `code`; false when it does not parse (said as an error), or
    /// when some of what it exports comes from a module that did not resolve.
    fn link(mut self, code: &str) -> bool {
        let allocator = Allocator::default();
        let parsed = Parser::new(&allocator, code, SourceType::mjs()).parse();
        if parsed.panicked || parsed.diagnostics.has_errors() {
            if self.chunk.diagnostics.iter().any(BundleDiagnostic::is_error) {
                return false; // Already reported on the original source.
            }
            let message = parsed.diagnostics.errors().next().map_or_else(String::new, |d| d.message.to_string());
            self.chunk.diagnostics.push(BundleDiagnostic::error(
                BundleErrorKind::Syntax,
                Span::new(0, 0),
                format!("internal error: the transpiled code of {} does not parse: {message}", self.key),
            ));
            return false;
        }
        let program = parsed.program;
        let semantic = SemanticBuilder::new().build(&program);
        let scoping = semantic.semantic.scoping();

        // Map requests to their original spans in source order, before resolving any.
        let mut sites = RequestSites::default();
        sites.visit_program(&program);
        sites.sites.sort_by_key(|(position, _)| *position);
        for (position, specifier) in sites.sites {
            let span = self.transpiled.take_request_span(&specifier);
            self.site_spans.insert(position, span);
        }

        if let Some(hashbang) = &program.hashbang {
            self.remove_statement(code, hashbang.span);
        }
        // Imports and re-exports first, in source order: they define the replacements of
        // imported bindings, which the exports and the body refer to.
        for statement in &program.body {
            self.link_request_statement(code, statement);
        }
        for statement in &program.body {
            self.link_export_statement(code, statement, scoping);
        }
        let mut rewriter =
            Rewriter { scoping, replacements: &self.replacements, edits: Vec::new(), dynamic: Vec::new() };
        rewriter.visit_program(&program);
        let Rewriter { edits, dynamic, .. } = rewriter;
        self.edits.extend(edits);
        for (span, specifier) in dynamic {
            let replacement = match self.request(&specifier, span.start, Request::Dynamic) {
                Some((LinkSource::Module(key), _)) => {
                    format!("__ab_import(() => __ab_require({}))", js_string(&key))
                }
                // Node loads a builtin itself: it stays lazy, as written.
                Some((LinkSource::Builtin(name), _)) => format!("import({})", js_string(&name)),
                None => continue,
            };
            self.edits.push(Edit { start: span.start, end: span.end, text: replacement });
        }
        let exports_known = !self.exports_unknown;
        self.finish(code);
        exports_known
    }

    /// Resolve `specifier`, record the import, and report failures at its original span,
    /// which is returned with the target. A builtin is the bundle-level namespace for a static
    /// request, its `node:` name for a dynamic one.
    fn request(&mut self, specifier: &str, position: u32, kind: Request) -> Option<(LinkSource, Span)> {
        let span = match self.site_spans.get(&position) {
            Some(span) => *span,
            None => self.transpiled.take_request_span(specifier),
        };
        let target = self.resolve_request(specifier, position, span, kind)?;
        Some((target, span))
    }

    fn resolve_request(&mut self, specifier: &str, position: u32, span: Span, kind: Request) -> Option<LinkSource> {
        match (self.resolve)(specifier) {
            Ok(Resolved::Module(key)) => self.module_request(specifier, key, position, span),
            Ok(Resolved::Builtin(name)) => {
                // (An `import()` of a builtin stays one: no static import of it is needed.)
                if kind == Request::Static {
                    self.builtins.insert(name.clone());
                }
                Some(LinkSource::Builtin(name))
            }
            Err(failure) => self.unresolved(specifier, failure, span, kind),
        }
    }

    /// A request of the module `key`: linked, or refused where it is no ES module.
    fn module_request(&mut self, specifier: &str, key: String, position: u32, span: Span) -> Option<LinkSource> {
        let refusal = if super::resolve::is_commonjs_file(&key) {
            BundleDiagnostic::error(
                BundleErrorKind::CommonJs,
                span,
                format!("\"{specifier}\" names {key}, a CommonJS module, which an ES module bundle cannot link"),
            )
            .with_help("write it as an ES module (.ts, .mts, .js, .mjs: `export` in place of `module.exports`)")
        } else if !super::resolve::is_module_file(&key) {
            // Text, images, …: Node would need a loader; the bundle links modules only.
            // Refused where it is imported, not in the file it names.
            BundleDiagnostic::error(
                BundleErrorKind::UnresolvedImport,
                span,
                format!("\"{specifier}\" names {key}, which is not a JavaScript, TypeScript or JSON module"),
            )
            .with_help(
                "modules are .ts, .tsx, .mts, .js, .mjs, .jsx or .json files: make the data JSON, or a module that \
                 exports it as a string (`export default \"…\"`)",
            )
        } else {
            self.imports.push((position, ModuleImport { specifier: specifier.to_owned(), key: key.clone(), span }));
            return Some(LinkSource::Module(key));
        };
        self.chunk.diagnostics.push(refusal);
        None
    }

    /// A request that resolved to nothing: said where it is written (a dynamic `import()` of a
    /// newer Node's builtin is kept, with a warning).
    fn unresolved(
        &mut self,
        specifier: &str,
        failure: ResolveFailure,
        span: Span,
        kind: Request,
    ) -> Option<LinkSource> {
        match failure {
            ResolveFailure::Bare if specifier.starts_with("@oxc-project/runtime/") => {
                if self.chunk.diagnostics.iter().any(BundleDiagnostic::is_error) {
                    // The syntax that needs the helper was reported already.
                    return None;
                }
                self.chunk.diagnostics.push(BundleDiagnostic::error(
                    BundleErrorKind::Syntax,
                    span,
                    format!("this syntax needs the transpiler helper \"{specifier}\", which cannot be bundled"),
                ));
                None
            }
            ResolveFailure::Bare => {
                self.chunk.diagnostics.push(
                    BundleDiagnostic::error(
                        BundleErrorKind::BareImport,
                        span,
                        format!(
                            "bare import \"{specifier}\" is not supported: handlers may import relative files and node: builtins"
                        ),
                    )
                    .with_help(match super::builtins::builtin(&format!("node:{specifier}")) {
                        Some(name) => format!("did you mean `{name}`? that builtin exists only with the `node:` prefix"),
                        // An alias of the project's own code: tsconfig `paths`, package.json `imports`.
                        None if ["#", "@/", "~/"].iter().any(|alias| specifier.starts_with(alias)) => {
                            "tsconfig `paths` and package.json `imports` are not read: import the module by its \
                             relative path"
                                .to_owned()
                        }
                        None => crate::diagnostics::suggesting(
                            specifier,
                            super::builtins::names(),
                            "vendor the code as a relative module, or use a prebuilt handler",
                        ),
                    }),
                );
                None
            }
            // A newer Node's module, loaded with `import()` where a `catch` can take Node 20's
            // refusal: kept, and said.
            ResolveFailure::NotFound if specifier.starts_with("node:") && kind == Request::Dynamic => {
                self.chunk.diagnostics.push(BundleDiagnostic::warning(
                    BundleErrorKind::UnresolvedImport,
                    span,
                    format!(
                        "\"{specifier}\" is not a builtin of Node {}: this import() fails there, and on every Node \
                         without it",
                        super::builtins::node_version()
                    ),
                ));
                Some(LinkSource::Builtin(specifier.to_owned()))
            }
            ResolveFailure::NotFound if specifier.starts_with("node:") => {
                let help = format!(
                    "Node {} has no such builtin module (the wrappers run on Node 20 and newer)",
                    super::builtins::node_version()
                );
                let known: Vec<String> = super::builtins::names()
                    .map(|name| if name.starts_with("node:") { name.to_owned() } else { format!("node:{name}") })
                    .collect();
                self.chunk.diagnostics.push(
                    BundleDiagnostic::error(
                        BundleErrorKind::UnresolvedImport,
                        span,
                        format!("\"{specifier}\" is not a Node builtin"),
                    )
                    .with_help(crate::diagnostics::suggesting(
                        specifier,
                        known.iter().map(String::as_str),
                        &help,
                    )),
                );
                None
            }
            ResolveFailure::NotFound | ResolveFailure::Unlisted => {
                if !self.chunk.unresolved.iter().any(|s| s == specifier) {
                    self.chunk.unresolved.push(specifier.to_owned());
                }
                let error = BundleDiagnostic::error(
                    BundleErrorKind::UnresolvedImport,
                    span,
                    format!("cannot resolve \"{specifier}\" from {}", self.key),
                );
                let outside = !super::resolve::outside_dirs(self.key, specifier).is_empty();
                let skipped = super::resolve::joined_key(self.key, specifier)
                    .and_then(|key| crate::loader::skipped_folder_help(&key));
                self.chunk.diagnostics.push(match outside {
                    _ if let Some(help) = skipped => error.with_help(help),
                    true => error.with_help(
                        "above the project root, a module is read only from the folder the import names \
                         (the files directly in it; a folder or a file that is a symbolic link is not read, and \
                         a folder back inside the project is imported by its path inside it)",
                    ),
                    false => error.with_help(
                        "the project's files are read as they are on disk: check the path and its extension \
                         (symbolic links are not followed)",
                    ),
                });
                None
            }
        }
    }

    /// A static request: the namespace expression, requiring a module once, in source order.
    fn static_request(&mut self, specifier: &str, position: u32) -> Option<Namespace> {
        let (target, span) = self.request(specifier, position, Request::Static)?;
        match target {
            LinkSource::Builtin(name) => {
                let local = builtin_local(&name);
                Some(Namespace { local: local.clone(), star_source: local, source: LinkSource::Builtin(name), span })
            }
            LinkSource::Module(key) => {
                let star_source = js_string(&key);
                let source = LinkSource::Module(key.clone());
                if let Some(local) = self.locals.get(&key) {
                    return Some(Namespace { local: local.clone(), star_source, source, span });
                }
                // Bound as the module links, before any module of the graph runs: a hoisted
                // function called during a cycle can already reach every import of this one.
                let local = format!("__ab_i{}", self.locals.len());
                let _ = writeln!(self.namespaces, "const {local} = __ab_module({star_source});");
                let _ = writeln!(self.prologue, "__ab_require({star_source});");
                self.locals.insert(key, local.clone());
                Some(Namespace { local, star_source, source, span })
            }
        }
    }

    /// Remove a whole statement, with the line break after it.
    fn remove_statement(&mut self, code: &str, span: oxc_span::Span) {
        let end = if code.as_bytes().get(span.end as usize) == Some(&b'\n') { span.end + 1 } else { span.end };
        self.edits.push(Edit { start: span.start, end, text: String::new() });
    }

    /// Where the original source names `name` of the module `specifier`.
    fn imported_name_span(&self, specifier: &str, name: &str) -> Option<Span> {
        self.transpiled.imported_name_spans.get(&(specifier.to_owned(), name.to_owned())).copied()
    }

    fn link_request_statement(&mut self, code: &str, statement: &Statement<'_>) {
        let Some(declaration) = statement.as_module_declaration() else {
            return;
        };
        match declaration {
            ModuleDeclaration::ImportDeclaration(import) => {
                self.remove_statement(code, import.span);
                let Some(namespace) = self.static_request(&import.source.value, import.span.start) else {
                    return;
                };
                for specifier in import.specifiers.iter().flatten() {
                    let (local, name) = match specifier {
                        ImportDeclarationSpecifier::ImportSpecifier(s) => (&s.local, s.imported.name().to_string()),
                        ImportDeclarationSpecifier::ImportDefaultSpecifier(s) => (&s.local, "default".to_owned()),
                        ImportDeclarationSpecifier::ImportNamespaceSpecifier(s) => (&s.local, "*".to_owned()),
                    };
                    let replacement = if name == "*" { namespace.whole() } else { namespace.member(&name) };
                    let binding = namespace.binding(&name);
                    if name != "*" {
                        let span = self.imported_name_span(&import.source.value, &name).unwrap_or(namespace.span);
                        self.links.imported.push((binding.clone(), span));
                    }
                    let tags = self.transpiled.imported_member_tags.iter();
                    let tags = tags.filter(|tag| tag.specifier == import.source.value.as_str() && tag.name == name);
                    self.links.member_tags.extend(tags.map(|tag| MemberTag {
                        binding: binding.clone(),
                        local: tag.local.clone(),
                        member: tag.member.clone(),
                        span: tag.span,
                    }));
                    if let Some(symbol) = local.symbol_id.get() {
                        self.replacements.insert(symbol, replacement);
                        self.imported_bindings.insert(symbol, binding);
                    }
                }
            }
            ModuleDeclaration::ExportFromDeclaration(export) => {
                self.remove_statement(code, export.span);
                let Some(namespace) = self.static_request(&export.source.value, export.span.start) else {
                    self.exports_unknown = true;
                    return;
                };
                for specifier in &export.specifiers {
                    let (name, exported) = (specifier.local.name(), specifier.exported.name().to_string());
                    self.getters.insert(exported.clone(), namespace.member(&name).expr);
                    let binding = namespace.binding(&name);
                    let span = self.imported_name_span(&export.source.value, &name).unwrap_or(namespace.span);
                    self.links.imported.push((binding.clone(), span));
                    self.links.exports.insert(exported, Some(binding));
                }
            }
            ModuleDeclaration::ExportAllDeclaration(export) => {
                self.remove_statement(code, export.span);
                let Some(namespace) = self.static_request(&export.source.value, export.span.start) else {
                    self.exports_unknown = true;
                    return;
                };
                match &export.exported {
                    Some(name) => {
                        self.links.exports.insert(name.name().to_string(), Some(namespace.binding("*")));
                        self.getters.insert(name.name().to_string(), namespace.local);
                    }
                    None => {
                        if !self.stars.contains(&namespace.star_source) {
                            self.stars.push(namespace.star_source);
                            self.links.stars.push(namespace.source);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    fn link_export_statement(&mut self, code: &str, statement: &Statement<'_>, scoping: &Scoping) {
        let Some(declaration) = statement.as_module_declaration() else {
            return;
        };
        match declaration {
            ModuleDeclaration::ExportNamedDeclaration(export) => {
                self.remove_statement(code, export.span);
                for specifier in &export.specifiers {
                    let local = match &specifier.local {
                        ModuleExportName::IdentifierReference(ident) => {
                            let Some(symbol) = symbol_of(scoping, ident) else {
                                let span = self.transpiled.export_spans.get(ident.name.as_str()).copied();
                                self.chunk.diagnostics.push(BundleDiagnostic::error(
                                    BundleErrorKind::Syntax,
                                    span.unwrap_or(Span::new(0, 0)),
                                    format!("export `{}` is not declared in this module", ident.name),
                                ));
                                continue;
                            };
                            let exported = specifier.exported.name().to_string();
                            self.links.exports.insert(exported, self.imported_bindings.get(&symbol).cloned());
                            match self.replacements.get(&symbol) {
                                Some(replacement) => replacement.expr.clone(),
                                None => ident.name.to_string(),
                            }
                        }
                        other => other.name().to_string(),
                    };
                    self.getters.insert(specifier.exported.name().to_string(), local);
                }
            }
            ModuleDeclaration::ExportDeclaration(export) => {
                let declaration_start = export.declaration.span().start;
                self.edits.push(Edit { start: export.span.start, end: declaration_start, text: String::new() });
                for name in super::transpile::declared_names(&export.declaration) {
                    self.getters.insert(name.clone(), name);
                }
            }
            ModuleDeclaration::ExportDefaultDeclaration(export) => {
                let start = export.span.start;
                let exported_at = self.transpiled.default_export_span;
                self.links.default_not_function = super::default_export::non_function_default(&export.declaration)
                    .map(|what| (what.to_owned(), exported_at));
                match &export.declaration {
                    ExportDefaultDeclarationKind::FunctionDeclaration(function) => {
                        self.edits.push(Edit { start, end: function.span.start, text: String::new() });
                        let name = match &function.id {
                            Some(id) => id.name.to_string(),
                            None => {
                                let at = function.params.span.start;
                                let spaced = code[..at as usize].ends_with(char::is_whitespace);
                                let text = if spaced { "__ab_default" } else { " __ab_default" };
                                self.edits.push(Edit { start: at, end: at, text: text.into() });
                                self.rename_default_function = true;
                                "__ab_default".to_owned()
                            }
                        };
                        self.getters.insert("default".into(), name);
                    }
                    ExportDefaultDeclarationKind::ClassDeclaration(class) => match &class.id {
                        Some(id) => {
                            self.edits.push(Edit { start, end: class.span.start, text: String::new() });
                            self.getters.insert("default".into(), id.name.to_string());
                        }
                        None => {
                            // `{ default: class {} }.default` names the class "default", like ESM.
                            self.edits.push(Edit {
                                start,
                                end: class.span.start,
                                text: "const __ab_default = { default: ".into(),
                            });
                            let end = class.span.end;
                            self.edits.push(Edit { start: end, end, text: " }.default;".into() });
                            self.getters.insert("default".into(), "__ab_default".into());
                        }
                    },
                    ExportDefaultDeclarationKind::TSInterfaceDeclaration(_) => {}
                    expression => {
                        let Some(expression) = expression.as_expression() else {
                            return;
                        };
                        let anonymous = is_anonymous_function_definition(expression);
                        let prefix =
                            if anonymous { "const __ab_default = { default: " } else { "const __ab_default = " };
                        let span = expression.span();
                        self.edits.push(Edit { start, end: span.start, text: prefix.into() });
                        if anonymous {
                            self.edits.push(Edit { start: span.end, end: span.end, text: " }.default".into() });
                        }
                        self.getters.insert("default".into(), "__ab_default".into());
                    }
                }
            }
            _ => {}
        }
    }

    fn finish(self, code: &str) {
        let Self {
            key,
            transpiled,
            chunk,
            mut edits,
            mut imports,
            builtins,
            namespaces,
            prologue,
            getters,
            links,
            stars,
            rename_default_function,
            ..
        } = self;
        // Every getter is an export; those not recorded with their origin are this module's own.
        let mut links = links;
        if links.default_not_function.is_none() {
            links.default_not_function =
                transpiled.named_default_not_function.map(|(what, at)| (what.to_owned(), Some(at)));
        }
        for name in getters.keys() {
            links.exports.entry(name.clone()).or_insert(None);
        }
        chunk.links = links;
        chunk.builtins = builtins.into_iter().collect();
        imports.sort_by_key(|(position, _)| *position);
        let mut seen = BTreeSet::new();
        chunk.imports = imports
            .into_iter()
            .filter(|(_, import)| seen.insert(import.key.clone()))
            .map(|(_, import)| import)
            .collect();

        let mut out = String::with_capacity(code.len() + prologue.len() + 256);
        // A generator: its first step links the module (getters over its hoisted functions
        // and its `let`/`const` still in TDZ, its imports' namespaces), the second runs the
        // body, the imports first; the runtime links a whole graph before it runs any of it.
        let _ = writeln!(out, "__ab_define({}, function* (__ab_exports) {{", js_string(key));
        if !getters.is_empty() {
            out.push_str("__ab_export(__ab_exports, {");
            for (index, (name, expr)) in getters.iter().enumerate() {
                let separator = if index == 0 { " " } else { ", " };
                let _ = write!(out, "{separator}{}: () => {expr}", property_key(name));
            }
            out.push_str(" });\n");
        }
        if rename_default_function {
            out.push_str("__ab_default_name(__ab_default);\n");
        }
        out.push_str(&namespaces);
        out.push_str("yield;\n");
        out.push_str(&prologue);

        edits.sort_by_key(|edit| (edit.start, edit.end));
        let mut cursor = 0usize;
        let mut copied = Vec::with_capacity(edits.len() + 1);
        let mut copy = |out: &mut String, from: usize, to: usize| {
            copied.push(Copied { from, to: out.len(), len: to - from });
            out.push_str(&code[from..to]);
        };
        for edit in &edits {
            let (start, end) = (edit.start as usize, edit.end as usize);
            if start < cursor {
                // Overlapping edits cannot happen for well-formed input; keep the first.
                continue;
            }
            copy(&mut out, cursor, start);
            out.push_str(&edit.text);
            cursor = end;
        }
        copy(&mut out, cursor, code.len());
        if !out.ends_with('\n') {
            out.push('\n');
        }
        // The export names and `export *` sources, which the runtime reads before the module
        // runs (ESM resolves them statically too).
        out.push('}');
        if !getters.is_empty() || !stars.is_empty() {
            let names: Vec<String> = getters.keys().map(|name| js_string(name)).collect();
            let _ = write!(out, ", [{}]", names.join(", "));
        }
        if !stars.is_empty() {
            let _ = write!(out, ", [{}]", stars.join(", "));
        }
        out.push_str(");\n");
        chunk.mappings = source_map::relocate(&transpiled.origins, &copied, &out);
        chunk.code = out;
    }
}

fn symbol_of(scoping: &Scoping, ident: &IdentifierReference<'_>) -> Option<SymbolId> {
    scoping.get_reference(ident.reference_id.get()?).symbol_id()
}

/// ES `IsAnonymousFunctionDefinition`: such a default export is named "default".
fn is_anonymous_function_definition(expression: &Expression<'_>) -> bool {
    match expression.without_parentheses() {
        Expression::ArrowFunctionExpression(_) => true,
        Expression::FunctionExpression(function) => function.id.is_none(),
        Expression::ClassExpression(class) => class.id.is_none(),
        _ => false,
    }
}

/// Every module request of the transpiled code: position and specifier.
#[derive(Default)]
struct RequestSites {
    sites: Vec<(u32, String)>,
}

impl<'a> Visit<'a> for RequestSites {
    fn visit_module_declaration(&mut self, it: &ModuleDeclaration<'a>) {
        let source = match it {
            ModuleDeclaration::ImportDeclaration(d) => &d.source,
            ModuleDeclaration::ExportFromDeclaration(d) => &d.source,
            ModuleDeclaration::ExportAllDeclaration(d) => &d.source,
            _ => return walk::walk_module_declaration(self, it),
        };
        self.sites.push((it.span().start, source.value.to_string()));
    }

    fn visit_import_expression(&mut self, it: &ImportExpression<'a>) {
        if let Some(specifier) = literal_specifier(&it.source) {
            self.sites.push((it.span.start, specifier.to_owned()));
        }
        walk::walk_import_expression(self, it);
    }
}

/// Rewrites references to imported bindings and collects literal dynamic imports.
struct Rewriter<'s> {
    scoping: &'s Scoping,
    replacements: &'s HashMap<SymbolId, Replacement>,
    edits: Vec<Edit>,
    /// `import("...")` expressions: span of the whole call and the specifier.
    dynamic: Vec<(oxc_span::Span, String)>,
}

impl Rewriter<'_> {
    fn replacement(&self, ident: &IdentifierReference<'_>) -> Option<&Replacement> {
        self.replacements.get(&symbol_of(self.scoping, ident)?)
    }

    fn edit(&mut self, span: oxc_span::Span, text: String) {
        self.edits.push(Edit { start: span.start, end: span.end, text });
    }

    /// Rewrite a callee or tag so that the call gets `this === undefined`, as in ESM.
    fn rewrite_callee(&mut self, callee: &Expression<'_>) -> bool {
        let Expression::Identifier(ident) = callee.without_parentheses() else {
            return false;
        };
        let Some(replacement) = self.replacement(ident) else {
            return false;
        };
        let text = if replacement.is_member { format!("(0, {})", replacement.expr) } else { replacement.expr.clone() };
        self.edit(callee.span(), text);
        true
    }
}

impl<'a> Visit<'a> for Rewriter<'_> {
    fn visit_module_declaration(&mut self, it: &ModuleDeclaration<'a>) {
        match it {
            // Imports, export lists and re-exports are removed whole.
            ModuleDeclaration::ExportDefaultDeclaration(_) | ModuleDeclaration::ExportDeclaration(_) => {
                walk::walk_module_declaration(self, it);
            }
            _ => {}
        }
    }

    fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
        if let Some(replacement) = self.replacement(it) {
            let text = replacement.expr.clone();
            self.edit(it.span, text);
        }
    }

    fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
        if self.rewrite_callee(&it.callee) {
            self.visit_arguments(&it.arguments);
        } else {
            walk::walk_call_expression(self, it);
        }
    }

    fn visit_tagged_template_expression(&mut self, it: &TaggedTemplateExpression<'a>) {
        if self.rewrite_callee(&it.tag) {
            self.visit_template_literal(&it.quasi);
        } else {
            walk::walk_tagged_template_expression(self, it);
        }
    }

    fn visit_object_property(&mut self, it: &ObjectProperty<'a>) {
        if it.shorthand
            && let Expression::Identifier(ident) = &it.value
            && let Some(replacement) = self.replacement(ident)
        {
            // `{ __proto__ }` is an own property; `__proto__: v` would set the prototype.
            let text = format!("{}: {}", property_key(&ident.name), replacement.expr);
            self.edit(it.span, text);
            return;
        }
        walk::walk_object_property(self, it);
    }

    fn visit_assignment_target_property_identifier(&mut self, it: &AssignmentTargetPropertyIdentifier<'a>) {
        if let Some(replacement) = self.replacement(&it.binding) {
            let text = format!("{}: {}", it.binding.name, replacement.expr);
            self.edit(it.binding.span, text);
            if let Some(init) = &it.init {
                self.visit_expression(init);
            }
            return;
        }
        walk::walk_assignment_target_property_identifier(self, it);
    }

    fn visit_import_expression(&mut self, it: &ImportExpression<'a>) {
        match literal_specifier(&it.source) {
            Some(specifier) => self.dynamic.push((it.span, specifier.to_owned())),
            None => walk::walk_import_expression(self, it),
        }
    }
}

/// The module runtime: registration, linking, evaluation with a cache and cycle support, and
/// the export helpers. As in ESM, a module's whole static graph links before any of it runs
/// (`__ab_link`: hoisted functions are callable, and bound in every namespace), then bodies
/// run depth-first post-order, each once (`__ab_require`); reading an export never runs a
/// module. Exports objects look like ESM namespaces: null prototype, getters, not
/// extensible, and bindings that cannot be deleted or redefined once the module has defined
/// them (`__ab_export`). A record's `hidden` lists the names its namespace leaves out (two
/// `export *` give them different bindings, or they are types: set by the bundle,
/// `handler_body`). Written into every wrapper as it is, so comments here cost bytes in each.
const RUNTIME: &str = r#"const __ab_modules = new Map();
const __ab_unlinked = [];
let __ab_linking = null;
function __ab_define(key, init, names = [], stars = []) {
  __ab_modules.set(key, { key, init, names, stars, hidden: [], deps: [], state: 0, index: 0, ancestor: 0, exports: undefined, body: undefined, error: undefined });
}
function __ab_record(key) {
  const record = __ab_modules.get(key);
  if (record === undefined) {
    throw new Error("agent-bundle: module " + JSON.stringify(key) + " is not in this bundle");
  }
  if (record.exports === undefined) {
    const exports = (record.exports = Object.create(null));
    Object.defineProperty(exports, Symbol.toStringTag, { value: "Module" });
    // Placeholders, sorted, that its own getters replace as it links.
    const getters = new Map();
    for (const name of record.names) {
      if (!record.hidden.includes(name)) getters.set(name, { enumerable: true, configurable: true });
    }
    // `export *` names are static, as in ESM: resolve them from the export lists.
    const stars = new Map();
    __ab_star_exports(record, new Set(), stars);
    for (const [name, get] of stars) {
      if (!getters.has(name) && !record.hidden.includes(name)) getters.set(name, { get, enumerable: true });
    }
    for (const name of [...getters.keys()].sort()) {
      Object.defineProperty(exports, name, getters.get(name));
    }
    Object.preventExtensions(exports);
    __ab_unlinked.push(record);
  }
  return record;
}
// Links every module waiting, breadth of the graph rather than its depth (a long chain of
// imports would overflow the stack): a module's first step binds its imports' namespaces,
// which queues them. Called without a receiver: `this` at a module's top level is undefined.
function __ab_link(key) {
  const record = __ab_record(key);
  while (__ab_unlinked.length > 0) {
    const next = __ab_unlinked.pop();
    const init = next.init;
    next.body = init(next.exports);
    __ab_linking = next;
    next.body.next();
    __ab_linking = null;
  }
  return record;
}
function __ab_star_exports(record, seen, found) {
  seen.add(record.key);
  for (const from of record.stars) {
    if (typeof from !== "string") {
      for (const name of Object.keys(from)) {
        if (name !== "default" && !found.has(name)) found.set(name, () => from[name]);
      }
      continue;
    }
    const source = __ab_modules.get(from);
    if (source === undefined || seen.has(from)) continue;
    for (const name of source.names) {
      if (name !== "default" && !found.has(name) && !source.hidden.includes(name)) {
        found.set(name, () => __ab_module(from)[name]);
      }
    }
    __ab_star_exports(source, seen, found);
  }
}
// A module's imports bind their namespaces as it links, in the order its body requires them.
function __ab_module(key) {
  if (__ab_linking !== null) __ab_linking.deps.push(key);
  return __ab_record(key).exports;
}
function __ab_require(key) {
  const record = __ab_link(key);
  if (record.state === 0) __ab_evaluate(record);
  if (record.state === 3) throw record.error;
  return record.exports;
}
// Runs `root`'s body after its imports', depth first, each once, from a stack rather than by
// recursion (a long chain of imports would overflow it): by the time a body requires its
// imports, each has run, or is running further up (a cycle). As in ESM, a module has run
// once its whole cycle has (Tarjan's components: `index`, `ancestor`); a body that throws,
// or an import that failed before, fails with its error every module not run by then.
let __ab_visits = 0;
function __ab_evaluate(root) {
  const waiting = [];
  const unfinished = [];
  const visit = (record) => {
    record.state = 1;
    record.index = record.ancestor = __ab_visits++;
    unfinished.push(record);
    waiting.push([record, 0]);
  };
  visit(root);
  while (waiting.length > 0) {
    const top = waiting[waiting.length - 1];
    const [record, next] = top;
    if (next < record.deps.length) {
      top[1] = next + 1;
      const dep = __ab_modules.get(record.deps[next]);
      if (dep.state === 0) visit(dep);
      else if (dep.state === 1) record.ancestor = Math.min(record.ancestor, dep.ancestor);
      // An import that failed before: its importers fail as it did, their later imports unrun.
      else if (dep.state === 3) return __ab_fail(unfinished, dep.error);
      continue;
    }
    waiting.pop();
    try {
      record.body.next();
    } catch (error) {
      return __ab_fail(unfinished, error);
    }
    if (record.ancestor === record.index) {
      let done;
      do {
        done = unfinished.pop();
        done.state = 2;
      } while (done !== record);
    } else {
      const importer = waiting[waiting.length - 1][0];
      importer.ancestor = Math.min(importer.ancestor, record.ancestor);
    }
  }
}
function __ab_fail(unfinished, error) {
  for (const failed of unfinished) {
    failed.state = 3;
    failed.error = error;
  }
}
function __ab_export(exports, getters) {
  for (const name of Object.keys(getters)) {
    if (!Object.hasOwn(exports, name)) continue; // hidden
    Object.defineProperty(exports, name, { get: getters[name], enumerable: true, configurable: false });
  }
}
function __ab_import(load) {
  return Promise.resolve().then(load);
}
function __ab_default_name(fn) {
  Object.defineProperty(fn, "name", { value: "default", configurable: true });
}
"#;

/// A bundle whose end is still to come: its code, then the line that must end the file, the
/// source map of the chunks' code (empty when none is mapped).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Assembled {
    pub code: String,
    pub source_map: String,
}

impl Assembled {
    /// The whole bundle: its code, then `epilogue` (no mapping covers it), then the map.
    pub fn with_epilogue(&self, epilogue: &str) -> String {
        [&self.code, epilogue, &self.source_map].concat()
    }
}

/// Concatenate chunks (by module key) into one ES module: the header line, static imports of
/// the builtins the chunks use, the module runtime, the chunks in the given order, then
/// `epilogue` verbatim; and the source map of the chunks that have mappings.
pub fn assemble(header: &str, chunks: &[(&str, &ModuleChunk)], epilogue: &str) -> Assembled {
    let builtins: BTreeSet<&str> =
        chunks.iter().flat_map(|(_, chunk)| chunk.builtins.iter().map(String::as_str)).collect();
    let size = header.len() + RUNTIME.len() + epilogue.len() + chunks.iter().map(|(_, c)| c.code.len()).sum::<usize>();
    let mut out = String::with_capacity(size + builtins.len() * 64 + 8);
    out.push_str(header);
    if !header.is_empty() && !header.ends_with('\n') {
        out.push('\n');
    }
    for builtin in builtins {
        let _ = writeln!(out, "import * as {} from {};", builtin_local(builtin), js_string(builtin));
    }
    // The chunks read a builtin's exports through its namespace, where a name it lacks is
    // `undefined`. The build checked the names against the Node 20 it took its table from;
    // an earlier Node 20 may lack one it added: imported once more by name, Node refuses
    // such a name when it links the bundle, as it would have refused the handler's own
    // import. (Not the tool's own modules' names, nor `default`, which every builtin has:
    // each line costs a wrapper's every run.)
    let named = chunks
        .iter()
        .filter(|(key, _)| super::virtual_module(key).is_none())
        .flat_map(|(_, chunk)| &chunk.links.imported)
        .filter(|(binding, _)| binding.name != "default")
        .filter_map(|(binding, _)| match &binding.source {
            LinkSource::Builtin(name) => Some((name.as_str(), binding.name.as_str())),
            LinkSource::Module(_) => None,
        });
    for (i, (specifier, name)) in named.collect::<BTreeSet<_>>().into_iter().enumerate() {
        let _ = writeln!(out, "import {{ {} as __ab_named{i} }} from {};", js_string(name), js_string(specifier));
    }
    out.push_str(RUNTIME);
    let mut lines = source_map::line_breaks(&out);
    let mut modules = Vec::with_capacity(chunks.len() + 1);
    for (key, chunk) in chunks {
        modules.push((*key, lines, chunk.mappings.as_slice()));
        out.push_str(&chunk.code);
        lines += source_map::line_breaks(&chunk.code);
        if !chunk.code.is_empty() && !chunk.code.ends_with('\n') {
            out.push('\n');
            lines += 1;
        }
    }
    // What follows the chunks (this epilogue, then the host's) is no module's.
    modules.push(("", lines, &[]));
    out.push_str(epilogue);
    Assembled { code: out, source_map: source_map::comment(modules) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Resolves `./x`-style specifiers to `src/x.ts` and builtins to `node:` names.
    fn test_resolve(specifier: &str) -> Result<Resolved, ResolveFailure> {
        if let Some(name) = specifier.strip_prefix("./") {
            return if name.starts_with("missing") {
                Err(ResolveFailure::NotFound)
            } else {
                Ok(Resolved::Module(format!("src/{name}.ts")))
            };
        }
        match specifier {
            "fs" | "node:fs" => Ok(Resolved::Builtin("node:fs".into())),
            "node:path" => Ok(Resolved::Builtin("node:path".into())),
            "os" => Ok(Resolved::Builtin("node:os".into())),
            "node:fs/promises" => Ok(Resolved::Builtin("node:fs/promises".into())),
            "agent-bundle/jsx-runtime" => Ok(Resolved::Module("agent-bundle:runtime/jsx.mjs".into())),
            _ => Err(ResolveFailure::Bare),
        }
    }

    fn compile(key: &str, source: &str) -> ModuleChunk {
        compile_module(key, source, &mut test_resolve)
    }

    fn compile_ok(source: &str) -> ModuleChunk {
        let chunk = compile("src/main.ts", source);
        assert!(chunk.diagnostics.is_empty(), "{:#?}", chunk.diagnostics);
        chunk
    }

    /// The chunk code without the registration wrapper lines.
    fn body(chunk: &ModuleChunk) -> String {
        let lines: Vec<&str> = chunk.code.lines().collect();
        assert_eq!(lines[0], "__ab_define(\"src/main.ts\", function* (__ab_exports) {");
        let last = lines[lines.len() - 1];
        assert!(last.starts_with('}') && last.ends_with(");"), "{last}");
        lines[1..lines.len() - 1].join("\n")
    }

    /// The export names and star sources after the module function.
    fn metadata(chunk: &ModuleChunk) -> &str {
        let last = chunk.code.lines().last().unwrap();
        &last[1..last.len() - 2]
    }

    #[test]
    fn a_shorthand_proto_property_stays_an_own_property() {
        let chunk = compile_ok("import { __proto__ } from \"./a\";\nconsole.log({ __proto__ });\n");
        assert!(body(&chunk).contains("[\"__proto__\"]: __ab_i0.__proto__"), "{}", body(&chunk));
    }

    #[test]
    fn imported_bindings_become_namespace_reads() {
        let chunk = compile_ok(
            "f();\nimport d, { f, g as h, \"odd name\" as o } from \"./a\";\nimport * as ns from \"./a\";\n\
             const obj = { f, h, ns };\nh`tpl`;\nns.f();\n(f)(1);\nf?.();\nnew d();\n({ f } = obj);\nconsole.log(o, typeof d);\n",
        );
        assert_eq!(
            body(&chunk),
            "const __ab_i0 = __ab_module(\"src/a.ts\");\n\
             yield;\n\
             __ab_require(\"src/a.ts\");\n\
             (0, __ab_i0.f)();\n\
             const obj = {\n\tf: __ab_i0.f,\n\th: __ab_i0.g,\n\tns: __ab_i0\n};\n\
             (0, __ab_i0.g)`tpl`;\n\
             __ab_i0.f();\n\
             (0, __ab_i0.f)(1);\n\
             (0, __ab_i0.f)?.();\n\
             new __ab_i0.default();\n\
             ({f: __ab_i0.f} = obj);\n\
             console.log(__ab_i0[\"odd name\"], typeof __ab_i0.default);"
        );
        assert_eq!(
            chunk.imports,
            [ModuleImport { specifier: "./a".into(), key: "src/a.ts".into(), span: Span::new(51, 56) }]
        );
        assert!(!chunk.has_default_export());
    }

    #[test]
    fn shadowed_names_are_left_alone() {
        let chunk = compile_ok("import { f } from \"./a\";\nfunction g(f) { return f; }\nexport const r = g(f);\n");
        assert!(body(&chunk).contains("function g(f) {\n\treturn f;\n}"));
        assert!(body(&chunk).contains("const r = g(__ab_i0.f);"));
    }

    #[test]
    fn exports_become_getters() {
        let chunk = compile_ok(
            "import { x } from \"./a\";\nexport const a = 1, { b, c: [d] } = { b: 2, c: [3] };\nexport let e = 1;\n\
             export function f() {}\nexport class G {}\nconst h = 1;\nexport { h as \"h-h\", h as default, x as y };\n",
        );
        let code = body(&chunk);
        assert!(code.starts_with(
            "__ab_export(__ab_exports, { G: () => G, a: () => a, b: () => b, d: () => d, default: () => h, e: () => e, f: () => f, \"h-h\": () => h, y: () => __ab_i0.x });\n"
        ), "{code}");
        assert!(code.contains("\nconst a = 1, { b, c: [d] } = {"));
        assert!(code.contains("\nlet e = 1;\nfunction f() {}\nclass G {}\nconst h = 1;"));
        assert!(!code.contains("\nexport"));
        assert_eq!(metadata(&chunk), ", [\"G\", \"a\", \"b\", \"d\", \"default\", \"e\", \"f\", \"h-h\", \"y\"]");
        assert_eq!(metadata(&compile_ok("console.log(1);")), "");
        assert!(chunk.has_default_export());
    }

    #[test]
    fn export_default_forms() {
        let cases = [
            ("export default function () {}", "__ab_default_name(__ab_default);\nyield;\nfunction __ab_default() {}"),
            (
                "export default async function* () {}",
                "__ab_default_name(__ab_default);\nyield;\nasync function* __ab_default() {}",
            ),
            ("export default function named() {}", "yield;\nfunction named() {}"),
            ("export default class Named {}", "yield;\nclass Named {}"),
            ("export default class {}", "yield;\nconst __ab_default = { default: class {} }.default;"),
            ("export default async () => 1;", "yield;\nconst __ab_default = { default: async () => 1 }.default;"),
            ("export default (function () {});", "yield;\nconst __ab_default = { default: (function() {}) }.default;"),
            ("export default 1 + 2;", "yield;\nconst __ab_default = 1 + 2;"),
            (
                "import { f } from \"./a\";\nexport default () => f;",
                "const __ab_i0 = __ab_module(\"src/a.ts\");\nyield;\n__ab_require(\"src/a.ts\");\nconst __ab_default = { default: () => __ab_i0.f }.default;",
            ),
            (
                "import { f } from \"./a\";\nexport default f;",
                "const __ab_i0 = __ab_module(\"src/a.ts\");\nyield;\n__ab_require(\"src/a.ts\");\nconst __ab_default = __ab_i0.f;",
            ),
        ];
        for (source, expected) in cases {
            let chunk = compile_ok(source);
            let code = body(&chunk);
            let code = code.split_once("\n").map_or("", |(_, rest)| rest);
            assert_eq!(code, expected, "for {source}");
            assert!(chunk.has_default_export(), "for {source}");
        }
    }

    #[test]
    fn re_exports() {
        let chunk = compile_ok(
            "export * from \"./a\";\nexport * as ns from \"./b\";\nexport { x, default as y } from \"./a\";\nexport * from \"fs\";\nexport { default } from \"./c\";\n",
        );
        assert_eq!(
            body(&chunk),
            "__ab_export(__ab_exports, { default: () => __ab_i2.default, ns: () => __ab_i1, x: () => __ab_i0.x, y: () => __ab_i0.default });\n\
             const __ab_i0 = __ab_module(\"src/a.ts\");\n\
             const __ab_i1 = __ab_module(\"src/b.ts\");\n\
             const __ab_i2 = __ab_module(\"src/c.ts\");\n\
             yield;\n\
             __ab_require(\"src/a.ts\");\n\
             __ab_require(\"src/b.ts\");\n\
             __ab_require(\"src/c.ts\");"
        );
        assert_eq!(metadata(&chunk), ", [\"default\", \"ns\", \"x\", \"y\"], [\"src/a.ts\", __ab_node_fs]");
        assert!(chunk.has_default_export());
        assert_eq!(chunk.builtins, ["node:fs"]);
        let keys: Vec<&str> = chunk.imports.iter().map(|i| i.key.as_str()).collect();
        assert_eq!(keys, ["src/a.ts", "src/b.ts", "src/c.ts"]);
    }

    #[test]
    fn builtins_and_dynamic_imports() {
        let chunk = compile_ok(
            "import fs from \"fs\";\nimport { readFile } from \"node:fs\";\nimport * as fsp from \"node:fs/promises\";\n\
             import { join } from \"node:path\";\nexport const load = () => import(\"./lazy\");\n\
             export const p = () => import(`node:path`);\nexport const os = () => import(\"os\");\n\
             console.log(fs.existsSync, readFile, fsp, join);\n",
        );
        // `node:os` is only imported dynamically, so no static import loads it.
        assert_eq!(chunk.builtins, ["node:fs", "node:fs/promises", "node:path"]);
        let code = body(&chunk);
        assert!(code.contains("const load = () => __ab_import(() => __ab_require(\"src/lazy.ts\"));"), "{code}");
        assert!(code.contains("const p = () => import(\"node:path\");"), "{code}");
        assert!(code.contains("const os = () => import(\"node:os\");"), "{code}");
        assert!(code.contains("console.log(__ab_node_fs.default.existsSync, __ab_node_fs.readFile, __ab_node_fs$promises, __ab_node_path.join);"));
        assert_eq!(chunk.imports.len(), 1);
        assert_eq!(chunk.imports[0].key, "src/lazy.ts");
    }

    #[test]
    fn imports_are_in_source_order_and_deduplicated() {
        let chunk = compile_ok(
            "const later = () => import(\"./b\");\nimport { a } from \"./a\";\nimport \"./b\";\nimport { again } from \"./a\";\nexport { c } from \"./c\";\nconsole.log(a, again, later);\n",
        );
        let imports: Vec<(&str, &str)> = chunk.imports.iter().map(|i| (i.specifier.as_str(), i.key.as_str())).collect();
        assert_eq!(imports, [("./b", "src/b.ts"), ("./a", "src/a.ts"), ("./c", "src/c.ts")]);
        // The span of the dynamic import is the one of its own specifier.
        assert_eq!(chunk.imports[0].span, Span::new(27, 32));
    }

    #[test]
    fn type_only_imports_vanish_without_resolving() {
        let chunk = compile_ok(
            "import type { A } from \"some-package\";\nimport { type B } from \"./missing\";\nimport { C } from \"another-package\";\n\
             export type D = A | B | C;\nexport interface E {}\nexport const value: A = 1 as any;\n",
        );
        assert!(chunk.imports.is_empty());
        assert!(!chunk.code.contains("import"));
    }

    #[test]
    fn jsx_imports_the_aliased_runtime() {
        let chunk = compile("src/view.tsx", "const B = () => 1;\nexport const V = () => <B>{1}</B>;\n");
        assert!(chunk.diagnostics.is_empty(), "{:?}", chunk.diagnostics);
        assert_eq!(chunk.imports[0].key, "agent-bundle:runtime/jsx.mjs");
        assert_eq!(chunk.imports[0].span, Span::new(42, 52));
        assert!(chunk.code.contains("(0, __ab_i0.jsx)(B, { children: 1 })"), "{}", chunk.code);
    }

    #[test]
    fn hashbang_and_enum_and_namespace() {
        let chunk = compile_ok(
            "#!/usr/bin/env node\nexport enum E { A, B = \"b\" }\nexport namespace N { export const x = 1; }\nexport const enum C { X = 1 }\nexport const y = C.X;\n",
        );
        let code = body(&chunk);
        assert!(!code.contains("#!"));
        assert!(
            code.starts_with("__ab_export(__ab_exports, { C: () => C, E: () => E, N: () => N, y: () => y });\n"),
            "{code}"
        );
    }

    #[test]
    fn compiling_is_deterministic() {
        let source = "import { a } from \"./a\";\nimport fs from \"fs\";\nexport default () => [a, fs];\nexport * from \"./b\";\n";
        let first = compile("src/main.ts", source);
        let second = compile("src/main.ts", source);
        assert_eq!(first, second);
    }

    /// A CommonJS module (by `.cjs`, or the `.cts` TypeScript maps it to) and an alias of the
    /// project's own code are refused saying so, not as a module of no kind or a package.
    #[test]
    fn commonjs_modules_and_path_aliases_are_refused_saying_why() {
        let source = "import c from \"./lib/c.cjs\";\nimport { x } from \"#lib/x\";\nconsole.log(c, x);\n";
        let chunk = compile_module("src/a.ts", source, &mut |specifier| match specifier {
            "./lib/c.cjs" => Ok(Resolved::Module("src/lib/c.cts".into())),
            _ => Err(ResolveFailure::Bare),
        });
        let found: Vec<_> = chunk.diagnostics.iter().map(|d| (d.kind, d.help.as_deref().unwrap_or(""))).collect();
        assert_eq!(
            found,
            [
                (
                    BundleErrorKind::CommonJs,
                    "write it as an ES module (.ts, .mts, .js, .mjs: `export` in place of `module.exports`)"
                ),
                (
                    BundleErrorKind::BareImport,
                    "tsconfig `paths` and package.json `imports` are not read: import the module by its relative path"
                ),
            ]
        );
    }

    #[test]
    fn resolution_failures_are_reported_at_the_specifier() {
        let source = "import { a } from \"lodash\";\nimport { b } from \"./missing\";\nexport * from \"./missing-too\";\nconsole.log(a, b, import(\"left-pad\"));\n";
        let chunk = compile("src/hooks/a.ts", source);
        assert!(chunk.code.is_empty());
        let found: Vec<(BundleErrorKind, &str, &str)> = chunk
            .diagnostics
            .iter()
            .map(|d| (d.kind, &source[d.span.start as usize..d.span.end as usize], d.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    BundleErrorKind::BareImport,
                    "\"lodash\"",
                    "bare import \"lodash\" is not supported: handlers may import relative files and node: builtins"
                ),
                (
                    BundleErrorKind::UnresolvedImport,
                    "\"./missing\"",
                    "cannot resolve \"./missing\" from src/hooks/a.ts"
                ),
                (
                    BundleErrorKind::UnresolvedImport,
                    "\"./missing-too\"",
                    "cannot resolve \"./missing-too\" from src/hooks/a.ts"
                ),
                (
                    BundleErrorKind::BareImport,
                    "\"left-pad\"",
                    "bare import \"left-pad\" is not supported: handlers may import relative files and node: builtins"
                ),
            ]
        );
        assert_eq!(
            chunk.diagnostics[0].help.as_deref(),
            Some("vendor the code as a relative module, or use a prebuilt handler")
        );
    }

    #[test]
    fn undeclared_exports_are_errors() {
        let source = "export { nope };\n";
        let chunk = compile("src/main.ts", source);
        assert_eq!(chunk.diagnostics.len(), 1);
        assert_eq!(chunk.diagnostics[0].kind, BundleErrorKind::Syntax);
        assert_eq!(chunk.diagnostics[0].span, Span::new(9, 13));
    }

    #[test]
    fn helpers() {
        assert_eq!(builtin_local("node:fs"), "__ab_node_fs");
        assert_eq!(builtin_local("node:fs/promises"), "__ab_node_fs$promises");
        assert_eq!(builtin_local("node:_http_agent"), "__ab_node___http__agent");
        assert_eq!(builtin_local("node:a-b"), "__ab_node_a_2d_b");
        assert_eq!(js_string("a\"b\\c\nd\u{2028}\u{1}"), "\"a\\\"b\\\\c\\nd\\u2028\\u0001\"");
        assert_eq!(member("ns", "x"), "ns.x");
        assert_eq!(member("ns", "default"), "ns.default");
        assert_eq!(member("ns", "a-b"), "ns[\"a-b\"]");
        assert_eq!(property_key("ünï"), "\"ünï\"");
        assert_eq!(property_key("__proto__"), "[\"__proto__\"]");
        assert_eq!(property_key("default"), "default");
    }

    #[test]
    fn assemble_layout() {
        let a = compile_ok("import fs from \"fs\";\nimport { join } from \"node:path\";\nexport default [fs, join];\n");
        let b = compile("src/b.ts", "import fs from \"node:fs\";\nexport const x = fs;\n");
        let c = compile(
            "agent-bundle:runtime/hook.mjs",
            "import { readSync } from \"node:fs\";\nexport const r = readSync;\n",
        );
        let out = assemble(
            "// header",
            &[("src/a.ts", &a), ("src/b.ts", &b), ("agent-bundle:runtime/hook.mjs", &c)],
            "EPILOGUE\n",
        )
        .code;
        // The namespaces, then every name the project's modules import from them once more
        // (for an earlier Node 20 than the build's table to check), `default` and the tool's
        // own modules' names aside.
        assert!(out.starts_with(
            "// header\nimport * as __ab_node_fs from \"node:fs\";\nimport * as __ab_node_path from \"node:path\";\n\
             import { \"join\" as __ab_named0 } from \"node:path\";\nconst __ab_modules = new Map();\n"
        ), "{out}");
        assert!(out.ends_with(&format!("{}{}{}EPILOGUE\n", a.code, b.code, c.code)));
        assert_eq!(out.matches("import * as").count(), 2);
    }
}
