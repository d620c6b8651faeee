import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * docs/adr/0041: `pnpm start` runs the api from built JavaScript. This builds the bundle the way
 * the root scripts do (scripts/build-apps.mjs), starts it with plain `node` — no TypeScript
 * loader anywhere in the process — on the embedded PGlite, and uses it: the migrations (SQL files
 * read at run time) applied, /healthz answering, a session opened with the demo key.
 */
const REPO = fileURLToPath(new URL('../../..', import.meta.url));
const BUNDLE = join(REPO, 'apps/api/dist/main.mjs');
const DEMO_KEY = 'vbk_test_built_start_key_0123456789';

const children: ChildProcess[] = [];
const folders: string[] = [];

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

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

describe('the built api (pnpm start)', () => {
  it('builds, then serves from the bundle under plain node on PGlite', async () => {
    await promisify(execFile)(process.execPath, ['scripts/build-apps.mjs', 'api'], { cwd: REPO });
    const bundle = await readFile(BUNDLE, 'utf8');
    // The workspace's TypeScript is in the bundle; npm packages are imported, not inlined.
    expect(bundle).not.toMatch(/from ["']@veetbot\//);
    expect(bundle).toMatch(/from "file:\/\/\/[^"]*node_modules\/[^"]*hono/);
    expect((await stat(`${BUNDLE}.inputs.json`)).isFile()).toBe(true);

    const dataDir = await mkdtemp(join(tmpdir(), 'veetbot-built-'));
    folders.push(dataDir);
    const port = await freePort();
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && k !== 'NODE_OPTIONS' && !k.startsWith('VEETBOT_')),
    );
    // Run from another folder, so nothing resolves from the working directory by accident.
    const child = spawn(process.execPath, [BUNDLE], {
      cwd: dataDir,
      env: { ...env, VEETBOT_DATA_DIR: dataDir, VEETBOT_PORT: String(port), VEETBOT_DEMO_API_KEY: DEMO_KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));

    const cmdline = (await readFile(`/proc/${child.pid}/cmdline`, 'utf8')).split('\0');
    expect(cmdline.some((arg) => arg.includes('tsx'))).toBe(false);

    const base = `http://127.0.0.1:${port}`;
    let health: Response | null = null;
    const deadline = Date.now() + 150_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`the built api exited ${child.exitCode}:\n${output}`);
      health = await fetch(`${base}/healthz`).catch(() => null);
      if (health?.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(health?.status, output).toBe(200);
    expect(output).toContain('database: ready (every migration applied)');
    // No module of the process came through a TypeScript loader.
    const maps = await readFile(`/proc/${child.pid}/maps`, 'utf8');
    expect(maps).not.toContain('/tsx/');

    const session = await fetch(`${base}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEMO_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: 'built' }),
    });
    expect(session.status).toBe(201);
    const body = (await session.json()) as { tool_names?: string[]; pinned_tools?: unknown };
    expect(JSON.stringify(body)).toContain('math.evaluate');

    child.kill('SIGTERM');
    expect(await new Promise((resolve) => child.once('exit', (code) => resolve(code)))).toBe(0);
  }, 300_000);
});
