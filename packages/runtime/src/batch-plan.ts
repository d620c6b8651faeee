import { admitBatch, type BatchBudget, type BatchCall, type BatchSpec } from '@veetbot/domain';
import type { BreakerCall } from '@veetbot/domain';
import {
  executeToolCall,
  type AuthorizedCall,
  type PipelineDeps,
  type PipelineResult,
  type RefusedCall,
  type SessionView,
  type ToolCallRequest,
} from '@veetbot/executor';
import type { ToolRegistry } from '@veetbot/ports';

export interface PlannedCall {
  readonly index: number;
  readonly request: ToolCallRequest;
  /**
   * What steps 1–7 concluded in a dry run: the call as it would run (spec, validated
   * arguments, normalized hash). Null when the pipeline will conclude it before step 8
   * (unknown tool, not enabled, scope, invalid arguments, policy deny): such a call never
   * executes, and the pipeline records it.
   */
  readonly authorized: AuthorizedCall | null;
  /** When `authorized` is null: the refusal as the pipeline will record it. */
  readonly refused: RefusedCall | null;
  /**
   * The breaker's key, (name, arguments hash), exactly as the call's row will carry it: the
   * normalized hash of an admitted call, and for a refused one the hash of its row — over the
   * raw name and the arguments as received when refused before step 5 (docs/adr/0020).
   */
  readonly identity: BreakerCall;
  /**
   * The dry run's answer, handed to the durable run of the same request (`planned`), which then
   * carries steps 1–7's conclusion instead of evaluating them again (docs/adr/0042).
   */
  readonly preview: PipelineResult;
}

/**
 * The breaker is keyed on the normalized arguments hash, which only steps 4–5 produce, and
 * it must run BEFORE dispatch. So each call first goes through steps 1–7 as a dry run — pure,
 * nothing persisted, the same code the durable run will execute — and the runtime reads the
 * hash from there rather than computing a second, possibly different one. The dry run gets no
 * hooks: observers see each call's steps once, from the durable run. The durable run carries
 * the dry run's admission (`preview`), so steps 1–7 are evaluated once per call (ADR 0042).
 */
export async function planCalls(
  previewDeps: PipelineDeps,
  session: SessionView,
  requests: readonly ToolCallRequest[],
): Promise<PlannedCall[]> {
  const planned: PlannedCall[] = [];
  for (const [index, request] of requests.entries()) {
    const preview = await executeToolCall(previewDeps, session, request, { dryRun: true, keepPlan: true });
    const authorized = preview.kind === 'authorized' || preview.kind === 'approval_required' ? preview.call : null;
    const refused = preview.kind === 'concluded' ? (preview.refused ?? null) : null;
    if (authorized === null && refused === null) throw new Error('The dry run concluded a call without saying how it is recorded.');
    const identity =
      authorized !== null
        ? { name: authorized.spec.name, argumentsHash: authorized.argumentsHash }
        : { name: refused!.toolName, argumentsHash: refused!.argumentsHash };
    planned.push({ index, request, authorized, refused, identity, preview });
  }
  return planned;
}

/**
 * § The admission check, over the batch as a whole before any call executes: the specs of
 * the tools the calls actually run (the pinned version, from the registry). A call whose tool
 * cannot be resolved has an unknown effect, so the batch runs sequentially.
 */
export function admitPlannedBatch(
  planned: readonly PlannedCall[],
  session: SessionView,
  registry: ToolRegistry,
  budget: BatchBudget,
): 'parallel' | 'sequential' {
  const calls: BatchCall[] = [];
  for (const call of planned) {
    // tool.call is already unwrapped here: the dry run's step 0 (executor/src/steps/
    // step-00-unwrap-tool-call.ts) made `authorized` — or the refusal's spec — the named tool's.
    const spec = call.authorized?.spec ?? call.refused?.spec ?? resolvePinnedSpec(registry, session, call.request.toolName);
    if (spec === null) return 'sequential';
    const args = call.authorized?.arguments ?? (isRecord(call.request.arguments) ? call.request.arguments : {});
    calls.push({ spec, arguments: args });
  }
  return admitBatch(calls, budget).mode;
}

function resolvePinnedSpec(registry: ToolRegistry, session: SessionView, name: string): BatchSpec | null {
  const pinned = session.pinned?.specs.find((s) => s.name === name);
  if (pinned === undefined) return null;
  try {
    return registry.get(name, pinned.version).spec;
  } catch {
    return null;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
