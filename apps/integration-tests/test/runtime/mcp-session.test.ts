import { describe, expect, it } from 'vitest';
import { drivers } from '../../src';
import type { DynamicTool, McpClientPort, McpSessionRequest, RegistrationReport } from '@veetbot/ports';
import { acmePing, tool, useHarness } from './fixtures';

/** An McpClientPort that "discovers" one tool on server `acme` and records what it was asked. */
class FakeMcp implements McpClientPort {
  readonly requests: McpSessionRequest[] = [];
  reports: RegistrationReport[] = [];
  async prepareSession(request: McpSessionRequest, register: (tools: readonly DynamicTool[]) => Promise<RegistrationReport>) {
    this.requests.push(request);
    const ping = acmePing('c0ffee', 'Ping the acme server.', 'pong');
    const registration = await register([ping]);
    this.reports.push(registration);
    return {
      servers: [
        {
          serverId: 'acme',
          transport: 'http' as const,
          status: 'connected' as const,
          reasonCode: null,
          catalogHash: 'c0ffee',
          toolCount: 1,
        },
      ],
      registration,
    };
  }
  async releaseSession(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

describe.each(drivers())('runtime mcp session on %s', (driver) => {
  const harness = useHarness(driver);

  describe('openSession with an McpClientPort', () => {
    it('prepares MCP under the session id it then stores, and pins the discovered tools', async () => {
      const mcp = new FakeMcp();
      const h = await harness({ tools: [tool({ name: 'demo.read' })], mcp });
      const opened = await h.runtime.openSessionWithReport(
        h.tenantId,
        h.principal,
        { agentId: 'agent' },
        { flags: {}, targetKinds: ['in_process', 'mcp'] },
        { mcpServerIds: ['acme'] },
      );
      expect(mcp.requests).toEqual([{ tenantId: h.tenantId, sessionId: opened.session.id, principal: h.principal, serverIds: ['acme'] }]);
      expect(mcp.reports[0]).toMatchObject({ source: 'mcp', registered: ['mcp.acme.ping'], rejected: [] });
      expect(opened.session.toolNames).toEqual(['demo.read', 'mcp.acme.ping']);
      expect(opened.mcp?.servers).toEqual([expect.objectContaining({ serverId: 'acme', status: 'connected', toolCount: 1 })]);
      expect(await h.stores.sessions.get(h.tenantId, opened.session.id)).toMatchObject({
        id: opened.session.id,
        toolNames: ['demo.read', 'mcp.acme.ping'],
      });
    });

    it('prepares every configured server when none is named, and reports null without MCP', async () => {
      const mcp = new FakeMcp();
      const h = await harness({ tools: [tool({ name: 'demo.read' })], mcp });
      await h.runtime.openSession(h.tenantId, h.principal, { agentId: 'agent' }, { flags: {}, targetKinds: ['in_process', 'mcp'] });
      expect(mcp.requests[0]).not.toHaveProperty('serverIds');
      const plain = await harness({ tools: [tool({ name: 'demo.read' })] });
      const opened = await plain.runtime.openSessionWithReport(
        plain.tenantId,
        plain.principal,
        { agentId: 'agent' },
        { flags: {}, targetKinds: ['in_process'] },
      );
      expect(opened.mcp).toBeNull();
      expect(opened.session.toolNames).toEqual(['demo.read']);
    });
  });
});
