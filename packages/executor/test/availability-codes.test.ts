import { describe, expect, it } from 'vitest';
import { DefaultPolicyEngine } from '@veetbot/policy';
import type { PinnedToolSet, PolicyEngine } from '@veetbot/ports';
import { executeToolCall, type PipelineResult, type SessionView } from '../src';
import { call, principal, setup } from './fixtures';

/**
 * § Advertisement is pinned; availability is resolved at call time: "Scope revoked, or policy now
 * denies → denied, policy.scope.missing". For a tool the session advertised, "policy now denies"
 * is the pin's own policy filter turning — the profile no longer offers the tool at all — and the
 * model reads policy.scope.missing. A deny that depends on this call (origin or argument trust) is
 * the ordinary policy matrix and keeps its rule's code, and so does any deny outside a session
 * (nothing was advertised). docs/adr/0023.
 */

const dry = { dryRun: true } as const;
const line = { line: 'hello' };

function denialOf(result: PipelineResult): string {
  if (result.kind !== 'concluded') throw new Error(`expected a conclusion, got ${result.kind}`);
  expect(result.invocationStatus).toBe('denied');
  return result.item.outcome.reason_code;
}

const allowRest = { effect: 'allow', reason_code: 'policy.rule.allowed' } as const;
/** The outbox closed outright: every call of demo.external_write is denied. */
const OUTBOX_CLOSED = new DefaultPolicyEngine({
  id: 'closed',
  rules: [{ id: 'closed', when: { tools: ['demo.external_write'] }, effect: 'deny', reason_code: 'policy.rule.denied' }],
  default: allowRest,
});
/** Denied only after untrusted content: some calls still get through. */
const AFTER_UNTRUSTED = new DefaultPolicyEngine({
  id: 'after-untrusted',
  rules: [
    {
      id: 'after-untrusted',
      when: { tools: ['demo.external_write'], origin_trust_below: 'user' },
      effect: 'deny',
      reason_code: 'policy.origin.untrusted',
    },
  ],
  default: allowRest,
});
/** A profile whose default denies: a tool no rule allows is not offered. */
const DENY_BY_DEFAULT = new DefaultPolicyEngine({
  id: 'deny-default',
  rules: [{ id: 'math-ok', when: { tools: ['math.*'] }, effect: 'allow', reason_code: 'policy.rule.allowed' }],
  default: { effect: 'deny', reason_code: 'policy.rule.denied' },
});

/** A session that pinned the tools under the shipped profile, then was called under `now`. */
function pinnedSession(now: PolicyEngine): { deps: ReturnType<typeof setup>['deps']; session: SessionView; pinned: PinnedToolSet } {
  const { deps, registry } = setup({ policy: now });
  const pinned = registry.specsForSession({ agentId: 'a1' }, principal, new DefaultPolicyEngine(), {
    flags: {},
    targetKinds: ['in_process'],
  });
  return { deps, session: { agent: { agentId: 'a1' }, pinned }, pinned };
}

describe('the availability table at step 6', () => {
  it('a pinned tool the reloaded profile no longer offers: denied, policy.scope.missing', async () => {
    for (const now of [OUTBOX_CLOSED, DENY_BY_DEFAULT]) {
      const { deps, session, pinned } = pinnedSession(now);
      expect(pinned.toolNames).toContain('demo.external_write');
      expect(now.offers(pinned.specs.find((s) => s.name === 'demo.external_write')!, principal)).toBe(false);
      expect(denialOf(await executeToolCall(deps, session, call('demo.external_write', line), dry))).toBe('policy.scope.missing');
    }
  });

  it('a deny that depends on the call keeps its rule’s code, and the tool still runs for other calls', async () => {
    const { deps, session } = pinnedSession(AFTER_UNTRUSTED);
    const untrusted = call('demo.external_write', line, { contextTrust: ['user', 'external_untrusted'] });
    expect(denialOf(await executeToolCall(deps, session, untrusted, dry))).toBe('policy.origin.untrusted');
    expect((await executeToolCall(deps, session, call('demo.external_write', line), dry)).kind).toBe('authorized');
  });

  it('the shipped profile’s approval refusal keeps policy.matrix.external_write', async () => {
    const { deps, session } = pinnedSession(new DefaultPolicyEngine());
    const refused = call('demo.external_write', line, { contextTrust: ['external_untrusted'], approval: 'denied' });
    expect(denialOf(await executeToolCall(deps, session, refused, dry))).toBe('policy.matrix.external_write');
  });

  it('outside a session nothing was advertised: the rule’s own code', async () => {
    const { deps, session } = setup({ policy: OUTBOX_CLOSED });
    expect(session.pinned).toBeNull();
    expect(denialOf(await executeToolCall(deps, session, call('demo.external_write', line), dry))).toBe('policy.rule.denied');
  });

  it('a revoked scope is policy.scope.missing too (step 3), before policy is asked', async () => {
    const { deps, session } = pinnedSession(new DefaultPolicyEngine());
    const revoked = { ...principal, scopes: principal.scopes.filter((s) => s !== 'demo.write') };
    expect(denialOf(await executeToolCall(deps, session, call('demo.external_write', line, { principal: revoked }), dry))).toBe(
      'policy.scope.missing',
    );
  });
});
