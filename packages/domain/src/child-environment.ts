/**
 * RULINGS.md "Sandbox isolation": the tier-0 names an `env` auth scheme may never name — the
 * variables that steer a process (loader, interpreter, locale of our own) and every name the
 * platform itself reads. The one list; the MCP configuration validator and the sandbox both
 * read this constant (§ Authentication rule 3: "the check reads that list rather than a copy").
 */
export const TIER0_ENVIRONMENT_NAMES: ReadonlySet<string> = new Set([
  'PATH',
  'HOME',
  'LANG',
  'TZ',
  'USER',
  'SHELL',
  'TMPDIR',
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'LD_AUDIT',
  'DYLD_INSERT_LIBRARIES',
  'DYLD_LIBRARY_PATH',
  'NODE_OPTIONS',
  'NODE_PATH',
  'NODE_EXTRA_CA_CERTS',
  'NODE_TLS_REJECT_UNAUTHORIZED',
  'PYTHONPATH',
  'PYTHONHOME',
  'PYTHONSTARTUP',
  'PERL5LIB',
  'RUBYLIB',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  // Names the platform reads.
  'DATABASE_URL',
  'VEETBOT_PORT',
  'VEETBOT_DATA_DIR',
  'VEETBOT_DEMO_API_KEY',
  'VEETBOT_OUTBOX_PATH',
  'VEETBOT_CONFIG',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'AGENT_EMAIL_MODE_ENABLED',
  'AGENT_EMAIL_UNSUBSCRIBE_ENABLED',
  'AGENT_SVP_ENABLED',
  'SVP_CREDENTIAL_FILE',
]);

/** Case-insensitive on purpose: `path` must not shadow `PATH` on platforms that fold case. */
export function isTier0EnvironmentName(name: string): boolean {
  if (TIER0_ENVIRONMENT_NAMES.has(name)) return true;
  const upper = name.toUpperCase();
  for (const reserved of TIER0_ENVIRONMENT_NAMES) if (reserved.toUpperCase() === upper) return true;
  return upper.startsWith('VEETBOT_') || upper.startsWith('LD_') || upper.startsWith('DYLD_');
}

/**
 * The synthesized tier of a child environment: PATH, HOME (a private folder), LANG=C.UTF-8,
 * TZ=UTC — built, never inherited.
 */
export function synthesizedEnvironment(home: string, path = '/usr/local/bin:/usr/bin:/bin'): Record<string, string> {
  return { PATH: path, HOME: home, LANG: 'C.UTF-8', TZ: 'UTC' };
}
