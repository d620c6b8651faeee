import type { SessionStatus } from '@veetbot/ports';
import type { ToolSpec } from '@veetbot/domain';
import { sql } from 'drizzle-orm';
import { check, jsonb, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core';
import { SESSION_STATUSES } from '../vocabulary';
import { oneOf } from './checks';
import { tenants, timestamptz } from './tenants';

/** A session's pinned plan: tool_names, specs and tool_schema_sha256 (§ Resolution). */
export const sessions = pgTable(
  'sessions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    principalId: text('principal_id').notNull(),
    agentId: text('agent_id').notNull(),
    toolNames: jsonb('tool_names').$type<string[]>().notNull(),
    specs: jsonb('specs').$type<ToolSpec[]>().notNull(),
    toolSchemaSha256: text('tool_schema_sha256').notNull(),
    // § Control tools, tool.call: pinned tools advertised by a one-line entry of the deferred
    // tool index rather than their definition (docs/adr/0034). Always a subset of tool_names.
    deferredToolNames: jsonb('deferred_tool_names').$type<string[]>().notNull().default(sql`'[]'::jsonb`),
    status: text('status').$type<SessionStatus>().notNull().default('open'),
    createdAt: timestamptz('created_at').notNull(),
    closedAt: timestamptz('closed_at'),
  },
  // (tenant_id, id) is the target of the composite foreign keys that keep a child row from
  // pointing at another tenant's session.
  (t) => [unique('sessions_tenant_id_id_unique').on(t.tenantId, t.id), check('sessions_status_check', oneOf(t.status, SESSION_STATUSES))],
);
