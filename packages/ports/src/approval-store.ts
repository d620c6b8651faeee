import type { NewEvent } from './event-store';

// The conventions every store follows are in stores.ts.

export type ApprovalStatus = 'pending' | 'approved' | 'denied';

export interface ApprovalRow {
  readonly id: string;
  readonly tenantId: string;
  /** One approval per invocation (UNIQUE): a duplicate submit resumes the same approval. */
  readonly invocationId: string;
  readonly runId: string;
  readonly status: ApprovalStatus;
  readonly requestedAt: Date;
  readonly decidedBy: string | null;
  readonly decidedAt: Date | null;
  /**
   * What the approval is bound to (docs/adr/0047): the invocation's arguments hash and the
   * policy version and rule that asked. A decision names both; the pipeline honours a decision
   * only under the version it was asked under. Null on approvals older than migration 0020.
   */
  readonly argumentsHash: string | null;
  readonly policyVersion: string | null;
  readonly policyRuleId: string | null;
}

export interface ApprovalDecision {
  readonly decision: 'approved' | 'denied';
  /** The principal holding `approvals.decide`. */
  readonly decidedBy: string;
  readonly decidedAt: Date;
  /**
   * What the decider saw (docs/adr/0047): the decision is recorded only while the approval
   * still holds this arguments hash and policy version (compare-and-set in the same statement),
   * else ApprovalBindingError. The api always states it; without it the store decides whatever
   * the approval holds (the pipeline still honours a decision only under the version it was
   * made under).
   */
  readonly expected?: { readonly argumentsHash: string; readonly policyVersion: string };
}

export interface ApprovalStore {
  get(tenantId: string, approvalId: string): Promise<ApprovalRow | null>;
  getByInvocation(tenantId: string, invocationId: string): Promise<ApprovalRow | null>;
  /** Pending approvals, oldest first. */
  listPending(tenantId: string, limit: number): Promise<ApprovalRow[]>;
  /**
   * PENDING -> APPROVED | DENIED, once (InvalidTransitionError afterwards), bound to the
   * arguments hash and policy version the decider saw (ApprovalBindingError when they differ).
   */
  decide(tenantId: string, approvalId: string, decision: ApprovalDecision, events: readonly NewEvent[]): Promise<ApprovalRow>;
}
