// The conventions every store follows are in stores.ts.

/**
 * docs/adr/0080: one person's delegated grant to one MCP server (issue 28 item 4), as stored.
 * The tokens are sealed (AES-256-GCM, the tenant secrets' keyring, ADR 0017) before they reach
 * the store: `ciphertext` is `nonce ‖ tag ‖ ciphertext`, bound to (tenant, principal, server,
 * key). The store holds bytes it cannot read; `issuer` and `expiresAt` are not secret and are
 * kept in clear so a list can show them without opening anything.
 */
export interface McpDelegatedGrantRow {
  readonly tenantId: string;
  readonly principalId: string;
  readonly serverId: string;
  readonly ciphertext: Uint8Array;
  readonly keyId: string;
  readonly issuer: string;
  /** The access token's expiry; null when the server gave no expires_in. */
  readonly expiresAt: Date | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** What a principal may read back about its grants: never a token, never the ciphertext. */
export type McpDelegatedGrantSummary = Pick<McpDelegatedGrantRow, 'serverId' | 'issuer' | 'expiresAt' | 'createdAt' | 'updatedAt'>;

export interface PutMcpDelegatedGrant {
  readonly principalId: string;
  readonly serverId: string;
  readonly ciphertext: Uint8Array;
  readonly keyId: string;
  readonly issuer: string;
  readonly expiresAt: Date | null;
  readonly at: Date;
}

export interface McpDelegatedGrantStore {
  /** Insert, or replace the sealed tokens (a refresh rotates; updated_at = at). */
  put(tenantId: string, grant: PutMcpDelegatedGrant): Promise<void>;
  /** The sealed row, for the token store only (never for an API response). */
  get(tenantId: string, principalId: string, serverId: string): Promise<McpDelegatedGrantRow | null>;
  /** One principal's grants, ordered by server id. */
  list(tenantId: string, principalId: string): Promise<McpDelegatedGrantSummary[]>;
  /** True when a row was deleted (revocation). */
  delete(tenantId: string, principalId: string, serverId: string): Promise<boolean>;
  /** Key rotation (maintenance, across tenants): identity columns of rows sealed with another key. */
  listNotSealedWith(
    keyId: string,
  ): Promise<{ readonly tenantId: string; readonly principalId: string; readonly serverId: string; readonly keyId: string }[]>;
  /** Replace the sealed bytes only if still sealed with `fromKeyId` (a concurrent save wins). */
  reseal(
    tenantId: string,
    principalId: string,
    serverId: string,
    fromKeyId: string,
    sealed: { readonly ciphertext: Uint8Array; readonly keyId: string },
  ): Promise<boolean>;
}
