//! The seven canonical config-hook events and what a handler may answer to each.

/// A canonical event a config-declared hook is keyed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookEvent {
    SessionStart,
    BeforeTool,
    AfterTool,
    Stop,
    AgentStart,
    AgentStop,
    WorkspaceOpen,
}

/// What a handler's result may contain for an event, whatever the host.
/// Host-specific limits (e.g. Codex SubagentStop has no context channel) live in the host tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRules {
    pub deny: bool,
    pub rewrite: bool,
    pub context: bool,
    /// Whether a route may answer `allow` / `ask` (a config hook answers neither).
    pub allow: bool,
    pub ask: bool,
    /// The message a result that breaks the deny/rewrite/context rules fails with.
    pub violation: String,
}

impl HookEvent {
    /// Planning order; also the order of the event and hook matrix.
    pub const ALL: [HookEvent; 7] = [
        HookEvent::SessionStart,
        HookEvent::BeforeTool,
        HookEvent::AfterTool,
        HookEvent::Stop,
        HookEvent::AgentStart,
        HookEvent::AgentStop,
        HookEvent::WorkspaceOpen,
    ];

    /// The config key, e.g. `beforeTool`.
    pub fn key(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "sessionStart",
            HookEvent::BeforeTool => "beforeTool",
            HookEvent::AfterTool => "afterTool",
            HookEvent::Stop => "stop",
            HookEvent::AgentStart => "agentStart",
            HookEvent::AgentStop => "agentStop",
            HookEvent::WorkspaceOpen => "workspaceOpen",
        }
    }

    /// The first segment of hook names, e.g. `before-tool`.
    pub fn kebab(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "session-start",
            HookEvent::BeforeTool => "before-tool",
            HookEvent::AfterTool => "after-tool",
            HookEvent::Stop => "stop",
            HookEvent::AgentStart => "agent-start",
            HookEvent::AgentStop => "agent-stop",
            HookEvent::WorkspaceOpen => "workspace-open",
        }
    }

    pub fn from_key(key: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.key() == key)
    }

    /// Only tool events take a `tools` selector list.
    pub fn takes_tools(self) -> bool {
        matches!(self, HookEvent::BeforeTool | HookEvent::AfterTool)
    }

    /// The seed's per-event result rules, enforced by every wrapper; but `agentStop` takes no
    /// context, where the seed gives it some on Claude Code: the real Claude Code takes it for
    /// a prompt that runs the subagent again, and again at each stop.
    pub fn rules(self) -> EventRules {
        match self {
            HookEvent::SessionStart | HookEvent::AfterTool | HookEvent::AgentStart => EventRules {
                deny: false,
                rewrite: false,
                context: true,
                allow: false,
                ask: false,
                violation: format!("{} cannot deny, stop, or replace input", self.key()),
            },
            HookEvent::BeforeTool => EventRules {
                deny: true,
                rewrite: true,
                context: true,
                allow: false,
                ask: false,
                violation: "beforeTool cannot stop or replace input while denying".into(),
            },
            HookEvent::Stop => EventRules {
                deny: true,
                rewrite: false,
                context: false,
                allow: false,
                ask: false,
                violation: "stop only accepts continue or deny with a reason".into(),
            },
            HookEvent::AgentStop => EventRules {
                deny: true,
                rewrite: false,
                context: false,
                allow: false,
                ask: false,
                violation: "agentStop cannot stop the parent flow or replace input".into(),
            },
            HookEvent::WorkspaceOpen => EventRules {
                deny: false,
                rewrite: false,
                context: false,
                allow: false,
                ask: false,
                violation: "workspaceOpen is observation-only".into(),
            },
        }
    }
}
