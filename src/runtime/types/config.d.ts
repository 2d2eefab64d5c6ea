// The types of `agent-bundle.config.ts` (`import { defineConfig } from 'agent-bundle/config'`).
// The config is read statically, never run: write literal values.

import type { HookEventName, HookHost, OneOrMore, Target, ToolSelector } from "./index.js";

/** Where and when a hook of the event `E` runs. */
interface HookPlacement<E extends HookEventName> {
  /** The hosts it is built for, among the config's `targets` (default: all of them that run hooks). */
  readonly targets?: OneOrMore<HookHost>;
  /** Whole seconds the host waits for it, 1 to 4294967295. */
  readonly timeout?: number;
  /** The tools it runs for (default: every tool); `beforeTool` and `afterTool` only. */
  readonly tools?: E extends "beforeTool" | "afterTool" ? OneOrMore<ToolSelector> : never;
}

/**
 * A hook of the event `E`: a module of the project, or a prebuilt script in a payload.
 * (One shape, not a union of the two: a mistake elsewhere in it is then said where it is,
 * never as the handler's. The build refuses `args` beside a module, AB4746.)
 */
export interface HookDeclaration<E extends HookEventName = HookEventName> extends HookPlacement<E> {
  readonly handler: string | { readonly prebuilt: string };
  /** Arguments of a prebuilt script's command (a module's path takes none). */
  readonly args?: readonly string[];
}

/** A handler's path (`./src/hooks/guard.ts`), or a declaration. */
export type HookEntry<E extends HookEventName = HookEventName> = string | HookDeclaration<E>;

/** What `agent-bundle.config.ts` default-exports. */
export interface AgentBundleConfig {
  readonly plugin: {
    /** Lowercase kebab-case, at most 64 characters. */
    readonly name: string;
    readonly description?: string;
    /** Default: package.json's, then `0.0.0`. */
    readonly version?: string;
  };
  /** Default: `['portable']`, which runs no hooks. */
  readonly targets?: OneOrMore<Target>;
  readonly hooks?: { readonly [E in HookEventName]?: HookEntry<E> | OneOrMore<HookEntry<E>> } & {
    /** No host takes it as a config hook: write the route `src/events/workspace/open.tsx`. */
    readonly workspaceOpen?: never;
  };
  /** Prebuilt trees copied into the artifact, by the folder they land in. */
  readonly payload?: {
    readonly [folder: string]: string | { readonly source: string; readonly targets?: OneOrMore<Target> };
  };
}

/** The config, as written: the compiler reads the literal you pass. */
export declare function defineConfig(config: AgentBundleConfig): AgentBundleConfig;
