import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

/** The real CLI in a real process (`node --import tsx apps/cli/src/main.ts`), for the operator tests. */
const run = promisify(execFile);
export const root = resolve(import.meta.dirname, '../../..');
const dataDir = mkdtempSync(join(tmpdir(), 'veetbot-cli-operator-'));

export async function veetbot(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && !k.startsWith('VEETBOT_')));
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'apps/cli/src/main.ts', ...args], {
      cwd: root,
      env: { ...clean, VEETBOT_DATA_DIR: dataDir, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
