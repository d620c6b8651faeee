import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The real @modelcontextprotocol/server-everything from npm (a devDependency), started by path. */
export const EVERYTHING_ENTRY = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'node_modules',
  '@modelcontextprotocol',
  'server-everything',
  'dist',
  'index.js',
);

if (!existsSync(EVERYTHING_ENTRY)) throw new Error(`server-everything is not installed at ${EVERYTHING_ENTRY}; run pnpm install`);

/** Whether a process (or group, with a negative id) still exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
