import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  CredentialError,
  GENERATED_KEY_FILE,
  loadSecretKeyring,
  reencryptMcpDelegatedGrants,
  reencryptTenantSecrets,
} from '@veetbot/credential-broker';
import { createStores, migrate, openDatabase } from '@veetbot/store-postgres';

export const SECRETS_REENCRYPT_USAGE = `veetbot secrets reencrypt

Re-seal every tenant secret and every delegated MCP grant (ADR 0080) under the current key
(ADR 0017, key rotation). Reads the same
settings as the api and the worker: DATABASE_URL (else PGlite in $VEETBOT_DATA_DIR/pglite, with
the api stopped), VEETBOT_SECRETS_KEY or VEETBOT_SECRETS_KEY_FILE (else
$VEETBOT_DATA_DIR/secrets.key, which must exist), and VEETBOT_SECRETS_PREVIOUS_KEYS for the old
key(s). Prints counts and the tenant/name of any secret it cannot open; never a value.
Exit 0 when every secret is under the current key, 1 otherwise.
`;

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

export async function runSecretsReencrypt(env: Readonly<Record<string, string | undefined>>, cwd: string, io: Io): Promise<number> {
  const dataDir = resolve(cwd, env.VEETBOT_DATA_DIR?.trim() || '.veetbot');
  const named = Boolean(env.VEETBOT_SECRETS_KEY?.trim() || env.VEETBOT_SECRETS_KEY_FILE?.trim());
  // Never generate a key here: a fresh key cannot open anything, and would become the data folder's.
  if (!named && !existsSync(join(dataDir, GENERATED_KEY_FILE))) {
    throw new CredentialError(
      'credential.key_missing',
      null,
      `No secrets key: set VEETBOT_SECRETS_KEY or VEETBOT_SECRETS_KEY_FILE, or VEETBOT_DATA_DIR to the folder holding ${GENERATED_KEY_FILE}.`,
    );
  }
  const { keyring } = await loadSecretKeyring({ env, dataDir });
  const url = env.DATABASE_URL?.trim();
  const database = await openDatabase(url ? { url } : { dataDir: join(dataDir, 'pglite') });
  try {
    await migrate(database);
    const stores = createStores(database);
    const report = await reencryptTenantSecrets(stores.tenantSecrets, keyring);
    io.out(
      `re-encrypted ${report.reencrypted} secret(s) under key ${keyring.current.id}; ${report.skipped} changed meanwhile; ${report.failed.length} unreadable\n`,
    );
    for (const f of report.failed) io.err(`  ${f.tenantId}/${f.name}: sealed with key ${f.keyId}: ${f.code}\n`);
    // docs/adr/0080: delegated MCP grants are sealed with the same keyring.
    const grants = await reencryptMcpDelegatedGrants(stores.mcpDelegatedGrants, keyring);
    if (grants.reencrypted + grants.skipped + grants.failed.length > 0)
      io.out(`re-encrypted ${grants.reencrypted} MCP grant(s); ${grants.skipped} changed meanwhile; ${grants.failed.length} unreadable\n`);
    for (const f of grants.failed) io.err(`  ${f.tenantId}/mcp grant ${f.serverId}: ${f.code}\n`);
    return report.failed.length === 0 && grants.failed.length === 0 ? 0 : 1;
  } finally {
    await database.close();
  }
}
