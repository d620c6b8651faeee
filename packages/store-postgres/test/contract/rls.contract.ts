import { FencingError, StoreError } from '@veetbot/domain';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { newRowJson } from '../../src/repositories/hot-path';
import { type HarnessFactory, intent, lease, newScene, rowsOf, type Scene, type StoreHarness, toolEvent } from './harness';

const TENANT_TABLES = [
  'api_keys',
  'sessions',
  'runs',
  'steps',
  'tool_invocations',
  'approvals',
  'events',
  'event_streams',
  'artifacts',
  'mcp_servers',
  'mcp_tool_catalog',
  'skills',
  'tenant_secrets',
  'mcp_delegated_grants',
  'mcp_pending_consents',
  'working_states',
  'invocation_reconciliations',
  'run_breaker_evidence',
] as const;

/** Tables veetbot_app may only read and append to. */
const APPEND_ONLY: ReadonlySet<string> = new Set(['working_states']);

const isCode = (code: string) => (e: unknown) => StoreError.isInstance(e) && e.code === code;

/** Populate one row (or more) in every tenant table for `scene`'s tenant. */
async function populate(h: StoreHarness, scene: Scene): Promise<{ invocationId: string; keyHash: string }> {
  const { stores } = h;
  await lease(h, scene, 'worker-a', scene.t0);
  const row = intent(scene, { status: 'waiting_for_approval' });
  await stores.invocations.insertIntent(scene.tenantId, row, [toolEvent(scene, 'tool.call.proposed', row, scene.t0)]);
  await stores.steps.insert(scene.tenantId, { runId: scene.runId, stepNumber: 1, batch: [{ call_id: row.callId }], createdAt: scene.t0 });
  await stores.artifacts.insert(scene.tenantId, {
    id: crypto.randomUUID(),
    runId: scene.runId,
    invocationId: row.id,
    mediaType: 'text/plain',
    bytes: 3,
    sha256: 'b'.repeat(64),
    trust: 'external_untrusted',
    createdAt: scene.t0,
  });
  await stores.workingStates.append(scene.tenantId, {
    runId: scene.runId,
    document: { plan: 'p' },
    invocationId: row.id,
    createdAt: scene.t0,
  });
  await stores.skills.create(scene.tenantId, {
    name: 'triage',
    version: '1',
    description: 'd',
    requiredTools: [],
    content: 'c',
    trust: 'user',
    source: 'user',
    createdAt: scene.t0,
  });
  await stores.mcpServers.create(scene.tenantId, mcpServer('acme', scene.t0));
  await stores.mcpCatalog.recordGeneration(scene.tenantId, {
    serverId: 'acme',
    catalogHash: 'c'.repeat(64),
    discoveredAt: scene.t0,
    tools: [{ remoteName: 'create_ticket', registryName: 'mcp.acme.create_ticket', inputSchema: { type: 'object' } }],
  });
  await stores.tenantSecrets.put(scene.tenantId, { name: 'ACME_TOKEN', ciphertext: new Uint8Array(40).fill(7), keyId: 'k1', at: scene.t0 });
  // docs/adr/0080: one principal's sealed grant to one server.
  await stores.mcpDelegatedGrants.put(scene.tenantId, {
    principalId: 'p',
    serverId: 'acme',
    ciphertext: new Uint8Array(40).fill(7),
    keyId: 'k1',
    issuer: 'https://auth.example.com',
    expiresAt: null,
    at: scene.t0,
  });
  // docs/adr/0082: a call suspended for a person's consent.
  await stores.mcpPendingConsents.insert(scene.tenantId, {
    id: crypto.randomUUID(),
    principalId: 'p',
    runId: scene.runId,
    invocationId: row.id,
    serverId: 'acme',
    stateHash: crypto.getRandomValues(new Uint8Array(32)),
    ciphertext: new Uint8Array(40).fill(7),
    keyId: 'k1',
    issuer: 'https://auth.example.com',
    authorizationUrl: 'https://auth.example.com/authorize?state=s',
    createdAt: scene.t0,
    expiresAt: new Date(scene.t0.getTime() + 3_600_000),
  });
  // docs/adr/0063: the sweep's attempt state on the invocation.
  await stores.reconciliations.recordAttempt(scene.tenantId, {
    invocationId: row.id,
    reconciler: 'demo.external_write',
    attempts: 1,
    nextAttemptAt: null,
    lastOutcome: 'unknown',
    lastEvidence: 'The outbox does not exist; nothing to look in.',
    at: scene.t0,
  });
  // docs/adr/0078: the run's breaker evidence, as veetbot_finish_step writes it (as the tenant).
  await h.database.tenant(scene.tenantId, (tx) =>
    tx.execute(
      sql`insert into run_breaker_evidence (tenant_id, run_id, evidence, updated_at)
          values (${scene.tenantId}, ${scene.runId}::uuid, ${JSON.stringify({ version: 1, evidence_restarts: 1, calls: [] })}::jsonb, ${scene.t0.toISOString()}::timestamptz)`,
    ),
  );
  const keyHash = `hash-${crypto.randomUUID()}`;
  await stores.apiKeys.create(scene.tenantId, {
    keyHash,
    prefix: 'vb_1234',
    principalId: 'p',
    scopes: ['runs.write'],
    createdAt: scene.t0,
  });
  return { invocationId: row.id, keyHash };
}

export function mcpServer(serverId: string, at: Date) {
  return {
    serverId,
    transport: 'http' as const,
    endpoint: 'https://mcp.example.com/mcp',
    authScheme: 'bearer' as const,
    authName: null,
    credentialRef: 'env:ACME_TOKEN',
    tokenEndpoint: null,
    tokenScopes: null,
    sideEffect: 'external_write' as const,
    risk: 'medium' as const,
    idempotency: 'non_idempotent' as const,
    requiredScopes: ['mcp.acme.use'],
    timeoutSeconds: 30,
    maximumOutputBytes: 65_536,
    createdAt: at,
  };
}

async function countOf(h: StoreHarness, scope: { tenantId: string | null }, table: string, ownerTenant: string): Promise<number> {
  const result = await h.database.transaction({ role: 'tenant', tenantId: scope.tenantId }, (tx) =>
    tx.execute(sql`select count(*)::int as n from ${sql.identifier(table)} where tenant_id = ${ownerTenant}`),
  );
  return (rowsOf(result)[0] as { n: number }).n;
}

/** Row-level security: a tenant cannot read, change, or even detect another tenant's rows. */
export function rowLevelSecurityContract(get: HarnessFactory): void {
  describe('row-level security', () => {
    it('tenant A sees its own rows in every tenant table', async () => {
      const h = get();
      const a = await newScene(h);
      await populate(h, a);
      for (const table of TENANT_TABLES) expect(await countOf(h, { tenantId: a.tenantId }, table, a.tenantId), table).toBeGreaterThan(0);
    });

    it('tenant B reads nothing of A: counts are 0, lookups are null, lists are empty', async () => {
      const h = get();
      const a = await newScene(h);
      const b = await newScene(h);
      const { invocationId, keyHash } = await populate(h, a);
      for (const table of TENANT_TABLES) expect(await countOf(h, { tenantId: b.tenantId }, table, a.tenantId), table).toBe(0);
      const { stores } = h;
      expect(await stores.invocations.getById(b.tenantId, invocationId)).toBeNull();
      expect(await stores.invocations.listForRun(b.tenantId, a.runId)).toEqual([]);
      expect(await stores.runs.get(b.tenantId, a.runId)).toBeNull();
      expect(await stores.sessions.get(b.tenantId, a.sessionId)).toBeNull();
      expect(await stores.approvals.getByInvocation(b.tenantId, invocationId)).toBeNull();
      expect(await stores.approvals.listPending(b.tenantId, 10)).toEqual([]);
      expect(await stores.events.listAfter(b.tenantId, a.runId, 0, 10)).toEqual([]);
      expect(await stores.artifacts.listForRun(b.tenantId, a.runId)).toEqual([]);
      expect(await stores.skills.list(b.tenantId)).toEqual([]);
      expect(await stores.mcpServers.get(b.tenantId, 'acme')).toBeNull();
      expect(await stores.mcpCatalog.latest(b.tenantId, 'acme')).toEqual([]);
      expect(await stores.tenantSecrets.get(b.tenantId, 'ACME_TOKEN')).toBeNull();
      expect(await stores.tenantSecrets.has(b.tenantId, 'ACME_TOKEN')).toBe(false);
      expect(await stores.tenantSecrets.list(b.tenantId)).toEqual([]);
      expect(await stores.mcpDelegatedGrants.get(b.tenantId, 'p', 'acme')).toBeNull();
      expect(await stores.mcpDelegatedGrants.list(b.tenantId, 'p')).toEqual([]);
      expect(await stores.mcpDelegatedGrants.delete(b.tenantId, 'p', 'acme')).toBe(false);
      expect(await stores.mcpPendingConsents.listOpenForRun(b.tenantId, a.runId)).toEqual([]);
      expect(await stores.tenants.get(a.tenantId)).toMatchObject({ id: a.tenantId });
      // A tenant transaction sees its own tenants row and no other.
      const visible = await h.database.tenant(b.tenantId, (tx) => tx.execute(sql`select id from tenants`));
      expect(rowsOf(visible)).toEqual([{ id: b.tenantId }]);
      // The API-key lookup runs across tenants (authentication precedes the tenant)...
      expect((await stores.apiKeys.findByHash(keyHash))?.tenantId).toBe(a.tenantId);
      // ...but B's own transaction cannot see A's key.
      const keys = await h.database.tenant(b.tenantId, (tx) => tx.execute(sql`select id from api_keys where key_hash = ${keyHash}`));
      expect(rowsOf(keys)).toEqual([]);
    });

    it('tenant B cannot change A: updates affect 0 rows, fenced writes fail as if absent', async () => {
      const h = get();
      const a = await newScene(h);
      const b = await newScene(h);
      const { invocationId } = await populate(h, a);
      for (const table of TENANT_TABLES) {
        if (APPEND_ONLY.has(table)) {
          // No UPDATE privilege at all: not even a tenant's own rows change (docs/adr/0034).
          await expect(
            h.database.tenant(b.tenantId, (tx) => tx.execute(sql`update ${sql.identifier(table)} set tenant_id = tenant_id`)),
          ).rejects.toMatchObject({ code: 'store.forbidden' });
          continue;
        }
        const result = await h.database.tenant(b.tenantId, (tx) =>
          tx.execute(sql`update ${sql.identifier(table)} set tenant_id = tenant_id where tenant_id = ${a.tenantId} returning tenant_id`),
        );
        expect(rowsOf(result), table).toEqual([]);
      }
      const deleted = await h.database.tenant(b.tenantId, (tx) =>
        tx.execute(sql`delete from skills where tenant_id = ${a.tenantId} returning id`),
      );
      expect(rowsOf(deleted)).toEqual([]);
      expect(await h.stores.skills.delete(b.tenantId, 'triage')).toBe(0);
      expect((await h.stores.skills.list(a.tenantId)).map((s) => s.name)).toEqual(['triage']);
      // A's secret: B cannot delete it, and B's PUT of the same name is B's own row.
      expect(await h.stores.tenantSecrets.delete(b.tenantId, 'ACME_TOKEN')).toBe(false);
      expect(
        (
          await h.stores.tenantSecrets.put(b.tenantId, {
            name: 'ACME_TOKEN',
            ciphertext: new Uint8Array(40).fill(9),
            keyId: 'k1',
            at: b.t0,
          })
        ).created,
      ).toBe(true);
      expect(Buffer.from((await h.stores.tenantSecrets.get(a.tenantId, 'ACME_TOKEN'))!.ciphertext).equals(Buffer.alloc(40, 7))).toBe(true);
      const moved = await h.database.tenant(b.tenantId, (tx) =>
        tx.execute(sql`update tenant_secrets set tenant_id = ${b.tenantId} where tenant_id = ${a.tenantId} returning name`),
      );
      expect(rowsOf(moved)).toEqual([]);
      // B holding its own lease gets nothing out of A's run or invocation.
      expect(await h.stores.runs.acquireLease(b.tenantId, b.runId, 'w', 1_000, b.t0)).not.toBeNull();
      await expect(h.stores.runs.acquireLease(b.tenantId, a.runId, 'w', 1_000, b.t0)).rejects.toSatisfy(isCode('store.not_found'));
      await expect(
        h.stores.approvals.decide(b.tenantId, crypto.randomUUID(), { decision: 'approved', decidedBy: 'b', decidedAt: b.t0 }, []),
      ).rejects.toSatisfy(isCode('store.not_found'));
      const pending = await h.stores.approvals.getByInvocation(a.tenantId, invocationId);
      await expect(
        h.stores.approvals.decide(b.tenantId, pending?.id ?? '', { decision: 'approved', decidedBy: 'b', decidedAt: b.t0 }, []),
      ).rejects.toSatisfy(isCode('store.not_found'));
      expect((await h.stores.approvals.getByInvocation(a.tenantId, invocationId))?.status).toBe('pending');
    });

    it("tenant B cannot insert rows carrying A's tenant id", async () => {
      const h = get();
      const a = await newScene(h);
      const b = await newScene(h);
      await expect(
        h.database.tenant(b.tenantId, (tx) =>
          tx.execute(sql`insert into skills (tenant_id, name, version, description, required_tools, content, trust, source, created_at)
                         values (${a.tenantId}, 'x', '1', 'd', '[]'::jsonb, 'c', 'user', 'user', now())`),
        ),
      ).rejects.toSatisfy(isCode('store.forbidden'));
      await expect(
        h.database.tenant(b.tenantId, (tx) =>
          tx.execute(sql`insert into events (tenant_id, run_id, sequence, type, payload, derivation_key, created_at)
                         values (${a.tenantId}, ${a.runId}, 99, 'x', '{}'::jsonb, 'forged', now())`),
        ),
      ).rejects.toSatisfy(isCode('store.forbidden'));
      await expect(
        h.database.tenant(b.tenantId, (tx) =>
          tx.execute(
            sql`insert into tenant_secrets (tenant_id, name, ciphertext, key_id, created_at) values (${a.tenantId}, 'PLANTED', ${Buffer.alloc(40)}, 'k', now())`,
          ),
        ),
      ).rejects.toSatisfy(isCode('store.forbidden'));
      // Pointing B's own row at A's run fails exactly as pointing at a run that does not exist.
      const forged = intent({ ...b, runId: a.runId });
      await expect(h.stores.invocations.insertIntent(b.tenantId, forged, [])).rejects.toSatisfy(isCode('store.constraint'));
      const nowhere = intent({ ...b, runId: crypto.randomUUID() });
      await expect(h.stores.invocations.insertIntent(b.tenantId, nowhere, [])).rejects.toSatisfy(isCode('store.constraint'));
      expect(await countOf(h, { tenantId: a.tenantId }, 'skills', a.tenantId)).toBe(0);
    });

    it('a transaction with no tenant set reads nothing and writes nothing', async () => {
      const h = get();
      const a = await newScene(h);
      await populate(h, a);
      for (const table of TENANT_TABLES) expect(await countOf(h, { tenantId: null }, table, a.tenantId), table).toBe(0);
      const tenantsSeen = await h.database.transaction({ role: 'tenant', tenantId: null }, (tx) =>
        tx.execute(sql`select count(*)::int as n from tenants`),
      );
      expect(rowsOf(tenantsSeen)[0]).toEqual({ n: 0 });
      await expect(
        h.database.transaction({ role: 'tenant', tenantId: null }, (tx) =>
          tx.execute(sql`insert into skills (tenant_id, name, version, description, required_tools, content, trust, source, created_at)
                         values (${a.tenantId}, 'y', '1', 'd', '[]'::jsonb, 'c', 'user', 'user', now())`),
        ),
      ).rejects.toSatisfy(isCode('store.forbidden'));
    });

    it('the role and tenant are transaction-local: the next transaction on the connection starts clean', async () => {
      const h = get();
      const a = await newScene(h);
      await h.database.tenant(a.tenantId, async () => undefined);
      const after = await h.database.transaction({ role: 'owner' }, (tx) =>
        tx.execute(sql`select current_user as "user", coalesce(current_setting('veetbot.tenant_id', true), '') as tenant`),
      );
      expect(rowsOf(after)[0]).toMatchObject({ tenant: '' });
      expect((rowsOf(after)[0] as { user: string }).user).not.toBe('veetbot_app');
    });

    it('the one-statement hot path (sql/functions) runs every statement under the caller tenant and leaves nothing set', async () => {
      const h = get();
      const a = await newScene(h);
      const b = await newScene(h);
      const row = intent(a);
      await h.stores.invocations.insertIntent(a.tenantId, row, []);
      const fence = await lease(h, a, 'worker-a', a.t0);
      // B cannot see A's run, so A's own fence does not let B claim A's invocation.
      await expect(h.stores.invocations.claim(b.tenantId, row.id, fence, a.t0, [])).rejects.toSatisfy(FencingError.isInstance);
      expect((await h.stores.invocations.getById(a.tenantId, row.id))?.status).toBe('authorized');
      // The WITH CHECK policy applies inside the function: B may not write a row of A.
      const forged = { ...intent(a), idempotencyKey: `forged-${crypto.randomUUID()}` };
      await expect(
        h.database.statement(sql`select veetbot_insert_intent(${b.tenantId}, ${newRowJson(a.tenantId, forged)}::jsonb, '', '[]'::jsonb)`),
      ).rejects.toSatisfy(isCode('store.forbidden'));
      expect(await h.stores.invocations.getById(a.tenantId, forged.id)).toBeNull();
      // The role and tenant the function set end with its statement.
      await h.stores.invocations.claim(a.tenantId, row.id, fence, a.t0, []);
      const after = await h.database.transaction({ role: 'owner' }, (tx) =>
        tx.execute(sql`select current_user as "user", coalesce(current_setting('veetbot.tenant_id', true), '') as tenant`),
      );
      expect(rowsOf(after)[0]).toMatchObject({ tenant: '' });
      expect((rowsOf(after)[0] as { user: string }).user).not.toBe('veetbot_app');
    });

    it('the maintenance role reads identity columns across tenants, never arguments, and writes nothing', async () => {
      const h = get();
      const a = await newScene(h);
      const { invocationId } = await populate(h, a);
      const ids = await h.database.transaction({ role: 'maintenance' }, (tx) =>
        tx.execute(sql`select tenant_id from tool_invocations where id = ${invocationId}`),
      );
      expect(rowsOf(ids)).toEqual([{ tenant_id: a.tenantId }]);
      await expect(
        h.database.transaction({ role: 'maintenance' }, (tx) =>
          tx.execute(sql`select arguments from tool_invocations where id = ${invocationId}`),
        ),
      ).rejects.toSatisfy(isCode('store.forbidden'));
      await expect(
        h.database.transaction({ role: 'maintenance' }, (tx) => tx.execute(sql`update runs set lease_owner = null where id = ${a.runId}`)),
      ).rejects.toSatisfy(isCode('store.forbidden'));
      await expect(h.database.transaction({ role: 'maintenance' }, (tx) => tx.execute(sql`select count(*) from events`))).rejects.toSatisfy(
        isCode('store.forbidden'),
      );
      // Sessions (migration 0015, the MCP sweep): status across tenants, never the pin or the
      // principal, and never a write.
      const status = await h.database.transaction({ role: 'maintenance' }, (tx) =>
        tx.execute(sql`select status from sessions where id = ${a.sessionId}`),
      );
      expect(rowsOf(status)).toEqual([{ status: 'open' }]);
      for (const column of ['specs', 'tool_names', 'principal_id', 'agent_id']) {
        await expect(
          h.database.transaction({ role: 'maintenance' }, (tx) =>
            tx.execute(sql`select ${sql.identifier(column)} from sessions where id = ${a.sessionId}`),
          ),
        ).rejects.toSatisfy(isCode('store.forbidden'));
      }
      await expect(
        h.database.transaction({ role: 'maintenance' }, (tx) =>
          tx.execute(sql`update sessions set status = 'closed' where id = ${a.sessionId}`),
        ),
      ).rejects.toSatisfy(isCode('store.forbidden'));
      await expect(
        h.database.transaction({ role: 'maintenance' }, (tx) =>
          tx.execute(sql`select budgets from runs where session_id = ${a.sessionId}`),
        ),
      ).rejects.toSatisfy(isCode('store.forbidden'));
      // docs/adr/0063: the reconciliation's identity and due time across tenants, never its evidence.
      const due = await h.database.transaction({ role: 'maintenance' }, (tx) =>
        tx.execute(sql`select tenant_id, next_attempt_at from invocation_reconciliations where invocation_id = ${invocationId}`),
      );
      expect(rowsOf(due)).toEqual([{ tenant_id: a.tenantId, next_attempt_at: null }]);
      for (const column of ['last_evidence', 'reconciler']) {
        await expect(
          h.database.transaction({ role: 'maintenance' }, (tx) =>
            tx.execute(sql`select ${sql.identifier(column)} from invocation_reconciliations where invocation_id = ${invocationId}`),
          ),
        ).rejects.toSatisfy(isCode('store.forbidden'));
      }
      // A tenant reads its own attempt state only.
      expect(await h.stores.reconciliations.get(a.tenantId, invocationId)).toMatchObject({ attempts: 1, lastOutcome: 'unknown' });
      const b = await newScene(h);
      expect(await h.stores.reconciliations.get(b.tenantId, invocationId)).toBeNull();
    });
  });
}
