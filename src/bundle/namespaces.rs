//! What a module's namespace declarations are to each other, read before the checker walks
//! them: TypeScript merges the declarations of one namespace, so a bare name in one of them
//! may mean a member another exports, earlier in the module or later.

use std::collections::{BTreeSet, HashMap, HashSet};

use oxc_ast::ast::{
    ArrowFunctionExpression, Declaration, ExportDeclaration, Function, Program, Statement, TSExternalModuleDeclaration,
    TSGlobalDeclaration, TSNamespaceDeclaration, TSNamespaceDeclarationBody,
};
use oxc_ast_visit::{Visit, walk};
use oxc_semantic::Scoping;
use oxc_syntax::scope::ScopeFlags;
use oxc_syntax::symbol::SymbolFlags;

use super::transpile::declared_names;

/// How a namespace declaration is named: its dotted path (`A.B`), and what it merges with
/// (the path, but for a namespace its enclosing one does not export: that is one of its own,
/// `A.B@40`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct NamespaceName {
    pub path: String,
    pub key: String,
}

/// Every namespace declaration of a module (by where it starts), and the members each exports.
#[derive(Default)]
pub(super) struct NamespaceDeclarations {
    names: HashMap<u32, NamespaceName>,
    /// The declarations (by where they start) exporting each member, by the namespace's key
    /// and the member's name.
    exporters: HashMap<(String, String), BTreeSet<u32>>,
    /// The keys of the namespaces with a `declare`d declaration (or one inside one).
    ambient: HashSet<String>,
}

impl NamespaceDeclarations {
    pub(super) fn of(program: &Program<'_>, scoping: &Scoping) -> Self {
        let mut reader =
            Reader { scoping, open: Vec::new(), merging: HashSet::new(), ambient_depth: 0, read: Self::default() };
        reader.visit_program(program);
        reader.read
    }

    /// The name of the declaration starting at `start` (one the reader did not reach, which
    /// the checker does not either, is a namespace of its own).
    pub(super) fn name(&self, start: u32, id: &str) -> NamespaceName {
        let own = || NamespaceName { path: id.to_owned(), key: format!("{id}@{start}") };
        self.names.get(&start).cloned().unwrap_or_else(own)
    }

    /// Whether a declaration of namespace `key` other than the one starting at `start` exports
    /// `member`.
    pub(super) fn exported_elsewhere(&self, key: &str, member: &str, start: u32) -> bool {
        self.exporters_of(key, member).any(|exporter| exporter != start)
    }

    /// Whether a declaration of namespace `key` before the one starting at `start` exports
    /// `member`.
    pub(super) fn exported_before(&self, key: &str, member: &str, start: u32) -> bool {
        self.exporters_of(key, member).any(|exporter| exporter < start)
    }

    /// Whether a declaration of namespace `key` is ambient (`declare namespace`).
    pub(super) fn declared_ambient(&self, key: &str) -> bool {
        self.ambient.contains(key)
    }

    fn exporters_of(&self, key: &str, member: &str) -> impl Iterator<Item = u32> + '_ {
        self.exporters.get(&(key.to_owned(), member.to_owned())).into_iter().flatten().copied()
    }
}

struct Reader<'s> {
    scoping: &'s Scoping,
    /// The names of the declarations being walked, innermost last.
    open: Vec<NamespaceName>,
    /// Where the nested namespace declarations that merge with their namesakes start: those
    /// their enclosing namespace exports (`export namespace B`, `namespace A.B`).
    merging: HashSet<u32>,
    /// How many `declare namespace`s the walk is in.
    ambient_depth: u32,
    read: NamespaceDeclarations,
}

impl Reader<'_> {
    fn name_of(&self, it: &TSNamespaceDeclaration<'_>) -> NamespaceName {
        let (name, start) = (&it.id.name, it.span.start);
        match self.open.last() {
            None => NamespaceName { path: name.to_string(), key: name.to_string() },
            Some(outer) if self.merging.contains(&start) => {
                NamespaceName { path: format!("{}.{name}", outer.path), key: format!("{}.{name}", outer.key) }
            }
            Some(outer) => {
                NamespaceName { path: format!("{}.{name}", outer.path), key: format!("{}.{name}@{start}", outer.key) }
            }
        }
    }

    /// The members the declaration `it` exports: what exists at run time.
    fn exported_members(&self, it: &TSNamespaceDeclaration<'_>) -> Vec<String> {
        match &it.body {
            TSNamespaceDeclarationBody::TSModuleBlock(block) => {
                block.body.iter().flat_map(|statement| exported_values(statement, self.scoping)).collect()
            }
            // `namespace A.B {}` makes `B` a member of `A`.
            TSNamespaceDeclarationBody::TSNamespaceDeclaration(inner) if is_instantiated(inner, self.scoping) => {
                vec![inner.id.name.to_string()]
            }
            TSNamespaceDeclarationBody::TSNamespaceDeclaration(_) => Vec::new(),
        }
    }
}

impl<'a> Visit<'a> for Reader<'_> {
    // As the checker: nothing in `declare module 'x' {}` or `declare global {}` is this module's.
    fn visit_ts_external_module_declaration(&mut self, _: &TSExternalModuleDeclaration<'a>) {}

    fn visit_ts_global_declaration(&mut self, _: &TSGlobalDeclaration<'a>) {}

    // A namespace in a function is an error of its own (TS1235), merging with no namesake
    // outside: left unread, it is keyed apart (`NamespaceDeclarations::name`).
    fn visit_function(&mut self, _: &Function<'a>, _: ScopeFlags) {}

    fn visit_arrow_function_expression(&mut self, _: &ArrowFunctionExpression<'a>) {}

    fn visit_export_declaration(&mut self, it: &ExportDeclaration<'a>) {
        if let Declaration::TSNamespaceDeclaration(namespace) = &it.declaration {
            self.merging.insert(namespace.span.start);
        }
        walk::walk_export_declaration(self, it);
    }

    fn visit_ts_namespace_declaration(&mut self, it: &TSNamespaceDeclaration<'a>) {
        let name = self.name_of(it);
        if let TSNamespaceDeclarationBody::TSNamespaceDeclaration(inner) = &it.body {
            self.merging.insert(inner.span.start);
        }
        for member in self.exported_members(it) {
            self.read.exporters.entry((name.key.clone(), member)).or_default().insert(it.span.start);
        }
        self.ambient_depth += u32::from(it.declare);
        if self.ambient_depth > 0 {
            self.read.ambient.insert(name.key.clone());
        }
        self.read.names.insert(it.span.start, name.clone());
        self.open.push(name);
        walk::walk_ts_namespace_declaration(self, it);
        self.open.pop();
        self.ambient_depth -= u32::from(it.declare);
    }
}

/// The values a statement of a namespace body exports as members of the namespace: what
/// exists at run time (nothing `declare`d, no namespace holding types alone).
fn exported_values(statement: &Statement<'_>, scoping: &Scoping) -> Vec<String> {
    let Statement::ExportDeclaration(export) = statement else { return Vec::new() };
    match &export.declaration {
        declaration if declaration.declare() => Vec::new(),
        Declaration::TSNamespaceDeclaration(namespace) if !is_instantiated(namespace, scoping) => Vec::new(),
        declaration => declared_names(declaration),
    }
}

/// Whether a namespace holds values (TypeScript's "instantiated"), not types alone.
pub(super) fn is_instantiated(namespace: &TSNamespaceDeclaration<'_>, scoping: &Scoping) -> bool {
    namespace.id.symbol_id.get().is_some_and(|symbol| scoping.symbol_flags(symbol).contains(SymbolFlags::ValueModule))
}
