import { VeetbotError } from '@veetbot/domain';
import { DEFAULT_PIPELINE_LIMITS, type PipelineDeps, type SessionView } from './pipeline-deps';
import type { PipelineResult } from './pipeline-result';
import { PIPELINE_STEPS, type PipelineStepNumber } from './pipeline-step';
import { ToolCallRequest } from './tool-call-request';
import { resolveTool } from './steps/step-01-resolve-tool';
import { checkEnabled } from './steps/step-02-check-enabled';
import { checkScopes } from './steps/step-03-check-scopes';
import { validateArguments } from './steps/step-04-validate-arguments';
import { normalizeArguments } from './steps/step-05-normalize-arguments';
import { argumentTrustOf, evaluatePolicy, originTrustOf, proposedAction } from './steps/step-06-evaluate-policy';
import { requestApproval } from './steps/step-07-request-approval';

export class InvalidToolCallRequestError extends VeetbotError {
  constructor(message: string) {
    super('executor.request_invalid', message);
  }
}

export interface ExecuteOptions {
  /** Stop after step 7: nothing is persisted, nothing executes. */
  readonly dryRun: boolean;
}

/**
 * § The pipeline: ONE function, one call site, fourteen steps in order. Builtin, MCP,
 * bridge and device calls all enter here; none implements a variant.
 *
 * Steps 1–7 are pure plus one policy evaluation: nothing before step 8 touches the world,
 * so a crash there leaves nothing to reconcile.
 */
export async function executeToolCall(deps: PipelineDeps, session: SessionView, input: ToolCallRequest, options: ExecuteOptions): Promise<PipelineResult> {
  const parsed = ToolCallRequest.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidToolCallRequestError(`Tool call request is invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? ''}`);
  }
  const request = parsed.data;
  const limits = deps.limits ?? DEFAULT_PIPELINE_LIMITS;
  const step = async (n: PipelineStepNumber): Promise<void> => {
    await deps.hooks?.onStep?.(n, PIPELINE_STEPS[n]);
  };

  await step(1);
  const resolved = resolveTool(deps.registry, session.pinned, request.toolName, request.callId);
  if (!resolved.ok) return resolved.concluded;
  const tool = resolved.value;
  const spec = tool.spec;

  await step(2);
  const disabled = checkEnabled(session.agent, session.pinned, spec, request.callId);
  if (disabled) return disabled;

  await step(3);
  const unscoped = checkScopes(request.principal, spec, request.callId);
  if (unscoped) return unscoped;

  await step(4);
  const validated = validateArguments(deps.validator, spec, request.arguments, request.callId);
  if (!validated.ok) return validated.concluded;
  const args = validated.value;

  await step(5);
  const normalizedStep = normalizeArguments(spec, args, limits.maximumArgumentBytes, request.callId);
  if (!normalizedStep.ok) return normalizedStep.concluded;
  const normalized = normalizedStep.value;

  await step(6);
  const originTrust = originTrustOf(request);
  const action = proposedAction(spec, request.principal, normalized.hash, originTrust, argumentTrustOf(request, args));
  const evaluated = evaluatePolicy(deps.policy, action, request.callId);
  if (!evaluated.ok) return evaluated.concluded;
  const decision = evaluated.value;

  await step(7);
  const approval = requestApproval(decision, request.approval, spec.name, request.callId);
  if ('kind' in approval) return approval; // concluded: a refused approval

  const call = { tool, spec, arguments: args, canonicalArguments: normalized.canonical, argumentsHash: normalized.hash, originTrust, action, decision };
  if (!approval.proceed) return { kind: 'approval_required', call };
  if (options.dryRun) return { kind: 'authorized', call };
  throw new InvalidToolCallRequestError('Durable execution (steps 8–14) needs a store; this pipeline was built for dry runs only.');
}
