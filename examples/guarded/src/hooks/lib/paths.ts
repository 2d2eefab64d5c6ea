import { isAbsolute, relative } from 'node:path';

/** Paths a write may never touch, relative to the session's working directory. */
export const PROTECTED = ['.git/', '.env', 'package-lock.json'] as const;

export function isProtected(file: string, cwd: string): boolean {
  const local = isAbsolute(file) ? relative(cwd, file) : file;
  return PROTECTED.some((prefix) => local === prefix || local.startsWith(prefix));
}
