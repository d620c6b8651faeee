import type { Stores } from '@veetbot/ports';
import { apiKeyPrefix, generateApiKey, hashApiKey } from './api-keys';

export interface ProvisionedKey {
  /** The key itself: shown once, never stored. */
  readonly key: string;
  readonly keyId: string;
}

/**
 * Operator tooling: a tenant (idempotent) and one API key for a principal with these scopes.
 * The key is stored as its sha256; `key` may fix it (VEETBOT_DEMO_API_KEY), else it is random.
 */
export async function provisionTenantKey(
  stores: Pick<Stores, 'tenants' | 'apiKeys'>,
  options: { tenantId: string; tenantName: string; principalId: string; scopes: readonly string[]; key?: string; now: Date },
): Promise<ProvisionedKey> {
  await stores.tenants.create({ id: options.tenantId, name: options.tenantName, createdAt: options.now });
  const key = options.key ?? generateApiKey();
  const row = await stores.apiKeys.create(options.tenantId, {
    keyHash: hashApiKey(key),
    prefix: apiKeyPrefix(key),
    principalId: options.principalId,
    scopes: [...options.scopes],
    createdAt: options.now,
  });
  return { key, keyId: row.id };
}
