import type { StepOutcome } from '@veetbot/client';
import type { Principal, StepBatch } from '@veetbot/domain';
import type {
  GatewayBinding,
  GatewayCall,
  GatewayCallOptions,
  GatewayCallResult,
  GatewayOpenRequest,
  GatewayRuntime,
  GatewayTool,
  RunRow,
  StepRow,
} from '@veetbot/ports';
import { VeetbotError } from '@veetbot/domain';
import { activeTraceContext, checkResubmission, toStoredBatch } from '@veetbot/runtime';
import { DEFAULT_API_SETTINGS, type ApiDeps } from '../deps';
import { mcpServersOf } from '../routes/sessions';
import { awaitStepOutcome, concludedInvocationIds } from '../step-outcome';
import { toolDefinitions } from '../wire';

/** Between progress notifications while a gateway call is still running. */
const PROGRESS_EVERY_MS = 5000;
/** Sessions whose pins this process keeps at hand (a pin never changes, so an entry never goes stale). */
const PIN_CACHE_ENTRIES = 1024;
/** Runs whose session this process remembers (a run's session never changes). */
const RUN_CACHE_ENTRIES = 8192;

/** A session's pin as the gateway uses it: what tools/list shows, and every name a call may name. */
interface Pin {
  readonly listed: readonly GatewayTool[];
  readonly names: ReadonlySet<string>;
}

/**
 * ports.GatewayRuntime over the api's own paths (docs/adr/0044): opening is POST /v1/sessions
 * then POST /v1/runs; a call is a one-call step stored for the worker exactly as
 * POST /v1/runs/{id}/steps stores one, woken and awaited the same way (awaitStepOutcome), and
 * read from the rows by the executor's own reading — there is no second pipeline. The MCP
 * client's key is the principal of the batch, so policy, scopes and approvals are the REST
 * caller's.
 */
export class ApiGatewayRuntime implements GatewayRuntime {
  readonly #deps: ApiDeps;
  /** tenant/session → pin; insertion order is recency (a hit is moved to the end). */
  readonly #pins = new Map<string, Pin>();
  /** tenant/run → its session (immutable), oldest first. */
  readonly #runSessions = new Map<string, string>();
  constructor(deps: ApiDeps) {
    this.#deps = deps;
  }

  /**
   * The session's pin, read once per process: § Advertisement is pinned — the set a session
   * pinned never changes, so tools/list and the unknown-tool check need no read per request
   * (docs/adr/0062). Null when the tenant has no such session.
   */
  async #pin(binding: GatewayBinding): Promise<Pin | null> {
    const key = `${binding.principal.tenant_id}/${binding.sessionId}`;
    const hit = this.#pins.get(key);
    if (hit !== undefined) {
      this.#pins.delete(key);
      this.#pins.set(key, hit);
      return hit;
    }
    const session = await this.#deps.stores.sessions.get(binding.principal.tenant_id, binding.sessionId);
    if (session === null) return null;
    const pin: Pin = {
      listed: toolDefinitions(session).map((t) => ({ name: t.name, description: t.description, inputSchema: t.input_schema })),
      // Deferred tools are pinned too: callable by name (the pipeline decides), listed only behind tool.call.
      names: new Set(session.specs.map((s) => s.name)),
    };
    this.#pins.set(key, pin);
    if (this.#pins.size > PIN_CACHE_ENTRIES) this.#pins.delete(this.#pins.keys().next().value as string);
    return pin;
  }

  async open(principal: Principal, request: GatewayOpenRequest): Promise<GatewayBinding> {
    const deps = this.#deps;
    const tenantId = principal.tenant_id;
    const opened = await deps.runtime.openSessionWithReport(
      tenantId,
      principal,
      { agentId: request.agentId },
      // As POST /v1/sessions with no server list: the operator's servers and the tenant's own.
      { flags: deps.environment.flags, targetKinds: deps.environment.targetKinds, mcpServers: await mcpServersOf(deps, tenantId) },
      {},
    );
    const run = await deps.runtime.createRun(tenantId, opened.session.id, {
      deadlineAt: new Date(deps.clock.now().getTime() + request.deadlineSeconds * 1000),
    });
    return { principal, sessionId: opened.session.id, runId: run.id };
  }

  async bindRun(principal: Principal, runId: string): Promise<GatewayBinding | null> {
    // A run's session never changes, so a stateless request (every 2026-07-28 call names its
    // run) needs no read once the tenant's run was found; whether the run still takes calls is
    // the submission's own answer (docs/adr/0062). A miss is not remembered.
    const key = `${principal.tenant_id}/${runId}`;
    const known = this.#runSessions.get(key);
    if (known !== undefined) return { principal, sessionId: known, runId };
    const run = await this.#deps.stores.runs.get(principal.tenant_id, runId);
    if (run === null) return null;
    this.#runSessions.set(key, run.sessionId);
    if (this.#runSessions.size > RUN_CACHE_ENTRIES) this.#runSessions.delete(this.#runSessions.keys().next().value as string);
    return { principal, sessionId: run.sessionId, runId: run.id };
  }

  async listTools(binding: GatewayBinding): Promise<readonly GatewayTool[]> {
    return (await this.#pin(binding))?.listed ?? [];
  }

  async call(binding: GatewayBinding, call: GatewayCall, options: GatewayCallOptions): Promise<GatewayCallResult> {
    const deps = this.#deps;
    const tenantId = binding.principal.tenant_id;
    // MCP's unknown tool: a name outside the session's pin is a protocol error, no step and no
    // row (docs/adr/0061). A session that is gone is the store's answer below.
    const pin = await this.#pin(binding);
    if (pin !== null && !pin.names.has(call.toolName)) return { kind: 'refused', code: 'tool.unknown', message: 'Unknown tool.' };
    const batch: StepBatch = {
      principal: binding.principal,
      calls: [
        { callId: call.callId, toolName: call.toolName, arguments: call.arguments, contextTrust: [...call.contextTrust], origin: 'model' },
      ],
    };
    const found = await deps.apiStores.stepSubmissions.submitCall(tenantId, {
      runId: binding.runId,
      callId: call.callId,
      // docs/adr/0068: the gateway request's trace continues in the worker.
      batch: toStoredBatch(batch, activeTraceContext()),
      createdAt: deps.clock.now(),
    });
    const run = found.run;
    if (run === null) return { kind: 'refused', code: 'not_found', message: 'No run of yours has this id.' };
    const step = found.step;
    if (step === null) return refusal(run, found.sessionStatus);
    // A call id repeated with another tool or other arguments names a different call: refused,
    // never mixed (the steps route's step.conflict).
    if (!found.inserted && !sameCall(step, batch))
      return { kind: 'refused', code: 'step.conflict', message: 'This call id already names a different call in this run.' };
    const outcome = await this.#await(run, step, found.inserted, options);
    return this.#result(step, call.callId, outcome);
  }

  async cancel(binding: GatewayBinding): Promise<void> {
    const run = await this.#deps.stores.runs.get(binding.principal.tenant_id, binding.runId);
    // Only a running run has anything to cancel; a finished one stays as it ended.
    if (run === null || (run.status !== 'running' && run.status !== 'waiting_for_user')) return;
    await this.#deps.runtime.cancelRun(binding.principal.tenant_id, binding.runId);
  }

  async close(binding: GatewayBinding): Promise<void> {
    const deps = this.#deps;
    const tenantId = binding.principal.tenant_id;
    if ((await deps.stores.sessions.get(tenantId, binding.sessionId)) === null) return;
    // As POST /v1/sessions/{id}/close: the row is closed, the transports released, the pin kept.
    await deps.stores.sessions.close(tenantId, binding.sessionId, deps.clock.now());
    if (deps.mcp !== undefined) await deps.mcp.releaseSession(binding.sessionId);
  }

  /** The steps route's bounded wait, in slices so the client hears progress between them. */
  async #await(run: RunRow, step: StepRow, fresh: boolean, options: GatewayCallOptions): Promise<StepOutcome> {
    const deps = this.#deps;
    const pollMs = deps.settings?.stepPollMs ?? DEFAULT_API_SETTINGS.stepPollMs;
    const pending = { tenantId: run.tenantId, runId: run.id, stepNumber: step.stepNumber };
    const began = Date.now();
    let start = step.status === 'completed' ? undefined : { wake: () => deps.queue.notify(pending), fresh };
    for (;;) {
      const remaining = began + options.waitMs - Date.now();
      const slice = Math.max(0, Math.min(remaining, PROGRESS_EVERY_MS));
      const outcome = await awaitStepOutcome(deps, run, step, slice, pollMs, options.signal, start);
      start = undefined;
      if (outcome.status !== 'running' || remaining <= slice || options.signal.aborted || deps.shutdownSignal?.aborted === true)
        return outcome;
      options.onWaiting?.(Date.now() - began);
    }
  }

  #result(step: StepRow, callId: string, outcome: StepOutcome): GatewayCallResult {
    const item = outcome.items.find((i) => i.call_id === callId);
    if (item !== undefined) {
      // The outcome row's id, from the read that produced the outcome (no second read of the rows).
      return { kind: 'concluded', item, invocationId: concludedInvocationIds(outcome)?.get(callId) ?? null, stepNumber: step.stepNumber };
    }
    const waiting = outcome.pending_approvals.find((p) => p.call_id === callId);
    if (waiting !== undefined)
      return {
        kind: 'waiting_for_approval',
        callId,
        invocationId: waiting.invocation_id,
        approvalId: waiting.approval_id ?? null,
        stepNumber: step.stepNumber,
      };
    const suspended = outcome.suspended.find((s) => s.call_id === callId);
    if (suspended !== undefined)
      return {
        kind: 'suspended',
        callId,
        invocationId: suspended.invocation_id,
        suspendedKind: suspended.kind,
        stepNumber: step.stepNumber,
      };
    return { kind: 'running', callId, stepNumber: step.stepNumber };
  }
}

/** The runtime's one resubmission check (the steps route's too). */
function sameCall(step: StepRow, batch: StepBatch): boolean {
  try {
    checkResubmission(step, batch);
    return true;
  } catch (error) {
    if (VeetbotError.isInstance(error) && error.code === 'runtime.step_conflict') return false;
    throw error;
  }
}

function refusal(run: RunRow, sessionStatus: string | null): GatewayCallResult {
  // § Control tools: a run waiting for its user takes no new call until it is answered.
  if (run.status === 'waiting_for_user')
    return { kind: 'refused', code: 'run.waiting_for_user', message: 'The run is waiting for its user to answer a question.' };
  if (run.status !== 'running') return { kind: 'refused', code: 'run.not_active', message: 'The run is not running.' };
  if (sessionStatus === null) return { kind: 'refused', code: 'not_found', message: 'No run of yours has this id.' };
  return { kind: 'refused', code: 'session.closed', message: 'The session is closed.' };
}
