import type {
  McpDelegatedGrantStore,
  McpDelegatedTokenStore,
  McpDelegatedTokens,
  McpGrantOwner,
  PutMcpDelegatedGrant,
} from '@veetbot/ports';
import { CredentialError } from './errors';
import type { SecretKeyring, SecretOwner } from './secret-crypto';

/** Bounds the sealed document (the table's check allows 64 KiB of plaintext). */
export const MCP_GRANT_MAX_PLAINTEXT_BYTES = 65_536;

interface Clock {
  now(): Date;
}

/**
 * docs/adr/0080: the name a grant is sealed under. A colon never appears in a tenant secret's
 * name (ADR 0017's grammar), so a tenant secret's ciphertext copied into a grant row (or the
 * other way) does not authenticate; the JSON array keeps (principal, server) unambiguous.
 */
const sealingOwner = (tenantId: string, principalId: string, serverId: string): SecretOwner => ({
  tenantId,
  name: `mcp-grant:${JSON.stringify([principalId, serverId])}`,
});

/** The sealed document's shape, version 1. */
interface SealedTokens {
  readonly v: 1;
  readonly access_token: string;
  readonly refresh_token: string | null;
  readonly token_type: string;
  readonly expires_at: string | null;
  readonly scope: string | null;
  readonly issuer: string;
}

const unreadable = () =>
  new CredentialError(
    'credential.secret_unreadable',
    null,
    'The stored MCP grant does not authenticate for this tenant, principal and server (moved, altered, or sealed by another key).',
  );

/** A grant needs a principal: until one is bound (McpGrantOwner.principalId null) nothing is kept. */
function principalOf(owner: McpGrantOwner): string | null {
  return owner.principalId === null || owner.principalId === '' ? null : owner.principalId;
}

/**
 * The platform's McpDelegatedTokenStore (ADR 0077's port): tokens per (tenant, principal,
 * server), sealed with the tenant secrets' keyring (AES-256-GCM, ADR 0017) before they reach
 * the store; the row holds the ciphertext, the key id, and the issuer and expiry in clear (not
 * secret). Nothing here logs, and no error carries a token.
 */
export class SealedMcpTokenStore implements McpDelegatedTokenStore {
  readonly #grants: McpDelegatedGrantStore;
  readonly #keyring: SecretKeyring;
  readonly #clock: Clock;

  constructor(grants: McpDelegatedGrantStore, keyring: SecretKeyring, clock: Clock = { now: () => new Date() }) {
    this.#grants = grants;
    this.#keyring = keyring;
    this.#clock = clock;
  }

  async load(owner: McpGrantOwner): Promise<McpDelegatedTokens | null> {
    const principalId = principalOf(owner);
    if (principalId === null) return null;
    const row = await this.#grants.get(owner.tenantId, principalId, owner.serverId);
    if (row === null) return null;
    const plain = this.#keyring.open(sealingOwner(owner.tenantId, principalId, owner.serverId), row);
    const tokens = parseSealed(plain);
    // The clear issuer column is not trusted on its own: it must be the one sealed with the tokens.
    if (tokens.issuer !== row.issuer) throw unreadable();
    return tokens;
  }

  async save(owner: McpGrantOwner, tokens: McpDelegatedTokens): Promise<void> {
    const principalId = principalOf(owner);
    if (principalId === null) return;
    const document: SealedTokens = {
      v: 1,
      access_token: tokens.accessToken,
      refresh_token: tokens.refreshToken,
      token_type: tokens.tokenType,
      expires_at: tokens.expiresAt === null ? null : tokens.expiresAt.toISOString(),
      scope: tokens.scope,
      issuer: tokens.issuer,
    };
    const plain = JSON.stringify(document);
    if (Buffer.byteLength(plain, 'utf8') > MCP_GRANT_MAX_PLAINTEXT_BYTES) {
      throw new CredentialError('credential.secret_unreadable', null, 'The MCP grant is larger than 64 KiB; it is not stored.');
    }
    const sealed = this.#keyring.seal(sealingOwner(owner.tenantId, principalId, owner.serverId), plain);
    const grant: PutMcpDelegatedGrant = {
      principalId,
      serverId: owner.serverId,
      ...sealed,
      issuer: tokens.issuer,
      expiresAt: tokens.expiresAt,
      at: this.#clock.now(),
    };
    await this.#grants.put(owner.tenantId, grant);
  }

  async revoke(owner: McpGrantOwner): Promise<void> {
    const principalId = principalOf(owner);
    if (principalId === null) return;
    await this.#grants.delete(owner.tenantId, principalId, owner.serverId);
  }
}

function parseSealed(plain: string): McpDelegatedTokens {
  let value: unknown;
  try {
    value = JSON.parse(plain);
  } catch {
    throw unreadable();
  }
  const d = value as Partial<SealedTokens> | null;
  const str = (v: unknown): v is string => typeof v === 'string';
  const strOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';
  if (
    d === null ||
    typeof d !== 'object' ||
    d.v !== 1 ||
    !str(d.access_token) ||
    !strOrNull(d.refresh_token) ||
    !str(d.token_type) ||
    !strOrNull(d.expires_at) ||
    !strOrNull(d.scope) ||
    !str(d.issuer)
  )
    throw unreadable();
  const expiresAt = d.expires_at === null ? null : new Date(d.expires_at);
  if (expiresAt !== null && Number.isNaN(expiresAt.getTime())) throw unreadable();
  return {
    accessToken: d.access_token,
    refreshToken: d.refresh_token,
    tokenType: d.token_type,
    expiresAt,
    scope: d.scope,
    issuer: d.issuer,
  };
}

/**
 * Key rotation for grants, as reencryptTenantSecrets does for secrets: every grant sealed with
 * another key is opened with a previous key of the ring and sealed again with the current one.
 */
export async function reencryptMcpDelegatedGrants(
  store: Pick<McpDelegatedGrantStore, 'listNotSealedWith' | 'get' | 'reseal'>,
  keyring: SecretKeyring,
): Promise<{
  readonly reencrypted: number;
  readonly skipped: number;
  readonly failed: readonly { readonly tenantId: string; readonly principalId: string; readonly serverId: string; readonly code: string }[];
}> {
  let reencrypted = 0;
  let skipped = 0;
  const failed: { tenantId: string; principalId: string; serverId: string; code: string }[] = [];
  for (const { tenantId, principalId, serverId, keyId } of await store.listNotSealedWith(keyring.current.id)) {
    const row = await store.get(tenantId, principalId, serverId);
    if (row === null || row.keyId !== keyId) {
      skipped += 1;
      continue;
    }
    const owner = sealingOwner(tenantId, principalId, serverId);
    let plain: string;
    try {
      plain = keyring.open(owner, row);
    } catch (error) {
      failed.push({
        tenantId,
        principalId,
        serverId,
        code: error instanceof CredentialError ? error.code : 'credential.secret_unreadable',
      });
      continue;
    }
    if (await store.reseal(tenantId, principalId, serverId, keyId, keyring.seal(owner, plain))) reencrypted += 1;
    else skipped += 1;
  }
  return { reencrypted, skipped, failed };
}
