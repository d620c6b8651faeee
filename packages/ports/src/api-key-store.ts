// The conventions every store follows are in stores.ts.

export interface ApiKeyRow {
  readonly id: string;
  readonly tenantId: string;
  /** sha256 of the key; the key itself is never stored. */
  readonly keyHash: string;
  /** The first characters of the key, to recognise it in a list. */
  readonly prefix: string;
  readonly principalId: string;
  readonly scopes: string[];
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
}

export type NewApiKey = Omit<ApiKeyRow, 'id' | 'tenantId' | 'revokedAt'> & { readonly id?: string };

export interface ApiKeyStore {
  create(tenantId: string, key: NewApiKey): Promise<ApiKeyRow>;
  /** Authentication happens before the tenant is known: this lookup runs across tenants. Revoked keys are returned too; the caller checks revokedAt. */
  findByHash(keyHash: string): Promise<ApiKeyRow | null>;
  revoke(tenantId: string, keyId: string, at: Date): Promise<ApiKeyRow>;
}
