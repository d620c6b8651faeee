import { describe, expect, it } from 'vitest';
import { INVALID_TOOL_NAME, type PipelineResult, type ToolCallRequest } from '@veetbot/executor';
import type { ToolResultItem } from '@veetbot/domain';
import { concludedOf, drivers, gate, HOSTILE, SimulatedCrash, until, type PipelineHarness } from '../src';
import { expectSixFieldOutcome, unwrapEnvelope, usePipelineHarness } from './pipeline-suite';

/**
 * Hard gate 5 and § What the model reads: whatever a tool, a remote system or the model itself
 * says, it never reaches the outcome (six fields, a fixed message per reason code). Where the
 * text is external it reaches the model only as data: inside an EXTERNAL_UNTRUSTED envelope.
 * The event stream never carries it either.
 */

/** Fragments of the hostile string: none may leak, not even in part. */
const FRAGMENTS = [HOSTILE, 'IGNORE PREVIOUS', 'admin.delete_all'];

function containsHostile(text: string): boolean {
  return FRAGMENTS.some((f) => text.includes(f));
}

interface Path {
  readonly name: string;
  readonly reasonCode: string;
  /** The hostile text is external output the model should still see, as enveloped data. */
  readonly deliveredAsData: boolean;
  run(h: PipelineHarness): Promise<ToolResultItem>;
}

async function concluded(result: Promise<PipelineResult>): Promise<ToolResultItem> {
  return concludedOf(await result).item;
}

const PATHS: Path[] = [
  {
    name: 'tool failure with external_text',
    reasonCode: 'tool.upstream_error',
    deliveredAsData: true,
    run: (h) => concluded(h.execute(h.call('demo.hostile_failure', { mode: 'failure' }))),
  },
  {
    name: 'successful output from an untrusted source',
    reasonCode: 'tool.ok',
    deliveredAsData: true,
    run: (h) => concluded(h.execute(h.call('demo.hostile_failure', { mode: 'success' }))),
  },
  {
    name: 'thrown error',
    reasonCode: 'tool.internal',
    deliveredAsData: false,
    run: (h) => concluded(h.execute(h.call('demo.throws', {}))),
  },
  {
    name: 'timeout',
    reasonCode: 'tool.timeout',
    deliveredAsData: false,
    run: (h) => concluded(h.execute(h.call('demo.slow_read', { delay_ms: 10_000, note: HOSTILE }), { callerTimeoutSeconds: 0.2 })),
  },
  {
    name: 'output too large',
    reasonCode: 'tool.output_too_large',
    deliveredAsData: true,
    run: (h) => concluded(h.execute(h.call('demo.huge_output', { bytes: 40_000, marker: HOSTILE, output_trust: 'external_untrusted' }))),
  },
  {
    name: 'output invalid (schema)',
    reasonCode: 'tool.output_invalid',
    deliveredAsData: false,
    run: (h) => concluded(h.execute(h.call('demo.schema_output', { valid: false, note: HOSTILE }))),
  },
  {
    name: 'output invalid (malformed ToolResult)',
    reasonCode: 'tool.output_invalid',
    deliveredAsData: false,
    run: (h) => concluded(h.execute(h.call('demo.bad_result', {}))),
  },
  {
    name: 'arguments invalid',
    reasonCode: 'tool.arguments_invalid',
    deliveredAsData: false,
    run: (h) => concluded(h.execute(h.call('demo.slow_read', { delay_ms: HOSTILE, [HOSTILE]: HOSTILE }))),
  },
  {
    name: 'denied (missing scope)',
    reasonCode: 'policy.scope.missing',
    deliveredAsData: false,
    run: (h) => concluded(h.execute(h.call('demo.external_write', { line: HOSTILE }, { principal: { ...h.principal, scopes: [] } }))),
  },
  {
    name: 'denied (approval refused)',
    reasonCode: 'policy.matrix.external_write',
    deliveredAsData: false,
    async run(h) {
      const request = h.call('demo.external_write', { line: HOSTILE }, { contextTrust: ['external_untrusted'] });
      const waiting = await h.execute(request);
      if (waiting.kind !== 'approval_required') throw new Error('expected approval_required');
      const approval = await h.stores.approvals.getByInvocation(h.tenantId, waiting.invocationId!);
      await h.stores.approvals.decide(
        h.tenantId,
        approval!.id,
        { decision: 'denied', decidedBy: 'approver-1', decidedAt: h.clock.now() },
        [],
      );
      return concluded(h.execute(request));
    },
  },
  {
    name: 'unknown tool (hostile arguments)',
    reasonCode: 'policy.matrix.unknown_tool',
    deliveredAsData: false,
    run: (h) => concluded(h.execute(h.call('demo.not_registered', { instruction: HOSTILE }))),
  },
  {
    name: 'unknown tool (the name itself is hostile)',
    reasonCode: 'policy.matrix.unknown_tool',
    deliveredAsData: false,
    run: (h) => concluded(h.execute(h.call(HOSTILE, {}))),
  },
  {
    name: 'concurrency conflict',
    reasonCode: 'tool.concurrency_conflict',
    deliveredAsData: false,
    async run(h) {
      const release = gate();
      h.probe('demo.slow_read').during = () => release.opened;
      const request = h.call('demo.slow_read', { note: HOSTILE });
      const first = h.execute(request);
      await until(() => h.probe('demo.slow_read').executions === 1);
      const item = await concluded(h.execute(request));
      release.open();
      await first;
      return item;
    },
  },
  {
    name: 'recovery: uncertain',
    reasonCode: 'tool.outcome_unknown',
    deliveredAsData: false,
    async run(h) {
      const request: ToolCallRequest = h.call('demo.external_write', { line: HOSTILE });
      h.crashAt = 11;
      await expect(h.execute(request)).rejects.toBeInstanceOf(SimulatedCrash);
      h.crashAt = null;
      const b = await h.takeOver('worker-b');
      return concluded(b.execute(request));
    },
  },
];

describe.each(drivers())('executor outcomes: no external text as narration (%s)', (driver) => {
  const scene = usePipelineHarness(driver);

  it.each(PATHS)('$name → $reasonCode', async (path) => {
    const h = scene();
    const item = await path.run(h);

    // Exactly the six fields, the table's message, and nothing hostile anywhere in the outcome.
    expectSixFieldOutcome(item, path.reasonCode);
    expect(containsHostile(JSON.stringify(item.outcome))).toBe(false);

    // Outside content, the item carries nothing hostile either (tool name, call id, structured).
    expect(containsHostile(JSON.stringify({ ...item, content: [] }))).toBe(false);

    // Inside content: only within a whole EXTERNAL_UNTRUSTED envelope.
    const hostileParts = item.content.filter((p) => p.type === 'text' && containsHostile(p.text));
    for (const part of hostileParts) {
      if (part.type !== 'text') continue;
      expect(part.trust).toBe('external_untrusted');
      const envelope = unwrapEnvelope(part.text);
      expect(envelope, 'hostile text outside an envelope').not.toBeNull();
      expect(envelope!.trust).toBe('external_untrusted');
      expect(containsHostile(envelope!.body)).toBe(true);
    }
    if (path.deliveredAsData) {
      expect(hostileParts.length).toBeGreaterThan(0);
      expect(item.trust).toBe('external_untrusted');
    } else {
      expect(hostileParts).toEqual([]);
    }

    // No event payload of the run carries it.
    for (const event of await h.events()) expect(containsHostile(JSON.stringify(event.payload)), event.type).toBe(false);
  });

  it('an unknown name outside the registry grammar is shown, recorded and evented as a fixed placeholder', async () => {
    const h = scene();
    const request = h.call(HOSTILE, {});
    const item = await concluded(h.execute(request));
    expect(item.outcome.action).toBe(INVALID_TOOL_NAME);
    expect(item.tool_name).toBe(INVALID_TOOL_NAME);
    const row = await h.invocationOfCall(request.callId);
    expect(row).toMatchObject({ toolName: INVALID_TOOL_NAME, status: 'denied' });
    // The same call again reads the same row: the placeholder is stable across resubmission.
    expect(JSON.stringify(await concluded(h.execute(request)))).toBe(JSON.stringify(item));
    // A name in the grammar is an identifier and is repeated back as asked.
    const valid = await concluded(h.execute(h.call('demo.not_registered', {})));
    expect(valid.outcome.action).toBe('demo.not_registered');
  });
});
