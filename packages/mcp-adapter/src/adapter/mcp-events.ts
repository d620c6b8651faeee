import { sha256Hex } from '@veetbot/domain';
import type { NewEvent } from '@veetbot/ports';
import { reportedName } from '../mapping/remote-catalog';

/*
 * § Events and telemetry, the MCP families. Tenant-level events (runId null) with stable
 * derivation keys: the same fact derived twice is one event. Payloads carry identity and
 * classification and reason codes — never a server's error text.
 */

export interface EventScope {
  readonly sessionId: string;
  readonly serverId: string;
  readonly at: Date;
}

function event(scope: EventScope, type: string, discriminator: string, payload: Record<string, unknown>): NewEvent {
  return {
    runId: null,
    type,
    payload,
    derivationKey: `mcp:${scope.sessionId}:${scope.serverId}:${type}:${discriminator}`,
    createdAt: scope.at,
  };
}

export const mcpEvents = {
  connected: (s: EventScope, handshake: number, transport: string, tools: number, durationMs: number) =>
    event(s, 'mcp.server.connected', `h${handshake}`, { server: s.serverId, transport, tools, duration_ms: durationMs }),
  pinned: (s: EventScope, catalogHash: string, transport: string, tools: number) =>
    event(s, 'mcp.server.pinned', catalogHash, { server: s.serverId, transport, tools }),
  disconnected: (s: EventScope, handshake: number, reasonCode: string) =>
    event(s, 'mcp.server.disconnected', `h${handshake}`, { server: s.serverId, reason_code: reasonCode }),
  reauthenticated: (s: EventScope, scheme: string, outcome: string) =>
    event(s, 'mcp.server.reauthenticated', 'ladder', { server: s.serverId, scheme, outcome }),
  catalogChanged: (s: EventScope, oldHash: string, newHash: string) =>
    event(s, 'mcp.catalog.changed', `${oldHash}:${newHash}`, { server: s.serverId, old_hash: oldHash, new_hash: newHash }),
  catalogConflict: (s: EventScope, catalogHash: string, registryName: string, remoteNames: readonly string[]) =>
    event(s, 'mcp.catalog.conflict', `${catalogHash}:${registryName}`, { server: s.serverId, remote_names: remoteNames.map(reportedName) }),
  toolRejected: (s: EventScope, catalogHash: string, remoteName: string, reason: string) =>
    event(s, 'mcp.tool.rejected', `${catalogHash}:${sha256Hex(remoteName).slice(0, 16)}`, {
      server: s.serverId,
      remote_name: reportedName(remoteName),
      reason,
    }),
};
