import { mcpToolName } from '@veetbot/domain';
import type { ReconcileAnswer, ReconcileQuery, Reconciler, Reconcilers } from '@veetbot/ports';
import { effectiveTimeouts, type McpLookupTool, type McpServerConfig } from '../config/server-config';
import type { LooseCallToolResult } from '../connection/result-schemas';
import { readLookupAnswer, type LookupReading } from './lookup-answer';

/**
 * Issue 25 item 3, the MCP half (docs/adr/0066; the port is docs/adr/0063's): an operator server
 * whose classification names a lookup tool gets a reconciler for each of its listed tools. It
 * calls the LOOKUP tool — never the original tool, never with the call's own arguments — with
 * the call's key as the one argument, and reads the answer against the fixed shape.
 *
 * It asks twice, over one connection, and answers definitely only when both answers fit and
 * agree: a lookup that flaps, answers about another key or in another shape is `unknown`. A
 * transport failure, a timeout or a JSON-RPC error is a failed attempt (a throw: the sweep
 * retries with backoff, then leaves it to a person), because it says nothing about the call.
 * A server that gives the same wrong answer every time (a coherent liar) cannot be caught by
 * asking it, and is out of scope, as a lying outbox is in ADR 0063.
 */

/** What a reconciler needs of a connection: one tools/call, and closing. */
export interface LookupConnection {
  callTool(name: string, args: Record<string, unknown>, timeoutMs: number, signal?: AbortSignal): Promise<LooseCallToolResult>;
  close(): Promise<void>;
}

/** Opens a connection to an operator server for a tenant (its credentials, its egress). */
export type OpenLookupConnection = (tenantId: string, config: McpServerConfig, signal: AbortSignal) => Promise<LookupConnection>;

type LookupServer = McpServerConfig & { readonly lookupTool: McpLookupTool; readonly tools: readonly string[] };

/** The reconcilers of every operator server with a lookup tool (enabled, with a tools list). */
export function createMcpLookupReconcilers(servers: readonly McpServerConfig[], open: OpenLookupConnection): Reconcilers {
  const byTool = new Map<string, Reconciler>();
  for (const server of servers) {
    if (!server.enabled || server.lookupTool === undefined || server.tools === undefined) continue;
    const lookupServer = server as LookupServer;
    for (const remote of server.tools) {
      // The lookup tool does not reconcile its own calls (it is a read).
      if (remote === server.lookupTool.name) continue;
      const name = mcpToolName(server.serverId, remote);
      byTool.set(name, new LookupReconciler(name, lookupServer, open));
    }
  }
  return {
    forTool: (toolName) => byTool.get(toolName) ?? null,
    toolNames: () => [...byTool.keys()],
  };
}

class LookupReconciler implements Reconciler {
  readonly name: string;
  readonly #server: LookupServer;
  readonly #open: OpenLookupConnection;

  constructor(name: string, server: LookupServer, open: OpenLookupConnection) {
    this.name = name;
    this.#server = server;
    this.#open = open;
  }

  async reconcile(query: ReconcileQuery): Promise<ReconcileAnswer> {
    const { lookupTool, serverId } = this.#server;
    const asked = `Asked ${lookupTool.name} on server ${serverId} about the call's idempotency key`;
    const connection = await this.#open(query.tenantId, this.#server, query.signal);
    try {
      const first = await this.#ask(connection, query);
      if (!first.fits) return { outcome: 'unknown', evidence: `${asked}: ${first.why}.` };
      const second = await this.#ask(connection, query);
      if (!second.fits) return { outcome: 'unknown', evidence: `${asked} twice: the second time ${second.why}.` };
      if (first.status !== second.status)
        return { outcome: 'unknown', evidence: `${asked} twice: the answers disagreed (${first.status}, then ${second.status}).` };
      return { outcome: first.status, evidence: `${asked} twice: both answers were ${first.status}.` };
    } finally {
      await connection.close().catch(() => undefined);
    }
  }

  /** One lookup: the key as the one argument, and no idempotency key of its own (see the ADR). */
  async #ask(connection: LookupConnection, query: ReconcileQuery): Promise<LookupReading> {
    const { lookupTool } = this.#server;
    const result = await connection.callTool(
      lookupTool.name,
      { [lookupTool.keyArgument]: query.idempotencyKey },
      effectiveTimeouts(this.#server).requestMs,
      query.signal,
    );
    return readLookupAnswer(result, query.idempotencyKey);
  }
}
