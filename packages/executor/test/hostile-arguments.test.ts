import { describe, expect, it, vi } from 'vitest';
import { checkJsonValue, JSON_MAX_DEPTH, REASON_CODES } from '@veetbot/domain';
import { executeToolCall, type PipelineResult } from '../src';
import { ScrubbingCredentialResolver } from '../src/credential-scrubber';
import { validateResult } from '../src/steps/step-11-validate-result';
import { call, setup } from './fixtures';

const dry = { dryRun: true } as const;

function concluded(result: PipelineResult) {
  if (result.kind !== 'concluded') throw new Error(`expected concluded, got ${result.kind}`);
  return result;
}

const deep = (levels: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { d: value };
  return value;
};

/**
 * ADR 0019: a call that reaches the pipeline by a path other than the api (the CLI's dry run,
 * the runtime) gets the api's verdict on hostile arguments — the same domain check
 * (checkJsonValue) — as a tool-call failure: FAILED tool.arguments_invalid at step 4, before the
 * validator or the canonical form walks the value.
 */
describe('step 4 refuses hostile arguments before anything walks them', () => {
  it.each([
    ['a NUL in a value', { p0: 'a\u0000b' }, 'json.nul_character', 'p0'],
    ['a NUL in a key', { p0: 'x', 'k\u0000': 1 }, 'json.nul_character', 'the root'],
    ['a lone high surrogate', { p0: '\uD800' }, 'json.lone_surrogate', 'p0'],
    ['a lone low surrogate, nested', { p0: 'x', more: { list: ['ok', '\uDC00'] } }, 'json.lone_surrogate', 'more.list.1'],
    ['a __proto__ key as JSON.parse makes it', JSON.parse('{"p0":"x","__proto__":{"p1":2}}') as unknown, 'json.reserved_key', 'the root'],
    ['one level past the limit', { p0: 'x', deep: deep(JSON_MAX_DEPTH) }, 'json.too_deep', 'deep.d.d'],
    ['nesting 5,000 deep', { p0: 'x', deep: deep(5_000) }, 'json.too_deep', 'deep.d.d'],
    ['nesting 10,000 deep', { p0: 'x', deep: deep(10_000) }, 'json.too_deep', 'deep.d.d'],
    ['undefined', { p0: 'x', p1: undefined }, 'json.not_json', 'p1'],
    ['-0', { p0: 'x', p1: [1, -0] }, 'json.negative_zero', 'p1.1'],
    ['Infinity', { p0: 'x', p1: Number.POSITIVE_INFINITY }, 'json.non_finite_number', 'p1'],
  ])('%s: FAILED tool.arguments_invalid at step 4, naming where', async (_name, args, code, at) => {
    const { deps, session, steps } = setup();
    const validate = vi.spyOn(deps.validator, 'validateArguments');
    // demo.open accepts any property: nothing but the hostile-input check can refuse these.
    const result = concluded(await executeToolCall(deps, session, call('demo.open', args), dry));
    expect(result.invocationStatus).toBe('failed');
    expect(result.item.outcome).toMatchObject({
      status: 'failed',
      reason_code: 'tool.arguments_invalid',
      message: REASON_CODES['tool.arguments_invalid'].message,
    });
    const note = JSON.stringify(result.item.content);
    expect(note).toContain(`(${code})`);
    expect(note).toContain(`refused at ${at}`);
    expect(note).not.toContain('\\u0000');
    expect(validate).not.toHaveBeenCalled();
    expect(steps).toEqual([1, 2, 3, 4]);
    // The api refuses exactly these bodies with the same check.
    expect(checkJsonValue(args, { canonicalNumbers: true })?.code).toBe(code);
  });

  it('passes ordinary arguments, a surrogate pair and nesting right at the limit to the validator', async () => {
    const { deps, session } = setup();
    const result = await executeToolCall(
      deps,
      session,
      call('demo.open', { p0: 'caf\u00e9 \uD83D\uDE00', deep: deep(JSON_MAX_DEPTH - 1) }),
      dry,
    );
    expect(result.kind).toBe('authorized');
  });

  it('a NUL in the tool name is the unknown tool it is, recorded under the placeholder name', async () => {
    const { deps, session, steps } = setup();
    const result = concluded(await executeToolCall(deps, session, call('math.evaluate\u0000', { expression: '1' }), dry));
    expect(result.item.outcome.reason_code).toBe('policy.matrix.unknown_tool');
    expect(JSON.stringify(result.item)).not.toContain('\\u0000');
    expect(steps).toEqual([1]);
  });
});

/**
 * The sibling on the way out (ADR 0019): what a tool returns is stored as jsonb, so a result
 * holding a NUL or a lone surrogate — a remote server's, or a file read as text — or nesting
 * past the limit is FAILED tool.output_invalid at step 11, recorded as executed, instead of a
 * store error at step 13 that leaves the row RUNNING.
 */
describe('step 11 refuses a result no store can hold', () => {
  async function authorizedCall() {
    const { deps, session } = setup();
    const result = await executeToolCall(deps, session, call('demo.open', { p0: 'x' }), dry);
    if (result.kind !== 'authorized') throw new Error(result.kind);
    return { validator: deps.validator, call: result.call };
  }
  const credentials = new ScrubbingCredentialResolver({ resolve: () => Promise.reject(new Error('no credentials here')) });
  const returned = (value: unknown) => ({ kind: 'returned' as const, value, effectSent: true, durationMs: 1 });

  it.each([
    ['a NUL in text content', { ok: true, content: [{ type: 'text', text: 'a\u0000b' }] }, 'content.0.text', 'json.nul_character'],
    [
      'a lone surrogate in text content',
      { ok: true, content: [{ type: 'text', text: '\uDC00' }] },
      'content.0.text',
      'json.lone_surrogate',
    ],
    ['a NUL in a structured key', { ok: true, content: [], structured: { 'k\u0000': 1 } }, 'structured', 'json.nul_character'],
    ['structured nested 10,000 deep', { ok: true, content: [], structured: { d: deep(10_000) } }, 'structured.d.d', 'json.too_deep'],
    [
      'a NUL in a failure’s external text',
      {
        ok: false,
        content: [],
        failure: { kind: 'upstream_error', reason_code: 'tool.upstream_error', detail: 'd', retryable: false, external_text: 'x\u0000' },
      },
      'failure.external_text',
      'json.nul_character',
    ],
  ])('%s: FAILED tool.output_invalid, still executed', async (_name, value, at, code) => {
    const { validator, call: authorized } = await authorizedCall();
    const validated = validateResult(validator, authorized, returned(value), credentials);
    expect(validated).toMatchObject({ status: 'failed', reasonCode: 'tool.output_invalid', effectSent: true, content: [] });
    expect(validated.failure?.detail).toContain(`at ${at}`);
    expect(validated.failure?.detail).toContain(code);
  });

  it('a result with unset optional fields and a surrogate pair is read as usual', async () => {
    const { validator, call: authorized } = await authorizedCall();
    const validated = validateResult(
      validator,
      authorized,
      returned({ ok: true, content: [{ type: 'text', text: 'ok \uD83D\uDE00' }], structured: { a: undefined, b: 1 } }),
      credentials,
    );
    expect(validated).toMatchObject({ status: 'succeeded', reasonCode: 'tool.ok' });
  });
});
