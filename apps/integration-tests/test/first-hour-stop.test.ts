import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { freePort, logMessages, REPO } from '../src/e2e-processes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue 30 item 4 (docs/adr/0057): a clean stop is not a failure. The built api (`pnpm start`'s
 * process, on PGlite in a temp data folder) drained by SIGTERM or SIGINT exits 0 — and so does
 * `pnpm start` itself when the terminal's Ctrl-C (SIGINT to the whole foreground process group)
 * or a service manager's SIGTERM to the group stops it: the start script `exec`s the process,
 * so no shell sits between pnpm and it to die of the signal and make pnpm print
 * `ELIFECYCLE Command failed`. A stop that could not drain exits 1.
 */
const BUNDLE = 'apps/api/dist/main.mjs';
const DEMO_KEY = 'vbk_test_first_hour_stop_0123456789';

interface Started {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

const children: ChildProcess[] = [];
let dataDir: string;
let baseEnv: Record<string, string>;

beforeAll(() => {
  // The bundle as `pnpm start` builds it.
  execFileSync(process.execPath, ['scripts/build-apps.mjs', '--if-stale', 'api'], { cwd: REPO });
  dataDir = mkdtempSync(join(tmpdir(), 'veetbot-stop-'));
  baseEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && k !== 'DATABASE_URL' && k !== 'NODE_OPTIONS' && !k.startsWith('VEETBOT_') && !k.startsWith('npm_'))
      baseEnv[k] = v;
}, 120_000);

afterAll(() => {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  }
  rmSync(dataDir, { recursive: true, force: true });
});

/** Started in a process group of its own (as a terminal's foreground job is), so the test can signal the group. */
function start(command: string, args: string[], env: Record<string, string>): Started {
  const child = spawn(command, args, { cwd: REPO, env: { ...baseEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  children.push(child);
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => logMessages(text), exited };
}

async function waitFor(started: Started, pattern: RegExp, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (pattern.test(started.output())) return;
    if (started.child.exitCode !== null) throw new Error(`exited ${started.child.exitCode}:\n${started.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${pattern}:\n${started.output()}`);
}

async function api(port: number, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { Authorization: `Bearer ${DEMO_KEY}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

describe('stopping veetbot', () => {
  it('node apps/api/dist/main.mjs: SIGTERM once listening drains and exits 0', async () => {
    const port = await freePort();
    const started = start(process.execPath, [BUNDLE], {
      VEETBOT_DATA_DIR: dataDir,
      VEETBOT_PORT: String(port),
      VEETBOT_DEMO_API_KEY: DEMO_KEY,
    });
    await waitFor(started, /^veetbot listening on /m);
    started.child.kill('SIGTERM');
    expect(await started.exited, started.output()).toBe(0);
    expect(started.output()).toContain('veetbot stopping (SIGTERM)');
    expect(started.output()).toContain('drained; leases released; exiting');
  }, 180_000);

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`pnpm start: ${signal} to its process group (${signal === 'SIGINT' ? 'Ctrl-C' : 'a service manager'}) drains, and pnpm exits 0 without ELIFECYCLE`, async () => {
      const pnpm = execFileSync('npx', ['-y', '-p', 'pnpm@10.34.8', 'sh', '-c', 'command -v pnpm'], { encoding: 'utf8' }).trim();
      const port = await freePort();
      const started = start(pnpm, ['start'], {
        PATH: `${dirname(pnpm)}${delimiter}${process.env.PATH ?? ''}`,
        VEETBOT_DATA_DIR: dataDir,
        VEETBOT_PORT: String(port),
        VEETBOT_DEMO_API_KEY: DEMO_KEY,
      });
      await waitFor(started, /^veetbot listening on /m);
      // Every process of the job gets it, as from a terminal: pnpm, and whatever it started.
      process.kill(-started.child.pid!, signal);
      expect(await started.exited, started.output()).toBe(0);
      expect(started.output()).toContain(`veetbot stopping (${signal})`);
      expect(started.output()).toContain('drained; leases released; exiting');
      expect(started.output()).not.toContain('ELIFECYCLE');
      expect(started.output()).not.toContain('Command failed');
    }, 180_000);
  }

  it('a stop whose drain times out exits 1 (a batch still in flight)', async () => {
    const port = await freePort();
    const started = start(process.execPath, [BUNDLE], {
      VEETBOT_DATA_DIR: dataDir,
      VEETBOT_PORT: String(port),
      VEETBOT_DEMO_API_KEY: DEMO_KEY,
      VEETBOT_WORKER_DRAIN_MS: '200',
    });
    await waitFor(started, /^veetbot listening on /m);
    const session = await api(port, 'POST', '/v1/sessions', { agent_id: 'stop' });
    expect(session.status, JSON.stringify(session.json)).toBe(201);
    // A program that runs for a minute (the operator's example server no longer offers its
    // long-running tool: docs/adr/0052).
    const tool = 'sandbox.run_command';
    expect(JSON.stringify(session.json.tools)).toContain(tool);
    const run = await api(port, 'POST', '/v1/runs', { session_id: session.json.id, deadline_seconds: 600 });
    expect(run.status, JSON.stringify(run.json)).toBe(201);
    const runId = run.json.id as string;
    // A call that runs for a minute: still in flight whenever the signal comes.
    const step = await api(port, 'POST', `/v1/runs/${runId}/steps`, {
      step_number: 1,
      calls: [
        { call_id: 'long', tool_name: tool, arguments: { argv: ['/bin/sleep', '60'], timeout_seconds: 90 }, context_trust: ['user'] },
      ],
      wait_seconds: 0,
    });
    expect(step.status, JSON.stringify(step.json)).toBe(202);
    // The worker has it once the step is running.
    const deadline = Date.now() + 60_000;
    let status = '';
    while (Date.now() < deadline && status !== 'running') {
      status = ((await api(port, 'GET', `/v1/runs/${runId}/steps/1`)).json.status as string) ?? '';
      if (status !== 'running') await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe('running');
    started.child.kill('SIGTERM');
    expect(await started.exited, started.output()).toBe(1);
    expect(started.output()).toMatch(/veetbot stopping \(SIGTERM\): draining 1 batch\(es\)/);
    expect(started.output()).toContain('drain timed out: 1 batch(es) abandoned');
  }, 180_000);
});
