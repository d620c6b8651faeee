import { CompleteRunRequest, CreateRunRequest, QuestionList, Run, RunList, WorkingState, type Question } from '@veetbot/client';
import { isSuspended } from '@veetbot/executor';
import type { Context } from 'hono';
import { ApiError, notFound } from '../api-error';
import type { ApiDeps, ApiEnv } from '../deps';
import { idParam } from '../params';
import type { RouteTable } from '../routing';
import { iso, isoOrNull, runWire } from '../wire';

export function runRoutes(routes: RouteTable, deps: ApiDeps): void {
  routes.add(
    {
      method: 'post',
      path: '/v1/runs',
      operationId: 'createRun',
      summary: 'Start a run in an open session, with a deadline and budgets.',
      tag: 'runs',
      body: CreateRunRequest,
      responses: { 201: { description: 'The run.', schema: Run } },
    },
    async (c, { body, principal }) => {
      const deadlineAt = new Date(deps.clock.now().getTime() + body.deadline_seconds * 1000);
      const limit = body.budgets?.maximum_tool_calls;
      const run = await deps.runtime.createRun(principal.tenant_id, body.session_id, {
        deadlineAt,
        ...(limit === undefined ? {} : { budgets: { maximumToolCalls: limit } }),
      });
      return c.json(runWire(run), 201);
    },
  );

  routes.add(
    {
      method: 'get',
      path: '/v1/runs/:run_id',
      operationId: 'getRun',
      summary: 'A run.',
      tag: 'runs',
      responses: { 200: { description: 'The run.', schema: Run } },
    },
    async (c, { principal }) => {
      const run = await deps.stores.runs.get(principal.tenant_id, idParam(c, 'run_id'));
      if (run === null) throw notFound();
      // docs/adr/0082: the oldest open consent a suspended call waits for (its link, never a token).
      const now = deps.clock.now().getTime();
      const consent = (await deps.stores.mcpPendingConsents.listOpenForRun(principal.tenant_id, run.id)).find(
        (c) => c.expiresAt.getTime() > now,
      );
      const authorization =
        consent === undefined
          ? null
          : {
              url: consent.authorizationUrl,
              server_id: consent.serverId,
              principal_id: consent.principalId,
              expires_at: consent.expiresAt.toISOString(),
            };
      return c.json({ ...runWire(run), authorization }, 200);
    },
  );

  routes.add(
    {
      method: 'post',
      path: '/v1/runs/:run_id/cancel',
      operationId: 'cancelRun',
      summary: 'Cancel a run: in-flight calls see their cancellation token; suspended calls end tool.run_cancelled.',
      tag: 'runs',
      responses: { 200: { description: 'The cancelled run.', schema: Run } },
    },
    async (c, { principal }) => {
      const run = await deps.runtime.cancelRun(principal.tenant_id, idParam(c, 'run_id'));
      return c.json(runWire(run), 200);
    },
  );

  routes.add(
    {
      method: 'post',
      path: '/v1/runs/:run_id/complete',
      operationId: 'completeRun',
      summary:
        "Complete a running run with its final answer. A delegated child's answer then completes its parent's delegate.run call (as EXTERNAL_UNTRUSTED).",
      tag: 'runs',
      body: CompleteRunRequest,
      responses: { 200: { description: 'The completed run.', schema: Run } },
    },
    async (c, { body, principal }) => {
      const run = await deps.runtime.completeRun(principal.tenant_id, idParam(c, 'run_id'), body.result);
      return c.json(runWire(run), 200);
    },
  );

  routes.add(
    {
      method: 'get',
      path: '/v1/runs/:run_id/children',
      operationId: 'listChildRuns',
      summary: 'The runs this run delegated (delegate.run), oldest first.',
      tag: 'runs',
      responses: { 200: { description: 'The child runs.', schema: RunList } },
    },
    async (c, { principal }) => {
      const runId = await existingRunId(c, deps, principal.tenant_id);
      const children = await deps.stores.runs.listChildren(principal.tenant_id, runId);
      return c.json({ runs: children.map(runWire) }, 200);
    },
  );

  routes.add(
    {
      method: 'get',
      path: '/v1/runs/:run_id/working-state',
      operationId: 'getWorkingState',
      summary: "The run's working-state document (context.update_working_state), latest version.",
      tag: 'runs',
      responses: { 200: { description: 'The working state.', schema: WorkingState } },
    },
    async (c, { principal }) => {
      const runId = await existingRunId(c, deps, principal.tenant_id);
      const state = await deps.stores.workingStates.get(principal.tenant_id, runId);
      if (state === null) throw new ApiError(404, 'working_state.not_found', 'The run has no working state yet.');
      return c.json({ run_id: runId, version: state.version, document: state.document, updated_at: iso(state.createdAt) }, 200);
    },
  );

  routes.add(
    {
      method: 'get',
      path: '/v1/runs/:run_id/questions',
      operationId: 'listQuestions',
      summary: 'The questions conversation.ask_user put to the run’s user that are still unanswered.',
      tag: 'runs',
      responses: { 200: { description: 'The open questions.', schema: QuestionList } },
    },
    async (c, { principal }) => {
      const runId = await existingRunId(c, deps, principal.tenant_id);
      const rows = await deps.stores.invocations.listForRun(principal.tenant_id, runId);
      const questions: Question[] = rows
        .filter((r) => isSuspended(r) && r.suspendedKind === 'user_input')
        .map((r) => ({
          question_id: r.id,
          run_id: r.runId,
          step_number: r.stepNumber,
          call_id: r.callId,
          question: typeof r.arguments.question === 'string' ? r.arguments.question : '',
          asked_at: isoOrNull(r.startedAt),
        }));
      return c.json({ questions }, 200);
    },
  );
}

/** The path's run id, once the run is known to exist for this tenant (another tenant's is not found). */
async function existingRunId(c: Context<ApiEnv>, deps: ApiDeps, tenantId: string): Promise<string> {
  const runId = idParam(c, 'run_id');
  if ((await deps.stores.runs.get(tenantId, runId)) === null) throw notFound();
  return runId;
}
