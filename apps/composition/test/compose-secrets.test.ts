import { describe, expect, it } from 'vitest';
import { readSettings } from '../src/settings';

/** The settings of ADR 0017's key; the worker's tenant secrets on PostgreSQL are compose-secrets.postgres.test.ts. */
describe('settings: the tenant-secrets key', () => {
  it('reads VEETBOT_SECRETS_KEY, _KEY_FILE and _PREVIOUS_KEYS and nothing else of the environment for the key', () => {
    const config = readSettings(
      {
        DATABASE_URL: 'postgres://db/x',
        VEETBOT_SECRETS_KEY: 'k',
        VEETBOT_SECRETS_KEY_FILE: '/f',
        VEETBOT_SECRETS_PREVIOUS_KEYS: 'p',
        OTHER: 'o',
      },
      [],
      '/srv',
      'worker',
    );
    expect(config.secretsEnv).toEqual({ VEETBOT_SECRETS_KEY: 'k', VEETBOT_SECRETS_KEY_FILE: '/f', VEETBOT_SECRETS_PREVIOUS_KEYS: 'p' });
  });
});
