import type { NewSession, SessionRow, SessionStore } from '@veetbot/ports';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../database';
import { sessions } from '../schema';
import { notFound } from './fence';

export class PostgresSessionStore implements SessionStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  create(tenantId: string, session: NewSession): Promise<SessionRow> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx
        .insert(sessions)
        .values({ ...session, tenantId, toolNames: [...session.toolNames], specs: [...session.specs] })
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
}
