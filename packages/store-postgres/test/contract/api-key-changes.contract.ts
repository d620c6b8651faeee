import { randomBytes, randomUUID } from 'node:crypto';
import type { ApiKeyChangeWatcher } from '@veetbot/ports';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { API_KEYS_CHANNEL, decodeApiKeyChange } from '../../src/step-queue/api-key-changes';
import { createStepQueue } from '../../src/step-queue/step-queue';
import type { HarnessFactory, StoreHarness } from './harness';

/** Polls `check` until it holds or `ms` pass; no fixed sleep decides the outcome. */
async function eventually(check: () => boolean, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function newKey(h: StoreHarness): Promise<{ tenantId: string; keyId: string }> {
  const tenantId = `tenant-${randomUUID()}`;
  await h.stores.tenants.create({ id: tenantId, name: 'Keys', createdAt: new Date() });
  const row = await h.stores.apiKeys.create(tenantId, {
    keyHash: randomBytes(32).toString('hex'),
    prefix: 'vbk_test',
    principalId: 'someone',
    scopes: ['demo.write'],
    createdAt: new Date(),
  });
  return { tenantId, keyId: row.id };
}

/**
 * docs/adr/0075: api_keys' trigger notifies every update and delete of a key's row in the
 * transaction that makes it, and the process's one listener hands it to the api's key cache —
 * on PGlite (its own LISTEN, one process) as on PostgreSQL.
 */
export function apiKeyChangesContract(get: HarnessFactory): void {
  describe('api key changes (docs/adr/0075)', () => {
    it('a revocation, any other update and a delete of a key are heard by id; a rolled-back revocation is not', async () => {
      const h = get();
      const queue = await createStepQueue(h.database);
      const heard: (string | null)[] = [];
      const watcher: ApiKeyChangeWatcher = { changed: (keyId) => heard.push(keyId), listening: () => undefined };
      const unwatch = queue.apiKeyChanges.watch(watcher);
      try {
        expect(queue.apiKeyChanges.listening).toBe(true);
        const revoked = await newKey(h);
        const other = await newKey(h);
        // Creating a key is not a change a cache must hear (it holds only keys it has read).
        await h.stores.apiKeys.revoke(revoked.tenantId, revoked.keyId, new Date());
        await eventually(() => heard.includes(revoked.keyId), 5_000);
        expect(heard).not.toContain(other.keyId);

        // A revocation that does not commit tells nobody.
        await h.database
          .tenant(other.tenantId, async (tx) => {
            await tx.execute(sql`update api_keys set revoked_at = now() where id = ${other.keyId}`);
            throw new Error('rolled back');
          })
          .catch(() => undefined);
        // Anything else on the key's row (a rewrite, a rotation in place) and its delete are heard.
        await h.database.tenant(other.tenantId, (tx) =>
          tx.execute(sql`update api_keys set scopes = '[]'::jsonb where id = ${other.keyId}`),
        );
        await eventually(() => heard.includes(other.keyId), 5_000);
        const before = heard.filter((id) => id === other.keyId).length;
        expect(before).toBe(1);
        // The tenant role may not delete a key; the platform's (owner) role may.
        await h.database.transaction({ role: 'owner' }, (tx) => tx.execute(sql`delete from api_keys where id = ${other.keyId}`));
        await eventually(() => heard.filter((id) => id === other.keyId).length === 2, 5_000);
      } finally {
        unwatch();
        await queue.close();
      }
      expect(queue.apiKeyChanges.listening).toBe(false);
    });

    it('a stray notification on the channel is read as "every key", never as a key it does not name', async () => {
      const h = get();
      const queue = await createStepQueue(h.database);
      const heard: (string | null)[] = [];
      const unwatch = queue.apiKeyChanges.watch({ changed: (keyId) => heard.push(keyId), listening: () => undefined });
      try {
        await h.database.statement(sql`select pg_notify(${API_KEYS_CHANNEL}, ${'{"key_id":"not-a-uuid"}'})`);
        await eventually(() => heard.includes(null), 5_000);
      } finally {
        unwatch();
        await queue.close();
      }
      expect(decodeApiKeyChange('{}')).toBeNull();
      expect(decodeApiKeyChange('[1]')).toBeNull();
      expect(decodeApiKeyChange('x'.repeat(10_000))).toBeNull();
      const id = randomUUID();
      expect(decodeApiKeyChange(JSON.stringify({ key_id: id }))).toBe(id);
    });
  });
}
