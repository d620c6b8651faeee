import { randomUUID } from 'node:crypto';
import type { GatewayBinding, GatewayRuntime } from '@veetbot/ports';
import { ProtocolError, ProtocolErrorCode, Server, type CallToolResult, type ServerContext } from '@modelcontextprotocol/server';
import { callInput } from './call-input';
import { toCallToolResult } from './call-result';

export interface ToolServerOptions {
  readonly runtime: GatewayRuntime;
  /**
   * The binding a request acts under (its context carries the principal of the key that sent
   * it); throws a ProtocolError when there is none.
   */
  readonly binding: (ctx: ServerContext) => Promise<GatewayBinding>;
  /**
   * For a binding the gateway chose (a key's default run): the run ended, open the next one.
   * A call refused because its run or session no longer takes calls is then made once more in
   * the new run (docs/adr/0061).
   */
  readonly reopen?: (ended: GatewayBinding) => Promise<GatewayBinding>;
  readonly callWaitMs: number;
  /** True once the gateway is shutting down: an abort then is ours, not the client's cancellation. */
  readonly stopping: () => boolean;
  readonly version: string;
  readonly onError: (error: unknown) => void;
  readonly onProtocolError: (error: Error) => void;
}

/**
 * A handler's failure as the client sees it: a ProtocolError (ours, deliberate) as it is;
 * anything else is reported and answered with a message that says nothing about it.
 */
async function guarded<T>(onError: (error: unknown) => void, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (ProtocolError.isInstance(error)) throw error;
    onError(error);
    throw new ProtocolError(ProtocolErrorCode.InternalError, 'An internal error occurred; it has been logged.');
  }
}

const INSTRUCTIONS =
  "veetbot's governed tools for one session: every call is recorded, checked by policy, may wait for a person's approval, and is never run twice for one call id.";

/**
 * One MCP server instance over a binding (the SDK builds one per request on the stateless
 * path and one per MCP session on the stateful path). It declares tools WITHOUT listChanged:
 * the set is pinned for the session (§ Advertisement is pinned), so
 * notifications/tools/list_changed is never sent. ping and logging/setLevel are the SDK's.
 */
export function toolServer(options: ToolServerOptions): Server {
  // The low-level Server (not McpServer): it serves raw JSON Schemas exactly as pinned.
  const server = new Server(
    { name: 'veetbot', version: options.version },
    { capabilities: { tools: { listChanged: false }, logging: {} }, instructions: INSTRUCTIONS },
  );

  server.setRequestHandler('tools/list', (_request, ctx) =>
    guarded(options.onError, async () => {
      const tools = await options.runtime.listTools(await options.binding(ctx));
      return {
        tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema as { type: 'object' } })),
      };
    }),
  );

  server.setRequestHandler('tools/call', (request, ctx) => guarded(options.onError, () => callTool(options, request.params, ctx)));
  server.onerror = (error) => options.onProtocolError(error);
  return server;
}

async function callTool(
  options: ToolServerOptions,
  params: { name: string; arguments?: Record<string, unknown> | undefined; _meta?: Record<string, unknown> | undefined },
  ctx: ServerContext,
): Promise<CallToolResult> {
  const input = callInput(params);
  let binding = await options.binding(ctx);
  const callId = input.callId ?? `mcp:${randomUUID()}`;
  const signal = ctx.mcpReq.signal;
  // notifications/cancelled (stateful) or the request going away (stateless) aborts the
  // request's signal: that is the client's cancellation, and the pipeline's is the run's
  // token (§ cancellation; docs/adr/0044). A gateway that is stopping aborts too: not a cancel.
  let settled = false;
  const cancel = () => {
    if (settled || options.stopping()) return;
    options.runtime.cancel(binding).catch(options.onError);
  };
  signal.addEventListener('abort', cancel, { once: true });
  const progressToken = params._meta?.progressToken;
  const onWaiting =
    typeof progressToken === 'string' || typeof progressToken === 'number'
      ? (elapsedMs: number) => {
          ctx.mcpReq
            .notify({
              method: 'notifications/progress',
              params: { progressToken, progress: Math.floor(elapsedMs / 1000), message: 'The call is running.' },
            })
            .catch(() => undefined);
        }
      : undefined;
  const call = { callId, toolName: input.toolName, arguments: input.arguments, contextTrust: input.contextTrust };
  const callOptions = { waitMs: options.callWaitMs, signal, ...(onWaiting === undefined ? {} : { onWaiting }) };
  try {
    let result = await options.runtime.call(binding, call, callOptions);
    if (
      options.reopen !== undefined &&
      result.kind === 'refused' &&
      (result.code === 'run.not_active' || result.code === 'session.closed') &&
      !signal.aborted
    ) {
      binding = await options.reopen(binding);
      result = await options.runtime.call(binding, call, callOptions);
    }
    if (result.kind === 'refused' && result.code === 'not_found') throw new ProtocolError(ProtocolErrorCode.InvalidParams, result.message);
    // MCP: an unknown tool is a protocol error (-32602), not a tool result (docs/adr/0061).
    if (result.kind === 'refused' && result.code === 'tool.unknown')
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${JSON.stringify(input.toolName)}.`);
    return toCallToolResult(result);
  } finally {
    settled = true;
    signal.removeEventListener('abort', cancel);
  }
}
