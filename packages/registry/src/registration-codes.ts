import type { RegistrationRejection } from '@veetbot/ports';

/**
 * One stable code per registration rule (§ The registry; Hard gate 1), each with one fixed
 * reason. A reason may be followed by a detail built from our own vocabulary (a ToolSpec
 * field path, a limit); it never quotes a declared value, because dynamic declarations come
 * from outside.
 */
export const REGISTRATION_REASONS = {
  'registry.spec_invalid': 'The declaration is not a valid ToolSpec.',
  'registry.output_trust_missing': 'output_trust is required and has no default.',
  'registry.name_invalid': 'The name does not match the registry grammar or is longer than 96 characters.',
  'registry.domain_reserved': 'The mcp and device domains are reserved for their dynamic sources.',
  'registry.domain_unknown': 'The name is in no registered domain.',
  'registry.domain_partition': 'The domain does not hold tools of this source or kind.',
  'registry.control_set': 'The control tools are exactly the five names of the closed set, and each is kind control.',
  'registry.control_classification': 'A control tool has side_effect none and idempotency read_only or idempotent.',
  'registry.control_target': 'A control tool runs in_process.',
  'registry.control_dynamic': 'There is no runtime registration path for a control tool.',
  'registry.source_builtin': 'Builtins are registered at build time, never dynamically.',
  'registry.source_invalid': 'The source is not one of builtin, mcp, device, sandbox.',
  'registry.source_mismatch': 'The declared source differs from the registration path.',
  'registry.source_conflict': 'The name is already held by a tool of another source.',
  'registry.server_id': 'server_id is set exactly for MCP tools, is a valid server id, and is the name’s second segment.',
  'registry.device_id': 'device_id is set exactly for device tools.',
  'registry.mcp_scope': 'An MCP tool may require only scopes under mcp.{server_id}.',
  'registry.model_visible': 'Only an MCP tool marked application-only may be hidden from the model.',
  'registry.target_source': 'The target kind is not one this source may use.',
  'registry.target_web_provider': 'The web_provider target requires network_read, read_only and external_untrusted.',
  'registry.target_unsubscribe':
    'The unsubscribe_endpoint target belongs to the builtin email.unsubscribe alone (external_write, medium, idempotent, no parallelism), and that name to that target alone.',
  'registry.limits_invalid': 'A route limit (the request timeout) is not a positive, finite number of seconds.',
  'registry.output_ceiling': 'maximum_output_bytes is above the configured global ceiling.',
  'registry.spec_canonical': 'The declaration has no canonical JSON form (for example -0, or keys equal after NFC).',
  'registry.flag_disabled': 'The deployment flag that gates this tool is off.',
  'registry.duplicate': 'A different tool is already registered under this name and version.',
  'registry.batch_conflict': 'The same name appears more than once in one dynamic registration; neither is registered.',
} as const satisfies Record<`registry.${string}`, string>;

export type RegistryRuleCode = keyof typeof REGISTRATION_REASONS;

/** A rule's verdict on one declaration: the code and the reason a report or error carries. */
export interface RuleFailure {
  readonly code: RegistrationRejection['code'];
  readonly reason: string;
}

export function failure(code: RegistryRuleCode, detail?: string): RuleFailure {
  const reason = REGISTRATION_REASONS[code];
  return { code, reason: detail === undefined ? reason : `${reason} ${detail}` };
}
