import { readFileSync } from 'node:fs';
import { ConfigurationError } from '@veetbot/domain';
import type { EgressPolicy } from '@veetbot/ports';
import { DefaultEgressPolicy } from '../egress/default-egress-policy';
import type { McpServerConfig } from './server-config';
import { validateServerConfig, type ConfigError } from './validate-server-config';

/** ADR-0131's runtime settings, with the defaults used when the file names none. */
export const DEFAULT_OPERATOR_SETTINGS = {
  discoveryReuseSeconds: 300,
  warmupConnectTimeoutSeconds: 30,
  warmupRetrySeconds: 10,
  warmupAttempts: 3,
  /** § "checks its own connections at most every thirty seconds": the MCP sweep's interval (0 < s ≤ 30). */
  sweepIntervalSeconds: 30,
} as const;

/**
 * One egress policy as the file states it: the switches of `veetbot mcp check` (`--allow-host`,
 * `--allow-http`, `--allow-private`) and the options of DefaultEgressPolicy, by the same names.
 */
export interface EgressSettings {
  /** `allow_hosts`: exact host names or `*.suffix`; empty: any public host. */
  readonly allowHosts: readonly string[];
  /** `allow_http`: plain http (a local development server). */
  readonly allowHttp: boolean;
  /** `allow_private_addresses`: loopback, private and link-local destinations (metadata endpoints stay refused). */
  readonly allowPrivateAddresses: boolean;
}

/** The policy when the file names none: https only, public addresses only, any host. */
export const STRICT_EGRESS: EgressSettings = { allowHosts: [], allowHttp: false, allowPrivateAddresses: false };

export interface OperatorConfig {
  /** Operator-configured servers: every stdio server comes from here and only from here. */
  readonly servers: readonly McpServerConfig[];
  /** `mcp.egress`: the policy of the operator's own HTTP servers (and their token endpoints). */
  readonly egress: EgressSettings;
  /**
   * `mcp.tenant_egress`: the policy of tenant-registered servers, at write and at dial. Strict
   * unless the operator states it: relaxing the operator's servers never relaxes a tenant's
   * (a tenant URL is hostile input; ADR 0022).
   */
  readonly tenantEgress: EgressSettings;
  readonly discoveryReuseSeconds: number;
  readonly warmupConnectTimeoutSeconds: number;
  readonly warmupRetrySeconds: number;
  readonly warmupAttempts: number;
  readonly sweepIntervalSeconds: number;
}

/** The operator file could not be used: every error, each with its code and path. */
export class OperatorConfigError extends ConfigurationError {
  readonly errors: readonly ConfigError[];
  readonly file: string;
  constructor(file: string, errors: readonly ConfigError[]) {
    super(
      'config.mcp_invalid',
      `MCP operator configuration ${file} is invalid:\n${errors.map((e) => `  ${e.code} at ${e.path || '(root)'}: ${e.message}`).join('\n')}`,
    );
    this.errors = errors;
    this.file = file;
  }
}

type NumericSettings = Omit<OperatorConfig, 'servers' | 'egress' | 'tenantEgress'>;

const SETTINGS: Record<string, { key: keyof NumericSettings; integer: boolean }> = {
  discovery_reuse_seconds: { key: 'discoveryReuseSeconds', integer: false },
  warmup_connect_timeout_seconds: { key: 'warmupConnectTimeoutSeconds', integer: false },
  warmup_retry_seconds: { key: 'warmupRetrySeconds', integer: false },
  warmup_attempts: { key: 'warmupAttempts', integer: true },
  sweep_interval_seconds: { key: 'sweepIntervalSeconds', integer: false },
};

const camel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * The operator configuration file (JSON): `{ "mcp": { "servers": [...], "discovery_reuse_seconds":
 * 300, "warmup_connect_timeout_seconds": 30, "warmup_retry_seconds": 10, "warmup_attempts": 3 } }`.
 * Server keys use the mcp_servers column spelling (`server_id`, `auth_scheme`, …; camelCase is
 * accepted too). § Where a server may live: stdio command lines come from deployment
 * configuration, never from a tenant-writable surface — this file is that configuration.
 * Validated at load; any error throws OperatorConfigError naming every code and path.
 */
export function loadOperatorConfig(path: string, options: { readonly egress?: EgressPolicy } = {}): OperatorConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    throw new OperatorConfigError(path, [
      {
        code: 'mcp.config.file_unreadable',
        path: '',
        message: `The file cannot be read (${(cause as NodeJS.ErrnoException).code ?? 'error'}).`,
      },
    ]);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    throw new OperatorConfigError(path, [{ code: 'mcp.config.file_not_json', path: '', message: 'The file is not valid JSON.' }]);
  }
  return parseOperatorConfig(document, path, options.egress);
}

/**
 * loadOperatorConfig's validation, for a document already in memory. The operator's servers are
 * checked against `egress` when given (the CLI's flags), else against the file's own
 * `mcp.egress` section.
 */
export function parseOperatorConfig(document: unknown, file: string, egress?: EgressPolicy): OperatorConfig {
  const errors: ConfigError[] = [];
  const settings: Record<string, number> = { ...DEFAULT_OPERATOR_SETTINGS };
  const servers: McpServerConfig[] = [];
  const root = isObject(document) ? document.mcp : undefined;
  if (!isObject(document) || root === undefined) {
    // A file with no mcp section configures no servers.
    if (!isObject(document)) errors.push({ code: 'mcp.config.not_object', path: '', message: 'The file must hold a JSON object.' });
    if (errors.length > 0) throw new OperatorConfigError(file, errors);
    return { servers, egress: STRICT_EGRESS, tenantEgress: STRICT_EGRESS, ...(settings as NumericSettings) };
  }
  if (!isObject(root))
    throw new OperatorConfigError(file, [{ code: 'mcp.config.not_object', path: 'mcp', message: 'mcp must be an object.' }]);

  const operatorEgress = parseEgress(root.egress, 'mcp.egress', errors);
  const tenantEgress = parseEgress(root.tenant_egress ?? root.tenantEgress, 'mcp.tenant_egress', errors);
  const serverEgress = egress ?? new DefaultEgressPolicy(operatorEgress);

  for (const [key, value] of Object.entries(root)) {
    if (key === 'servers' || key === 'egress' || key === 'tenant_egress' || key === 'tenantEgress') continue;
    const setting = SETTINGS[key] ?? SETTINGS[key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)];
    if (setting === undefined) {
      errors.push({ code: 'mcp.config.field_unknown', path: `mcp.${key}`, message: 'This setting is not known.' });
    } else if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (setting.integer && !Number.isInteger(value))) {
      errors.push({
        code: 'mcp.config.setting_invalid',
        path: `mcp.${key}`,
        message: `${key} must be a non-negative ${setting.integer ? 'integer' : 'number'}.`,
      });
    } else if (setting.key === 'sweepIntervalSeconds' && (value <= 0 || value > 30)) {
      // § "at most every thirty seconds": a longer interval breaks the rule; zero would spin.
      errors.push({ code: 'mcp.config.setting_invalid', path: `mcp.${key}`, message: `${key} must be more than 0 and at most 30.` });
    } else {
      settings[setting.key] = value;
    }
  }

  const list = root.servers ?? [];
  if (!Array.isArray(list)) {
    errors.push({ code: 'mcp.config.servers_invalid', path: 'mcp.servers', message: 'mcp.servers must be an array.' });
  } else {
    const seen = new Set<string>();
    list.forEach((entry, i) => {
      const at = `mcp.servers[${i}]`;
      if (!isObject(entry)) {
        errors.push({ code: 'mcp.config.not_object', path: at, message: 'A server configuration must be a JSON object.' });
        return;
      }
      // Keep the file's own spelling for the error paths.
      const spelling = new Map<string, string>();
      const normalized: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(entry)) {
        const name = camel(key);
        spelling.set(name, key);
        normalized[name] = value;
      }
      const verdict = validateServerConfig(normalized, { source: 'operator', egress: serverEgress });
      if (!verdict.ok) {
        for (const e of verdict.errors) {
          const [field = '', ...rest] = e.path.split('.');
          errors.push({ ...e, path: [`${at}.${spelling.get(field) ?? field}`, ...rest].join('.') });
        }
        return;
      }
      if (seen.has(verdict.config.serverId)) {
        errors.push({
          code: 'mcp.config.server_id_duplicate',
          path: `${at}.${spelling.get('serverId') ?? 'server_id'}`,
          message: 'Another server in this file has the same server_id.',
        });
        return;
      }
      seen.add(verdict.config.serverId);
      servers.push(verdict.config);
    });
  }
  if (errors.length > 0) throw new OperatorConfigError(file, errors);
  return { servers, egress: operatorEgress, tenantEgress, ...(settings as NumericSettings) };
}

const EGRESS_FIELDS: Readonly<Record<string, keyof EgressSettings>> = {
  allow_hosts: 'allowHosts',
  allowHosts: 'allowHosts',
  allow_http: 'allowHttp',
  allowHttp: 'allowHttp',
  allow_private_addresses: 'allowPrivateAddresses',
  allowPrivateAddresses: 'allowPrivateAddresses',
};

/** One egress section; absent is the strict policy. Unknown or ill-typed fields are errors. */
function parseEgress(value: unknown, at: string, errors: ConfigError[]): EgressSettings {
  if (value === undefined) return STRICT_EGRESS;
  if (!isObject(value)) {
    errors.push({ code: 'mcp.config.egress_invalid', path: at, message: `${at} must be an object.` });
    return STRICT_EGRESS;
  }
  const found: { allowHosts: readonly string[]; allowHttp: boolean; allowPrivateAddresses: boolean } = { ...STRICT_EGRESS };
  for (const [key, field] of Object.entries(value)) {
    const name = EGRESS_FIELDS[key];
    if (name === undefined) {
      errors.push({
        code: 'mcp.config.field_unknown',
        path: `${at}.${key}`,
        message: 'This setting is not known (allow_hosts, allow_http, allow_private_addresses).',
      });
    } else if (name === 'allowHosts') {
      // Exact names or `*.suffix`, as DefaultEgressPolicy matches them.
      if (!Array.isArray(field) || !field.every((h) => typeof h === 'string' && /^(\*\.)?[A-Za-z0-9.-]+$|^\[?[0-9A-Fa-f:.]+\]?$/.test(h))) {
        errors.push({
          code: 'mcp.config.egress_invalid',
          path: `${at}.${key}`,
          message: `${key} must be an array of host names (exact, or *.suffix).`,
        });
      } else {
        found.allowHosts = field as string[];
      }
    } else if (typeof field !== 'boolean') {
      errors.push({ code: 'mcp.config.egress_invalid', path: `${at}.${key}`, message: `${key} must be true or false.` });
    } else {
      found[name] = field;
    }
  }
  return found;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
