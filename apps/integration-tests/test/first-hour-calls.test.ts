import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, REPO } from '../src/e2e-processes';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Issue 30, "done when": a fresh start — as root and as a normal user — goes from the README's
 * start command to a sandboxed call and an MCP call with no step by hand. The built api (what
 * `pnpm start` runs) on a data folder it makes itself (`./.veetbot` in a fresh folder, as in a
 * fresh clone), then over HTTP with the demo key: `sandbox.run_command` writes a file,
 * `workspace.read_text` reads it back through the confined helper (docs/adr/0058), and the
 * operator's stdio MCP server answers `mcp.everything.echo`. As root, nothing in the data folder
 * is made readable or writable by others: the data folder itself gets search permission only.
 */

const BUNDLE = path.join(REPO, 'apps/api/dist/main.mjs');
const KEY = 'vbk_first_hour_calls_0123456789abcdef';
const ROOT = process.getuid?.() === 0;

const children: ChildProcess[] = [];
const folders: string[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

interface Item {
  readonly tool_name: string;
  readonly outcome: { readonly status: string; readonly reason_code?: string | null };
  readonly content?: readonly { readonly type: string; readonly text?: string }[];
}

let built: Promise<unknown> | undefined;

async function firstHour(asUser: number | null): Promise<{ items: Item[]; output: string; dataDir: string }> {
  // What `pnpm start` does first: rebuild the bundle when a source is newer (docs/adr/0041).
  built ??= promisify(execFile)(process.execPath, ['scripts/build-apps.mjs', '--if-stale', 'api'], { cwd: REPO });
  await built;
  const home = mkdtempSync(path.join(tmpdir(), 'veetbot-first-hour-'));
  folders.push(home);
  // The fresh clone's folder, where `pnpm start` makes `./.veetbot` itself.
  chmodSync(home, 0o755);
  const port = await freePort();
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && k !== 'NODE_OPTIONS' && !k.startsWith('VEETBOT_')),
  );
  const command = asUser === null ? process.execPath : 'setpriv';
  const args =
    asUser === null ? [BUNDLE] : ['--reuid', String(asUser), '--regid', String(asUser), '--clear-groups', process.execPath, BUNDLE];
  if (asUser !== null) chownSync(home, asUser, asUser);
  const child = spawn(command, args, {
    cwd: home,
    env: { ...env, HOME: home, VEETBOT_PORT: String(port), VEETBOT_DEMO_API_KEY: KEY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the api exited ${child.exitCode}:\n${output}`);
    if ((await fetch(`${base}/healthz`).catch(() => null))?.status === 200 && output.includes('MCP warm-up')) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect(output).toContain('sandbox: bubblewrap ready');
  const call = async (route: string, body: unknown) => {
    const response = await fetch(`${base}${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    expect(response.status, text).toBeLessThan(300);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const session = await call('/v1/sessions', { agent_id: 'first-hour' });
  const run = await call('/v1/runs', { session_id: session.id, deadline_seconds: 120 });
  const step = await call(`/v1/runs/${String(run.id)}/steps`, {
    step_number: 1,
    calls: [
      {
        call_id: 'program',
        tool_name: 'sandbox.run_command',
        arguments: { argv: ['/bin/sh', '-c', 'echo from-the-sandbox > note.txt && cat note.txt'] },
        context_trust: ['user'],
      },
    ],
    wait_seconds: 30,
  });
  const second = await call(`/v1/runs/${String(run.id)}/steps`, {
    step_number: 2,
    calls: [
      { call_id: 'read', tool_name: 'workspace.read_text', arguments: { path: 'note.txt' }, context_trust: ['user'] },
      { call_id: 'echo', tool_name: 'mcp.everything.echo', arguments: { message: 'hello from the first hour' }, context_trust: ['user'] },
    ],
    wait_seconds: 30,
  });
  child.kill('SIGTERM');
  expect(await new Promise((resolve) => child.once('exit', (code) => resolve(code)))).toBe(0);
  return { items: [...(step.items as Item[]), ...(second.items as Item[])], output, dataDir: path.join(home, '.veetbot') };
}

function expectCalls(items: Item[], output: string): void {
  const by = new Map(items.map((item) => [item.tool_name, item]));
  for (const name of ['sandbox.run_command', 'workspace.read_text', 'mcp.everything.echo']) {
    expect(by.get(name)?.outcome.status, `${name}: ${JSON.stringify(by.get(name))}\n${output}`).toBe('succeeded');
  }
  expect(JSON.stringify(by.get('sandbox.run_command')?.content)).toContain('from-the-sandbox');
  expect(JSON.stringify(by.get('workspace.read_text')?.content)).toContain('from-the-sandbox');
  expect(JSON.stringify(by.get('mcp.everything.echo')?.content)).toContain('hello from the first hour');
}

/** Root tests both a root start and a normal user's; a normal user tests its own. */
const STARTS: { readonly who: string; readonly asUser: number | null; readonly root: boolean }[] = ROOT
  ? [
      { who: 'as root', asUser: null, root: true },
      { who: 'as a normal user (uid 65534, its own fresh folder)', asUser: 65534, root: false },
    ]
  : [{ who: 'as a normal user', asUser: null, root: false }];

describe('the first hour: a sandboxed call and an MCP call from a fresh start (issue 30)', () => {
  it.each(STARTS)(
    '$who: no step by hand; the data folder searchable only, never readable or writable by others',
    async ({ asUser, root }) => {
      const { items, output, dataDir } = await firstHour(asUser);
      expectCalls(items, output);
      expect(output).not.toMatch(/not traversable/);
      // A root worker's sandbox user needs search permission on the data folder (docs/adr/0058);
      // nothing else of it is open to others.
      expect(statSync(dataDir).mode & 0o077).toBe(root ? 0o001 : 0);
    },
    180_000,
  );
});
