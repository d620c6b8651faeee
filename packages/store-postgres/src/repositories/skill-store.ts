import type { NewSkill, SkillRow, SkillStore } from '@veetbot/ports';
import { and, asc, desc, eq } from 'drizzle-orm';
import type { Database } from '../database';
import { skills } from '../schema';
import { notFound } from './not-found';

export class PostgresSkillStore implements SkillStore {
  readonly #db: Database;
  constructor(db: Database) {
    this.#db = db;
  }

  create(tenantId: string, skill: NewSkill): Promise<SkillRow> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx
        .insert(skills)
        .values({ ...skill, tenantId, requiredTools: [...skill.requiredTools] })
        .returning();
      if (!row) throw notFound('The skill');
      return row;
    });
  }

  get(tenantId: string, name: string, version?: string): Promise<SkillRow | null> {
    return this.#db.tenant(tenantId, async (tx) => {
      const [row] = await tx
        .select()
        .from(skills)
        .where(version === undefined ? eq(skills.name, name) : and(eq(skills.name, name), eq(skills.version, version)))
        .orderBy(desc(skills.createdAt), desc(skills.version))
        .limit(1);
      return row ?? null;
    });
  }

  list(tenantId: string): Promise<SkillRow[]> {
    return this.#db.tenant(tenantId, (tx) => tx.select().from(skills).orderBy(asc(skills.name), asc(skills.createdAt)));
  }

  delete(tenantId: string, name: string): Promise<number> {
    return this.#db.tenant(tenantId, async (tx) => {
      const deleted = await tx.delete(skills).where(eq(skills.name, name)).returning({ id: skills.id });
      return deleted.length;
    });
  }
}
