import { execFileSync } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { BubblewrapSandbox } from '../src/index';
import { makeDataDir, sh } from './sandbox-fixture';

// docs/adr/0037: each limit ends the run with its own typed ending, quickly, and leaves
// nothing behind. A marker in argv ($0 of the shell) lets pgrep find any survivor.
const data = makeDataDir();
const sandbox = new BubblewrapSandbox({ stateDir: data.stateDir, workspaceRoot: data.workspaceRoot });
afterAll(() => data.cleanup());

function survivors(marker: string): string {
  try {
    return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' }).trim();
  } catch {
    return ''; // pgrep exits 1 when nothing matches
  }
}

async function marked(script: string, marker: string, limits: Parameters<typeof sh>[3]) {
  return sandbox.run(
    {
      argv: ['/bin/sh', '-c', script, marker],
      workspaceHostPath: data.workspace,
      limits: { wallSeconds: 10, cpuSeconds: 5, memoryBytes: 512 * 1024 * 1024, processes: 64, outputBytes: 1024 * 1024, ...limits },
    },
    new AbortController().signal,
  );
}

describe('limits', () => {
  it('a fork bomb ends at the process limit, quickly, leaving no process', async () => {
    const marker = `veetbot-forkbomb-${process.pid}`;
    const started = Date.now();
    const result = await marked('f(){ f | f; }; f', marker, { processes: 32, wallSeconds: 5 });
    expect(result.ending).toBe('process_limit');
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(survivors(marker)).toBe('');
  });

  it('the process limit holds: a program cannot start more processes than allowed', async () => {
    // Forks until refused, then counts every process in the sandbox's PID namespace.
    const program = [
      'import os, time',
      'refused = False',
      'for _ in range(64):',
      '    try:',
      '        if os.fork() == 0:',
      '            time.sleep(5)',
      '            os._exit(0)',
      '    except BlockingIOError:',
      '        refused = True',
      '        break',
      'print(refused, len([p for p in os.listdir("/proc") if p.isdigit()]), flush=True)',
      'os.killpg(0, 9)',
    ].join('\n');
    const result = await sandbox.run(
      {
        argv: ['/usr/bin/python3', '-c', program],
        workspaceHostPath: data.workspace,
        limits: { wallSeconds: 10, cpuSeconds: 5, memoryBytes: 512 * 1024 * 1024, processes: 16, outputBytes: 4096 },
      },
      new AbortController().signal,
    );
    const [refused, count] = result.stdout.text.trim().split(' ');
    expect(refused).toBe('True');
    // bwrap's init and python among them: never more than the limit.
    expect(Number(count)).toBeGreaterThan(2);
    expect(Number(count)).toBeLessThanOrEqual(16);
  });

  it('an infinite loop ends at the CPU limit', async () => {
    const result = await marked('while :; do :; done', `veetbot-loop-${process.pid}`, { cpuSeconds: 1 });
    expect(result.ending).toBe('cpu_limit');
    expect(result.durationMs).toBeLessThan(6_000);
  });

  it('a 2 GB allocation ends at the memory limit', async () => {
    const result = await sandbox.run(
      {
        argv: ['/usr/bin/python3', '-c', 'b = bytearray(2 * 1024 ** 3); print("allocated")'],
        workspaceHostPath: data.workspace,
        limits: { wallSeconds: 10, cpuSeconds: 5, memoryBytes: 256 * 1024 * 1024, processes: 16, outputBytes: 65_536 },
      },
      new AbortController().signal,
    );
    expect(result.ending).toBe('memory_limit');
    expect(result.stdout.text).not.toContain('allocated');
  });

  it('100 MB of stdout ends at the output limit with at most the limit kept', async () => {
    const marker = `veetbot-flood-${process.pid}`;
    const result = await marked('head -c 100000000 /dev/zero | tr "\\0" x', marker, { outputBytes: 1024 * 1024 });
    expect(result.ending).toBe('output_limit');
    expect(result.stdout.truncated).toBe(true);
    expect(Buffer.byteLength(result.stdout.text) + Buffer.byteLength(result.stderr.text)).toBeLessThanOrEqual(1024 * 1024);
    expect(result.stdout.totalBytes).toBeGreaterThan(1024 * 1024);
    expect(result.stdout.totalBytes).toBeLessThan(100_000_000);
    expect(survivors(marker)).toBe('');
  });

  it('the wall clock ends a program that sleeps, and an abort ends it at once', async () => {
    const slept = await marked('sleep 60', `veetbot-sleep-${process.pid}`, { wallSeconds: 1 });
    expect(slept.ending).toBe('timed_out');
    expect(slept.durationMs).toBeLessThan(5_000);

    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const aborted = await sandbox.run(
      {
        argv: ['/bin/sleep', '60'],
        workspaceHostPath: data.workspace,
        limits: { wallSeconds: 30, cpuSeconds: 5, memoryBytes: 256 * 1024 * 1024, processes: 16, outputBytes: 4096 },
      },
      controller.signal,
    );
    expect(aborted.ending).toBe('cancelled');
    expect(aborted.durationMs).toBeLessThan(5_000);
  });

  it('after every limit the worker is healthy: a plain program still runs', async () => {
    const result = await sh(sandbox, data.workspace, 'echo healthy; exit 7', {}, new AbortController().signal);
    expect(result).toMatchObject({ ending: 'exited', exitCode: 7, signal: null });
    expect(result.stdout.text).toBe('healthy\n');
    expect(process.memoryUsage().rss).toBeLessThan(1024 * 1024 * 1024);
  });
});

describe('availability and start failures', () => {
  it('says what is missing when bwrap is not installed, and runs nothing', async () => {
    const missing = new BubblewrapSandbox({ stateDir: data.stateDir, bwrapPath: '/nonexistent/bwrap' });
    const availability = await missing.availability();
    expect(availability).toEqual({ available: false, reason: expect.stringContaining('bubblewrap') });
    const result = await sh(missing, data.workspace, 'echo never');
    expect(result.ending).toBe('failed_to_start');
    expect(result.stdout.text).toBe('');
  });

  it('a workspace that does not exist fails to start', async () => {
    const result = await sh(sandbox, `${data.root}/no-such-workspace`, 'echo never');
    expect(result.ending).toBe('failed_to_start');
    expect(result.detail).toContain('workspace');
  });
});

describe('a private data folder', () => {
  it('under a root worker, is named as what the sandbox’s host user cannot traverse; otherwise it is the worker’s own', async () => {
    const closed = makeDataDir();
    chmodSync(closed.root, 0o700);
    try {
      const sandbox = new BubblewrapSandbox({ stateDir: closed.stateDir, workspaceRoot: closed.workspaceRoot });
      const availability = await sandbox.availability();
      if (process.getuid?.() === 0) {
        expect(availability).toEqual({ available: false, reason: expect.stringContaining(`${closed.root} is not traversable`) });
      } else {
        // A non-root worker runs bwrap as itself: its own 0700 folder is reachable.
        expect(availability).toEqual({ available: true });
      }
    } finally {
      closed.cleanup();
    }
  });
});

describe('binary output', () => {
  it('NUL bytes a program prints reach the text as U+FFFD (storable), its other bytes kept', async () => {
    const result = await marked("printf 'a\\000b\\377c'", `veetbot-binary-${process.pid}`, {});
    expect(result.ending).toBe('exited');
    expect(result.stdout.totalBytes).toBe(5);
    expect(result.stdout.text).not.toContain('\u0000');
    expect(result.stdout.text).toBe('a\uFFFDb\uFFFDc');
  });
});
