import { logMessages } from '@veetbot/telemetry';
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The real worker process (`node --import tsx apps/worker/src/main.ts`) for the worker's tests. */
export const REPO = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const MAIN = join(REPO, 'apps/worker/src/main.ts');

export interface Exited {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface Started {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  readonly exited: Promise<Exited>;
}

export function startWorker(env: Record<string, string>): Started {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && !k.startsWith('VEETBOT_')));
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    cwd: REPO,
    env: { ...clean, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<Exited>((done) => child.on('exit', (code, signal) => done({ code, signal })));
  return { child, stdout: () => logMessages(out), stderr: () => logMessages(err), exited };
}

export async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
