import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redactUrl } from '../src/database';
import { exampleOperatorConfig, prepareOperatorConfig, serverEverythingEntry } from '../src/operator-config';
import { DEFAULT_DRAIN_MS, DEFAULT_STARTUP_TIMEOUT_MS, readSettings } from '../src/settings';
import { StartupError, startupErrorLine } from '../src/startup-error';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'veetbot-embedded-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    return error instanceof StartupError ? `${error.code}: ${error.message}` : `other: ${String(error)}`;
  }
  return 'no error';
};

describe('settings: one reading for every role (ADR 0022)', () => {
  it('VEETBOT_METRICS_TOKEN: read for every role; a short or spaced token is startup.config_invalid (docs/adr/0055)', () => {
    expect(readSettings({ VEETBOT_METRICS_TOKEN: ' operator-token-0123456789 ' }, [], '/srv/app').metricsToken).toBe(
      'operator-token-0123456789',
    );
    for (const bad of ['short', 'has a space in it 0123456789'])
      expect(() => readSettings({ VEETBOT_METRICS_TOKEN: bad }, [], '/srv/app')).toThrow(/VEETBOT_METRICS_TOKEN must be 16 to 512/);
  });

  it('defaults: PGlite in ./.veetbot, port 8787 and the worker port 8788 on 127.0.0.1, operator.json in the data folder, both roles', () => {
    expect(readSettings({}, [], '/srv/app')).toEqual({
      role: 'both',
      databaseUrl: null,
      dataDir: '/srv/app/.veetbot',
      port: 8787,
      workerPort: 8788,
      host: '127.0.0.1',
      demoApiKey: null,
      operatorConfigPath: '/srv/app/.veetbot/operator.json',
      drainMs: DEFAULT_DRAIN_MS,
      loop: {},
      stepQuotas: { default: null, tenants: {} },
      leaseTtlMs: undefined,
      poolSize: undefined,
      metricsToken: null,
      startupTimeoutMs: DEFAULT_STARTUP_TIMEOUT_MS,
      // The browser tools are off unless the operator enables them (docs/adr/0079).
      browser: { enabled: false, allowLoopback: false },
      // The demo outbox answers at once (docs/adr/0081).
      demoOutboxAckMs: 0,
      // No key settings in the environment (ADR 0017: the key comes from the data folder).
      secretsEnv: { VEETBOT_SECRETS_KEY: undefined, VEETBOT_SECRETS_KEY_FILE: undefined, VEETBOT_SECRETS_PREVIOUS_KEYS: undefined },
    });
    const set = readSettings(
      {
        DATABASE_URL: 'postgres://u@h/db',
        VEETBOT_DATA_DIR: 'data',
        VEETBOT_PORT: '9000',
        VEETBOT_DEMO_API_KEY: 'vbk_abcdefghijklmnopqrstuv',
      },
      ['--api-only'],
      '/srv/app',
    );
    expect(set).toMatchObject({
      role: 'api',
      databaseUrl: 'postgres://u@h/db',
      dataDir: '/srv/app/data',
      port: 9000,
      demoApiKey: 'vbk_abcdefghijklmnopqrstuv',
    });
  });

  it('VEETBOT_BROWSER_ENABLED and VEETBOT_BROWSER_ALLOW_LOOPBACK are 1 or 0, nothing else (docs/adr/0079)', () => {
    expect(readSettings({ VEETBOT_BROWSER_ENABLED: '1' }, [], '/srv/app').browser).toEqual({ enabled: true, allowLoopback: false });
    expect(readSettings({ VEETBOT_BROWSER_ENABLED: 'true', VEETBOT_BROWSER_ALLOW_LOOPBACK: '1' }, [], '/srv/app').browser).toEqual({
      enabled: true,
      allowLoopback: true,
    });
    expect(readSettings({ VEETBOT_BROWSER_ENABLED: '0' }, [], '/srv/app').browser.enabled).toBe(false);
    expect(() => readSettings({ VEETBOT_BROWSER_ENABLED: 'yes' }, [], '/srv/app')).toThrow(/VEETBOT_BROWSER_ENABLED must be 1 or 0/);
  });

  it('VEETBOT_DEMO_OUTBOX_ACK_MS: 0 by default, 0 to 5000, anything else refused (docs/adr/0081)', () => {
    expect(readSettings({}, [], '/srv/app').demoOutboxAckMs).toBe(0);
    expect(readSettings({ VEETBOT_DEMO_OUTBOX_ACK_MS: '30' }, [], '/srv/app').demoOutboxAckMs).toBe(30);
    expect(readSettings({ VEETBOT_DEMO_OUTBOX_ACK_MS: '5000' }, [], '/srv/app').demoOutboxAckMs).toBe(5_000);
    for (const bad of ['5001', '-1', '1.5', 'soon']) {
      expect(() => readSettings({ VEETBOT_DEMO_OUTBOX_ACK_MS: bad }, [], '/srv/app'), bad).toThrow(
        /VEETBOT_DEMO_OUTBOX_ACK_MS must be an integer/,
      );
    }
  });

  it('the api and the worker read the same operator file from the same variables and the same default', () => {
    const env = { DATABASE_URL: 'postgres://db/v', VEETBOT_DATA_DIR: 'data' };
    const api = readSettings(env, ['--api-only'], '/srv');
    const worker = readSettings(env, [], '/srv', 'worker');
    expect(worker.role).toBe('worker');
    expect(worker.operatorConfigPath).toBe(api.operatorConfigPath);
    expect(worker.operatorConfigPath).toBe('/srv/data/operator.json');
    expect(readSettings(env, ['--worker-only'], '/srv').role).toBe('worker');
    // VEETBOT_CONFIG (the worker's old name) still works, and means the same file everywhere.
    expect(readSettings({ ...env, VEETBOT_CONFIG: 'ops/v.json' }, [], '/srv', 'worker').operatorConfigPath).toBe('/srv/ops/v.json');
    expect(readSettings({ ...env, VEETBOT_CONFIG: 'ops/v.json' }, ['--api-only'], '/srv').operatorConfigPath).toBe('/srv/ops/v.json');
  });

  it('reads every worker variable in every role', () => {
    const settings = readSettings(
      {
        DATABASE_URL: 'postgresql://db/v',
        VEETBOT_DATA_DIR: 'data',
        VEETBOT_OPERATOR_CONFIG: 'ops/veetbot.json',
        VEETBOT_WORKER_PORT: '0',
        VEETBOT_WORKER_CONCURRENCY: '8',
        VEETBOT_WORKER_POLL_MS: '250',
        VEETBOT_WORKER_SWEEP_MS: '2000',
        VEETBOT_WORKER_DRAIN_MS: '0',
        VEETBOT_LEASE_TTL_MS: '9000',
        VEETBOT_DATABASE_POOL_SIZE: '4',
        VEETBOT_STARTUP_TIMEOUT_MS: '500',
      },
      [],
      '/srv',
    );
    expect(settings).toMatchObject({
      role: 'both',
      dataDir: '/srv/data',
      operatorConfigPath: '/srv/ops/veetbot.json',
      workerPort: 0,
      drainMs: 0,
      loop: { concurrency: 8, pollIntervalMs: 250, sweepIntervalMs: 2000 },
      leaseTtlMs: 9000,
      poolSize: 4,
      startupTimeoutMs: 500,
    });
  });

  it('refuses each bad value with startup.config_invalid naming it', () => {
    expect(codeOf(() => readSettings({ VEETBOT_PORT: '99999' }, [], '/'))).toMatch(/^startup\.config_invalid: VEETBOT_PORT/);
    expect(codeOf(() => readSettings({ VEETBOT_PORT: 'eighty' }, [], '/'))).toMatch(/^startup\.config_invalid: VEETBOT_PORT/);
    expect(codeOf(() => readSettings({ VEETBOT_WORKER_PORT: '70000' }, [], '/'))).toMatch(/^startup\.config_invalid: VEETBOT_WORKER_PORT/);
    expect(codeOf(() => readSettings({ VEETBOT_DEMO_API_KEY: 'secret' }, [], '/'))).toMatch(
      /^startup\.config_invalid: VEETBOT_DEMO_API_KEY/,
    );
    expect(codeOf(() => readSettings({ DATABASE_URL: 'mysql://x' }, [], '/'))).toMatch(/^startup\.config_invalid: DATABASE_URL/);
    expect(codeOf(() => readSettings({}, ['--all'], '/'))).toMatch(/^startup\.config_invalid: unknown argument "--all"/);
    expect(codeOf(() => readSettings({}, ['--api-only', '--worker-only'], '/'))).toMatch(
      /^startup\.config_invalid: --api-only and --worker-only/,
    );
    expect(codeOf(() => readSettings({ VEETBOT_OPERATOR_CONFIG: 'a.json', VEETBOT_CONFIG: 'b.json' }, [], '/'))).toMatch(
      /^startup\.config_invalid: VEETBOT_OPERATOR_CONFIG and VEETBOT_CONFIG/,
    );
    for (const [name, value] of [
      ['VEETBOT_WORKER_CONCURRENCY', '0'],
      ['VEETBOT_WORKER_POLL_MS', '1.5'],
      ['VEETBOT_WORKER_SWEEP_MS', '-1'],
      ['VEETBOT_WORKER_DRAIN_MS', 'soon'],
    ] as const) {
      expect(codeOf(() => readSettings({ DATABASE_URL: 'postgres://db/v', [name]: value }, [], '/'))).toMatch(
        new RegExp(`^startup\\.config_invalid: ${name}`),
      );
    }
  });

  it('a worker without DATABASE_URL is startup.database_url_required (PGlite belongs to one process)', () => {
    expect(codeOf(() => readSettings({}, [], '/', 'worker'))).toMatch(/^startup\.database_url_required: DATABASE_URL is not set\./);
    expect(codeOf(() => readSettings({ DATABASE_URL: '  ' }, ['--worker-only'], '/'))).toMatch(/^startup\.database_url_required/);
  });

  it('redacts the password of a URL for messages', () => {
    expect(redactUrl('postgres://u:secret@db:5432/v')).toBe('postgres://u:***@db:5432/v');
    expect(redactUrl('postgres://db/v')).toBe('postgres://db/v');
    expect(redactUrl('not a url')).toBe('(an unparsable DATABASE_URL)');
  });

  it('prints one line per start-up failure', () => {
    expect(startupErrorLine(new StartupError('startup.port_in_use', '127.0.0.1:1 is already in use'))).toBe(
      'error startup.port_in_use: 127.0.0.1:1 is already in use',
    );
    expect(startupErrorLine(new Error('two\nlines'))).toBe('error startup.failed: two');
  });
});

describe('the operator configuration', () => {
  it('resolves server-everything from this package and writes the example once, never over an existing file', async () => {
    const entry = serverEverythingEntry();
    expect(entry).toMatch(/server-everything\/dist\/index\.js$/);
    const path = join(dir, 'operator.json');
    const first = prepareOperatorConfig(path);
    expect(first.written).toBe(true);
    expect(first.config.servers).toEqual([
      expect.objectContaining({
        serverId: 'everything',
        transport: 'stdio',
        endpoint: process.execPath,
        args: [entry, 'stdio'],
        authScheme: 'none',
      }),
    ]);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(exampleOperatorConfig(process.execPath, entry));

    await writeFile(path, JSON.stringify({ mcp: { servers: [] } }));
    const second = prepareOperatorConfig(path);
    expect(second.written).toBe(false);
    expect(second.config.servers).toEqual([]);
  });

  it('a bad file is startup.config_invalid with the path of the bad field', async () => {
    const path = join(dir, 'bad.json');
    await writeFile(
      path,
      JSON.stringify({ mcp: { servers: [{ server_id: 'ok', transport: 'stdio', endpoint: 'node x.js', auth_scheme: 'bearer' }] } }),
    );
    expect(codeOf(() => prepareOperatorConfig(path))).toMatch(
      /^startup\.config_invalid: .*bad\.json at mcp\.servers\[0\]\.\S+: mcp\.config\./,
    );
    await writeFile(path, '{ not json');
    expect(codeOf(() => prepareOperatorConfig(path))).toMatch(
      /^startup\.config_invalid: .*bad\.json at \(root\): mcp\.config\.file_not_json/,
    );
  });
});
