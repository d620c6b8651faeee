import { ConfigurationError, ToolSpec } from '@veetbot/domain';
import type { Tool } from '@veetbot/ports';

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';

export const ORCHESTRATION_TOOL_NAME = 'sandbox.run_orchestration';
/** The program's source, in UTF-16 code units (what JSON Schema's maxLength counts). */
export const ORCHESTRATION_SOURCE_MAXIMUM_LENGTH = 65_536;
/** The call's ceiling: the default approval hold (300 s) plus the program's own work. */
export const ORCHESTRATION_TIMEOUT_SECONDS = 900;

/**
 * § The programmatic orchestration bridge (docs/adr/0039): the tool that orchestrates. One
 * governed call with its row; its step 10 is the runtime's (OrchestrationHost), which runs the
 * program in the sandbox and re-enters step 1 for every call it makes through the bridge.
 *
 * - side_effect workspace_write: the program may write the workspace directly, as
 *   sandbox.run_command's may; every tool it calls is governed on its own row.
 * - idempotency idempotent: a recovered or resumed orchestration re-executes the program and
 *   every earlier bridge call deduplicates at step 8 (same script, same ordinal, same call id,
 *   same key) — subject to the determinism caveat (§ Call identity without a provider). Each
 *   call's own class and watermark still bound what a non-deterministic replay can repeat.
 */
export const ORCHESTRATION_SPEC = ToolSpec.parse({
  name: ORCHESTRATION_TOOL_NAME,
  version: '1.0.0',
  kind: 'capability',
  source: 'builtin',
  description:
    'Run a JavaScript program (an ES module, run by node in an isolated sandbox with no network) that calls your tools: ' +
    "`import { tools } from '/opt/veetbot/veetbot-tools.mjs'; const item = await tools.call(name, arguments);` " +
    'Each call is governed like one of yours and answers the same result item (outcome, content). At most 64 calls per ' +
    "program. The result is the program's stdout and stderr and a summary of its calls. The workspace is /workspace.",
  input_schema: {
    $schema: DIALECT,
    type: 'object',
    properties: {
      language: { type: 'string', enum: ['javascript'], description: 'Only javascript (node, ES module) in v0.1.' },
      source: { type: 'string', minLength: 1, maxLength: ORCHESTRATION_SOURCE_MAXIMUM_LENGTH },
    },
    required: ['language', 'source'],
    additionalProperties: false,
  },
  output_schema: {
    $schema: DIALECT,
    type: 'object',
    properties: {
      exit_code: { type: ['integer', 'null'] },
      signal: { type: ['string', 'null'] },
      stdout_bytes: { type: 'integer', minimum: 0 },
      stderr_bytes: { type: 'integer', minimum: 0 },
      duration_ms: { type: 'integer', minimum: 0 },
      script_hash: { type: 'string' },
      calls: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            ordinal: { type: 'integer', minimum: 0 },
            call_id: { type: 'string' },
            tool_name: { type: 'string' },
            status: { type: 'string' },
            reason_code: { type: 'string' },
          },
          required: ['ordinal', 'call_id', 'tool_name', 'status', 'reason_code'],
          additionalProperties: false,
        },
      },
    },
    required: ['exit_code', 'signal', 'stdout_bytes', 'stderr_bytes', 'duration_ms', 'script_hash', 'calls'],
    additionalProperties: false,
  },
  side_effect: 'workspace_write',
  risk: 'medium',
  idempotency: 'idempotent',
  required_scopes: ['sandbox.run'],
  timeout_seconds: ORCHESTRATION_TIMEOUT_SECONDS,
  maximum_output_bytes: 262_144,
  allow_parallel: false,
  target_kind: 'sandbox',
  // § ToolSpec: generated code and its output are Untrusted (Section 22) — whatever it prints.
  output_trust: 'external_untrusted',
});

/**
 * The registry entry. Step 10 hands the call to the runtime (`hostedBy`); reaching `execute`
 * would mean a pipeline composed without one, and it fails like a control tool's would.
 */
export function orchestrationTools(): Tool[] {
  return [
    {
      spec: ORCHESTRATION_SPEC,
      hostedBy: 'orchestration',
      execute: () =>
        Promise.reject(new ConfigurationError('config.orchestration_unavailable', 'This pipeline has no runtime to run orchestrations.')),
    },
  ];
}
