import type { DynamicTool, McpClientPort, McpSessionPreparationResult, RegistrationReport } from '@veetbot/ports';
import { describe, expect, it } from 'vitest';

export interface McpClientSubject {
  readonly port: McpClientPort;
  readonly tenantId: string;
  /**
   * The tenant's configured servers in configured order. A reachable one discovers at least one
   * tool; an unreachable one cannot be connected to. At least two reachable servers.
   */
  readonly servers: readonly { readonly serverId: string; readonly reachable: boolean }[];
  /** Stop what the subject started besides the port (servers, processes). */
  dispose(): Promise<void>;
}

/**
 * ports.McpClientPort (ports/mcp.ts), stated once. § MCP, Discovery: at session open, for each
 * configured server "connect, initialize, tools/list, map, register, hash"; "Preparation is
 * recorded per server, so a later full discovery for the same session adds only the servers not
 * yet attempted"; "Preparation that names its servers [...] is always live". § Where a server may
 * live: "Run teardown releases its session's transports promptly [...] without discarding the
 * pinned catalog"; "Shutdown drains in-progress preparation and closes every transport". No SDK
 * type crosses the port: what it returns is plain data.
 */
export function describeMcpClientContract(name: string, make: () => Promise<McpClientSubject>): void {
  let sessions = 0;

  /** A register callback that records every call, answering as registerDynamic(…, 'mcp') would. */
  function recorder() {
    const calls: (readonly DynamicTool[])[] = [];
    const register = async (tools: readonly DynamicTool[]): Promise<RegistrationReport> => {
      calls.push(tools);
      return { source: 'mcp', registered: tools.map((t) => t.spec.name), rejected: [] };
    };
    return { calls, register };
  }

  async function withSubject(
    work: (
      subject: McpClientSubject,
      prepare: (
        sessionId: string,
        register: ReturnType<typeof recorder>['register'],
        serverIds?: readonly string[],
      ) => Promise<McpSessionPreparationResult>,
    ) => Promise<void>,
  ): Promise<void> {
    const subject = await make();
    const principal = { tenant_id: subject.tenantId, principal_id: 'contract', scopes: [] };
    try {
      await work(subject, (sessionId, register, serverIds) =>
        subject.port.prepareSession(
          { tenantId: subject.tenantId, sessionId, principal, ...(serverIds === undefined ? {} : { serverIds }) },
          register,
        ),
      );
    } finally {
      await subject.port.shutdown();
      await subject.dispose();
    }
  }

  const sessionId = () => `contract-session-${++sessions}`;
  const serverOf = (tool: DynamicTool) => tool.spec.server_id;

  describe(`McpClientPort contract: ${name}`, () => {
    it('prepares every configured server in order, registers their tools once, and returns what register said', async () => {
      await withSubject(async (subject, prepare) => {
        const { calls, register } = recorder();
        const result = await prepare(sessionId(), register);
        expect(calls).toHaveLength(1);
        const tools = calls[0]!;
        expect(result.registration).toEqual({ source: 'mcp', registered: tools.map((t) => t.spec.name), rejected: [] });
        expect(result.servers.map((s) => s.serverId)).toEqual(subject.servers.map((s) => s.serverId));
        for (const [i, server] of result.servers.entries()) {
          const own = tools.filter((t) => serverOf(t) === server.serverId);
          if (subject.servers[i]!.reachable) {
            expect(['connected', 'pinned']).toContain(server.status);
            expect(server).toMatchObject({ reasonCode: null, toolCount: own.length });
            expect(typeof server.catalogHash).toBe('string');
            expect(own.length).toBeGreaterThan(0);
          } else {
            expect(server).toMatchObject({ status: 'failed', catalogHash: null, toolCount: 0 });
            expect(server.reasonCode).toMatch(/^tool\./);
            expect(own).toEqual([]);
          }
        }
        for (const tool of tools) {
          expect(tool.spec).toMatchObject({ source: 'mcp', target_kind: 'mcp' });
          expect(tool.spec.name.startsWith(`mcp.${serverOf(tool)}.`)).toBe(true);
        }
        // Plain data: nothing of a transport or an SDK object crosses the port.
        expect(JSON.parse(JSON.stringify(result))).toEqual(result);
      });
    });

    it('prepares only the servers a request names, live; a later full preparation adds only the others', async () => {
      await withSubject(async (subject, prepare) => {
        const [first, ...rest] = subject.servers.filter((s) => s.reachable);
        const session = sessionId();
        const named = recorder();
        const result = await prepare(session, named.register, [first!.serverId]);
        expect(result.servers).toEqual([expect.objectContaining({ serverId: first!.serverId, status: 'connected' })]);
        expect(new Set(named.calls.flat().map(serverOf))).toEqual(new Set([first!.serverId]));

        const full = recorder();
        const all = await prepare(session, full.register);
        expect(all.servers.map((s) => s.serverId)).toEqual(subject.servers.map((s) => s.serverId));
        expect(all.servers.find((s) => s.serverId === first!.serverId)).toEqual(result.servers[0]);
        const added = new Set(full.calls.flat().map(serverOf));
        expect(added.has(first!.serverId)).toBe(false);
        for (const server of rest) expect(added.has(server.serverId)).toBe(true);
      });
    });

    it('keeps sessions apart: another session of the tenant prepares and registers on its own', async () => {
      await withSubject(async (_subject, prepare) => {
        const one = recorder();
        const two = recorder();
        const a = await prepare(sessionId(), one.register);
        const b = await prepare(sessionId(), two.register);
        expect(two.calls.flat().map((t) => t.spec.name)).toEqual(one.calls.flat().map((t) => t.spec.name));
        expect(b.servers.map((s) => [s.serverId, s.catalogHash])).toEqual(a.servers.map((s) => [s.serverId, s.catalogHash]));
      });
    });

    it('releasing a session keeps its pin: the next preparation of it discovers nothing new and reports the same catalogs', async () => {
      await withSubject(async (subject, prepare) => {
        const session = sessionId();
        const before = await prepare(session, recorder().register);
        await subject.port.releaseSession(session);
        await subject.port.releaseSession(session);
        // A session this port never prepared: nothing to release, and no error.
        await subject.port.releaseSession(sessionId());
        const after = recorder();
        const again = await prepare(session, after.register);
        expect(after.calls.flat()).toEqual([]);
        expect(again.servers.map((s) => [s.serverId, s.catalogHash, s.toolCount])).toEqual(
          before.servers.map((s) => [s.serverId, s.catalogHash, s.toolCount]),
        );
      });
    });

    it('shutdown is orderly and final: it can be called twice, and no preparation starts afterwards', async () => {
      await withSubject(async (subject, prepare) => {
        await prepare(sessionId(), recorder().register);
        await subject.port.shutdown();
        await subject.port.shutdown();
        const late = recorder();
        await expect(prepare(sessionId(), late.register)).rejects.toThrow();
        expect(late.calls).toEqual([]);
      });
    });
  });
}
