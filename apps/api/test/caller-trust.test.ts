import type { AnsweredQuestion, InvocationList, QuestionList, StepOutcome } from '@veetbot/client';
import { provisionTenantKey } from '@veetbot/composition';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, openApiHarness, sessionAndRun, type ApiHarness } from './harness';

/*
 * What a caller may not claim (RULINGS.md 1; docs/adr/0051), through the real composed api and
 * its in-process worker over PGlite: a caller states at most `user` trust — `platform` is the
 * runtime's, `trusted_configuration` the operator's — and an answer to conversation.ask_user,
 * which enters the run as `user`, is the user's to give: it takes `questions.answer`, which the
 * agent's key does not hold.
 */
let h: ApiHarness;
beforeAll(async () => {
  h = await openApiHarness();
}, 120_000);
afterAll(async () => {
  await h?.close();
});

async function json<T>(response: Response, status = 200): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as T;
}

const math = (callId: string, trust: Record<string, unknown>) => ({
  call_id: callId,
  tool_name: 'math.evaluate',
  arguments: { expression: '6*7' },
  ...trust,
});

describe('a step states at most user trust', () => {
  it('platform or trusted_configuration in context_trust or argument_trust is 400 request.trust_not_allowed, and nothing is stored', async () => {
    const { runId } = await sessionAndRun(h);
    const claims: [unknown[], string][] = [
      [[math('m1', { context_trust: ['platform'] })], 'body.calls.0.context_trust.0'],
      [
        [math('m1', { context_trust: ['user'] }), math('m2', { context_trust: ['external_untrusted', 'trusted_configuration'] })],
        'body.calls.1.context_trust.1',
      ],
      [[math('m1', { context_trust: ['user'], argument_trust: { expression: 'platform' } })], 'body.calls.0.argument_trust.expression'],
    ];
    for (const [calls, at] of claims) {
      const refused = await errorOf(await h.call('POST', `/v1/runs/${runId}/steps`, { body: { step_number: 1, calls, wait_seconds: 10 } }));
      expect(refused).toMatchObject({ status: 400, code: 'request.trust_not_allowed' });
      expect(refused.message).toContain(`Invalid request at ${at}: a caller may state at most user trust`);
    }
    expect((await h.call('GET', `/v1/runs/${runId}/steps/1`)).status).toBe(404);
    expect((await json<InvocationList>(await h.call('GET', `/v1/invocations?run_id=${runId}`))).invocations).toEqual([]);

    // `user` (and anything lower) is a caller's to state; the row records it as the origin's trust.
    const ok = await json<StepOutcome>(
      await h.call('POST', `/v1/runs/${runId}/steps`, {
        body: {
          step_number: 1,
          calls: [math('m1', { context_trust: ['user'], argument_trust: { expression: 'user' } })],
          wait_seconds: 10,
        },
      }),
    );
    expect(ok.items[0]?.outcome.status).toBe('succeeded');
    const rows = await json<InvocationList>(await h.call('GET', `/v1/invocations?run_id=${runId}`));
    expect(rows.invocations.map((r) => [r.call_id, r.origin_trust])).toEqual([['m1', 'user']]);
  });
});

describe('an answer is the user’s: POST /v1/questions/{id}/answer takes questions.answer', () => {
  it("the agent's key and a wildcard key are 403 and the question stays open; the user's key answers with user trust", async () => {
    // The agent's own key opens the run and asks (it holds the tools' scopes only).
    const { runId } = await sessionAndRun(h, h.a.plainKey);
    const asked = await json<StepOutcome>(
      await h.call('POST', `/v1/runs/${runId}/steps`, {
        key: h.a.plainKey,
        body: {
          step_number: 1,
          calls: [{ call_id: 'q1', tool_name: 'conversation.ask_user', arguments: { question: 'Ship it?' }, context_trust: ['user'] }],
          wait_seconds: 10,
        },
      }),
    );
    const questionId = asked.suspended[0]!.ref;
    const answer = (key: string) => h.call('POST', `/v1/questions/${questionId}/answer`, { key, body: { answer: 'yes, ship it' } });

    const wildcard = await provisionTenantKey(h.system.stores, {
      tenantId: h.a.tenantId,
      tenantName: h.a.tenantId,
      principalId: 'wildcard-agent',
      scopes: ['questions.*', 'workspace.*'],
      now: new Date(),
    });
    for (const key of [h.a.plainKey, wildcard.key]) {
      const refused = await errorOf(await answer(key));
      expect(refused).toMatchObject({ status: 403, code: 'auth.scope_missing' });
      expect(refused.message).toContain('questions.answer');
    }
    expect((await json<QuestionList>(await h.call('GET', `/v1/runs/${runId}/questions`))).questions.map((q) => q.question_id)).toEqual([
      questionId,
    ]);
    expect((await h.system.stores.invocations.getById(h.a.tenantId, questionId))?.status).toBe('running');

    const answered = await json<AnsweredQuestion>(await answer(h.a.key));
    expect(answered.item).toMatchObject({ call_id: 'q1', trust: 'user', outcome: { status: 'succeeded' } });
    expect(answered.item.content).toEqual([{ type: 'text', text: 'yes, ship it', trust: 'user' }]);

    // The OpenAPI document says so.
    const document = (await (await h.call('GET', '/v1/openapi.json')).json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    expect(document.paths['/v1/questions/{question_id}/answer']?.post?.['x-required-scope']).toBe('questions.answer');
  });
});

describe('the siblings: nothing else a caller sends names an origin, a decider or a principal', () => {
  it('an origin on a call, a decider on a decision and a principal on a session are refused fields; who decided is the key', async () => {
    const { runId } = await sessionAndRun(h);
    // A call's origin is the api's to set (every call it takes is the model's): `runtime` would be PLATFORM.
    const origin = await errorOf(
      await h.call('POST', `/v1/runs/${runId}/steps`, {
        body: { step_number: 1, calls: [{ ...math('m1', { context_trust: ['user'] }), origin: 'runtime' }], wait_seconds: 10 },
      }),
    );
    expect(origin).toMatchObject({ status: 400, code: 'request.invalid' });
    expect(origin.message).toContain('body.calls.0');
    const session = await errorOf(
      await h.call('POST', '/v1/sessions', { body: { agent_id: 'a', principal_id: 'someone-else', scopes: ['approvals.decide'] } }),
    );
    expect(session).toMatchObject({ status: 400, code: 'request.invalid' });

    // A decision records the deciding key's principal; a body naming another is refused.
    const asked = await json<StepOutcome>(
      await h.call('POST', `/v1/runs/${runId}/steps`, {
        body: {
          step_number: 1,
          calls: [
            { call_id: 'w1', tool_name: 'demo.external_write', arguments: { line: 'x' }, context_trust: ['user', 'external_untrusted'] },
          ],
          wait_seconds: 10,
        },
      }),
    );
    const approvalId = asked.pending_approvals[0]!.approval_id!;
    const claimed = await errorOf(await h.call('POST', `/v1/approvals/${approvalId}/approve`, { body: { decided_by: 'the-ceo' } }));
    expect(claimed).toMatchObject({ status: 400, code: 'request.invalid' });
    const decided = await json<{ status: string; decided_by: string }>(await h.call('POST', `/v1/approvals/${approvalId}/approve`));
    expect(decided).toMatchObject({ status: 'approved', decided_by: `${h.a.tenantId}-admin` });
  });
});
