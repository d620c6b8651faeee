import { IDENTICAL_CALL_THRESHOLD } from '@veetbot/domain';
import type { InvocationFilter, InvocationQueryStore, InvocationRow, PageRequest, StepView } from '@veetbot/ports';
import { evidenceFromJson, hot, parsed, rowFromJson, runFromJson, tallyFromJson } from './hot-path';
import { and, asc, eq, gt, isNull, or, type SQL } from 'drizzle-orm';
import type { Database } from '../database';
import { invocationReviews, toolInvocations } from '../schema';

/** The api's reads of tool_invocations: filtered listing and the UNCERTAIN review queue. */
export class PostgresInvocationQueryStore implements InvocationQueryStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  /** One statement (sql/functions/veetbot_step_view.sql): the api reads this for every step it answers. */
  async stepView(tenantId: string, runId: string, stepNumber: number): Promise<StepView> {
    // Only the keys near a threshold (IDENTICAL_CALL_THRESHOLD − 1 identical calls, or a denial):
    // what synthesis-only reads, so the view does not grow with the run (docs/adr/0049).
    const [result] = await this.#db.statement(hot('veetbot_step_view', [tenantId, runId, stepNumber, IDENTICAL_CALL_THRESHOLD - 1]));
    const view = parsed(result?.result) as { run: unknown; rows: unknown[]; tally: unknown; evidence?: unknown };
    return {
      run: view.run === null ? null : runFromJson(view.run),
      rows: view.rows.map(rowFromJson),
      tally: tallyFromJson(view.tally),
      evidence: evidenceFromJson(view.evidence),
    };
  }

  list(tenantId: string, filter: InvocationFilter, page: PageRequest): Promise<InvocationRow[]> {
    const conditions: SQL[] = [];
    if (filter.runId !== undefined) conditions.push(eq(toolInvocations.runId, filter.runId));
    if (filter.status !== undefined) conditions.push(eq(toolInvocations.status, filter.status));
    if (filter.toolName !== undefined) conditions.push(eq(toolInvocations.toolName, filter.toolName));
    const after = afterCursor(page);
    if (after !== undefined) conditions.push(after);
    return this.#db.tenant(tenantId, (tx) =>
      tx
        .select()
        .from(toolInvocations)
        .where(and(...conditions))
        .orderBy(asc(toolInvocations.createdAt), asc(toolInvocations.id))
        .limit(page.limit),
    );
  }

  async listUnreviewedUncertain(tenantId: string, page: PageRequest): Promise<InvocationRow[]> {
    const after = afterCursor(page);
    const rows = await this.#db.tenant(tenantId, (tx) =>
      tx
        .select({ row: toolInvocations })
        .from(toolInvocations)
        .leftJoin(
          invocationReviews,
          and(eq(invocationReviews.tenantId, toolInvocations.tenantId), eq(invocationReviews.invocationId, toolInvocations.id)),
        )
        .where(and(eq(toolInvocations.status, 'uncertain'), isNull(invocationReviews.id), ...(after === undefined ? [] : [after])))
        .orderBy(asc(toolInvocations.createdAt), asc(toolInvocations.id))
        .limit(page.limit),
    );
    return rows.map((r) => r.row);
  }
}

/** Keyset pagination: strictly after (created_at, id) of the previous page's last row. */
function afterCursor(page: PageRequest): SQL | undefined {
  if (page.after === null) return undefined;
  const { createdAt, id } = page.after;
  return or(gt(toolInvocations.createdAt, createdAt), and(eq(toolInvocations.createdAt, createdAt), gt(toolInvocations.id, id)));
}
