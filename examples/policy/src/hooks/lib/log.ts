import { appendFileSync } from 'node:fs';

/** Appends one JSON line to $POLICY_LOG when it is set (tests read it to see hooks fire). */
export function record(hook: string, detail: Record<string, unknown>): void {
  const file = process.env.POLICY_LOG;
  if (file) appendFileSync(file, `${JSON.stringify({ hook, ...detail })}\n`);
}
