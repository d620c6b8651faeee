import { z } from 'zod';

/**
 * The operator's per-tenant concurrency quota on the step queue (docs/adr/0070): how many of a
 * tenant's steps may run at once across every worker on the database. `default` applies to
 * every tenant not named in `tenants`; null: no quota (the claim is still fair across tenants).
 * A tenant at its quota is not claimed until one of its running steps ends.
 */
export const TenantStepQuotas = z
  .object({
    default: z.number().int().positive().max(1_000_000).nullable(),
    tenants: z.record(z.string().min(1).max(200), z.number().int().positive().max(1_000_000)),
  })
  .strict();
export type TenantStepQuotas = z.infer<typeof TenantStepQuotas>;

/** No quota for anyone: the claim only orders tenants fairly. */
export const NO_TENANT_STEP_QUOTAS: TenantStepQuotas = Object.freeze({ default: null, tenants: Object.freeze({}) });

/** The quota of one tenant, or null when it has none. */
export function tenantStepQuota(quotas: TenantStepQuotas, tenantId: string): number | null {
  return Object.hasOwn(quotas.tenants, tenantId) ? (quotas.tenants[tenantId] ?? null) : quotas.default;
}
