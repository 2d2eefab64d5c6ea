//! `agent-bundle inspect [--hooks]`: how every hook lands on every selected host.

use super::{Failure, InspectArgs, report};
use crate::build;
use crate::db::Database;
use crate::hosts::RouteForm;
use crate::loader::LoadedProject;
use crate::model::{Hook, ToolSelector};

pub(super) fn run(args: InspectArgs) -> Result<bool, Failure> {
    let options = args.source.build_options(None, None)?;
    let compiled = match build::without_config(&options) {
        Some(compiled) => compiled,
        None => compile_as_a_build(&options)?,
    };
    let Some(model) = &compiled.model else {
        if args.source.json {
            let diagnostics = report::diagnostics_json(&compiled);
            report::print_json(
                &serde_json::json!({ "ok": false, "plugin": null, "targets": null, "hooks": [], "diagnostics": diagnostics }),
            );
        } else {
            report::print_diagnostics(&compiled, report::shown_root(&options.root).as_deref(), None);
        }
        return Ok(false);
    };
    // Selected hosts that take hooks at all (Agent Plugins does not).
    let hook_hosts = model.targets.iter().filter(|t| crate::hosts::table(**t).hooks.is_some()).count();
    let rows: Vec<HookRow> = model
        .hooks
        .iter()
        .map(|hook| {
            let hosts: Vec<HostRow> = compiled
                .plans
                .iter()
                .filter_map(|plan| {
                    let planned = plan.hooks.iter().find(|h| h.hook_id == hook.id)?;
                    Some(HostRow {
                        host: plan.target.as_str(),
                        native_event: planned.native_event,
                        matcher: planned.matcher.as_deref(),
                        timeout: planned.timeout,
                        command: &planned.command,
                        wrapper: planned.wrapper.as_deref(),
                        runtime: planned.route.map(RouteForm::runtime),
                        fallback: planned.route.and_then(RouteForm::fallback),
                    })
                })
                .collect();
            HookRow {
                id: &hook.id,
                name: &hook.name,
                event: hook.trigger.key(),
                handler: hook.handler.path(),
                prebuilt: hook.handler.is_prebuilt(),
                mapping: mapping(hook, hosts.len(), hook_hosts),
                hosts,
            }
        })
        .collect();
    if args.source.json {
        report::print_json(&serde_json::json!({
            "ok": !compiled.has_errors(),
            "plugin": { "name": model.name, "version": model.version },
            "targets": model.targets.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
            "hooks": rows,
            "diagnostics": report::diagnostics_json(&compiled),
        }));
    } else {
        report::print_diagnostics(&compiled, report::shown_root(&options.root).as_deref(), None);
        for row in &rows {
            outln!("{} ({}, {}) handler {}", row.name, row.event, row.mapping, row.handler);
            for host in &row.hosts {
                let matcher = host.matcher.map(|m| format!(" matcher {m}")).unwrap_or_default();
                outln!(
                    "  {:<8} {}{}  {}{}",
                    host.host,
                    host.native_event,
                    matcher,
                    host.wrapper.unwrap_or("(prebuilt)"),
                    runtime_note(host.runtime, host.fallback)
                );
            }
            if row.hosts.is_empty() {
                outln!("  (no selected host receives this hook)");
            }
        }
        // (A failed inspection ends with its own summary line, on stderr.)
        if !compiled.has_errors() {
            let targets: Vec<_> = model.targets.iter().map(|t| t.as_str()).collect();
            outln!("Inspected {}: {} hook(s) for {}", model.name, rows.len(), targets.join(", "));
        }
    }
    Ok(!compiled.has_errors())
}

/// One hook as `inspect` shows it: how it lands on each host that receives it.
#[derive(serde::Serialize)]
struct HookRow<'a> {
    id: &'a str,
    name: &'a str,
    event: &'static str,
    handler: &'a str,
    prebuilt: bool,
    mapping: &'static str,
    hosts: Vec<HostRow<'a>>,
}

/// A hook on one host: its native event, matcher, timeout, command and wrapper (`null` for
/// what it has none of), and for a route how it runs there.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct HostRow<'a> {
    host: &'static str,
    native_event: &'static str,
    matcher: Option<&'a str>,
    timeout: Option<u32>,
    command: &'a str,
    wrapper: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    runtime: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fallback: Option<bool>,
}

/// How a route runs there, for the human listing: ` (shared runtime, standalone fallback)`.
pub(super) fn runtime_note(runtime: Option<&str>, fallback: Option<bool>) -> &'static str {
    match (runtime, fallback) {
        (Some("shared"), Some(true)) => " (shared runtime, standalone fallback)",
        (Some("shared"), _) => " (shared runtime)",
        (Some(_), _) => " (standalone)",
        (None, _) => "",
    }
}

/// `exact` when the hook lands, with the same meaning, on every selected host that takes
/// hooks; `host-specific` when some of them lack it or it uses native tool names.
fn mapping(hook: &Hook, received_by: usize, hook_hosts: usize) -> &'static str {
    let native = hook.tools.iter().any(|t| matches!(t, ToolSelector::Native { .. }));
    if native || received_by < hook_hosts { "host-specific" } else { "exact" }
}

/// The project compiled as a build would compile it, with what a build would warn of.
fn compile_as_a_build(options: &build::BuildOptions) -> Result<build::Compiled, Failure> {
    let mut loaded = LoadedProject::new(Database::new(), options.root.clone());
    let project = loaded
        .load(options.settings(), std::slice::from_ref(&options.out_dir), &mut |_| {})
        .map_err(|e| Failure::Run(e.to_string()))?;
    let (_, mut compiled, outside) =
        build::compile_reaching_out(&mut loaded, project, &mut |_| {}).map_err(|e| Failure::Run(e.to_string()))?;
    build::note_unlistable(&mut compiled, loaded.unlistable());
    build::note_unlistable_outside(&mut compiled, &outside);
    Ok(compiled)
}
