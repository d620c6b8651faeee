// The conventions every store follows are in stores.ts.

/**
 * docs/adr/0082: one MCP call suspended for a person's consent (suspended_kind 'authorization',
 * suspended_ref = id), as stored. The state is kept as its SHA-256 only; the flow the code
 * exchange needs (PKCE verifier, client registration, discovery) is sealed by the credential
 * broker before it gets here. `usedAt` makes the state single use.
 */
export interface McpPendingConsentRow {
  readonly id: string;
  readonly tenantId: string;
  readonly principalId: string;
  readonly runId: string;
  readonly invocationId: string;
  readonly serverId: string;
  /** SHA-256 of the state (32 bytes). */
  readonly stateHash: Uint8Array;
  readonly ciphertext: Uint8Array;
  readonly keyId: string;
  /** The authorization server the request was sent to (RFC 9207's expected `iss`). */
  readonly issuer: string;
  /** Carries the state: shown to whoever may read the run, never logged. */
  readonly authorizationUrl: string;
  readonly createdAt: Date;
  readonly expiresAt: Date;
  readonly usedAt: Date | null;
}

export type NewMcpPendingConsent = Omit<McpPendingConsentRow, 'tenantId' | 'usedAt'>;

/** What a run view shows about a consent it waits for: never the hash or the sealed flow. */
export type McpPendingConsentLink = Pick<
  McpPendingConsentRow,
  'id' | 'invocationId' | 'serverId' | 'principalId' | 'authorizationUrl' | 'expiresAt'
>;

export interface McpPendingConsentStore {
  insert(tenantId: string, consent: NewMcpPendingConsent): Promise<void>;
  get(tenantId: string, id: string): Promise<McpPendingConsentRow | null>;
  /**
   * The callback carries no API key, only the state: which tenant (and consent) a state's hash
   * belongs to, read across tenants by the maintenance role (identity columns only).
   */
  findByStateHash(stateHash: Uint8Array): Promise<{ readonly tenantId: string; readonly id: string } | null>;
  /** Single use: sets used_at where it is still null; false when it was already used (or is unknown). */
  markUsed(tenantId: string, id: string, at: Date): Promise<boolean>;
  /** The run's consents not yet used, oldest first (the run view's link). */
  listOpenForRun(tenantId: string, runId: string): Promise<McpPendingConsentLink[]>;
}
