import { randomBytes, randomUUID } from 'node:crypto';
import { StoreError } from '@veetbot/domain';
import type { NewMcpPendingConsent } from '@veetbot/ports';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { type HarnessFactory, intent, lease, newScene, type Scene, type StoreHarness, toolEvent } from './harness';

const ISSUER = 'https://auth.example.com';

async function suspendedCall(h: StoreHarness, s: Scene): Promise<string> {
  await lease(h, s, 'worker-a', s.t0);
  const row = intent(s, { toolSource: 'mcp', serverId: 'acme', toolName: 'mcp.acme.create_ticket' });
  await h.stores.invocations.insertIntent(s.tenantId, row, [toolEvent(s, 'tool.call.proposed', row, s.t0)]);
  return row.id;
}

function consent(s: Scene, invocationId: string, overrides: Partial<NewMcpPendingConsent> = {}): NewMcpPendingConsent {
  return {
    id: randomUUID(),
    principalId: 'alice',
    runId: s.runId,
    invocationId,
    serverId: 'acme',
    stateHash: new Uint8Array(randomBytes(32)),
    ciphertext: new Uint8Array(60).fill(3),
    keyId: 'k1',
    issuer: ISSUER,
    authorizationUrl: `${ISSUER}/authorize?state=x`,
    createdAt: s.t0,
    expiresAt: new Date(s.t0.getTime() + 3_600_000),
    ...overrides,
  };
}

/** docs/adr/0082: pending consents — the state by its hash only, single use, the run's open links. */
export function mcpPendingConsentsContract(get: HarnessFactory): void {
  describe('mcp pending consents', () => {
    it('insert and get round-trip; the callback finds the tenant by the state hash alone; an unknown hash finds nothing', async () => {
      const h = get();
      const s = await newScene(h);
      const invocationId = await suspendedCall(h, s);
      const c = consent(s, invocationId);
      await h.stores.mcpPendingConsents.insert(s.tenantId, c);
      const row = await h.stores.mcpPendingConsents.get(s.tenantId, c.id);
      expect(row).toMatchObject({ id: c.id, tenantId: s.tenantId, principalId: 'alice', serverId: 'acme', issuer: ISSUER, usedAt: null });
      expect(Buffer.from(row!.stateHash).equals(Buffer.from(c.stateHash))).toBe(true);
      expect(await h.stores.mcpPendingConsents.findByStateHash(c.stateHash)).toEqual({ tenantId: s.tenantId, id: c.id });
      expect(await h.stores.mcpPendingConsents.findByStateHash(new Uint8Array(32).fill(0))).toBeNull();
    });

    it('single use: markUsed succeeds once, then false; a used consent leaves the run view', async () => {
      const h = get();
      const s = await newScene(h);
      const invocationId = await suspendedCall(h, s);
      const first = consent(s, invocationId);
      const second = consent(s, invocationId, { createdAt: new Date(s.t0.getTime() + 1000) });
      await h.stores.mcpPendingConsents.insert(s.tenantId, first);
      await h.stores.mcpPendingConsents.insert(s.tenantId, second);
      const open = await h.stores.mcpPendingConsents.listOpenForRun(s.tenantId, s.runId);
      expect(open.map((c) => c.id)).toEqual([first.id, second.id]);
      for (const entry of open)
        expect(Object.keys(entry).sort()).toEqual(['authorizationUrl', 'expiresAt', 'id', 'invocationId', 'principalId', 'serverId']);
      const at = new Date(s.t0.getTime() + 5000);
      const racing = await Promise.all([
        h.stores.mcpPendingConsents.markUsed(s.tenantId, first.id, at),
        h.stores.mcpPendingConsents.markUsed(s.tenantId, first.id, at),
      ]);
      expect(racing.filter(Boolean)).toHaveLength(1);
      expect(await h.stores.mcpPendingConsents.markUsed(s.tenantId, first.id, at)).toBe(false);
      expect(await h.stores.mcpPendingConsents.markUsed(s.tenantId, randomUUID(), at)).toBe(false);
      expect((await h.stores.mcpPendingConsents.get(s.tenantId, first.id))!.usedAt).toEqual(at);
      expect((await h.stores.mcpPendingConsents.listOpenForRun(s.tenantId, s.runId)).map((c) => c.id)).toEqual([second.id]);
    });

    it('another tenant cannot mark, read or list it; maintenance reads the identity columns only', async () => {
      const h = get();
      const a = await newScene(h);
      const b = await newScene(h);
      const invocationId = await suspendedCall(h, a);
      const c = consent(a, invocationId);
      await h.stores.mcpPendingConsents.insert(a.tenantId, c);
      expect(await h.stores.mcpPendingConsents.get(b.tenantId, c.id)).toBeNull();
      expect(await h.stores.mcpPendingConsents.markUsed(b.tenantId, c.id, a.t0)).toBe(false);
      expect(await h.stores.mcpPendingConsents.listOpenForRun(b.tenantId, a.runId)).toEqual([]);
      expect((await h.stores.mcpPendingConsents.get(a.tenantId, c.id))!.usedAt).toBeNull();
      for (const column of ['ciphertext', 'issuer', 'authorization_url', 'principal_id'])
        await expect(
          h.database.transaction({ role: 'maintenance' }, (tx) => tx.execute(sql.raw(`select ${column} from mcp_pending_consents`))),
        ).rejects.toSatisfy((e: unknown) => StoreError.isInstance(e));
    });

    it('the table refuses a state hash that is not 32 bytes, a reused hash, a non-http link, bad bounds and an expiry before creation', async () => {
      const h = get();
      const s = await newScene(h);
      const invocationId = await suspendedCall(h, s);
      const isConstraint = (e: unknown) => StoreError.isInstance(e) && e.code === 'store.constraint';
      const taken = consent(s, invocationId);
      await h.stores.mcpPendingConsents.insert(s.tenantId, taken);
      const bad = [
        consent(s, invocationId, { stateHash: new Uint8Array(31).fill(1) }),
        consent(s, invocationId, { stateHash: new Uint8Array(64).fill(1) }),
        consent(s, invocationId, { authorizationUrl: 'javascript:alert(1)' }),
        consent(s, invocationId, { authorizationUrl: `${ISSUER}/${'a'.repeat(8192)}` }),
        consent(s, invocationId, { serverId: 'Acme' }),
        consent(s, invocationId, { principalId: '' }),
        consent(s, invocationId, { issuer: '' }),
        consent(s, invocationId, { ciphertext: new Uint8Array(27) }),
        consent(s, invocationId, { expiresAt: s.t0 }),
      ];
      for (const row of bad) await expect(h.stores.mcpPendingConsents.insert(s.tenantId, row)).rejects.toSatisfy(isConstraint);
      // One state, one consent: a reused hash is refused by the unique index.
      await expect(
        h.stores.mcpPendingConsents.insert(s.tenantId, consent(s, invocationId, { stateHash: taken.stateHash })),
      ).rejects.toSatisfy((e: unknown) => StoreError.isInstance(e) && e.code === 'store.unique_violation');
      expect((await h.stores.mcpPendingConsents.listOpenForRun(s.tenantId, s.runId)).map((c) => c.id)).toEqual([taken.id]);
    });
  });
}
