import { record } from './lib/log.js';

export default (event: { sessionId: string; source?: string }) => {
  record('sessionStart', { session: event.sessionId, source: event.source });
  return { additionalContext: 'The policy plugin is active: dangerous shell commands are denied (marker POLICY_CONTEXT_OK).' };
};
