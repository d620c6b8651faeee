import { StoreError } from '@veetbot/domain';
import { describe, expect, it } from 'vitest';
import { type HarnessFactory, intent, later, newRun, newScene, toolEvent } from './harness';

const isCode = (code: string) => (e: unknown) => StoreError.isInstance(e) && e.code === code;

/** The smaller stores: tenants, API keys, sessions, steps, artifacts, skills. */
export function recordStoresContract(get: HarnessFactory): void {
  describe('TenantStore and ApiKeyStore', () => {
    it('creates a tenant idempotently', async () => {
      const h = get();
      const id = `tenant-${crypto.randomUUID()}`;
      const at = new Date(Date.UTC(2030, 0, 1));
      const created = await h.stores.tenants.create({ id, name: 'Acme', createdAt: at });
      const again = await h.stores.tenants.create({ id, name: 'Other name', createdAt: later(at, 1) });
      expect(again).toEqual(created);
      expect(await h.stores.tenants.get(id)).toEqual(created);
    });

    it('finds a key by hash across tenants, and revokes it once', async () => {
      const h = get();
      const scene = await newScene(h);
      const keyHash = `sha256-${crypto.randomUUID()}`;
      const key = await h.stores.apiKeys.create(scene.tenantId, {
        keyHash,
        prefix: 'vb_ab12',
        principalId: 'p1',
        scopes: ['runs.write'],
        createdAt: scene.t0,
      });
      expect(await h.stores.apiKeys.findByHash(keyHash)).toEqual(key);
      expect(await h.stores.apiKeys.findByHash('no-such-hash')).toBeNull();
      const revoked = await h.stores.apiKeys.revoke(scene.tenantId, key.id, later(scene.t0, 5));
      expect(revoked.revokedAt?.getTime()).toBe(later(scene.t0, 5).getTime());
      const again = await h.stores.apiKeys.revoke(scene.tenantId, key.id, later(scene.t0, 9));
      expect(again.revokedAt?.getTime()).toBe(later(scene.t0, 5).getTime());
      expect((await h.stores.apiKeys.findByHash(keyHash))?.revokedAt?.getTime()).toBe(later(scene.t0, 5).getTime());
      await expect(
        h.stores.apiKeys.create(scene.tenantId, { keyHash, prefix: 'vb_ab12', principalId: 'p2', scopes: [], createdAt: scene.t0 }),
      ).rejects.toSatisfy(isCode('store.unique_violation'));
    });
  });

  describe('SessionStore and StepStore', () => {
    it('keeps the pinned plan and closes idempotently', async () => {
      const h = get();
      const scene = await newScene(h);
      const session = await h.stores.sessions.get(scene.tenantId, scene.sessionId);
      expect(session).toMatchObject({ status: 'open', toolNames: ['demo.echo'], toolSchemaSha256: 'a'.repeat(64), closedAt: null });
      const closed = await h.stores.sessions.close(scene.tenantId, scene.sessionId, later(scene.t0, 1));
      const again = await h.stores.sessions.close(scene.tenantId, scene.sessionId, later(scene.t0, 2));
      expect(closed.status).toBe('closed');
      expect(again.closedAt?.getTime()).toBe(later(scene.t0, 1).getTime());
    });

    it("lifecycle: each held session's status and its working runs, across tenants, in one read (docs/adr/0024)", async () => {
      const h = get();
      const a = await newScene(h);
      const b = await newScene(h);
      const fresh = await newScene(h);
      // `fresh`: a session with no run at all.
      const bare = await h.stores.sessions.create(fresh.tenantId, {
        principalId: 'p',
        agentId: 'x',
        toolNames: [],
        specs: [],
        toolSchemaSha256: 'b'.repeat(64),
        createdAt: fresh.t0,
      });
      const missing = crypto.randomUUID();
      const refs = [
        { tenantId: a.tenantId, sessionId: a.sessionId },
        { tenantId: b.tenantId, sessionId: b.sessionId },
        { tenantId: fresh.tenantId, sessionId: bare.id },
        { tenantId: a.tenantId, sessionId: missing },
        // Another tenant's session under the wrong tenant: absent, never another tenant's answer.
        { tenantId: a.tenantId, sessionId: b.sessionId },
        // Not a uuid (hostile or stale input): absent, not a store error.
        { tenantId: a.tenantId, sessionId: "x' OR 1=1 --" },
      ];
      const read = async () => new Map((await h.stores.sessions.lifecycle(refs)).map((l) => [`${l.tenantId}/${l.sessionId}`, l]));
      let seen = await read();
      expect(seen.size).toBe(3);
      expect(seen.get(`${a.tenantId}/${a.sessionId}`)).toEqual({
        tenantId: a.tenantId,
        sessionId: a.sessionId,
        status: 'open',
        runs: 1,
        workingRuns: 1,
      });
      expect(seen.get(`${fresh.tenantId}/${bare.id}`)).toMatchObject({ status: 'open', runs: 0, workingRuns: 0 });

      // A second run of `a` that is cancelled, and `a`'s first run waiting for an approval: no run at work.
      const second = await newRun(h, a.tenantId, a.sessionId, a.t0);
      await h.stores.runs.setStatus(a.tenantId, second, 'cancelled', later(a.t0, 1));
      const waiting = intent(a, { status: 'waiting_for_approval' });
      await h.stores.invocations.insertIntent(a.tenantId, waiting, [toolEvent(a, 'tool.call.authorized', waiting, a.t0)]);
      // `b` closed by "another process".
      await h.stores.sessions.close(b.tenantId, b.sessionId, later(b.t0, 1));
      seen = await read();
      expect(seen.get(`${a.tenantId}/${a.sessionId}`)).toMatchObject({ status: 'open', runs: 2, workingRuns: 0 });
      expect(seen.get(`${b.tenantId}/${b.sessionId}`)).toMatchObject({ status: 'closed', runs: 1, workingRuns: 1 });
      expect(await h.stores.sessions.lifecycle([])).toEqual([]);
    });

    it('stores a step batch once per (run, step_number)', async () => {
      const h = get();
      const scene = await newScene(h);
      const batch = [{ call_id: 'call_1', name: 'demo.echo', arguments: { text: 'hi' } }];
      const first = await h.stores.steps.insert(scene.tenantId, { runId: scene.runId, stepNumber: 1, batch, createdAt: scene.t0 });
      const second = await h.stores.steps.insert(scene.tenantId, { runId: scene.runId, stepNumber: 1, batch: [], createdAt: scene.t0 });
      expect(first.inserted).toBe(true);
      expect(second.inserted).toBe(false);
      if (second.inserted || !first.inserted) return;
      expect(second.existing.id).toBe(first.row.id);
      expect(second.existing.batch).toEqual(batch);
      expect((await h.stores.steps.setStatus(scene.tenantId, scene.runId, 1, 'completed')).status).toBe('completed');
      expect((await h.stores.steps.get(scene.tenantId, scene.runId, 1))?.status).toBe('completed');
      expect(await h.stores.steps.get(scene.tenantId, scene.runId, 2)).toBeNull();
      // A step its caller runs at once is stored running; a resubmission still returns the stored row.
      const started = await h.stores.steps.insert(scene.tenantId, {
        runId: scene.runId,
        stepNumber: 3,
        batch,
        createdAt: scene.t0,
        status: 'running',
      });
      expect(started).toMatchObject({ inserted: true, row: { status: 'running' } });
      const resubmitted = await h.stores.steps.insert(scene.tenantId, {
        runId: scene.runId,
        stepNumber: 3,
        batch,
        createdAt: scene.t0,
        status: 'running',
      });
      expect(resubmitted).toMatchObject({ inserted: false, existing: { status: 'running' } });
    });

    it('reads a step with its run and session in one call, for this tenant only', async () => {
      const h = get();
      const scene = await newScene(h);
      const other = await newScene(h);
      await h.stores.steps.insert(scene.tenantId, { runId: scene.runId, stepNumber: 1, batch: { calls: [] }, createdAt: scene.t0 });
      const found = await h.stores.steps.getWithContext(scene.tenantId, scene.runId, 1);
      expect(found?.step).toEqual(await h.stores.steps.get(scene.tenantId, scene.runId, 1));
      expect(found?.run).toEqual(await h.stores.runs.get(scene.tenantId, scene.runId));
      expect(found?.session).toEqual(await h.stores.sessions.get(scene.tenantId, scene.sessionId));
      expect(found?.session?.createdAt).toBeInstanceOf(Date);
      expect(await h.stores.steps.getWithContext(scene.tenantId, scene.runId, 2)).toBeNull();
      expect(await h.stores.steps.getWithContext(other.tenantId, scene.runId, 1)).toBeNull();
    });
  });

  describe('ArtifactStore and SkillStore', () => {
    it('records artifact metadata per run', async () => {
      const h = get();
      const scene = await newScene(h);
      const id = crypto.randomUUID();
      const stored = await h.stores.artifacts.insert(scene.tenantId, {
        id,
        runId: scene.runId,
        invocationId: null,
        mediaType: 'application/json',
        bytes: 123_456,
        sha256: 'd'.repeat(64),
        trust: 'external_untrusted',
        createdAt: scene.t0,
      });
      expect(stored).toMatchObject({ id, bytes: 123_456, trust: 'external_untrusted', tenantId: scene.tenantId });
      expect(await h.stores.artifacts.get(scene.tenantId, id)).toEqual(stored);
      expect(await h.stores.artifacts.listForRun(scene.tenantId, scene.runId)).toEqual([stored]);
    });

    it('creates versions, reads the latest, lists, refuses a duplicate version, deletes by name', async () => {
      const h = get();
      const scene = await newScene(h);
      const skill = (version: string, at: Date) => ({
        name: 'triage',
        version,
        description: 'Triage an inbox',
        requiredTools: ['email.search'],
        content: `v${version}`,
        trust: 'user' as const,
        source: 'user',
        createdAt: at,
      });
      await h.stores.skills.create(scene.tenantId, skill('1', scene.t0));
      await h.stores.skills.create(scene.tenantId, skill('2', later(scene.t0, 1)));
      await expect(h.stores.skills.create(scene.tenantId, skill('2', later(scene.t0, 2)))).rejects.toSatisfy(
        isCode('store.unique_violation'),
      );
      expect((await h.stores.skills.get(scene.tenantId, 'triage'))?.content).toBe('v2');
      expect((await h.stores.skills.get(scene.tenantId, 'triage', '1'))?.requiredTools).toEqual(['email.search']);
      expect(await h.stores.skills.list(scene.tenantId)).toHaveLength(2);
      expect(await h.stores.skills.delete(scene.tenantId, 'triage')).toBe(2);
      expect(await h.stores.skills.get(scene.tenantId, 'triage')).toBeNull();
    });
  });
}
