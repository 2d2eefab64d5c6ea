import { basename } from 'node:path';
import { Agent } from '@agent-bundle/runtime';
import type { AgentEventRouteConfig, AgentEventRouteProps } from 'agent-bundle';

// Renders in the shared runtime (the plugin's generated MCP server, which the host starts
// with the session), so its module state lives as long as the session; when no runtime is
// live, the bundled standalone form answers instead. Routes in the runtime see the MCP
// server's environment, not the hook's.
export const config = { runtime: 'shared', fallback: 'standalone', targets: ['claude', 'codex'] } satisfies AgentEventRouteConfig;

let prompts = 0;

export default async function Reminder({ canonical }: AgentEventRouteProps) {
  prompts += 1;
  // Which process rendered it: mcp/event-runtime.mjs (shared) or the hook's own wrapper.
  const renderedBy = basename(process.argv[1] ?? '') === 'event-runtime.mjs' ? 'shared runtime' : 'standalone hook';
  return (
    <Agent.Context>
      Answer in plain words; the routes plugin is listening (prompt {String(prompts)}, event {String(canonical.sequence)}, {renderedBy}).
    </Agent.Context>
  );
}
