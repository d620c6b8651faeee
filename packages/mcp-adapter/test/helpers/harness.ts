import type { DynamicTool, EgressPolicy, RegistrationReport, SessionStore, ToolExecutionContext, ToolMetrics } from '@veetbot/ports';
import { AjvSchemaValidator } from '@veetbot/validation';
import { DefaultEgressPolicy, McpAdapter, operatorServers, validateServerConfig, type McpServerConfig } from '../../src/index';
import type { McpAdapterSettings } from '../../src/adapter/mcp-adapter';
import type { McpServerDirectory } from '../../src/config/server-directory';
import { context, fixedClock, MemoryCatalog, MemoryEvents, MemorySkills, MutableCredentials } from './fakes';

export const loopbackEgress = () => new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true });

// Operator configuration by default: these servers use env: references (ADR 0017: tenant rows
// name only their own secret:NAME; tenant-secrets.test.ts covers that origin).
export function serverConfig(input: Record<string, unknown>, source: 'operator' | 'tenant' = 'operator'): McpServerConfig {
  const verdict = validateServerConfig(input, { source, egress: loopbackEgress() });
  if (!verdict.ok) throw new Error(JSON.stringify(verdict.errors));
  return verdict.config;
}

/** An adapter over in-memory stores, a mutable broker and a controllable clock. */
export function harness(
  configs: McpServerConfig[],
  options: {
    credentials?: Record<string, string>;
    settings?: Partial<McpAdapterSettings>;
    metrics?: ToolMetrics;
    sessions?: Pick<SessionStore, 'lifecycle'>;
    servers?: McpServerDirectory;
    /** The egress policy at dial (default: loopbackEgress). */
    egress?: EgressPolicy;
  } = {},
) {
  const events = new MemoryEvents();
  const catalog = new MemoryCatalog(events);
  const skills = new MemorySkills();
  const credentials = new MutableCredentials(options.credentials ?? {});
  const clock = fixedClock();
  const servers: McpServerDirectory = options.servers ?? {
    list: async () => operatorServers(configs),
    operator: () => operatorServers(configs),
  };
  const adapter = new McpAdapter({
    servers,
    catalog,
    events,
    skills,
    credentials,
    validator: new AjvSchemaValidator(),
    egress: options.egress ?? loopbackEgress(),
    clock,
    ...(options.settings ? { settings: options.settings } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.sessions ? { sessions: options.sessions } : {}),
  });
  const registered = new Map<string, DynamicTool>();
  const register = async (tools: readonly DynamicTool[]): Promise<RegistrationReport> => {
    for (const t of tools) registered.set(t.spec.name, t);
    return { source: 'mcp', registered: tools.map((t) => t.spec.name), rejected: [] };
  };
  const prepare = (sessionId = 's1', serverIds?: string[], tenantId = 'tenant-a') =>
    adapter.prepareSession(
      { tenantId, sessionId, principal: { tenant_id: tenantId, principal_id: 'p', scopes: [] }, ...(serverIds ? { serverIds } : {}) },
      register,
    );
  const call = (name: string, args: Record<string, unknown> = {}, sessionId = 's1', overrides: Partial<ToolExecutionContext> = {}) => {
    const tool = registered.get(name);
    if (tool === undefined) throw new Error(`${name} is not registered (${[...registered.keys()].join(', ')})`);
    // What step 10 hands the tool: the one effective timeout, with the server's request timeout
    // declared by the registration (docs/adr/0025; the executor's call-budget.ts, whose run
    // deadline these tests leave far away). The adapter applies no limit of its own.
    const timeoutSeconds = Math.min(
      tool.spec.timeout_seconds ?? Number.POSITIVE_INFINITY,
      tool.limits?.requestTimeoutSeconds ?? Number.POSITIVE_INFINITY,
      60,
    );
    return tool.execute(args, context({ sessionId, timeoutSeconds, ...overrides }));
  };
  return { adapter, events, catalog, skills, credentials, clock, registered, prepare, call, servers };
}

export async function until(condition: () => boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
