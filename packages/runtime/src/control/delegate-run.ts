import { derivedUuid, hasScope, type Principal, type ToolResultInput, type ToolSpec } from '@veetbot/domain';
import { SUSPENSION_EVENT_TYPES } from '@veetbot/executor';
import type { ControlExecution, RunRow, SessionRow, ToolExecutionContext } from '@veetbot/ports';
import { chargedRows } from '../orchestration/orchestration-host';
import { ORCHESTRATION_TOOL_NAME } from '../orchestration/orchestration-spec';
import { readBudgets, storedBudgets } from '../run-budgets';
import { fromStoredBatch } from '../stored-batch';
import type { RuntimeCore } from '../runtime-core';
import { openSession } from '../sessions-and-runs';
import { CONTROL_SPAN_NAMES, inControlSpan } from './control-spans';

/**
 * The child run's and session's ids, derived from the parent's invocation: a recovered
 * delegate.run attempt finds the child it started rather than starting a second one.
 */
const childId = (what: 'run' | 'session', invocationId: string): string => derivedUuid(`delegate.run/${what}`, invocationId);

/**
 * The child's principal: the parent's, keeping only the scopes some delegated tool needs.
 * Narrower or equal, never wider (§ Control tools: "the registry resolves the child's set
 * through specs_for_session with the child's principal, not the parent's").
 */
export function childPrincipal(parent: Principal, specs: readonly ToolSpec[]): Principal {
  const needed = specs.flatMap((s) => s.required_scopes);
  return { ...parent, scopes: parent.scopes.filter((held) => needed.some((scope) => hasScope({ scopes: [held] }, scope))) };
}

/**
 * What the child may spend (docs/adr/0050): the parent's remaining tool calls and deadline bound
 * whatever was asked. The tree shares one budget by carving it: the allowance given here is
 * charged to the parent (and so, through the parent's own allowance, to every ancestor) for as
 * long as the child runs, and what its subtree spent once it ends (veetbot_delegated_calls). The
 * parent's spending counts every call of the step this delegate.run belongs to — the calls after
 * it were admitted against the budget already — and the allowances of its other children. The
 * parent's lease serializes its steps, and delegate.run never runs in a parallel batch
 * (allow_parallel false), so no two carvings of one parent race.
 */
export async function childLimits(
  core: RuntimeCore,
  parent: RunRow,
  stepNumber: number,
  args: Record<string, unknown>,
  now: Date,
): Promise<{ maximumToolCalls?: number; deadlineAt: Date }> {
  const asked = typeof args.maximum_tool_calls === 'number' ? args.maximum_tool_calls : undefined;
  const { maximumToolCalls } = readBudgets(parent.budgets);
  let limit = asked;
  if (maximumToolCalls !== undefined) {
    const spent = await parentSpent(core, parent, stepNumber);
    const remaining = Math.max(0, maximumToolCalls - spent);
    limit = Math.min(asked ?? remaining, remaining);
  }
  // The child's deadline is never later than the parent's: the parent's bounds what was asked.
  const askedDeadline = typeof args.deadline_seconds === 'number' ? now.getTime() + args.deadline_seconds * 1000 : Number.POSITIVE_INFINITY;
  const deadlineAt = new Date(Math.min(askedDeadline, parent.deadlineAt.getTime()));
  return { ...(limit === undefined ? {} : { maximumToolCalls: limit }), deadlineAt };
}

/** The parent's charged calls: its other steps' rows, every call of this step, its children's charge. */
async function parentSpent(core: RuntimeCore, parent: RunRow, stepNumber: number): Promise<number> {
  const { stores } = core.deps;
  const { tenantId, id } = parent;
  const [before, after, step, delegated] = await Promise.all([
    stores.invocations.breakerTally(tenantId, id, { to: stepNumber - 1 }),
    stores.invocations.breakerTally(tenantId, id, { from: stepNumber + 1 }),
    stores.steps.get(tenantId, id, stepNumber),
    stores.runs.delegatedCalls(tenantId, id),
  ]);
  const calls = step === null ? null : fromStoredBatch(step.batch).batch?.calls;
  // The stored batch is what the step runs (the opening stored or checked it); its rows are the fallback.
  const thisStep =
    calls === undefined || calls === null
      ? chargedRows((await stores.invocations.breakerTally(tenantId, id, { from: stepNumber, to: stepNumber })).groups)
      : calls.filter((c) => c.toolName !== ORCHESTRATION_TOOL_NAME).length;
  return chargedRows(before.groups) + chargedRows(after.groups) + thisStep + delegated;
}

/** How many ancestors `run` has, counted up to `limit + 1` (the tree is never walked further). */
async function depthOf(core: RuntimeCore, run: RunRow, limit: number): Promise<number> {
  let depth = 0;
  let parentId = run.parentRunId;
  while (parentId !== null && depth <= limit) {
    depth += 1;
    parentId = (await core.deps.stores.runs.get(run.tenantId, parentId))?.parentRunId ?? null;
  }
  return depth;
}

function refused(reasonCode: 'tool.permission.delegate_tools' | 'tool.permission.delegation_depth', detail: string): ControlExecution {
  const value: ToolResultInput = {
    ok: false,
    content: [],
    failure: { kind: 'permission', reason_code: reasonCode, detail, retryable: false },
    output_trust: 'platform',
  };
  return { kind: 'returned', value };
}

/**
 * delegate.run (§ Control tools; Section 26): a child run with a restricted tool set — a subset
 * of the parent's pin, resolved through specsForSession with the child's principal — and a
 * budget taken from the parent's. The child starts with its brief as working state version 1
 * (GET /v1/runs/{child}/working-state). The parent's call suspends (`child_run`) until the
 * child ends; resume.ts (joinParent) completes it.
 */
export async function startChildRun(
  core: RuntimeCore,
  args: Record<string, unknown>,
  context: ToolExecutionContext,
): Promise<ControlExecution> {
  const { stores } = core.deps;
  const { tenantId } = context;
  const childRunId = childId('run', context.invocationId);
  const suspended: ControlExecution = { kind: 'suspended', suspendedKind: 'child_run', suspendedRef: childRunId };
  // A recovered attempt: the child exists already.
  if ((await stores.runs.get(tenantId, childRunId)) !== null) return suspended;

  const [parent, parentSession] = await Promise.all([
    stores.runs.get(tenantId, context.runId),
    stores.sessions.get(tenantId, context.sessionId),
  ]);
  if (parent === null || parentSession === null) throw new Error('delegate.run: the parent run or session is gone.');
  // docs/adr/0050: a tree's depth is bounded (runtime setting maximumDelegationDepth), so a
  // model cannot nest children without end, each one a run, a session and a budget carving.
  const limit = core.settings.maximumDelegationDepth;
  const depth = await depthOf(core, parent, limit);
  if (depth >= limit) {
    return refused('tool.permission.delegation_depth', `This run has ${String(depth)} ancestors; the limit is ${String(limit)}.`);
  }
  const requested = (args.tools as string[]) ?? [];
  const outside = requested.filter((name) => !parentSession.toolNames.includes(name));
  if (outside.length > 0) return refused('tool.permission.delegate_tools', `Not offered to this run: ${outside.join(', ')}.`);

  return inControlSpan(CONTROL_SPAN_NAMES.childStart, { 'veetbot.run_id': parent.id, 'veetbot.child_run_id': childRunId }, async () => {
    await createChild(core, parent, parentSession, requested, args, context, childRunId);
    return suspended;
  });
}

async function createChild(
  core: RuntimeCore,
  parent: RunRow,
  parentSession: SessionRow,
  requested: readonly string[],
  args: Record<string, unknown>,
  context: ToolExecutionContext,
  childRunId: string,
): Promise<void> {
  const { stores, clock } = core.deps;
  const { tenantId } = context;
  const child = await openChildSession(core, parentSession, requested, context);
  const now = clock.now();
  const limits = await childLimits(core, parent, context.stepNumber, args, now);
  await stores.runs.create(tenantId, {
    id: childRunId,
    sessionId: child.id,
    parentRunId: parent.id,
    deadlineAt: limits.deadlineAt,
    budgets: storedBudgets(limits.maximumToolCalls === undefined ? undefined : { maximumToolCalls: limits.maximumToolCalls }),
    createdAt: now,
  });
  await stores.workingStates.append(tenantId, {
    runId: childRunId,
    document: { brief: String(args.brief), parent_run_id: parent.id },
    invocationId: context.invocationId,
    createdAt: now,
  });
  await stores.events.append(tenantId, [
    {
      runId: parent.id,
      type: SUSPENSION_EVENT_TYPES.childStarted,
      payload: { invocation_id: context.invocationId, run_id: parent.id, call_id: context.callId, child_run_id: childRunId },
      derivationKey: `${context.idempotencyKey}:${SUSPENSION_EVENT_TYPES.childStarted}`,
      createdAt: now,
    },
  ]);
}

async function openChildSession(
  core: RuntimeCore,
  parent: SessionRow,
  requested: readonly string[],
  context: ToolExecutionContext,
): Promise<SessionRow> {
  const sessionId = childId('session', context.invocationId);
  const existing = await core.deps.stores.sessions.get(context.tenantId, sessionId);
  if (existing !== null) return existing;
  const specs = parent.specs.filter((s) => requested.includes(s.name));
  const servers = [...new Set(specs.flatMap((s) => (s.server_id === null ? [] : [s.server_id])))];
  const opened = await openSession(
    core,
    context.tenantId,
    childPrincipal(context.principal, specs),
    // An empty list pins nothing but what matches it: never "every registered tool".
    { agentId: `${parent.agentId}/delegate`, enabledTools: [...requested] },
    { flags: {}, targetKinds: [...new Set(specs.map((s) => s.target_kind))], mcpServers: servers },
    { sessionId, mcpServerIds: servers },
  );
  return opened.session;
}
