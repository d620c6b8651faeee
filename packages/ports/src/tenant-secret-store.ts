// The conventions every store follows are in stores.ts.

/**
 * A tenant's secret (ADR 0017): sealed with AES-256-GCM before it reaches the store, so the
 * store holds bytes it cannot read. `ciphertext` is `nonce ‖ tag ‖ ciphertext`; `keyId` names
 * the key that sealed it (rotation).
 */
export interface TenantSecretRow {
  readonly tenantId: string;
  readonly name: string;
  readonly ciphertext: Uint8Array;
  readonly keyId: string;
  readonly createdAt: Date;
  /** The last time the value was replaced; null until then. */
  readonly rotatedAt: Date | null;
}

/** What a tenant may read back about its secrets: never the value, never the ciphertext. */
export type TenantSecretSummary = Pick<TenantSecretRow, 'name' | 'createdAt' | 'rotatedAt'>;

export interface PutTenantSecret {
  readonly name: string;
  readonly ciphertext: Uint8Array;
  readonly keyId: string;
  readonly at: Date;
}

export interface TenantSecretStore {
  /** Insert, or replace the value (rotated_at = at). `created` says which. */
  put(tenantId: string, secret: PutTenantSecret): Promise<{ readonly created: boolean; readonly secret: TenantSecretSummary }>;
  /** The sealed row, for the broker only (never for an API response). */
  get(tenantId: string, name: string): Promise<TenantSecretRow | null>;
  has(tenantId: string, name: string): Promise<boolean>;
  /** Ordered by name. */
  list(tenantId: string): Promise<TenantSecretSummary[]>;
  /** True when a row was deleted. */
  delete(tenantId: string, name: string): Promise<boolean>;
  /**
   * Key rotation (maintenance, across tenants): which secrets are sealed with a key other than
   * `keyId`. Identity columns only, never the ciphertext.
   */
  listNotSealedWith(keyId: string): Promise<{ readonly tenantId: string; readonly name: string; readonly keyId: string }[]>;
  /**
   * Replace the sealed bytes of one secret, only if it is still sealed with `fromKeyId` (a
   * concurrent PUT wins); rotated_at is not changed (the value is the same). True when replaced.
   */
  reseal(
    tenantId: string,
    name: string,
    fromKeyId: string,
    sealed: { readonly ciphertext: Uint8Array; readonly keyId: string },
  ): Promise<boolean>;
}
