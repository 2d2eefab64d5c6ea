import { appendFileSync } from 'node:fs';
import { redact } from './redact';

/** One JSON line per event in $MONOREPO_LOG, with secrets masked: every plugin logs alike. */
export function record(plugin: string, event: string, fields: Record<string, unknown>): void {
  const file = process.env.MONOREPO_LOG;
  if (file) appendFileSync(file, JSON.stringify({ plugin, event, ...redact(fields) }) + '\n');
}
