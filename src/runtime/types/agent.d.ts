// The components an event route answers with (`import { Agent } from '@agent-bundle/runtime'`).

import type { AgentElement, AgentNode } from "agent-bundle/jsx-runtime";

/** What an `Agent.Result` may hold: elements (`Agent.Context`, components), no text. */
export type ResultChildren = AgentElement | boolean | null | undefined | readonly ResultChildren[];

/**
 * A route's decision. `allow` and `ask` only where the family and host take them (see
 * `agent-bundle matrix`); `updatedInput` is the tool's new input.
 */
export interface RouteResult {
  readonly outcome?: "continue" | "deny" | "allow" | "ask";
  readonly reason?: string;
  readonly updatedInput?: { readonly [key: string]: unknown };
}

export declare const Agent: {
  /** The route's answer, at most one per render; its children may be `Agent.Context` elements. */
  readonly Result: (props: { readonly value?: RouteResult; readonly children?: ResultChildren }) => AgentElement;
  /** Text for the model's context, where the host takes it for the family. */
  readonly Context: (props: { readonly children?: AgentNode }) => AgentElement;
};
