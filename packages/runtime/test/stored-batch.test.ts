import { describe, expect, it } from 'vitest';
import type { Principal } from '@veetbot/domain';
import { fromStoredBatch, toStoredBatch, type StepSubmission } from '../src';

/**
 * The step row's batch (§ Parallel calls: a worker that claims a step rebuilds every request
 * from it): pure conversion, no store. The WorkerLoop that reads it runs over the real stores
 * in apps/integration-tests/test/runtime/worker-loop.test.ts.
 */
const principal: Principal = { tenant_id: 't1', principal_id: 'p1', scopes: ['demo.read', 'demo.write'] };

describe('the stored batch', () => {
  it('rebuilds exactly the submission that was stored', () => {
    const submission: StepSubmission = {
      tenantId: 't1',
      runId: 'r1',
      stepNumber: 3,
      principal,
      calls: [
        { callId: 'a', toolName: 'demo.read', arguments: { n: 1 }, contextTrust: ['user', 'external_untrusted'], argumentTrust: { n: 'external_untrusted' }, origin: 'runtime' },
        { callId: 'b', toolName: 'demo.read', arguments: undefined, contextTrust: [] },
      ],
      callerTimeoutSeconds: 12,
    };
    const rebuilt = fromStoredBatch({ tenantId: 't1', runId: 'r1', stepNumber: 3 }, toStoredBatch(submission));
    expect(rebuilt).toEqual({
      ...submission,
      calls: [submission.calls[0], { callId: 'b', toolName: 'demo.read', arguments: null, contextTrust: [], origin: 'model' }],
    });
    expect(toStoredBatch(rebuilt)).toEqual(toStoredBatch(submission));
    const { callerTimeoutSeconds: _omit, ...untimed } = submission;
    expect('callerTimeoutSeconds' in fromStoredBatch(submission, toStoredBatch(untimed))).toBe(false);
  });
});
