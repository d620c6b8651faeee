import { ConfigurationError, unvalidatedRecord, VeetbotError, type PolicyDecision, type ToolSpec } from '@veetbot/domain';
import { DEFAULT_PIPELINE_LIMITS, type PipelineDeps, type PipelineLimits, type SessionView } from './pipeline-deps';
import type { AuthorizedCall, PipelineResult, RefusedCall } from './pipeline-result';
import { displayedToolName } from './displayed-tool-name';
import { PIPELINE_STEPS, type PipelineStepNumber } from './pipeline-step';
import { ToolCallRequest } from './tool-call-request';
import type { RunContext } from './durable-deps';
import { concludeWithoutExecution, type Concluded } from './render-item';
import { recordConclusion } from './lifecycle/record-refusal';
import { suspendCall } from './lifecycle/suspension';
import type { InvocationRow } from '@veetbot/ports';
import { ScrubbingCredentialResolver } from './credential-scrubber';
import { unwrapToolCall, withInputSchema } from './steps/step-00-unwrap-tool-call';
import { resolveTool } from './steps/step-01-resolve-tool';
import { checkEnabled } from './steps/step-02-check-enabled';
import { checkScopes } from './steps/step-03-check-scopes';
import { validateArguments } from './steps/step-04-validate-arguments';
import { normalizeArguments } from './steps/step-05-normalize-arguments';
import { argumentTrustOf, evaluatePolicy, originTrustOf, proposedAction } from './steps/step-06-evaluate-policy';
import { requestApproval } from './steps/step-07-request-approval';
import { idempotencyKeyOf, persistIntent } from './steps/step-08-persist-intent';
import { claim } from './steps/step-09-claim';
import { execute } from './steps/step-10-execute';
import { validateResult } from './steps/step-11-validate-result';
import { truncateOrArtifactize } from './steps/step-12-truncate-or-artifactize';
import { persistResult } from './steps/step-13-persist-result';
import { renderToolResultItem } from './steps/step-14-render-outcome';
import { TOOL_SPAN_NAMES, traceToolCall, type CallTrace } from './tool-telemetry';

export class InvalidToolCallRequestError extends VeetbotError {
  constructor(message: string) {
    super('executor.request_invalid', message);
  }
}

/** For trust boundaries: a ToolCallRequest from outside, or a typed error saying where it is wrong. */
export function parseToolCallRequest(input: unknown): ToolCallRequest {
  const parsed = ToolCallRequest.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new InvalidToolCallRequestError(`Tool call request is invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? ''}`);
}

export type ExecuteOptions =
  /**
   * Stop after step 7: nothing is persisted, nothing executes. `keepPlan`: the caller will hand
   * the result to the durable run of the same call as `planned` (the batch planner); only then
   * is the admission kept, so a plain dry run allocates nothing for it.
   */
  | { readonly dryRun: true; readonly keepPlan?: boolean }
  /**
   * The whole pipeline, in a run whose lease the caller holds. `planned`: what a dry run of this
   * very request (the same object) in this very session answered — the batch planner's — so
   * steps 1–7 are not evaluated twice (docs/adr/0042). Only results this module produced count,
   * and only while they still hold; anything else is evaluated afresh.
   */
  | { readonly dryRun: false; readonly run: RunContext; readonly planned?: PipelineResult };

/**
 * A dry run's admission, kept for the durable run of the same call. Keyed by the result object
 * the dry run returned, so a caller can hand back only what steps 1–7 concluded here: nothing
 * outside this module can make a plan, and a forged or altered result finds none.
 */
interface Plan {
  readonly input: ToolCallRequest;
  readonly session: SessionView;
  readonly registry: PipelineDeps['registry'];
  readonly validator: PipelineDeps['validator'];
  readonly policy: PipelineDeps['policy'];
  readonly request: ToolCallRequest;
  readonly admission: Extract<Admission, { ok: true }>;
  readonly timings: NonNullable<CallTrace['timings']>;
}

const plans = new WeakMap<PipelineResult, Plan>();

/**
 * The plan for `input`, if `planned` is a dry run's answer for this very request in this session,
 * made with the same registry, validator and policy, and its tool still resolves to the same
 * registered tool (a catalog that changed since is evaluated again). Refusals are never carried:
 * they are rare, and evaluating one again costs nothing that matters.
 */
function carriedPlan(deps: PipelineDeps, session: SessionView, input: ToolCallRequest, planned: PipelineResult | undefined): Plan | null {
  if (planned === undefined) return null;
  const plan = plans.get(planned);
  if (plan === undefined || plan.input !== input || plan.session !== session) return null;
  if (plan.registry !== deps.registry || plan.validator !== deps.validator || plan.policy !== deps.policy) return null;
  const resolved = resolveTool(deps.registry, session.pinned, plan.request.toolName, plan.request.callId);
  return resolved.ok && resolved.value === plan.admission.call.tool ? plan : null;
}

/** What steps 1–7 concluded, with what they learned on the way (for recording). */
type Admission =
  | { readonly ok: true; readonly call: AuthorizedCall; readonly needsApproval: boolean }
  | {
      readonly ok: false;
      readonly concluded: Concluded;
      readonly spec: ToolSpec | null;
      readonly argumentsHash: string;
      readonly arguments: Record<string, unknown>;
      /** The policy decision that refused the call (step 6's deny, step 7's denied approval); none before step 6. */
      readonly decision?: PolicyDecision;
    };

/**
 * § The pipeline: ONE function, one call site, fourteen steps in order. Builtin, MCP, bridge
 * and device calls all enter here; none implements a variant.
 *
 * Steps 1–7 are pure plus one policy evaluation: nothing before step 8 touches the world.
 * Steps 8, 9 and 13 commit; step 10 runs with no transaction open.
 */
export function executeToolCall(
  deps: PipelineDeps,
  session: SessionView,
  input: ToolCallRequest,
  options: ExecuteOptions,
): Promise<PipelineResult> {
  // § Spans and metrics: tool.execute around the whole call (the tool runs inside it).
  const parallelGroup = options.dryRun ? null : options.run.parallelGroup;
  const plan = options.dryRun ? null : carriedPlan(deps, session, input, options.planned);
  return traceToolCall(deps.metrics, input, options.dryRun, parallelGroup, (t) => executeInSpan(deps, session, input, options, t, plan));
}

async function executeInSpan(
  deps: PipelineDeps,
  session: SessionView,
  input: ToolCallRequest,
  options: ExecuteOptions,
  t: CallTrace,
  plan: Plan | null,
): Promise<PipelineResult> {
  // The request is typed; every trust boundary (the API body, the bridge frame, the CLI)
  // parses it with `parseToolCallRequest` once. Only `arguments` is untrusted here, and steps 4
  // and 5 own it.
  // Step 0, before step 1: a tool.call continues as the tool it names (§ Control tools), so from
  // here on `request` is that tool's call, with the model's call id; a refused wrapper is
  // recorded under tool.call's own name.
  let request: ToolCallRequest;
  let admission: Admission;
  if (plan !== null) {
    // Steps 0–7 concluded in the batch planner's dry run of this very call (docs/adr/0042):
    // observers still see each step, in order, from this durable run, and the trace gets the
    // validate and policy spans at the times that work was done.
    request = plan.request;
    admission = plan.admission;
    if (deps.hooks) for (const n of [1, 2, 3, 4, 5, 6, 7] as const) await runStepHook(deps, n);
    t.replayChildren(plan.timings);
  } else {
    if (options.dryRun && options.keepPlan === true) t.timings = [];
    const unwrapped = unwrapToolCall(deps.registry, deps.validator, session, input);
    request = unwrapped.kind === 'refused' ? input : unwrapped.request;
    // In a durable run the approval decision is read from the approval record (step 8, rule 5),
    // never taken from the caller.
    admission =
      unwrapped.kind === 'refused'
        ? stopUnvalidated(unwrapped.concluded, unwrapped.spec, input, deps.limits ?? DEFAULT_PIPELINE_LIMITS)
        : await admit(deps, session, request, options.dryRun ? request.approval : undefined, t, unwrapped.kind === 'unwrapped');
  }
  t.spec = admission.ok ? admission.call.spec : admission.spec;
  t.leave();

  if (options.dryRun) {
    // The refusal as it would be recorded: the runtime's breaker counts it before dispatch.
    if (!admission.ok) return { ...admission.concluded, refused: refusedCall(request, admission) };
    const result: PipelineResult = admission.needsApproval
      ? { kind: 'approval_required', call: admission.call }
      : { kind: 'authorized', call: admission.call };
    // Carried only when the durable run would have decided alike: it reads the approval from
    // the record, never from the caller, so a dry run given the caller's answer plans nothing.
    if (options.keepPlan === true && input.approval === undefined && request.approval === undefined) {
      plans.set(result, {
        input,
        session,
        registry: deps.registry,
        validator: deps.validator,
        policy: deps.policy,
        request,
        admission,
        timings: t.timings ?? [],
      });
    }
    return result;
  }
  const d = deps.durable;
  if (d === undefined)
    throw new ConfigurationError('config.executor_not_durable', 'This pipeline has no store; only dry runs are possible.');
  const { run } = options;
  const tenantId = request.principal.tenant_id;
  const now = () => deps.clock.now();

  if (!admission.ok) return t.settled(await recordConclusion(d, now(), request, run, admission.concluded, refusedCall(request, admission)));
  const { call, needsApproval } = admission;
  const key = idempotencyKeyOf(request, call);
  // § Deduplication, rule 3 inside one process: a key already executing here is a conflict.
  if (d.inFlight.has(key)) return concludeWithoutExecution(request.callId, call.spec.name, 'tool.concurrency_conflict', 'running');
  d.inFlight.add(key);
  try {
    await runStepHook(deps, 8);
    const intent = await persistIntent(d, now(), request, call, run, key, needsApproval);
    if (intent.kind === 'concluded') return t.settled(intent.concluded);
    if (intent.kind === 'approval_required') return { kind: 'approval_required', call, invocationId: intent.row.id };
    if (intent.kind === 'suspended') return suspendedResult(call, intent.row);

    await runStepHook(deps, 9);
    const claimed = await claim(d, tenantId, intent.row, run, now());

    await runStepHook(deps, 10);
    const credentials = new ScrubbingCredentialResolver(d.credentials);
    const execution = await execute(d, deps.policy, now, request, call, claimed, run, credentials);
    // The pre-effect re-check withheld the tool: DENIED, or waiting for an approval.
    if (execution.kind === 'withheld') {
      const { outcome } = execution;
      return outcome.kind === 'approval_required' ? { kind: 'approval_required', call, invocationId: outcome.row.id } : t.settled(outcome);
    }

    // § Control tools: the call waits for a user or a child run; its row stays RUNNING, marked.
    if (execution.kind === 'suspended') {
      const row = await suspendCall(
        d,
        tenantId,
        claimed,
        run,
        now(),
        execution.suspendedKind,
        execution.suspendedRef,
        execution.authorization,
      );
      return suspendedResult(call, row);
    }

    await runStepHook(deps, 11);
    const validated = validateResult(deps.validator, call, execution, credentials);
    t.durationMs = validated.durationMs;

    await runStepHook(deps, 12);
    const writer = d.artifacts.forScope({ tenantId, runId: claimed.runId, invocationId: claimed.id });
    const output = await truncateOrArtifactize(
      validated,
      call.spec.name,
      call.spec.maximum_output_bytes,
      d.outputs.inlineMaximumBytes,
      writer,
    );
    t.outputBytes = output.outputBytes;

    await runStepHook(deps, 13);
    const terminated = await persistResult(d, tenantId, claimed, run, now(), validated, output);

    await runStepHook(deps, 14);
    return {
      kind: 'concluded',
      invocationStatus: terminated.row.status,
      item: renderToolResultItem(terminated.row),
      evidenceKey: validated.evidenceKey,
    };
  } finally {
    d.inFlight.delete(key);
  }
}

function suspendedResult(call: AuthorizedCall, row: InvocationRow): PipelineResult {
  if (row.suspendedKind === null || row.suspendedRef === null) throw new Error('A suspended result needs a suspended row.');
  return { kind: 'suspended', call, invocationId: row.id, suspendedKind: row.suspendedKind, suspendedRef: row.suspendedRef };
}

/** The observer hook, awaited only when there is one: the hot path pays no extra microtasks. */
function runStepHook(deps: PipelineDeps, n: PipelineStepNumber): Promise<void> | void {
  const onStep = deps.hooks?.onStep;
  return onStep === undefined ? undefined : onStep(n, PIPELINE_STEPS[n]);
}

function stop(
  concluded: Concluded,
  spec: ToolSpec | null,
  argumentsHash: string,
  args: Record<string, unknown>,
  decision?: PolicyDecision,
): Admission {
  return { ok: false, concluded, spec, argumentsHash, arguments: args, ...(decision === undefined ? {} : { decision }) };
}

/**
 * A refusal before step 5 has no normalized hash: the row keeps the arguments as received,
 * bounded by the argument byte limit and marked unvalidated, and is keyed on them and the raw
 * name, so different refused calls are different calls to the breaker (docs/adr/0020).
 */
function stopUnvalidated(concluded: Concluded, spec: ToolSpec | null, request: ToolCallRequest, limits: PipelineLimits): Admission {
  const record = unvalidatedRecord(request.toolName, request.arguments, limits.maximumArgumentBytes);
  return stop(concluded, spec, record.argumentsHash, record.stored);
}

function refusedCall(request: ToolCallRequest, admission: Extract<Admission, { ok: false }>): RefusedCall {
  return {
    spec: admission.spec,
    toolName: displayedToolName(request.toolName),
    argumentsHash: admission.argumentsHash,
    arguments: admission.arguments,
    originTrust: originTrustOf(request),
    ...(admission.decision === undefined ? {} : { decision: admission.decision }),
  };
}

/** Steps 1–7. */
async function admit(
  deps: PipelineDeps,
  session: SessionView,
  request: ToolCallRequest,
  approval: 'approved' | 'denied' | undefined,
  t: CallTrace,
  /** The call came through tool.call: its tool's definition never reached the provider. */
  viaToolCall: boolean,
): Promise<Admission> {
  const limits = deps.limits ?? DEFAULT_PIPELINE_LIMITS;

  if (deps.hooks) await runStepHook(deps, 1);
  const resolved = resolveTool(deps.registry, session.pinned, request.toolName, request.callId);
  if (!resolved.ok) return stopUnvalidated(resolved.concluded, null, request, limits);
  const tool = resolved.value;
  const spec = tool.spec;

  if (deps.hooks) await runStepHook(deps, 2);
  const disabled = checkEnabled(session.agent, session.pinned, spec, request.callId);
  if (disabled) return stopUnvalidated(disabled, spec, request, limits);

  if (deps.hooks) await runStepHook(deps, 3);
  const unscoped = checkScopes(request.principal, spec, request.callId);
  if (unscoped) return stopUnvalidated(unscoped, spec, request, limits);

  if (deps.hooks) await runStepHook(deps, 4);
  t.enter(TOOL_SPAN_NAMES.validate);
  const validated = validateArguments(deps.validator, spec, request.arguments, request.callId);
  if (!validated.ok) {
    const concluded = viaToolCall ? withInputSchema(validated.concluded, spec) : validated.concluded;
    return stopUnvalidated(concluded, spec, request, limits);
  }
  const args = validated.value;

  if (deps.hooks) await runStepHook(deps, 5);
  const normalized = normalizeArguments(spec, args, limits.maximumArgumentBytes, request.callId);
  if (!normalized.ok) return stopUnvalidated(normalized.concluded, spec, request, limits);
  const { canonical, hash } = normalized.value;

  if (deps.hooks) await runStepHook(deps, 6);
  t.enter(TOOL_SPAN_NAMES.policy);
  const originTrust = originTrustOf(request);
  const action = proposedAction(spec, request.principal, hash, originTrust, argumentTrustOf(request, args));
  const advertised = session.pinned !== null;
  const evaluated = evaluatePolicy(deps.policy, spec, action, advertised, request.callId);
  t.leave();
  if (!evaluated.ok) return stop(evaluated.concluded, spec, hash, args, evaluated.decision);
  const decision = evaluated.value;

  if (deps.hooks) await runStepHook(deps, 7);
  const approvalStep = requestApproval(decision, approval, spec.name, request.callId);
  if ('kind' in approvalStep) return stop(approvalStep, spec, hash, args, decision);
  const call: AuthorizedCall = {
    tool,
    spec,
    arguments: args,
    canonicalArguments: canonical,
    argumentsHash: hash,
    originTrust,
    action,
    decision,
    advertised,
  };
  return { ok: true, call, needsApproval: !approvalStep.proceed };
}
