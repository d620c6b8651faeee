import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IDEMPOTENCY_KEY_TAG, bridgeCallId } from '../src/idempotency-key';
import { idempotencyKey } from '../src/index';
import type { IdempotencyKeyInput } from '../src/idempotency-key';

// § Idempotency, "The key"; § The programmatic orchestration bridge, "Call identity without a provider".

const sha256 = (s: string): string => createHash('sha256').update(Buffer.from(s, 'utf8')).digest('hex');

/** The spec's derivation, written out independently of the implementation. */
function specKey(i: IdempotencyKeyInput): string {
  return sha256(
    'veetbot.tool.v1' +
      '\u0000' +
      i.runId +
      '\u0000' +
      String(i.stepNumber) +
      '\u0000' +
      i.callId +
      '\u0000' +
      i.toolName +
      '\u0000' +
      i.toolVersion +
      '\u0000' +
      i.argumentsHash,
  );
}

const base: IdempotencyKeyInput = {
  runId: '0b0e7c1e-4f5a-4c1e-9d52-6f1d2c3b4a59',
  stepNumber: 3,
  callId: 'call_abc123',
  toolName: 'demo.external_write',
  toolVersion: '1.0.0',
  argumentsHash: 'a'.repeat(64),
};

describe('idempotencyKey (§ The key)', () => {
  it('uses the key-space tag veetbot.tool.v1', () => {
    expect(IDEMPOTENCY_KEY_TAG).toBe('veetbot.tool.v1');
  });

  it('is sha256 of the NUL-joined fields, lowercase hex', () => {
    const key = idempotencyKey(base);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(key).toBe(specKey(base));
  });

  it('matches the independent derivation for arbitrary inputs', () => {
    const input = fc.record({
      runId: fc.uuid(),
      stepNumber: fc.nat(),
      callId: fc.string({ unit: 'binary', maxLength: 20 }),
      toolName: fc.string({ maxLength: 30 }),
      toolVersion: fc.string({ maxLength: 10 }),
      argumentsHash: fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 }),
    });
    fc.assert(
      fc.property(input, (i) => {
        expect(idempotencyKey(i)).toBe(specKey(i));
      }),
    );
  });

  it('has no attempt number among its inputs: a retry presents the same key', () => {
    // Passing an attempt number is not part of the signature; an extra property is ignored.
    const retry = { ...base, attemptNumber: 2 } as IdempotencyKeyInput;
    expect(idempotencyKey(retry)).toBe(idempotencyKey(base));
    expect(idempotencyKey.length).toBe(1);
    // @ts-expect-error attempt_number is deliberately not an input (§ The key)
    const typed: IdempotencyKeyInput = { ...base, attemptNumber: 2 };
    expect(idempotencyKey(typed)).toBe(idempotencyKey(base));
  });

  it.each([
    ['runId', { runId: '9a9e7c1e-4f5a-4c1e-9d52-6f1d2c3b4a59' }],
    ['stepNumber', { stepNumber: 4 }],
    ['callId', { callId: 'call_abc124' }],
    ['toolName', { toolName: 'demo.external_read' }],
    ['toolVersion', { toolVersion: '1.0.1' }],
    ['argumentsHash', { argumentsHash: 'b'.repeat(64) }],
  ] as const)('changes when %s changes', (_field, change) => {
    expect(idempotencyKey({ ...base, ...change })).not.toBe(idempotencyKey(base));
  });

  it('keeps fields apart: moving text across a field boundary changes the key', () => {
    const a = idempotencyKey({ ...base, callId: 'call_1', toolName: 'x.y' });
    const b = idempotencyKey({ ...base, callId: 'call_1x', toolName: '.y' });
    expect(a).not.toBe(b);
  });
});

describe('bridgeCallId (§ The programmatic orchestration bridge)', () => {
  const scriptHash = sha256('print(await tools.workspace.read_text({ path: "notes.md" }))');

  it('is "bridge:" + 32 lowercase hex', () => {
    expect(bridgeCallId(scriptHash, 0)).toMatch(/^bridge:[0-9a-f]{32}$/);
  });

  it('is sha256(script_hash NUL ordinal)[:32]', () => {
    for (const ordinal of [0, 1, 3, 1000]) {
      expect(bridgeCallId(scriptHash, ordinal)).toBe(`bridge:${sha256(`${scriptHash}\u0000${ordinal}`).slice(0, 32)}`);
    }
  });

  it('is stable for a replayed script, and distinct per ordinal and per script', () => {
    expect(bridgeCallId(scriptHash, 3)).toBe(bridgeCallId(scriptHash, 3));
    const ids = new Set(Array.from({ length: 200 }, (_, i) => bridgeCallId(scriptHash, i)));
    expect(ids.size).toBe(200);
    expect(bridgeCallId(sha256('other script'), 3)).not.toBe(bridgeCallId(scriptHash, 3));
  });

  it.each([-1, 1.5, NaN, Infinity, Number.MAX_SAFE_INTEGER + 1])('rejects ordinal %s', (ordinal) => {
    expect(() => bridgeCallId(scriptHash, ordinal)).toThrow(expect.objectContaining({ code: 'domain.bridge_ordinal_invalid' }));
  });
});
