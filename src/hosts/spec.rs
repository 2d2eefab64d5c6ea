//! The runtime spec: what a wrapper needs to know about its host and event, generated from
//! the host tables so the Rust tables stay the one source of truth.
//!
//! The shape is documented in `src/runtime/README.md`; `runHook(spec, load)` consumes it.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use serde_json::{Value, json};

use super::{EventRow, HostTable};
use crate::model::{Target, Trigger};

/// `hook_spec` as the object literal a wrapper embeds (compact JSON). Specs depend only on
/// the static host tables and the hook name, so everything after the name is built once per
/// host and trigger in a process: a build of thousands of wrappers would otherwise spend a
/// tenth of its time writing the same specs.
pub fn hook_spec_literal(table: &HostTable, hook_name: &str, trigger: Trigger) -> Option<String> {
    /// The literal after `{"hook":"<name>",`, per host and trigger (`None`: no such event).
    type AfterName = HashMap<(Target, Trigger), Option<Arc<str>>>;
    static AFTER_NAME: LazyLock<Mutex<AfterName>> = LazyLock::new(Default::default);
    let after_name = AFTER_NAME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .entry((table.target, trigger))
        .or_insert_with(|| {
            let text = hook_spec(table, "", trigger)?.to_string();
            Some(Arc::from(text.strip_prefix(r#"{"hook":"","#).expect("`hook` is the spec's first key")))
        })
        .clone()?;
    Some(format!("{{\"hook\":{},{after_name}", Value::from(hook_name)))
}

/// The spec literal for hook `hook_name` on the host of `table`, or `None` when the host has
/// no such event.
pub fn hook_spec(table: &HostTable, hook_name: &str, trigger: Trigger) -> Option<Value> {
    let hooks = table.hooks.as_ref()?;
    let row = hooks.row_for(trigger)?;
    let rules = trigger.rules();
    let mut spec = json!({
        "hook": hook_name,
        "host": table.target.as_str(),
        "hostName": table.display_name,
        "event": trigger.key(),
        "hostContractRevision": table.contract_revision,
        "nativeEvent": row.native,
        "eventKey": hooks.event_key,
        "fields": fields(row),
        "rules": {
            "deny": rules.deny,
            "rewrite": rules.rewrite,
            "context": rules.context,
            "violation": rules.violation,
        },
        "output": output(row),
    });
    // What a route may answer beyond a deny, and how this host writes it (null: no channel);
    // absent where the event takes neither, as a config hook's does.
    for approval in super::Approval::ALL {
        let taken = match approval {
            super::Approval::Allow => rules.allow,
            super::Approval::Ask => rules.ask,
        };
        if let (true, Some(family)) = (taken, trigger.family()) {
            let shape = hooks.approval(family, approval);
            spec["rules"][approval.as_str()] = true.into();
            spec["output"][approval.as_str()] = shape.map_or(Value::Null, |shape| shape.template(row.native));
            if let Some(requirement) = shape.and_then(super::Shape::requirement) {
                spec["output"]["requires"][approval.as_str()] = requirement.spec();
            }
        }
    }
    // A tool event's tool, named canonically for the handler (`context.tool`): the host's
    // own names for one differ from host to host.
    if row.fields.iter().any(|field| field.canonical == "toolName") {
        let tools =
            hooks.selectors.iter().filter_map(|(tool, pattern)| Some((tool.as_str().to_owned(), json!((*pattern)?))));
        spec["tools"] = Value::Object(tools.collect());
    }
    Some(spec)
}

/// A row's envelope fields as the runtime reads them (and `matrix --json` shows them).
pub(super) fn fields(row: &EventRow) -> Vec<Value> {
    row.fields
        .iter()
        .map(|field| {
            let mut object = json!({
                "native": field.native,
                "canonical": field.canonical,
                "types": field.types.iter().map(|t| t.as_str()).collect::<Vec<_>>(),
                "required": field.required,
            });
            if !field.one_of.is_empty() {
                object["enum"] = json!(field.one_of);
            }
            if let Some(decode) = field.decode {
                object["decode"] = json!(match decode {
                    super::Decode::Json => "json",
                    super::Decode::PositiveCount => "positive-count",
                });
            }
            object
        })
        .collect()
}

fn output(row: &EventRow) -> Value {
    let template = |shape: Option<super::Shape>| shape.map_or(Value::Null, |s| s.template(row.native));
    let mut output = json!({
        "deny": template(row.deny),
        "context": template(row.context),
        "rewrite": template(row.rewrite),
    });
    let requires: serde_json::Map<String, Value> =
        [("deny", row.deny), ("context", row.context), ("rewrite", row.rewrite)]
            .into_iter()
            .filter_map(|(outcome, shape)| Some((outcome.to_owned(), shape?.requirement()?.spec())))
            .collect();
    if !requires.is_empty() {
        output["requires"] = Value::Object(requires);
    }
    output
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Family, HookEvent};

    #[test]
    fn the_literal_is_the_spec_written_compactly_for_every_host_and_trigger() {
        let triggers =
            HookEvent::ALL.iter().map(|e| Trigger::Config(*e)).chain(Family::ALL.iter().map(|f| Trigger::Route(*f)));
        for trigger in triggers {
            for table in super::super::HOSTS {
                for name in ["before-tool-guard-1a2b3c4d", "a \"quoted\" name"] {
                    let expected = hook_spec(table, name, trigger).map(|spec| spec.to_string());
                    assert_eq!(hook_spec_literal(table, name, trigger), expected, "{trigger:?} on {:?}", table.target);
                }
            }
        }
    }
}
