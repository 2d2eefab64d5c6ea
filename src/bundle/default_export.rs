//! A module's default export, read on the original source: what its function returns that
//! asks something of the host (and what a route's `<Agent.Result value={{ … }}>` asks,
//! read alike), which the build checks against the event's rules and each host's table
//! ([`super::Rendering`]) as warnings before any run fails on them; and a default export
//! that can be no function, which no host could call (AB4219).

use oxc_ast::ast::{
    ArrowFunctionExpression, BindingPattern, Class, Declaration, ExportDefaultDeclarationKind, Expression, Function,
    IdentifierReference, ModuleDeclaration, ModuleExportName, ObjectExpression, Program, ReturnStatement, Statement,
    VariableDeclarationKind,
};
use oxc_ast_visit::Visit;
use oxc_semantic::Scoping;
use oxc_syntax::operator::LogicalOperator;
use oxc_syntax::scope::ScopeFlags;
use oxc_syntax::symbol::SymbolId;

use super::renders::{Approved, Renders};
use super::transpile::Span;

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
    match default_export(program, scoping).map(|export| export.value) {
        Some(TopLevel::Function(function)) => {
            if let Some(body) = &function.body {
                returns.visit_function_body(body);
            }
        }
        Some(TopLevel::Arrow(arrow)) => returns.arrow_body(arrow),
        _ => {}
    }
    returns.0
}

/// What a default export is when it can be no function (Node would refuse to call it).
pub(super) fn non_function_default(declaration: &ExportDefaultDeclarationKind<'_>) -> Option<&'static str> {
    match declaration {
        ExportDefaultDeclarationKind::ClassDeclaration(_) => Some(CLASS),
        ExportDefaultDeclarationKind::FunctionDeclaration(function) => function.generator.then_some(GENERATOR),
        declaration => non_function(declaration.as_expression()?),
    }
}

/// What the default export is, where it names a top-level declaration that can be no
/// function (`const rules = { … }; export default rules`, `export { rules as default }`),
/// and where it names it: the transpiled module's linking sees only a name.
pub(super) fn named_default_not_function(program: &Program<'_>, scoping: &Scoping) -> Option<(&'static str, Span)> {
    let DefaultExport { value, named } = default_export(program, scoping)?;
    let what = match value {
        TopLevel::Class => CLASS,
        TopLevel::Function(function) => function.generator.then_some(GENERATOR)?,
        TopLevel::Arrow(_) => return None,
        TopLevel::Value(value) => non_function(value)?,
    };
    Some((what, named?))
}

const CLASS: &str = "a class, not a function";
const GENERATOR: &str = "a generator function, whose call returns an iterator, never a result";

/// What a value is when it can be no function.
fn non_function(expression: &Expression<'_>) -> Option<&'static str> {
    Some(match expression.get_inner_expression() {
        Expression::StringLiteral(_) | Expression::TemplateLiteral(_) => "a string, not a function",
        Expression::NumericLiteral(_) | Expression::BigIntLiteral(_) => "a number, not a function",
        Expression::BooleanLiteral(_) => "a boolean, not a function",
        Expression::NullLiteral(_) => "null, not a function",
        Expression::RegExpLiteral(_) => "a regular expression, not a function",
        Expression::ObjectExpression(_) => "an object, not a function",
        Expression::ArrayExpression(_) => "an array, not a function",
        Expression::ClassExpression(_) => CLASS,
        Expression::FunctionExpression(function) if function.generator => GENERATOR,
        _ => return None,
    })
}

/// A module's default export: what it is, and where it names a top-level declaration.
struct DefaultExport<'b, 'a> {
    value: TopLevel<'b, 'a>,
    named: Option<Span>,
}

/// What a default export or a top-level declaration gives.
enum TopLevel<'b, 'a> {
    Function(&'b Function<'a>),
    Arrow(&'b ArrowFunctionExpression<'a>),
    Class,
    /// Another value: a `const`'s, or one written in the export.
    Value(&'b Expression<'a>),
}

fn default_export<'b, 'a>(program: &'b Program<'a>, scoping: &Scoping) -> Option<DefaultExport<'b, 'a>> {
    let named = |name: &IdentifierReference<'_>| {
        let symbol = scoping.get_reference(name.reference_id()).symbol_id()?;
        Some(DefaultExport { value: top_level(program, symbol)?, named: Some(name.span.into()) })
    };
    program.body.iter().filter_map(Statement::as_module_declaration).find_map(|declaration| match declaration {
        ModuleDeclaration::ExportDefaultDeclaration(export) => match &export.declaration {
            ExportDefaultDeclarationKind::FunctionDeclaration(function) => {
                Some(DefaultExport { value: TopLevel::Function(function), named: None })
            }
            ExportDefaultDeclarationKind::ClassDeclaration(_) => {
                Some(DefaultExport { value: TopLevel::Class, named: None })
            }
            kind => match kind.as_expression()?.get_inner_expression() {
                Expression::Identifier(name) => named(name),
                expression => Some(DefaultExport { value: value_of(expression), named: None }),
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

/// What the top-level declaration of `symbol` gives: `function f() {}`, `class C {}`, or a
/// variable's function (`const f = (…) => …`, typed, parenthesized or asserted as it may
/// be), or a `const`'s other value (a `let` may be given another).
fn top_level<'b, 'a>(program: &'b Program<'a>, symbol: SymbolId) -> Option<TopLevel<'b, 'a>> {
    let declared = |declaration: &'b Declaration<'a>| match declaration {
        Declaration::FunctionDeclaration(function) => {
            function.id.as_ref().filter(|id| id.symbol_id.get() == Some(symbol)).map(|_| TopLevel::Function(function))
        }
        Declaration::ClassDeclaration(class) => {
            class.id.as_ref().filter(|id| id.symbol_id.get() == Some(symbol)).map(|_| TopLevel::Class)
        }
        Declaration::VariableDeclaration(variables) => variables.declarations.iter().find_map(|declarator| {
            let BindingPattern::BindingIdentifier(id) = &declarator.id else { return None };
            (id.symbol_id.get() == Some(symbol)).then_some(())?;
            match value_of(declarator.init.as_ref()?.get_inner_expression()) {
                TopLevel::Value(_) if variables.kind != VariableDeclarationKind::Const => None,
                value => Some(value),
            }
        }),
        _ => None,
    };
    program.body.iter().find_map(|statement| match statement {
        Statement::ExportDeclaration(export) => declared(&export.declaration),
        statement => declared(statement.as_declaration()?),
    })
}

fn value_of<'b, 'a>(expression: &'b Expression<'a>) -> TopLevel<'b, 'a> {
    match expression {
        Expression::FunctionExpression(function) => TopLevel::Function(function),
        Expression::ArrowFunctionExpression(arrow) => TopLevel::Arrow(arrow),
        Expression::ClassExpression(_) => TopLevel::Class,
        value => TopLevel::Value(value),
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
