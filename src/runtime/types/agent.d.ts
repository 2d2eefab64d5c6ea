// The components an event route answers with (`import { Agent } from '@agent-bundle/runtime'`).

import type { EventFamily, RouteResults } from "agent-bundle";
import type { AgentElement, AgentNode } from "agent-bundle/jsx-runtime";

/** What an `Agent.Result` may hold: elements (`Agent.Context`, components), no text. */
export type ResultChildren = AgentElement | boolean | null | undefined | readonly ResultChildren[];

/**
 * A route's decision for the family `F` (any family's when left out): a deny needs a
 * non-empty reason and gives no new input; `allow` and `ask` only where the family and host
 * take them (see `agent-bundle matrix`); `updatedInput` is the tool's new input. Write
 * `value={{ … } satisfies RouteResult<'tool/before'>}` to check it against one family.
 */
export type RouteResult<F extends EventFamily = EventFamily> = RouteResults[F];

export declare const Agent: {
  /** The route's answer, at most one per render; its children may be `Agent.Context` elements. */
  readonly Result: (props: { readonly value?: RouteResult; readonly children?: ResultChildren }) => AgentElement;
  /** Text for the model's context, where the host takes it for the family. */
  readonly Context: (props: { readonly children?: AgentNode }) => AgentElement;
};
