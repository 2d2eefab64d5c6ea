import { appendFileSync } from 'node:fs';
import type { AgentEventRouteConfig, AgentEventRouteProps } from 'agent-bundle';

// Claude Code gives every SessionEnd hook 1.5 s in all, whatever its timeout (AB4208).
export const config = { timeoutMs: 1000 } satisfies AgentEventRouteConfig<'session/end'>;

/** Observation only: records the end of a session, answers nothing. */
export default async function Farewell({ canonical }: AgentEventRouteProps) {
  const log = process.env.ROUTES_LOG;
  if (log) appendFileSync(log, `${JSON.stringify({ event: canonical.event, key: canonical.idempotencyKey })}\n`);
  return null;
}
