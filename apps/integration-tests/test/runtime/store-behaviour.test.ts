import { describe, expect, it } from 'vitest';
import { argumentsHash, idempotencyKey, InvalidTransitionError, StoreError } from '@veetbot/domain';
import type { LeaseFence, NewInvocation } from '@veetbot/ports';
import { drivers } from '../../src';
import { readIntent, tool, useHarness, type Harness } from './fixtures';

/**
 * Where the runtime's retired in-memory stores (ADR 0029) answered differently from the real
 * store, the real answer, on both drivers. The fakes let a suspended call be suspended again,
 * refused to return the watermark of a row no longer RUNNING, and deduplicated an idempotency
 * key per tenant; the real store refuses the first, returns the first mark (§ The effect
 * watermark: set once), and holds one key once across every tenant (the unique key decides,
 * § Deduplication) without telling a tenant anything about another tenant's row.
 */
describe.each(drivers())('the store the runtime relies on, on %s', (driver) => {
  const harness = useHarness(driver);

  /** A run of the harness's tenant, leased by `worker-x`, and an AUTHORIZED intent in it. */
  async function intentIn(h: Harness, callId = 'c1'): Promise<{ fence: LeaseFence; row: NewInvocation & { id: string } }> {
    const { runId, sessionId } = await h.open();
    const lease = await h.stores.runs.acquireLease(h.tenantId, runId, 'worker-x', 60_000, h.clock.now());
    if (lease === null) throw new Error('the lease was not acquired');
    const args = { n: 1 };
    const base = { runId, sessionId, stepNumber: 1, callId, toolName: 'demo.read', toolVersion: '1' };
    const hash = argumentsHash(args);
    const row = {
      id: globalThis.crypto.randomUUID(),
      ...readIntent(h.clock.now(), {
        ...base,
        arguments: args,
        argumentsHash: hash,
        idempotencyKey: idempotencyKey({ ...base, argumentsHash: hash }),
      }),
    };
    const inserted = await h.stores.invocations.insertIntent(h.tenantId, row, []);
    expect(inserted.inserted).toBe(true);
    return { fence: { runId, fencingToken: lease.fencingToken }, row };
  }

  it('refuses to suspend a call that is already suspended, and keeps the first suspension', async () => {
    const h = await harness({ tools: [tool({ name: 'demo.read' })] });
    const { fence, row } = await intentIn(h);
    await h.stores.invocations.claim(h.tenantId, row.id, fence, h.clock.now(), []);
    await h.stores.invocations.suspend(h.tenantId, row.id, fence, { kind: 'user_input', ref: 'q1' }, []);
    await expect(h.stores.invocations.suspend(h.tenantId, row.id, fence, { kind: 'user_input', ref: 'q2' }, [])).rejects.toSatisfy(
      InvalidTransitionError.isInstance,
    );
    expect(await h.stores.invocations.getById(h.tenantId, row.id)).toMatchObject({
      status: 'running',
      suspendedKind: 'user_input',
      suspendedRef: 'q1',
    });
  });

  it('returns the first watermark to a second mark, even once the row is terminal; a terminal row without one is refused', async () => {
    const h = await harness({ tools: [tool({ name: 'demo.read' })] });
    const terminal = (at: Date) => ({
      status: 'succeeded' as const,
      outcomeStatus: 'succeeded' as const,
      reasonCode: 'tool.ok',
      result: null,
      error: null,
      outputBytes: 0,
      truncated: false,
      artifactId: null,
      finishedAt: at,
    });

    const marked = await intentIn(h, 'marked');
    await h.stores.invocations.claim(h.tenantId, marked.row.id, marked.fence, h.clock.now(), []);
    const first = await h.stores.invocations.markEffectSent(h.tenantId, marked.row.id, marked.fence, h.clock.advance(10));
    expect(await h.stores.invocations.markEffectSent(h.tenantId, marked.row.id, marked.fence, h.clock.advance(10))).toEqual(first);
    await h.stores.invocations.complete(h.tenantId, marked.row.id, marked.fence, terminal(h.clock.advance(10)), []);
    expect(await h.stores.invocations.markEffectSent(h.tenantId, marked.row.id, marked.fence, h.clock.advance(10))).toEqual(first);

    const unmarked = await intentIn(h, 'unmarked');
    await h.stores.invocations.claim(h.tenantId, unmarked.row.id, unmarked.fence, h.clock.now(), []);
    await h.stores.invocations.complete(h.tenantId, unmarked.row.id, unmarked.fence, terminal(h.clock.advance(10)), []);
    await expect(h.stores.invocations.markEffectSent(h.tenantId, unmarked.row.id, unmarked.fence, h.clock.advance(10))).rejects.toSatisfy(
      InvalidTransitionError.isInstance,
    );
    expect((await h.stores.invocations.getById(h.tenantId, unmarked.row.id))?.effectSentAt).toBeNull();
  });

  it('holds an idempotency key once across tenants: another tenant inserting it gets store.conflict and sees nothing', async () => {
    const a = await harness({ tools: [tool({ name: 'demo.read' })] });
    const b = await harness({ tools: [tool({ name: 'demo.read' })] });
    const { row } = await intentIn(a);
    const { runId, sessionId } = await b.open();
    // Both insert paths: the one-statement one (AUTHORIZED) and the transaction that also opens
    // an approval (WAITING_FOR_APPROVAL).
    for (const status of ['authorized', 'waiting_for_approval'] as const) {
      const forged = { ...row, id: globalThis.crypto.randomUUID(), runId, sessionId, status };
      const refused = await b.stores.invocations.insertIntent(b.tenantId, forged, []).then(
        () => null,
        (error: unknown) => error,
      );
      expect(StoreError.isInstance(refused) && refused.code).toBe('store.conflict');
    }
    expect(await b.stores.invocations.getByKey(b.tenantId, row.idempotencyKey)).toBeNull();
    expect(await b.stores.invocations.listForRun(b.tenantId, runId)).toEqual([]);
    expect(await b.stores.approvals.listPending(b.tenantId, 10)).toEqual([]);
    // Tenant A's row is untouched.
    expect(await a.stores.invocations.getByKey(a.tenantId, row.idempotencyKey)).toMatchObject({
      id: row.id,
      status: 'authorized',
      runId: row.runId,
    });
  });
});
