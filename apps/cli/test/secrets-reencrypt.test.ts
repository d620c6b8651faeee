import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { SealedMcpTokenStore, SecretKeyring, secretKey, decodeSecretKey } from '@veetbot/credential-broker';
import { createStores, migrate, openDatabase } from '@veetbot/store-postgres';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../../..');
const folders: string[] = [];
afterAll(async () => {
  for (const dir of folders) await rm(dir, { recursive: true, force: true });
});

async function veetbot(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'DATABASE_URL' && !k.startsWith('VEETBOT_')));
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'apps/cli/src/main.ts', ...args], {
      cwd: root,
      env: { ...base, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('veetbot secrets reencrypt (ADR 0017 key rotation)', { timeout: 120_000 }, () => {
  it('re-seals old-key secrets under the new key; the old key is then no longer needed; values never printed', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'veetbot-reencrypt-'));
    folders.push(dataDir);
    const oldText = randomBytes(32).toString('base64');
    const newText = randomBytes(32).toString('base64');
    const oldRing = new SecretKeyring(decodeSecretKey(oldText, 'old'));
    const lost = new SecretKeyring(secretKey(randomBytes(32)));
    const value = `value-${randomBytes(8).toString('hex')}`;

    const database = await openDatabase({ dataDir: join(dataDir, 'pglite') });
    await migrate(database);
    const stores = createStores(database);
    await stores.tenants.create({ id: 'tenant-r', name: 'r', createdAt: new Date() });
    await stores.tenantSecrets.put('tenant-r', {
      name: 'TOKEN',
      ...oldRing.seal({ tenantId: 'tenant-r', name: 'TOKEN' }, value),
      at: new Date(),
    });
    await stores.tenantSecrets.put('tenant-r', {
      name: 'LOST',
      ...lost.seal({ tenantId: 'tenant-r', name: 'LOST' }, 'gone'),
      at: new Date(),
    });
    // docs/adr/0080: a delegated MCP grant sealed with the old key is re-sealed too.
    const accessToken = `at-${randomBytes(8).toString('hex')}`;
    const grantOwner = { tenantId: 'tenant-r', principalId: 'alice', serverId: 'docs' };
    const grant = {
      accessToken,
      refreshToken: null,
      tokenType: 'Bearer',
      expiresAt: null,
      scope: null,
      issuer: 'https://auth.example.com',
    };
    await new SealedMcpTokenStore(stores.mcpDelegatedGrants, oldRing).save(grantOwner, grant);
    await database.close();

    // No key anywhere: refused, and no key file is generated.
    const none = await veetbot({ VEETBOT_DATA_DIR: dataDir }, 'secrets', 'reencrypt');
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('credential.key_missing');

    const result = await veetbot(
      { VEETBOT_DATA_DIR: dataDir, VEETBOT_SECRETS_KEY: newText, VEETBOT_SECRETS_PREVIOUS_KEYS: oldText },
      'secrets',
      'reencrypt',
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^re-encrypted 1 secret\(s\) under key [0-9a-f]{16}; 0 changed meanwhile; 1 unreadable$/m);
    expect(result.stderr).toContain(`tenant-r/LOST: sealed with key ${lost.current.id}: credential.key_unknown`);
    expect(result.stdout + result.stderr).not.toContain(value);
    expect(result.stdout).toMatch(/^re-encrypted 1 MCP grant\(s\); 0 changed meanwhile; 0 unreadable$/m);
    expect(result.stdout + result.stderr).not.toContain(accessToken);

    const reopened = await openDatabase({ dataDir: join(dataDir, 'pglite') });
    try {
      const row = (await createStores(reopened).tenantSecrets.get('tenant-r', 'TOKEN'))!;
      const newOnly = new SecretKeyring(decodeSecretKey(newText, 'new'));
      expect(row.keyId).toBe(newOnly.current.id);
      expect(row.rotatedAt).toBeNull();
      expect(newOnly.open({ tenantId: 'tenant-r', name: 'TOKEN' }, row)).toBe(value);
      expect(await new SealedMcpTokenStore(createStores(reopened).mcpDelegatedGrants, newOnly).load(grantOwner)).toEqual(grant);
    } finally {
      await reopened.close();
    }
  });
});
