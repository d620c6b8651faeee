import { StoreError } from '@veetbot/domain';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { type HarnessFactory, newScene, rowsOf } from './harness';

const sealed = (fill: number, length = 60) => new Uint8Array(length).fill(fill);

/** ADR 0017: the tenant_secrets store (sealed bytes only; the broker seals and opens). */
export function tenantSecretsContract(get: HarnessFactory): void {
  describe('tenant secrets', () => {
    it('put creates, a second put rotates (created_at kept, rotated_at set), bytes round-trip', async () => {
      const h = get();
      const s = await newScene(h);
      const first = await h.stores.tenantSecrets.put(s.tenantId, { name: 'ACME_TOKEN', ciphertext: sealed(1), keyId: 'k1', at: s.t0 });
      expect(first).toEqual({ created: true, secret: { name: 'ACME_TOKEN', createdAt: s.t0, rotatedAt: null } });
      const later = new Date(s.t0.getTime() + 60_000);
      const second = await h.stores.tenantSecrets.put(s.tenantId, {
        name: 'ACME_TOKEN',
        ciphertext: sealed(2, 80),
        keyId: 'k2',
        at: later,
      });
      expect(second).toEqual({ created: false, secret: { name: 'ACME_TOKEN', createdAt: s.t0, rotatedAt: later } });
      const row = await h.stores.tenantSecrets.get(s.tenantId, 'ACME_TOKEN');
      expect(row).toMatchObject({ tenantId: s.tenantId, name: 'ACME_TOKEN', keyId: 'k2', createdAt: s.t0, rotatedAt: later });
      expect(row!.ciphertext).toBeInstanceOf(Uint8Array);
      expect(Buffer.from(row!.ciphertext).equals(Buffer.from(sealed(2, 80)))).toBe(true);
      expect(await h.stores.tenantSecrets.has(s.tenantId, 'ACME_TOKEN')).toBe(true);
      expect(await h.stores.tenantSecrets.has(s.tenantId, 'acme_token')).toBe(false);
    });

    it('list is names and times only, by name; delete says whether a row went', async () => {
      const h = get();
      const s = await newScene(h);
      for (const name of ['b.token', 'A-key', 'C_1'])
        await h.stores.tenantSecrets.put(s.tenantId, { name, ciphertext: sealed(3), keyId: 'k', at: s.t0 });
      const listed = await h.stores.tenantSecrets.list(s.tenantId);
      expect(listed.map((r) => r.name)).toEqual(['A-key', 'C_1', 'b.token']);
      for (const entry of listed) expect(Object.keys(entry).sort()).toEqual(['createdAt', 'name', 'rotatedAt']);
      expect(await h.stores.tenantSecrets.delete(s.tenantId, 'C_1')).toBe(true);
      expect(await h.stores.tenantSecrets.delete(s.tenantId, 'C_1')).toBe(false);
      expect(await h.stores.tenantSecrets.get(s.tenantId, 'C_1')).toBeNull();
    });

    it('rotation: the maintenance listing names other-key rows across tenants (no ciphertext); reseal swaps bytes only from the expected key', async () => {
      const h = get();
      const a = await newScene(h);
      const b = await newScene(h);
      await h.stores.tenantSecrets.put(a.tenantId, { name: 'OLD', ciphertext: sealed(1), keyId: 'old', at: a.t0 });
      await h.stores.tenantSecrets.put(b.tenantId, { name: 'OLD', ciphertext: sealed(2), keyId: 'old', at: b.t0 });
      await h.stores.tenantSecrets.put(a.tenantId, { name: 'NEW', ciphertext: sealed(3), keyId: 'new', at: a.t0 });
      const listed = (await h.stores.tenantSecrets.listNotSealedWith('new')).filter(
        (r) => r.tenantId === a.tenantId || r.tenantId === b.tenantId,
      );
      expect(listed).toEqual(
        expect.arrayContaining([
          { tenantId: a.tenantId, name: 'OLD', keyId: 'old' },
          { tenantId: b.tenantId, name: 'OLD', keyId: 'old' },
        ]),
      );
      expect(listed).toHaveLength(2);
      // The maintenance role may read the identity columns, never the ciphertext.
      await expect(
        h.database.transaction({ role: 'maintenance' }, (tx) => tx.execute(sql`select ciphertext from tenant_secrets`)),
      ).rejects.toSatisfy((e: unknown) => StoreError.isInstance(e));
      expect(await h.stores.tenantSecrets.reseal(a.tenantId, 'OLD', 'stale', { ciphertext: sealed(9), keyId: 'new' })).toBe(false);
      expect(await h.stores.tenantSecrets.reseal(b.tenantId, 'NEW', 'new', { ciphertext: sealed(9), keyId: 'new' })).toBe(false);
      expect(await h.stores.tenantSecrets.reseal(a.tenantId, 'OLD', 'old', { ciphertext: sealed(9), keyId: 'new' })).toBe(true);
      const row = await h.stores.tenantSecrets.get(a.tenantId, 'OLD');
      expect(row).toMatchObject({ keyId: 'new', rotatedAt: null });
      expect(Buffer.from(row!.ciphertext).equals(Buffer.from(sealed(9)))).toBe(true);
      expect((await h.stores.tenantSecrets.get(b.tenantId, 'OLD'))!.keyId).toBe('old');
    });

    it('the table refuses a malformed name and an impossible ciphertext length', async () => {
      const h = get();
      const s = await newScene(h);
      const isConstraint = (e: unknown) => StoreError.isInstance(e) && e.code === 'store.constraint';
      for (const name of ['', '1abc', 'a b', 'x'.repeat(65), 'a/b']) {
        await expect(h.stores.tenantSecrets.put(s.tenantId, { name, ciphertext: sealed(1), keyId: 'k', at: s.t0 }), name).rejects.toSatisfy(
          isConstraint,
        );
      }
      await expect(
        h.stores.tenantSecrets.put(s.tenantId, { name: 'OK', ciphertext: sealed(1, 10), keyId: 'k', at: s.t0 }),
      ).rejects.toSatisfy(isConstraint);
      const rows = await h.database.transaction({ role: 'owner' }, (tx) =>
        tx.execute(sql`select count(*)::int as n from tenant_secrets where tenant_id = ${s.tenantId}`),
      );
      expect(rowsOf(rows)).toEqual([{ n: 0 }]);
    });
  });
}
