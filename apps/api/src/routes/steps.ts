import { StepOutcome, SubmitStepRequest } from '@veetbot/client';
import { callerTrustClaim, callerTrustMessage, describeJsonPath, type StepBatch } from '@veetbot/domain';
import type { RunRow, StepRow } from '@veetbot/ports';
import { activeTraceContext, checkResubmission, toStoredBatch } from '@veetbot/runtime';
import { ApiError, notFound } from '../api-error';
import { DEFAULT_API_SETTINGS, type ApiDeps } from '../deps';
import { idParam, intParam } from '../params';
import type { RouteTable } from '../routing';
import { armStepWait, awaitStepOutcome, readStepOutcome } from '../step-outcome';

/**
 * ARCHITECTURE.md "A call's path", 1 and 4: the api stores the step's batch on the run as a
 * pending step (whose commit wakes a worker, docs/adr/0076), and answers with the outcomes when they are in within the
 * caller's bound — else 202 with where to look. The api never executes a call itself.
 */
export function stepRoutes(routes: RouteTable, deps: ApiDeps): void {
  const settings = { ...DEFAULT_API_SETTINGS, ...deps.settings };
  const location = (runId: string, n: number) => `/v1/runs/${runId}/steps/${n}`;

  routes.add(
    {
      method: 'post',
      path: '/v1/runs/:run_id/steps',
      operationId: 'submitStep',
      summary: "Submit a model step's batch of tool calls and wait (bounded) for the outcomes.",
      tag: 'steps',
      body: SubmitStepRequest,
      responses: {
        200: { description: 'Every call concluded or is waiting for approval.', schema: StepOutcome },
        202: {
          description: "Still running: follow Location (GET the step) or the run's events.",
          schema: StepOutcome,
          headers: { Location: "The step's URL." },
        },
      },
    },
    async (c, { body, principal }) => {
      const tenantId = principal.tenant_id;
      const runId = idParam(c, 'run_id');
      const ids = new Set(body.calls.map((call) => call.call_id));
      if (ids.size !== body.calls.length)
        throw new ApiError(400, 'request.invalid', 'Invalid request at body.calls: call ids must be unique within a step.');
      refuseClaimedTrust(body);

      const batch = batchOf(body, principal);
      const pending = { tenantId, runId, stepNumber: body.step_number };
      const waitMs = (body.wait_seconds ?? settings.defaultWaitSeconds) * 1000;
      // The submission wakes the workers in its own commit (docs/adr/0076), so a worker may run
      // the step and report before this process has read the statement's answer: the wait for
      // the report is armed first.
      const armed = armStepWait(deps, pending, waitMs, settings.stepPollMs, c.req.raw.signal);
      let stored: Awaited<ReturnType<typeof storeStep>>;
      try {
        stored = await storeStep(deps, tenantId, runId, body.step_number, batch);
      } catch (error) {
        armed.release();
        throw error;
      }
      const { run, step, fresh } = stored;
      // A resubmission of a step that already ran is answered from its rows: never a second
      // execution. A step this request just stored has no outcome yet: the first read happens
      // when the worker reports. A resubmitted step still open is announced again (its first
      // notification may have been sent while no worker listened).
      if (step.status === 'completed' || !fresh) armed.release();
      const start =
        step.status === 'completed'
          ? undefined
          : fresh
            ? { fresh, armed }
            : { fresh, wake: () => deps.queue.notify({ tenantId, runId: run.id, stepNumber: step.stepNumber }) };
      const outcome = await awaitStepOutcome(deps, run, step, waitMs, settings.stepPollMs, c.req.raw.signal, start);
      if (outcome.status === 'running') {
        c.header('Location', location(run.id, step.stepNumber));
        return c.json(outcome, 202);
      }
      return c.json(outcome, 200);
    },
  );

  routes.add(
    {
      method: 'get',
      path: '/v1/runs/:run_id/steps/:step_number',
      operationId: 'getStep',
      summary: "A step's outcome, read from its invocation rows.",
      tag: 'steps',
      responses: { 200: { description: 'The outcome so far (status says whether it is complete).', schema: StepOutcome } },
    },
    async (c, { principal }) => {
      const tenantId = principal.tenant_id;
      const run = await deps.stores.runs.get(tenantId, idParam(c, 'run_id'));
      if (run === null) throw notFound();
      const step = await deps.stores.steps.get(tenantId, run.id, intParam(c, 'step_number'));
      if (step === null) throw notFound();
      return c.json(await readStepOutcome(deps, run, step), 200);
    },
  );
}

/**
 * Insert the step as `pending` (UNIQUE(run_id, step_number)) — one statement that also reads
 * the run and its session (StepSubmissionStore). The same batch again is a resubmission and
 * returns the stored step; a different batch under the number is a client defect (409
 * step.conflict), refused rather than mixed: the runtime's one check decides
 * (checkResubmission). A new step needs a running run in an open session (a run waiting for
 * its user is 409 run.waiting_for_user); a resubmission is answered whatever became of the run since.
 */
async function storeStep(
  deps: ApiDeps,
  tenantId: string,
  runId: string,
  stepNumber: number,
  batch: StepBatch,
): Promise<{ run: RunRow; step: StepRow; fresh: boolean }> {
  const found = await deps.apiStores.stepSubmissions.submit(tenantId, {
    runId,
    stepNumber,
    // docs/adr/0068: the request span's context goes with the step, to the worker that runs it.
    batch: toStoredBatch(batch, activeTraceContext()),
    createdAt: deps.clock.now(),
  });
  const run = found.run;
  if (run === null) throw notFound();
  if (found.inserted && found.step !== null) return { run, step: found.step, fresh: true };
  if (found.step !== null) return { run, step: checkResubmission(found.step, batch), fresh: false };
  // § Control tools: a run waiting for its user's answer takes no new step until it is
  // answered (the same code the runtime gives, runtime.run_waiting_for_user).
  if (run.status === 'waiting_for_user')
    throw new ApiError(409, 'run.waiting_for_user', 'The run is waiting for its user to answer a question.');
  if (run.status !== 'running') throw new ApiError(409, 'run.not_active', 'The run is not running.');
  if (found.sessionStatus === null) throw notFound();
  throw new ApiError(409, 'session.closed', 'The session is closed.');
}

/**
 * RULINGS.md 1 (docs/adr/0051): a caller states its context's trust, and may lower an argument's,
 * but never above `user` — `platform` is the runtime's, `trusted_configuration` the operator's. A
 * higher label is refused loudly (400 `request.trust_not_allowed`), before anything is stored: a
 * silent clamp would run a call under a policy other than the one its caller asked for.
 */
function refuseClaimedTrust(body: SubmitStepRequest): void {
  for (const [index, call] of body.calls.entries()) {
    const claim = callerTrustClaim(call);
    if (claim === null) continue;
    const at = describeJsonPath(['calls', index, ...claim.path]);
    throw new ApiError(400, 'request.trust_not_allowed', `Invalid request at body.${at}: ${callerTrustMessage(claim)}.`);
  }
}

/**
 * The one place a step's batch crosses from the wire (the specification's snake_case, checked
 * by SubmitStepRequest) into the domain's StepBatch (docs/adr/0032). Every call the api takes
 * is the model's.
 */
function batchOf(body: SubmitStepRequest, principal: StepBatch['principal']): StepBatch {
  return {
    principal,
    calls: body.calls.map((call) => ({
      callId: call.call_id,
      toolName: call.tool_name,
      arguments: call.arguments,
      contextTrust: call.context_trust,
      ...(call.argument_trust === undefined ? {} : { argumentTrust: call.argument_trust }),
      origin: 'model' as const,
    })),
  };
}
