import { NO_TENANT_STEP_QUOTAS, type TenantStepQuotas } from '@veetbot/domain';
import type { PendingStep } from '@veetbot/ports';
import type { Database } from '../database';
import { hot, parsed } from '../repositories/hot-path';

/**
 * The step queue's claim (ports/step-queue.ts): pending steps of running runs whose lease is
 * free or expired, and running steps whose worker died (their run's lease expired while still
 * owned: a worker that finishes or suspends releases it; the step's unstarted calls would
 * otherwise never run, and every started one dedups). Fair across tenants (docs/adr/0070): the
 * tenant with the fewest steps in flight first, round robin after that, oldest first within a
 * tenant; a tenant at its quota is left out. It runs as veetbot_maintenance (identity columns
 * only, like the recovery sweep; migrations/0003) and locks what it returns with FOR UPDATE OF
 * steps SKIP LOCKED, so claims made at the same moment never overlap. The lock ends with the
 * statement: the runtime's run lease is what makes a step one worker's, and the step's opening
 * checks the quota again (veetbot_open_step) where claims race.
 */
export async function claimPendingSteps(
  database: Database,
  limit: number,
  now: Date,
  quotas: TenantStepQuotas = NO_TENANT_STEP_QUOTAS,
): Promise<PendingStep[]> {
  if (!Number.isSafeInteger(limit) || limit < 1) return [];
  // One statement (sql/functions/veetbot_claim_pending.sql): the predicate above, as SQL.
  const [result] = await database.statement(
    hot('veetbot_claim_pending', [limit, now.toISOString(), quotas.default, JSON.stringify(quotas.tenants)]),
  );
  const rows = parsed(result?.result) as { tenant_id: string; run_id: string; step_number: number }[];
  return rows.map((r) => ({ tenantId: r.tenant_id, runId: r.run_id, stepNumber: r.step_number }));
}
