import { StoreError } from '@veetbot/domain';
import type { BreakerTallyGroup, NewEvent } from '@veetbot/ports';
import { describe, expect, it } from 'vitest';
import { createApiStores } from '../../src/api-stores';
import { type HarnessFactory, intent, later, lease, newScene, type Scene, type StoreHarness } from './harness';

const isCode = (code: string) => (e: unknown) => StoreError.isInstance(e) && e.code === code;

/** An invocation ended UNCERTAIN the way the recovery table ends one: authorized, claimed, completed. */
async function uncertainRow(h: StoreHarness, scene: Scene, at: Date, owner = 'worker-a'): Promise<string> {
  const row = intent(scene, { createdAt: at });
  await h.stores.invocations.insertIntent(scene.tenantId, row, []);
  return uncertainRowOf(h, scene, row.id, at, owner);
}

/** A stored AUTHORIZED row claimed and ended UNCERTAIN. */
async function uncertainRowOf(h: StoreHarness, scene: Scene, invocationId: string, at: Date, owner = 'worker-a'): Promise<string> {
  const fence = await lease(h, scene, owner, at);
  const row = { id: invocationId };
  await h.stores.invocations.claim(scene.tenantId, row.id, fence, at, []);
  await h.stores.invocations.complete(
    scene.tenantId,
    row.id,
    fence,
    {
      status: 'uncertain',
      outcomeStatus: 'uncertain',
      reasonCode: 'tool.outcome_unknown',
      result: null,
      error: null,
      outputBytes: null,
      truncated: false,
      artifactId: null,
      finishedAt: at,
    },
    [],
  );
  await h.stores.runs.releaseLease(scene.tenantId, fence);
  return row.id;
}

/** Groups in a fixed order, to compare tallies read two ways. */
export function sortGroups(groups: readonly BreakerTallyGroup[]): BreakerTallyGroup[] {
  return [...groups].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

function reviewEvent(scene: Scene, invocationId: string, at: Date): NewEvent {
  return {
    runId: scene.runId,
    type: 'review.uncertain.resolved',
    payload: { invocation_id: invocationId, run_id: scene.runId, resolution: 'succeeded', reviewed_by: 'reviewer-1' },
    derivationKey: `review.uncertain.resolved:${invocationId}`,
    createdAt: at,
  };
}

/** ports/api-stores.ts: the api's listing, review queue and MCP server updates. */
export function apiStoresContract(get: HarnessFactory): void {
  describe('api stores', () => {
    it('stepSubmissions stores a pending step once, answers a resubmission from the stored one, and stores nothing for a run that is not running', async () => {
      const h = get();
      const api = createApiStores(h.database);
      const scene = await newScene(h);
      const other = await newScene(h);
      const batch = { calls: [{ call_id: 'c1' }] };
      const first = await api.stepSubmissions.submit(scene.tenantId, { runId: scene.runId, stepNumber: 1, batch, createdAt: scene.t0 });
      expect(first).toMatchObject({
        inserted: true,
        sessionStatus: 'open',
        step: { runId: scene.runId, stepNumber: 1, status: 'pending', batch },
      });
      expect(first.run).toEqual(await h.stores.runs.get(scene.tenantId, scene.runId));
      expect(first.step?.createdAt.getTime()).toBe(scene.t0.getTime());

      const again = await api.stepSubmissions.submit(scene.tenantId, {
        runId: scene.runId,
        stepNumber: 1,
        batch: { other: true },
        createdAt: later(scene.t0, 1),
      });
      expect(again).toMatchObject({ inserted: false, step: { id: first.step?.id, batch } });

      await h.stores.runs.setStatus(scene.tenantId, scene.runId, 'cancelled', later(scene.t0, 2));
      const held = await api.stepSubmissions.submit(scene.tenantId, {
        runId: scene.runId,
        stepNumber: 1,
        batch,
        createdAt: later(scene.t0, 3),
      });
      expect(held).toMatchObject({ inserted: false, step: { id: first.step?.id }, run: { status: 'cancelled' } });
      const refused = await api.stepSubmissions.submit(scene.tenantId, {
        runId: scene.runId,
        stepNumber: 2,
        batch,
        createdAt: later(scene.t0, 3),
      });
      expect(refused).toMatchObject({ inserted: false, step: null, run: { status: 'cancelled' } });
      expect(await h.stores.steps.get(scene.tenantId, scene.runId, 2)).toBeNull();

      // Another tenant's run does not exist for this one, and nothing is written under it.
      expect(await api.stepSubmissions.submit(other.tenantId, { runId: scene.runId, stepNumber: 3, batch, createdAt: scene.t0 })).toEqual({
        run: null,
        sessionStatus: null,
        step: null,
        inserted: false,
      });
      expect(await h.stores.steps.get(scene.tenantId, scene.runId, 3)).toBeNull();
    });

    it('stepSubmissions.submitCall (docs/adr/0044): a call id names one step, even submitted concurrently; the next number otherwise', async () => {
      const h = get();
      const api = createApiStores(h.database);
      const scene = await newScene(h);
      const other = await newScene(h);
      const batchOf = (callId: string) => ({ version: 1, calls: [{ call_id: callId, tool_name: 'math.evaluate', arguments: {} }] });
      const call = (callId: string, at = scene.t0) =>
        api.stepSubmissions.submitCall(scene.tenantId, { runId: scene.runId, callId, batch: batchOf(callId), createdAt: at });

      const first = await call('c1');
      expect(first).toMatchObject({
        inserted: true,
        sessionStatus: 'open',
        step: { stepNumber: 1, status: 'pending', batch: batchOf('c1') },
      });
      // A step stored by number (the steps route) counts: the next call goes after it.
      await api.stepSubmissions.submit(scene.tenantId, { runId: scene.runId, stepNumber: 5, batch: batchOf('rest'), createdAt: scene.t0 });
      expect((await call('c2')).step?.stepNumber).toBe(6);
      // A repeat is the stored step, whatever batch it brings.
      expect(await call('c1', later(scene.t0, 1))).toMatchObject({ inserted: false, step: { id: first.step?.id, stepNumber: 1 } });
      // Inside a batch of several calls the call id is found too (containment, not equality).
      await api.stepSubmissions.submit(scene.tenantId, {
        runId: scene.runId,
        stepNumber: 7,
        batch: { version: 1, calls: [{ call_id: 'x' }, { call_id: 'inner' }] },
        createdAt: scene.t0,
      });
      expect((await call('inner')).step?.stepNumber).toBe(7);

      // Concurrent: one call id eight times is one step; eight call ids are eight numbers.
      const same = await Promise.all(Array.from({ length: 8 }, () => call('c3')));
      expect(new Set(same.map((r) => r.step?.id)).size).toBe(1);
      expect(same.filter((r) => r.inserted)).toHaveLength(1);
      const distinct = await Promise.all(Array.from({ length: 8 }, (_, i) => call(`d${i}`)));
      expect(distinct.every((r) => r.inserted)).toBe(true);
      expect(new Set(distinct.map((r) => r.step?.stepNumber)).size).toBe(8);

      // Another tenant's run does not exist for this one.
      expect(
        await api.stepSubmissions.submitCall(other.tenantId, {
          runId: scene.runId,
          callId: 'c1',
          batch: batchOf('c1'),
          createdAt: scene.t0,
        }),
      ).toEqual({ run: null, sessionStatus: null, step: null, inserted: false });

      // A run that is not running takes no new call, and still answers a recorded one.
      await h.stores.runs.setStatus(scene.tenantId, scene.runId, 'cancelled', later(scene.t0, 2));
      expect(await call('new')).toMatchObject({ inserted: false, step: null, run: { status: 'cancelled' } });
      expect(await call('c1')).toMatchObject({ inserted: false, step: { id: first.step?.id } });
    });

    it("stepView reads the run, the step's own rows in listForRun order, and the tally through the step of the keys near a threshold; another tenant sees nothing", async () => {
      const h = get();
      const api = createApiStores(h.database);
      const scene = await newScene(h);
      const other = await newScene(h);
      const rows = [3, 1, 2, 2].map((stepNumber, i) => intent(scene, { stepNumber, createdAt: later(scene.t0, i * 1000) }));
      for (const row of rows) await h.stores.invocations.insertIntent(scene.tenantId, row, []);
      // Step 1 ended UNCERTAIN: its key has one call, far from every threshold.
      await uncertainRowOf(h, scene, rows[1]!.id, later(scene.t0, 5_000));
      // Four identical calls (one below the loop threshold) through step 2, a fifth in step 3.
      const repeated = [1, 1, 2, 2, 3].map((stepNumber, i) =>
        intent(scene, { stepNumber, argumentsHash: 'f'.repeat(64), createdAt: later(scene.t0, 10_000 + i) }),
      );
      for (const row of repeated) await h.stores.invocations.insertIntent(scene.tenantId, row, []);

      const view = await api.invocationQueries.stepView(scene.tenantId, scene.runId, 2);
      expect(view.run).toEqual(await h.stores.runs.get(scene.tenantId, scene.runId));
      const expected = (await h.stores.invocations.listForRun(scene.tenantId, scene.runId)).filter((r) => r.stepNumber === 2);
      expect(view.rows).toEqual(expected);
      expect(view.rows.map((r) => r.stepNumber)).toEqual([2, 2, 2, 2]);
      expect(view.rows[0]?.createdAt).toBeInstanceOf(Date);
      // Only the near key, counted through step 2 (not its step-3 row): the far keys are left out.
      expect(view.tally).toEqual({
        rows: 4,
        groups: [
          {
            toolName: repeated[0]!.toolName,
            argumentsHash: 'f'.repeat(64),
            status: 'authorized',
            outcomeStatus: null,
            reasonCode: null,
            count: 4,
          },
        ],
      });
      // Through step 1 the key has two calls: nothing is near.
      expect((await api.invocationQueries.stepView(scene.tenantId, scene.runId, 1)).tally.groups).toEqual([]);
      // docs/adr/0078: the run's breaker evidence comes with the view (none written here).
      expect(view.evidence).toBeNull();

      expect(await api.invocationQueries.stepView(other.tenantId, scene.runId, 10)).toEqual({
        run: null,
        rows: [],
        tally: { rows: 0, groups: [] },
        evidence: null,
      });
    });

    it('the near tally is exactly the full tally of the keys near a threshold (four identical calls, or any denial), through each step (docs/adr/0075)', async () => {
      const h = get();
      const api = createApiStores(h.database);
      const scene = await newScene(h);
      const fence = await lease(h, scene, 'worker-a', scene.t0);
      let n = 0;
      const add = async (
        key: string,
        stepNumber: number,
        end: 'denied' | 'succeeded' | null,
        reasonCode = 'policy.matrix.external_write',
      ) => {
        n += 1;
        const row = intent(scene, { stepNumber, argumentsHash: key.repeat(64), createdAt: later(scene.t0, n) });
        await h.stores.invocations.insertIntent(scene.tenantId, row, []);
        if (end === null) return;
        await h.stores.invocations.complete(
          scene.tenantId,
          row.id,
          fence,
          {
            status: end,
            outcomeStatus: end,
            reasonCode: end === 'denied' ? reasonCode : 'tool.succeeded',
            result: null,
            error: null,
            outputBytes: null,
            truncated: false,
            artifactId: null,
            finishedAt: later(scene.t0, n),
          },
          [],
        );
      };
      // a: four identical calls over steps 1-3, two of them succeeded; b: one denial in step 2
      // beside a plain call; c: three calls (far); d: five calls, two denials under two reasons;
      // e: one call per step (far).
      for (const [key, step, end] of [
        ['a', 1, 'succeeded'],
        ['a', 2, null],
        ['a', 3, 'succeeded'],
        ['a', 3, null],
        ['b', 1, null],
        ['b', 2, 'denied'],
        ['c', 1, null],
        ['c', 2, null],
        ['c', 3, null],
        ['d', 1, 'denied'],
        ['d', 1, null],
        ['d', 2, 'succeeded'],
        ['d', 3, null],
        ['e', 1, null],
        ['e', 2, null],
        ['e', 3, null],
      ] as const)
        await add(key, step, end);
      await add('d', 3, 'denied', 'policy.breaker.repeated_denial');
      await h.stores.runs.releaseLease(scene.tenantId, fence);

      for (const through of [1, 2, 3]) {
        const full = await h.stores.invocations.breakerTally(scene.tenantId, scene.runId, { to: through });
        const calls = new Map<string, number>();
        const denied = new Set<string>();
        for (const g of full.groups) {
          calls.set(g.argumentsHash, (calls.get(g.argumentsHash) ?? 0) + g.count);
          if (g.outcomeStatus === 'denied') denied.add(g.argumentsHash);
        }
        const near = full.groups.filter((g) => (calls.get(g.argumentsHash) ?? 0) >= 4 || denied.has(g.argumentsHash));
        const view = await api.invocationQueries.stepView(scene.tenantId, scene.runId, through);
        expect(sortGroups(view.tally.groups)).toEqual(sortGroups(near));
        expect(new Set(view.tally.groups.map((g) => g.argumentsHash[0]))).toEqual(
          new Set({ 1: ['d'], 2: ['b', 'd'], 3: ['a', 'b', 'd'] }[through]),
        );
      }
    });

    it('lists invocations by filter in (created_at, id) order with keyset pages, tenant-scoped', async () => {
      const h = get();
      const api = createApiStores(h.database);
      const scene = await newScene(h);
      const other = await newScene(h);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const row = intent(scene, { createdAt: later(scene.t0, i * 1000), status: i % 2 === 0 ? 'authorized' : 'waiting_for_approval' });
        await h.stores.invocations.insertIntent(scene.tenantId, row, []);
        ids.push(row.id);
      }
      await h.stores.invocations.insertIntent(other.tenantId, intent(other), []);

      const first = await api.invocationQueries.list(scene.tenantId, {}, { after: null, limit: 2 });
      expect(first.map((r) => r.id)).toEqual(ids.slice(0, 2));
      const last = first.at(-1)!;
      const second = await api.invocationQueries.list(scene.tenantId, {}, { after: { createdAt: last.createdAt, id: last.id }, limit: 10 });
      expect(second.map((r) => r.id)).toEqual(ids.slice(2));

      const waiting = await api.invocationQueries.list(scene.tenantId, { status: 'waiting_for_approval' }, { after: null, limit: 10 });
      expect(waiting.map((r) => r.id)).toEqual([ids[1], ids[3]]);
      expect(await api.invocationQueries.list(scene.tenantId, { runId: other.runId }, { after: null, limit: 10 })).toEqual([]);
      expect(await api.invocationQueries.list(scene.tenantId, { toolName: 'nope.nothing' }, { after: null, limit: 10 })).toEqual([]);
      expect((await api.invocationQueries.list(other.tenantId, {}, { after: null, limit: 10 })).map((r) => r.runId)).toEqual([other.runId]);
    });

    it('records a review once, keeps the invocation UNCERTAIN, and drops it from the queue', async () => {
      const h = get();
      const api = createApiStores(h.database);
      const scene = await newScene(h);
      const id = await uncertainRow(h, scene, scene.t0);
      expect((await api.invocationQueries.listUnreviewedUncertain(scene.tenantId, { after: null, limit: 10 })).map((r) => r.id)).toEqual([
        id,
      ]);

      const at = later(scene.t0, 60_000);
      const review = await api.reviews.record(
        scene.tenantId,
        { invocationId: id, resolution: 'succeeded', note: 'The ticket exists.', reviewedBy: 'reviewer-1', reviewedAt: at },
        [reviewEvent(scene, id, at)],
      );
      expect(review).toMatchObject({
        invocationId: id,
        runId: scene.runId,
        resolution: 'succeeded',
        note: 'The ticket exists.',
        reviewedBy: 'reviewer-1',
        reviewedAt: at,
      });
      expect((await h.stores.invocations.getById(scene.tenantId, id))?.status).toBe('uncertain');
      expect(await api.invocationQueries.listUnreviewedUncertain(scene.tenantId, { after: null, limit: 10 })).toEqual([]);
      expect((await h.stores.events.listAfter(scene.tenantId, scene.runId, 0, 10)).map((e) => e.type)).toContain(
        'review.uncertain.resolved',
      );
      expect(await api.reviews.getByInvocation(scene.tenantId, id)).toEqual(review);

      await expect(
        api.reviews.record(
          scene.tenantId,
          { invocationId: id, resolution: 'failed', note: 'again', reviewedBy: 'reviewer-2', reviewedAt: at },
          [],
        ),
      ).rejects.toSatisfy(isCode('store.invalid_transition'));
      expect((await api.reviews.getByInvocation(scene.tenantId, id))?.resolution).toBe('succeeded');
    });

    it("refuses to review a row that is not UNCERTAIN, or another tenant's row (not found)", async () => {
      const h = get();
      const api = createApiStores(h.database);
      const scene = await newScene(h);
      const other = await newScene(h);
      const row = intent(scene);
      await h.stores.invocations.insertIntent(scene.tenantId, row, []);
      const review = { invocationId: row.id, resolution: 'failed' as const, note: '', reviewedBy: 'r', reviewedAt: scene.t0 };
      await expect(api.reviews.record(scene.tenantId, review, [])).rejects.toSatisfy(isCode('store.invalid_transition'));
      const foreign = await uncertainRow(h, other, other.t0);
      await expect(api.reviews.record(scene.tenantId, { ...review, invocationId: foreign }, [])).rejects.toSatisfy(
        isCode('store.not_found'),
      );
      expect(await api.invocationQueries.listUnreviewedUncertain(scene.tenantId, { after: null, limit: 10 })).toEqual([]);
    });

    it('updates the mutable columns of a tenant MCP server and nothing of another tenant', async () => {
      const h = get();
      const api = createApiStores(h.database);
      const scene = await newScene(h);
      const other = await newScene(h);
      const base = {
        serverId: 'acme',
        transport: 'http' as const,
        endpoint: 'https://mcp.acme.example/mcp',
        authScheme: 'none' as const,
        authName: null,
        credentialRef: null,
        tokenEndpoint: null,
        tokenScopes: null,
        sideEffect: 'external_write' as const,
        risk: 'high' as const,
        idempotency: 'non_idempotent' as const,
        requiredScopes: [],
        timeoutSeconds: 30,
        maximumOutputBytes: 1024,
        createdAt: scene.t0,
      };
      await h.stores.mcpServers.create(scene.tenantId, base);
      const updated = await api.mcpServerAdmin.update(scene.tenantId, 'acme', {
        authScheme: 'bearer',
        credentialRef: 'env:ACME_TOKEN',
        requiredScopes: ['mcp.acme.use'],
        timeoutSeconds: 10,
      });
      expect(updated).toMatchObject({
        serverId: 'acme',
        authScheme: 'bearer',
        credentialRef: 'env:ACME_TOKEN',
        requiredScopes: ['mcp.acme.use'],
        timeoutSeconds: 10,
        endpoint: base.endpoint,
      });
      expect(await api.mcpServerAdmin.update(scene.tenantId, 'acme', {})).toEqual(updated);
      await expect(api.mcpServerAdmin.update(other.tenantId, 'acme', { timeoutSeconds: 5 })).rejects.toSatisfy(isCode('store.not_found'));
    });
  });
}
