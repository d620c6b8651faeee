import { check, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { bytea } from './secrets';
import { tenants, timestamptz } from './tenants';

/**
 * docs/adr/0080: one principal's delegated grant to one MCP server (issue 28 item 4). The tokens
 * are sealed by the credential broker before they get here (`nonce ‖ tag ‖ AES-256-GCM
 * ciphertext`, bound to tenant, principal, server and key_id); no column ever holds a token.
 * issuer and expires_at are not secret: a list shows them without opening anything.
 */
export const mcpDelegatedGrants = pgTable(
  'mcp_delegated_grants',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    principalId: text('principal_id').notNull(),
    serverId: text('server_id').notNull(),
    ciphertext: bytea('ciphertext').notNull(),
    keyId: text('key_id').notNull(),
    issuer: text('issuer').notNull(),
    expiresAt: timestamptz('expires_at'),
    createdAt: timestamptz('created_at').notNull(),
    updatedAt: timestamptz('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ name: 'mcp_delegated_grants_pkey', columns: [t.tenantId, t.principalId, t.serverId] }),
    check('mcp_delegated_grants_principal_check', sql`char_length(${t.principalId}) between 1 and 256`),
    check('mcp_delegated_grants_server_id_check', sql`${t.serverId} ~ '^[a-z][a-z0-9_]{0,31}$'`),
    check('mcp_delegated_grants_issuer_check', sql`char_length(${t.issuer}) between 1 and 2048`),
    // nonce (12) + tag (16) + at most 64 KiB of tokens (a JWT access token and a refresh token).
    check('mcp_delegated_grants_ciphertext_check', sql`octet_length(${t.ciphertext}) between 28 and 65564`),
  ],
);
