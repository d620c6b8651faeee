import { VeetbotError } from '@veetbot/domain';
import type { ApiKeyRow, Stores } from '@veetbot/ports';
import { apiKeyPrefix, generateApiKey, hashApiKey } from './api-keys';

export interface ProvisionedKey {
  /** The key itself: shown once, never stored. */
  readonly key: string;
  readonly keyId: string;
}

/** A tenant id and a principal id as operator tooling accepts them: short, printable, no spaces. */
export const IDENTIFIER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
/** A scope: dotted words, optionally ending in `.*` (domain's hasScope matches that wildcard). */
export const SCOPE_PATTERN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*(\.\*)?$/;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Operator tooling refused its input (the CLI prints it as `error <code>: <message>`). */
export class ProvisionError extends Error {
  readonly code: 'provision.invalid' | 'provision.tenant_unknown' | 'provision.key_unknown';
  constructor(code: ProvisionError['code'], message: string) {
    super(message);
    this.name = 'ProvisionError';
    this.code = code;
  }
}

/** A tenant (idempotent on its id: a second create keeps the first row). */
export async function createTenant(
  stores: Pick<Stores, 'tenants'>,
  options: { tenantId: string; tenantName?: string; now: Date },
): Promise<{ readonly created: boolean }> {
  if (!IDENTIFIER_PATTERN.test(options.tenantId))
    throw new ProvisionError('provision.invalid', 'A tenant id is 1 to 63 of A-Z a-z 0-9 . _ -, starting with a letter or digit.');
  const existed = (await stores.tenants.get(options.tenantId)) !== null;
  await stores.tenants.create({ id: options.tenantId, name: options.tenantName ?? options.tenantId, createdAt: options.now });
  return { created: !existed };
}

/**
 * One API key of an existing tenant, for a principal with exactly these scopes. The key is
 * stored as its sha256 (the key itself never reaches the database); `key` may fix it
 * (VEETBOT_DEMO_API_KEY), else it is random.
 */
export async function createApiKey(
  stores: Pick<Stores, 'tenants' | 'apiKeys'>,
  options: { tenantId: string; principalId: string; scopes: readonly string[]; key?: string; now: Date },
): Promise<ProvisionedKey> {
  if (!IDENTIFIER_PATTERN.test(options.principalId))
    throw new ProvisionError('provision.invalid', 'A principal id is 1 to 63 of A-Z a-z 0-9 . _ -, starting with a letter or digit.');
  const bad = options.scopes.find((s) => !SCOPE_PATTERN.test(s));
  if (bad !== undefined)
    throw new ProvisionError('provision.invalid', `${JSON.stringify(bad)} is not a scope (dotted words, optionally ending in .*).`);
  if ((await stores.tenants.get(options.tenantId)) === null)
    throw new ProvisionError(
      'provision.tenant_unknown',
      `There is no tenant ${JSON.stringify(options.tenantId)} (veetbot tenant create ${options.tenantId}).`,
    );
  const key = options.key ?? generateApiKey();
  const row = await stores.apiKeys.create(options.tenantId, {
    keyHash: hashApiKey(key),
    prefix: apiKeyPrefix(key),
    principalId: options.principalId,
    scopes: [...new Set(options.scopes)],
    createdAt: options.now,
  });
  return { key, keyId: row.id };
}

/** A tenant (idempotent) and one API key for a principal with these scopes. */
export async function provisionTenantKey(
  stores: Pick<Stores, 'tenants' | 'apiKeys'>,
  options: { tenantId: string; tenantName: string; principalId: string; scopes: readonly string[]; key?: string; now: Date },
): Promise<ProvisionedKey> {
  await createTenant(stores, { tenantId: options.tenantId, tenantName: options.tenantName, now: options.now });
  return createApiKey(stores, options);
}

/**
 * Revoke a key, named by the key itself (its hash is looked up) or by its id within a tenant.
 * Idempotent: revoking a revoked key keeps the first revocation time.
 */
export async function revokeApiKey(
  stores: Pick<Stores, 'apiKeys'>,
  target: { readonly key: string } | { readonly tenantId: string; readonly keyId: string },
  now: Date,
): Promise<ApiKeyRow> {
  if ('key' in target) {
    const row = await stores.apiKeys.findByHash(hashApiKey(target.key));
    if (row === null) throw new ProvisionError('provision.key_unknown', 'No key with that value exists.');
    return row.revokedAt === null ? stores.apiKeys.revoke(row.tenantId, row.id, now) : row;
  }
  const unknown = () =>
    new ProvisionError('provision.key_unknown', `Tenant ${JSON.stringify(target.tenantId)} has no key ${JSON.stringify(target.keyId)}.`);
  if (!UUID.test(target.keyId)) throw unknown();
  try {
    return await stores.apiKeys.revoke(target.tenantId, target.keyId, now);
  } catch (cause) {
    if (VeetbotError.isInstance(cause) && cause.code === 'store.not_found') throw unknown();
    throw cause;
  }
}
