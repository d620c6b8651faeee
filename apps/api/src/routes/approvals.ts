import { Approval, ApprovalList, ListApprovalsQuery } from '@veetbot/client';
import { InvalidTransitionError } from '@veetbot/domain';
import type { ApprovalRow } from '@veetbot/ports';
import { ApiError, notFound } from '../api-error';
import type { ApiDeps } from '../deps';
import { idParam } from '../params';
import type { RouteTable } from '../routing';
import { approvalWire } from '../wire';

/** RULINGS.md "Policy": approvals are records; a principal holding `approvals.decide` decides them. */
export const APPROVALS_DECIDE = 'approvals.decide';

export function approvalRoutes(routes: RouteTable, deps: ApiDeps): void {
  routes.add(
    {
      method: 'get',
      path: '/v1/approvals',
      operationId: 'listApprovals',
      summary: 'Pending approvals, oldest first, each with the call it decides.',
      tag: 'approvals',
      query: ListApprovalsQuery,
      responses: { 200: { description: 'The approvals.', schema: ApprovalList } },
    },
    async (c, { query, principal }) => {
      const tenantId = principal.tenant_id;
      const rows = await deps.stores.approvals.listPending(tenantId, query.limit);
      const approvals: Approval[] = [];
      for (const row of rows) {
        const invocation = await deps.stores.invocations.getById(tenantId, row.invocationId);
        if (invocation !== null) approvals.push(approvalWire(row, invocation));
      }
      return c.json({ approvals }, 200);
    },
  );

  for (const decision of ['approve', 'deny'] as const) {
    routes.add(
      {
        method: 'post',
        path: `/v1/approvals/:approval_id/${decision}`,
        operationId: `${decision}Approval`,
        summary:
          decision === 'approve'
            ? 'Approve a pending call: recorded with who and when; the step is re-queued so the call runs.'
            : 'Deny a pending call: recorded with who and when; the step is re-queued so the call ends DENIED.',
        tag: 'approvals',
        scope: APPROVALS_DECIDE,
        responses: { 200: { description: 'The decided approval.', schema: Approval } },
      },
      async (c, { principal }) => {
        const tenantId = principal.tenant_id;
        const approval = await deps.stores.approvals.get(tenantId, idParam(c, 'approval_id'));
        if (approval === null) throw notFound();
        const invocation = await deps.stores.invocations.getById(tenantId, approval.invocationId);
        if (invocation === null) throw notFound();
        const at = deps.clock.now();
        let decided: ApprovalRow;
        try {
          decided = await deps.stores.approvals.decide(
            tenantId,
            approval.id,
            { decision: decision === 'approve' ? 'approved' : 'denied', decidedBy: principal.principal_id, decidedAt: at },
            [
              {
                runId: approval.runId,
                type: 'approval.decided',
                payload: {
                  approval_id: approval.id,
                  invocation_id: approval.invocationId,
                  run_id: approval.runId,
                  decision: decision === 'approve' ? 'approved' : 'denied',
                  decided_by: principal.principal_id,
                },
                derivationKey: `approval.decided:${approval.id}`,
                createdAt: at,
              },
            ],
          );
        } catch (error) {
          if (InvalidTransitionError.isInstance(error))
            throw new ApiError(409, 'approval.already_decided', 'This approval has already been decided.');
          throw error;
        }
        // Approval re-enters at step 6 (RULINGS.md "Vocabulary"): the step goes back to the
        // queue, a worker resubmits it, and the approved call runs (a denied one ends DENIED)
        // while every other call dedups to its recorded outcome.
        const step = { tenantId, runId: invocation.runId, stepNumber: invocation.stepNumber };
        const row = await deps.stores.steps.get(tenantId, step.runId, step.stepNumber);
        if (row !== null && row.status !== 'completed') {
          if (row.status !== 'pending') await deps.stores.steps.setStatus(tenantId, step.runId, step.stepNumber, 'pending');
          await deps.queue.notify(step);
        }
        return c.json(approvalWire(decided, invocation), 200);
      },
    );
  }
}
