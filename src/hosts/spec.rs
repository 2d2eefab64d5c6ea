//! The runtime spec: what a wrapper needs to know about its host and event, generated from
//! the host tables so the Rust tables stay the one source of truth.
//!
//! The shape is documented in `src/runtime/README.md`; `runHook(spec, handler)` consumes it.

use serde_json::{Value, json};

use super::{EventRow, HostTable};
use crate::model::Trigger;

/// The spec literal for hook `hook_name` on the host of `table`, or `None` when the host has
/// no such event.
pub fn hook_spec(table: &HostTable, hook_name: &str, trigger: Trigger) -> Option<Value> {
    let hooks = table.hooks.as_ref()?;
    let row = hooks.row_for(trigger)?;
    let rules = trigger.rules();
    Some(json!({
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
    }))
}

fn fields(row: &EventRow) -> Vec<Value> {
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
    json!({
        "deny": template(row.deny),
        "context": template(row.context),
        "rewrite": template(row.rewrite),
    })
}
