import { record } from '../../../../shared/log.js';
import { containsSecret } from '../../../../shared/redact';

export default (event: { toolInput: { command?: string } }) => {
  const command = event.toolInput.command ?? '';
  if (!containsSecret(command)) return { outcome: 'continue' as const };
  record('guard', 'denied', { command });
  return { outcome: 'deny' as const, reason: 'The command carries a secret token; pass it through the environment instead.' };
};
