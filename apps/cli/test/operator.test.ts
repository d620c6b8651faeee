import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root, veetbot } from './cli-process';

/**
 * Issue 10 item 9: `veetbot tenant create`, `veetbot key create`, `veetbot key revoke` — the real
 * CLI in a real process against a PostgreSQL database of its own (DATABASE_URL, as every process
 * reads it: operator.postgres.test.ts, PostgreSQL only), and `veetbot call` without --dry-run
 * saying what to do instead.
 */
function freePort(): Promise<number> {
  return new Promise((done) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => done(port));
    });
  });
}

describe('veetbot call without --dry-run', () => {
  it('says how to run a call for real, not that the API has not landed', async () => {
    const { code, stderr } = await veetbot({}, 'call', 'math.evaluate', '--args', '{"expression":"1"}');
    expect(code).toBe(2);
    expect(stderr).not.toMatch(/land/);
    expect(stderr).toContain('pnpm start');
  }, 60_000);
});

describe('veetbot key create on the embedded PGlite while `pnpm start` holds it', () => {
  it('refuses with startup.database_in_use naming the holder, and works once it has stopped', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'veetbot-cli-pglite-'));
    const env = { VEETBOT_DATA_DIR: folder };
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && !k.startsWith('VEETBOT_')));
    // The server, as `pnpm start` runs it, on a free port and this data folder.
    const server = spawn(process.execPath, ['--import', 'tsx', 'apps/api/src/main.ts'], {
      cwd: root,
      env: { ...clean, ...env, VEETBOT_PORT: String(await freePort()) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    server.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
    server.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
    const exited = new Promise<number | null>((done) => server.once('exit', (code) => done(code)));
    try {
      while (!/veetbot listening on /.test(output)) {
        if (server.exitCode !== null) throw new Error(output);
        await new Promise((r) => setTimeout(r, 100));
      }
      const refused = await veetbot(env, 'tenant', 'create', 'acme');
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(new RegExp(`^error startup\\.database_in_use: PGlite in .*pglite is open in process ${server.pid} `));
      server.kill('SIGTERM');
      expect(await exited).toBe(0);
      const created = await veetbot(env, 'tenant', 'create', 'acme');
      expect(created, created.stderr).toMatchObject({ code: 0, stdout: 'tenant acme created\n' });
    } finally {
      if (server.exitCode === null) server.kill('SIGKILL');
      rmSync(folder, { recursive: true, force: true });
    }
  }, 240_000);
});
