import { appendFileSync } from 'node:fs';
import type { AgentEventRouteProps } from 'agent-bundle';

/** Observation only: records the end of a session, answers nothing. */
export default async function Farewell({ canonical }: AgentEventRouteProps) {
  const log = process.env.ROUTES_LOG;
  if (log) appendFileSync(log, `${JSON.stringify({ event: canonical.event, key: canonical.idempotencyKey })}\n`);
  return null;
}
