import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Approval, Invocation, StepOutcome } from '@veetbot/client';
import { provisionTenantKey } from '@veetbot/composition';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { buildApp } from '../src/app';
import { composeSystem, type ComposedSystem } from '../src/compose';
import { errorOf, openApiHarness, sessionAndRun, type ApiHarness } from './harness';

// docs/adr/0047: an approval decision is bound to the arguments hash and the policy version the
// decider saw; a call whose policy changed needs a new decision, and nothing runs until it has one.

let h: ApiHarness;
let changed: ComposedSystem | undefined;
beforeAll(async () => {
  h = await openApiHarness();
}, 120_000);
afterAll(async () => {
  await changed?.close({ drainMs: 5000 });
  await h?.close();
});

const risky = (callId: string, line: string) => ({
  call_id: callId,
  tool_name: 'demo.external_write',
  arguments: { line },
  context_trust: ['user', 'external_untrusted'],
});

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function pendingApproval(call: ApiHarness['call'], id: string): Promise<Approval | undefined> {
  const list = (await (await call('GET', '/v1/approvals?status=pending')).json()) as { approvals: Approval[] };
  return list.approvals.find((a) => a.id === id);
}

async function waitingApproval(line: string): Promise<{ runId: string; approval: Approval }> {
  const { runId } = await sessionAndRun(h);
  const outcome = (await (
    await h.call('POST', `/v1/runs/${runId}/steps`, { body: { step_number: 1, calls: [risky('r1', line)], wait_seconds: 20 } })
  ).json()) as StepOutcome;
  expect(outcome.status).toBe('waiting_for_approval');
  const approval = await pendingApproval(h.call, outcome.pending_approvals[0]!.approval_id!);
  if (approval === undefined) throw new Error('the approval is not listed');
  return { runId, approval };
}

const sent = async (line: string) => (await h.outboxLines()).filter((l) => l.includes(line)).length;

describe('the decision binding', () => {
  it('lists each approval with the arguments hash and the policy version and rule that asked; the invocation row records the version', async () => {
    const { approval } = await waitingApproval('bound line');
    const version = new DefaultPolicyEngine().version;
    expect(version).toMatch(/^default@[0-9a-f]{16}$/);
    expect(approval).toMatchObject({ policy_version: version, policy_rule_id: 'external-write-needs-approval' });
    const invocation = (await (await h.call('GET', `/v1/invocations/${approval.invocation_id}`)).json()) as Invocation;
    expect(approval.arguments_hash).toBe(invocation.arguments_hash);
    expect(invocation).toMatchObject({
      policy_version: version,
      policy_rule_id: 'external-write-needs-approval',
      status: 'waiting_for_approval',
    });
  });

  it('a call policy denies records the version and rule that denied it; a call refused before step 6 records none', async () => {
    const { key } = await provisionTenantKey(h.system.stores, {
      tenantId: 'tenant-a',
      tenantName: 'tenant-a',
      principalId: 'skill-writer',
      scopes: ['skill.write'],
      now: new Date(),
    });
    const { runId } = await sessionAndRun(h, key);
    const outcome = (await (
      await h.call('POST', `/v1/runs/${runId}/steps`, {
        key,
        body: {
          step_number: 1,
          calls: [
            { call_id: 'd1', tool_name: 'skill.manage', arguments: { operation: 'list' }, context_trust: ['external_untrusted'] },
            { call_id: 'u1', tool_name: 'no.such_tool', arguments: {}, context_trust: ['user'] },
          ],
          wait_seconds: 20,
        },
      })
    ).json()) as StepOutcome;
    expect(outcome.items.map((i) => [i.call_id, i.outcome.status])).toEqual([
      ['d1', 'denied'],
      ['u1', 'denied'],
    ]);
    const rows = (await (await h.call('GET', `/v1/invocations?run_id=${runId}`, { key })).json()) as { invocations: Invocation[] };
    const byCall = new Map(rows.invocations.map((row) => [row.call_id, row]));
    expect(byCall.get('d1')).toMatchObject({
      status: 'denied',
      reason_code: 'policy.origin.untrusted',
      policy_version: new DefaultPolicyEngine().version,
      policy_rule_id: 'skill-manage-untrusted-origin',
    });
    expect(byCall.get('u1')).toMatchObject({ status: 'denied', policy_version: null, policy_rule_id: null });
  });

  it('refuses a decision naming other arguments or another policy version (409, stable codes), records nothing and sends nothing; the matching one runs the call', async () => {
    const { runId, approval } = await waitingApproval('checked line');
    const binding = { arguments_hash: approval.arguments_hash!, policy_version: approval.policy_version! };
    const decide = (decision: 'approve' | 'deny', body?: unknown) =>
      h.call('POST', `/v1/approvals/${approval.id}/${decision}`, body === undefined ? {} : { body });

    expect(await errorOf(await decide('approve', { ...binding, arguments_hash: 'a'.repeat(64) }))).toMatchObject({
      status: 409,
      code: 'approval.arguments_changed',
    });
    expect(await errorOf(await decide('deny', { ...binding, policy_version: 'default@0000000000000000' }))).toMatchObject({
      status: 409,
      code: 'approval.policy_changed',
    });
    // Half a binding, or a malformed hash, is not a binding.
    expect(await errorOf(await decide('approve', { arguments_hash: binding.arguments_hash }))).toMatchObject({
      status: 400,
      code: 'request.invalid',
    });
    expect(await errorOf(await decide('approve', { ...binding, arguments_hash: 'not-a-hash' }))).toMatchObject({
      status: 400,
      code: 'request.invalid',
    });
    expect(await pendingApproval(h.call, approval.id)).toMatchObject({ status: 'pending', decided_by: null });
    expect(await sent('checked line')).toBe(0);

    const decided = await decide('approve', binding);
    expect(decided.status).toBe(200);
    expect(await decided.json()).toMatchObject({ status: 'approved', ...binding });
    const settled = await until(
      async () => (await (await h.call('GET', `/v1/runs/${runId}/steps/1`)).json()) as StepOutcome,
      (o) => o.status === 'completed',
    );
    expect(settled.items[0]!.outcome.status).toBe('succeeded');
    expect(await sent('checked line')).toBe(1);
  });

  it('an approval opened before versions were recorded: a body-less decision is refused approval.policy_changed and the step asks again under the current version', async () => {
    const { approval } = await waitingApproval('legacy line');
    const native = h.database.native;
    if (native.driver !== 'pglite') throw new Error('the api harness runs on PGlite');
    // As migration 0020 leaves an approval that was open before it: no recorded version.
    await native.client.query('UPDATE approvals SET policy_version = NULL, policy_rule_id = NULL WHERE id = $1', [approval.id]);
    expect(await errorOf(await h.call('POST', `/v1/approvals/${approval.id}/approve`))).toMatchObject({
      status: 409,
      code: 'approval.policy_changed',
    });
    const reasked = await until(
      () => pendingApproval(h.call, approval.id),
      (a) => a?.policy_version === new DefaultPolicyEngine().version,
    );
    expect(reasked).toMatchObject({ status: 'pending', policy_rule_id: 'external-write-needs-approval' });
    expect(await sent('legacy line')).toBe(0);
  });

  it('a policy change after the decision re-opens the approval under the new version: nothing runs on the old decision, the old version is refused, the new one runs the call', async () => {
    const { runId, approval } = await waitingApproval('policy line');
    const before = { arguments_hash: approval.arguments_hash!, policy_version: approval.policy_version! };

    // The operator changes the policy: this process's worker stops, one with the new profile takes over.
    await h.system.worker.stop({ drainMs: 5000 });
    const profile = new DefaultPolicyEngine().profile;
    const newProfile = {
      ...profile,
      rules: [
        ...profile.rules,
        { id: 'audit-reads', when: { side_effects: ['external_read'] }, effect: 'allow', reason_code: 'policy.rule.allowed' },
      ],
    };
    const newVersion = new DefaultPolicyEngine(newProfile).version;
    expect(newVersion).not.toBe(before.policy_version);
    changed = await composeSystem({
      database: h.database,
      dataDir: h.dataDir,
      mcp: false,
      sandbox: false,
      policyProfile: newProfile,
      workerSettings: { pollIntervalMs: 100, sweepIntervalMs: 60_000 },
      apiSettings: { stepPollMs: 50, eventPollMs: 25 },
    });
    changed.worker.start();
    const app = buildApp(changed.deps).app;
    const call: ApiHarness['call'] = async (method, path, o = {}) =>
      app.request(path, {
        method,
        headers: { Authorization: `Bearer ${h.a.key}`, ...(o.body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(o.body === undefined ? {} : { body: JSON.stringify(o.body) }),
      });

    // Decided under the old version (what the approver saw, and what the approval held then).
    expect((await call('POST', `/v1/approvals/${approval.id}/approve`, { body: before })).status).toBe(200);
    // The re-run under the new policy does not honour it: the approval is asked again.
    const reasked = await until(
      () => pendingApproval(call, approval.id),
      (a) => a?.policy_version === newVersion,
    );
    expect(reasked).toMatchObject({ status: 'pending', decided_by: null, decided_at: null, policy_version: newVersion });
    expect(reasked!.arguments_hash).toBe(before.arguments_hash);
    const row = (await (await call('GET', `/v1/invocations/${approval.invocation_id}`)).json()) as Invocation;
    expect(row).toMatchObject({ status: 'waiting_for_approval', policy_version: newVersion });
    expect(await sent('policy line')).toBe(0);

    // A decision still naming the old version is refused; one naming the new version runs the call.
    expect(await errorOf(await call('POST', `/v1/approvals/${approval.id}/approve`, { body: before }))).toMatchObject({
      status: 409,
      code: 'approval.policy_changed',
    });
    expect((await call('POST', `/v1/approvals/${approval.id}/approve`, { body: { ...before, policy_version: newVersion } })).status).toBe(
      200,
    );
    const settled = await until(
      async () => (await (await call('GET', `/v1/runs/${runId}/steps/1`)).json()) as StepOutcome,
      (o) => o.status === 'completed',
    );
    expect(settled.items[0]!.outcome.status).toBe('succeeded');
    expect(await sent('policy line')).toBe(1);
  });
});
