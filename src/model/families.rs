//! The 22 canonical event families event routes can handle (`src/events/<family>.tsx`),
//! what a route may answer to each, and how the seven config events map onto them.

use super::{EventRules, HookEvent};

macro_rules! families {
    ($($variant:ident = $key:literal;)*) => {
        /// A canonical event family; its key is the route's path under `src/events/`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Family { $($variant,)* }

        impl Family {
            pub const ALL: &'static [Family] = &[$(Family::$variant,)*];

            /// `tool/before`, `stop`, …
            pub fn key(self) -> &'static str {
                match self { $(Family::$variant => $key,)* }
            }
        }
    };
}

families! {
    SessionStart = "session/start";
    SessionEnd = "session/end";
    PromptSubmit = "prompt/submit";
    ToolBefore = "tool/before";
    ToolAfter = "tool/after";
    ToolFailure = "tool/failure";
    Stop = "stop";
    StopFailure = "stop/failure";
    AgentStart = "agent/start";
    AgentStop = "agent/stop";
    AgentIdle = "agent/idle";
    CompactBefore = "compact/before";
    CompactAfter = "compact/after";
    PermissionRequest = "permission/request";
    PermissionDenied = "permission/denied";
    FileChange = "file/change";
    ConfigChange = "config/change";
    TaskCreate = "task/create";
    TaskComplete = "task/complete";
    ModelSwitchBefore = "model-switch/before";
    ModelSwitchAfter = "model-switch/after";
    WorkspaceOpen = "workspace/open";
}

impl Family {
    pub fn from_key(key: &str) -> Option<Family> {
        Family::ALL.iter().copied().find(|f| f.key() == key)
    }

    /// The family a word names however it is cased or joined (`promptSubmit`,
    /// `prompt_submit`, `ModelSwitchBefore`).
    pub fn written_as(word: &str) -> Option<Family> {
        let letters = |text: &str| -> String {
            text.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect()
        };
        let word = letters(word);
        Family::ALL.iter().copied().find(|family| letters(family.key()) == word)
    }

    /// `tool-before`: the route's hook name is `event-route-<kebab>`.
    pub fn kebab(self) -> String {
        self.key().replace('/', "-")
    }

    /// Families whose native event is filtered by tool name (routes may take `tools`).
    pub fn takes_tools(self) -> bool {
        matches!(
            self,
            Family::ToolBefore
                | Family::ToolAfter
                | Family::ToolFailure
                | Family::PermissionRequest
                | Family::PermissionDenied
        )
    }

    /// What a route of this family may answer, whatever the host.
    pub fn rules(self) -> EventRules {
        let (deny, rewrite, context) = match self {
            Family::ToolBefore => (true, true, true),
            Family::PromptSubmit => (true, false, true),
            // (Claude Code's documents give `SubagentStop` context, but it takes it for a prompt
            // that runs the subagent again, as a deny does: no host has a place for it.)
            Family::AgentStop => (true, false, false),
            // (Claude Code reads context after a model switch: host-formats.md §1.7.)
            Family::SessionStart
            | Family::ToolAfter
            | Family::ToolFailure
            | Family::AgentStart
            | Family::ModelSwitchAfter => (false, false, true),
            Family::Stop
            | Family::CompactBefore
            | Family::PermissionRequest
            | Family::ConfigChange
            | Family::TaskCreate
            | Family::AgentIdle
            | Family::ModelSwitchBefore => (true, false, false),
            Family::SessionEnd
            | Family::StopFailure
            | Family::CompactAfter
            | Family::PermissionDenied
            | Family::FileChange
            | Family::TaskComplete
            | Family::WorkspaceOpen => (false, false, false),
        };
        let (allow, ask) = match self {
            Family::ToolBefore | Family::ModelSwitchBefore => (true, true),
            Family::PermissionRequest => (true, false),
            _ => (false, false),
        };
        let cannot = match (deny, rewrite) {
            (true, true) => "replace input while denying",
            (true, false) => "replace input",
            (false, true) => "deny",
            (false, false) => "deny or replace input",
        };
        let violation = match (deny, rewrite, context) {
            (false, false, false) => {
                format!("{} is observation-only: it cannot deny, replace input or add context", self.key())
            }
            _ => format!("{} cannot {cannot}", self.key()),
        };
        EventRules { deny, rewrite, context, allow, ask, violation }
    }
}

impl HookEvent {
    /// The family a config event is registered under (the host tables are keyed by family).
    /// `workspaceOpen` has none: Cursor's `workspaceOpen` is an application lifecycle event
    /// that only the `workspace/open` route receives, so a config hook reaches no host.
    pub fn family(self) -> Option<Family> {
        match self {
            HookEvent::SessionStart => Some(Family::SessionStart),
            HookEvent::BeforeTool => Some(Family::ToolBefore),
            HookEvent::AfterTool => Some(Family::ToolAfter),
            HookEvent::Stop => Some(Family::Stop),
            HookEvent::AgentStart => Some(Family::AgentStart),
            HookEvent::AgentStop => Some(Family::AgentStop),
            HookEvent::WorkspaceOpen => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_are_twenty_two_families_with_unique_keys() {
        assert_eq!(Family::ALL.len(), 22);
        for family in Family::ALL {
            assert_eq!(Family::from_key(family.key()), Some(*family));
        }
        assert_eq!(Family::ModelSwitchBefore.kebab(), "model-switch-before");
    }

    /// The families whose native events a host filters by tool name (host-formats.md §1.3:
    /// PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest, PermissionDenied).
    /// What a result breaking a family's rules is told names what the family cannot do.
    #[test]
    fn a_broken_rule_is_named() {
        let violation = |family: Family| family.rules().violation;
        assert_eq!(violation(Family::ToolBefore), "tool/before cannot replace input while denying");
        assert_eq!(violation(Family::ToolAfter), "tool/after cannot deny or replace input");
        assert_eq!(violation(Family::Stop), "stop cannot replace input");
        assert_eq!(
            violation(Family::SessionEnd),
            "session/end is observation-only: it cannot deny, replace input or add context"
        );
    }

    #[test]
    fn the_families_filtered_by_tool_name_take_tools() {
        let taking: Vec<&str> = Family::ALL.iter().filter(|f| f.takes_tools()).map(|f| f.key()).collect();
        let expected = ["tool/before", "tool/after", "tool/failure", "permission/request", "permission/denied"];
        assert_eq!(taking.len(), expected.len(), "{taking:?}");
        assert!(expected.iter().all(|key| taking.contains(key)), "{taking:?}");
    }
}
