//! A normalized hook and the scheme that names it.
//!
//! # Hook names
//!
//! A hook's name is `<kebab-event>-<handler-stem>-<hash8>` and its id is
//! `hook:<kebab-event>:<handler-stem>:<hash8>`, where
//!
//! - `kebab-event` is the canonical event in kebab case (`beforeTool` → `before-tool`);
//! - `handler-stem` is the handler file's name without its extension, lower-cased, with every
//!   run of characters outside `[a-z0-9]` replaced by one `-` (`guard_writes.ts` → `guard-writes`);
//! - `hash8` is the first 8 hex digits of the BLAKE3 hash of this compact JSON text (keys in
//!   this order, no whitespace):
//!   `{"args":[…],"event":"<event key>","handler":"<path>","kind":"module"|"prebuilt","targets":[…],"timeout":<n>|null,"tools":[…]}`
//!   with `handler` the project-relative POSIX path without `./`, `targets` the hook's own
//!   `targets` sorted and deduplicated (`[]` when it has none), `tools` deduplicated in
//!   declaration order, and `args` as written.
//!
//! Nothing machine-specific enters the hash, so a declaration has the same name on any machine
//! and from any directory, and any change to it gives a new name.

use super::{EventRules, Family, HookEvent, Target, ToolSelector};

/// What runs when the hook fires.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Handler {
    /// A TypeScript/JavaScript module compiled into a wrapper (project-relative path).
    Module(String),
    /// An already-built file inside a payload, run as is: its project-relative path and its
    /// path in the artifact (`<payload name>/<path inside the payload source>`).
    Prebuilt { path: String, artifact_path: String },
}

impl Handler {
    pub fn path(&self) -> &str {
        match self {
            Handler::Module(path) | Handler::Prebuilt { path, .. } => path,
        }
    }

    pub fn is_prebuilt(&self) -> bool {
        matches!(self, Handler::Prebuilt { .. })
    }
}

/// What a hook answers to: a config-declared event, or an event route's family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Trigger {
    Config(HookEvent),
    Route(Family),
}

impl Trigger {
    pub fn family(self) -> Option<Family> {
        match self {
            Trigger::Config(event) => event.family(),
            Trigger::Route(family) => Some(family),
        }
    }

    /// `beforeTool` for a config hook, `tool/before` for a route.
    pub fn key(self) -> &'static str {
        match self {
            Trigger::Config(event) => event.key(),
            Trigger::Route(family) => family.key(),
        }
    }

    /// Config hooks follow the seed's per-event rules; routes their family's.
    pub fn rules(self) -> EventRules {
        match self {
            Trigger::Config(event) => event.rules(),
            Trigger::Route(family) => family.rules(),
        }
    }
}

/// How an event route runs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RouteRun {
    /// The render budget inside the host's own deadline.
    pub timeout_ms: u32,
    /// Whether the route's config sets it.
    pub timeout_declared: bool,
    /// The route asked for the shared runtime (`runtime: 'shared'`).
    pub shared: bool,
    /// It also compiles its standalone form, run when no shared runtime is live
    /// (`fallback: 'standalone'`).
    pub fallback: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Hook {
    pub id: String,
    pub name: String,
    pub trigger: Trigger,
    /// Set for event routes.
    pub route: Option<RouteRun>,
    pub handler: Handler,
    /// The hook's own `targets`, sorted and deduplicated; `None` means every selected host.
    pub targets: Option<Vec<Target>>,
    /// Deduplicated, in declaration order.
    pub tools: Vec<ToolSelector>,
    /// Native timeout in whole seconds; `None` leaves the host's default.
    pub timeout: Option<u32>,
    pub args: Vec<String>,
    /// The file that declares the hook: the config, or the route module.
    pub source_file: String,
    /// Where the declaration sits in that file's config value, e.g. `hooks.beforeTool[1]`
    /// (empty for a route: its whole `config` declares it).
    pub config_path: String,
}

impl Hook {
    /// The JSON path of a key of the declaration, e.g. `hooks.stop.tools` or `tools`.
    pub fn json_path(&self, child: &str) -> String {
        if self.config_path.is_empty() { child.to_owned() } else { format!("{}.{child}", self.config_path) }
    }

    /// Its own `targets`, as a help names them: a config hook's, or a route's
    /// `config.targets`.
    pub fn targets_named(&self) -> &'static str {
        match self.trigger {
            Trigger::Config(_) => "the hook's `targets`",
            Trigger::Route(_) => "the route's `config.targets`",
        }
    }

    /// Whether the hook names `target` in its own `targets`.
    pub fn names_target(&self, target: Target) -> bool {
        self.targets.as_ref().is_some_and(|targets| targets.contains(&target))
    }

    /// Whether the hook goes to `target` when the build selects it.
    pub fn reaches(&self, target: Target) -> bool {
        self.targets.as_ref().is_none_or(|targets| targets.contains(&target))
    }
}

/// How many hex digits of its declaration's hash end a config hook's name
/// (`before-tool-guard-1a2b3c4d`).
pub const NAME_HASH_LEN: usize = 8;

/// The `(id, name)` pair of a declaration, by the scheme in the module docs.
pub fn hook_identity(
    event: HookEvent,
    handler: &Handler,
    targets: Option<&[Target]>,
    tools: &[ToolSelector],
    timeout: Option<u32>,
    args: &[String],
) -> (String, String) {
    let identity = serde_json::json!({
        "args": args,
        "event": event.key(),
        "handler": handler.path(),
        "kind": if handler.is_prebuilt() { "prebuilt" } else { "module" },
        "targets": targets.unwrap_or_default().iter().map(|t| t.as_str()).collect::<Vec<_>>(),
        "timeout": timeout,
        "tools": tools.iter().map(ToolSelector::to_text).collect::<Vec<_>>(),
    });
    let hash = blake3::hash(identity.to_string().as_bytes()).to_hex();
    let hash8 = &hash[..NAME_HASH_LEN];
    let stem = handler_stem(handler.path());
    (format!("hook:{}:{stem}:{hash8}", event.kebab()), format!("{}-{stem}-{hash8}", event.kebab()))
}

/// The most of a handler's file name a hook's name keeps (the slug is ASCII: bytes).
const MAX_STEM: usize = 64;

fn handler_stem(path: &str) -> String {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split_once('.').map_or(file, |(stem, _)| stem);
    let mut slug = String::with_capacity(stem.len());
    for c in stem.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    // (Past this the name tells no more, and a wrapper's file name must stay within 255 bytes.)
    let slug = slug[..slug.len().min(MAX_STEM)].trim_end_matches('-');
    if slug.is_empty() { "handler".to_owned() } else { slug.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CanonicalTool;

    /// A handler's long file name keeps a hook's name, and its wrappers' file names, short.
    #[test]
    fn a_long_handler_name_is_cut_in_the_hook_name() {
        let long = format!("./src/{}.ts", "a".repeat(240));
        let name = hook_identity(HookEvent::BeforeTool, &Handler::Module(long), None, &[], None, &[]).1;
        assert_eq!(name.len(), "before-tool-".len() + MAX_STEM + 1 + NAME_HASH_LEN);
        assert_eq!(handler_stem("./src/a-b-c.ts"), "a-b-c");
        assert_eq!(handler_stem(&format!("{}-b.ts", "a".repeat(MAX_STEM - 1))), "a".repeat(MAX_STEM - 1));
    }

    fn name(handler: &str, targets: Option<&[Target]>, tools: &[ToolSelector], timeout: Option<u32>) -> String {
        let handler = Handler::Module(handler.into());
        hook_identity(HookEvent::BeforeTool, &handler, targets, tools, timeout, &[]).1
    }

    #[test]
    fn names_are_stable_and_follow_the_scheme() {
        let handler = Handler::Module("src/hooks/session-start.ts".into());
        let (id, name) = hook_identity(HookEvent::SessionStart, &handler, None, &[], None, &[]);
        // Pinned: changing the scheme renames every user's hooks, which must be deliberate.
        assert_eq!(name, "session-start-session-start-a6c040f4");
        assert_eq!(id, "hook:session-start:session-start:a6c040f4");
    }

    #[test]
    fn every_part_of_the_declaration_changes_the_name() {
        let shell = [ToolSelector::Canonical(CanonicalTool::Shell)];
        let base = name("src/hooks/guard.ts", None, &shell, None);
        assert_ne!(base, name("src/hooks/guard2.ts", None, &shell, None));
        assert_ne!(base, name("src/hooks/guard.ts", Some(&[Target::Claude]), &shell, None));
        assert_ne!(base, name("src/hooks/guard.ts", None, &[], None));
        assert_ne!(base, name("src/hooks/guard.ts", None, &shell, Some(10)));
        assert!(base.starts_with("before-tool-guard-"));
    }

    #[test]
    fn stems_are_slugs() {
        assert_eq!(handler_stem("src/hooks/Guard_Writes.ts"), "guard-writes");
        assert_eq!(handler_stem("dist/runtime/hook/index.js"), "index");
        assert_eq!(handler_stem("src/__.ts"), "handler");
    }
}
