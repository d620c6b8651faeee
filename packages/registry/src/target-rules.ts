import type { TargetKind, ToolSource, ToolSpec } from '@veetbot/domain';
import { failure, type RuleFailure } from './registration-codes';

/**
 * Which target kinds each source may use (our reading of § ToolSpec, completed: target_kind
 * is the ExecutionTarget, and a dynamic tool is served by its own adapter). A builtin runs
 * in-process, in the sandbox, or through one of the three network-enabled builtin targets;
 * an MCP tool only through its server, a device tool only on its device, a sandbox tool only
 * in the sandbox.
 */
export const SOURCE_TARGETS: Readonly<Record<ToolSource, readonly TargetKind[]>> = {
  builtin: ['in_process', 'sandbox', 'web_provider', 'browser_provider', 'unsubscribe_endpoint'],
  mcp: ['mcp'],
  device: ['device'],
  sandbox: ['sandbox'],
};

export const UNSUBSCRIBE_TOOL_NAME = 'email.unsubscribe';

export function checkTargetRules(spec: ToolSpec): RuleFailure | undefined {
  // § Milestone 31, pinned both ways: the name only with the target ...
  if (spec.name === UNSUBSCRIBE_TOOL_NAME && spec.target_kind !== 'unsubscribe_endpoint') {
    return failure('registry.target_unsubscribe');
  }
  if (!SOURCE_TARGETS[spec.source].includes(spec.target_kind)) return failure('registry.target_source');
  switch (spec.target_kind) {
    case 'web_provider':
      // § The registry (domain paragraph): valid only with NETWORK_READ, READ_ONLY and
      // EXTERNAL_UNTRUSTED; every other use of the target is refused.
      if (spec.side_effect !== 'network_read' || spec.idempotency !== 'read_only' || spec.output_trust !== 'external_untrusted') {
        return failure('registry.target_web_provider');
      }
      return undefined;
    case 'unsubscribe_endpoint':
      // ... and the target only with the name, as a builtin classified EXTERNAL_WRITE, MEDIUM,
      // IDEMPOTENT, without parallelism, so no other tool can claim the unsubscribe transport.
      if (
        spec.name !== UNSUBSCRIBE_TOOL_NAME ||
        spec.source !== 'builtin' ||
        spec.side_effect !== 'external_write' ||
        spec.risk !== 'medium' ||
        spec.idempotency !== 'idempotent' ||
        spec.allow_parallel
      ) {
        return failure('registry.target_unsubscribe');
      }
      return undefined;
    default:
      return undefined;
  }
}
