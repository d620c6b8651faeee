import { NO_TENANT_STEP_QUOTAS, TenantStepQuotas } from '@veetbot/domain';
import { StartupError } from './startup-error';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * docs/adr/0070: the operator's per-tenant concurrency quota on the step queue, from
 * VEETBOT_TENANT_STEP_QUOTA (every tenant's: steps running at once across all workers) and
 * VEETBOT_TENANT_STEP_QUOTAS (a JSON object of tenant id to quota, overriding it). Neither set:
 * no quota (the claim is still fair across tenants). Every worker of a deployment should be
 * given the same values: each enforces the ones it was started with.
 */
export function readStepQuotas(env: Env): TenantStepQuotas {
  const fallback = env.VEETBOT_TENANT_STEP_QUOTA?.trim();
  const named = env.VEETBOT_TENANT_STEP_QUOTAS?.trim();
  if ((fallback === undefined || fallback === '') && (named === undefined || named === '')) return NO_TENANT_STEP_QUOTAS;
  let defaultQuota: number | null = null;
  if (fallback !== undefined && fallback !== '') {
    defaultQuota = /^\d{1,7}$/.test(fallback) ? Number(fallback) : Number.NaN;
    if (!Number.isSafeInteger(defaultQuota) || defaultQuota < 1 || defaultQuota > 1_000_000) {
      throw new StartupError(
        'startup.config_invalid',
        `VEETBOT_TENANT_STEP_QUOTA must be an integer from 1 to 1000000 (got "${fallback}").`,
      );
    }
  }
  let tenants: unknown = {};
  if (named !== undefined && named !== '') {
    try {
      tenants = JSON.parse(named);
    } catch {
      throw new StartupError(
        'startup.config_invalid',
        'VEETBOT_TENANT_STEP_QUOTAS must be a JSON object of tenant id to quota, e.g. {"acme": 4}.',
      );
    }
  }
  const parsed = TenantStepQuotas.safeParse({ default: defaultQuota, tenants });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new StartupError(
      'startup.config_invalid',
      `VEETBOT_TENANT_STEP_QUOTAS at ${issue?.path.slice(1).join('.') || '(root)'}: each quota must be an integer from 1 to 1000000 and each tenant id 1 to 200 characters.`,
    );
  }
  return parsed.data;
}
