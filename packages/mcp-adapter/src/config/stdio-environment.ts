import { isTier0EnvironmentName } from '@veetbot/domain';
import type { ConfigError } from './validate-server-config';

/**
 * An operator stdio server's literal, non-secret environment variables (e.g. server-memory's
 * MEMORY_FILE_PATH). § Authentication: the child environment is BUILT — the synthesized tier
 * plus the one declared credential variable — and nothing is inherited from the worker (Hard
 * gate 16). Some servers need a plain setting that only arrives through the environment; this
 * map is the operator's way to give one, written in the operator file next to the command line
 * (which is just as operator-only and just as visible). It is not a credential channel: a
 * secret goes through `credential_ref` (broker-resolved, revealed only while the environment is
 * built, scrubbed from results); these values are configuration, stored and compared as such.
 *
 * Rules (checked when the configuration is written, like Gate 14's):
 *  - stdio only (an HTTP server has no child environment), so operator-only by construction;
 *  - names are portable variable names, at most {@link STDIO_ENV_MAX_ENTRIES} of them;
 *  - a name may not be tier-0 (domain TIER0_ENVIRONMENT_NAMES via isTier0EnvironmentName —
 *    the same list the env scheme's auth_name reads), so the synthesized tier cannot be
 *    overridden (PATH, HOME, LANG, TZ) and nothing steering the loader, the interpreter or the
 *    platform can be injected (LD_PRELOAD, NODE_OPTIONS, DATABASE_URL, VEETBOT_*);
 *  - a name may not be the env scheme's auth_name (the credential variable has one source);
 *  - a value is at most {@link STDIO_ENV_VALUE_MAX_BYTES} UTF-8 bytes and holds no NUL.
 */
export const STDIO_ENV_VALUE_MAX_BYTES = 4 * 1024;
export const STDIO_ENV_MAX_ENTRIES = 64;
export const STDIO_ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

export function checkStdioEnvironment(
  env: Readonly<Record<string, string>>,
  context: { readonly transport: 'stdio' | 'http'; readonly authName: string | null; readonly authScheme: string },
): ConfigError[] {
  const errors: ConfigError[] = [];
  if (context.transport !== 'stdio') {
    errors.push({
      code: 'mcp.config.env_unexpected',
      path: 'env',
      message: 'env is for stdio servers only (an HTTP server has no child environment).',
    });
    return errors;
  }
  const entries = Object.entries(env);
  if (entries.length > STDIO_ENV_MAX_ENTRIES) {
    errors.push({ code: 'mcp.config.env_too_many', path: 'env', message: `env may hold at most ${STDIO_ENV_MAX_ENTRIES} variables.` });
  }
  for (const [name, value] of entries) {
    const path = `env.${name}`;
    if (!STDIO_ENV_NAME_PATTERN.test(name)) {
      errors.push({
        code: 'mcp.config.env_name_invalid',
        path,
        message: 'An env variable name must match ^[A-Za-z_][A-Za-z0-9_]{0,127}$.',
      });
    } else if (isTier0EnvironmentName(name)) {
      errors.push({ code: 'mcp.config.env_name_tier0', path, message: 'env may not name a tier-0 environment variable.' });
    } else if (context.authScheme === 'env' && context.authName !== null && context.authName.toUpperCase() === name.toUpperCase()) {
      errors.push({
        code: 'mcp.config.env_name_credential',
        path,
        message: 'env may not name the credential variable (auth_name); the credential comes from credential_ref only.',
      });
    }
    if (Buffer.byteLength(value, 'utf8') > STDIO_ENV_VALUE_MAX_BYTES) {
      errors.push({
        code: 'mcp.config.env_value_too_long',
        path,
        message: `An env value may hold at most ${STDIO_ENV_VALUE_MAX_BYTES} bytes.`,
      });
    } else if (value.includes('\u0000')) {
      errors.push({ code: 'mcp.config.env_value_invalid', path, message: 'An env value may not contain a NUL character.' });
    }
  }
  return errors;
}
