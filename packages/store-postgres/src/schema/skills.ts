import type { TrustLevel } from '@veetbot/domain';
import { jsonb, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core';
import { tenants, timestamptz } from './tenants';

/** RULINGS.md "Skills": name, version, description, required_tools and content, with a trust label. */
export const skills = pgTable(
  'skills',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    name: text('name').notNull(),
    version: text('version').notNull(),
    description: text('description').notNull(),
    requiredTools: jsonb('required_tools').$type<string[]>().notNull(),
    content: text('content').notNull(),
    trust: text('trust').$type<TrustLevel>().notNull(),
    source: text('source').notNull(),
    createdAt: timestamptz('created_at').notNull(),
  },
  (t) => [unique('skills_tenant_id_name_version_unique').on(t.tenantId, t.name, t.version)],
);
