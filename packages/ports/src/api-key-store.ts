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

/**
 * What an api process hears about changes to api_keys (docs/adr/0075): the database notifies
 * every update and delete of a key's row (revocation among them) in the transaction that makes
 * it, and the process's one listening connection delivers it. An api's key cache serves only
 * while `listening` is true: a change made while nobody listens is never heard.
 */
export interface ApiKeyChangeWatcher {
  /** The row of key `keyId` changed or went away; null: any key may have (clear everything). */
  changed(keyId: string | null): void;
  /** Whether changes are being heard from now on; false: one may be missed (the listener dropped). */
  listening(up: boolean): void;
}

export interface ApiKeyChangeFeed {
  /** True while the listening connection is up with LISTEN in effect. */
  readonly listening: boolean;
  /** Start hearing changes; returns the function that stops it. */
  watch(watcher: ApiKeyChangeWatcher): () => void;
}
