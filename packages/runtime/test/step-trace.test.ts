import { describe, expect, it } from 'vitest';
import type { Principal } from '@veetbot/domain';
import { checkResubmission, fromStoredBatch, toStoredBatch, type StepSubmission } from '../src';
import { readStoredTraceContext } from '../src/step-trace';
import { storedTraceContext } from '../src/stored-batch';
import type { StepRow } from '@veetbot/ports';

const principal: Principal = { tenant_id: 't1', principal_id: 'p1', scopes: ['demo.read'] };
const submission: StepSubmission = {
  tenantId: 't1',
  runId: 'r1',
  stepNumber: 1,
  principal,
  calls: [{ callId: 'a', toolName: 'demo.read', arguments: { n: 1 }, contextTrust: ['user'] }],
};
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

/** docs/adr/0068: the api's trace context stored with the step, beside (not in) the batch. */
describe('the trace context stored with a step', () => {
  it('round-trips through steps.batch and leaves the batch itself as it was', () => {
    const stored = toStoredBatch(submission, { traceparent: TRACEPARENT, tracestate: 'vendor=1' });
    expect(stored.trace_context).toEqual({ traceparent: TRACEPARENT, tracestate: 'vendor=1' });
    const json = JSON.parse(JSON.stringify(stored)) as unknown;
    expect(storedTraceContext(json)).toEqual({ traceparent: TRACEPARENT, tracestate: 'vendor=1' });
    expect(fromStoredBatch(json).batch).toEqual(fromStoredBatch(JSON.parse(JSON.stringify(toStoredBatch(submission)))).batch);
    expect(toStoredBatch(submission)).not.toHaveProperty('trace_context');
  });

  it('a resubmission is the same step whatever trace it came in (calls are compared, never the context)', () => {
    const row = { batch: JSON.parse(JSON.stringify(toStoredBatch(submission, { traceparent: TRACEPARENT }))) } as StepRow;
    expect(checkResubmission(row, submission)).toBe(row);
  });

  it('a value that is not a W3C traceparent the api wrote is ignored, never a reason to refuse the step', () => {
    for (const bad of [
      null,
      'x',
      [],
      { traceparent: 7 },
      { traceparent: '00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01' },
      { traceparent: '00-00000000000000000000000000000000-b7ad6b7169203331-01' },
      { traceparent: '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01' },
      { traceparent: 'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      { traceparent: `${TRACEPARENT}-extra` },
    ])
      expect(readStoredTraceContext(bad), JSON.stringify(bad)).toBeNull();
    // A tracestate outside printable ASCII or over 512 characters is dropped, the traceparent kept.
    expect(readStoredTraceContext({ traceparent: TRACEPARENT, tracestate: 'a=\n1' })).toEqual({ traceparent: TRACEPARENT });
    expect(readStoredTraceContext({ traceparent: TRACEPARENT, tracestate: 'a'.repeat(513) })).toEqual({ traceparent: TRACEPARENT });
    const stored = { ...JSON.parse(JSON.stringify(toStoredBatch(submission))), trace_context: { traceparent: 'garbage' } };
    expect(storedTraceContext(stored)).toBeNull();
    expect(fromStoredBatch(stored).batch).not.toBeNull();
  });
});
