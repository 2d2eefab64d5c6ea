import { record } from './lib/log.js';

/** Asks for one more pass when POLICY_BLOCK_STOP=1, once per stop (never loops). */
export default (event: { stopHookActive: boolean }) => {
  const block = process.env.POLICY_BLOCK_STOP === '1' && !event.stopHookActive;
  record('stop', { reentry: event.stopHookActive, blocked: block });
  return block ? { outcome: 'deny' as const, reason: 'policy: summarize what you changed before stopping (marker POLICY_STOP_OK)' } : undefined;
};
