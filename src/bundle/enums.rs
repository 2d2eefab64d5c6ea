//! Enum members whose value is known only at run time: TypeScript maps a member's value back
//! to its name when the value is a number, never a string (`enum Ev { start = PREFIX + ':start' }`
//! has no `Ev['app:start']`); oxc maps back every value it could not compute. The transpiled
//! code is made to test the value as it runs.

use std::collections::HashSet;

use oxc_allocator::{Allocator, CloneIn, GetAllocator};
use oxc_ast::ast::{AssignmentTarget, Expression, ExpressionStatement, Program, Statement, TSEnumDeclaration};
use oxc_ast::builder::AstBuilder;
use oxc_ast_visit::{Visit, VisitMut, walk, walk_mut};
use oxc_semantic::Scoping;
use oxc_span::{GetSpan, SPAN};
use oxc_syntax::operator::{BinaryOperator, UnaryOperator};

/// Where the members of `program`'s enums start whose initializer oxc cannot compute.
pub(super) fn computed_members(program: &Program<'_>, scoping: &Scoping) -> HashSet<u32> {
    struct Members<'s> {
        scoping: &'s Scoping,
        found: HashSet<u32>,
    }
    impl<'a> Visit<'a> for Members<'_> {
        fn visit_ts_enum_declaration(&mut self, it: &TSEnumDeclaration<'a>) {
            let scope = it.body.scope_id();
            let known = |name: &str| {
                let member = self.scoping.get_binding(scope, name.into());
                member.is_some_and(|member| self.scoping.get_enum_member_value(member).is_some())
            };
            let computed = it
                .body
                .members
                .iter()
                .filter(|member| member.initializer.is_some() && !known(&member.id.static_name()));
            self.found.extend(computed.map(|member| member.span.start));
            walk::walk_ts_enum_declaration(self, it);
        }
    }
    let mut members = Members { scoping, found: HashSet::new() };
    members.visit_program(program);
    members.found
}

/// Rewrites what oxc made of each member starting at `members`, `E[E["k"] = value] = "k"`,
/// to map back numbers only: `if (typeof (E["k"] = value) !== "string") E[E["k"]] = "k"`.
pub(super) fn map_back_numbers_only<'a>(program: &mut Program<'a>, members: &HashSet<u32>, allocator: &'a Allocator) {
    struct Rewriting<'s, 'a> {
        members: &'s HashSet<u32>,
        builder: AstBuilder<'a>,
    }
    impl<'a> VisitMut<'a> for Rewriting<'_, 'a> {
        fn visit_statement(&mut self, it: &mut Statement<'a>) {
            if let Statement::ExpressionStatement(member) = it
                && self.members.contains(&member.span.start)
                && let Some(test) = self.value_tested(member)
            {
                let mapping_back = std::mem::replace(it, Statement::new_empty_statement(SPAN, &self.builder));
                *it = Statement::new_if_statement(mapping_back.span(), test, mapping_back, None, &self.builder);
                return;
            }
            walk_mut::walk_statement(self, it);
        }
    }
    impl<'a> Rewriting<'_, 'a> {
        /// Takes the member's assignment out of `E[E["k"] = value] = "k"`, leaving
        /// `E[E["k"]] = "k"`, and gives `typeof (E["k"] = value) !== "string"`.
        fn value_tested(&self, member: &mut ExpressionStatement<'a>) -> Option<Expression<'a>> {
            let Expression::AssignmentExpression(mapping_back) = &mut member.expression else { return None };
            let AssignmentTarget::ComputedMemberExpression(name_at_value) = &mut mapping_back.left else { return None };
            let Expression::AssignmentExpression(assignment) = &name_at_value.expression else { return None };
            let value = assignment.left.as_member_expression()?.clone_in(self.builder.allocator());
            let assignment = std::mem::replace(&mut name_at_value.expression, Expression::from(value));
            let kind = Expression::new_unary_expression(SPAN, UnaryOperator::Typeof, assignment, &self.builder);
            let string = Expression::new_string_literal(SPAN, "string", None, &self.builder);
            Some(Expression::new_binary_expression(SPAN, kind, BinaryOperator::StrictInequality, string, &self.builder))
        }
    }
    if !members.is_empty() {
        Rewriting { members, builder: AstBuilder::new(allocator) }.visit_program(program);
    }
}
