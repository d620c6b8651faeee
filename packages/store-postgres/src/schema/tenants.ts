import { jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * The tenants themselves. Not a tenant-owned table: rows are created by the platform (the
 * connecting role), and a tenant transaction sees only its own row (see the RLS migration).
 */
export const tenants = pgTable('tenants', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  createdAt: timestamptz('created_at').notNull(),
});

/** API keys, hashed (ARCHITECTURE.md "Data"). The key itself is never stored. */
export const apiKeys = pgTable('api_keys', {
  id: uuid('id').primaryKey().defaultRandom(),
  tenantId: text('tenant_id')
    .notNull()
    .references(() => tenants.id),
  keyHash: text('key_hash').notNull().unique('api_keys_key_hash_unique'),
  prefix: text('prefix').notNull(),
  principalId: text('principal_id').notNull(),
  scopes: jsonb('scopes').$type<string[]>().notNull(),
  createdAt: timestamptz('created_at').notNull(),
  revokedAt: timestamptz('revoked_at'),
});

export { timestamptz };
