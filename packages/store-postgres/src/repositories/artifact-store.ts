import type { ArtifactRow, ArtifactStore, NewArtifact } from '@veetbot/ports';
import { asc, eq } from 'drizzle-orm';
import type { Database } from '../database';
import { artifacts } from '../schema';
import { notFound } from './not-found';

export class PostgresArtifactStore implements ArtifactStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  insert(tenantId: string, artifact: NewArtifact): Promise<ArtifactRow> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx
        .insert(artifacts)
        .values({ ...artifact, tenantId })
        .returning();
      if (!row) throw notFound('The artifact');
      return row;
    });
  }

  get(tenantId: string, artifactId: string): Promise<ArtifactRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx.select().from(artifacts).where(eq(artifacts.id, artifactId));
      return row ?? null;
    });
  }

  listForRun(tenantId: string, runId: string): Promise<ArtifactRow[]> {
    return this.#db.tenant(tenantId, (tx) =>
      tx.select().from(artifacts).where(eq(artifacts.runId, runId)).orderBy(asc(artifacts.createdAt), asc(artifacts.id)),
    );
  }
}
