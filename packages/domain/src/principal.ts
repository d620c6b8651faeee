import { z } from 'zod';

/** Who is acting: a tenant's principal with its scopes. */
export const Principal = z
  .object({
    tenant_id: z.string().min(1),
    principal_id: z.string().min(1),
    scopes: z.array(z.string().min(1)),
  })
  .strict();
export type Principal = z.infer<typeof Principal>;

/**
 * Scope matching: exact, or a trailing `.*` wildcard held by the principal covering any
 * deeper scope (`mcp.acme.*` covers `mcp.acme.use`).
 */
export function hasScope(principal: Pick<Principal, 'scopes'>, required: string): boolean {
  for (const held of principal.scopes) {
    if (held === required) return true;
    if (held.endsWith('.*') && required.startsWith(held.slice(0, -1))) return true;
  }
  return false;
}

/** The required scopes the principal lacks, in order. */
export function missingScopes(principal: Pick<Principal, 'scopes'>, required: readonly string[]): string[] {
  return required.filter((scope) => !hasScope(principal, scope));
}
