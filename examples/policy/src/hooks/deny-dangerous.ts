import { record } from './lib/log.js';
import { denial } from './lib/rules.js';

interface BeforeTool {
  readonly toolName: string;
  readonly toolInput: { readonly command?: unknown; readonly cmd?: unknown };
}

export default async (event: BeforeTool) => {
  const command = String(event.toolInput.command ?? event.toolInput.cmd ?? '');
  const reason = denial(command);
  record('beforeTool', { tool: event.toolName, command, denied: reason !== undefined });
  return reason === undefined ? { outcome: 'continue' as const } : { outcome: 'deny' as const, reason };
};
