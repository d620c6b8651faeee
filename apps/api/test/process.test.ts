import { logMessages } from '@veetbot/telemetry';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Session } from '@veetbot/client';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../../..', import.meta.url));
const MAIN = 'apps/api/src/main.ts';
const DEMO_KEY = 'vbk_test_process_key_0123456789abcdef';

interface Started {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

const children: ChildProcess[] = [];
const folders: string[] = [];

function start(env: Record<string, string>): Started {
  const base = { ...process.env };
  delete base.DATABASE_URL;
  delete base.VEETBOT_DEMO_API_KEY;
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    cwd: REPO,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => logMessages(text), exited };
}

async function waitFor(started: Started, pattern: RegExp, timeoutMs = 150_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = pattern.exec(started.output());
    if (match) return match[0];
    if (started.child.exitCode !== null) throw new Error(`exited ${started.child.exitCode}:\n${started.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${pattern}:\n${started.output()}`);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'veetbot-main-'));
  folders.push(dir);
  return dir;
}

/** The printed curl line, as fetch arguments: URL, headers, body. */
function parseCurl(line: string): { url: string; headers: Record<string, string>; body: string } {
  const url = /(http:\/\/\S+)/.exec(line)?.[1];
  const headers: Record<string, string> = {};
  for (const m of line.matchAll(/-H '([^:']+): ([^']*)'/g)) headers[m[1]!] = m[2]!;
  const body = /-d '([^']*)'/.exec(line)?.[1];
  if (url === undefined || body === undefined) throw new Error(`not a curl line: ${line}`);
  return { url, headers, body };
}

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of folders) await rm(dir, { recursive: true, force: true });
});

describe('node apps/api/src/main.ts (the embedded default)', () => {
  it('starts on PGlite with the demo key, answers the printed curl line, refuses a busy port, a bad config and a dead database, and drains on SIGTERM', async () => {
    const dataDir = await tempDir();
    const port = await freePort();
    const first = start({ VEETBOT_DATA_DIR: dataDir, VEETBOT_PORT: String(port), VEETBOT_DEMO_API_KEY: DEMO_KEY });
    const curl = await waitFor(first, /^ {2}curl .*$/m);
    expect(first.output()).toContain(`veetbot listening on http://127.0.0.1:${port}`);
    expect(first.output()).toContain('(example written)');
    // The first start says what it is doing while it works (issue 10 item 9): each step is
    // printed as it begins, before the process is listening.
    const progress = [
      /^veetbot starting: api and worker$/m,
      /^ {2}operator configuration: .*operator\.json \(example written\); MCP servers: everything$/m,
      /^ {2}database: PGlite in .*pglite: opening and applying migrations…$/m,
      /^ {2}database: ready \(every migration applied\)$/m,
      /^ {2}tenant: ensuring the demo tenant "demo"…$/m,
      /^veetbot listening on /m,
      /^ {2}MCP warm-up: everything \(one at a time, in the background\)…$/m,
    ].map((pattern) => {
      const at = pattern.exec(first.output())?.index;
      expect(at, `${pattern}\n${first.output()}`).toBeDefined();
      return at!;
    });
    expect([...progress].sort((x, y) => x - y)).toEqual(progress);

    // The printed next step, made with fetch.
    const { url, headers, body } = parseCurl(curl);
    expect(headers.Authorization).toBe(`Bearer ${DEMO_KEY}`);
    expect(first.output()).not.toContain('printed this once'); // a fixed key is the caller's, not a new one
    const response = await fetch(url, { method: 'POST', headers, body });
    expect(response.status).toBe(201);
    const session = (await response.json()) as Session;
    const names = session.tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['math.evaluate', 'demo.external_write', 'workspace.read_text']));
    // The example operator configuration's stdio MCP server (server-everything) was prepared and pinned.
    expect(session.mcp_servers?.map((s) => [s.server_id, s.transport])).toEqual([['everything', 'stdio']]);
    expect(['connected', 'pinned']).toContain(session.mcp_servers?.[0]?.status);
    expect(names).toContain('mcp.everything.echo');
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);

    // The same port again; a broken operator file; a database nobody serves: one line, exit 1, each.
    const busy = start({ VEETBOT_DATA_DIR: await tempDir(), VEETBOT_PORT: String(port) });
    const badDir = await tempDir();
    await mkdir(badDir, { recursive: true });
    await writeFile(
      join(badDir, 'operator.json'),
      JSON.stringify({ mcp: { servers: [{ server_id: 'x', transport: 'carrier-pigeon', endpoint: 'coo', auth_scheme: 'none' }] } }),
    );
    const bad = start({ VEETBOT_DATA_DIR: badDir, VEETBOT_PORT: String(await freePort()) });
    const dead = start({
      VEETBOT_DATA_DIR: await tempDir(),
      VEETBOT_PORT: String(await freePort()),
      DATABASE_URL: 'postgres://veetbot@127.0.0.1:1/veetbot',
    });
    expect(await busy.exited).toBe(1);
    expect(busy.output()).toMatch(new RegExp(`^error startup\\.port_in_use: 127\\.0\\.0\\.1:${port} is already in use`, 'm'));
    expect(await bad.exited).toBe(1);
    expect(bad.output()).toMatch(
      /^error startup\.config_invalid: .*operator\.json at mcp\.servers\[0\]\.transport: mcp\.config\.transport_unknown/m,
    );
    expect(await dead.exited).toBe(1);
    expect(dead.output()).toMatch(
      /^error startup\.database_unreachable: PostgreSQL at postgres:\/\/veetbot@127\.0\.0\.1:1\/veetbot could not be reached\.$/m,
    );
    // One error line each, and it is the last thing printed.
    for (const failed of [busy, bad, dead]) {
      const lines = failed.output().trim().split('\n');
      expect(lines.filter((l) => l.startsWith('error '))).toHaveLength(1);
      expect(lines.at(-1)).toMatch(/^error startup\./);
    }

    // SIGTERM drains and exits 0.
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain('veetbot stopping (SIGTERM)');
  }, 400_000);
});
