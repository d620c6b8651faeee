import { check, foreignKey, index, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { bytea } from './secrets';
import { tenants, timestamptz } from './tenants';
import { toolInvocations } from './tool-invocations';

/**
 * docs/adr/0082: one call suspended for a person's consent (suspended_kind 'authorization',
 * suspended_ref = id). The state is kept as its SHA-256 only, and the flow the code exchange
 * needs (PKCE verifier, client registration, discovery) is sealed by the credential broker
 * (`nonce ‖ tag ‖ AES-256-GCM ciphertext`, bound to tenant, principal, server and id); no
 * column ever holds a state, a verifier or a token. used_at makes the state single use.
 */
export const mcpPendingConsents = pgTable(
  'mcp_pending_consents',
  {
    id: uuid('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    principalId: text('principal_id').notNull(),
    runId: uuid('run_id').notNull(),
    invocationId: uuid('invocation_id').notNull(),
    serverId: text('server_id').notNull(),
    stateHash: bytea('state_hash').notNull(),
    ciphertext: bytea('ciphertext').notNull(),
    keyId: text('key_id').notNull(),
    issuer: text('issuer').notNull(),
    authorizationUrl: text('authorization_url').notNull(),
    createdAt: timestamptz('created_at').notNull(),
    expiresAt: timestamptz('expires_at').notNull(),
    usedAt: timestamptz('used_at'),
  },
  (t) => [
    unique('mcp_pending_consents_state_hash_unique').on(t.stateHash),
    // The run view's link: a run's consents still open.
    index('mcp_pending_consents_open_idx').on(t.tenantId, t.runId).where(sql`${t.usedAt} IS NULL`),
    foreignKey({
      name: 'mcp_pending_consents_invocation_fk',
      columns: [t.tenantId, t.invocationId],
      foreignColumns: [toolInvocations.tenantId, toolInvocations.id],
    }),
    check('mcp_pending_consents_principal_check', sql`char_length(${t.principalId}) between 1 and 256`),
    check('mcp_pending_consents_server_id_check', sql`${t.serverId} ~ '^[a-z][a-z0-9_]{0,31}$'`),
    check('mcp_pending_consents_state_hash_check', sql`octet_length(${t.stateHash}) = 32`),
    check('mcp_pending_consents_issuer_check', sql`char_length(${t.issuer}) between 1 and 2048`),
    check(
      'mcp_pending_consents_authorization_url_check',
      sql`char_length(${t.authorizationUrl}) between 1 and 8192 and ${t.authorizationUrl} ~ '^https?://'`,
    ),
    // nonce (12) + tag (16) + at most 64 KiB of flow state.
    check('mcp_pending_consents_ciphertext_check', sql`octet_length(${t.ciphertext}) between 28 and 65564`),
    check('mcp_pending_consents_expiry_check', sql`${t.expiresAt} > ${t.createdAt}`),
  ],
);
