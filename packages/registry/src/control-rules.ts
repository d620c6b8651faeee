import { CONTROL_TOOL_NAMES, type ToolSpec } from '@veetbot/domain';
import { failure, type RuleFailure } from './registration-codes';

/**
 * § ToolSpec, completed and § Control tools: control tools are constrained, not exempted, and
 * the constraints are checked at registration. The set is closed at build time: kind control
 * exactly for the five names of CONTROL_TOOL_NAMES.
 */
export function checkControlRules(spec: ToolSpec): RuleFailure | undefined {
  const named = CONTROL_TOOL_NAMES.has(spec.name);
  if (named !== (spec.kind === 'control')) return failure('registry.control_set');
  if (spec.kind !== 'control') return undefined;
  if (spec.side_effect !== 'none' || (spec.idempotency !== 'read_only' && spec.idempotency !== 'idempotent')) {
    return failure('registry.control_classification');
  }
  // A control tool mutates runtime state; it cannot be routed to a sandbox, device or server.
  if (spec.target_kind !== 'in_process') return failure('registry.control_target');
  return undefined;
}
