import { isAbsolute, relative } from 'node:path';
// JSON modules are bundled as data: the list ships inside each wrapper.
import protectedPaths from './protected.json';

/** Paths a write may never touch, relative to the session's working directory. */
export const PROTECTED: readonly string[] = protectedPaths;

export function isProtected(file: string, cwd: string): boolean {
  const local = isAbsolute(file) ? relative(cwd, file) : file;
  return PROTECTED.some((prefix) => local === prefix || local.startsWith(prefix));
}
