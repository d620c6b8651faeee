import { resolve } from 'node:path';
import { API_KEY_PATTERN } from '../api-keys';
import { StartupError } from './startup-error';

export interface EmbeddedSettings {
  /** DATABASE_URL: PostgreSQL; unset: PGlite in `<dataDir>/pglite`. */
  readonly databaseUrl: string | null;
  /** VEETBOT_DATA_DIR (default ./.veetbot/): PGlite, blobs, workspaces, the outbox, operator.json. */
  readonly dataDir: string;
  /** VEETBOT_PORT (default 8787), on 127.0.0.1. */
  readonly port: number;
  readonly host: string;
  /** VEETBOT_DEMO_API_KEY: the demo key, fixed instead of generated. */
  readonly demoApiKey: string | null;
  /** VEETBOT_OPERATOR_CONFIG (default `<dataDir>/operator.json`). */
  readonly operatorConfigPath: string;
  /** `--api-only`: no worker loop in this process. */
  readonly apiOnly: boolean;
}

const FLAGS = new Set(['--api-only']);

/** Environment and flags, each checked; a bad value is `startup.config_invalid` naming it. */
export function readSettings(env: Readonly<Record<string, string | undefined>>, argv: readonly string[], cwd: string): EmbeddedSettings {
  for (const arg of argv) if (!FLAGS.has(arg)) throw new StartupError('startup.config_invalid', `unknown argument ${JSON.stringify(arg)} (known: --api-only)`);
  const nonEmpty = (name: string) => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? null : value;
  };
  const portText = nonEmpty('VEETBOT_PORT') ?? '8787';
  if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
    throw new StartupError('startup.config_invalid', 'VEETBOT_PORT must be a port number from 1 to 65535');
  }
  const demoApiKey = nonEmpty('VEETBOT_DEMO_API_KEY');
  if (demoApiKey !== null && !API_KEY_PATTERN.test(demoApiKey)) {
    throw new StartupError('startup.config_invalid', 'VEETBOT_DEMO_API_KEY must look like vbk_ followed by 16 to 128 of A-Z a-z 0-9 _ -');
  }
  const databaseUrl = nonEmpty('DATABASE_URL');
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new StartupError('startup.config_invalid', 'DATABASE_URL must be a postgres:// URL');
  }
  const dataDir = resolve(cwd, nonEmpty('VEETBOT_DATA_DIR') ?? '.veetbot');
  return {
    databaseUrl,
    dataDir,
    port: Number(portText),
    host: '127.0.0.1',
    demoApiKey,
    operatorConfigPath: resolve(cwd, nonEmpty('VEETBOT_OPERATOR_CONFIG') ?? resolve(dataDir, 'operator.json')),
    apiOnly: argv.includes('--api-only'),
  };
}
