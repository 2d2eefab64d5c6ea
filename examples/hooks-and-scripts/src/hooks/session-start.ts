// src/hooks/session-start.ts
interface SessionStartEvent {
  readonly cwd?: string;
  readonly sessionId?: string;
  readonly source?: string;
  readonly transcriptPath?: string;
}

export default (event: SessionStartEvent) => ({
  additionalContext: `Run verify-release from ${event.cwd ?? process.cwd()} before publishing.`,
  outcome: 'continue' as const,
});
