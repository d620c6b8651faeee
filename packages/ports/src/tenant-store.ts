// Tenants (operator surface).
// The conventions every store follows are in stores.ts.

export interface TenantRow {
  readonly id: string;
  readonly name: string;
  readonly createdAt: Date;
}

/** Operator surface: tenants are created by the platform, not by a tenant. */
export interface TenantStore {
  /** Idempotent on id. */
  create(tenant: TenantRow): Promise<TenantRow>;
  /** Read as the tenant itself: a tenant sees only its own row. */
  get(tenantId: string): Promise<TenantRow | null>;
}
