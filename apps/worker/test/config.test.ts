import { describe, expect, it } from 'vitest';
import { redact, workerPaths } from '../src/compose';
import { DEFAULT_DRAIN_MS, DEFAULT_STARTUP_TIMEOUT_MS, readWorkerConfig } from '../src/config';
import { StartupError } from '../src/startup-error';

const codeOf = (code: string) => (e: unknown) => StartupError.isInstance(e) && e.code === code;

describe('readWorkerConfig', () => {
  it('fills defaults and resolves folders against the working directory', () => {
    const config = readWorkerConfig({ DATABASE_URL: 'postgres://u@db:5432/veetbot' }, '/srv/app');
    expect(config).toEqual({
      databaseUrl: 'postgres://u@db:5432/veetbot',
      dataDir: '/srv/app/.veetbot',
      operatorConfigPath: null,
      drainMs: DEFAULT_DRAIN_MS,
      loop: {},
      leaseTtlMs: undefined,
      poolSize: undefined,
      startupTimeoutMs: DEFAULT_STARTUP_TIMEOUT_MS,
      secretsEnv: { VEETBOT_SECRETS_KEY: undefined, VEETBOT_SECRETS_KEY_FILE: undefined, VEETBOT_SECRETS_PREVIOUS_KEYS: undefined },
    });
    expect(workerPaths(config.dataDir)).toEqual({
      dataDir: '/srv/app/.veetbot',
      blobs: '/srv/app/.veetbot/blobs',
      workspaces: '/srv/app/.veetbot/workspaces',
      outbox: '/srv/app/.veetbot/outbox.log',
    });
  });

  it('reads every variable', () => {
    const config = readWorkerConfig(
      {
        DATABASE_URL: 'postgresql://db/v',
        VEETBOT_DATA_DIR: 'data',
        VEETBOT_CONFIG: 'ops/veetbot.json',
        VEETBOT_WORKER_CONCURRENCY: '8',
        VEETBOT_WORKER_POLL_MS: '250',
        VEETBOT_WORKER_SWEEP_MS: '2000',
        VEETBOT_WORKER_DRAIN_MS: '0',
        VEETBOT_LEASE_TTL_MS: '9000',
        VEETBOT_DATABASE_POOL_SIZE: '4',
        VEETBOT_STARTUP_TIMEOUT_MS: '500',
      },
      '/srv',
    );
    expect(config).toMatchObject({
      dataDir: '/srv/data',
      operatorConfigPath: '/srv/ops/veetbot.json',
      drainMs: 0,
      loop: { concurrency: 8, pollIntervalMs: 250, sweepIntervalMs: 2000 },
      leaseTtlMs: 9000,
      poolSize: 4,
      startupTimeoutMs: 500,
    });
  });

  it('refuses a missing or non-PostgreSQL DATABASE_URL and malformed numbers, naming the variable', () => {
    expect(() => readWorkerConfig({})).toThrow(StartupError);
    let blank: unknown;
    try {
      readWorkerConfig({ DATABASE_URL: '  ' });
    } catch (e) {
      blank = e;
    }
    expect(blank).toSatisfy(codeOf('startup.database_url_required'));
    for (const [name, value] of [
      ['DATABASE_URL', 'mysql://db/v'],
      ['VEETBOT_WORKER_CONCURRENCY', '0'],
      ['VEETBOT_WORKER_POLL_MS', '1.5'],
      ['VEETBOT_WORKER_SWEEP_MS', '-1'],
      ['VEETBOT_WORKER_DRAIN_MS', 'soon'],
    ] as const) {
      const env = { DATABASE_URL: 'postgres://db/v', [name]: value };
      let error: unknown;
      try {
        readWorkerConfig(env);
      } catch (e) {
        error = e;
      }
      expect(error).toSatisfy(codeOf('startup.config_invalid'));
      expect((error as Error).message).toContain(name);
    }
  });

  it('redacts the password of a URL for messages', () => {
    expect(redact('postgres://u:secret@db:5432/v')).toBe('postgres://u:***@db:5432/v');
    expect(redact('postgres://db/v')).toBe('postgres://db/v');
    expect(redact('not a url')).toBe('(an unparsable DATABASE_URL)');
  });
});
