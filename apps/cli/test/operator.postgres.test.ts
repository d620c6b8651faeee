import { createHash, randomBytes } from 'node:crypto';
import { createDatabase, createStores, dropDatabase, openDatabase, type Database } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { veetbot } from './cli-process';

/**
 * Issue 10 item 9: `veetbot tenant create`, `veetbot key create`, `veetbot key revoke` — the real
 * CLI in a real process against a PostgreSQL database of its own (DATABASE_URL, as every process
 * reads it). Needs PostgreSQL: without DATABASE_URL vitest.config.ts leaves this file out
 * (postgres-only.json) and the summary at the end of `pnpm test` says so (ADR 0026).
 */
const serverUrl = requiredDatabaseUrl();

function requiredDatabaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url)
    throw new Error(
      'DATABASE_URL is not set: this file needs PostgreSQL (postgres-only.json); run it with DATABASE_URL=postgres://postgres@127.0.0.1:5432/test',
    );
  return url;
}

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

    const agent = await veetbot(
      env,
      'key',
      'create',
      '--tenant',
      'acme',
      '--principal',
      'agent',
      '--scopes',
      'workspace.read,workspace.write,mcp.*',
    );
    expect(agent.code, agent.stderr).toBe(0);
    const agentKey = /^ {2}(vbk_\S+)$/m.exec(agent.stdout)?.[1];
    expect(agentKey).toBeDefined();
    expect(agent.stdout).toMatch(
      /^key [0-9a-f-]{36} for principal agent of tenant acme, scopes workspace\.read,workspace\.write,mcp\.\*$/m,
    );
    const approver = JSON.parse(
      (await veetbot(env, 'key', 'create', '--tenant', 'acme', '--principal', 'approver', '--scopes', 'approvals.decide', '--json')).stdout,
    ) as { key: string; key_id: string; scopes: string[] };
    expect(approver.scopes).toEqual(['approvals.decide']);

    database = await openDatabase({ url });
    const stores = createStores(database);
    const sha = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');
    const agentRow = await stores.apiKeys.findByHash(sha(agentKey!));
    expect(agentRow).toMatchObject({
      tenantId: 'acme',
      principalId: 'agent',
      scopes: ['workspace.read', 'workspace.write', 'mcp.*'],
      revokedAt: null,
    });
    expect(agentRow?.scopes).not.toContain('approvals.decide');
    expect(await stores.apiKeys.findByHash(sha(approver.key))).toMatchObject({ principalId: 'approver', scopes: ['approvals.decide'] });
    // Only the hash is stored: the key itself appears in no column.
    const rows = await database.transaction({ role: 'owner' }, (tx) => tx.execute(`select * from api_keys` as never));
    expect(JSON.stringify(rows)).toContain(sha(agentKey!));
    expect(JSON.stringify(rows)).not.toContain(agentKey!);

    // Refusals: one line each with a stable code, exit 1; nothing written.
    const unknownTenant = await veetbot(env, 'key', 'create', '--tenant', 'nobody', '--scopes', 'workspace.read');
    expect(unknownTenant).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^error provision\.tenant_unknown: There is no tenant "nobody"/),
    });
    const badScope = await veetbot(env, 'key', 'create', '--tenant', 'acme', '--scopes', 'workspace read');
    expect(badScope).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^error provision\.invalid: "workspace read" is not a scope/),
    });
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
    expect(await veetbot(env, 'key', 'revoke', '--key', 'vbk_not_a_key_of_anyone_000')).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^error provision\.key_unknown/),
    });
    expect(await veetbot(env, 'key', 'revoke', '--tenant', 'acme', '--key-id', "x' or 1=1 --")).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^error provision\.key_unknown/),
    });
  });
});
