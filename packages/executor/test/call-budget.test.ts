import { describe, expect, it } from 'vitest';
import { callBudget, DEFAULT_MINIMUM_CALL_SECONDS } from '../src/call-budget';

/** docs/adr/0025: the one effective timeout and the one "cannot finish" rule, at their edges. */
describe('callBudget', () => {
  const now = new Date('2026-12-01T12:00:00Z');
  const run = (remainingMs: number, callerTimeoutSeconds?: number) => ({
    deadlineAt: new Date(now.getTime() + remainingMs),
    ...(callerTimeoutSeconds === undefined ? {} : { callerTimeoutSeconds }),
  });
  const tool = (timeout_seconds: number, requestTimeoutSeconds?: number) => ({
    spec: { timeout_seconds } as never,
    ...(requestTimeoutSeconds === undefined ? {} : { limits: { requestTimeoutSeconds } }),
  });

  it.each([
    ['the declared timeout', tool(5, 20), run(60_000, 30), 5],
    ['the request timeout', tool(30, 2.5), run(60_000, 30), 2.5],
    ['what is left of the run', tool(30, 20), run(7_250, 30), 7.25],
    ["the caller's limit", tool(30, 20), run(60_000, 0.2), 0.2],
  ])('the smallest of the four lands in the context: %s', (_label, t, r, expected) => {
    expect(callBudget(t, now, r)).toEqual({
      kind: 'startable',
      timeoutSeconds: expected,
      deadlineAt: new Date(now.getTime() + expected * 1000),
    });
  });

  it('exactly the minimum left still starts; a millisecond less cannot finish; past the deadline cannot either', () => {
    expect(DEFAULT_MINIMUM_CALL_SECONDS).toBe(1);
    expect(callBudget(tool(30), now, run(1_000))).toMatchObject({ kind: 'startable', timeoutSeconds: 1 });
    expect(callBudget(tool(30), now, run(999))).toEqual({ kind: 'cannot_finish' });
    expect(callBudget(tool(30), now, run(0))).toEqual({ kind: 'cannot_finish' });
    expect(callBudget(tool(30), now, run(-5_000))).toEqual({ kind: 'cannot_finish' });
  });

  it("a tool's own limit below the minimum is the operator's choice, not the deadline's: it starts", () => {
    expect(callBudget(tool(30, 0.3), now, run(60_000))).toMatchObject({ kind: 'startable', timeoutSeconds: 0.3 });
  });

  it('the minimum is configurable', () => {
    expect(callBudget(tool(30), now, run(4_000), 5)).toEqual({ kind: 'cannot_finish' });
    expect(callBudget(tool(30), now, run(400), 0.25)).toMatchObject({ kind: 'startable', timeoutSeconds: 0.4 });
  });
});
