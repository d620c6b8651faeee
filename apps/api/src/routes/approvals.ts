import { Approval, ApprovalList, DecideApprovalRequest, ListApprovalsQuery } from '@veetbot/client';
import { ApprovalBindingError, InvalidTransitionError } from '@veetbot/domain';
import type { ApprovalRow } from '@veetbot/ports';
import { ApiError, notFound } from '../api-error';
import type { ApiDeps } from '../deps';
import { idParam } from '../params';
import type { RouteTable } from '../routing';
import { approvalWire } from '../wire';
import { requeueStep } from '../step-requeue';

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
        body: DecideApprovalRequest,
        bodyOptional: true,
        responses: { 200: { description: 'The decided approval.', schema: Approval } },
      },
      async (c, { body, principal }) => {
        const tenantId = principal.tenant_id;
        const approval = await deps.stores.approvals.get(tenantId, idParam(c, 'approval_id'));
        if (approval === null) throw notFound();
        const invocation = await deps.stores.invocations.getById(tenantId, approval.invocationId);
        if (invocation === null) throw notFound();
        const at = deps.clock.now();
        // docs/adr/0047: bound to what the decider saw, or (no body) to what the approval holds now.
        const expected =
          'arguments_hash' in body
            ? { argumentsHash: body.arguments_hash, policyVersion: body.policy_version }
            : approval.argumentsHash !== null && approval.policyVersion !== null
              ? { argumentsHash: approval.argumentsHash, policyVersion: approval.policyVersion }
              : undefined;
        if (expected === undefined && approval.status === 'pending') {
          // Asked before versions were recorded: the step re-runs and asks again under the current one.
          await requeueStep(deps, tenantId, invocation.runId, invocation.stepNumber);
          throw policyChanged();
        }
        let decided: ApprovalRow;
        try {
          decided = await deps.stores.approvals.decide(
            tenantId,
            approval.id,
            {
              decision: decision === 'approve' ? 'approved' : 'denied',
              decidedBy: principal.principal_id,
              decidedAt: at,
              ...(expected === undefined ? {} : { expected }),
            },
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
          if (ApprovalBindingError.isInstance(error)) {
            if (error.mismatch === 'arguments_hash')
              throw new ApiError(
                409,
                'approval.arguments_changed',
                "The call's arguments are not the ones this decision names; read the approval again and decide on what it holds now.",
              );
            // Re-read under the current policy by a worker (a no-op when it already asks under it).
            await requeueStep(deps, tenantId, invocation.runId, invocation.stepNumber);
            throw policyChanged();
          }
          throw error;
        }
        await requeueStep(deps, tenantId, invocation.runId, invocation.stepNumber);
        return c.json(approvalWire(decided, invocation), 200);
      },
    );
  }
}

/**
 * The approval was asked under another policy version than the decision names (or before
 * versions were recorded): a new decision is needed on what it holds now (docs/adr/0047).
 */
function policyChanged(): ApiError {
  return new ApiError(
    409,
    'approval.policy_changed',
    'The policy that asked for this approval is not the version this decision names; read the approval again and decide under its current policy version.',
  );
}
