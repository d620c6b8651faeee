import { describe, expect, it } from 'vitest';
import { argumentsHash, contentBytes, idempotencyKey } from '@veetbot/domain';
import { concludedOf, drivers, T0 } from '../src';
import { eventTypes, expectedEventKeys, expectSixFieldOutcome, usePipelineHarness } from './pipeline-suite';

/**
 * § The pipeline: one builtin call walks all fourteen steps in order over a real database, and
 * leaves exactly the row and the four events the specification describes (§ Schema additions;
 * § Events and telemetry: "The event carries identity and classification. The row carries the
 * payload.").
 */
describe.each(drivers())('executor happy path (%s)', (driver) => {
  const scene = usePipelineHarness(driver);

  const cases = [
    {
      tool: 'demo.external_write',
      args: { line: 'happy-path-sentinel-line-91d2' },
      sentinels: ['happy-path-sentinel-line-91d2'],
      idempotencyClass: 'non_idempotent',
      sideEffect: true,
    },
    {
      tool: 'math.evaluate',
      args: { expression: '40 + 2 + 0 * 777313' },
      sentinels: ['777313'],
      idempotencyClass: 'read_only',
      sideEffect: false,
    },
  ] as const;

  it.each(cases)(
    '$tool walks steps 1–14 and ends SUCCEEDED with the row and four events',
    async ({ tool, args, sentinels, idempotencyClass, sideEffect }) => {
      const h = scene();
      const request = h.call(tool, args);
      const result = concludedOf(await h.execute(request));

      // Exactly the fourteen steps, in order, once each.
      expect(h.steps).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
      expect(result.invocationStatus).toBe('succeeded');
      expectSixFieldOutcome(result.item, 'tool.ok');
      expect(result.item.outcome.action).toBe(tool);
      expect(h.probe(tool).executions).toBe(1);

      // The row: § Schema additions, every column the durable path owns.
      const row = await h.invocationOfCall(request.callId);
      const spec = h.registry.get(tool).spec;
      const key = idempotencyKey({
        runId: h.runId,
        stepNumber: 1,
        callId: request.callId,
        toolName: tool,
        toolVersion: spec.version,
        argumentsHash: argumentsHash(args),
      });
      expect(row).toMatchObject({
        status: 'succeeded',
        outcomeStatus: 'succeeded',
        reasonCode: 'tool.ok',
        idempotencyKey: key,
        argumentsHash: argumentsHash(args),
        idempotencyClass,
        originTrust: 'user',
        toolSource: 'builtin',
        serverId: null,
        toolVersion: spec.version,
        attemptNumber: 1,
        truncated: false,
        artifactId: null,
        parallelGroup: null,
        suspendedKind: null,
      });
      expect(row.arguments).toEqual(args);
      expect(row.startedAt?.getTime()).toBe(T0.getTime());
      expect(row.finishedAt).not.toBeNull();
      expect(row.outputBytes).toBeGreaterThan(0);
      if (sideEffect) expect(row.effectSentAt).not.toBeNull();
      else expect(row.effectSentAt).toBeNull();
      // The model's item is what the row holds (step 13 persists what step 14 renders).
      expect(row.result).toMatchObject({ content: result.item.content, trust: result.item.trust });

      // The events: exactly proposed, authorized, started, completed for this invocation.
      const events = await h.eventsOf(row.id);
      expect(eventTypes(events)).toEqual(['tool.call.proposed', 'tool.call.authorized', 'tool.call.started', 'tool.call.completed']);
      expect(events.map((e) => e.sequence)).toEqual([...events.map((e) => e.sequence)].sort((a, b) => a - b));
      for (const event of events) {
        // Only identity and classification: the exact key set for the type.
        expect(Object.keys(event.payload).sort(), event.type).toEqual(expectedEventKeys(event.type));
        expect(event.payload).toMatchObject({
          invocation_id: row.id,
          run_id: h.runId,
          step_number: 1,
          call_id: request.callId,
          tool_name: tool,
          tool_source: 'builtin',
          tool_version: spec.version,
          idempotency_class: idempotencyClass,
          parallel_group: null,
        });
        // No argument value, no result text in any payload.
        const serialized = JSON.stringify(event.payload);
        for (const sentinel of sentinels) expect(serialized).not.toContain(sentinel);
        for (const value of Object.values(args)) expect(serialized).not.toContain(value);
      }
      const completed = events[3]!;
      expect(completed.payload).toMatchObject({
        outcome_status: 'succeeded',
        reason_code: 'tool.ok',
        effect_sent: sideEffect,
        output_bytes: row.outputBytes,
        truncated: false,
      });
      expect(events[2]!.payload.effect_sent).toBe(false);
      // Unique derivation keys, derived from the idempotency key (a retried write is one event).
      const keys = events.map((e) => e.derivationKey);
      expect(new Set(keys).size).toBe(keys.length);
      for (const k of keys) expect(k.startsWith(`${key}:`)).toBe(true);
      const all = await h.events();
      expect(new Set(all.map((e) => e.derivationKey)).size).toBe(all.length);
    },
  );

  it('demo.external_write sends exactly one line carrying the application key', async () => {
    const h = scene();
    const request = h.call('demo.external_write', { line: 'exactly once' });
    const result = concludedOf(await h.execute(request));
    const row = await h.invocationOfCall(request.callId);
    expect(await h.outboxLines()).toEqual([`${row.idempotencyKey}\texactly once`]);
    expect(result.item.structured).toEqual({
      bytes_written: Buffer.byteLength(`${row.idempotencyKey}\texactly once\n`),
      idempotency_key: row.idempotencyKey,
    });
    // output_bytes is the UTF-8 serialization of the content the tool returned, before envelopes.
    expect(row.outputBytes).toBe(contentBytes([{ type: 'text', text: 'Sent one line to the outbox.' }]));
    expect(result.item.trust).toBe('internal_tool');
  });
});
