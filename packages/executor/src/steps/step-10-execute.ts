import { ConfigurationError, type SuspendedKind } from '@veetbot/domain';
import type {
  ConsentSuspended,
  ControlToolHost,
  ToolExecutionContext,
  InvocationRow,
  OrchestrationHost,
  PolicyEngine,
} from '@veetbot/ports';
import type { DurableDeps, RunContext } from '../durable-deps';
import type { AuthorizedCall } from '../pipeline-result';
import type { ToolCallRequest } from '../tool-call-request';
import type { ScrubbingCredentialResolver } from '../credential-scrubber';
import { callBudget } from '../call-budget';
import { recheckAuthority, type Withheld } from './step-10-recheck-authority';

export type Execution =
  | { readonly kind: 'returned'; readonly value: unknown; readonly effectSent: boolean; readonly durationMs: number }
  | { readonly kind: 'threw'; readonly error: unknown; readonly effectSent: boolean; readonly durationMs: number }
  | { readonly kind: 'timed_out'; readonly effectSent: boolean; readonly durationMs: number }
  /**
   * § Control tools: the call waits for a user's answer or a child run; its row stays RUNNING.
   * docs/adr/0082: or for a person's consent (`authorization`, with the link to show).
   */
  | {
      readonly kind: 'suspended';
      readonly suspendedKind: SuspendedKind;
      readonly suspendedRef: string;
      readonly durationMs: number;
      readonly authorization?: ConsentSuspended;
    }
  /**
   * The tool never started: the run leaves it too little time (run.deadline_exceeded,
   * docs/adr/0025), the watermark missed the call's deadline, a pre-effect check or the
   * watermark failed, or the run was cancelled.
   */
  | {
      readonly kind: 'not_started';
      readonly reasonCode: 'run.deadline_exceeded' | 'tool.timeout' | 'tool.effect_guard_failed' | 'tool.run_cancelled';
    };

/** The call's deadline: named TimeoutError so adapters can tell it from a cancellation. */
class DeadlineReached extends Error {
  override name = 'TimeoutError';
}

/** setTimeout's largest delay: beyond it Node fires after 1 ms, which would time a call out at once. */
const MAXIMUM_TIMER_MS = 2_147_483_647;

function untilDeadline<T>(work: Promise<T>, deadline: Promise<never>): Promise<T> {
  return Promise.race([work, deadline]);
}

/**
 * Step 10: execute with timeout and no transaction open. Before any tool whose side effect is
 * not NONE: a pre-effect authorization check, then the effect watermark in its own commit
 * (§ The effect watermark); if either fails the tool never starts. Pre-effect checks,
 * watermark persistence and execution share one absolute deadline.
 */
export async function execute(
  d: DurableDeps,
  policy: PolicyEngine,
  now: () => Date,
  request: ToolCallRequest,
  call: AuthorizedCall,
  row: InvocationRow,
  run: RunContext,
  credentials: ScrubbingCredentialResolver,
): Promise<Execution | Withheld> {
  const tenantId = request.principal.tenant_id;
  const startedAt = now();
  // § ToolExecutionContext: the one effective timeout, and the refusal of a call that cannot
  // finish before the run deadline (call-budget.ts, docs/adr/0025).
  const budget = callBudget(call.tool, startedAt, run, d.minimumCallSeconds);
  if (budget.kind === 'cannot_finish') return { kind: 'not_started', reasonCode: 'run.deadline_exceeded' };
  const { timeoutSeconds, deadlineAt } = budget;
  if (run.signal?.aborted) return { kind: 'not_started', reasonCode: 'tool.run_cancelled' };

  const controller = new AbortController();
  const onRunAbort = () => controller.abort(run.signal?.reason);
  run.signal?.addEventListener('abort', onRunAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        controller.abort(new DeadlineReached('deadline'));
        reject(new DeadlineReached('deadline'));
      },
      Math.min(Math.ceil(timeoutSeconds * 1000), MAXIMUM_TIMER_MS),
    );
  });
  deadline.catch(() => undefined);

  let effectSent = row.effectSentAt !== null;
  let watermark: Promise<void> | null = null;
  const markEffectSent = (): Promise<void> => {
    // Later calls are no-ops (§ The effect watermark).
    watermark ??= d.invocations.markEffectSent(tenantId, row.id, run.fence, now()).then(() => {
      effectSent = true;
    });
    return watermark;
  };
  const elapsed = () => now().getTime() - startedAt.getTime();

  try {
    if (call.spec.side_effect !== 'none') {
      // Re-run the authorization check once per attempt; an existing watermark never
      // substitutes for current authority. A deny ends the row DENIED; a call that now needs a
      // person waits for one (step-10-recheck-authority.ts).
      const withheld = await recheckAuthority(d, policy, now, request, call, row, run);
      if (withheld !== null) return withheld;
      try {
        await untilDeadline(markEffectSent(), deadline);
      } catch (error) {
        return { kind: 'not_started', reasonCode: error instanceof DeadlineReached ? 'tool.timeout' : 'tool.effect_guard_failed' };
      }
    }
    const context: ToolExecutionContext = {
      invocationId: row.id,
      callId: row.callId,
      runId: row.runId,
      sessionId: row.sessionId,
      tenantId,
      principal: request.principal,
      stepNumber: row.stepNumber,
      attemptNumber: row.attemptNumber,
      idempotencyKey: row.idempotencyKey,
      deadlineAt,
      timeoutSeconds,
      maximumOutputBytes: call.spec.maximum_output_bytes,
      target: { kind: call.spec.target_kind, serverId: call.spec.server_id, deviceId: call.spec.device_id },
      workspace: run.workspace,
      artifacts: d.artifacts.forScope({ tenantId, runId: row.runId, invocationId: row.id }),
      credentials,
      cancellation: controller.signal,
      markEffectSent,
    };
    try {
      // § Control tools: a CONTROL call is executed by the runtime, under the same deadline.
      if (call.spec.kind === 'control') {
        const controlled = await untilDeadline(
          Promise.resolve().then(() => executeControl(d.control, call, context)),
          deadline,
        );
        if (controlled.kind === 'suspended') return { ...controlled, durationMs: elapsed() };
        return { kind: 'returned', value: controlled.value, effectSent, durationMs: elapsed() };
      }
      // § The programmatic orchestration bridge: the runtime runs the program and re-enters
      // step 1 for each of its calls (docs/adr/0039); it may suspend like a control tool.
      if (call.tool.hostedBy === 'orchestration') {
        const orchestrated = await untilDeadline(
          Promise.resolve().then(() => executeOrchestration(d.orchestration, call, context, run)),
          deadline,
        );
        if (orchestrated.kind === 'suspended') return { ...orchestrated, durationMs: elapsed() };
        return { kind: 'returned', value: orchestrated.value, effectSent, durationMs: elapsed() };
      }
      const value = await untilDeadline(
        Promise.resolve().then(() => call.tool.execute(call.arguments, context)),
        deadline,
      );
      return { kind: 'returned', value, effectSent, durationMs: elapsed() };
    } catch (error) {
      if (error instanceof DeadlineReached) return { kind: 'timed_out', effectSent, durationMs: elapsed() };
      // docs/adr/0082: a server that needs a person's consent suspends the call (never reached
      // the tool: the connection ended at the handshake), where the consent surface is configured.
      if (d.consents !== undefined) {
        const consent = await d.consents.suspend(error, {
          tenantId,
          principalId: request.principal.principal_id,
          runId: row.runId,
          invocationId: row.id,
          serverId: call.spec.server_id ?? null,
          at: now(),
        });
        if (consent !== null)
          return {
            kind: 'suspended',
            suspendedKind: 'authorization',
            suspendedRef: consent.id,
            durationMs: elapsed(),
            authorization: consent,
          };
      }
      return { kind: 'threw', error, effectSent, durationMs: elapsed() };
    }
  } finally {
    clearTimeout(timer);
    run.signal?.removeEventListener('abort', onRunAbort);
  }
}

function executeOrchestration(host: OrchestrationHost | undefined, call: AuthorizedCall, context: ToolExecutionContext, run: RunContext) {
  if (host === undefined) {
    throw new ConfigurationError('config.orchestration_unavailable', 'This pipeline has no runtime to run orchestrations.');
  }
  // The inner calls run under the same fence and workspace, and end with this call's cancellation.
  return host.execute(call.arguments, context, { ...run, deadlineAt: context.deadlineAt, signal: context.cancellation });
}

function executeControl(host: ControlToolHost | undefined, call: AuthorizedCall, context: ToolExecutionContext) {
  if (host === undefined) {
    throw new ConfigurationError('config.control_tools_unavailable', 'This pipeline has no runtime to execute control tools.');
  }
  return host.execute(call.spec.name, call.arguments, context);
}
