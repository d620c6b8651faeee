import { FencingError, InvalidTransitionError } from '@veetbot/domain';
import type { InvocationTerminal, LeaseFence } from '@veetbot/ports';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { type HarnessFactory, intent, later, lease, newScene, rowsOf, type Scene, type StoreHarness, toolEvent } from './harness';

/**
 * docs/adr/0074: the step's hot functions lost statements — the fence moved into the guarded
 * UPDATE's WHERE, the event append into one inline statement, finish's two reads into one.
 * What they must still do: refuse a stale or released token with FencingError before judging
 * the transition (a terminal row, an already marked watermark), write nothing then, and keep
 * every stream gapless and in append order whichever path an append takes.
 */

const succeeded = (at: Date): InvocationTerminal => ({
  status: 'succeeded',
  outcomeStatus: 'succeeded',
  reasonCode: 'tool.succeeded',
  result: { ok: true },
  error: null,
  outputBytes: 2,
  truncated: false,
  artifactId: null,
  finishedAt: at,
});

async function streamState(h: StoreHarness, scene: Scene): Promise<{ sequences: number[]; counter: number | null }> {
  const events = await h.stores.events.listAfter(scene.tenantId, scene.runId, 0, 1000);
  const counter = rowsOf<{ last_sequence: string | number }>(
    await h.database.tenant(scene.tenantId, (tx) =>
      tx.execute(sql`select last_sequence from event_streams where tenant_id = ${scene.tenantId} and stream_id = ${scene.runId}`),
    ),
  )[0];
  return { sequences: events.map((e) => e.sequence), counter: counter === undefined ? null : Number(counter.last_sequence) };
}

/** A call taken through intent, claim, watermark and result under `fence`, each with its event. */
async function fullCall(h: StoreHarness, scene: Scene, fence: LeaseFence, at: Date, stepNumber = 1): Promise<string> {
  const row = intent(scene, { stepNumber });
  await h.stores.invocations.insertIntent(scene.tenantId, row, [toolEvent(scene, 'tool.call.authorized', row, at)]);
  await h.stores.invocations.claim(scene.tenantId, row.id, fence, later(at, 1), [toolEvent(scene, 'tool.call.started', row, later(at, 1))]);
  await h.stores.invocations.markEffectSent(scene.tenantId, row.id, fence, later(at, 2));
  await h.stores.invocations.complete(scene.tenantId, row.id, fence, succeeded(later(at, 3)), [
    toolEvent(scene, 'tool.call.completed', row, later(at, 3), { outcome_status: 'succeeded', effect_sent: true }),
  ]);
  return row.id;
}

export function hotPathStatementsContract(get: HarnessFactory): void {
  describe('hot functions with fewer statements (docs/adr/0074)', () => {
    it('a stale token is refused with FencingError before the transition is judged, and writes nothing', async () => {
      const h = get();
      const scene = await newScene(h);
      const stale = await lease(h, scene, 'worker-a', scene.t0, 1_000);
      // Rows whose transition a fresh token would have refused (terminal; already marked) or
      // allowed (authorized; running): the stale token gets FencingError for every one.
      const terminal = intent(scene);
      const marked = intent(scene);
      const authorized = intent(scene);
      for (const row of [terminal, marked, authorized]) await h.stores.invocations.insertIntent(scene.tenantId, row, []);
      await h.stores.invocations.claim(scene.tenantId, terminal.id, stale, scene.t0, []);
      await h.stores.invocations.complete(scene.tenantId, terminal.id, stale, succeeded(scene.t0), []);
      await h.stores.invocations.claim(scene.tenantId, marked.id, stale, scene.t0, []);
      const mark = await h.stores.invocations.markEffectSent(scene.tenantId, marked.id, stale, later(scene.t0, 1));

      const fresh = await lease(h, scene, 'worker-b', later(scene.t0, 2_000));
      const before = await streamState(h, scene);
      const at = later(scene.t0, 2_001);
      const event = (row: { id: string; callId: string; toolName: string; stepNumber: number }) => [
        toolEvent(scene, 'tool.call.started', row, at),
      ];
      const refusals: (() => Promise<unknown>)[] = [
        () => h.stores.invocations.claim(scene.tenantId, terminal.id, stale, at, event(terminal)),
        () => h.stores.invocations.claim(scene.tenantId, authorized.id, stale, at, event(authorized)),
        () => h.stores.invocations.markEffectSent(scene.tenantId, marked.id, stale, at),
        () => h.stores.invocations.complete(scene.tenantId, terminal.id, stale, succeeded(at), event(terminal)),
        () => h.stores.invocations.complete(scene.tenantId, marked.id, stale, succeeded(at), event(marked)),
      ];
      for (const refusal of refusals) await expect(refusal()).rejects.toSatisfy(FencingError.isInstance);

      expect(await streamState(h, scene)).toEqual(before);
      expect(await h.stores.invocations.getById(scene.tenantId, authorized.id)).toMatchObject({ status: 'authorized', startedAt: null });
      expect(await h.stores.invocations.getById(scene.tenantId, marked.id)).toMatchObject({ status: 'running', finishedAt: null });
      // The fresh token still gets the transition's own answers: the first mark, a refused rewrite.
      expect((await h.stores.invocations.markEffectSent(scene.tenantId, marked.id, fresh, at)).getTime()).toBe(mark.getTime());
      await expect(h.stores.invocations.complete(scene.tenantId, terminal.id, fresh, succeeded(at), [])).rejects.toSatisfy(
        InvalidTransitionError.isInstance,
      );
    });

    it('a released lease refuses its own token: claim, mark and complete', async () => {
      const h = get();
      const scene = await newScene(h);
      const fence = await lease(h, scene, 'worker-a', scene.t0);
      const running = intent(scene);
      const authorized = intent(scene);
      await h.stores.invocations.insertIntent(scene.tenantId, running, []);
      await h.stores.invocations.insertIntent(scene.tenantId, authorized, []);
      await h.stores.invocations.claim(scene.tenantId, running.id, fence, scene.t0, []);
      expect(await h.stores.runs.releaseLease(scene.tenantId, fence)).toBe(true);

      await expect(h.stores.invocations.claim(scene.tenantId, authorized.id, fence, scene.t0, [])).rejects.toSatisfy(
        FencingError.isInstance,
      );
      await expect(h.stores.invocations.markEffectSent(scene.tenantId, running.id, fence, scene.t0)).rejects.toSatisfy(
        FencingError.isInstance,
      );
      await expect(h.stores.invocations.complete(scene.tenantId, running.id, fence, succeeded(scene.t0), [])).rejects.toSatisfy(
        FencingError.isInstance,
      );
      expect(await h.stores.invocations.getById(scene.tenantId, running.id)).toMatchObject({ status: 'running', effectSentAt: null });
    });

    it("a step's finish under a stale token reads and completes, but leaves the new holder's lease alone", async () => {
      const h = get();
      const scene = await newScene(h);
      const stale = await lease(h, scene, 'worker-a', scene.t0, 1_000);
      const call = await h.stores.invocations.getById(scene.tenantId, await fullCall(h, scene, stale, scene.t0));
      const callId = call?.callId ?? '';
      const fresh = await lease(h, scene, 'worker-b', later(scene.t0, 2_000));
      const finished = await h.stores.steps.finish(scene.tenantId, {
        runId: scene.runId,
        stepNumber: 1,
        fencingToken: stale.fencingToken,
        callIds: [callId],
        failReason: null,
        at: later(scene.t0, 2_001),
      });
      expect(finished).toMatchObject({ complete: true, released: false, failed: null });
      expect(finished.rows.map((r) => r.callId)).toEqual([callId]);
      const run = await h.stores.runs.get(scene.tenantId, scene.runId);
      expect(run).toMatchObject({ leaseOwner: 'worker-b', fencingToken: fresh.fencingToken });
      // A call without its terminal row keeps the step open; the holder's own finish releases.
      const open = await h.stores.steps.finish(scene.tenantId, {
        runId: scene.runId,
        stepNumber: 1,
        fencingToken: fresh.fencingToken,
        callIds: [callId, 'call_missing'],
        failReason: null,
        at: later(scene.t0, 2_002),
      });
      expect(open).toMatchObject({ complete: false, released: true });
    });

    it('events stay gapless and in append order across the inline append, the first event of a stream, empty batches and known keys', async () => {
      const h = get();
      const scene = await newScene(h);
      const fence = await lease(h, scene, 'worker-a', scene.t0);
      // The run's first event: no counter yet (the inline statement finds none and defers).
      expect((await streamState(h, scene)).counter).toBeNull();
      const first = intent(scene);
      const authorized = toolEvent(scene, 'tool.call.authorized', first, scene.t0);
      await h.stores.invocations.insertIntent(scene.tenantId, first, [authorized]);
      expect(await streamState(h, scene)).toEqual({ sequences: [1], counter: 1 });
      // An empty batch reserves nothing; two events in one batch take two numbers in order.
      await h.stores.invocations.claim(scene.tenantId, first.id, fence, later(scene.t0, 1), []);
      expect((await streamState(h, scene)).counter).toBe(1);
      await h.stores.invocations.markEffectSent(scene.tenantId, first.id, fence, later(scene.t0, 2));
      const completed = toolEvent(scene, 'tool.call.completed', first, later(scene.t0, 3), { outcome_status: 'succeeded' });
      const extra = { ...completed, derivationKey: `${completed.derivationKey}:extra` };
      await h.stores.invocations.complete(scene.tenantId, first.id, fence, succeeded(later(scene.t0, 3)), [completed, extra]);
      // A known key in the middle of a batch: its number is given back, the next one closes up.
      const second = intent(scene);
      const secondAuthorized = toolEvent(scene, 'tool.call.authorized', second, later(scene.t0, 4));
      await h.stores.invocations.insertIntent(scene.tenantId, second, [secondAuthorized]);
      const started = toolEvent(scene, 'tool.call.started', second, later(scene.t0, 5));
      await h.stores.invocations.claim(scene.tenantId, second.id, fence, later(scene.t0, 5), [secondAuthorized, started]);
      await fullCall(h, scene, fence, later(scene.t0, 10));

      const events = await h.stores.events.listAfter(scene.tenantId, scene.runId, 0, 100);
      expect(events.map((e) => [e.sequence, e.type, e.derivationKey])).toEqual([
        [1, 'tool.call.authorized', authorized.derivationKey],
        [2, 'tool.call.completed', completed.derivationKey],
        [3, 'tool.call.completed', extra.derivationKey],
        [4, 'tool.call.authorized', secondAuthorized.derivationKey],
        [5, 'tool.call.started', started.derivationKey],
        [6, 'tool.call.authorized', expect.any(String)],
        [7, 'tool.call.started', expect.any(String)],
        [8, 'tool.call.completed', expect.any(String)],
      ]);
      expect((await streamState(h, scene)).counter).toBe(8);
      // The payloads are the ones sent.
      expect(events[1]?.payload).toMatchObject({ invocation_id: first.id, outcome_status: 'succeeded' });
    });

    it('calls of one run in parallel: every number once, none missing, each call in its own order', async () => {
      const h = get();
      const scene = await newScene(h);
      const fence = await lease(h, scene, 'worker-a', scene.t0);
      // One event first, so every parallel append takes the inline statement on a counter that exists.
      await h.stores.invocations.insertIntent(scene.tenantId, intent(scene), [
        toolEvent(scene, 'tool.call.authorized', { id: 'seed', callId: 'seed', toolName: 'demo.echo', stepNumber: 1 }, scene.t0),
      ]);
      const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => fullCall(h, scene, fence, later(scene.t0, 100 * (i + 1)))));
      const events = await h.stores.events.listAfter(scene.tenantId, scene.runId, 0, 1000);
      expect(events.map((e) => e.sequence)).toEqual(Array.from({ length: 1 + 3 * ids.length }, (_, i) => i + 1));
      for (const id of ids) {
        const own = events.filter((e) => e.payload.invocation_id === id).map((e) => e.type);
        expect(own).toEqual(['tool.call.authorized', 'tool.call.started', 'tool.call.completed']);
      }
      expect((await streamState(h, scene)).counter).toBe(events.length);
    });
  });
}
