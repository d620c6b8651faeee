import { z } from 'zod';

// Wire spelling: lowercase snake values, as in the specification's event example
// ("tool_source": "mcp", "idempotency_class": "non_idempotent"). See docs/adr/0002.

/** RULINGS.md "Vocabulary": six side-effect classes. */
export const SideEffectClass = z.enum(['none', 'workspace_read', 'workspace_write', 'external_read', 'network_read', 'external_write']);
export type SideEffectClass = z.infer<typeof SideEffectClass>;

/** Read-only means NONE or one of the three *_READ classes (RULINGS.md). */
export function isReadOnlySideEffect(effect: SideEffectClass): boolean {
  return effect === 'none' || effect === 'workspace_read' || effect === 'external_read' || effect === 'network_read';
}

export const RiskLevel = z.enum(['low', 'medium', 'high']);
export type RiskLevel = z.infer<typeof RiskLevel>;

export const IdempotencyClass = z.enum(['read_only', 'idempotent', 'conditionally_idempotent', 'non_idempotent']);
export type IdempotencyClass = z.infer<typeof IdempotencyClass>;

/** § ToolSpec, completed: ToolKind. */
export const ToolKind = z.enum(['capability', 'control']);
export type ToolKind = z.infer<typeof ToolKind>;

/** § ToolSpec, completed: ToolSource. */
export const ToolSource = z.enum(['builtin', 'mcp', 'device', 'sandbox']);
export type ToolSource = z.infer<typeof ToolSource>;

/** § The two result shapes: the five outcome statuses. */
export const ToolOutcomeStatus = z.enum(['succeeded', 'failed', 'denied', 'unavailable', 'uncertain']);
export type ToolOutcomeStatus = z.infer<typeof ToolOutcomeStatus>;

/** RULINGS.md: the eight invocation statuses of tool_invocations.status. */
export const InvocationStatus = z.enum([
  'proposed',
  'authorized',
  'waiting_for_approval',
  'running',
  'succeeded',
  'failed',
  'denied',
  'uncertain',
]);
export type InvocationStatus = z.infer<typeof InvocationStatus>;

export const TERMINAL_INVOCATION_STATUSES: ReadonlySet<InvocationStatus> = new Set(['succeeded', 'failed', 'denied', 'uncertain']);

export function isTerminalInvocationStatus(status: InvocationStatus): boolean {
  return TERMINAL_INVOCATION_STATUSES.has(status);
}

/** § ToolResult: ToolFailureKind, plus outcome_unknown (RULINGS.md contradiction 2). */
export const ToolFailureKind = z.enum([
  'invalid_arguments',
  'not_found',
  'permission',
  'timeout',
  'output_too_large',
  'output_invalid',
  'upstream_error',
  'transport',
  'internal',
  'outcome_unknown',
]);
export type ToolFailureKind = z.infer<typeof ToolFailureKind>;

/** RULINGS.md: remediation is a closed set. */
export const Remediation = z.enum(['none', 'modify_arguments', 'retry_later', 'ask_user']);
export type Remediation = z.infer<typeof Remediation>;

/**
 * § Control tools: the two suspension kinds; § Approvals inside a script: `approval`, an
 * orchestration whose bridge call waited past approval_hold_seconds (docs/adr/0039); and
 * `authorization`, an MCP call waiting for a person's consent (docs/adr/0082).
 */
export const SuspendedKind = z.enum(['user_input', 'child_run', 'approval', 'authorization']);
export type SuspendedKind = z.infer<typeof SuspendedKind>;
