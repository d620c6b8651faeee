import { describe, expect, it } from 'vitest';
import { ToolSpec, type ProposedAction, type TrustLevel } from '@veetbot/domain';
import { ConfigurationError } from '@veetbot/domain';
import { DEFAULT_POLICY_PROFILE } from '../src/default-profile';
import { DefaultPolicyEngine } from '../src';

const principal = { tenant_id: 't1', principal_id: 'p1', scopes: ['*'] };

function action(over: Partial<ProposedAction> = {}): ProposedAction {
  return {
    tool_name: 'demo.external_write',
    tool_version: '1',
    kind: 'capability',
    source: 'builtin',
    server_id: null,
    side_effect: 'external_write',
    risk: 'medium',
    idempotency: 'non_idempotent',
    required_scopes: [],
    arguments_hash: 'h',
    origin_trust: 'user',
    argument_trust: {},
    principal,
    ...over,
  };
}

const engine = new DefaultPolicyEngine();

describe('default profile (RULINGS.md "Policy")', () => {
  it('allows an external write when the turn saw only USER content', () => {
    expect(engine.evaluate(action({ origin_trust: 'user' })).effect).toBe('allow');
  });

  it.each<TrustLevel>(['internal_tool', 'external_untrusted'])('asks approval for an external write from %s origin', (origin) => {
    const d = engine.evaluate(action({ origin_trust: origin }));
    expect(d).toEqual({
      effect: 'require_approval',
      reason_code: 'policy.matrix.external_write',
      rule_id: 'external-write-needs-approval',
      policy_version: engine.version,
    });
  });

  it('every decision carries the profile version: the same profile gives the same version, any change another (docs/adr/0047)', () => {
    expect(engine.version).toMatch(/^default@[0-9a-f]{16}$/);
    expect(engine.evaluate(action({ origin_trust: 'user' })).policy_version).toBe(engine.version);
    // Key order does not matter (canonical JSON); a rule, its order or the default does.
    const copy = JSON.parse(JSON.stringify(engine.profile)) as { id: string; rules: unknown[]; default: unknown };
    expect(new DefaultPolicyEngine({ default: copy.default, rules: copy.rules, id: copy.id }).version).toBe(engine.version);
    expect(new DefaultPolicyEngine({ ...copy, rules: [...copy.rules].reverse() }).version).not.toBe(engine.version);
    expect(new DefaultPolicyEngine({ ...copy, default: { effect: 'deny', reason_code: 'policy.rule.denied' } }).version).not.toBe(
      engine.version,
    );
    expect(new DefaultPolicyEngine({ ...copy, id: 'other' }).version).toMatch(/^other@/);
  });

  it('denies skill.manage below USER and allows it at USER', () => {
    const base = {
      tool_name: 'skill.manage',
      side_effect: 'external_write' as const,
      risk: 'high' as const,
      idempotency: 'conditionally_idempotent' as const,
    };
    expect(engine.evaluate(action({ ...base, origin_trust: 'internal_tool' }))).toMatchObject({
      effect: 'deny',
      reason_code: 'policy.origin.untrusted',
    });
    expect(engine.evaluate(action({ ...base, origin_trust: 'user' })).effect).toBe('allow');
  });

  it('denies HIGH-risk writes from an EXTERNAL_UNTRUSTED origin, but not from INTERNAL_TOOL', () => {
    const high = { risk: 'high' as const, side_effect: 'workspace_write' as const };
    expect(engine.evaluate(action({ ...high, origin_trust: 'external_untrusted' }))).toMatchObject({
      effect: 'deny',
      reason_code: 'policy.rule.denied',
    });
    expect(engine.evaluate(action({ ...high, origin_trust: 'internal_tool' })).effect).toBe('allow');
  });

  it('allows reads whatever the origin', () => {
    expect(
      engine.evaluate(action({ side_effect: 'none', risk: 'low', idempotency: 'read_only', origin_trust: 'external_untrusted' })).effect,
    ).toBe('allow');
  });
});

describe('profiles are validated data', () => {
  it.each([
    ['unknown field', { ...DEFAULT_POLICY_PROFILE, extra: true }],
    ['bad effect', { ...DEFAULT_POLICY_PROFILE, default: { effect: 'maybe', reason_code: 'policy.x.y' } }],
    ['bad reason code', { ...DEFAULT_POLICY_PROFILE, default: { effect: 'allow', reason_code: 'Nope' } }],
    [
      'unknown trust level',
      {
        id: 'p',
        rules: [{ id: 'r', when: { origin_trust_below: 'root' }, effect: 'deny', reason_code: 'policy.rule.denied' }],
        default: { effect: 'allow', reason_code: 'policy.rule.allowed' },
      },
    ],
    [
      'duplicate rule ids',
      {
        id: 'p',
        rules: [1, 2].map(() => ({ id: 'r', when: {}, effect: 'deny', reason_code: 'policy.rule.denied' })),
        default: { effect: 'allow', reason_code: 'policy.rule.allowed' },
      },
    ],
  ])('rejects a profile with %s', (_name, profile) => {
    expect(() => new DefaultPolicyEngine(profile)).toThrow(ConfigurationError);
  });

  it('first matching rule decides; argument_trust_below reads per-field labels', () => {
    const engine2 = new DefaultPolicyEngine({
      id: 'strict',
      rules: [
        {
          id: 'untrusted-args',
          when: { tools: ['demo.*'], argument_trust_below: 'user' },
          effect: 'require_approval',
          reason_code: 'policy.approval.denied',
        },
        { id: 'deny-demo', when: { tools: ['demo.*'] }, effect: 'deny', reason_code: 'policy.rule.denied' },
      ],
      default: { effect: 'allow', reason_code: 'policy.rule.allowed' },
    });
    expect(engine2.evaluate(action({ argument_trust: { line: 'external_untrusted' } })).rule_id).toBe('untrusted-args');
    expect(engine2.evaluate(action({ argument_trust: { line: 'user' } })).rule_id).toBe('deny-demo');
  });
});

describe('offers (specsForSession profile filter)', () => {
  const spec = (name: string) =>
    ToolSpec.parse({
      name,
      version: '1',
      description: '',
      input_schema: { type: 'object' },
      output_schema: null,
      side_effect: 'external_write',
      risk: 'medium',
      idempotency: 'non_idempotent',
      required_scopes: [],
      timeout_seconds: 5,
      maximum_output_bytes: 1000,
      allow_parallel: false,
      output_trust: 'internal_tool',
    });
  it('hides a tool only when every call is denied', () => {
    const e = new DefaultPolicyEngine({
      id: 'p',
      rules: [
        {
          id: 'deny-untrusted',
          when: { tools: ['demo.a'], origin_trust_below: 'user' },
          effect: 'deny',
          reason_code: 'policy.rule.denied',
        },
        { id: 'deny-b', when: { tools: ['demo.b'] }, effect: 'deny', reason_code: 'policy.rule.denied' },
        {
          id: 'ask-c',
          when: { tools: ['demo.c'], origin_trust_below: 'user' },
          effect: 'require_approval',
          reason_code: 'policy.approval.denied',
        },
        { id: 'deny-c', when: { tools: ['demo.c'] }, effect: 'deny', reason_code: 'policy.rule.denied' },
      ],
      default: { effect: 'allow', reason_code: 'policy.rule.allowed' },
    });
    expect(e.offers(spec('demo.a'), principal)).toBe(true);
    expect(e.offers(spec('demo.b'), principal)).toBe(false);
    expect(e.offers(spec('demo.c'), principal)).toBe(true);
    expect(e.offers(spec('demo.d'), principal)).toBe(true);
  });
});
