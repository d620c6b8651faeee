import { describe, expect, it } from 'vitest';
import { drivers, type TestClock } from '../../src';
import { DefaultPolicyEngine } from '@veetbot/policy';
import { InMemoryToolRegistry } from '@veetbot/registry';
import type { DynamicTool, McpClientPort, McpSessionRequest, RegistrationReport, Stores, Tool, ToolRegistry } from '@veetbot/ports';
import type { Principal } from '@veetbot/domain';
import { Runtime } from '@veetbot/runtime';
import { TinyValidator, acmePing, callOf, newTenant, tool, useHarness } from './fixtures';

/** Discovers `mcp.acme.ping` at a version chosen per tenant, answering with that tenant's name. */
class PerTenantMcp implements McpClientPort {
  readonly requests: McpSessionRequest[] = [];
  constructor(private readonly versionFor: (tenantId: string) => string) {}
  async prepareSession(request: McpSessionRequest, register: (tools: readonly DynamicTool[]) => Promise<RegistrationReport>) {
    this.requests.push(request);
    const version = this.versionFor(request.tenantId);
    const ping = acmePing(version, 'Ping.', `pong from ${request.tenantId}`);
    const registration = await register([ping]);
    return {
      servers: [
        {
          serverId: 'acme',
          transport: 'http' as const,
          status: 'connected' as const,
          reasonCode: null,
          catalogHash: version,
          toolCount: 1,
        },
      ],
      registration,
    };
  }
  async releaseSession(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

const builtins: Tool[] = [tool({ name: 'demo.read' })];
const who = (tenant: string): Principal => ({ tenant_id: tenant, principal_id: 'p', scopes: ['demo.read'] });

/** A process: its own registries (builtins + each tenant's dynamic tools), over shared stores. */
function process_(stores: Stores, clock: TestClock, mcp: McpClientPort, owner: string): Runtime {
  const validator = new TinyValidator();
  const base = new InMemoryToolRegistry({ validator, globalMaximumOutputBytes: 1 << 20 });
  base.registerBuiltins(builtins);
  const perTenant = new Map<string, ToolRegistry>();
  return new Runtime({
    registry: base,
    registries: {
      forTenant(tenantId) {
        let r = perTenant.get(tenantId);
        if (r === undefined) {
          const fresh = new InMemoryToolRegistry({ validator, globalMaximumOutputBytes: 1 << 20 });
          fresh.registerBuiltins(builtins);
          perTenant.set(tenantId, fresh);
          r = fresh;
        }
        return r;
      },
    },
    validator,
    policy: new DefaultPolicyEngine(),
    clock,
    stores,
    artifacts: {
      forScope: () => ({
        write: async () => {
          throw new Error('unused');
        },
      }),
    },
    credentials: {
      resolve: async () => {
        throw new Error('unused');
      },
    },
    owner,
    workspaces: { forRun: async () => null },
    mcp,
  });
}

async function openAndRun(api: Runtime, worker: Runtime, _stores: Stores, clock: TestClock, tenant: string) {
  const session = await api.openSession(tenant, who(tenant), { agentId: 'a' }, { flags: {}, targetKinds: ['in_process', 'mcp'] });
  const run = await api.createRun(tenant, session.id, { deadlineAt: new Date(clock.now().getTime() + 3_600_000) });
  const outcome = await worker.submitStep({
    tenantId: tenant,
    runId: run.id,
    stepNumber: 1,
    principal: who(tenant),
    calls: [callOf('c1', 'mcp.acme.ping')],
  });
  return { session, run, outcome };
}

describe.each(drivers())('runtime tenant registries on %s', (driver) => {
  const harness = useHarness(driver);

  describe('dynamic tools are per tenant, and a worker prepares what a session pinned', () => {
    it('two tenants with a server of the same id each pin and call their own tool', async () => {
      const { stores, clock, tenantId: ta } = await harness({ tools: builtins });
      const tb = await newTenant(stores, 'tb');
      // The same catalog (same version) on both tenants' servers: with one registry for every
      // tenant, the second registration would take over the first tenant's tool.
      const mcp = new PerTenantMcp(() => 'same');
      const api = process_(stores, clock, mcp, 'api');
      const a = await openAndRun(api, api, stores, clock, ta);
      const b = await openAndRun(api, api, stores, clock, tb);
      expect(JSON.stringify(a.outcome.items[0]?.content)).toContain(`pong from ${ta}`);
      expect(JSON.stringify(b.outcome.items[0]?.content)).toContain(`pong from ${tb}`);
      expect(a.outcome.items[0]?.content[0]).toMatchObject({ trust: 'external_untrusted' });
      // Tenant A again, after tenant B registered its own `mcp.acme.ping`.
      const again = await api.submitStep({
        tenantId: ta,
        runId: a.run.id,
        stepNumber: 2,
        principal: who(ta),
        calls: [callOf('c2', 'mcp.acme.ping')],
      });
      expect(JSON.stringify(again.items[0]?.content)).toContain(`pong from ${ta}`);
    });

    it('a worker that never saw the session open prepares exactly the pinned servers, once', async () => {
      const { stores, clock, tenantId: t1 } = await harness({ tools: builtins });
      const mcp = new PerTenantMcp(() => 'c0ffee');
      const api = process_(stores, clock, mcp, 'api');
      const worker = process_(stores, clock, mcp, 'worker');
      const { session, run, outcome } = await openAndRun(api, worker, stores, clock, t1);
      expect(outcome.items[0]?.outcome).toMatchObject({ status: 'succeeded' });
      expect(mcp.requests.map((r) => r.serverIds ?? 'all')).toEqual(['all', ['acme']]);
      expect(mcp.requests[1]).toMatchObject({ tenantId: t1, sessionId: session.id });
      // A second step in the same session prepares nothing again.
      const second = await worker.submitStep({
        tenantId: t1,
        runId: run.id,
        stepNumber: 2,
        principal: who(t1),
        calls: [callOf('c2', 'mcp.acme.ping')],
      });
      expect(second.items[0]?.outcome).toMatchObject({ status: 'succeeded' });
      expect(mcp.requests).toHaveLength(2);
    });

    it('a pinned tool the server no longer offers at the pinned version is unavailable tool.withdrawn', async () => {
      const { stores, clock, tenantId: t1 } = await harness({ tools: builtins });
      let version = 'v1';
      const mcp = new PerTenantMcp(() => version);
      const api = process_(stores, clock, mcp, 'api');
      const worker = process_(stores, clock, mcp, 'worker');
      const session = await api.openSession(t1, who(t1), { agentId: 'a' }, { flags: {}, targetKinds: ['in_process', 'mcp'] });
      const run = await api.createRun(t1, session.id, { deadlineAt: new Date(clock.now().getTime() + 3_600_000) });
      version = 'v2'; // the server changed its catalog between session open and the first call
      const outcome = await worker.submitStep({
        tenantId: t1,
        runId: run.id,
        stepNumber: 1,
        principal: who(t1),
        calls: [callOf('c1', 'mcp.acme.ping')],
      });
      expect(outcome.items[0]?.outcome).toMatchObject({ status: 'unavailable', reason_code: 'tool.withdrawn' });
      expect(session.specs.find((s) => s.name === 'mcp.acme.ping')?.version).toBe('v1');
    });
  });
});
