// The types of `agent-bundle.config.ts` (`import { defineConfig } from 'agent-bundle/config'`).
// The config is read statically, never run: write literal values.

import type { HookEventName, Target, ToolSelector } from "./index.js";

/** A hook: its handler and where and when it runs. */
export interface HookDeclaration {
  /** A module of the project (`./src/hooks/guard.ts`), or a prebuilt script inside a payload. */
  readonly handler: string | { readonly prebuilt: string };
  /** The hosts it is built for, among the config's `targets` (default: all of them). */
  readonly targets?: readonly Target[];
  /** Whole seconds the host waits for it. */
  readonly timeout?: number;
  /** `beforeTool` and `afterTool` only: the tools it runs for (default: every tool). */
  readonly tools?: readonly ToolSelector[];
  /** Arguments of a prebuilt handler's command. */
  readonly args?: readonly string[];
}

/** A handler's path, or a declaration. */
export type HookEntry = string | HookDeclaration;

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
  readonly targets?: readonly Target[];
  readonly hooks?: { readonly [E in HookEventName]?: HookEntry | readonly HookEntry[] } & {
    /** No host takes it as a config hook: write the route `src/events/workspace/open.tsx`. */
    readonly workspaceOpen?: never;
  };
  /** Prebuilt trees copied into the artifact, by the folder they land in. */
  readonly payload?: {
    readonly [folder: string]: string | { readonly source: string; readonly targets?: readonly Target[] };
  };
}

/** The config, as written: the compiler reads the literal you pass. */
export declare function defineConfig(config: AgentBundleConfig): AgentBundleConfig;
