// agent-bundle event-route renderer.
//
// An event route is `src/events/<family>.tsx`: its default export is a
// (usually async) function component. Its wrapper calls
//
//   runHook(SPEC, () => (event, context) => renderRoute(Route, event, context, ROUTE))
//
// with ROUTE = { family, timeoutMs }; the shared runtime (server.mjs) calls it
// with { family, timeoutMs, sequence, shared: true }. renderRoute builds the props
// `{ canonical, native, signal }`, renders the component tree, and turns the
// rendered document into a hook result that runHook validates against the
// family's rules and projects for the host:
//
// - function components (sync or async) are called with their props; arrays,
//   fragments and promises render their contents; `null`, `undefined` and
//   booleans render nothing; siblings render concurrently, in document order;
// - every `Agent.Context`'s text, trimmed, becomes `additionalContext` (several
//   are joined with "\n"); the `value` of the one `Agent.Result` gives
//   `outcome`, `reason` and `updatedInput`;
// - anything that would be lost is an error: text outside `Agent.Context`, a
//   second `Agent.Result`, an element type that is not a function, Fragment,
//   Result or Context (e.g. "div");
// - the render races `timeoutMs`: on timeout the signal aborts, renderRoute
//   throws, and a still-busy wrapper process is ended shortly after runHook
//   has reported the failure, so an abandoned render cannot outlive the budget
//   (the shared runtime process serves other requests and is never ended).
//
// Startup: nothing runs at load time, and node:crypto (~5 ms to load) is only
// loaded when a route reads `canonical.idempotencyKey`.

import { Fragment } from "./jsx.mjs";
import { Agent } from "./agent.mjs";
import { jsonText } from "./json.mjs";
import { classOf } from "./hook.mjs";

const ELEMENT = Symbol.for("agent-bundle.element");
const RESULT_KEYS = ["outcome", "reason", "updatedInput"];

/**
 * Renders `Component` for one event and returns the hook result
 * `{ outcome?, reason?, updatedInput?, additionalContext? }`, within the route's
 * `timeoutMs`, or what is left of it (`leftMs`: a fallback after the wait for a runtime).
 * The `signal` it gives the route aborts then, or when `route.cancelled` does.
 */
export async function renderRoute(Component, event, context, route) {
  routeComponent(Component, route.source);
  const controller = new AbortController();
  // (The shared runtime's, when it fails the render: a route's process.exit.)
  route.cancelled?.addEventListener("abort", () => controller.abort(route.cancelled.reason), { once: true });
  const props = Object.freeze({
    canonical: await canonicalIdentity(event, context, route),
    native: context.nativeInput,
    signal: controller.signal,
  });
  const state = { result: undefined, hasResult: false };
  const budgetMs = route.leftMs ?? route.timeoutMs;
  const timedOut = () => {
    const message = `route ${route.family} timed out after ${route.timeoutMs} ms`;
    // An abandoned render does not keep a hook's process alive: runHook ends it.
    controller.abort(new DOMException(message, "TimeoutError"));
    return new Error(message);
  };
  const started = performance.now();
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), budgetMs);
  });
  let contexts;
  try {
    contexts = await Promise.race([render(Component(props), state, false), timeout]);
  } finally {
    clearTimeout(timer);
  }
  // A render that held the event loop past its budget settles before its timer can fire: it
  // is late all the same (as a wrapper waiting on the shared runtime's answer finds it).
  if (performance.now() - started > budgetMs) throw timedOut();

  const out = {};
  const value = state.result ?? {};
  for (const key of RESULT_KEYS) if (value[key] !== undefined) out[key] = value[key];
  const text = contexts.filter((part) => part !== "").join("\n");
  if (text !== "") out.additionalContext = text;
  return out;
}

/** The route module's default export, checked when the module (`source`, if named) is loaded. */
export function routeComponent(Component, source) {
  if (typeof Component !== "function") {
    throw new Error(`route module ${source === undefined ? "" : `${source} `}must default-export a function component`);
  }
  return Component;
}

// The frozen `canonical` prop. The idempotency key is a lazy getter: hashing
// needs node:crypto, which most routes would load for nothing, and the envelope's text.
async function canonicalIdentity(event, context, { family, sequence = 1 }) {
  const identity = () => jsonText({ event: family, native: context.nativeInput, target: context.host });
  let key = typeof process.getBuiltinModule === "function" ? null : await webSha256(identity());
  return Object.freeze({
    event: family,
    get idempotencyKey() {
      key ??= process.getBuiltinModule("node:crypto").createHash("sha256").update(identity()).digest("hex");
      return key;
    },
    observedAt: new Date().toISOString(),
    sequence, // a standalone run sees exactly one event; the shared runtime counts
    provenance: Object.freeze({
      host: context.host,
      hostContractRevision: context.hostContractRevision,
      nativeEvent: context.nativeEvent,
      source: "native",
    }),
    payload: event,
    // A tool family's tool, named canonically (`shell`), as handlers get it in `context`.
    ...("tool" in context && { tool: context.tool }),
  });
}

// Node < 20.16 has no process.getBuiltinModule, and a literal import() of
// node:crypto would become a static import in the bundle: use Web Crypto.
async function webSha256(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Buffer.from(digest).toString("hex");
}

// Renders `node` and returns the text of the Agent.Context elements it holds,
// in document order; `inContext` is true inside one, where the text itself is
// returned. Records the Agent.Result value in `state`.
async function render(node, state, inContext) {
  node = await node;
  if (node === null || node === undefined || typeof node === "boolean") return [];
  if (typeof node === "string" || typeof node === "number" || typeof node === "bigint") {
    if (inContext) return [String(node)];
    // Whitespace carries nothing to lose: JSX keeps the space between two tags on one line.
    if (typeof node === "string" && node.trim() === "") return [];
    throw new Error(`route rendered text outside Agent.Context: ${preview(String(node))}`);
  }
  if (Array.isArray(node)) return renderAll(node, state, inContext);
  if (typeof node !== "object" || node.$$typeof !== ELEMENT) {
    throw new Error(
      `route rendered ${describe(node)}: a route renders elements (<Agent.Result value={…} />, ` +
        "<Agent.Context>text</Agent.Context>) or null",
    );
  }

  const { type, props } = node;
  if (type === Fragment) return render(props.children, state, inContext);
  if (type === Agent.Context) {
    if (inContext) throw new Error("Agent.Context cannot contain Agent.Context");
    onlyProps(props, "Agent.Context", ["children"]);
    return [(await render(props.children, state, true)).join("").trim()];
  }
  if (type === Agent.Result) {
    if (inContext) throw new Error("Agent.Context cannot contain Agent.Result");
    if (state.hasResult) throw new Error("a route may render at most one Agent.Result");
    onlyProps(props, "Agent.Result", ["value", "children"]);
    state.hasResult = true;
    state.result = checkValue(props.value);
    return render(props.children, state, false);
  }
  if (typeof type === "function") return render(type(props), state, inContext);
  const name = typeof type === "string" ? `<${type}>` : describe(type);
  throw new Error(
    `route rendered unsupported element type ${name}: use function components, fragments (<>…</>), Agent.Result or Agent.Context`,
  );
}

async function renderAll(nodes, state, inContext) {
  const parts = await Promise.all(nodes.map((node) => render(node, state, inContext)));
  return parts.flat();
}

function onlyProps(props, name, allowed) {
  for (const key of Object.keys(props)) {
    if (!allowed.includes(key)) throw new Error(`${name} takes only ${allowed.join(" and ")}, not ${key}`);
  }
}

// A `value` left out is no decision; `null` is refused, as the types refuse it: a guard's
// decision that came out `null` must not let the tool run without a word.
function checkValue(value) {
  if (value === undefined) return undefined;
  const proto = value !== null && typeof value === "object" ? Object.getPrototypeOf(value) : undefined;
  if (proto !== Object.prototype && proto !== null) {
    const instance = proto !== undefined && !Array.isArray(value) ? `, not ${classOf(value)}` : "";
    throw new Error(`Agent.Result value must be an object { outcome?, reason?, updatedInput? }${instance}`);
  }
  for (const key of Object.keys(value)) {
    if (!RESULT_KEYS.includes(key)) {
      throw new Error(`Agent.Result value has unsupported field ${key}: use outcome, reason and updatedInput`);
    }
  }
  return value;
}

function describe(value) {
  if (typeof value === "function") return `a function${value.name ? ` (${value.name})` : ""}`;
  if (typeof value === "symbol") return String(value);
  // A tag naming a property nothing has (`<rt.Agent.Contxt>`).
  if (value === undefined) return "undefined (a tag naming nothing)";
  if (value === null || typeof value !== "object") return `${typeof value} ${String(value)}`;
  return Array.isArray(value) ? "an array" : "an object";
}

function preview(text) {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);
}
