import { isProtected } from './lib/paths.js';

interface BeforeToolEvent {
  readonly cwd: string;
  readonly toolName: string;
  readonly toolInput: { readonly file_path?: string; readonly command?: string };
}

type Result = { outcome: 'continue' } | { outcome: 'deny'; reason: string };

export default async function guardWrites(event: BeforeToolEvent): Promise<Result> {
  const file = event.toolInput.file_path;
  if (file !== undefined && isProtected(file, event.cwd)) {
    return { outcome: 'deny', reason: `${file} is protected by the guarded plugin` };
  }
  const command = event.toolInput.command ?? '';
  if (/\brm\s+-rf\s+\/(\s|$)/.test(command)) {
    return { outcome: 'deny', reason: 'refusing to remove the file system root' };
  }
  return { outcome: 'continue' };
}
