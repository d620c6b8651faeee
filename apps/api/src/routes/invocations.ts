import { Invocation, InvocationList, ListInvocationsQuery, ListUncertainQuery, ResolveReviewRequest, Review } from '@veetbot/client';
import { InvalidTransitionError } from '@veetbot/domain';
import { ApiError, notFound } from '../api-error';
import { decodeCursor, page } from '../cursor';
import type { ApiDeps } from '../deps';
import { idParam } from '../params';
import type { RouteTable } from '../routing';
import { invocationWire, reviewWire } from '../wire';

/** The scope a principal needs to record what really happened to an UNCERTAIN call. */
export const REVIEW_RESOLVE = 'review.resolve';

/**
 * The tenant's invocation rows (tenant-scoped; result and error included — the row carries the
 * payload, § Events and telemetry) and the UNCERTAIN review queue (§ Recovery: "UNCERTAIN;
 * human review").
 */
export function invocationRoutes(routes: RouteTable, deps: ApiDeps): void {
  routes.add(
    {
      method: 'get',
      path: '/v1/invocations',
      operationId: 'listInvocations',
      summary: 'Invocations, oldest first, filtered by run, status and tool; cursor pagination.',
      tag: 'invocations',
      query: ListInvocationsQuery,
      responses: { 200: { description: 'One page.', schema: InvocationList } },
    },
    async (c, { query, principal }) => {
      const tenantId = principal.tenant_id;
      const after = decodeCursor(query.cursor);
      const rows = await deps.apiStores.invocationQueries.list(
        tenantId,
        {
          ...(query.run_id === undefined ? {} : { runId: query.run_id }),
          ...(query.status === undefined ? {} : { status: query.status }),
          ...(query.tool_name === undefined ? {} : { toolName: query.tool_name }),
        },
        { after, limit: query.limit + 1 },
      );
      const { rows: kept, next } = page(rows, query.limit);
      const invocations = [];
      for (const row of kept)
        invocations.push(
          invocationWire(row, row.status === 'uncertain' ? await deps.apiStores.reviews.getByInvocation(tenantId, row.id) : null),
        );
      return c.json({ invocations, next_cursor: next }, 200);
    },
  );

  routes.add(
    {
      method: 'get',
      path: '/v1/invocations/:invocation_id',
      operationId: 'getInvocation',
      summary: 'One invocation row, with its result or error and its review.',
      tag: 'invocations',
      responses: { 200: { description: 'The row.', schema: Invocation } },
    },
    async (c, { principal }) => {
      const tenantId = principal.tenant_id;
      const row = await deps.stores.invocations.getById(tenantId, idParam(c, 'invocation_id'));
      if (row === null) throw notFound();
      const reconciliation = row.status === 'uncertain' ? await deps.stores.reconciliations.get(tenantId, row.id) : null;
      return c.json(invocationWire(row, await deps.apiStores.reviews.getByInvocation(tenantId, row.id), reconciliation), 200);
    },
  );

  routes.add(
    {
      method: 'get',
      path: '/v1/review/uncertain',
      operationId: 'listUncertain',
      summary: 'The review queue: UNCERTAIN invocations nobody has resolved yet, oldest first.',
      tag: 'review',
      query: ListUncertainQuery,
      responses: { 200: { description: 'One page.', schema: InvocationList } },
    },
    async (c, { query, principal }) => {
      const rows = await deps.apiStores.invocationQueries.listUnreviewedUncertain(principal.tenant_id, {
        after: decodeCursor(query.cursor),
        limit: query.limit + 1,
      });
      const { rows: kept, next } = page(rows, query.limit);
      // docs/adr/0063: each row with what the reconciler tried (a page is at most `limit` rows).
      const invocations = [];
      for (const row of kept) {
        invocations.push(invocationWire(row, null, await deps.stores.reconciliations.get(principal.tenant_id, row.id)));
      }
      return c.json({ invocations, next_cursor: next }, 200);
    },
  );

  routes.add(
    {
      method: 'post',
      path: '/v1/review/uncertain/:invocation_id/resolve',
      operationId: 'resolveUncertain',
      summary: 'Record what really happened to an UNCERTAIN call (audited); the row itself stays UNCERTAIN.',
      tag: 'review',
      scope: REVIEW_RESOLVE,
      body: ResolveReviewRequest,
      responses: { 201: { description: 'The recorded resolution.', schema: Review } },
    },
    async (c, { body, principal }) => {
      const tenantId = principal.tenant_id;
      const invocation = await deps.stores.invocations.getById(tenantId, idParam(c, 'invocation_id'));
      if (invocation === null) throw notFound();
      const at = deps.clock.now();
      try {
        const review = await deps.apiStores.reviews.record(
          tenantId,
          { invocationId: invocation.id, resolution: body.resolution, note: body.note, reviewedBy: principal.principal_id, reviewedAt: at },
          [
            {
              runId: invocation.runId,
              // Not a tool.call.* event: those seven are the complete list (§ Events and
              // telemetry). Identity and classification only; the note stays in the row.
              type: 'review.uncertain.resolved',
              payload: {
                invocation_id: invocation.id,
                run_id: invocation.runId,
                step_number: invocation.stepNumber,
                call_id: invocation.callId,
                tool_name: invocation.toolName,
                resolution: body.resolution,
                reviewed_by: principal.principal_id,
              },
              derivationKey: `review.uncertain.resolved:${invocation.id}`,
              createdAt: at,
            },
          ],
        );
        return c.json(reviewWire(review), 201);
      } catch (error) {
        if (InvalidTransitionError.isInstance(error)) {
          throw error.currentStatus === 'reviewed'
            ? new ApiError(409, 'review.already_resolved', 'This invocation has already been resolved.')
            : new ApiError(409, 'review.not_uncertain', 'Only an UNCERTAIN invocation can be resolved.');
        }
        throw error;
      }
    },
  );
}
