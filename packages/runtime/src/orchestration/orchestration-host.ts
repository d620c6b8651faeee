import {
  bridgeCallId,
  CONTROL_TOOL_NAMES,
  ConfigurationError,
  platformRefusalItem,
  sha256Hex,
  TOOL_CALL_NAME,
  sandboxEndingFailure,
  toolFailure,
  type ToolResultInput,
  type ToolResultItem,
} from '@veetbot/domain';
import { executeToolCall, type RunContext, type ToolCallRequest } from '@veetbot/executor';
import type {
  BridgeCall,
  BridgeCallHandler,
  ControlExecution,
  OrchestrationHost,
  OrchestrationRunScope,
  SandboxResult,
  ToolExecutionContext,
} from '@veetbot/ports';
import { readBudgets } from '../run-budgets';
import { pipelinesFor, type RuntimeCore } from '../runtime-core';
import { BRIDGE_EVENT_TYPES, bridgeEvent } from './bridge-events';
import { ORCHESTRATION_TOOL_NAME } from './orchestration-spec';

/** What the program may use (docs/adr/0039): V8 reserves far more address space than it uses. */
export const ORCHESTRATION_MEMORY_BYTES = 8 * 1024 * 1024 * 1024;
/** node's own threads count against RLIMIT_NPROC of the sandbox user (as sandbox.run_command's do). */
export const ORCHESTRATION_PROCESSES = 256;
/** Seconds kept back from the call's deadline, so the sandbox's own clock ends the program first. */
const DEADLINE_MARGIN_SECONDS = 1;
/** How often a held bridge call reads its approval record (the decision is made by another process). */
const APPROVAL_POLL_MS = 200;

/** One bridge call as the orchestration's result summarises it (identity and outcome only). */
interface CallSummary {
  readonly ordinal: number;
  readonly call_id: string;
  readonly tool_name: string;
  readonly status: string;
  readonly reason_code: string;
}

/**
 * A tool the program may not call: the control tools act on the run (and would suspend it from
 * inside a program), tool.call wraps them, and an orchestration inside an orchestration would
 * nest sandboxes. Refused by the bridge before the pipeline, with no row (docs/adr/0039).
 */
function callableFromProgram(toolName: string): boolean {
  return !CONTROL_TOOL_NAMES.has(toolName) && toolName !== TOOL_CALL_NAME && toolName !== ORCHESTRATION_TOOL_NAME;
}

/**
 * § The programmatic orchestration bridge (docs/adr/0039): step 10 of sandbox.run_orchestration.
 * Opens a bridge turn bound to the tenant, run, step and sha256(source), runs the program in the
 * sandbox, and answers every bridge call by re-entering executeToolCall at step 1 — the one
 * pipeline — with the bridge's call id, in the same run and step, under the run's lease.
 */
export class RuntimeOrchestrationHost implements OrchestrationHost {
  readonly #core: () => RuntimeCore;

  /** `core` is read at call time: the host is built before the core that holds it. */
  constructor(core: () => RuntimeCore) {
    this.#core = core;
  }

  async execute(args: Record<string, unknown>, context: ToolExecutionContext, scope: OrchestrationRunScope): Promise<ControlExecution> {
    const core = this.#core();
    const sandbox = core.deps.orchestration;
    if (sandbox === undefined) {
      throw new ConfigurationError('config.orchestration_unavailable', 'This runtime was composed without an orchestration sandbox.');
    }
    if (context.workspace === null) return returned(toolFailure('internal', 'no_workspace', 'This invocation has no workspace.'));
    const source = typeof args.source === 'string' ? args.source : '';
    const { stores, clock } = core.deps;
    const { tenantId, runId, stepNumber } = context;
    const scriptHash = sha256Hex(source);

    const session = await stores.sessions.get(tenantId, context.sessionId);
    if (session === null) throw new Error('The orchestration call has no session.');
    const view = core.views.of(session);
    const { pipeline } = pipelinesFor(core, tenantId);
    const maximumCalls = await turnCallCap(core, context, scriptHash);

    const remaining = (context.deadlineAt.getTime() - clock.now().getTime()) / 1000 - DEADLINE_MARGIN_SECONDS;
    const wallSeconds = Math.min(context.timeoutSeconds, remaining);
    if (wallSeconds < 1) return returned(toolFailure('timeout', 'sandbox', 'Less than a second is left before the deadline'));

    // The inner calls run in this run's lease and workspace, end with this call's cancellation,
    // and are sequential (no parallel group): each is its own governed call.
    const inner: RunContext = {
      fence: scope.fence,
      deadlineAt: context.deadlineAt,
      ...(scope.callerTimeoutSeconds === undefined ? {} : { callerTimeoutSeconds: scope.callerTimeoutSeconds }),
      parallelGroup: null,
      workspace: scope.workspace,
      signal: context.cancellation,
    };
    const teardown = new AbortController();
    const onCancel = () => teardown.abort(context.cancellation.reason);
    context.cancellation.addEventListener('abort', onCancel, { once: true });
    const calls: CallSummary[] = [];
    let waitingOn: string | null = null;
    const holdMs = core.settings.approvalHoldSeconds * 1000;

    // Calls still in the pipeline when the turn closes (the bridge aborts their connections, not
    // the pipeline) are awaited before this call returns: none may outlive the run's lease.
    const inFlight = new Set<Promise<ToolResultItem>>();
    const handler: BridgeCallHandler = (call, signal) => {
      const answering = answerCall(call, signal);
      inFlight.add(answering);
      void answering.finally(() => inFlight.delete(answering)).catch(() => undefined);
      return answering;
    };
    const answerCall = async (call: BridgeCall, signal: AbortSignal): Promise<ToolResultItem> => {
      const answer = (item: ToolResultItem): ToolResultItem => {
        calls.push({
          ordinal: call.ordinal,
          call_id: call.callId,
          tool_name: item.tool_name,
          status: item.outcome.status,
          reason_code: item.outcome.reason_code,
        });
        return item;
      };
      if (!callableFromProgram(call.toolName)) return answer(platformRefusalItem(call.callId, call.toolName, 'bridge.tool_not_callable'));
      const request: ToolCallRequest = {
        tenantId,
        principal: context.principal,
        sessionId: context.sessionId,
        runId,
        stepNumber,
        callId: call.callId,
        toolName: call.toolName,
        arguments: call.arguments,
        origin: 'model',
        // The program is model-written and may have read anything: what it asks for is
        // EXTERNAL_UNTRUSTED in every policy rule that looks (origin and arguments alike).
        contextTrust: ['external_untrusted'],
      };
      for (;;) {
        const result = await executeToolCall(pipeline, view, request, { dryRun: false, run: inner });
        if (result.kind === 'concluded') return answer(result.item);
        if (result.kind === 'approval_required' && result.invocationId !== undefined) {
          // § Approvals inside a script: block for the hold; a decision re-enters step 1 and
          // step 8 reads it (approved: the call runs; denied: the program sees the denial).
          const approval = await stores.approvals.getByInvocation(tenantId, result.invocationId);
          if (approval !== null && (await decidedWithin(core, tenantId, approval.id, holdMs, signal))) continue;
          // Past the hold: the sandbox is torn down and the orchestration suspends on it.
          waitingOn = approval?.id ?? result.invocationId;
          teardown.abort();
          return answer(platformRefusalItem(call.callId, call.toolName, 'bridge.approval_pending'));
        }
        // Not reachable for a callable tool (none suspends); answered, never thrown.
        return answer(platformRefusalItem(call.callId, call.toolName, 'bridge.tool_not_callable'));
      }
    };

    const turnId = globalThis.crypto.randomUUID();
    await stores.events.append(tenantId, [
      bridgeEvent(BRIDGE_EVENT_TYPES.opened, context, turnId, scriptHash, clock.now(), { maximum_calls: maximumCalls }),
    ]);
    let ran: { sandbox: SandboxResult; callsCounted: number } | null = null;
    try {
      ran = await sandbox.runTurn(
        {
          turn: { tenantId, runId, stepNumber, scriptHash },
          language: 'javascript',
          source,
          workspaceHostPath: context.workspace.root,
          limits: {
            wallSeconds,
            cpuSeconds: Math.max(1, Math.ceil(wallSeconds)),
            memoryBytes: ORCHESTRATION_MEMORY_BYTES,
            processes: ORCHESTRATION_PROCESSES,
            // § Output: the hard ceiling is maximum_output_bytes * 4.
            outputBytes: context.maximumOutputBytes * 4,
          },
          maximumCalls,
        },
        handler,
        teardown.signal,
      );
    } finally {
      await Promise.allSettled([...inFlight]);
      context.cancellation.removeEventListener('abort', onCancel);
      const ending = waitingOn !== null ? 'approval_hold' : (ran?.sandbox.ending ?? 'failed_to_start');
      await stores.events.append(tenantId, [
        bridgeEvent(BRIDGE_EVENT_TYPES.closed, context, turnId, scriptHash, clock.now(), {
          ending,
          calls_counted: ran?.callsCounted ?? calls.length,
          calls_answered: calls.length,
          exit_code: ran?.sandbox.exitCode ?? null,
        }),
      ]);
    }
    if (waitingOn !== null) return { kind: 'suspended', suspendedKind: 'approval', suspendedRef: waitingOn };
    if (ran === null) throw new Error('The orchestration turn ended without a result.');
    return returned(resultOf(ran.sandbox, scriptHash, calls, context.maximumOutputBytes * 4));
  }
}

const returned = (value: ToolResultInput): ControlExecution => ({ kind: 'returned', value });

/** Whether the approval is decided within `holdMs`; false when the hold passes or the turn closes. */
async function decidedWithin(
  core: RuntimeCore,
  tenantId: string,
  approvalId: string,
  holdMs: number,
  signal: AbortSignal,
): Promise<boolean> {
  const until = Date.now() + holdMs;
  for (;;) {
    const approval = await core.deps.stores.approvals.get(tenantId, approvalId);
    if (approval !== null && approval.status !== 'pending') return true;
    const left = until - Date.now();
    if (left <= 0 || signal.aborted) return false;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.min(APPROVAL_POLL_MS, left));
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

/**
 * § Budget accounting (ADR-0015 point 3; docs/adr/0039): the turn's calls are capped at the
 * configured maximum (default 64) and never past what the run's tool-call budget has left. The
 * orchestration rows themselves are refunded (not charged), and this turn's own earlier bridge
 * rows — a replay's, which deduplicate rather than spend — are not counted against it.
 */
async function turnCallCap(core: RuntimeCore, context: ToolExecutionContext, scriptHash: string): Promise<number> {
  const cap = core.settings.bridgeMaximumCalls;
  const { stores } = core.deps;
  const run = await stores.runs.get(context.tenantId, context.runId);
  const { maximumToolCalls } = readBudgets(run?.budgets ?? {});
  if (maximumToolCalls === undefined) return cap;
  const tally = await stores.invocations.breakerTally(context.tenantId, context.runId);
  const thisTurn = new Set(Array.from({ length: cap }, (_, ordinal) => bridgeCallId(scriptHash, ordinal)));
  const stepRows = await stores.invocations.listForRun(context.tenantId, context.runId, {
    from: context.stepNumber,
    to: context.stepNumber,
  });
  const replayed = stepRows.filter((r) => thisTurn.has(r.callId)).length;
  // docs/adr/0050: the run's delegated children spend from the same budget.
  const spent = chargedRows(tally.groups) - replayed + (await stores.runs.delegatedCalls(context.tenantId, context.runId));
  return Math.max(0, Math.min(cap, maximumToolCalls - spent));
}

/** Rows charged to the run's tool-call budget: every row but the orchestrations' own (the refund). */
export function chargedRows(groups: Iterable<{ readonly toolName: string; readonly count: number }>): number {
  let rows = 0;
  for (const group of groups) if (group.toolName !== ORCHESTRATION_TOOL_NAME) rows += group.count;
  return rows;
}

function render(result: SandboxResult, calls: readonly CallSummary[]): string {
  const status = result.signal === null ? `Exit code ${String(result.exitCode)}.` : `Ended by ${result.signal}.`;
  const lines = calls.map((c) => `${c.ordinal} ${c.tool_name} ${c.status} ${c.reason_code}`);
  return [
    status,
    '--- stdout ---',
    result.stdout.text,
    '--- stderr ---',
    result.stderr.text,
    `--- tool calls (${calls.length}) ---`,
    ...lines,
  ].join('\n');
}

/** The orchestration's result: the program's output (untrusted by the spec) and the call summary. */
function resultOf(result: SandboxResult, scriptHash: string, calls: readonly CallSummary[], outputLimit: number): ToolResultInput {
  switch (result.ending) {
    case 'exited':
      return {
        ok: true,
        content: [{ type: 'text', text: render(result, calls) }],
        structured: {
          exit_code: result.exitCode,
          signal: result.signal,
          stdout_bytes: result.stdout.totalBytes,
          stderr_bytes: result.stderr.totalBytes,
          duration_ms: result.durationMs,
          script_hash: scriptHash,
          calls: [...calls],
        },
      };
    default:
      return sandboxEndingFailure(result.ending, { durationMs: result.durationMs, outputLimitBytes: outputLimit, detail: result.detail });
  }
}
