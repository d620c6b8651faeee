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
}

export interface ApprovalDecision {
  readonly decision: 'approved' | 'denied';
  /** The principal holding `approvals.decide`. */
  readonly decidedBy: string;
  readonly decidedAt: Date;
}

export interface ApprovalStore {
  get(tenantId: string, approvalId: string): Promise<ApprovalRow | null>;
  getByInvocation(tenantId: string, invocationId: string): Promise<ApprovalRow | null>;
  /** Pending approvals, oldest first. */
  listPending(tenantId: string, limit: number): Promise<ApprovalRow[]>;
  /** PENDING -> APPROVED | DENIED, once (InvalidTransitionError afterwards). */
  decide(tenantId: string, approvalId: string, decision: ApprovalDecision, events: readonly NewEvent[]): Promise<ApprovalRow>;
}
