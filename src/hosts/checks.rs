//! Checks of the model against what the selected hosts make of it (their plans, their
//! tables): hooks a host would run that the artifact cannot hold, and hooks no host runs.

use super::HostPlan;
use crate::diagnostics::{Code, Diagnostic, and_list};
use crate::model::{Hook, Model, Target, TargetSource, Trigger};

/// An error for each prebuilt hook a host registers whose script lies in a payload the
/// artifact leaves out (one limited to hosts the build does not select): the host would run
/// a file that is not there.
pub fn prebuilt_scripts_left_out(model: &Model, plans: &[HostPlan]) -> Vec<Diagnostic> {
    let carried: Vec<&str> = model.emitted_payloads().map(|payload| payload.name.as_str()).collect();
    let mut diagnostics = Vec::new();
    for hook in &model.hooks {
        let Some(payload) = model.payload_of(hook).filter(|payload| !carried.contains(&payload.name.as_str())) else {
            continue;
        };
        let registered = plans.iter().filter(|plan| plan.hooks.iter().any(|planned| planned.hook_id == hook.id));
        let hosts: Vec<Target> = registered.map(|plan| plan.target).collect();
        if hosts.is_empty() {
            continue;
        }
        let names = |name: fn(Target) -> &'static str| and_list(&hosts.iter().copied().map(name).collect::<Vec<_>>());
        let only = and_list(&payload.targets.iter().flatten().map(|target| target.as_str()).collect::<Vec<_>>());
        let message = format!(
            "prebuilt handler `{}` lies in payload `{}`, which this build leaves out (it is for {only} only), yet {} \
             would run it",
            hook.handler.path(),
            payload.name,
            names(|target| super::table(target).display_name)
        );
        diagnostics.push(
            Diagnostic::error(Code::PrebuiltOutsidePayload, message)
                .in_file(hook.source_file.clone())
                .at_path(hook.json_path("handler.prebuilt"))
                .with_help(format!(
                    "add {} to the `targets` of payload `{}`, or limit the hook's `targets` to the payload's",
                    names(Target::as_str),
                    payload.name
                )),
        );
    }
    diagnostics
}

/// Hooks no selected host has an event for: a warning, since the author asked for something
/// that will never run (a hook naming such a host explicitly is already an error); an error
/// where the config names no `targets` at all, whose build would publish hooks running
/// nowhere. A build `--target` narrows leaves hooks out on purpose: it warns of none.
pub fn unreached_hooks(model: &Model) -> Vec<Diagnostic> {
    if model.targets_from == TargetSource::Cli {
        return Vec::new();
    }
    let receives = |target: Target, hook: &Hook| {
        hook.reaches(target) && super::table(target).hooks.as_ref().is_some_and(|h| h.row_for(hook.trigger).is_some())
    };
    model
        .hooks
        .iter()
        // Where a host refuses the hook, its error says so.
        .filter(|hook| {
            !model.targets.iter().any(|&t| {
                receives(t, hook) || (hook.reaches(t) && super::plan::refuses_missing_event(super::table(t), hook))
            })
        })
        .map(|hook| {
            let selected: Vec<_> = model.targets.iter().map(|t| t.as_str()).collect();
            let severity = match model.targets_from {
                TargetSource::Default => Diagnostic::error,
                _ => Diagnostic::warning,
            };
            let warning = severity(
                Code::HookReachesNoHost,
                format!(
                    "hook `{}` ({}) reaches none of the selected targets ({})",
                    hook.name,
                    hook.trigger.key(),
                    selected.join(", ")
                ),
            )
            .in_file(hook.source_file.clone())
            .with_help(if model.targets_from == TargetSource::Default {
                let hook_hosts: Vec<String> = super::HOSTS
                    .iter()
                    .filter(|t| t.hooks.is_some())
                    .map(|t| format!("'{}'", t.target.as_str()))
                    .collect();
                format!(
                    "the config sets no `targets`, so the build is for `portable` alone, which runs no hooks: add \
                     `targets: [{}]` (the hosts you mean)",
                    hook_hosts.join(", ")
                )
            } else if model.targets.iter().any(|&t| hook.reaches(t)) {
                "no selected host has this event; see `agent-bundle matrix`".to_owned()
            } else {
                "its `targets` names none of the hosts this build selects: nothing is emitted for it".to_owned()
            });
            // A route is its file, which the config does not name.
            match hook.trigger {
                Trigger::Config(_) => warning.at_path(&hook.config_path),
                Trigger::Route(_) => warning,
            }
        })
        .collect()
}
