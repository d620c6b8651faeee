import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleOperatorConfig, prepareOperatorConfig, serverEverythingEntry } from '../src/embedded/operator-config';
import { readSettings } from '../src/embedded/settings';
import { StartupError, startupErrorLine } from '../src/embedded/startup-error';

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

describe('settings', () => {
  it('defaults: PGlite in ./.veetbot, port 8787 on 127.0.0.1, operator.json in the data folder, worker on', () => {
    expect(readSettings({}, [], '/srv/app')).toEqual({
      databaseUrl: null,
      dataDir: '/srv/app/.veetbot',
      port: 8787,
      host: '127.0.0.1',
      demoApiKey: null,
      operatorConfigPath: '/srv/app/.veetbot/operator.json',
      apiOnly: false,
    });
    const set = readSettings({ DATABASE_URL: 'postgres://u@h/db', VEETBOT_DATA_DIR: 'data', VEETBOT_PORT: '9000', VEETBOT_DEMO_API_KEY: 'vbk_abcdefghijklmnopqrstuv' }, ['--api-only'], '/srv/app');
    expect(set).toMatchObject({ databaseUrl: 'postgres://u@h/db', dataDir: '/srv/app/data', port: 9000, demoApiKey: 'vbk_abcdefghijklmnopqrstuv', apiOnly: true });
  });

  it('refuses each bad value with startup.config_invalid naming it', () => {
    expect(codeOf(() => readSettings({ VEETBOT_PORT: '99999' }, [], '/'))).toMatch(/^startup\.config_invalid: VEETBOT_PORT/);
    expect(codeOf(() => readSettings({ VEETBOT_PORT: 'eighty' }, [], '/'))).toMatch(/^startup\.config_invalid: VEETBOT_PORT/);
    expect(codeOf(() => readSettings({ VEETBOT_DEMO_API_KEY: 'secret' }, [], '/'))).toMatch(/^startup\.config_invalid: VEETBOT_DEMO_API_KEY/);
    expect(codeOf(() => readSettings({ DATABASE_URL: 'mysql://x' }, [], '/'))).toMatch(/^startup\.config_invalid: DATABASE_URL/);
    expect(codeOf(() => readSettings({}, ['--worker-only'], '/'))).toMatch(/^startup\.config_invalid: unknown argument "--worker-only"/);
  });

  it('prints one line per start-up failure', () => {
    expect(startupErrorLine(new StartupError('startup.port_in_use', '127.0.0.1:1 is already in use'))).toBe('error startup.port_in_use: 127.0.0.1:1 is already in use');
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
    expect(first.config.servers).toEqual([expect.objectContaining({ serverId: 'everything', transport: 'stdio', endpoint: process.execPath, args: [entry, 'stdio'], authScheme: 'none' })]);
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual(exampleOperatorConfig(process.execPath, entry));

    await writeFile(path, JSON.stringify({ mcp: { servers: [] } }));
    const second = prepareOperatorConfig(path);
    expect(second.written).toBe(false);
    expect(second.config.servers).toEqual([]);
  });

  it('a bad file is startup.config_invalid with the path of the bad field', async () => {
    const path = join(dir, 'bad.json');
    await writeFile(path, JSON.stringify({ mcp: { servers: [{ server_id: 'ok', transport: 'stdio', endpoint: 'node x.js', auth_scheme: 'bearer' }] } }));
    expect(codeOf(() => prepareOperatorConfig(path))).toMatch(/^startup\.config_invalid: .*bad\.json at mcp\.servers\[0\]\.\S+: mcp\.config\./);
    await writeFile(path, '{ not json');
    expect(codeOf(() => prepareOperatorConfig(path))).toMatch(/^startup\.config_invalid: .*bad\.json at \(root\): mcp\.config\.file_not_json/);
  });
});
