//! What a result written out as an object asks of its host, read from a route's
//! `<Agent.Result value={{ … }}>` and from what a handler's default-exported function
//! returns: the build checks both against the event's rules and each host's table
//! ([`super::Rendering`]), as warnings, before any run fails on them.

use oxc_ast::ast::{
    ArrowFunctionExpression, BindingPattern, Class, Declaration, ExportDefaultDeclarationKind, Expression, Function,
    IdentifierReference, ModuleDeclaration, ModuleExportName, ObjectExpression, Program, ReturnStatement, Statement,
};
use oxc_ast_visit::Visit;
use oxc_semantic::Scoping;
use oxc_syntax::operator::LogicalOperator;
use oxc_syntax::scope::ScopeFlags;
use oxc_syntax::symbol::SymbolId;

use super::renders::{Approved, Renders};

/// Records what the result `object` asks of its host: a decision (`outcome: 'deny'`,
/// `'allow'`, `'ask'`), a new tool input (`updatedInput` written out as an object or array;
/// one passed on, `undefined` perhaps, may ask for nothing), a reason with no decision.
pub(super) fn record_result(renders: &mut Renders, object: &ObjectExpression<'_>) {
    let properties: Vec<_> = object.properties.iter().filter_map(|property| property.as_property()).collect();
    let given = |key: &str| properties.iter().find(|property| property.key.static_name().as_deref() == Some(key));
    let gives = |key: &str| given(key).is_some();
    let outcome = given("outcome").map(|property| property.value.get_inner_expression());
    let decides = match outcome {
        None => false,
        Some(Expression::StringLiteral(outcome)) => outcome.value != "continue",
        // (Computed: it may decide.)
        Some(_) => true,
    };
    if let Some(reason) = given("reason").filter(|_| !decides) {
        renders.stray_reason.get_or_insert(reason.span.into());
    }
    for property in &properties {
        // (`'deny' as const`, `(…)`: the value itself.)
        let value = property.value.get_inner_expression();
        match property.key.static_name().as_deref() {
            Some("outcome") => {
                let Expression::StringLiteral(outcome) = value else { continue };
                let approved =
                    || Approved { at: property.span.into(), reason: gives("reason"), rewrite: gives("updatedInput") };
                match outcome.value.as_str() {
                    "deny" => {
                        renders.deny.get_or_insert(property.span.into());
                        if gives("updatedInput") {
                            renders.deny_rewrite.get_or_insert(property.span.into());
                        }
                    }
                    "allow" => _ = renders.allow.get_or_insert_with(approved),
                    "ask" => _ = renders.ask.get_or_insert_with(approved),
                    _ => {}
                }
            }
            Some("updatedInput")
                if matches!(value, Expression::ObjectExpression(_) | Expression::ArrayExpression(_)) =>
            {
                renders.rewrite.get_or_insert(property.span.into());
            }
            _ => {}
        }
    }
}

/// What the module's default-exported function returns, written out as objects, directly or
/// through `?:`, `&&`, `||` and `??`: a function declared or written in the export, or named
/// by it (`export default handler`, `export { handler as default }`) and declared at the
/// top level. What it returns through calls or variables is not read (it may be anything).
pub(super) fn default_returns(program: &Program<'_>, scoping: &Scoping) -> Renders {
    let mut returns = Returns::default();
    match default_function(program, scoping) {
        Some(DefaultFunction::Function(function)) => {
            if let Some(body) = &function.body {
                returns.visit_function_body(body);
            }
        }
        Some(DefaultFunction::Arrow(arrow)) => returns.arrow_body(arrow),
        None => {}
    }
    returns.0
}

enum DefaultFunction<'b, 'a> {
    Function(&'b Function<'a>),
    Arrow(&'b ArrowFunctionExpression<'a>),
}

fn default_function<'b, 'a>(program: &'b Program<'a>, scoping: &Scoping) -> Option<DefaultFunction<'b, 'a>> {
    let named = |name: &IdentifierReference<'_>| {
        let symbol = scoping.get_reference(name.reference_id()).symbol_id()?;
        top_level_function(program, symbol)
    };
    program.body.iter().filter_map(Statement::as_module_declaration).find_map(|declaration| match declaration {
        ModuleDeclaration::ExportDefaultDeclaration(export) => match &export.declaration {
            ExportDefaultDeclarationKind::FunctionDeclaration(function) => Some(DefaultFunction::Function(function)),
            kind => match kind.as_expression()?.get_inner_expression() {
                Expression::Identifier(name) => named(name),
                expression => function_expression(expression),
            },
        },
        ModuleDeclaration::ExportNamedDeclaration(export) => {
            export.specifiers.iter().find_map(|specifier| match &specifier.local {
                ModuleExportName::IdentifierReference(name) if specifier.exported.name() == "default" => named(name),
                _ => None,
            })
        }
        _ => None,
    })
}

/// The function a top-level declaration of `symbol` gives: `function f() {}`, or
/// `const f = (…) => …` (typed, parenthesized or asserted as it may be).
fn top_level_function<'b, 'a>(program: &'b Program<'a>, symbol: SymbolId) -> Option<DefaultFunction<'b, 'a>> {
    let declared = |declaration: &'b Declaration<'a>| match declaration {
        Declaration::FunctionDeclaration(function) => function
            .id
            .as_ref()
            .filter(|id| id.symbol_id.get() == Some(symbol))
            .map(|_| DefaultFunction::Function(function)),
        Declaration::VariableDeclaration(variables) => variables.declarations.iter().find_map(|declarator| {
            let BindingPattern::BindingIdentifier(id) = &declarator.id else { return None };
            (id.symbol_id.get() == Some(symbol)).then_some(())?;
            function_expression(declarator.init.as_ref()?.get_inner_expression())
        }),
        _ => None,
    };
    program.body.iter().find_map(|statement| match statement {
        Statement::ExportDeclaration(export) => declared(&export.declaration),
        statement => declared(statement.as_declaration()?),
    })
}

fn function_expression<'b, 'a>(expression: &'b Expression<'a>) -> Option<DefaultFunction<'b, 'a>> {
    match expression {
        Expression::FunctionExpression(function) => Some(DefaultFunction::Function(function)),
        Expression::ArrowFunctionExpression(arrow) => Some(DefaultFunction::Arrow(arrow)),
        _ => None,
    }
}

/// The results one function returns (not those of the functions and classes written in it).
#[derive(Default)]
struct Returns(Renders);

impl Returns {
    fn arrow_body(&mut self, arrow: &ArrowFunctionExpression<'_>) {
        match (arrow.get_expression(), arrow.get_function_body()) {
            (Some(expression), _) => self.returned(expression),
            (None, Some(body)) => self.visit_function_body(body),
            (None, None) => {}
        }
    }

    fn returned(&mut self, expression: &Expression<'_>) {
        match expression.get_inner_expression() {
            Expression::ObjectExpression(object) => {
                record_result(&mut self.0, object);
                self.context(object);
            }
            Expression::ConditionalExpression(choice) => {
                self.returned(&choice.consequent);
                self.returned(&choice.alternate);
            }
            Expression::LogicalExpression(logical) => {
                // (`a && b` gives `b` or a falsy `a`, never an object written as `a`.)
                if logical.operator != LogicalOperator::And {
                    self.returned(&logical.left);
                }
                self.returned(&logical.right);
            }
            Expression::AwaitExpression(awaited) => self.returned(&awaited.argument),
            _ => {}
        }
    }

    /// `additionalContext` written as text (a variable or call may hold `undefined`).
    fn context(&mut self, object: &ObjectExpression<'_>) {
        let text = object.properties.iter().filter_map(|property| property.as_property()).find(|property| {
            property.key.static_name().as_deref() == Some("additionalContext")
                && matches!(
                    property.value.get_inner_expression(),
                    Expression::StringLiteral(_) | Expression::TemplateLiteral(_) | Expression::BinaryExpression(_)
                )
        });
        if let Some(property) = text {
            self.0.context.get_or_insert(property.span.into());
        }
    }
}

impl<'a> Visit<'a> for Returns {
    fn visit_return_statement(&mut self, it: &ReturnStatement<'a>) {
        if let Some(argument) = &it.argument {
            self.returned(argument);
        }
    }

    // (What a function written inside returns is its own.)
    fn visit_function(&mut self, _: &Function<'a>, _: ScopeFlags) {}
    fn visit_arrow_function_expression(&mut self, _: &ArrowFunctionExpression<'a>) {}
    fn visit_class(&mut self, _: &Class<'a>) {}
}

#[cfg(test)]
mod tests {
    use crate::bundle::transpile;

    /// What the handler `source` returns, by the text of where each is first written: a deny,
    /// a new tool input, `additionalContext`, a reason with no decision.
    fn returns(source: &str) -> [Option<String>; 4] {
        let returns = transpile("src/hooks/h.ts", source).returns;
        let text = |span: Option<crate::source::Span>| span.map(|span| source[span.range()].to_owned());
        [text(returns.deny), text(returns.rewrite), text(returns.context), text(returns.stray_reason)]
    }

    #[test]
    fn the_default_export_is_read_however_it_is_declared() {
        let deny = || [Some("outcome: 'deny'".to_owned()), None, None, None];
        let declared = [
            "export default () => ({ outcome: 'deny', reason: 'r' });",
            "export default async function (e: unknown) { if (e) return { outcome: 'deny', reason: 'r' }; }",
            "export default function named() { return cond() ? undefined : { outcome: 'deny', reason: 'r' }; }",
            "const h = async () => { return await ({ outcome: 'deny', reason: 'r' }); };\nexport default h;",
            "const h: (e: object) => object = (e) => e && { outcome: 'deny', reason: 'r' } as const;\nexport default h;",
            "function h() { return null ?? { outcome: 'deny', reason: 'r' }; }\nexport { h as default };",
            "export function h() { return { outcome: 'deny', reason: 'r' }; }\nexport { h as default };",
        ];
        for source in declared {
            assert_eq!(returns(&format!("declare const cond: () => boolean;\n{source}\n")), deny(), "{source}");
        }
    }

    #[test]
    fn only_what_the_function_itself_returns_written_out_counts() {
        let none = [None, None, None, None];
        let not_its_own = [
            // A function written inside returns for itself; a variable may hold anything.
            "export default () => { const f = () => ({ outcome: 'deny' }); return f(); };",
            "export default () => { const r = { outcome: 'deny', reason: 'r' }; return r; };",
            "export default () => { class C { m() { return { outcome: 'deny' }; } } return undefined; };",
            // Not the default export; a default that is no function.
            "export const f = () => ({ outcome: 'deny' });\nexport default () => undefined;",
            "export default { outcome: 'deny' };",
            // What may ask for nothing: a computed input, context held in a variable.
            "export default (e: { i: object; c?: string }) => ({ updatedInput: e.i, additionalContext: e.c });",
        ];
        for source in not_its_own {
            assert_eq!(returns(source), none, "{source}");
        }
        let written = "export default () => ({ updatedInput: { a: 1 }, additionalContext: `x`, reason: 'r' });";
        let expected = [
            None,
            Some("updatedInput: { a: 1 }".to_owned()),
            Some("additionalContext: `x`".to_owned()),
            Some("reason: 'r'".to_owned()),
        ];
        assert_eq!(returns(written), expected);
    }

    #[test]
    fn a_route_module_returns_nothing_to_check() {
        let route = "export default () => ({ outcome: 'deny' });\n";
        assert_eq!(transpile("src/events/stop.tsx", route).returns, Default::default());
    }
}
