// The types of agent-bundle's handlers and event routes (`import type { … } from 'agent-bundle'`).
// Written into a project by `agent-bundle types`, beside `events.d.ts`, which the host tables
// generate.

export * from "./events.js";
// `defineConfig` from 'agent-bundle', as older configs import it ('agent-bundle/config' is its
// home, where the docs import it from).
export { defineConfig } from "./config.js";
// What the module exports when a handler or route imports it: the JSX runtime.
export { Fragment, createElement, jsx, jsxs } from "./jsx-runtime.js";
import type {
  CanonicalTool,
  EventFamily,
  HookEventName,
  HookEvents,
  HookHost,
  HookResults,
  RoutePayloads,
  Target,
  ToolEventFamily,
  ToolSelector,
} from "./events.js";

/** What every handler gets beside its event. */
export interface HookContext {
  /** The host running the hook. */
  readonly host: HookHost;
  /** The host's name of the event (`PreToolUse`). */
  readonly nativeEvent: string;
  /** The host's input as it sent it. */
  readonly nativeInput: { readonly [key: string]: unknown };
  /** The host release the compiler's table for it was checked against. */
  readonly hostContractRevision: string;
}

/** `beforeTool` and `afterTool` also get the tool named canonically, whatever the host calls it. */
export interface ToolHookContext extends HookContext {
  /** `null`: a tool no canonical selector names (an MCP tool of a host without the selector, say). */
  readonly tool: CanonicalTool | null;
}

/**
 * A handler's answer, whatever its event (`HookResults` has each event's). A deny needs a
 * non-empty reason; `stop` and `agentStop` take no `additionalContext`.
 */
export type HookResult = HookResults[HookEventName];

/** The default export of a config hook's handler module for the event `E`. */
export type HookHandler<E extends HookEventName> = (
  event: HookEvents[E],
  context: E extends "beforeTool" | "afterTool" ? ToolHookContext : HookContext,
) => HookResults[E] | null | undefined | void | Promise<HookResults[E] | null | undefined | void>;

/** A list that names at least one: an empty one is an error (it would select nothing). */
export type OneOrMore<T> = readonly [T, ...T[]];

/**
 * An event route's static `export const config` (read by the compiler, never run); with its
 * family (`AgentEventRouteConfig<'stop'>`), `tools` is refused where the family has none.
 */
export interface AgentEventRouteConfig<F extends EventFamily | undefined = undefined> {
  /** `'standalone'` (default): rendered in the hook's own process; `'shared'`: in the plugin's event runtime. */
  readonly runtime?: "standalone" | "shared";
  /** A shared route's form for when no event runtime is live. */
  readonly fallback?: "standalone";
  /** The hosts to build the route for (default: every selected host that has its family). */
  readonly targets?: OneOrMore<HookHost>;
  /** The render's budget, in whole milliseconds: 1 to 2147483647 (default 5000). */
  readonly timeoutMs?: number;
  /** Tool families only: the tools the route runs for (default: every tool). */
  readonly tools?: F extends ToolEventFamily | undefined ? OneOrMore<ToolSelector> : never;
}

/**
 * The `canonical` prop of a route for the family `F` (any family when `F` is left out: its
 * `payload` is then untyped).
 */
export interface CanonicalEvent<F extends EventFamily | undefined = undefined> {
  readonly event: F extends EventFamily ? F : EventFamily;
  /** The same for the same native event on the same host (a SHA-256, hex). */
  readonly idempotencyKey: string;
  /** When the route began rendering (ISO 8601). */
  readonly observedAt: string;
  /** 1 in a standalone run; the shared runtime counts its events. */
  readonly sequence: number;
  readonly provenance: {
    readonly host: HookHost;
    readonly hostContractRevision: string;
    readonly nativeEvent: string;
    readonly source: "native";
  };
  /** The event's fields, named canonically (camelCase). */
  readonly payload: F extends EventFamily ? RoutePayloads[F] : { readonly [key: string]: any };
  /** Tool families: the tool named canonically. */
  readonly tool?: CanonicalTool | null;
}

/** The props of an event route's default component. */
export interface AgentEventRouteProps<F extends EventFamily | undefined = undefined> {
  readonly canonical: CanonicalEvent<F>;
  /** The host's input as it sent it, validated. */
  readonly native: { readonly [key: string]: unknown };
  /** Aborted when the route's `timeoutMs` is up. */
  readonly signal: AbortSignal;
}
