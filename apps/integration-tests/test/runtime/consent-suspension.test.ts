import { randomUUID } from 'node:crypto';
import type { ConsentSuspended, ConsentSuspensionCall, ConsentSuspensionHost } from '@veetbot/ports';
import { describe, expect, it } from 'vitest';
import { drivers } from '../../src';
import { callOf, tool, useHarness } from './fixtures';

/*
 * docs/adr/0082: a call whose server needs a person's consent suspends (kind `authorization`)
 * instead of failing, with run.suspended and tool.call.authorization_required in the same
 * commit; a resubmitted step answers the suspension without running the tool again; once the
 * consent is answered the row is re-claimed (run.resumed, the same attempt) and runs again.
 */

/** The adapter's McpConsentRequiredError, as the host sees it: an error it recognizes. */
class ConsentNeeded extends Error {
  override name = 'ConsentNeeded';
}

class RecordingConsents implements ConsentSuspensionHost {
  readonly recorded: (ConsentSuspended & { call: ConsentSuspensionCall })[] = [];
  readonly answeredIds = new Set<string>();
  async suspend(error: unknown, call: ConsentSuspensionCall): Promise<ConsentSuspended | null> {
    if (!(error instanceof ConsentNeeded)) return null;
    const consent = {
      id: randomUUID(),
      authorizationUrl: `https://auth.example.com/authorize?state=s-${this.recorded.length}`,
      serverId: 'acme',
      principalId: call.principalId,
    };
    this.recorded.push({ ...consent, call });
    return consent;
  }
  async answered(_tenantId: string, consentId: string): Promise<boolean> {
    return this.answeredIds.has(consentId);
  }
}

describe.each(drivers())('consent as a run suspension on %s', (driver) => {
  const harness = useHarness(driver);

  it('suspends for consent, answers a resubmission from the record, and runs the call again once the consent is answered', async () => {
    const consents = new RecordingConsents();
    let granted = false;
    let executions = 0;
    const guarded = tool({ name: 'demo.guarded' }, async () => {
      executions++;
      if (!granted) throw new ConsentNeeded('consent needed');
      return { ok: true, content: [{ type: 'text', text: 'ran with the grant' }] };
    });
    const broken = tool({ name: 'demo.broken' }, async () => {
      throw new Error('an ordinary failure');
    });
    const h = await harness({ tools: [guarded, broken], consents });
    const { runId } = await h.open();

    const first = await h.runtime.submitStep(h.step(runId, 1, [callOf('c1', 'demo.guarded', {})]));
    expect(first.items).toEqual([]);
    expect(first.suspended).toEqual([expect.objectContaining({ callId: 'c1', kind: 'authorization' })]);
    const [consent] = consents.recorded;
    expect(consent!.call).toMatchObject({ tenantId: h.tenantId, principalId: h.principal.principal_id, runId, serverId: null });
    expect(first.suspended[0]!.ref).toBe(consent!.id);
    const invocationId = first.suspended[0]!.invocationId;
    expect(await h.stores.invocations.getById(h.tenantId, invocationId)).toMatchObject({
      status: 'running',
      suspendedKind: 'authorization',
      suspendedRef: consent!.id,
      attemptNumber: 1,
    });
    const events = await h.stores.events.listAfter(h.tenantId, runId, 0, 100);
    const required = events.find((e) => e.type === 'tool.call.authorization_required');
    expect(required?.payload).toMatchObject({
      invocation_id: invocationId,
      consent_id: consent!.id,
      server_id: 'acme',
      principal_id: h.principal.principal_id,
    });
    // The link carries the state: never in the event stream.
    expect(JSON.stringify(events)).not.toContain('/authorize?state=');
    expect(events.map((e) => e.type)).toContain('run.suspended');

    // Not answered yet: the resubmitted step answers from the record, the tool does not run.
    const again = await h.runtime.submitStep(h.step(runId, 1, [callOf('c1', 'demo.guarded', {})]));
    expect(again.suspended).toEqual([expect.objectContaining({ invocationId, kind: 'authorization', ref: consent!.id })]);
    expect(executions).toBe(1);

    // The callback saved the grant and used the state: the call is re-claimed and runs again.
    granted = true;
    consents.answeredIds.add(consent!.id);
    const resumed = await h.runtime.submitStep(h.step(runId, 1, [callOf('c1', 'demo.guarded', {})]));
    expect(resumed.suspended).toEqual([]);
    expect(resumed.items).toHaveLength(1);
    expect(JSON.stringify(resumed.items[0])).toContain('ran with the grant');
    expect(executions).toBe(2);
    const row = await h.stores.invocations.getById(h.tenantId, invocationId);
    expect(row).toMatchObject({ status: 'succeeded', suspendedKind: null, attemptNumber: 1 });
    const after = (await h.stores.events.listAfter(h.tenantId, runId, 0, 100)).map((e) => e.type);
    expect(after).toContain('run.resumed');

    // Any other failure is not a consent: it fails as before.
    const other = await h.runtime.submitStep(h.step(runId, 2, [callOf('c2', 'demo.broken', {})]));
    expect(other.suspended).toEqual([]);
    expect(other.items).toHaveLength(1);
    expect(consents.recorded).toHaveLength(1);
  });
});
