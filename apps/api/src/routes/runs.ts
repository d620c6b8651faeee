import { CreateRunRequest, Run } from '@veetbot/client';
import { notFound } from '../api-error';
import type { ApiDeps } from '../deps';
import { idParam } from '../params';
import type { RouteTable } from '../routing';
import { runWire } from '../wire';

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
      return c.json(runWire(run), 200);
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
}
