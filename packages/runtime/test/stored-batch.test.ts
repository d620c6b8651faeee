import { describe, expect, it } from 'vitest';
import type { Principal } from '@veetbot/domain';
import { fromStoredBatch, toStoredBatch, type StepSubmission } from '../src';
import { storedCallsMatch } from '../src/stored-batch';

const principal: Principal = { tenant_id: 't1', principal_id: 'p1', scopes: ['demo.read', 'demo.write'] };

/**
 * `steps.batch` is storage: the specification's snake_case, crossed into the domain's StepBatch
 * in one place (stored-batch.ts) and checked there by the domain's one schema (docs/adr/0032).
 * What the stored form's own schema used to refuse is still refused.
 */
const stored = {
  version: 1,
  principal,
  calls: [{ call_id: 'a', tool_name: 'demo.read', arguments: { n: 1 }, context_trust: ['user'], origin: 'model' }],
  caller_timeout_seconds: null,
};
const call = stored.calls[0]!;

describe('the stored batch', () => {
  // A worker that claims a step rebuilds every request from it (§ Parallel calls): pure
  // conversion, no store; the WorkerLoop that reads it runs over the real stores in
  // apps/integration-tests/test/runtime/worker-loop.test.ts.
  it('rebuilds exactly the submission that was stored', () => {
    const submission: StepSubmission = {
      tenantId: 't1',
      runId: 'r1',
      stepNumber: 3,
      principal,
      calls: [
        {
          callId: 'a',
          toolName: 'demo.read',
          arguments: { n: 1 },
          contextTrust: ['user', 'external_untrusted'],
          argumentTrust: { n: 'external_untrusted' },
          origin: 'runtime',
        },
        { callId: 'b', toolName: 'demo.read', arguments: undefined, contextTrust: [] },
      ],
      callerTimeoutSeconds: 12,
    };
    const rebuilt = fromStoredBatch(toStoredBatch(submission)).batch;
    expect(rebuilt).toEqual({
      principal,
      calls: [submission.calls[0], { callId: 'b', toolName: 'demo.read', arguments: null, contextTrust: [], origin: 'model' }],
      callerTimeoutSeconds: 12,
    });
    expect(toStoredBatch(rebuilt!)).toEqual(toStoredBatch(submission));
    const { callerTimeoutSeconds: _omit, ...untimed } = submission;
    expect('callerTimeoutSeconds' in fromStoredBatch(toStoredBatch(untimed)).batch!).toBe(false);
  });

  it('reads back in the domain spelling', () => {
    expect(fromStoredBatch(stored)).toEqual({
      batch: { principal, calls: [{ callId: 'a', toolName: 'demo.read', arguments: { n: 1 }, contextTrust: ['user'], origin: 'model' }] },
    });
  });

  it.each([
    ['not an object', 'nope'],
    ['another version', { ...stored, version: 2 }],
    ['no caller_timeout_seconds', { version: 1, principal, calls: stored.calls }],
    ['a non-positive caller timeout', { ...stored, caller_timeout_seconds: 0 }],
    ['an unknown batch key', { ...stored, step_number: 1 }],
    ['no calls', { ...stored, calls: [] }],
    ['calls that are not a list', { ...stored, calls: 'nope' }],
    ['a call without its origin', { ...stored, calls: [{ call_id: 'a', tool_name: 'demo.read', arguments: {}, context_trust: ['user'] }] }],
    [
      'a call in the domain spelling',
      { ...stored, calls: [{ callId: 'a', toolName: 'demo.read', arguments: {}, contextTrust: ['user'], origin: 'model' }] },
    ],
    ['a call with an unknown key', { ...stored, calls: [{ ...call, extra: true }] }],
    [
      'a call without arguments',
      { ...stored, calls: [{ call_id: 'a', tool_name: 'demo.read', context_trust: ['user'], origin: 'model' }] },
    ],
    ['an empty call id', { ...stored, calls: [{ ...call, call_id: '' }] }],
    ['an unknown trust label', { ...stored, calls: [{ ...call, context_trust: ['trusted'] }] }],
    ['an unknown origin', { ...stored, calls: [{ ...call, origin: 'user' }] }],
    ['a principal without a tenant', { ...stored, principal: { principal_id: 'p', scopes: [] } }],
  ])('is unreadable with %s', (_what, value) => {
    const read = fromStoredBatch(value);
    expect(read.batch).toBeNull();
    expect(read.error).toBeInstanceOf(Error);
  });

  it('a resubmission matches the stored calls whatever order jsonb gave their keys; a different batch does not', () => {
    const submission: StepSubmission = {
      tenantId: 't1',
      runId: 'r1',
      stepNumber: 1,
      principal,
      calls: [{ callId: 'a', toolName: 'demo.read', arguments: { n: 1 }, contextTrust: ['user'] }],
    };
    const reordered = {
      caller_timeout_seconds: null,
      calls: [{ origin: 'model', context_trust: ['user'], arguments: { n: 1 }, tool_name: 'demo.read', call_id: 'a' }],
      principal,
      version: 1,
    };
    expect(storedCallsMatch(toStoredBatch(submission), submission)).toBe(true);
    expect(storedCallsMatch(reordered, submission)).toBe(true);
    expect(storedCallsMatch(reordered, { ...submission, calls: [{ ...submission.calls[0]!, arguments: { n: 2 } }] })).toBe(false);
    expect(storedCallsMatch({ ...reordered, version: 2 }, submission)).toBe(false);
  });
});
