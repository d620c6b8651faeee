import type { NewSession, SessionLifecycle, SessionRef, SessionRow, SessionStatus, SessionStore } from '@veetbot/ports';
import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../database';
import { sessions } from '../schema';
import { notFound } from './not-found';

export class PostgresSessionStore implements SessionStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  create(tenantId: string, session: NewSession): Promise<SessionRow> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx
        .insert(sessions)
        .values({
          ...session,
          tenantId,
          toolNames: [...session.toolNames],
          specs: [...session.specs],
          deferredToolNames: [...(session.deferredToolNames ?? [])],
        })
        .returning();
      if (!row) throw notFound('The session');
      return row;
    });
  }

  get(tenantId: string, sessionId: string): Promise<SessionRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx.select().from(sessions).where(eq(sessions.id, sessionId));
      return row ?? null;
    });
  }

  close(tenantId: string, sessionId: string, at: Date): Promise<SessionRow> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [closed] = await tx
        .update(sessions)
        .set({ status: 'closed', closedAt: at })
        .where(and(eq(sessions.id, sessionId), eq(sessions.status, 'open')))
        .returning();
      if (closed) return closed;
      const [existing] = await tx.select().from(sessions).where(eq(sessions.id, sessionId));
      if (!existing) throw notFound('The session');
      return existing;
    });
  }

  /**
   * One statement as veetbot_maintenance (grants in migrations/0015_mcp_session_lifecycle.sql): each session's status and its runs,
   * counted — all of them, and those still at work (running, no call waiting for an approval,
   * no suspended call). Refs that cannot name a session (not a uuid) are answered absent
   * without asking; a long list is read in chunks of LIFECYCLE_CHUNK.
   */
  async lifecycle(refs: readonly SessionRef[]): Promise<SessionLifecycle[]> {
    const wanted = refs.filter((r) => UUID.test(r.sessionId) && r.tenantId.length > 0);
    const answer: SessionLifecycle[] = [];
    for (let start = 0; start < wanted.length; start += LIFECYCLE_CHUNK) {
      const chunk = wanted.slice(start, start + LIFECYCLE_CHUNK);
      const pairs = sql.join(
        chunk.map((r) => sql`(${r.tenantId}::text, ${r.sessionId}::uuid)`),
        sql`, `,
      );
      const rows: { rows: unknown[] } = await this.#db.transaction(
        { role: 'maintenance' },
        (tx) =>
          tx.execute(sql`
          SELECT s.tenant_id, s.id::text AS id, s.status,
            count(r.id)::int AS runs,
            (count(r.id) FILTER (
              WHERE r.status = 'running' AND NOT EXISTS (
                SELECT 1 FROM tool_invocations i
                WHERE i.tenant_id = r.tenant_id AND i.run_id = r.id
                  AND (i.status = 'waiting_for_approval' OR (i.status = 'running' AND i.suspended_kind IS NOT NULL))
              )
            ))::int AS working_runs
          FROM sessions s
          LEFT JOIN runs r ON r.tenant_id = s.tenant_id AND r.session_id = s.id
          WHERE (s.tenant_id, s.id) IN (${pairs})
          GROUP BY s.tenant_id, s.id, s.status`) as Promise<{ rows: unknown[] }>,
      );
      for (const row of rows.rows as { tenant_id: string; id: string; status: SessionStatus; runs: number; working_runs: number }[]) {
        answer.push({
          tenantId: row.tenant_id,
          sessionId: row.id,
          status: row.status,
          runs: Number(row.runs),
          workingRuns: Number(row.working_runs),
        });
      }
    }
    return answer;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LIFECYCLE_CHUNK = 1000;
