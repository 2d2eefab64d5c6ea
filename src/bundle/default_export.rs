//! A module's default export, read on the original source: what its function returns that
//! asks something of the host (and what a route's `<Agent.Result value={{ … }}>` asks,
//! read alike), which the build checks against the event's rules and each host's table
//! ([`super::Rendering`]) as warnings before any run fails on them, but for a handler that
//! reads which host it runs for ([`HostReads`]); and a default export that can be no
//! function, which no host could call (AB4219).

use std::collections::{HashMap, HashSet};

use oxc_ast::ast::{
    Argument, ArrowFunctionExpression, AssignmentExpression, AssignmentTarget, AssignmentTargetProperty,
    BindingPattern, CallExpression, Class, ComputedMemberExpression, Declaration, ExportDefaultDeclarationKind,
    Expression, FormalParameters, Function, IdentifierReference, ModuleDeclaration, ModuleExportName, NewExpression,
    ObjectExpression, ObjectProperty, ObjectPropertyKind, Program, PropertyKey, PropertyKind, ReturnStatement,
    Statement, StaticMemberExpression, VariableDeclaration, VariableDeclarationKind, VariableDeclarator,
};
use oxc_ast_visit::{Visit, walk};
use oxc_semantic::Scoping;
use oxc_syntax::operator::{BinaryOperator, LogicalOperator, UnaryOperator};
use oxc_syntax::scope::ScopeFlags;
use oxc_syntax::symbol::SymbolId;

use super::renders::{Approved, Renders};
use super::transpile::Span;

/// The fields a config hook's handler may return.
pub(super) const HANDLER_RESULT_FIELDS: &[&str] = &["outcome", "reason", "updatedInput", "additionalContext"];
/// The fields of an `Agent.Result`'s value (a route's context is an `Agent.Context`).
pub(super) const AGENT_RESULT_FIELDS: &[&str] = &["outcome", "reason", "updatedInput"];

/// Records what the result `object` asks of its host: a decision (`outcome: 'deny'`,
/// `'allow'`, `'ask'`, or one no host knows), a deny with no reason, a new tool input
/// (`updatedInput` written out as an object or array; one passed on, `undefined` perhaps, may
/// ask for nothing), a reason with no decision, a field other than its `fields`. What a
/// spread or a computed key may give is not known: only the fields written after the last
/// of them are, and no field is known to be absent.
pub(super) fn record_result(renders: &mut Renders, object: &ObjectExpression<'_>, fields: &[&str]) {
    let written = Written::of(object);
    if let Some(stray) = written.stray_field(fields) {
        // (Most often a host's own shape, `decision: 'block'`, or a misspelt field: what it
        // meant is not known, so nothing else of the result is said.)
        renders.unknown_field.get_or_insert(stray.span.into());
        return;
    }
    let decides = match written.given("outcome").map(|property| property.value.get_inner_expression()) {
        None => !written.whole,
        Some(Expression::StringLiteral(outcome)) => outcome.value != "continue",
        // (Computed: it may decide.)
        Some(_) => true,
    };
    if let Some(reason) = written.given("reason").filter(|_| !decides) {
        renders.stray_reason.get_or_insert(reason.span.into());
    }
    let rewrite = written.given("updatedInput").filter(|property| {
        matches!(
            property.value.get_inner_expression(),
            Expression::ObjectExpression(_) | Expression::ArrayExpression(_)
        )
    });
    if let Some(property) = rewrite {
        renders.rewrite.get_or_insert(property.span.into());
    }
    let Some(property) = written.given("outcome") else { return };
    let Expression::StringLiteral(outcome) = property.value.get_inner_expression() else { return };
    let at = property.span.into();
    let reason = written.given("reason");
    let approved = || Approved { at, reason: reason.is_some(), rewrite: written.given("updatedInput").is_some() };
    match outcome.value.as_str() {
        "deny" => {
            renders.deny.get_or_insert(at);
            if rewrite.is_some() {
                renders.deny_rewrite.get_or_insert(at);
            }
            // (A reason held in a variable may be anything.)
            let empty =
                |reason: &ObjectProperty<'_>| text_of(&reason.value).is_some_and(|text| text.chars().all(is_js_space));
            if reason.map_or(written.whole, empty) {
                renders.deny_without_reason.get_or_insert(at);
            }
        }
        "allow" => _ = renders.allow.get_or_insert_with(approved),
        "ask" => _ = renders.ask.get_or_insert_with(approved),
        "continue" => {}
        _ => _ = renders.unknown_outcome.get_or_insert(at),
    }
}

/// The fields of a result object as written: those after its last spread or computed key
/// (which may give any field, and which a later field overrides), without those holding
/// `undefined` (absent, as in JSON), and whether they are all it has.
struct Written<'b, 'a> {
    fields: Vec<&'b ObjectProperty<'a>>,
    /// Every field written after the last spread or computed key, `undefined` or not.
    named: Vec<&'b ObjectProperty<'a>>,
    whole: bool,
}

impl<'b, 'a> Written<'b, 'a> {
    fn of(object: &'b ObjectExpression<'a>) -> Written<'b, 'a> {
        let mut written = Written { fields: Vec::new(), named: Vec::new(), whole: true };
        for property in &object.properties {
            match property.as_property().filter(|property| property.key.static_name().is_some()) {
                Some(property) => {
                    // (A field written again replaces the earlier one.)
                    written.fields.retain(|field| field.key.static_name() != property.key.static_name());
                    if !is_undefined(&property.value) {
                        written.fields.push(property);
                    }
                    written.named.push(property);
                }
                None => {
                    written.fields.clear();
                    written.named.clear();
                    written.whole = false;
                }
            }
        }
        written
    }

    /// The first field written that is none of `fields` (one holding `undefined` too: the
    /// run refuses its key).
    fn stray_field(&self, fields: &[&str]) -> Option<&'b ObjectProperty<'a>> {
        self.named.iter().copied().find(|property| {
            // (`__proto__: null` makes no field, and leaves the result a plain object; any
            // other prototype makes it no result at all, which is said as a stray field.)
            let name = property.key.static_name();
            let no_prototype = !property.shorthand
                && !property.computed
                && !property.method
                && property.kind == PropertyKind::Init
                && name.as_deref() == Some("__proto__")
                && matches!(property.value.get_inner_expression(), Expression::NullLiteral(_));
            !no_prototype && name.is_some_and(|name| !fields.contains(&name.as_ref()))
        })
    }

    fn given(&self, key: &str) -> Option<&'b ObjectProperty<'a>> {
        self.fields.iter().copied().find(|property| property.key.static_name().as_deref() == Some(key))
    }

    /// Whether it surely does not deny: its outcome is written, and no deny, or it has none.
    fn surely_no_deny(&self) -> bool {
        match self.given("outcome").map(|outcome| outcome.value.get_inner_expression()) {
            Some(Expression::StringLiteral(outcome)) => outcome.value != "deny",
            Some(_) => false,
            None => self.whole,
        }
    }
}

/// The text of a string written out: a string literal, or a template with no substitution.
fn text_of<'b>(value: &'b Expression<'_>) -> Option<&'b str> {
    match value.get_inner_expression() {
        Expression::StringLiteral(text) => Some(text.value.as_str()),
        Expression::TemplateLiteral(text) if text.is_no_substitution_template() => {
            text.quasis.first()?.value.cooked.as_ref().map(|cooked| cooked.as_str())
        }
        _ => None,
    }
}

/// Whether JavaScript's `trim` takes `c` away, as the run does a reason's: Unicode's
/// white space but U+0085, and U+FEFF.
fn is_js_space(c: char) -> bool {
    c == '\u{feff}' || (c.is_whitespace() && c != '\u{85}')
}

/// `undefined`, or `void 0`.
fn is_undefined(value: &Expression<'_>) -> bool {
    match value.get_inner_expression() {
        Expression::Identifier(name) => name.name == "undefined",
        Expression::UnaryExpression(unary) => unary.operator == UnaryOperator::Void,
        _ => false,
    }
}

/// What the module's default export is, found once: where it names a top-level declaration
/// that can be no function ([`named_not_function`]), and what its function returns
/// ([`returns_of`]).
pub(super) fn read(program: &Program<'_>, scoping: &Scoping) -> (Option<(&'static str, Span)>, Renders) {
    let Some(export) = default_export(program, scoping) else { return (None, Renders::default()) };
    let reads_host = match export.value {
        TopLevel::Function(function) => function.body.as_ref().is_some_and(|body| {
            let module = module_names(program, scoping);
            HostReads::of(&function.params, |reads| reads.visit_function_body(body), scoping, module)
        }),
        TopLevel::Arrow(arrow) => HostReads::of(
            &arrow.params,
            |reads| reads.visit_arrow_function_body(&arrow.body),
            scoping,
            module_names(program, scoping),
        ),
        _ => false,
    };
    (named_not_function(&export), Renders { reads_host, ..returns_of(&export.value) })
}

/// Whether a handler reads which host it runs for from its `context` (its second
/// parameter), and so may answer by host: `context.host`, `.nativeEvent` or
/// `.hostContractRevision` (`?.`, `['host']` too), taken apart (`(event, { host })`, `const
/// { host } = context`, `({ host } = context)`), through a name given it (`const c =
/// context`, `ctx ?? {}`, `{ ...ctx }`), read in another parameter's default, or handed whole
/// to another function or class (`pick(ctx)`, `new Chooser(ctx)`, `f({ ctx })`; but to
/// `console`'s, which only show it, with what a global makes of it in their arguments,
/// `String(ctx)`), which may. `JSON.stringify(ctx)` written straight into a log or a write
/// (`appendFileSync(f, JSON.stringify(ctx))`) only shows it; its text kept, looked into or
/// handed to any other function may choose, and a copy through it
/// (`JSON.parse(JSON.stringify(ctx))`) is a name for it. Where the parameters
/// leave it unnamed, it is what holds it at its place (`args[1]` of `...args`, `rest[0]`,
/// `arguments[1]`), or an object it was put in as a field (`const o = { ctx }`: `o.ctx`). A
/// `host` of anything else (`url.host`, a server's), or one only logged (`console.log(c.host)`),
/// says nothing of it.
struct HostReads<'s> {
    scoping: &'s Scoping,
    /// The names the context goes by.
    context: HashSet<SymbolId>,
    /// What holds it and at which index: a rest parameter, or `arguments` (`None`).
    holders: Vec<(Option<SymbolId>, u32)>,
    /// Objects written with it as a field, and the fields' names.
    fields: HashMap<SymbolId, HashSet<String>>,
    /// Names console's methods are kept under (in the module, or in the function).
    loggers: HashSet<SymbolId>,
    /// Names the module imports from Node's own modules (`node:util`'s `inspect`).
    node_imports: HashSet<SymbolId>,
    /// How many names, fields and loggers it has learnt: a pass that learns none is the last.
    learnt: usize,
    /// Whether the declarators being visited are a `const`'s (a logger's name is one).
    declaring_constants: bool,
    /// How deep in `console`'s arguments the visit is: what is read there is only shown.
    logged: u32,
    /// How deep in functions of their own (whose `arguments` is theirs) the visit is.
    inner_functions: u32,
    /// Where `JSON.stringify(…)` is written straight into a log's or a write's arguments:
    /// its text is only shown.
    shown_texts: HashSet<oxc_span::Span>,
    found: bool,
}

const HOST_KEYS: [&str; 3] = ["host", "nativeEvent", "hostContractRevision"];

impl<'s> HostReads<'s> {
    /// Whether the function of `params` reads it, `visit`ing its body again while a visit
    /// learns a name for it (one given it after a closure that reads it is written), a few
    /// times at most.
    fn of(
        params: &FormalParameters<'_>,
        mut visit: impl FnMut(&mut Self),
        scoping: &'s Scoping,
        ModuleNames { loggers, node_imports }: ModuleNames,
    ) -> bool {
        let mut reads = HostReads {
            scoping,
            context: HashSet::new(),
            holders: Vec::new(),
            fields: HashMap::new(),
            loggers,
            node_imports,
            learnt: 0,
            declaring_constants: false,
            logged: 0,
            inner_functions: 0,
            shown_texts: HashSet::new(),
            found: false,
        };
        match (params.items.get(1), &params.rest) {
            (Some(context), _) => reads.bound(&context.pattern),
            (None, Some(rest)) => {
                let at = 1 - params.items.len() as u32;
                match &rest.rest.argument {
                    BindingPattern::BindingIdentifier(name) => {
                        reads.holders.extend(name.symbol_id.get().map(|s| (Some(s), at)))
                    }
                    BindingPattern::ArrayPattern(array) => {
                        if let Some(Some(element)) = array.elements.get(at as usize) {
                            reads.bound(element);
                        }
                    }
                    _ => {}
                }
            }
            (None, None) => reads.holders.push((None, 1)),
        }
        // (Names given in the reverse of the order they are read would take a pass each: a
        // chain of more is not followed, and its reads are warned of.)
        const PASSES: usize = 4;
        for _ in 0..PASSES {
            let learnt = reads.learnt;
            reads.visit_formal_parameters(params);
            visit(&mut reads);
            if reads.found || reads.learnt == learnt {
                break;
            }
        }
        reads.found
    }

    /// Takes `pattern`, which the context is given to: a name it goes by, or the fields it
    /// takes apart.
    fn bound(&mut self, pattern: &BindingPattern<'_>) {
        match pattern {
            BindingPattern::BindingIdentifier(name) => self.names_it(name.symbol_id.get()),
            BindingPattern::ObjectPattern(object) => {
                self.found |= object.properties.iter().any(|property| is_host_key(&property.key));
                if let Some(rest) = &object.rest {
                    self.bound(&rest.argument);
                }
            }
            BindingPattern::AssignmentPattern(assigned) => self.bound(&assigned.left),
            BindingPattern::ArrayPattern(_) => {}
        }
    }

    /// Whether a call to `callee` logs what it is handed: a method of `console`'s (see
    /// [`is_console_method`]), one kept under a name, or one called through `call` or `apply`.
    fn logs(&self, callee: &Expression<'_>) -> bool {
        let named = |name: &IdentifierReference<'_>| self.symbol(name).is_some_and(|s| self.loggers.contains(&s));
        match callee.get_inner_expression() {
            Expression::Identifier(name) => named(name),
            callee => {
                is_console_method(callee, self.scoping)
                    || member_of(callee)
                        .is_some_and(|(method, key)| ["call", "apply"].contains(&key) && self.logs(method))
            }
        }
    }

    /// Whether a call to `callee` in console's arguments only makes something to show of what
    /// it is handed: a global's or Node's (`String(c)`, `JSON.stringify(c)`, `new Set([c])`,
    /// `inspect(c)` of `node:util`), where a function of the module's own (`hostOf(c)`,
    /// `((c) => …)(c)`) runs with it.
    fn only_shown_by(&self, callee: &Expression<'_>) -> bool {
        match callee.get_inner_expression() {
            Expression::Identifier(name) => self.symbol(name).is_none_or(|s| self.node_imports.contains(&s)),
            callee => member_of(callee).is_some_and(|(object, _)| self.only_shown_by(object)),
        }
    }

    /// Takes `symbol` as a name of the context.
    fn names_it(&mut self, symbol: Option<SymbolId>) {
        if let Some(symbol) = symbol {
            self.learnt += usize::from(self.context.insert(symbol));
        }
    }

    /// The symbol `name` refers to (`None` for one it names nothing declared, `arguments`).
    fn symbol(&self, name: &IdentifierReference<'_>) -> Option<SymbolId> {
        self.scoping.get_reference(name.reference_id()).symbol_id()
    }

    /// The index of the context in what `name` names, where it names a holder of it
    /// (`args`, `rest`, the handler's own `arguments`).
    fn held_at(&self, name: &IdentifierReference<'_>) -> Option<u32> {
        let symbol = self.symbol(name);
        let own_arguments = symbol.is_none() && name.name == "arguments" && self.inner_functions == 0;
        self.holders.iter().find_map(|&(holder, at)| {
            (holder.is_some() && holder == symbol || holder.is_none() && own_arguments).then_some(at)
        })
    }

    /// Whether `name` names a holder of the context: at `index`, or whole (`None`).
    fn holds(&self, name: &IdentifierReference<'_>, index: Option<u32>) -> bool {
        self.held_at(name).is_some_and(|at| index.is_none_or(|index| index == at))
    }

    /// Whether `name` names an object holding the context as its field `field`.
    fn holds_field(&self, name: &IdentifierReference<'_>, field: &str) -> bool {
        self.symbol(name).and_then(|symbol| self.fields.get(&symbol)).is_some_and(|fields| fields.contains(field))
    }

    /// Whether `expression` is the context: a name it goes by, its holder at its index, or
    /// the field of an object it was put in.
    fn is_context(&self, expression: &Expression<'_>) -> bool {
        match expression.get_inner_expression() {
            Expression::Identifier(name) => self.symbol(name).is_some_and(|symbol| self.context.contains(&symbol)),
            Expression::ComputedMemberExpression(member) => {
                match (member.object.get_inner_expression(), member.expression.get_inner_expression()) {
                    (Expression::Identifier(holder), Expression::NumericLiteral(at)) => {
                        self.holds(holder, Some(at.value as u32))
                    }
                    (Expression::Identifier(holder), key) => key_text(key).is_some_and(|k| self.holds_field(holder, k)),
                    _ => false,
                }
            }
            Expression::StaticMemberExpression(member) => match member.object.get_inner_expression() {
                Expression::Identifier(holder) => self.holds_field(holder, &member.property.name),
                _ => false,
            },
            _ => false,
        }
    }

    /// Takes the fields of `object`, written to `holder`, that are given the context.
    fn fields_of(&mut self, holder: &BindingPattern<'_>, object: &ObjectExpression<'_>) {
        let BindingPattern::BindingIdentifier(holder) = holder else { return };
        let Some(holder) = holder.symbol_id.get() else { return };
        for property in &object.properties {
            if let ObjectPropertyKind::ObjectProperty(property) = property
                && let Some(key) = property.key.static_name()
                && self.carries(&property.value)
            {
                self.learnt += usize::from(self.fields.entry(holder).or_default().insert(key.into_owned()));
            }
        }
    }

    /// Takes `pattern`'s fields that take the context apart from an object holding it
    /// (`const { ctx } = o`).
    fn fields_taken(&mut self, pattern: &BindingPattern<'_>, holder: &IdentifierReference<'_>) {
        let BindingPattern::ObjectPattern(object) = pattern else { return };
        for property in &object.properties {
            if property.key.static_name().is_some_and(|key| self.holds_field(holder, &key)) {
                self.bound(&property.value);
            }
        }
    }

    /// Whether `expression`, handed to a call, hands it the context: as [`Self::carries`],
    /// or inside an object or array (`f({ ctx })`, `f([ctx])`).
    fn hands(&self, expression: &Expression<'_>) -> bool {
        match expression.get_inner_expression() {
            Expression::ObjectExpression(object) => object.properties.iter().any(|property| match property {
                ObjectPropertyKind::SpreadProperty(spread) => self.hands(&spread.argument),
                ObjectPropertyKind::ObjectProperty(property) => self.hands(&property.value),
            }),
            Expression::ArrayExpression(array) => {
                array.elements.iter().any(|element| element.as_expression().is_some_and(|e| self.hands(e)))
            }
            Expression::Identifier(name) if self.symbol(name).is_some_and(|s| self.fields.contains_key(&s)) => true,
            expression => self.carries(expression),
        }
    }

    /// Whether any of a call's `arguments` hands it the context (`f(ctx)`, `f(...args)`).
    fn handed(&self, arguments: &[Argument<'_>]) -> bool {
        arguments.iter().any(|argument| match argument {
            Argument::SpreadElement(spread) => self.hands(&spread.argument),
            argument => argument.as_expression().is_some_and(|a| self.hands(a)),
        })
    }

    /// The index of the context in what `expression` names, where it names a holder whole.
    fn holder_index(&self, expression: &Expression<'_>) -> Option<u32> {
        let Expression::Identifier(name) = expression.get_inner_expression() else { return None };
        self.held_at(name)
    }

    /// Whether `expression` gives the context whole, or what holds it, to a name: itself, or
    /// an expression whose value may be it (`ctx ?? {}`, `e && ctx`, `{ ...ctx }`, `await
    /// ctx`, `x = ctx`). (An object holding it as a field is no such value: `{ ctx }`.)
    fn carries(&self, expression: &Expression<'_>) -> bool {
        match expression.get_inner_expression() {
            Expression::Identifier(name) if self.holds(name, None) => true,
            Expression::LogicalExpression(logical) => self.carries(&logical.left) || self.carries(&logical.right),
            Expression::ConditionalExpression(choice) => {
                self.carries(&choice.consequent) || self.carries(&choice.alternate)
            }
            Expression::SequenceExpression(sequence) => {
                sequence.expressions.last().is_some_and(|last| self.carries(last))
            }
            Expression::AwaitExpression(awaited) => self.carries(&awaited.argument),
            Expression::AssignmentExpression(assigned) => self.carries(&assigned.right),
            Expression::ObjectExpression(object) => object.properties.iter().any(|property| match property {
                ObjectPropertyKind::SpreadProperty(spread) => self.carries(&spread.argument),
                ObjectPropertyKind::ObjectProperty(_) => false,
            }),
            // A copy through its text: `JSON.parse(JSON.stringify(ctx))`.
            Expression::CallExpression(parse) if self.is_json(&parse.callee, "parse") => {
                parse.arguments.first().and_then(Argument::as_expression).is_some_and(|text| {
                    matches!(text.get_inner_expression(), Expression::CallExpression(stringify)
                        if self.is_json(&stringify.callee, "stringify")
                            && stringify.arguments.first().and_then(Argument::as_expression).is_some_and(|v| self.carries(v)))
                })
            }
            expression => self.is_context(expression),
        }
    }

    /// Takes the `JSON.stringify(…)` calls `argument` writes out: itself, or in text put
    /// together (`JSON.stringify(c) + '\n'`, a template).
    fn texts_in(&mut self, argument: &Expression<'_>) {
        match argument.get_inner_expression() {
            Expression::CallExpression(call) if self.is_json(&call.callee, "stringify") => {
                self.shown_texts.insert(call.span);
            }
            Expression::BinaryExpression(sum) if sum.operator == BinaryOperator::Addition => {
                self.texts_in(&sum.left);
                self.texts_in(&sum.right);
            }
            Expression::TemplateLiteral(template) => template.expressions.iter().for_each(|part| self.texts_in(part)),
            _ => {}
        }
    }

    /// Whether a call to `callee` writes what it is handed out, giving back nothing made of
    /// it: a function of Node's modules (`appendFileSync`, `fs.writeFileSync`), or
    /// `process`'s (`process.stderr.write`).
    fn writes_out(&self, callee: &Expression<'_>) -> bool {
        match callee.get_inner_expression() {
            Expression::Identifier(name) => match self.symbol(name) {
                Some(symbol) => self.node_imports.contains(&symbol),
                None => name.name == "process",
            },
            callee => member_of(callee).is_some_and(|(object, _)| self.writes_out(object)),
        }
    }

    /// Whether `callee` is the global `JSON`'s `method`.
    fn is_json(&self, callee: &Expression<'_>, method: &str) -> bool {
        member_of(callee).is_some_and(|(object, key)| key == method && is_global(object, "JSON", self.scoping))
    }
}

fn is_host_key(key: &PropertyKey<'_>) -> bool {
    key.static_name().is_some_and(|name| HOST_KEYS.contains(&name.as_ref()))
}

/// The text of a key written as a string (`o['ctx']`, ``o[`ctx`]``).
fn key_text<'b>(key: &'b Expression<'_>) -> Option<&'b str> {
    match key {
        Expression::StringLiteral(key) => Some(key.value.as_str()),
        Expression::TemplateLiteral(key) => key.single_quasi().map(|key| key.as_str()),
        _ => None,
    }
}

/// The object and the name of a member read by name (`a.b`, `a['b']`).
fn member_of<'b, 'a>(expression: &'b Expression<'a>) -> Option<(&'b Expression<'a>, &'b str)> {
    match expression.get_inner_expression() {
        Expression::StaticMemberExpression(member) => Some((&member.object, member.property.name.as_str())),
        Expression::ComputedMemberExpression(member) => {
            key_text(member.expression.get_inner_expression()).map(|key| (&member.object, key))
        }
        _ => None,
    }
}

/// Whether `expression` names a global: `name` where the module declares no such name, or
/// `globalThis`'s member of that name.
fn is_global(expression: &Expression<'_>, name: &str, scoping: &Scoping) -> bool {
    match expression.get_inner_expression() {
        Expression::Identifier(global) => {
            global.name == name && scoping.get_reference(global.reference_id()).symbol_id().is_none()
        }
        expression => {
            member_of(expression).is_some_and(|(object, key)| key == name && is_global(object, "globalThis", scoping))
        }
    }
}

/// The names `pattern` gives console's methods (`const log = console.log`, `const { error }
/// = console`), given `init`. (Only a `const`'s: a `let` may be given another function.)
fn console_names(pattern: &BindingPattern<'_>, init: &Expression<'_>, scoping: &Scoping) -> Vec<SymbolId> {
    let names: Vec<&BindingPattern<'_>> = match pattern {
        BindingPattern::BindingIdentifier(_) if is_console_method(init, scoping) => vec![pattern],
        BindingPattern::ObjectPattern(object) if is_global(init, "console", scoping) => {
            object.properties.iter().map(|property| &property.value).collect()
        }
        _ => Vec::new(),
    };
    let name = |pattern: &BindingPattern<'_>| match pattern {
        BindingPattern::BindingIdentifier(name) => name.symbol_id.get(),
        _ => None,
    };
    names.into_iter().filter_map(name).collect()
}

/// Names the module's top level gives, that a handler's calls may use.
struct ModuleNames {
    /// Names of console's methods (a logger made once for all).
    loggers: HashSet<SymbolId>,
    /// Names imported from Node's own modules.
    node_imports: HashSet<SymbolId>,
}

fn module_names(program: &Program<'_>, scoping: &Scoping) -> ModuleNames {
    let imports = program.body.iter().filter_map(|statement| match statement {
        Statement::ImportDeclaration(import) if super::builtins::builtin(&import.source.value).is_some() => {
            import.specifiers.as_ref()
        }
        _ => None,
    });
    let node_imports = imports.flatten().filter_map(|specifier| specifier.local().symbol_id.get()).collect();
    ModuleNames { loggers: module_loggers(program, scoping), node_imports }
}

/// The names the module's top level gives console's methods.
fn module_loggers(program: &Program<'_>, scoping: &Scoping) -> HashSet<SymbolId> {
    let declarations = program.body.iter().filter_map(|statement| match statement {
        Statement::VariableDeclaration(declaration) => Some(&**declaration),
        Statement::ExportDeclaration(export) => match &export.declaration {
            Declaration::VariableDeclaration(declaration) => Some(&**declaration),
            _ => None,
        },
        _ => None,
    });
    let constants = declarations.filter(|declaration| declaration.kind == VariableDeclarationKind::Const);
    let declarators = constants.flat_map(|declaration| &declaration.declarations);
    declarators.filter_map(|it| Some(console_names(&it.id, it.init.as_ref()?, scoping))).flatten().collect()
}

/// Whether `expression` is a method of the global `console`'s, however named
/// (`console.log`, `console[level]`), or one bound to it (`console.log.bind(console)`). (A
/// function put on console by someone, `console.decide`, is none of its methods.)
fn is_console_method(expression: &Expression<'_>, scoping: &Scoping) -> bool {
    match expression.get_inner_expression() {
        Expression::StaticMemberExpression(member) => {
            CONSOLE_METHODS.contains(&member.property.name.as_str()) && is_global(&member.object, "console", scoping)
        }
        Expression::ComputedMemberExpression(member) => {
            key_text(member.expression.get_inner_expression()).is_none_or(|key| CONSOLE_METHODS.contains(&key))
                && is_global(&member.object, "console", scoping)
        }
        Expression::CallExpression(call) => {
            member_of(&call.callee).is_some_and(|(method, key)| key == "bind" && is_console_method(method, scoping))
        }
        _ => false,
    }
}

/// Node's `console` methods that write what they are handed, and nothing else.
const CONSOLE_METHODS: [&str; 14] = [
    "log",
    "info",
    "debug",
    "warn",
    "error",
    "trace",
    "dir",
    "dirxml",
    "table",
    "group",
    "groupCollapsed",
    "assert",
    "count",
    "timeLog",
];

impl<'a> Visit<'a> for HostReads<'_> {
    fn visit_static_member_expression(&mut self, it: &StaticMemberExpression<'a>) {
        self.found |= self.logged == 0 && HOST_KEYS.contains(&it.property.name.as_str()) && self.carries(&it.object);
        walk::walk_static_member_expression(self, it);
    }

    fn visit_computed_member_expression(&mut self, it: &ComputedMemberExpression<'a>) {
        let key = key_text(it.expression.get_inner_expression());
        self.found |= self.logged == 0 && key.is_some_and(|key| HOST_KEYS.contains(&key)) && self.carries(&it.object);
        walk::walk_computed_member_expression(self, it);
    }

    fn visit_variable_declaration(&mut self, it: &VariableDeclaration<'a>) {
        let outer = std::mem::replace(&mut self.declaring_constants, it.kind == VariableDeclarationKind::Const);
        walk::walk_variable_declaration(self, it);
        self.declaring_constants = outer;
    }

    fn visit_variable_declarator(&mut self, it: &VariableDeclarator<'a>) {
        // (`const [, c] = args`: the holder taken apart at the context's place.)
        let at = it.init.as_ref().and_then(|init| self.holder_index(init));
        match (&it.id, at) {
            (BindingPattern::ArrayPattern(array), Some(at)) => {
                if let Some(Some(element)) = array.elements.get(at as usize) {
                    self.bound(element);
                }
            }
            _ if it.init.as_ref().is_some_and(|init| self.carries(init)) => self.bound(&it.id),
            _ => match it.init.as_ref().map(Expression::get_inner_expression) {
                Some(Expression::ObjectExpression(object)) => self.fields_of(&it.id, object),
                Some(Expression::Identifier(holder)) => self.fields_taken(&it.id, holder),
                _ => {}
            },
        }
        if let Some(init) = it.init.as_ref().filter(|_| self.declaring_constants) {
            for logger in console_names(&it.id, init, self.scoping) {
                self.learnt += usize::from(self.loggers.insert(logger));
            }
        }
        walk::walk_variable_declarator(self, it);
    }

    fn visit_assignment_expression(&mut self, it: &AssignmentExpression<'a>) {
        if self.carries(&it.right) {
            match &it.left {
                AssignmentTarget::ObjectAssignmentTarget(object) => {
                    self.found |= object.properties.iter().any(|property| match property {
                        AssignmentTargetProperty::AssignmentTargetPropertyIdentifier(name) => {
                            HOST_KEYS.contains(&name.binding.name.as_str())
                        }
                        AssignmentTargetProperty::AssignmentTargetPropertyProperty(property) => {
                            is_host_key(&property.name)
                        }
                    });
                }
                AssignmentTarget::AssignmentTargetIdentifier(name) => self.names_it(self.symbol(name)),
                _ => {}
            }
        }
        // (What is kept, in console's arguments too, may choose: `console.log(h = c.host)`.)
        let logged = std::mem::replace(&mut self.logged, 0);
        walk::walk_assignment_expression(self, it);
        self.logged = logged;
    }

    fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
        let shown_text =
            self.shown_texts.contains(&it.span) && self.is_json(&it.callee, "stringify") && !has_replacer(it);
        let logs = self.logs(&it.callee);
        // (Only a log or a write is taken to only show a text: a global's function that gives
        // back something made of it, `encodeURIComponent(…)`, may be looked into.)
        if logs || self.writes_out(&it.callee) {
            for argument in it.arguments.iter().filter_map(Argument::as_expression) {
                self.texts_in(argument);
            }
        }
        if !logs && !shown_text && (self.logged == 0 || !self.only_shown_by(&it.callee)) {
            self.found |= self.handed(&it.arguments);
        }
        let logged = u32::from(logs);
        self.logged += logged;
        walk::walk_call_expression(self, it);
        self.logged -= logged;
    }

    fn visit_new_expression(&mut self, it: &NewExpression<'a>) {
        self.found |= (self.logged == 0 || !self.only_shown_by(&it.callee)) && self.handed(&it.arguments);
        walk::walk_new_expression(self, it);
    }

    // (A function of its own has its own `arguments`; an arrow shares the handler's.)
    fn visit_function(&mut self, it: &Function<'a>, flags: ScopeFlags) {
        self.inner_functions += 1;
        walk::walk_function(self, it, flags);
        self.inner_functions -= 1;
    }
}

/// Whether a `JSON.stringify(…)` call has a replacer, a function handed every field (a list
/// of keys, `null` or `undefined` is none).
fn has_replacer(stringify: &CallExpression<'_>) -> bool {
    let replacer = stringify.arguments.get(1).and_then(Argument::as_expression).map(Expression::get_inner_expression);
    replacer.is_some_and(|replacer| {
        !matches!(replacer, Expression::NullLiteral(_) | Expression::ArrayExpression(_)) && !is_undefined(replacer)
    })
}

/// Each object `value` may be, written out: itself, or through `?:`, `||`, `??`, `&&`'s right,
/// `await`, brackets and TypeScript's `as`, `satisfies` and `!`.
pub(super) fn written_objects<'b, 'a>(value: &'b Expression<'a>, found: &mut impl FnMut(&'b ObjectExpression<'a>)) {
    match value.get_inner_expression() {
        Expression::ObjectExpression(object) => found(object),
        Expression::ConditionalExpression(choice) => {
            written_objects(&choice.consequent, found);
            written_objects(&choice.alternate, found);
        }
        Expression::LogicalExpression(logical) => {
            // (`a && b` gives `b` or a falsy `a`, never an object written as `a`.)
            if logical.operator != LogicalOperator::And {
                written_objects(&logical.left, found);
            }
            written_objects(&logical.right, found);
        }
        Expression::AwaitExpression(awaited) => written_objects(&awaited.argument, found),
        _ => {}
    }
}

/// What a default-exported function returns, written out as objects, directly or through
/// `?:`, `&&`, `||` and `??`: a function declared or written in the export, or named by it
/// (`export default handler`, `export { handler as default }`) and declared at the top
/// level. What it returns through calls or variables is not read (it may be anything).
fn returns_of(value: &TopLevel<'_, '_>) -> Renders {
    let mut returns = Returns::default();
    match value {
        TopLevel::Function(function) => {
            if let Some(body) = &function.body {
                returns.visit_function_body(body);
            }
        }
        TopLevel::Arrow(arrow) => returns.arrow_body(arrow),
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
fn named_not_function(export: &DefaultExport<'_, '_>) -> Option<(&'static str, Span)> {
    let DefaultExport { value, named } = export;
    let what = match value {
        TopLevel::Class => CLASS,
        TopLevel::Function(function) => function.generator.then_some(GENERATOR)?,
        TopLevel::Arrow(_) => return None,
        TopLevel::Value(value) => non_function(value)?,
    };
    Some((what, (*named)?))
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
        Some(DefaultExport { value: top_level(program, scoping, symbol)?, named: Some(name.span.into()) })
    };
    program.body.iter().filter_map(Statement::as_module_declaration).find_map(|declaration| match declaration {
        ModuleDeclaration::ExportDefaultDeclaration(export) => match &export.declaration {
            // (An overload's signature has no body: the implementation follows.)
            ExportDefaultDeclarationKind::FunctionDeclaration(function) if function.body.is_none() => None,
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

/// What the top-level declaration of `symbol` gives: `function f() {}` (its implementation,
/// not an overload's signature), `class C {}`, or a variable's value (`const f = (…) => …`,
/// typed, parenthesized or asserted as it may be), a `let` or `var` only where nothing
/// assigns it another.
fn top_level<'b, 'a>(program: &'b Program<'a>, scoping: &Scoping, symbol: SymbolId) -> Option<TopLevel<'b, 'a>> {
    // (`var x = …; var x = …` gives another too.)
    let assigned_again = || {
        scoping.get_resolved_references(symbol).any(|reference| reference.is_write())
            || !scoping.symbol_redeclarations(symbol).is_empty()
    };
    let declared = |declaration: &'b Declaration<'a>| match declaration {
        Declaration::FunctionDeclaration(function) if function.body.is_some() => {
            function.id.as_ref().filter(|id| id.symbol_id.get() == Some(symbol)).map(|_| TopLevel::Function(function))
        }
        Declaration::ClassDeclaration(class) => {
            class.id.as_ref().filter(|id| id.symbol_id.get() == Some(symbol)).map(|_| TopLevel::Class)
        }
        Declaration::VariableDeclaration(variables)
            if variables.kind == VariableDeclarationKind::Const || !assigned_again() =>
        {
            variables.declarations.iter().find_map(|declarator| {
                let BindingPattern::BindingIdentifier(id) = &declarator.id else { return None };
                (id.symbol_id.get() == Some(symbol)).then_some(())?;
                Some(value_of(declarator.init.as_ref()?.get_inner_expression()))
            })
        }
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
        written_objects(expression, &mut |object| {
            record_result(&mut self.0, object, HANDLER_RESULT_FIELDS);
            self.context(object);
        });
    }

    /// `additionalContext` written as text (a variable or call may hold `undefined`, and empty
    /// text is none), but beside a deny, which is answered without it where it has no place.
    fn context(&mut self, object: &ObjectExpression<'_>) {
        let written = Written::of(object);
        // (A result with a field it never has is said alone.)
        if written.stray_field(HANDLER_RESULT_FIELDS).is_some() {
            return;
        }
        let text = written.given("additionalContext").filter(|property| match text_of(&property.value) {
            Some(text) => !text.is_empty(),
            // (Text put together is taken to be some.)
            None => matches!(
                property.value.get_inner_expression(),
                Expression::TemplateLiteral(_) | Expression::BinaryExpression(_)
            ),
        });
        if let Some(property) = text.filter(|_| written.surely_no_deny()) {
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
    use crate::bundle::{Renders, transpile};

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
    fn what_may_hold_anything_or_is_absent_is_not_read_and_a_deny_needs_its_reason() {
        let none = [None, None, None, None];
        for source in [
            // A spread or a computed key may give any field.
            "const block = { outcome: 'deny' } as const;\nexport default () => ({ ...block, reason: 'r' });",
            "const key = 'outcome';\nexport default () => ({ [key]: 'deny', reason: 'r' });",
            // `undefined` is absent; empty context fails no run.
            "export default () => ({ reason: undefined, outcome: void 0 });",
            // What a spread after it may replace is not known.
            "const more = {};\nexport default () => ({ outcome: 'deny', reason: 'r', ...more });",
            "export default () => ({ additionalContext: '', reason: undefined });",
            // A `let` may be given another function; an overload's signature has no body.
            "let h = () => ({ outcome: 'deny', reason: 'r' });\nh = () => undefined;\nexport default h;",
        ] {
            assert_eq!(returns(source), none, "{source}");
        }
        // What is written after a spread is known, though what is absent is not.
        let after = "const base = {};\nexport default () => ({ ...base, outcome: 'deny' });";
        assert_eq!(returns(after), [Some("outcome: 'deny'".to_owned()), None, None, None]);
        assert_eq!(
            transpile("src/hooks/h.ts", after).returns.deny_without_reason,
            None,
            "the spread may give the reason"
        );
        let beside = transpile(
            "src/hooks/h.ts",
            "export default () => ({ outcome: 'deny', reason: 'r', additionalContext: 'x' });",
        );
        assert_eq!(beside.returns.context, None, "context beside a deny is answered without it");
        let declared_twice =
            "var h: any = class {};\nvar h: any = () => ({ outcome: 'deny', reason: 'r' });\nexport default h;";
        assert_eq!(transpile("src/hooks/h.ts", declared_twice).named_default_not_function, None);
        assert_eq!(returns(declared_twice), none, "a var declared again may be either");
        let overloaded = "function h(e: string): void;\nfunction h(e: unknown) { return { outcome: 'deny', reason: 'r' }; }\nexport default h;";
        assert_eq!(returns(overloaded)[0].as_deref(), Some("outcome: 'deny'"));
        let text = |source: &str, span: Option<crate::source::Span>| span.map(|span| source[span.range()].to_owned());
        for source in
            ["export default () => ({ outcome: 'deny' });", "export default () => ({ outcome: 'deny', reason: ' ' });"]
        {
            let returned = transpile("src/hooks/h.ts", source).returns;
            assert_eq!(text(source, returned.deny_without_reason).as_deref(), Some("outcome: 'deny'"), "{source}");
        }
        let held =
            transpile("src/hooks/h.ts", "export default (r: string) => ({ outcome: 'deny', reason: r });").returns;
        assert_eq!(held.deny_without_reason, None, "a reason held in a variable may be any");
        let block = "export default () => ({ outcome: 'block' });";
        assert_eq!(
            text(block, transpile("src/hooks/h.ts", block).returns.unknown_outcome).as_deref(),
            Some("outcome: 'block'")
        );
    }

    #[test]
    fn a_field_no_result_has_is_said_alone() {
        for source in [
            "export default () => ({ decision: 'block', reason: 'tests' });",
            "export default () => ({ outcome: 'deny', reasn: 'x' });",
            "export default () => ({ outcome: 'deny', reason: 'x', extra: undefined });",
            "export default () => ({ additionalContext: 'c', addtionalContext: 'd' });",
        ] {
            let returns = transpile("src/hooks/h.ts", source).returns;
            let stray = returns.unknown_field.map(|span| &source[span.range()]);
            assert!(stray.is_some_and(|field| !field.starts_with("outcome")), "{source}");
            let rest = Renders { unknown_field: None, ..returns };
            assert_eq!(rest, Renders::default(), "what else it says is not known: {source}");
        }
        let prototype = "export default () => ({ __proto__: null, additionalContext: 'hi' });";
        assert_eq!(transpile("src/hooks/h.ts", prototype).returns.unknown_field, None, "it sets the prototype");
        let route = "<Agent.Result value={{ additionalContext: 'x' }} />";
        let route = format!("import {{ Agent }} from '@agent-bundle/runtime';\nexport default () => {route};\n");
        let renders = transpile("src/events/stop.tsx", &route).renders;
        assert!(renders.unknown_field.is_some(), "an Agent.Result's context is an Agent.Context");
    }

    #[test]
    fn a_deny_with_an_input_held_in_a_variable_or_an_empty_template_reason() {
        let held = "export default (i?: object) => ({ outcome: 'deny', reason: 'r', updatedInput: i });";
        assert_eq!(transpile("src/hooks/h.ts", held).returns.deny_rewrite, None, "the input may be undefined");
        let written = "export default () => ({ outcome: 'deny', reason: 'r', updatedInput: {} });";
        assert!(transpile("src/hooks/h.ts", written).returns.deny_rewrite.is_some());
        // (Empty as JavaScript's `trim` makes it: U+FEFF is space there, U+0085 is not.)
        let says = |reason: &str| format!("export default () => ({{ outcome: 'deny', reason: '{reason}' }});");
        assert!(transpile("src/hooks/h.ts", &says("\u{feff}")).returns.deny_without_reason.is_some());
        assert_eq!(transpile("src/hooks/h.ts", &says("\u{85}")).returns.deny_without_reason, None);
        for reason in ["``", "` `"] {
            let source = format!("export default () => ({{ outcome: 'deny', reason: {reason} }});");
            assert!(transpile("src/hooks/h.ts", &source).returns.deny_without_reason.is_some(), "{source}");
        }
        let built = "export default (n: string) => ({ outcome: 'deny', reason: `${n}` });";
        assert_eq!(transpile("src/hooks/h.ts", built).returns.deny_without_reason, None);
    }

    #[test]
    fn a_handler_reads_its_host_from_its_context_alone() {
        let reads = |source: &str| transpile("src/hooks/h.ts", source).returns.reads_host;
        for body in [
            "(e: object, context: { host: string }) => context.host === 'claude' ? {} : undefined",
            "(e: object, { host }: { host: string }) => host ? {} : undefined",
            "(e: object, c: { host: string }) => { const { host } = c; return host ? {} : undefined; }",
            "(e: object, c: { nativeEvent: object }) => c['nativeEvent'] ? {} : undefined",
            "(e: object, c?: { host: string }) => c?.host ? {} : undefined",
            "(e: object, c: { host: string }) => { let host; ({ host } = c); return host ? {} : undefined; }",
            "(e: object, c: { host: string }) => { const d = c; return d.host ? {} : undefined; }",
            "function (e: object, c: object) { return pick(c); }",
            "(...args: any[]) => args[1].host === 'claude' ? {} : undefined",
            "function (e: object) { return arguments[1].host === 'claude' ? {} : undefined; }",
            "(e: object, c: object) => new Chooser(c).ok() ? {} : undefined",
            "(e: object, c: object) => pick({ c }) ? {} : undefined",
            "(e: object, { ...c }: any) => c.host ? {} : undefined",
            "(e: object, c?: any) => { const d = c ?? {}; return d.host ? {} : undefined; }",
            "(e: object, c: any) => { const claude = () => d.host === 'claude'; const d = c; return claude() ? {} : undefined; }",
            "(e: object, c: any, claude = c.host === 'claude') => claude ? {} : undefined",
            "(e: object, c: any) => c.hostContractRevision.startsWith('claude') ? {} : undefined",
            "(e: object, c: any) => c[`host`] === 'claude' ? {} : undefined",
            "(e: object, ...[c]: any[]) => c.host === 'claude' ? {} : undefined",
            "(e: object, c: any) => { let x: any; const y = (x = c); return y.host ? {} : undefined; }",
            "(...args: any[]) => pick(...args) ? {} : undefined",
            "(...args: any[]) => { const [, c] = args; return c.host === 'claude' ? {} : undefined; }",
            "(e: object, c: any) => { const o = { ctx: c }; return o.ctx.host ? {} : undefined; }",
            "(e: object, c: any) => { const o = { c }; return o['c'].host ? {} : undefined; }",
            "(e: object, c: any) => { const o = { c }; const { c: d } = o; return d.host ? {} : undefined; }",
            "(e: object, c: any) => { const o = { c }; return pick(o) ? {} : undefined; }",
            "(e: object, c: any) => { let h; console.log(h = c.host); return h === 'claude' ? {} : undefined; }",
            "(e: object, c: any) => { let r; console.log(r = pick(c)); return r ? {} : undefined; }",
            "(e: object, c: any) => { const ok = () => o.ctx.host === 'claude'; const o = { ctx: c }; return ok() ? {} : undefined; }",
            "(e: object, c: any) => { let d: any; const run = () => { const ok = () => o.ctx.host === 'claude'; const o = { ctx: d }; return ok(); }; d = c; return run() ? {} : undefined; }",
            "(e: object, c: any) => { let send: any = console.log; send = pick; return send(c) ? {} : undefined; }",
            // (A copy of it, by any means, may choose; so may a function of the module's own
            // called in console's arguments, a name of its own called console, and a
            // function someone put on console.)
            "(e: object, c: any) => JSON.parse(JSON.stringify(c)).host === 'claude' ? {} : undefined",
            "(e: object, c: any) => { const copy = JSON.parse(JSON.stringify({ ...c, at: 1 })); return copy.host ? {} : undefined; }",
            "(e: object, c: any) => { let h = ''; JSON.stringify(c, (k, v) => { if (k === 'host') h = v; return v; }); return h ? {} : undefined; }",
            "(e: object, c: any) => { const text = JSON.stringify(c); return JSON.parse(text).host ? {} : undefined; }",
            "(e: object, c: any) => JSON.stringify(c).includes('claude') ? {} : undefined",
            "(e: object, c: any) => /claude/.test(JSON.stringify(c)) ? {} : undefined",
            "(e: object, c: any) => pick(JSON.stringify(c)) ? {} : undefined",
            "(e: object, c: any) => encodeURIComponent(JSON.stringify(c)).includes('claude') ? {} : undefined",
            "(e: object, c: any) => { let h; JSON.parse(JSON.stringify(c), (k, v) => { if (k === 'host') h = v; return v; }); return h ? {} : undefined; }",
            "(e: object, c: any) => { let h; const grab = (k: string, v: any) => { if (k === 'host') h = v; return v; }; process.stderr.write(JSON.stringify(c, grab)); return h ? {} : undefined; }",
            "(e: object, c: any) => { console.error(`on ${pick(c)}`); return {}; }",
            "(e: object, c: any) => { let h = ''; console.log(((d: any) => { h = d.host; return 'seen'; })(c)); return h ? {} : undefined; }",
            "(e: object, c: any) => { const log = console.log.bind(console); log(new Chooser(c)); return {}; }",
            "(e: object, c: any) => { const console = { log: (d: any) => d.host }; return console.log(c) ? {} : undefined; }",
            "(e: object, c: any) => { const globalThis = { console: { log: pick } }; return globalThis.console.log(c) ? {} : undefined; }",
            "(e: object, c: any) => (console as any).decide(c) ? {} : undefined",
        ] {
            let source = format!(
                "declare function pick(c: object): object;\ndeclare class Chooser {{ constructor(c: object); ok(): boolean }}\n\
                 export default {body};"
            );
            assert!(reads(&source), "{body}");
        }
        for source in [
            "const server = { host: 'x' };\nexport default () => ({ additionalContext: server.host });",
            "export default (e: { link: string }) => new URL(e.link).host ? {} : undefined;",
            "const { host } = { host: 'x' };\nexport default () => host ? {} : undefined;",
            "export default (e: { toolInput: { host?: string } }) => { const { toolInput } = e; return toolInput.host ? {} : undefined; };",
            "export default (e: { servers: { host: string }[] }, c: object) => e.servers.map((s) => s.host) ? {} : undefined;",
            // (Logged, the context chooses nothing; nor do its other fields handed on, a
            // function's own `arguments`, or the event at its place.)
            "export default (e: object, c: object) => { console.error(c); return { additionalContext: 'hi' }; };",
            "export default (e: object, c: object) => { console.error(`c: ${JSON.stringify(c)}`); return undefined; };",
            "export default (e: any, c: { tool: string | null }) => ['shell'].includes(c.tool ?? '') ? {} : undefined;",
            "export default (e: any, c: any) => ({ additionalContext: 'raw: ' + JSON.stringify(c.nativeInput) });",
            "export default function (e: any) { const join = function (...xs: any[]) { return Array.from(arguments).join(' '); }; return { additionalContext: join('a') }; }",
            "export default (...args: any[]) => ({ additionalContext: String(args[0]) });",
            "export default (e: any, c: any) => { console['error'](c); globalThis.console.log(c); return undefined; };",
            "export default (e: any, c: any) => { const level = 'warn'; console[level](c); console.log.call(console, c); console.error.apply(console, [c]); return undefined; };",
            "export default (e: any, c: any) => { const log = console.error.bind(console); log('context', c); const { warn: w } = console; w(c); return undefined; };",
            "const log = console.error.bind(console);\nexport const { warn } = console;\nexport default (e: any, c: any) => { log('context', c); warn(c); return undefined; };",
            "export default (e: any, c: any) => { console.log(c.host, `on ${c['host']}`, String(c), new Set([c])); return undefined; };",
            "export default (e: any, c: any) => { console.log(JSON.stringify(c), Object.keys(c)); console.assert(false, c); return undefined; };",
            "import { appendFileSync } from 'node:fs';\nexport default (e: any, c: any) => { appendFileSync('log', JSON.stringify({ e, c }) + '\\n'); process.stderr.write(`${JSON.stringify(c)}\\n`); return undefined; };",
            "import { inspect, format } from 'node:util';\nimport * as util from 'util';\nexport default (e: any, c: any) => { console.error(inspect(c), format('%o', c), util.inspect(c)); return undefined; };",
            "export default (e: any, c: any) => { const o = { c }; return { additionalContext: o.c.tool ?? '' }; };",
            // (An object holding the context as a field is no name for it.)
            "export default (e: any, c: any) => { const audit = { host: 'x', context: c }; return { additionalContext: audit.host }; };",
        ] {
            assert!(!reads(source), "{source}");
        }
        // A route reads its host from `canonical.provenance` alone.
        let route = |read: &str| {
            let source = format!(
                "import {{ Agent }} from '@agent-bundle/runtime';\nfunction hostOf(url: URL) {{ return url.host; }}\n\
                 export default ({{ canonical }}: any) => <Agent.Context>{{{read}}}</Agent.Context>;\n"
            );
            transpile("src/events/prompt/submit.tsx", &source).renders.reads_host
        };
        assert!(!route("hostOf(new URL('https://x'))"));
        assert!(route("canonical.provenance.host"));
        assert!(route("canonical[`provenance`].host"));
        assert!(route("(() => { let p: any; ({ provenance: p } = canonical); return p.host; })()"));
        assert!(route("(() => { let provenance: any; ({ provenance } = canonical); return provenance.host; })()"));
    }

    #[test]
    fn a_handler_is_read_wherever_it_is() {
        let handler = "export default () => ({ outcome: 'deny', reason: 'r' });\n";
        assert!(transpile("src/events/lib/guard.ts", handler).returns.deny.is_some());
    }
}
