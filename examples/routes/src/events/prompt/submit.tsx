import { Agent } from '@agent-bundle/runtime';
import type { AgentEventRouteConfig } from 'agent-bundle';

// Asks for the shared runtime; until a generated MCP server hosts it, the standalone
// fallback renders it (warning AB4816).
export const config = { runtime: 'shared', fallback: 'standalone', targets: ['claude', 'codex'] } satisfies AgentEventRouteConfig;

export default async function Reminder() {
  return <Agent.Context>Answer in plain words; the routes plugin is listening.</Agent.Context>;
}
