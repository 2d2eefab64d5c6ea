// agent-bundle route components (`@agent-bundle/runtime`).
//
// An event route answers the host through what it renders:
//
//   <Agent.Result value={{ outcome: "deny", reason: "no" }}>
//     <Agent.Context>Extra context for the model.</Agent.Context>
//   </Agent.Result>
//
// - `Agent.Result` takes `value` = `{ outcome?: "continue" | "deny" | "allow" | "ask",
//   reason?, updatedInput? }` and optional children (`allow` and `ask` where the family
//   and host take them). A route renders at most one.
// - `Agent.Context` takes text children (strings, numbers, or components
//   rendering those); every Context's text becomes `additionalContext`.
//
// Both are markers: route.mjs recognizes them by identity and never calls
// them. Calling one directly is a mistake and throws. The Rust bundler maps the
// bare specifier to this file.

function Result() {
  throw new Error("Agent.Result is rendered by agent-bundle; do not call it");
}

function Context() {
  throw new Error("Agent.Context is rendered by agent-bundle; do not call it");
}

export const Agent = Object.freeze({ Result, Context });
