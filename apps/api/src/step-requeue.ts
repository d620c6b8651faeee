import type { ApiDeps } from './deps';

/**
 * A waiting call goes back to work: its step returns to the queue, a worker resubmits it, and
 * every call in it dedups to its recorded outcome except the one that was waiting. Approval
 * re-enters at step 6 (RULINGS.md "Vocabulary"); a consent answered through the OAuth callback
 * re-enters at step 8 (docs/adr/0082). A completed step stays completed.
 */
export async function requeueStep(deps: ApiDeps, tenantId: string, runId: string, stepNumber: number): Promise<void> {
  const row = await deps.stores.steps.get(tenantId, runId, stepNumber);
  if (row !== null && row.status !== 'completed') {
    if (row.status !== 'pending') await deps.stores.steps.setStatus(tenantId, runId, stepNumber, 'pending');
    await deps.queue.notify({ tenantId, runId, stepNumber });
  }
}
