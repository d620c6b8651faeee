import type { Reconcilers } from '@veetbot/ports';
import { McpConnection } from '../connection/mcp-connection';
import { createMcpLookupReconcilers } from '../reconcile/lookup-reconcilers';
import type { AdapterState } from './adapter-state';
import type { ServerConnections } from './server-connections';

/**
 * docs/adr/0066: the lookup reconcilers of the operator's servers (only the operator's: a
 * tenant cannot name a lookup, and a tenant server's answer never settles a call). Each attempt
 * opens its own short connection with the operator server's credentials for that tenant and its
 * egress policy — as a call would — and closes it; no session's connection is borrowed.
 */
export function lookupReconcilers(state: AdapterState, connections: ServerConnections): Reconcilers {
  const operator = (state.deps.servers.operator?.() ?? []).filter((server) => server.origin === 'operator');
  return createMcpLookupReconcilers(operator, (tenantId, config, signal) =>
    McpConnection.open(config, connections.depsFor(tenantId, { ...config, origin: 'operator' }), { signal }),
  );
}
