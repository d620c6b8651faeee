import { CONTROL_TOOL_NAMES, TOOL_CALL_NAME, type Principal, type ToolSpec } from '@veetbot/domain';
import { endSuspendedOfCancelledRun, isSuspended } from '@veetbot/executor';
import type { AgentSpec, McpSessionPreparationResult, RunRow, RuntimeEnvironment, SessionRow } from '@veetbot/ports';
import { storedBudgets, type RunBudgets } from './run-budgets';
import { RunAborted, withRunLease } from './run-lease';
import { RuntimeError, runBusy, runNotFound, sessionNotFound } from './runtime-errors';
import { pipelinesFor, type RuntimeCore } from './runtime-core';
import { atWork, tearDown } from './run-teardown';
import { joinParentSoon } from './control/resume';

/** What openSession may say beyond the pin itself. */
export interface OpenSessionOptions {
  /**
   * MCP servers to prepare (typed work that names its servers; always live). Undefined: every
   * server configured for the tenant. Ignored when no McpClientPort is composed.
   */
  readonly mcpServerIds?: readonly string[];
  /** The session's id, when the caller derives it (delegate.run's child session); a fresh uuid otherwise. */
  readonly sessionId?: string;
  /** Pinned tools to advertise by a one-line deferred-index entry (tool.call reaches them). */
  readonly deferredTools?: readonly string[];
}

export interface OpenedSession {
  readonly session: SessionRow;
  /** The MCP preparation (per-server status and the registration report); null without MCP. */
  readonly mcp: McpSessionPreparationResult | null;
  /**
   * Entries of the agent's enabledTools that name no registered tool (an exact name nobody
   * registered, or a `domain.*` no tool falls under), after discovery: a typo otherwise just
   * silently shrinks the pin. Empty when enabledTools is absent.
   */
  readonly unknownTools: readonly string[];
}

/** The enabledTools entries that match no registered tool name (`x.*` is a prefix, as in agentEnables). */
export function unknownEnabledTools(enabledTools: readonly string[] | undefined, names: readonly string[]): string[] {
  if (enabledTools === undefined) return [];
  const known = new Set(names);
  return [...new Set(enabledTools)].filter((entry) =>
    entry.endsWith('.*') ? !names.some((n) => n.startsWith(entry.slice(0, -1))) : !known.has(entry),
  );
}

/**
 * § Control tools, tool.call: a deferred tool is "pinned for the session and authorized like any
 * other, but advertised by a one-line entry". So every deferred name must be in the pin, and
 * tool.call must be too (nothing else reaches a deferred tool); a control tool is never deferred,
 * since tool.call refuses to reach one (docs/adr/0035). Null when the list is acceptable.
 */
export function deferredToolsRefusal(deferred: readonly string[] | undefined, pinnedSpecs: readonly ToolSpec[]): string | null {
  if (deferred === undefined || deferred.length === 0) return null;
  const pinned = new Map(pinnedSpecs.map((s) => [s.name, s]));
  for (const [i, name] of deferred.entries()) {
    if (CONTROL_TOOL_NAMES.has(name)) return `deferred_tools.${i} names a control tool; control tools are never deferred.`;
    const spec = pinned.get(name);
    if (spec === undefined) return `deferred_tools.${i} names a tool that is not in the session's pinned tool set.`;
    // § Milestone 26: an application-only tool is never shown to the model, not even as one line.
    if (!spec.model_visible) return `deferred_tools.${i} names an application-only tool, which is never advertised to the model.`;
  }
  if (!pinned.has(TOOL_CALL_NAME)) return 'Deferred tools need tool.call in the pinned tool set; nothing else reaches them.';
  return null;
}

/**
 * § Advertisement is pinned: the tool set is resolved once, at session open, through
 * specsForSession's four filters, and the pin — names, full specs, tool_schema_sha256 — is
 * stored on the session row. Every later call resolves against that row, whatever the
 * registry learns afterwards. With MCP composed, discovery runs first (the session id is
 * chosen before the row exists, so the adapter keys its transports by it) and the tools it
 * registers are candidates for the pin like any other.
 */
export async function openSession(
  core: RuntimeCore,
  tenantId: string,
  principal: Principal,
  agent: AgentSpec,
  environment: RuntimeEnvironment,
  options: OpenSessionOptions = {},
): Promise<OpenedSession> {
  if (principal.tenant_id !== tenantId) throw new RuntimeError('runtime.principal_mismatch', 'The principal belongs to another tenant.');
  const { policy, stores, clock, mcp } = core.deps;
  const { registry } = pipelinesFor(core, tenantId);
  const sessionId = options.sessionId ?? globalThis.crypto.randomUUID();
  let prepared: McpSessionPreparationResult | null = null;
  if (mcp !== undefined) {
    prepared = await mcp.prepareSession(
      { tenantId, sessionId, principal, ...(options.mcpServerIds === undefined ? {} : { serverIds: options.mcpServerIds }) },
      (tools) => registry.registerDynamic(tools, 'mcp'),
    );
  }
  const pinned = registry.specsForSession(agent, principal, policy, environment);
  const refused = deferredToolsRefusal(options.deferredTools, pinned.specs);
  if (refused !== null) {
    // Nothing is stored; the transports discovery opened for this session id go with it.
    if (prepared !== null) await mcp?.releaseSession(sessionId).catch(() => undefined);
    throw new RuntimeError('runtime.session_invalid', refused);
  }
  const session = await stores.sessions.create(tenantId, {
    id: sessionId,
    principalId: principal.principal_id,
    agentId: agent.agentId,
    toolNames: pinned.toolNames,
    specs: pinned.specs,
    toolSchemaSha256: pinned.toolSchemaSha256,
    deferredToolNames: [...new Set(options.deferredTools ?? [])],
    createdAt: clock.now(),
  });
  core.preparedSessions.add(`${tenantId}\0${session.id}`);
  return {
    session,
    mcp: prepared,
    unknownTools: unknownEnabledTools(
      agent.enabledTools,
      registry.list().map((spec) => spec.name),
    ),
  };
}

export async function createRun(
  core: RuntimeCore,
  tenantId: string,
  sessionId: string,
  options: { deadlineAt: Date; budgets?: RunBudgets },
): Promise<RunRow> {
  const { stores, clock } = core.deps;
  if (!(options.deadlineAt instanceof Date) || Number.isNaN(options.deadlineAt.getTime())) {
    throw new RuntimeError('runtime.run_invalid', 'deadlineAt must be a valid date.');
  }
  const limit = options.budgets?.maximumToolCalls;
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0)) {
    throw new RuntimeError('runtime.run_invalid', 'budgets.maximumToolCalls must be a non-negative integer.');
  }
  const session = await stores.sessions.get(tenantId, sessionId);
  if (session === null) throw sessionNotFound();
  if (session.status !== 'open') throw new RuntimeError('runtime.session_closed', 'The session is closed.');
  return stores.runs.create(tenantId, {
    sessionId,
    deadlineAt: options.deadlineAt,
    budgets: storedBudgets(options.budgets),
    createdAt: clock.now(),
  });
}

/**
 * Cancel a run: status `cancelled`, this process's in-flight calls see their cancellation
 * token fire (another process's see it at their next lease renewal), and a suspended call —
 * RUNNING with a released lease, waiting for a user or a child run — is completed as failed
 * with tool.run_cancelled (§ Control tools). Cancelling a cancelled run is a no-op that still
 * finishes that last part; a run that succeeded or failed cannot be cancelled.
 */
export async function cancelRun(core: RuntimeCore, tenantId: string, runId: string): Promise<RunRow> {
  const { stores, clock } = core.deps;
  const run = await stores.runs.get(tenantId, runId);
  if (run === null) throw runNotFound();
  if (run.status === 'succeeded' || run.status === 'failed') throw new RuntimeError('runtime.run_not_active', 'The run has already ended.');
  const cancelled = run.status === 'cancelled' ? run : await stores.runs.setStatus(tenantId, runId, 'cancelled', clock.now());
  core.active.abort(tenantId, runId, new RunAborted('cancelled'));

  const suspended = (await stores.invocations.listForRun(tenantId, runId)).filter(isSuspended);
  // § Control tools: cancelling the parent cancels the child (and its children) first.
  for (const row of suspended) {
    if (row.suspendedKind !== 'child_run' || row.suspendedRef === null) continue;
    const child = await stores.runs.get(tenantId, row.suspendedRef);
    if (child !== null && child.parentRunId === runId && child.status !== 'succeeded' && child.status !== 'failed') {
      await cancelRun(core, tenantId, child.id);
    }
  }
  if (suspended.length > 0) {
    const held = await withRunLease(core.lease, tenantId, runId, async (h) => {
      await atWork(core, tenantId, run.sessionId, () =>
        endSuspendedOfCancelledRun(core.pipeline.durable, tenantId, suspended, h, () => clock.now()),
      );
    });
    // The run is cancelled either way; its suspended calls end when the holder lets go and the
    // caller retries.
    if (!held.held) throw runBusy();
  }
  // § MCP: run teardown. A step of this run still running here releases them when it stops
  // (submit-step.ts); another process's transports go at its next MCP sweep (docs/adr/0024).
  await tearDown(core, tenantId, run.sessionId);
  // A child cancelled on its own ends its parent's delegate.run call.
  if (cancelled.parentRunId !== null) await joinParentSoon(core, cancelled);
  return cancelled;
}
