import { appendFileSync } from 'node:fs';

interface BeforeToolEvent {
  readonly sessionId: string;
  readonly toolName: string;
  readonly toolInput: Record<string, unknown>;
}

/** Records every tool call in the file named by GUARDED_AUDIT_LOG, and never blocks. */
export default function audit(event: BeforeToolEvent): void {
  const log = process.env.GUARDED_AUDIT_LOG;
  if (log) {
    appendFileSync(log, `${JSON.stringify({ session: event.sessionId, tool: event.toolName })}\n`);
  }
}
