import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Run a benchmark's measuring child — a TypeScript file next to this one — in a process of its
 * own with `--expose-gc` (so its memory figures are its work's alone and it can force a full
 * GC), and resolve with the JSON report it prints as its last line of stdout.
 * `extraFlags`: more node flags (e.g. `--no-warnings` for a child that reports warnings itself).
 */
export function runMeasuredChild<T>(file: string, env: Record<string, string>, extraFlags: readonly string[] = []): Promise<T> {
  const child = fileURLToPath(new URL(`./${file}`, import.meta.url));
  return new Promise((resolve, reject) => {
    // process.execArgv carries tsx's loader flags, so the child runs TypeScript the same way.
    const proc = spawn(process.execPath, [...process.execArgv, '--expose-gc', ...extraFlags, child], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (chunk: string) => {
      out += chunk;
    });
    proc.on('error', reject);
    proc.on('exit', (code, signal) => {
      if (code !== 0) return reject(new Error(`${file} exited with ${signal ?? code}`));
      const line = out.trim().split('\n').at(-1) ?? '';
      try {
        resolve(JSON.parse(line) as T);
      } catch {
        reject(new Error(`${file} printed no report: ${out.slice(-500)}`));
      }
    });
  });
}
