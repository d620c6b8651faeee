import type {
  InvocationStatus,
  PolicyDecision,
  ProposedAction,
  SuspendedKind,
  ToolResultItem,
  ToolSpec,
  TrustLevel,
} from '@veetbot/domain';
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
  /** The call belongs to a session whose pin advertised the tool (step 2 checked it is in the pin). */
  readonly advertised: boolean;
}

/**
 * What a call refused at steps 1–7 is recorded as (lifecycle/record-refusal.ts): the row's tool name
 * (a placeholder for a name outside the registry grammar), its arguments hash and arguments —
 * validated ones from steps 6–7, the unvalidated record before that (docs/adr/0020) — so the
 * breaker can count it before dispatch under exactly the key its row will carry.
 */
export interface RefusedCall {
  readonly spec: ToolSpec | null;
  readonly toolName: string;
  readonly argumentsHash: string;
  readonly arguments: Record<string, unknown>;
  readonly originTrust: TrustLevel;
  /** The policy decision that refused it (docs/adr/0047: its row records the version); none before step 6. */
  readonly decision?: PolicyDecision;
}

export type PipelineResult =
  /** The call ended: before step 8 (denied or invalid) or after step 14. */
  | {
      readonly kind: 'concluded';
      readonly invocationStatus: InvocationStatus;
      readonly item: ToolResultItem;
      /** § The circuit breakers: the platform-computed evidence digest of a success; never model-visible. */
      readonly evidenceKey?: string | null;
      /** A dry run's refusal at steps 1–7, as it would be recorded. */
      readonly refused?: RefusedCall;
    }
  /** Step 7: policy asks a human. In a durable run the row is WAITING_FOR_APPROVAL with its approval record. */
  | { readonly kind: 'approval_required'; readonly call: AuthorizedCall; readonly invocationId?: string }
  /**
   * § Control tools: conversation.ask_user or delegate.run suspended the call — now, or when it
   * was first submitted (a resubmission never asks twice). The row is RUNNING with its marker.
   */
  | {
      readonly kind: 'suspended';
      readonly call: AuthorizedCall;
      readonly invocationId: string;
      readonly suspendedKind: SuspendedKind;
      readonly suspendedRef: string;
    }
  /** Dry run: steps 1–7 passed; nothing was persisted or executed. */
  | { readonly kind: 'authorized'; readonly call: AuthorizedCall };
