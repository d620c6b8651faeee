import type { TenantSecretStore } from '@veetbot/ports';
import { CredentialError } from './errors';
import type { SecretKeyring } from './secret-crypto';

export interface ReencryptReport {
  /** Secrets now sealed with the current key. */
  readonly reencrypted: number;
  /** Replaced by a PUT meanwhile (already current): nothing to do. */
  readonly skipped: number;
  /** Secrets this keyring cannot open (their key is not held, or they do not authenticate). */
  readonly failed: readonly { readonly tenantId: string; readonly name: string; readonly keyId: string; readonly code: string }[];
}

/**
 * ADR 0017, key rotation without a PUT per secret: every secret sealed with a key other than the
 * current one is opened (with a previous key of the ring) and sealed again with the current
 * key, inside its own tenant. The listing is a maintenance read of identity columns only; each
 * secret is read and written as its tenant. A secret replaced concurrently is left alone.
 * The value never leaves this function.
 */
export async function reencryptTenantSecrets(
  store: Pick<TenantSecretStore, 'listNotSealedWith' | 'get' | 'reseal'>,
  keyring: SecretKeyring,
): Promise<ReencryptReport> {
  let reencrypted = 0;
  let skipped = 0;
  const failed: { tenantId: string; name: string; keyId: string; code: string }[] = [];
  for (const { tenantId, name, keyId } of await store.listNotSealedWith(keyring.current.id)) {
    const row = await store.get(tenantId, name);
    if (row === null || row.keyId !== keyId) {
      skipped += 1;
      continue;
    }
    let value: string;
    try {
      value = keyring.open({ tenantId, name }, row);
    } catch (error) {
      failed.push({ tenantId, name, keyId, code: error instanceof CredentialError ? error.code : 'credential.secret_unreadable' });
      continue;
    }
    if (await store.reseal(tenantId, name, keyId, keyring.seal({ tenantId, name }, value))) reencrypted += 1;
    else skipped += 1;
  }
  return { reencrypted, skipped, failed };
}
