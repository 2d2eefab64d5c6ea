//! What a module renders, as a route or through its components: recorded by the checker,
//! followed through imports by the wrapper and checked against each host by the build.

use std::collections::BTreeMap;

use crate::source::Span;

/// Where a module first renders, as a route, what some families or hosts do not take: the
/// build checks a route's own file against its family's rules and each host's context
/// channel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Renders {
    /// `<Agent.Context>`.
    pub context: Option<Span>,
    /// An `Agent.Result` whose value says `outcome: 'deny'`.
    pub deny: Option<Span>,
    /// An `Agent.Result` whose value gives `updatedInput` written out (an object or array).
    pub rewrite: Option<Span>,
    /// An `Agent.Result` whose value says `outcome: 'allow'`, or `'ask'`.
    pub allow: Option<Approved>,
    pub ask: Option<Approved>,
    /// An `Agent.Result` that denies and gives a new tool input, which no family takes.
    pub deny_rewrite: Option<Span>,
    /// An `Agent.Result` with a `reason` and no decision (`outcome` `'continue'`, or none).
    pub stray_reason: Option<Span>,
    /// An `Agent.Result` that denies with no reason, or an empty one.
    pub deny_without_reason: Option<Span>,
    /// An `Agent.Result` whose `outcome` is none any event takes (`'block'`).
    pub unknown_outcome: Option<Span>,
    /// A field of an `Agent.Result` (or a handler's result) that it never has
    /// (`decision: 'block'`, a misspelt one): a run that gives it fails.
    pub unknown_field: Option<Span>,
    /// Text written directly in an `Agent.Result` (`<Agent.Result>done</Agent.Result>`): text
    /// reaches the host through `Agent.Context` alone, and a render holding other text fails.
    pub stray_text: Option<Span>,
    /// Whether the module reads which host it renders for (`canonical.provenance`): a route
    /// that does is taken to render a context, allow or ask only where the host takes it.
    pub reads_host: bool,
}

/// An `Agent.Result` that allows or asks, as it is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Approved {
    /// The `outcome` property.
    pub at: Span,
    /// Whether the same value gives a `reason`, and an `updatedInput`.
    pub reason: bool,
    pub rewrite: bool,
}

impl Renders {
    /// Adds what `other` renders that this does not yet (each first place is kept).
    pub fn add(&mut self, other: &Renders) {
        self.context = self.context.or(other.context);
        self.deny = self.deny.or(other.deny);
        self.rewrite = self.rewrite.or(other.rewrite);
        self.allow = self.allow.or(other.allow);
        self.ask = self.ask.or(other.ask);
        self.deny_rewrite = self.deny_rewrite.or(other.deny_rewrite);
        self.stray_reason = self.stray_reason.or(other.stray_reason);
        self.deny_without_reason = self.deny_without_reason.or(other.deny_without_reason);
        self.unknown_outcome = self.unknown_outcome.or(other.unknown_outcome);
        self.unknown_field = self.unknown_field.or(other.unknown_field);
        self.stray_text = self.stray_text.or(other.stray_text);
        self.reads_host |= other.reads_host;
    }

    /// The same, all rendered at `at` (where a module renders the component that renders it).
    pub fn placed_at(self, at: Span) -> Renders {
        let place = |span: Option<Span>| span.map(|_| at);
        let approved = |approved: Option<Approved>| approved.map(|approved| Approved { at, ..approved });
        Renders {
            context: place(self.context),
            deny: place(self.deny),
            rewrite: place(self.rewrite),
            allow: approved(self.allow),
            ask: approved(self.ask),
            deny_rewrite: place(self.deny_rewrite),
            stray_reason: place(self.stray_reason),
            deny_without_reason: place(self.deny_without_reason),
            unknown_outcome: place(self.unknown_outcome),
            unknown_field: place(self.unknown_field),
            stray_text: place(self.stray_text),
            reads_host: self.reads_host,
        }
    }
}

/// A module's components, as far as a route renders through them: a component renders
/// `Agent.Result` and `Agent.Context` written in it, and what the components it renders do.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Components {
    /// By local name (`default` for an anonymous default export), those that render anything
    /// or any component: what its top-level declaration renders.
    pub declared: BTreeMap<String, Component>,
    /// Each export name of a declared one, with its local name.
    pub exported: BTreeMap<String, String>,
    /// Every tag of a component imported or declared at the top level, anywhere in the
    /// module, in source order.
    pub uses: Vec<ComponentUse>,
}

impl Components {
    /// Without the export names of what declares no component.
    pub(super) fn declared_only(mut self) -> Components {
        self.exported.retain(|_, local| self.declared.contains_key(local));
        self
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Component {
    pub renders: Renders,
    pub uses: Vec<ComponentUse>,
}

/// A component's tag: `<Deny>`, at the name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ComponentUse {
    pub component: UsedComponent,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum UsedComponent {
    /// Declared at the module's top level.
    Local(String),
    /// `name` of the module `specifier` (`default` for a default import).
    Imported { specifier: String, name: String },
}
