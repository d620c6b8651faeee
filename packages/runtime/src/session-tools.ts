import type { Principal } from '@veetbot/domain';
import type { SessionRow, ToolRegistry } from '@veetbot/ports';
import type { RuntimeCore } from './runtime-core';

/**
 * A worker that never saw a session open has not registered that session's MCP tools: the API
 * discovered them into its own process. Before running the session's calls, prepare exactly
 * the servers whose pinned tools this process cannot resolve (ADR-0131: a reused pin's "server
 * starts on the first call of one of its tools"). What the pin names and the registry still
 * lacks afterwards — a tool the server withdrew or changed — resolves at call time as
 * unavailable `tool.withdrawn` (executor step 1), never as a rewrite of the pin.
 */
export async function ensureSessionTools(
  core: RuntimeCore,
  registry: ToolRegistry,
  session: SessionRow,
  principal: Principal,
  prepared: Set<string>,
): Promise<void> {
  const { mcp } = core.deps;
  if (mcp === undefined) return;
  const key = `${session.tenantId}\0${session.id}`;
  if (prepared.has(key)) return;
  const missing = new Set<string>();
  for (const spec of session.specs) {
    if (spec.source !== 'mcp' || spec.server_id === null) continue;
    try {
      registry.get(spec.name, spec.version);
    } catch {
      missing.add(spec.server_id);
    }
  }
  if (missing.size > 0) {
    await mcp.prepareSession({ tenantId: session.tenantId, sessionId: session.id, principal, serverIds: [...missing].sort() }, (tools) =>
      registry.registerDynamic(tools, 'mcp'),
    );
  }
  // Once per session per process: a server that failed to prepare stays failed for the session.
  prepared.add(key);
}
