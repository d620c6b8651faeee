import { describe, expect, it, vi } from 'vitest';
import { argumentsHash, canonicalJson, OUTCOME_FIELDS, REASON_CODES, type ProposedAction } from '@veetbot/domain';
import { DefaultPolicyEngine } from '@veetbot/policy';
import type { PolicyEngine } from '@veetbot/ports';
import { executeToolCall, type PipelineResult } from '../src';
import { call, principal, setup } from './fixtures';

const dry = { dryRun: true } as const;

function concluded(result: PipelineResult) {
  if (result.kind !== 'concluded') throw new Error(`expected concluded, got ${result.kind}`);
  return result;
}

function expectSixFields(result: PipelineResult) {
  const outcome = concluded(result).item.outcome;
  expect(Object.keys(outcome).sort()).toEqual([...OUTCOME_FIELDS].sort());
  expect(outcome.message).toBe(REASON_CODES[outcome.reason_code as keyof typeof REASON_CODES].message);
}

describe('step 1: resolve', () => {
  it('denies an unknown tool with policy.matrix.unknown_tool before policy is consulted', async () => {
    const evaluate = vi.fn();
    const policy: PolicyEngine = { evaluate, offers: () => true };
    const { deps, session, steps } = setup({ policy });
    const result = concluded(await executeToolCall(deps, session, call('nope.nothing', {}), dry));
    expect(result.invocationStatus).toBe('denied');
    expect(result.item.outcome).toMatchObject({
      status: 'denied',
      reason_code: 'policy.matrix.unknown_tool',
      action: 'nope.nothing',
      retryable: false,
    });
    expect(evaluate).not.toHaveBeenCalled();
    expect(steps).toEqual([1]);
    expectSixFields(result);
  });
});

describe('step 2: enabled', () => {
  it('denies a tool the agent does not enable', async () => {
    const { deps } = setup();
    const result = concluded(
      await executeToolCall(
        deps,
        { agent: { agentId: 'a', enabledTools: ['workspace.*'] }, pinned: null },
        call('math.evaluate', { expression: '1+1' }),
        dry,
      ),
    );
    expect(result.item.outcome).toMatchObject({ status: 'denied', reason_code: 'policy.tool.not_enabled' });
  });

  it('denies a registered tool outside the session pin', async () => {
    const { deps, registry } = setup();
    const pinned = registry.specsForSession({ agentId: 'a', enabledTools: ['system.time'] }, principal, new DefaultPolicyEngine(), {
      flags: {},
      targetKinds: ['in_process'],
    });
    expect(pinned.toolNames).toEqual(['system.time']);
    const result = concluded(
      await executeToolCall(deps, { agent: { agentId: 'a' }, pinned }, call('math.evaluate', { expression: '1+1' }), dry),
    );
    expect(result.item.outcome.reason_code).toBe('policy.tool.not_enabled');
  });
});

describe('step 3: scopes', () => {
  it('denies with policy.scope.missing when a required scope is not held', async () => {
    const { deps, session, steps } = setup();
    const result = concluded(await executeToolCall(deps, session, call('demo.scoped', { n: 1 }), dry));
    expect(result.item.outcome).toMatchObject({ status: 'denied', reason_code: 'policy.scope.missing' });
    expect(steps).toEqual([1, 2, 3]);
  });

  it('passes when the scope is held through a wildcard', async () => {
    const { deps, session } = setup();
    const result = await executeToolCall(
      deps,
      session,
      call('demo.scoped', { n: 1 }, { principal: { ...principal, scopes: ['demo.*'] } }),
      dry,
    );
    expect(result.kind).toBe('authorized');
  });
});

describe('step 4: validation', () => {
  const SENTINEL = 'SENTINEL_VALUE_7f3a';

  it('fails with tool.arguments_invalid, the schema path, and no echo of the value', async () => {
    const { deps, session } = setup();
    const result = concluded(await executeToolCall(deps, session, call('demo.ten', { p0: SENTINEL, p1: SENTINEL }), dry));
    expect(result.invocationStatus).toBe('failed');
    expect(result.item.outcome).toMatchObject({ status: 'failed', reason_code: 'tool.arguments_invalid', remediation: 'modify_arguments' });
    expect(result.item.content[0]).toMatchObject({ type: 'text', trust: 'platform' });
    expect(JSON.stringify(result.item.content)).toContain('#/properties/p1/type');
    // The model never sees the value; the row keeps it, marked unvalidated (docs/adr/0020).
    expect(JSON.stringify(result.item)).not.toContain(SENTINEL);
    expect(result.refused?.arguments).toEqual({ $unvalidated: expect.objectContaining({ received: { p0: SENTINEL, p1: SENTINEL } }) });
    expectSixFields(result);
  });

  it('rejects unknown arguments (additionalProperties false by default)', async () => {
    const { deps, session } = setup();
    const result = concluded(await executeToolCall(deps, session, call('demo.ten', { p0: 'x', [SENTINEL]: 1 }), dry));
    expect(result.item.outcome.reason_code).toBe('tool.arguments_invalid');
    expect(JSON.stringify(result.item)).not.toContain(SENTINEL);
  });

  it.each([
    ['an array', [1, 2]],
    ['a string', 'hello'],
    ['null', null],
    ['a number', 42],
  ])('rejects arguments that are %s', async (_name, args) => {
    const { deps, session } = setup();
    const result = concluded(await executeToolCall(deps, session, call('demo.ten', args), dry));
    expect(result.item.outcome.reason_code).toBe('tool.arguments_invalid');
  });

  it('rejects a 10 MB argument with an outcome, not a crash', async () => {
    const { deps, session } = setup();
    const result = concluded(await executeToolCall(deps, session, call('demo.ten', { p0: 'x'.repeat(10 * 1024 * 1024) }), dry));
    expect(result.item.outcome.reason_code).toBe('tool.arguments_invalid');
  });

  it('rejects nesting 10,000 deep with an outcome, not a stack overflow', async () => {
    const { deps, session } = setup();
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = { d: deep };
    for (const tool of ['demo.ten', 'demo.open']) {
      const result = concluded(await executeToolCall(deps, session, call(tool, { p0: 'x', deep }), dry));
      expect(result.item.outcome.reason_code).toBe('tool.arguments_invalid');
    }
  });
});

describe('step 5: canonical form', () => {
  it('hashes the validated document with defaults applied', async () => {
    const { deps, session, steps } = setup();
    const result = await executeToolCall(deps, session, call('demo.ten', { p2: 'b', p0: 'a' }), dry);
    if (result.kind !== 'authorized') throw new Error(result.kind);
    const expected = { p0: 'a', p1: 1, p2: 'b', p3: 3, p5: 5, p7: 7, p9: 9 };
    expect(result.call.arguments).toEqual(expected);
    expect(result.call.canonicalArguments).toBe(canonicalJson(expected));
    expect(result.call.argumentsHash).toBe(argumentsHash(expected));
    expect(steps).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('is invariant under key order and Unicode composition', async () => {
    const { deps, session } = setup();
    const a = await executeToolCall(deps, session, call('demo.ten', { p0: 'caf\u00e9', p2: 'x' }), dry);
    const b = await executeToolCall(deps, session, call('demo.ten', { p2: 'x', p0: 'cafe\u0301' }), dry);
    if (a.kind !== 'authorized' || b.kind !== 'authorized') throw new Error('not authorized');
    expect(a.call.argumentsHash).toBe(b.call.argumentsHash);
  });

  it.each([
    ['-0', -0],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
  ])('refuses %s as invalid arguments', async (_name, value) => {
    const { deps, session } = setup();
    const result = concluded(await executeToolCall(deps, session, call('demo.ten', { p0: 'x', p1: value }), dry));
    expect(result.item.outcome.reason_code).toBe('tool.arguments_invalid');
  });

  it('refuses a lone surrogate and keys that collide after NFC', async () => {
    const { deps, session } = setup();
    const lone = concluded(await executeToolCall(deps, session, call('demo.ten', { p0: 'a\uD800b' }), dry));
    expect(lone.item.outcome.reason_code).toBe('tool.arguments_invalid');
    const collide = concluded(await executeToolCall(deps, session, call('demo.open', { 'caf\u00e9': 1, 'cafe\u0301': 2 }), dry));
    expect(collide.item.outcome.reason_code).toBe('tool.arguments_invalid');
    expect(JSON.stringify(collide.item.content)).toContain('canonical.key_collision');
  });
});

describe('steps 6 and 7: policy and approval', () => {
  const line = { line: 'hello' };

  it('origin_trust is the minimum label over the context items', async () => {
    const { deps, session } = setup();
    const r = await executeToolCall(
      deps,
      session,
      call('math.evaluate', { expression: '1' }, { contextTrust: ['platform', 'user', 'internal_tool'] }),
      dry,
    );
    if (r.kind !== 'authorized') throw new Error(r.kind);
    expect(r.call.originTrust).toBe('internal_tool');
    expect(r.call.action.argument_trust).toEqual({ expression: 'external_untrusted' });
  });

  it('a runtime-built call carries PLATFORM; a stated label only lowers', async () => {
    const { deps, session } = setup();
    const r = await executeToolCall(
      deps,
      session,
      call('math.evaluate', { expression: '1' }, { origin: 'runtime', contextTrust: [], argumentTrust: { expression: 'user' } }),
      dry,
    );
    if (r.kind !== 'authorized') throw new Error(r.kind);
    expect(r.call.originTrust).toBe('platform');
    expect(r.call.action.argument_trust).toEqual({ expression: 'user' });
    const raised = await executeToolCall(
      deps,
      session,
      call('math.evaluate', { expression: '1' }, { argumentTrust: { expression: 'platform' } }),
      dry,
    );
    if (raised.kind !== 'authorized') throw new Error(raised.kind);
    expect(raised.call.action.argument_trust).toEqual({ expression: 'external_untrusted' });
  });

  it('a model call that names no context items fails closed to EXTERNAL_UNTRUSTED', async () => {
    const { deps, session } = setup();
    const r = await executeToolCall(deps, session, call('demo.external_write', line, { contextTrust: [] }), dry);
    expect(r.kind).toBe('approval_required');
  });

  it('an external write after untrusted content needs approval; approved re-enters at 6 and proceeds', async () => {
    const { deps, session } = setup();
    const untrusted = { contextTrust: ['user', 'external_untrusted'] as const };
    const pending = await executeToolCall(
      deps,
      session,
      call('demo.external_write', line, { contextTrust: [...untrusted.contextTrust] }),
      dry,
    );
    expect(pending.kind).toBe('approval_required');
    const approved = await executeToolCall(
      deps,
      session,
      call('demo.external_write', line, { contextTrust: [...untrusted.contextTrust], approval: 'approved' }),
      dry,
    );
    expect(approved.kind).toBe('authorized');
    const refused = concluded(
      await executeToolCall(
        deps,
        session,
        call('demo.external_write', line, { contextTrust: [...untrusted.contextTrust], approval: 'denied' }),
        dry,
      ),
    );
    expect(refused.item.outcome).toEqual({
      status: 'denied',
      action: 'demo.external_write',
      reason_code: 'policy.matrix.external_write',
      message: 'Not performed. Approval was required and was denied.',
      retryable: false,
      remediation: 'none',
    });
  });

  it('the same write from a USER-only turn needs no approval', async () => {
    const { deps, session } = setup();
    expect((await executeToolCall(deps, session, call('demo.external_write', line), dry)).kind).toBe('authorized');
  });

  it('a policy deny ends DENIED with the rule code, and policy sees the declared action', async () => {
    const seen: ProposedAction[] = [];
    const policy: PolicyEngine = {
      evaluate: (a) => {
        seen.push(a);
        return { effect: 'deny', reason_code: 'policy.rule.denied', rule_id: 'r', policy_version: 'test@0' };
      },
      offers: () => true,
    };
    const { deps, session } = setup({ policy });
    const r = concluded(await executeToolCall(deps, session, call('math.evaluate', { expression: '2' }), dry));
    expect(r.item.outcome).toMatchObject({ status: 'denied', reason_code: 'policy.rule.denied' });
    expect(seen[0]).toMatchObject({ tool_name: 'math.evaluate', side_effect: 'none', arguments_hash: argumentsHash({ expression: '2' }) });
  });

  it('a profile code missing from the table still renders a fixed message', async () => {
    const policy = new DefaultPolicyEngine({
      id: 'p',
      rules: [{ id: 'r', when: { tools: ['math.*'] }, effect: 'deny', reason_code: 'policy.custom.thing' }],
      default: { effect: 'allow', reason_code: 'policy.rule.allowed' },
    });
    const { deps, session } = setup({ policy });
    const r = concluded(await executeToolCall(deps, session, call('math.evaluate', { expression: '2' }), dry));
    expect(r.item.outcome.reason_code).toBe('policy.rule.denied');
    expectSixFields(r);
  });
});

describe('request parsing at trust boundaries', () => {
  it('parseToolCallRequest refuses a malformed request with a typed error naming the field', async () => {
    const { parseToolCallRequest, InvalidToolCallRequestError } = await import('../src/pipeline');
    expect(() => parseToolCallRequest({ ...call('math.evaluate', {}), stepNumber: -1 })).toThrow(InvalidToolCallRequestError);
    expect(() => parseToolCallRequest({ ...call('math.evaluate', {}), extra: 1 })).toThrow(/request is invalid/);
    expect(() => parseToolCallRequest({ ...call('math.evaluate', {}), contextTrust: ['root'] })).toThrow(/contextTrust/);
    expect(parseToolCallRequest(call('math.evaluate', { expression: '1' })).toolName).toBe('math.evaluate');
  });
});
