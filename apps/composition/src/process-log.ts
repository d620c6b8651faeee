import { createLogger, tracingDecision, type Log, type Telemetry } from '@veetbot/telemetry';
import type { Role } from './settings';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The process's structured log (docs/adr/0069), made before the settings are read so a
 * start-up error is a log line too. Its role is the one the command line asks for; the
 * values it must never write are the process's own secrets, from the environment that holds
 * them (the demo API key is not one: it is printed on purpose, once).
 */
export function processLog(options: { readonly defaultRole: Role; readonly argv: readonly string[]; readonly env: Env }): Promise<Log> {
  const role = options.argv.includes('--api-only') ? 'api' : options.argv.includes('--worker-only') ? 'worker' : options.defaultRole;
  return createLogger({ role: role === 'both' ? 'api+worker' : role, secrets: processSecrets(options.env), env: options.env });
}

/** Every secret value this process was given in its environment. */
export function processSecrets(env: Env): string[] {
  const secrets: string[] = [];
  const database = env.DATABASE_URL?.trim();
  if (database) {
    try {
      const password = decodeURIComponent(new URL(database).password);
      if (password !== '') secrets.push(password);
    } catch {
      // Not a URL: the settings refuse it; nothing to pick out.
    }
  }
  for (const name of ['VEETBOT_METRICS_TOKEN', 'VEETBOT_SECRETS_KEY']) {
    const value = env[name]?.trim();
    if (value) secrets.push(value);
  }
  for (const value of (env.VEETBOT_SECRETS_PREVIOUS_KEYS ?? '').split(/[\s,]+/)) if (value !== '') secrets.push(value);
  // The collector's credentials (`Authorization=Bearer …`): each header's value.
  for (const name of ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS']) {
    for (const pair of (env[name] ?? '').split(',')) {
      const value = pair.slice(pair.indexOf('=') + 1).trim();
      if (pair.includes('=') && value !== '') secrets.push(value, safeDecode(value));
    }
  }
  return [...new Set(secrets)];
}

/** The start-up line saying whether this process traces, and where to (never the collector's credentials). */
export function tracingLine(telemetry: Telemetry | null, env: Env): string {
  if (telemetry !== null) return `  tracing: on, OTLP/HTTP to ${shownUrl(telemetry.otlpTracesUrl)}`;
  const decision = tracingDecision(env);
  const why = decision.on
    ? 'not started'
    : decision.reason === 'no_endpoint'
      ? 'set OTEL_EXPORTER_OTLP_ENDPOINT to turn it on'
      : decision.reason === 'sdk_disabled'
        ? 'OTEL_SDK_DISABLED=true'
        : 'OTEL_TRACES_EXPORTER=none';
  return `  tracing: off (${why})`;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** The collector's URL without what may be a credential (user info, query). */
function shownUrl(url: string | null): string {
  if (url === null) return '(no exporter)';
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(an unparsable URL)';
  }
}
