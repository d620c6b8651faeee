import type {
  ApprovalStatus,
  McpAuthScheme,
  McpTransport,
  ReconcileOutcome,
  ReviewResolution,
  RunStatus,
  SessionStatus,
  StepStatus,
} from '@veetbot/ports';

/**
 * The closed vocabularies the ports declare as types, as values for CHECK constraints.
 * `complete` fails to compile when a list misses a member of its type (or has an extra one).
 */
function complete<T extends string>() {
  return <const L extends readonly T[]>(list: L & ([T] extends [L[number]] ? unknown : never)): L => list;
}

export const RUN_STATUSES = complete<RunStatus>()(['running', 'waiting_for_user', 'succeeded', 'failed', 'cancelled']);
export const STEP_STATUSES = complete<StepStatus>()(['pending', 'running', 'completed']);
export const SESSION_STATUSES = complete<SessionStatus>()(['open', 'closed']);
export const APPROVAL_STATUSES = complete<ApprovalStatus>()(['pending', 'approved', 'denied']);
export const MCP_TRANSPORTS = complete<McpTransport>()(['stdio', 'http']);
export const MCP_AUTH_SCHEMES = complete<McpAuthScheme>()(['none', 'bearer', 'header', 'oauth2_client', 'env']);
export const REVIEW_RESOLUTIONS = complete<ReviewResolution>()(['succeeded', 'failed', 'not_applied']);
export const RECONCILIATION_OUTCOMES = complete<ReconcileOutcome | 'error'>()(['applied', 'not_applied', 'unknown', 'error']);
