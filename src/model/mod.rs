//! The canonical model: targets, events, tool selectors and normalized hooks.
//!
//! Architecture invariant: this module knows nothing about any host's JSON, file layout or
//! native names; those live in `hosts/`. Nothing here carries source positions: hooks
//! remember the JSON path of their declaration instead, so a whitespace edit to the config
//! leaves the model equal and salsa backdates everything downstream.

mod events;
mod families;
mod hook;
mod normalize;

pub use events::{EventRules, HookEvent};
pub use families::Family;
pub use hook::{Handler, Hook, NAME_HASH_LEN, RouteRun, Trigger, hook_identity};
pub use normalize::{
    Model, NO_SUCH_MODULE_HELP, NormalizeReturn, PackageVersion, Payload, ProjectView, TargetSource, Unversioned,
    normalize,
};

use crate::diagnostics::{Code, Diagnostic};

/// A host projection the build can emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    Claude,
    Codex,
    Cursor,
    Portable,
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Target {
    /// In name order, which is also the order of every per-host loop.
    pub const ALL: [Target; 4] = [Target::Claude, Target::Codex, Target::Cursor, Target::Portable];

    pub fn as_str(self) -> &'static str {
        match self {
            Target::Claude => "claude",
            Target::Codex => "codex",
            Target::Cursor => "cursor",
            Target::Portable => "portable",
        }
    }

    pub fn parse(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.as_str() == name)
    }

    pub fn names() -> String {
        Target::ALL.map(Target::as_str).join(", ")
    }

    /// The error for `name`, which names no target (AB4100), led by the one it most likely means.
    pub fn unknown(name: &str) -> Diagnostic {
        Diagnostic::error(Code::UnknownTarget, format!("unknown target `{name}`")).with_help_suggesting(
            name,
            Target::ALL.map(Target::as_str),
            &format!("targets are {}", Target::names()),
        )
    }
}

/// The five host-independent tool selectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CanonicalTool {
    Shell,
    FileRead,
    FileWrite,
    Mcp,
    Agent,
}

impl CanonicalTool {
    pub const ALL: [CanonicalTool; 5] = [
        CanonicalTool::Shell,
        CanonicalTool::FileRead,
        CanonicalTool::FileWrite,
        CanonicalTool::Mcp,
        CanonicalTool::Agent,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CanonicalTool::Shell => "shell",
            CanonicalTool::FileRead => "file.read",
            CanonicalTool::FileWrite => "file.write",
            CanonicalTool::Mcp => "mcp",
            CanonicalTool::Agent => "agent",
        }
    }

    /// The canonical tool a common word for it means (`bash`, `Bash`, `sh` → `shell`;
    /// `edit` → `file.write`), whatever its case: what a selector naming it most likely meant.
    fn meant_by(word: &str) -> Option<CanonicalTool> {
        const WORDS: [(CanonicalTool, &[&str]); 4] = [
            (CanonicalTool::Shell, &["bash", "sh", "zsh", "powershell", "terminal", "command", "exec"]),
            (CanonicalTool::FileRead, &["read", "view", "cat"]),
            (CanonicalTool::FileWrite, &["write", "edit", "multiedit", "apply_patch", "patch"]),
            (CanonicalTool::Agent, &["task", "subagent"]),
        ];
        let word = word.to_lowercase();
        let canonical = CanonicalTool::ALL.into_iter().find(|tool| tool.as_str() == word);
        canonical.or_else(|| WORDS.iter().find(|(_, words)| words.contains(&word.as_str())).map(|(tool, _)| *tool))
    }
}

/// One entry of a hook's `tools`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ToolSelector {
    Canonical(CanonicalTool),
    /// `<target>:<native-name>`: contributes to that host's matcher only.
    Native {
        target: Target,
        name: String,
    },
}

impl ToolSelector {
    /// Parses `shell`, `file.write`, `claude:WebSearch`, …; `None` when it is neither form.
    pub fn parse(text: &str) -> Option<ToolSelector> {
        if let Some(tool) = CanonicalTool::ALL.into_iter().find(|t| t.as_str() == text) {
            return Some(ToolSelector::Canonical(tool));
        }
        let (target, name) = text.split_once(':')?;
        let target = Target::parse(target)?;
        Self::is_tool_name(name).then(|| ToolSelector::Native { target, name: name.to_owned() })
    }

    /// Whether `name` can be one tool's exact name (`Bash`, `mcp__memory__read-graph`,
    /// Cursor's `MCP:search`): anything else is a matcher pattern (`Edit|Write`, `mcp__.*`),
    /// which would be matched as text, so that no tool ever has it.
    fn is_tool_name(name: &str) -> bool {
        !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || "_-.:".contains(c))
    }

    pub fn to_text(&self) -> String {
        match self {
            ToolSelector::Canonical(tool) => tool.as_str().to_owned(),
            ToolSelector::Native { target, name } => format!("{}:{name}", target.as_str()),
        }
    }

    /// The error for `given`, which is no selector.
    pub fn unknown(given: &str) -> Diagnostic {
        Diagnostic::error(Code::UnknownSelector, format!("unknown tool selector `{given}`"))
            .with_help(ToolSelector::unknown_help(given))
    }

    /// The help for `given`, which does not parse: what selectors are, led by the one it most
    /// likely meant (a canonical tool, or its native name on another host: `claud:Bash` →
    /// `claude:Bash`).
    pub fn unknown_help(given: &str) -> String {
        if let Some((target, name)) = given.split_once(':').filter(|(_, name)| !name.is_empty())
            && Target::parse(target).is_some()
        {
            return Self::pattern_help(target, name);
        }
        let canonical = CanonicalTool::ALL.map(|tool| tool.as_str().to_owned());
        let native = given
            .split_once(':')
            .into_iter()
            .flat_map(|(_, name)| Target::ALL.into_iter().map(move |target| format!("{}:{name}", target.as_str())));
        let meant: Vec<String> =
            canonical.into_iter().chain(native).filter(|name| Self::parse(name).is_some()).collect();
        let meant = || meant.iter().map(String::as_str);
        // A host's own name (`Bash`), which means nothing on the other hosts.
        if !crate::diagnostics::has_suggestion(given, meant()) && Self::is_tool_name(given) && !given.contains(':') {
            return match CanonicalTool::meant_by(given) {
                Some(tool) => format!(
                    "did you mean `{}`, which selects it on every host? (a host's own tool name goes after the \
                     host, spelt exactly as the host does: `<target>:<name>`)",
                    tool.as_str()
                ),
                None => format!(
                    "use shell, file.read, file.write, mcp, agent, or a host's own tool name after the host: \
                     `<target>:{given}` (`claude:{given}`, say)"
                ),
            };
        }
        let help = "use shell, file.read, file.write, mcp, agent, or `<target>:<native-tool-name>`";
        crate::diagnostics::suggesting(given, meant(), help)
    }

    /// The help for a native name that is no tool's name: most often a host's matcher
    /// pattern carried over, which a selector spells as one selector per tool.
    fn pattern_help(target: &str, name: &str) -> String {
        let tools: Vec<&str> = name.split(['|', ',']).map(str::trim).collect();
        if tools.len() > 1 && tools.iter().all(|tool| Self::is_tool_name(tool)) {
            let each: Vec<String> = tools.iter().map(|tool| format!("'{target}:{tool}'")).collect();
            return format!("a selector names one tool exactly, not a matcher pattern: write {}", each.join(", "));
        }
        "a selector names one tool exactly (letters, digits, `_`, `-`, `.`, `:`), not a matcher pattern: list each \
         tool, use `mcp` for every MCP tool, or leave `tools` out to run on every tool"
            .to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_selector_is_answered_with_one_that_parses() {
        let help = ToolSelector::unknown_help("claud:Bash");
        assert!(help.starts_with("did you mean `claude:Bash`? use shell"), "{help}");
        assert!(ToolSelector::unknown_help("mpc").starts_with("did you mean `mcp`? "));
        assert!(ToolSelector::unknown_help("claude:").starts_with("use shell"), "no empty native name suggested");
    }

    /// A host's matcher pattern is no tool's name: taken as one, it would match no tool, and
    /// the hook would never run.
    #[test]
    fn a_matcher_pattern_is_no_native_selector() {
        for pattern in ["claude:Edit|Write", "claude:mcp__.*", "claude:*", "codex:^Bash$", "claude:Bash(git:*)"] {
            assert_eq!(ToolSelector::parse(pattern), None, "{pattern}");
        }
        for name in ["claude:mcp__memory__read-graph", "cursor:MCP:search", "codex:apply_patch", "claude:Ünï"] {
            assert!(ToolSelector::parse(name).is_some(), "{name}");
        }
        assert_eq!(
            ToolSelector::unknown_help("claude:Edit|Write"),
            "a selector names one tool exactly, not a matcher pattern: write 'claude:Edit', 'claude:Write'"
        );
        assert!(ToolSelector::unknown_help("claude:mcp__.*").contains("use `mcp` for every MCP tool"));
        let native = ToolSelector::unknown_help("WebFetch");
        assert!(native.ends_with("after the host: `<target>:WebFetch` (`claude:WebFetch`, say)"), "{native}");
        for word in ["bash", "Bash", "sh"] {
            assert!(ToolSelector::unknown_help(word).starts_with("did you mean `shell`, which selects it"), "{word}");
        }
        assert!(ToolSelector::unknown_help("Edit").starts_with("did you mean `file.write`"));
        assert!(ToolSelector::unknown_help("WebSearch").starts_with("use shell, file.read"));
        let typo = ToolSelector::unknown_help("shel");
        assert_eq!(
            typo,
            "did you mean `shell`? use shell, file.read, file.write, mcp, agent, or `<target>:<native-tool-name>`"
        );
    }

    #[test]
    fn selectors_parse_both_forms() {
        assert_eq!(ToolSelector::parse("file.write"), Some(ToolSelector::Canonical(CanonicalTool::FileWrite)));
        assert_eq!(
            ToolSelector::parse("claude:WebSearch"),
            Some(ToolSelector::Native { target: Target::Claude, name: "WebSearch".into() })
        );
        assert_eq!(ToolSelector::parse("files.write"), None);
        assert_eq!(ToolSelector::parse("gemini:x"), None);
        assert_eq!(ToolSelector::parse("claude:"), None);
    }
}
