import { check, customType, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { tenants, timestamptz } from './tenants';

/** bytea as Uint8Array on both drivers (node-postgres gives a Buffer, PGlite a Uint8Array). */
export const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (value) => new Uint8Array(value),
  toDriver: (value) => Buffer.from(value),
});

/**
 * A tenant's secrets (ADR 0017), sealed by the credential broker before they get here:
 * `ciphertext` is `nonce ‖ tag ‖ AES-256-GCM ciphertext`, bound to (tenant_id, name, key_id);
 * `key_id` names the key that sealed it. No column ever holds the value.
 */
export const tenantSecrets = pgTable(
  'tenant_secrets',
  {
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    name: text('name').notNull(),
    ciphertext: bytea('ciphertext').notNull(),
    keyId: text('key_id').notNull(),
    createdAt: timestamptz('created_at').notNull(),
    rotatedAt: timestamptz('rotated_at'),
  },
  (t) => [
    primaryKey({ name: 'tenant_secrets_pkey', columns: [t.tenantId, t.name] }),
    check('tenant_secrets_name_check', sql`${t.name} ~ '^[A-Za-z][A-Za-z0-9_.-]{0,63}$'`),
    // nonce (12) + tag (16) + at most 16 KiB of value.
    check('tenant_secrets_ciphertext_check', sql`octet_length(${t.ciphertext}) between 28 and 16412`),
  ],
);
