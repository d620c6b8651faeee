import type { Stores } from '@veetbot/ports';
import { hashApiKey } from './api-keys';
import { provisionTenantKey } from './provision';
import { StartupError } from './startup-error';

export const DEMO_TENANT_ID = 'demo';
export const DEMO_PRINCIPAL_ID = 'demo-admin';
/**
 * Every scope the builtins ask for (skill.write is skill.manage's; sandbox.run is the sandbox
 * tools', docs/adr/0037 and 0039), the two decision scopes, the user's answer scope (docs/adr/0051), and
 * the configuration scopes (ADR 0017, docs/adr/0036) the README walkthrough uses: adding MCP
 * servers, the secrets they reference, and operator skills.
 */
export const DEMO_SCOPES = [
  'approvals.decide',
  'review.resolve',
  // docs/adr/0051: the demo key plays the user too, and answers the agent's questions.
  'questions.answer',
  'workspace.read',
  'workspace.write',
  'demo.write',
  'skill.write',
  'sandbox.run',
  'mcp.*',
  'mcp.servers.write',
  'secrets.read',
  'secrets.write',
  'skills.read',
  'skills.write',
] as const;

export type DemoKey =
  /** Created now: the key, to print this once. */
  | { readonly kind: 'created'; readonly key: string }
  /** The tenant existed already; its generated key was printed when it was created. */
  | { readonly kind: 'existing' }
  /** VEETBOT_DEMO_API_KEY names the key: ensured to exist (created if new). */
  | { readonly kind: 'fixed'; readonly key: string; readonly created: boolean };

/** The demo tenant and its key, created once (idempotent across restarts on the same data). */
export async function ensureDemoTenant(stores: Pick<Stores, 'tenants' | 'apiKeys'>, fixedKey: string | null, now: Date): Promise<DemoKey> {
  const exists = (await stores.tenants.get(DEMO_TENANT_ID)) !== null;
  const provision = (key?: string) =>
    provisionTenantKey(stores, {
      tenantId: DEMO_TENANT_ID,
      tenantName: 'Demo tenant',
      principalId: DEMO_PRINCIPAL_ID,
      scopes: DEMO_SCOPES,
      now,
      ...(key === undefined ? {} : { key }),
    });
  if (fixedKey !== null) {
    const known = await stores.apiKeys.findByHash(hashApiKey(fixedKey));
    if (known !== null && known.tenantId === DEMO_TENANT_ID && known.revokedAt === null)
      return { kind: 'fixed', key: fixedKey, created: false };
    if (known !== null)
      throw new StartupError('startup.config_invalid', 'VEETBOT_DEMO_API_KEY names a revoked key or a key of another tenant');
    await provision(fixedKey);
    return { kind: 'fixed', key: fixedKey, created: true };
  }
  if (exists) return { kind: 'existing' };
  return { kind: 'created', key: (await provision()).key };
}
