//! How deep a module may nest, checked before semantic analysis and printing.

use oxc_ast::ast::{
    CallExpression, Expression, Function, Program, Statement, StaticMemberExpression, TSNamespaceDeclaration,
};
use oxc_ast_visit::{Visit, walk};
use oxc_span::GetSpan;
use oxc_syntax::scope::ScopeFlags;

use super::transpile::{BundleDiagnostic, BundleErrorKind};

/// The deepest statements may nest (`if (a) if (b) …`, loops, labels, braced or not: a block
/// is no level of its own, and an `else if` chain is flat): the printer indents each level
/// once more, so the output grows with the square of the depth, and no written code comes
/// near.
const MAX_STATEMENT_NESTING: u32 = 1_000;

/// The deepest namespaces may nest (`namespace A.B.C`, or one in another): each level runs
/// as a function called inside the one around it, which Node's parser gives up on a few
/// hundred levels down; no written code comes near.
const MAX_NAMESPACE_NESTING: u32 = 100;

/// The deepest functions may nest (arrows, methods, and namespaces, which run as functions):
/// Node's parser gives up on functions called where they are written between 400 and 450
/// levels down, on braced arrows between 600 and 800, within the brackets' own bound; no
/// written code comes near.
const MAX_FUNCTION_NESTING: u32 = 400;

/// The deepest expressions may nest where Node's parser recurses (`a ? b : c ? …`,
/// `a = b = …`, `!!…`; not down the left of `a + b + …`, `a.b.c` or `f()()`, which it reads in a
/// loop): it gives up on conditionals between 2,000 and 3,000 levels down.
const MAX_EXPRESSION_NESTING: u32 = 1_500;

/// The longest `else if` chain: printed flat, but Node's parser recurses once per `else`,
/// and gives up between 3,000 and 5,000.
const MAX_ELSE_IF_CHAIN: u32 = 2_000;

/// What a nesting bound counts, each level of it one deeper.
#[derive(Clone, Copy)]
enum Nesting {
    Statements,
    Functions,
    Namespaces,
    Expressions,
}

impl Nesting {
    fn bound(self) -> u32 {
        match self {
            Nesting::Statements => MAX_STATEMENT_NESTING,
            Nesting::Functions => MAX_FUNCTION_NESTING,
            Nesting::Namespaces => MAX_NAMESPACE_NESTING,
            Nesting::Expressions => MAX_EXPRESSION_NESTING,
        }
    }

    /// The diagnostic's message and help past the bound.
    fn refusal(self) -> (String, &'static str) {
        let (what, help) = match self {
            Nesting::Statements => {
                ("statements", "no written code nests so deep (printed, each level is indented once more): split it")
            }
            Nesting::Functions => ("functions", "Node's parser gives up on functions nested much deeper: split it"),
            Nesting::Namespaces => (
                "namespaces",
                "each level runs as a function inside the one around it, which Node cannot parse so deep: use a \
                 flatter structure (modules, or objects)",
            ),
            Nesting::Expressions => {
                ("expressions", "Node's parser gives up on expressions nested much deeper: split it")
            }
        };
        (format!("{what} nest more than {} levels deep here", self.bound()), help)
    }
}

/// Finds the first place a module nests past a bound ([`Nesting`], and the longest `else if`
/// chain). Checked before semantic analysis, whose check of a label walks every statement
/// around it (a chain of labels takes time as the square of its length), and such a module
/// is never printed.
#[derive(Default)]
pub(super) struct NestingBound {
    /// How deep the walk is, by [`Nesting`] (an `else if` is no statement deeper).
    depths: [u32; 4],
    /// How many `else if` the walk is into in the chain it is in.
    else_ifs: u32,
    found: Option<BundleDiagnostic>,
}

impl NestingBound {
    pub(super) fn first_past(program: &Program<'_>) -> Option<BundleDiagnostic> {
        let mut bound = NestingBound::default();
        bound.visit_program(program);
        bound.found
    }

    fn refuse(&mut self, span: oxc_span::Span, message: String, help: &str) {
        self.found = Some(BundleDiagnostic::error(BundleErrorKind::Syntax, span.into(), message).with_help(help));
    }

    /// Walks (`walk`) one level of `nesting` deeper, unless that is past its bound (or a
    /// bound was passed already).
    fn deeper(&mut self, nesting: Nesting, span: oxc_span::Span, walk: impl FnOnce(&mut Self)) {
        if self.found.is_some() {
            return;
        }
        self.depths[nesting as usize] += 1;
        if self.depths[nesting as usize] <= nesting.bound() {
            walk(self);
        } else {
            let (message, help) = nesting.refusal();
            self.refuse(span, message, help);
        }
        self.depths[nesting as usize] -= 1;
    }
}

impl<'a> Visit<'a> for NestingBound {
    fn visit_statement(&mut self, it: &Statement<'a>) {
        match it {
            // A block is no level of its own: the statement whose body it is is one, and
            // blocks within blocks are bounded as brackets.
            Statement::BlockStatement(_) if self.found.is_none() => walk::walk_statement(self, it),
            Statement::BlockStatement(_) => {}
            _ => self.deeper(Nesting::Statements, it.span(), |bound| walk::walk_statement(bound, it)),
        }
    }

    fn visit_if_statement(&mut self, it: &oxc_ast::ast::IfStatement<'a>) {
        let chain = std::mem::take(&mut self.else_ifs);
        self.visit_expression(&it.test);
        self.visit_statement(&it.consequent);
        self.else_ifs = chain;
        match &it.alternate {
            // `else if`: a chain, printed flat, no deeper, as long as Node parses it.
            Some(Statement::IfStatement(next)) if self.else_ifs < MAX_ELSE_IF_CHAIN => {
                self.else_ifs += 1;
                self.visit_if_statement(next.as_ref());
                self.else_ifs -= 1;
            }
            Some(Statement::IfStatement(next)) if self.found.is_none() => {
                let message = format!("`else if` chains more than {MAX_ELSE_IF_CHAIN} times here");
                self.refuse(
                    next.span,
                    message,
                    "Node's parser gives up on longer chains: use a lookup table or a `switch`",
                );
            }
            Some(Statement::IfStatement(_)) => {}
            Some(alternate) => self.visit_statement(alternate),
            None => {}
        }
    }

    fn visit_expression(&mut self, it: &Expression<'a>) {
        self.deeper(Nesting::Expressions, it.span(), |bound| walk::walk_expression(bound, it));
    }

    // Down the left of a chain Node reads in a loop: no deeper.
    fn visit_binary_expression(&mut self, it: &oxc_ast::ast::BinaryExpression<'a>) {
        // (`**` is read from the right, as nesting.)
        if it.operator == oxc_syntax::operator::BinaryOperator::Exponential {
            self.visit_expression(&it.left);
        } else {
            walk::walk_expression(self, &it.left);
        }
        self.visit_expression(&it.right);
    }

    fn visit_logical_expression(&mut self, it: &oxc_ast::ast::LogicalExpression<'a>) {
        walk::walk_expression(self, &it.left);
        self.visit_expression(&it.right);
    }

    fn visit_static_member_expression(&mut self, it: &StaticMemberExpression<'a>) {
        walk::walk_expression(self, &it.object);
    }

    fn visit_computed_member_expression(&mut self, it: &oxc_ast::ast::ComputedMemberExpression<'a>) {
        walk::walk_expression(self, &it.object);
        self.visit_expression(&it.expression);
    }

    fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
        walk::walk_expression(self, &it.callee);
        for argument in &it.arguments {
            self.visit_argument(argument);
        }
    }

    fn visit_function(&mut self, it: &Function<'a>, flags: ScopeFlags) {
        self.deeper(Nesting::Functions, it.span, |bound| walk::walk_function(bound, it, flags));
    }

    fn visit_arrow_function_expression(&mut self, it: &oxc_ast::ast::ArrowFunctionExpression<'a>) {
        self.deeper(Nesting::Functions, it.span, |bound| walk::walk_arrow_function_expression(bound, it));
    }

    /// A namespace runs as a function: one level of either.
    fn visit_ts_namespace_declaration(&mut self, it: &TSNamespaceDeclaration<'a>) {
        self.deeper(Nesting::Namespaces, it.id.span, |bound| {
            bound.deeper(Nesting::Functions, it.span, |bound| walk::walk_ts_namespace_declaration(bound, it));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::transpile::tests::{errors, one};
    use super::super::transpile::transpile;
    use super::*;

    /// Statements nested past the bound (printed, each level indented once more: output the
    /// square of the depth) are refused, and nothing is printed; an `else if` chain is flat.
    #[test]
    fn statements_nested_too_deep_are_refused_but_else_if_chains_are_flat() {
        // (On a build's deep stack: the parser recurses once per level.)
        crate::threads::on_deep_pool(statements_nested_too_deep);
    }

    fn statements_nested_too_deep() {
        let nested = |depth: usize| format!("let a = 1;\n{}a;\nexport default () => a;\n", "if (a) ".repeat(depth));
        let out = transpile("src/h.ts", &nested(MAX_STATEMENT_NESTING as usize - 1));
        assert!(out.code.is_some() && out.diagnostics.is_empty(), "{:?}", out.diagnostics);
        // Braced, each level is one too (within the brackets' own bound).
        let depth = MAX_STATEMENT_NESTING as usize - 1;
        let braced =
            format!("let a = 1;\n{}a;{}\nexport default () => a;\n", "for (;;) {".repeat(depth), "}".repeat(depth));
        let out = transpile("src/h.ts", &braced);
        assert!(out.code.is_some() && out.diagnostics.is_empty(), "{:?}", out.diagnostics);
        let out = transpile("src/h.ts", &nested(MAX_STATEMENT_NESTING as usize + 1));
        assert!(out.code.is_none(), "not printed");
        assert_eq!(errors("src/h.ts", &nested(MAX_STATEMENT_NESTING as usize + 1)).len(), 1);
        // A chain of labels is a statement in each: refused before semantic analysis, whose
        // check of each label walks the ones around it.
        let labels: String = (0..20_000).map(|i| format!("l{i}: ")).collect();
        let found = errors("src/h.ts", &format!("{labels};\nexport default () => 1;\n"));
        assert_eq!(found.len(), 1);
        assert!(found[0].1.starts_with(&format!("l{MAX_STATEMENT_NESTING}: ")), "the label past the bound");
        let chain: String = (0..MAX_ELSE_IF_CHAIN).map(|i| format!("if (a === {i}) {{}} else ")).collect();
        let out = transpile("src/h.ts", &format!("let a = 1;\n{chain}{{}}\nexport default () => a;\n"));
        assert!(out.code.is_some() && out.diagnostics.is_empty(), "{:?}", out.diagnostics);
    }

    /// Namespaces nest as functions do when they run: deeper than Node parses is refused,
    /// dotted or not, where the level past the bound is named.
    #[test]
    fn namespaces_nested_too_deep_are_refused() {
        crate::threads::on_deep_pool(|| {
            let dotted = |depth: u32| {
                let path = vec!["N"; depth as usize].join(".");
                format!("namespace {path} {{ export const x = 1; }}\nexport default () => 1;\n")
            };
            assert!(errors("src/h.ts", &dotted(MAX_NAMESPACE_NESTING)).is_empty());
            let too_deep = transpile("src/h.ts", &dotted(2_000));
            assert_eq!(too_deep.diagnostics.len(), 1, "{:?}", too_deep.diagnostics);
            assert!(too_deep.code.is_none());
            let blocks = |depth: u32| {
                format!(
                    "{}export const x = 1;{}\nexport default () => 1;\n",
                    "namespace N { ".repeat(depth as usize),
                    "}".repeat(depth as usize)
                )
            };
            assert!(errors("src/h.ts", &blocks(MAX_NAMESPACE_NESTING)).is_empty());
            assert_eq!(errors("src/h.ts", &blocks(MAX_NAMESPACE_NESTING + 1)), one(BundleErrorKind::Syntax, "N"));
            // Functions nest as deep as Node parses them, a namespace counting as one.
            let arrows = |depth: u32| {
                let depth = depth as usize;
                format!(
                    "export const f = {}1{};\nexport default () => 1;\n",
                    "() => { return ".repeat(depth),
                    "}".repeat(depth)
                )
            };
            assert!(errors("src/h.ts", &arrows(MAX_FUNCTION_NESTING - 1)).is_empty());
            assert_eq!(errors("src/h.ts", &arrows(MAX_FUNCTION_NESTING + 1)).len(), 1);
            let in_namespaces = |depth: u32| {
                let body = arrows(depth).replace("export default () => 1;\n", "");
                format!("{}{body}{}\nexport default () => 1;\n", "namespace N { ".repeat(50), "}".repeat(50))
            };
            assert!(errors("src/h.ts", &in_namespaces(MAX_FUNCTION_NESTING - 50)).is_empty());
            assert_eq!(
                errors("src/h.ts", &in_namespaces(MAX_FUNCTION_NESTING - 49)).len(),
                1,
                "a namespace is a function"
            );
            let merged: String = (0..100).map(|i| format!("namespace N {{ export const x{i} = {i}; }}\n")).collect();
            assert!(errors("src/h.ts", &format!("{merged}export default () => N.x0;\n")).is_empty());
        });
    }

    /// Expressions nest as deep as Node parses them where it recurses (conditionals,
    /// assignments, prefix operators), and without bound down the left of a chain it reads in
    /// a loop; an `else if` chain is as long as Node parses it.
    #[test]
    fn expressions_nested_past_what_node_parses_are_refused() {
        crate::threads::on_deep_pool(|| {
            let conditional = |depth: u32| {
                format!("export const v = {}0;\nexport default () => 1;\n", "1 ? 1 : ".repeat(depth as usize))
            };
            assert!(errors("src/h.ts", &conditional(MAX_EXPRESSION_NESTING - 10)).is_empty());
            assert_eq!(errors("src/h.ts", &conditional(MAX_EXPRESSION_NESTING + 10)).len(), 1);
            let flat = format!(
                "const a = {{ b: 1 }};\nexport const sum = {}1;\nexport const deep = a{};\nexport default () => 1;\n",
                "1 + ".repeat(20_000),
                ".b".repeat(5_000)
            );
            assert!(errors("src/h.ts", &flat).is_empty(), "a chain read in a loop is no nesting");
            let chain = |length: u32| {
                let branches: String = (0..length).map(|i| format!("if (n === {i}) return {i}; else ")).collect();
                format!("export function f(n: number) {{ {branches}return -1; }}\nexport default () => 1;\n")
            };
            assert!(errors("src/h.ts", &chain(MAX_ELSE_IF_CHAIN)).is_empty());
            assert_eq!(errors("src/h.ts", &chain(MAX_ELSE_IF_CHAIN + 2)).len(), 1);
        });
    }
}
