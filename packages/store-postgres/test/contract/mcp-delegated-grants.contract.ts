import { StoreError } from '@veetbot/domain';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { type HarnessFactory, newScene } from './harness';

const sealed = (fill: number, length = 60) => new Uint8Array(length).fill(fill);
const ISSUER = 'https://auth.example.com';

/** docs/adr/0080: the per-principal delegated grant store (sealed bytes only; the broker seals and opens). */
export function mcpDelegatedGrantsContract(get: HarnessFactory): void {
  describe('mcp delegated grants', () => {
    it('put creates, a second put replaces (created_at kept, updated_at moved), bytes round-trip', async () => {
      const h = get();
      const s = await newScene(h);
      const grants = h.stores.mcpDelegatedGrants;
      const expiresAt = new Date(s.t0.getTime() + 3_600_000);
      await grants.put(s.tenantId, {
        principalId: 'alice',
        serverId: 'acme',
        ciphertext: sealed(1),
        keyId: 'k1',
        issuer: ISSUER,
        expiresAt,
        at: s.t0,
      });
      const later = new Date(s.t0.getTime() + 60_000);
      await grants.put(s.tenantId, {
        principalId: 'alice',
        serverId: 'acme',
        ciphertext: sealed(2, 80),
        keyId: 'k2',
        issuer: ISSUER,
        expiresAt: null,
        at: later,
      });
      const row = await grants.get(s.tenantId, 'alice', 'acme');
      expect(row).toMatchObject({
        tenantId: s.tenantId,
        principalId: 'alice',
        serverId: 'acme',
        keyId: 'k2',
        issuer: ISSUER,
        expiresAt: null,
      });
      expect(row!.createdAt).toEqual(s.t0);
      expect(row!.updatedAt).toEqual(later);
      expect(Buffer.from(row!.ciphertext).equals(Buffer.from(sealed(2, 80)))).toBe(true);
    });

    it("one principal's grant is not another's: get, list and delete name the principal", async () => {
      const h = get();
      const s = await newScene(h);
      const grants = h.stores.mcpDelegatedGrants;
      for (const [principalId, serverId] of [
        ['alice', 'zeta'],
        ['alice', 'acme'],
        ['bob', 'acme'],
      ] as const)
        await grants.put(s.tenantId, {
          principalId,
          serverId,
          ciphertext: sealed(3),
          keyId: 'k',
          issuer: ISSUER,
          expiresAt: null,
          at: s.t0,
        });
      const listed = await grants.list(s.tenantId, 'alice');
      expect(listed.map((g) => g.serverId)).toEqual(['acme', 'zeta']);
      for (const entry of listed) expect(Object.keys(entry).sort()).toEqual(['createdAt', 'expiresAt', 'issuer', 'serverId', 'updatedAt']);
      expect(await grants.get(s.tenantId, 'carol', 'acme')).toBeNull();
      expect(await grants.delete(s.tenantId, 'carol', 'acme')).toBe(false);
      expect(await grants.delete(s.tenantId, 'alice', 'acme')).toBe(true);
      expect(await grants.delete(s.tenantId, 'alice', 'acme')).toBe(false);
      expect(await grants.get(s.tenantId, 'alice', 'acme')).toBeNull();
      expect(await grants.get(s.tenantId, 'bob', 'acme')).not.toBeNull();
    });

    it('rotation: maintenance lists identity columns only (never the ciphertext); reseal swaps bytes only from the expected key', async () => {
      const h = get();
      const s = await newScene(h);
      const grants = h.stores.mcpDelegatedGrants;
      await grants.put(s.tenantId, {
        principalId: 'alice',
        serverId: 'acme',
        ciphertext: sealed(1),
        keyId: 'old',
        issuer: ISSUER,
        expiresAt: null,
        at: s.t0,
      });
      const listed = (await grants.listNotSealedWith('new')).filter((r) => r.tenantId === s.tenantId);
      expect(listed).toEqual([{ tenantId: s.tenantId, principalId: 'alice', serverId: 'acme', keyId: 'old' }]);
      await expect(
        h.database.transaction({ role: 'maintenance' }, (tx) => tx.execute(sql`select ciphertext from mcp_delegated_grants`)),
      ).rejects.toSatisfy((e: unknown) => StoreError.isInstance(e));
      expect(await grants.reseal(s.tenantId, 'alice', 'acme', 'stale', { ciphertext: sealed(9), keyId: 'new' })).toBe(false);
      expect(await grants.reseal(s.tenantId, 'bob', 'acme', 'old', { ciphertext: sealed(9), keyId: 'new' })).toBe(false);
      expect(await grants.reseal(s.tenantId, 'alice', 'acme', 'old', { ciphertext: sealed(9), keyId: 'new' })).toBe(true);
      const row = await grants.get(s.tenantId, 'alice', 'acme');
      expect(row!.keyId).toBe('new');
      expect(Buffer.from(row!.ciphertext).equals(Buffer.from(sealed(9)))).toBe(true);
    });

    it('the table refuses a malformed server id, an empty or oversized principal or issuer, an impossible ciphertext length', async () => {
      const h = get();
      const s = await newScene(h);
      const isConstraint = (e: unknown) => StoreError.isInstance(e) && e.code === 'store.constraint';
      const base = { principalId: 'alice', serverId: 'acme', ciphertext: sealed(1), keyId: 'k', issuer: ISSUER, expiresAt: null, at: s.t0 };
      const bad = [
        { ...base, serverId: 'Acme' },
        { ...base, serverId: 'a'.repeat(33) },
        { ...base, principalId: '' },
        { ...base, principalId: 'p'.repeat(257) },
        { ...base, issuer: '' },
        { ...base, issuer: `https://${'a'.repeat(2048)}` },
        { ...base, ciphertext: sealed(1, 27) },
        { ...base, ciphertext: sealed(1, 65_565) },
      ];
      for (const grant of bad) await expect(h.stores.mcpDelegatedGrants.put(s.tenantId, grant)).rejects.toSatisfy(isConstraint);
      expect(await h.stores.mcpDelegatedGrants.list(s.tenantId, 'alice')).toEqual([]);
    });
  });
}
