//! What a route renders, or a handler returns, against what its event and its hosts take:
//! the bundle's reading of a module (`Renders`) checked against the host tables, as warnings
//! (AB4818, AB4841, AB4843) where it is written.

use super::Renders;
use crate::diagnostics::{Code, Diagnostic, and_list, or_list};
use crate::hosts::{self, Approval, EventRow, HostPlan, RouteForm};
use crate::model::{Hook, Target};

/// What the route `hook` in `module` renders, in its own file or `via` a component (said in
/// messages), or what the config hook's handler `module` returns, and the hosts it is
/// `planned` for.
pub struct Rendering<'a> {
    pub hook: &'a Hook,
    pub module: &'a str,
    pub renders: Renders,
    pub via: String,
    pub planned: &'a [&'a HostPlan],
}

/// The words a warning says it in: a route renders `Agent.Result`s and `Agent.Context`s, a
/// handler returns results.
struct Words {
    subject: String,
    verb: &'static str,
    result: &'static str,
    /// Where a run chooses by host, and the targets to leave one out with.
    chooser: &'static str,
    targets: &'static str,
    route: bool,
}

impl Words {
    fn of(hook: &Hook) -> Words {
        let key = hook.trigger.key();
        match hook.route {
            Some(_) => Words {
                subject: format!("route {key}"),
                verb: "renders",
                result: "an `Agent.Result`",
                chooser: "canonical.provenance.host",
                targets: "the route's `config.targets`",
                route: true,
            },
            None => Words {
                subject: format!("the `{key}` hook's handler"),
                verb: "returns",
                result: "a result",
                chooser: "context.host",
                targets: "the hook's `targets`",
                route: false,
            },
        }
    }

    /// What the hook is called.
    fn what(&self) -> &'static str {
        if self.route { "route" } else { "hook" }
    }
}

impl Rendering<'_> {
    /// What it renders that its family or a host it is planned for does not take.
    pub fn not_taken(&self) -> Vec<Diagnostic> {
        let Rendering { hook, module, renders, via, planned } = self;
        let words = Words::of(hook);
        let Words { subject, verb, result, .. } = &words;
        let mut diagnostics = Vec::new();
        let family = hook.trigger.key();
        let rows: Vec<_> = planned
            .iter()
            .filter_map(|plan| {
                let table = hosts::table(plan.target);
                Some((plan.target, table, table.hooks.as_ref()?.row_for(hook.trigger)?))
            })
            .collect();
        let rules = hook.trigger.rules();
        // What the family takes but a host has no channel for: a run that renders it fails there.
        let channels = [(renders.context, Channel::Context), (renders.deny.filter(|_| rules.deny), Channel::Deny)];
        for (at, channel) in channels.into_iter().filter_map(|(at, channel)| Some((at?, channel))) {
            if channel == Channel::Context && !rules.context {
                // (No host takes it: the event's rules refuse it.)
                let beside_deny = if rules.deny { " (one that denies is answered without it)" } else { "" };
                let message = format!(
                    "{subject} {verb} {}{via}, which {family} never takes: such a run fails{beside_deny}",
                    channel.said(&words)
                );
                let help = format!("{family} takes no context on any host: drop it (see `agent-bundle matrix`)");
                diagnostics.push(
                    Diagnostic::warning(channel.code(), message).in_file(module.to_string()).at(at).with_help(help),
                );
                continue;
            }
            let refusing: Vec<_> = rows.iter().filter(|(_, _, row)| !channel.taken_by(row)).collect();
            if !is_warned_of(renders, refusing.len(), rows.len()) {
                continue;
            }
            let act = (refusing.len() < rows.len()).then_some(channel.act(&words));
            for (target, table, row) in refusing {
                // (A context beside a deny is dropped, not failed, where the deny is taken.)
                let beside_deny = if channel == Channel::Context && rules.deny && row.deny.is_some() {
                    " (one that denies is answered without it)"
                } else {
                    ""
                };
                let message = format!(
                    "{subject} {verb} {}{via}, which {} takes no {} for ({}): such a run fails there{beside_deny}",
                    channel.said(&words),
                    table.display_name,
                    channel.name(),
                    row.native
                );
                diagnostics.push(words.host_warning(channel.code(), message, module, at, *target, act));
            }
        }
        let results = [
            (renders.deny, rules.deny, "denies"),
            (renders.rewrite, rules.rewrite, "gives a new tool input"),
            (renders.allow.map(|approved| approved.at), rules.allow, "allows"),
            (renders.ask.map(|approved| approved.at), rules.ask, "asks the user"),
        ];
        // (An allow or ask where the event takes none is no outcome of its at all.)
        let taken = [(true, "`continue`"), (rules.deny, "`deny`"), (rules.allow, "`allow`"), (rules.ask, "`ask`")];
        let taken: Vec<&str> = taken.into_iter().filter_map(|(taken, outcome)| taken.then_some(outcome)).collect();
        let outcomes = match taken.as_slice() {
            [only] => format!("{only} alone"),
            _ => and_list(&taken),
        };
        for (at, what) in results.into_iter().filter_map(|(at, taken, what)| Some((at?, what)).filter(|_| !taken)) {
            let message = format!("{subject} {verb} {result} that {what}{via}, which {family} never takes");
            let help = match what {
                "allows" | "asks the user" => format!("{family}'s outcomes are {outcomes}; a run that {verb} it fails"),
                _ => format!("{}; a run that {verb} it fails", rules.violation),
            };
            diagnostics.push(
                Diagnostic::warning(Code::ResultNotTaken, message).in_file(module.to_owned()).at(at).with_help(help),
            );
        }
        // What no family takes: a field no result has, a deny with a new input or no reason,
        // a reason with no decision, an outcome no event has.
        let decisions = &taken[1..];
        let reason_help = match decisions {
            [] => format!("{family} takes no decision, so no reason: drop it"),
            _ => format!("a reason goes with an outcome of {}: write it, or drop the reason", or_list(decisions)),
        };
        let field_help = if words.route {
            "an `Agent.Result`'s value has `outcome`, `reason` and `updatedInput` alone (context goes in \
             `Agent.Context`): rename the field, or drop it"
        } else {
            "a result has `outcome`, `reason`, `updatedInput` and `additionalContext` alone (a host's own \
             `decision: 'block'` is `outcome: 'deny'` here): rename the field, or drop it"
        };
        let never = [
            (renders.unknown_field, "with a field it never has", field_help.to_owned()),
            (
                // (Where the event takes no deny at all, that says enough.)
                renders.deny_without_reason.filter(|_| rules.deny),
                "that denies with no reason",
                "a deny needs a non-empty reason, which the host shows: give one".to_owned(),
            ),
            (
                renders.unknown_outcome,
                "whose outcome is none of `continue`, `deny`, `allow` and `ask`",
                format!("{family}'s outcomes are {outcomes}"),
            ),
            (
                // (Where the event takes no deny or no new input, that says enough.)
                renders.deny_rewrite.filter(|_| rules.deny && rules.rewrite),
                "that denies and gives a new tool input",
                "a deny keeps the tool's input: drop `updatedInput`, or do not deny".to_owned(),
            ),
            (renders.stray_reason, "with a reason and no decision", reason_help),
            (
                renders.stray_text,
                "holding text outside `Agent.Context`",
                "text reaches the host through `Agent.Context` alone: wrap it in one, or drop it".to_owned(),
            ),
        ];
        for (at, what, help) in never.into_iter().filter_map(|(at, what, help)| Some((at?, what, help))) {
            let message =
                format!("{subject} {verb} {result} {what}{via}, which no host takes: every run that {verb} it fails");
            diagnostics.push(
                Diagnostic::warning(Code::ResultNotTaken, message).in_file(module.to_owned()).at(at).with_help(help),
            );
        }
        diagnostics.extend(self.approvals_not_taken());
        diagnostics.extend(self.unguarded_deny());
        diagnostics
    }

    /// A deny the route renders where it runs in the shared runtime with no fallback: while
    /// the runtime is down the hook fails, and the host goes on as though nothing had denied
    /// (a tool call runs, a prompt goes through) (AB4843).
    fn unguarded_deny(&self) -> Option<Diagnostic> {
        let Rendering { hook, module, renders, via, planned } = self;
        let at = renders.deny.filter(|_| hook.trigger.rules().deny)?;
        let unguarded: Vec<&str> = planned
            .iter()
            .filter(|plan| {
                let planned = plan.hooks.iter().find(|planned| planned.hook_id == hook.id);
                planned.and_then(|planned| planned.route) == Some(RouteForm::Shared { fallback: false })
            })
            .map(|plan| hosts::table(plan.target).display_name)
            .collect();
        if unguarded.is_empty() {
            return None;
        }
        let message = format!(
            "route {} denies{via}, but runs in the shared runtime with no fallback on {}: while the runtime is down, \
             the hook fails and the host goes on as though nothing had denied",
            hook.trigger.key(),
            and_list(&unguarded)
        );
        let help = "give its config `fallback: 'standalone'`, or let it run standalone (leave out `runtime: 'shared'`)";
        Some(
            Diagnostic::warning(Code::SharedGuardWithoutFallback, message)
                .in_file(module.to_owned())
                .at(at)
                .with_help(help),
        )
    }

    /// An `allow` or `ask` a route's family takes, rendered for a host with no channel for it,
    /// or whose answer has no place for the reason given, or that reads it only with a new
    /// input (AB4841, for that host). A route that reads which host it renders for is taken to
    /// decide only where the host takes it, when one of its hosts does.
    fn approvals_not_taken(&self) -> Vec<Diagnostic> {
        let Rendering { hook, module, renders, via, planned } = self;
        let (Some(family), rules) = (hook.trigger.family(), hook.trigger.rules()) else { return Vec::new() };
        let words = Words::of(hook);
        let Words { subject, verb, result, .. } = &words;
        let approvals = [(renders.allow, rules.allow, Approval::Allow), (renders.ask, rules.ask, Approval::Ask)];
        let decided = approvals
            .into_iter()
            .filter_map(|(approved, taken, approval)| Some((approved.filter(|_| taken)?, approval)));
        let mut diagnostics = Vec::new();
        for (approved, approval) in decided {
            let mut hosts = 0;
            let mut refusing = Vec::new();
            for plan in planned.iter() {
                let table = hosts::table(plan.target);
                let Some(hooks) = table.hooks.as_ref() else { continue };
                let Some(row) = hooks.row(family) else { continue };
                hosts += 1;
                let why = match hooks.approval(family, approval) {
                    None => "takes no such outcome",
                    Some(shape) if approved.reason && !shape.takes_reason() => "has no place for its reason",
                    Some(shape)
                        if !approved.rewrite && shape.requirement() == Some(hosts::Requirement::WithRewrite) =>
                    {
                        "reads it only with a new tool input"
                    }
                    Some(_) => continue,
                };
                refusing.push((plan.target, table, row, why));
            }
            if !is_warned_of(renders, refusing.len(), hosts) {
                continue;
            }
            let act = (refusing.len() < hosts).then_some("decide so");
            for (target, table, row, why) in refusing {
                let message = format!(
                    "{subject} {verb} {result} with outcome `{}`{via}: {} {why} ({}), so such a run fails there",
                    approval.as_str(),
                    table.display_name,
                    row.native,
                );
                diagnostics.push(words.host_warning(Code::ResultNotTaken, message, module, approved.at, target, act));
            }
        }
        diagnostics
    }
}

/// An answer a host has a channel for, or not, per family.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Channel {
    Context,
    Deny,
}

impl Channel {
    /// Whether the host's `row` has a way to write it back.
    fn taken_by(self, row: &EventRow) -> bool {
        match self {
            Channel::Context => row.context.is_some(),
            Channel::Deny => row.deny.is_some(),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Channel::Context => "context",
            Channel::Deny => "deny",
        }
    }

    /// It, as a route renders it or a handler returns it.
    fn said(self, words: &Words) -> &'static str {
        match (self, words.route) {
            (Channel::Context, true) => "`Agent.Context`",
            (Channel::Context, false) => "`additionalContext`",
            (Channel::Deny, true) => "an `Agent.Result` that denies",
            (Channel::Deny, false) => "a result that denies",
        }
    }

    fn act(self, words: &Words) -> &'static str {
        match (self, words.route) {
            (Channel::Context, true) => "render the context",
            (Channel::Context, false) => "give the context",
            (Channel::Deny, _) => "deny",
        }
    }

    fn code(self) -> Code {
        match self {
            Channel::Context => Code::ContextNotTaken,
            Channel::Deny => Code::ResultNotTaken,
        }
    }
}

/// Whether what a route renders, which `refusing` of its `hosts` do not take, is to be warned
/// of: a route that reads which host it renders for (`canonical.provenance.host`) is taken to
/// render it only where the host takes it, unless none of them does.
fn is_warned_of(renders: &Renders, refusing: usize, hosts: usize) -> bool {
    !renders.reads_host || refusing == hosts
}

impl Words {
    /// A warning of what a route renders, or a handler returns, at `at` in `module` that
    /// `target` does not take, and what to do: leave the host out, or `act` only where the
    /// host takes it (`None`: none of the hook's hosts takes it).
    fn host_warning(
        &self,
        code: Code,
        message: String,
        module: &str,
        at: crate::source::Span,
        target: Target,
        act: Option<&str>,
    ) -> Diagnostic {
        let Words { verb, chooser, targets, .. } = self;
        let what = self.what();
        let help = match act {
            Some(act) => format!(
                "leave {} out with {targets}, or {act} only where the host takes it (`{chooser}`; see \
                 `agent-bundle matrix`)",
                target.as_str()
            ),
            None => format!(
                "none of the hosts the {what} is built for takes it: {} it nowhere, or build the {what} for a host \
                 that takes it (see `agent-bundle matrix`)",
                verb.trim_end_matches('s')
            ),
        };
        Diagnostic::warning(code, message).in_file(module.to_owned()).at(at).for_host(target).with_help(help)
    }
}
