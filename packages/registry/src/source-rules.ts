import { isValidServerId, type ToolSource, type ToolSpec } from '@veetbot/domain';
import { failure, type RuleFailure } from './registration-codes';

/**
 * § ToolSpec, completed: the forced-trust table. Overwritten, not validated (Hard gate 2): a
 * misconfigured server cannot declare itself trustworthy. § Discovery's mapping table also
 * forces allow_parallel false for MCP tools (v0.1).
 */
export function forceDynamicFields(declaration: Record<string, unknown>, source: Exclude<ToolSource, 'builtin'>): Record<string, unknown> {
  const forced: Record<string, unknown> = { ...declaration, source, output_trust: 'external_untrusted' };
  if (source === 'mcp') forced.allow_parallel = false;
  return forced;
}

/**
 * Who serves the tool: server_id exactly for MCP tools (and the name's second segment, so
 * mcp.{server_id}.{name} cannot claim another server), device_id exactly for device tools.
 * § Discovery: an MCP tool may require only scopes whose first segment is mcp and whose second
 * is the server id. § Milestone 26: only MCP's application-only marker hides a tool.
 */
export function checkSourceIdentity(spec: ToolSpec): RuleFailure | undefined {
  if (spec.source === 'mcp') {
    const segments = spec.name.split('.');
    if (spec.server_id === null || !isValidServerId(spec.server_id) || segments.length < 3 || segments[1] !== spec.server_id) {
      return failure('registry.server_id');
    }
    const prefix = `mcp.${spec.server_id}.`;
    if (spec.required_scopes.some((scope) => !scope.startsWith(prefix) || scope.length === prefix.length)) {
      return failure('registry.mcp_scope');
    }
  } else if (spec.server_id !== null) {
    return failure('registry.server_id');
  }
  if (spec.source === 'device' ? spec.device_id === null || spec.device_id === '' : spec.device_id !== null) {
    return failure('registry.device_id');
  }
  if (!spec.model_visible && spec.source !== 'mcp') return failure('registry.model_visible');
  return undefined;
}
