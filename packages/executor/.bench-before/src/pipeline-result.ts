import type { InvocationStatus, PolicyDecision, ProposedAction, ToolResultItem, ToolSpec, TrustLevel } from '@veetbot/domain';
import type { Tool } from '@veetbot/ports';

/** Everything steps 1–7 established about a call that may proceed to step 8. */
export interface AuthorizedCall {
  readonly tool: Tool;
  readonly spec: ToolSpec;
  /** Validated arguments with schema defaults applied (what the tool receives). */
  readonly arguments: Record<string, unknown>;
  readonly canonicalArguments: string;
  readonly argumentsHash: string;
  readonly originTrust: TrustLevel;
  readonly action: ProposedAction;
  readonly decision: PolicyDecision;
}

export type PipelineResult =
  /** The call ended: before step 8 (denied or invalid) or after step 14. */
  | {
      readonly kind: 'concluded';
      readonly invocationStatus: InvocationStatus;
      readonly item: ToolResultItem;
      /** § The circuit breakers: the platform-computed evidence digest of a success; never model-visible. */
      readonly evidenceKey?: string | null;
    }
  /** Step 7: policy asks a human. In a durable run the row is WAITING_FOR_APPROVAL with its approval record. */
  | { readonly kind: 'approval_required'; readonly call: AuthorizedCall; readonly invocationId?: string }
  /** Dry run: steps 1–7 passed; nothing was persisted or executed. */
  | { readonly kind: 'authorized'; readonly call: AuthorizedCall };
