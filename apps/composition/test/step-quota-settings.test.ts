import { tenantStepQuota } from '@veetbot/domain';
import { describe, expect, it } from 'vitest';
import { readSettings } from '../src/settings';
import { StartupError } from '../src/startup-error';
import { readStepQuotas } from '../src/step-quota-settings';

const refusal = (env: Record<string, string>): string => {
  try {
    readStepQuotas(env);
  } catch (error) {
    if (error instanceof StartupError) return `${error.code}: ${error.message}`;
    throw error;
  }
  throw new Error('accepted');
};

// docs/adr/0070: the operator's per-tenant step quota, from the environment.
describe('VEETBOT_TENANT_STEP_QUOTA and VEETBOT_TENANT_STEP_QUOTAS', () => {
  it('unset: no quota; set: the default and the named overrides', () => {
    expect(readSettings({}, [], '/').stepQuotas).toEqual({ default: null, tenants: {} });
    const quotas = readStepQuotas({ VEETBOT_TENANT_STEP_QUOTA: ' 4 ', VEETBOT_TENANT_STEP_QUOTAS: '{"acme": 16, "tiny": 1}' });
    expect(quotas).toEqual({ default: 4, tenants: { acme: 16, tiny: 1 } });
    expect(tenantStepQuota(quotas, 'acme')).toBe(16);
    expect(tenantStepQuota(quotas, 'other')).toBe(4);
    expect(readStepQuotas({ VEETBOT_TENANT_STEP_QUOTAS: '{"acme": 2}' })).toEqual({ default: null, tenants: { acme: 2 } });
  });

  it('a tenant id that names an Object.prototype member is just a tenant without a quota of its own', () => {
    const quotas = readStepQuotas({ VEETBOT_TENANT_STEP_QUOTA: '3', VEETBOT_TENANT_STEP_QUOTAS: '{"__proto__": 1, "acme": 2}' });
    expect(Object.getPrototypeOf(quotas.tenants)).toBe(Object.prototype);
    for (const tenant of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) expect(tenantStepQuota(quotas, tenant)).toBe(3);
    expect(tenantStepQuota(quotas, 'acme')).toBe(2);
  });

  it('refuses anything but positive integers and a JSON object of them, naming the variable', () => {
    for (const value of ['0', '-1', '1.5', '1e3', 'four', '2000000', '0x10']) {
      expect(refusal({ VEETBOT_TENANT_STEP_QUOTA: value })).toMatch(/^startup\.config_invalid: VEETBOT_TENANT_STEP_QUOTA must/);
    }
    for (const value of [
      '[1, 2]',
      '{"acme": 0}',
      '{"acme": "4"}',
      '{"acme": 2.5}',
      '{"acme": {"n": 1}}',
      '{"": 1}',
      'acme=4',
      '4',
      'null',
    ]) {
      expect(refusal({ VEETBOT_TENANT_STEP_QUOTAS: value })).toMatch(/^startup\.config_invalid: VEETBOT_TENANT_STEP_QUOTAS/);
    }
    expect(refusal({ VEETBOT_TENANT_STEP_QUOTAS: JSON.stringify({ ['t'.repeat(201)]: 1 }) })).toMatch(/VEETBOT_TENANT_STEP_QUOTAS/);
    // readSettings reads them too: a bad value stops the start.
    expect(() => readSettings({ VEETBOT_TENANT_STEP_QUOTA: '0' }, [], '/')).toThrow(StartupError);
  });
});
