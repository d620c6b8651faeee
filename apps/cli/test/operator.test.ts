import { execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createDatabase, createStores, dropDatabase, openDatabase, type Database } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * Issue 10 item 9: `veetbot tenant create`, `veetbot key create`, `veetbot key revoke` — the real
 * CLI in a real process against a PostgreSQL database of its own (DATABASE_URL, as every process
 * reads it), and `veetbot call` without --dry-run saying what to do instead.
 */
const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../../..');
const dataDir = mkdtempSync(join(tmpdir(), 'veetbot-cli-operator-'));
const serverUrl = process.env['DATABASE_URL'];

function freePort(): Promise<number> {
  return new Promise((done) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => done(port));
    });
  });
}

async function veetbot(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && !k.startsWith('VEETBOT_')));
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'apps/cli/src/main.ts', ...args], { cwd: root, env: { ...clean, VEETBOT_DATA_DIR: dataDir, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
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
    const server = spawn(process.execPath, ['--import', 'tsx', 'apps/api/src/main.ts'], { cwd: root, env: { ...clean, ...env, VEETBOT_PORT: String(await freePort()) }, stdio: ['ignore', 'pipe', 'pipe'] });
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

// Registered only with a PostgreSQL server to run on (a skipped test would look green).
if (serverUrl) {
  describe('veetbot tenant / key on PostgreSQL', { timeout: 120_000 }, () => {
    const name = `veetbot_cli_${randomBytes(6).toString('hex')}`;
    let url = '';
    let database: Database;

    beforeAll(async () => {
      url = await createDatabase(serverUrl, name);
    });
    afterAll(async () => {
      await database?.close();
      await dropDatabase(serverUrl, name);
    });

    it('creates a tenant, an agent key without approvals.decide and an approver key with it, each printed once and stored as sha256; revokes them', async () => {
      const env = { DATABASE_URL: url };
      const tenant = await veetbot(env, 'tenant', 'create', 'acme', '--name', 'Acme Corp');
      expect(tenant, tenant.stderr).toMatchObject({ code: 0, stdout: 'tenant acme created\n' });
      expect((await veetbot(env, 'tenant', 'create', 'acme')).stdout).toBe('tenant acme exists (unchanged)\n');

      const agent = await veetbot(env, 'key', 'create', '--tenant', 'acme', '--principal', 'agent', '--scopes', 'workspace.read,workspace.write,mcp.*');
      expect(agent.code, agent.stderr).toBe(0);
      const agentKey = /^ {2}(vbk_\S+)$/m.exec(agent.stdout)?.[1];
      expect(agentKey).toBeDefined();
      expect(agent.stdout).toMatch(/^key [0-9a-f-]{36} for principal agent of tenant acme, scopes workspace\.read,workspace\.write,mcp\.\*$/m);
      const approver = JSON.parse((await veetbot(env, 'key', 'create', '--tenant', 'acme', '--principal', 'approver', '--scopes', 'approvals.decide', '--json')).stdout) as { key: string; key_id: string; scopes: string[] };
      expect(approver.scopes).toEqual(['approvals.decide']);

      database = await openDatabase({ url });
      const stores = createStores(database);
      const sha = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');
      const agentRow = await stores.apiKeys.findByHash(sha(agentKey!));
      expect(agentRow).toMatchObject({ tenantId: 'acme', principalId: 'agent', scopes: ['workspace.read', 'workspace.write', 'mcp.*'], revokedAt: null });
      expect(agentRow?.scopes).not.toContain('approvals.decide');
      expect(await stores.apiKeys.findByHash(sha(approver.key))).toMatchObject({ principalId: 'approver', scopes: ['approvals.decide'] });
      // Only the hash is stored: the key itself appears in no column.
      const rows = await database.transaction({ role: 'owner' }, (tx) => tx.execute(`select * from api_keys` as never));
      expect(JSON.stringify(rows)).toContain(sha(agentKey!));
      expect(JSON.stringify(rows)).not.toContain(agentKey!);

      // Refusals: one line each with a stable code, exit 1; nothing written.
      const unknownTenant = await veetbot(env, 'key', 'create', '--tenant', 'nobody', '--scopes', 'workspace.read');
      expect(unknownTenant).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error provision\.tenant_unknown: There is no tenant "nobody"/) });
      const badScope = await veetbot(env, 'key', 'create', '--tenant', 'acme', '--scopes', 'workspace read');
      expect(badScope).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error provision\.invalid: "workspace read" is not a scope/) });
      const badTenant = await veetbot(env, 'tenant', 'create', '../etc');
      expect(badTenant).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error provision\.invalid: A tenant id/) });
      expect((await veetbot(env, 'key', 'create', '--tenant', 'acme')).code).toBe(2);

      // Revoke by id, and by the key itself.
      const byId = await veetbot(env, 'key', 'revoke', '--tenant', 'acme', '--key-id', approver.key_id);
      expect(byId.code, byId.stderr).toBe(0);
      expect((await stores.apiKeys.findByHash(sha(approver.key)))?.revokedAt).not.toBeNull();
      const byKey = await veetbot(env, 'key', 'revoke', '--key', agentKey!);
      expect(byKey.code, byKey.stderr).toBe(0);
      expect((await stores.apiKeys.findByHash(sha(agentKey!)))?.revokedAt).not.toBeNull();
      expect(await veetbot(env, 'key', 'revoke', '--key', 'vbk_not_a_key_of_anyone_000')).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error provision\.key_unknown/) });
      expect(await veetbot(env, 'key', 'revoke', '--tenant', 'acme', '--key-id', "x' or 1=1 --")).toMatchObject({ code: 1, stderr: expect.stringMatching(/^error provision\.key_unknown/) });
    });
  });
}
