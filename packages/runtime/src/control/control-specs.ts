import { ToolSpec, type ToolSpecInput } from '@veetbot/domain';
import type { Tool } from '@veetbot/ports';

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** The working-state document's ceiling: canonical JSON bytes (docs/adr/0034). */
export const WORKING_STATE_MAXIMUM_BYTES = 16_384;
/** A question, and an answer, are at most this many characters. */
export const QUESTION_MAXIMUM_CHARACTERS = 4_000;
export const ANSWER_MAXIMUM_CHARACTERS = 16_000;
/** A delegated brief. */
export const BRIEF_MAXIMUM_CHARACTERS = 16_000;

/**
 * § Control tools: constrained rather than exempted — side_effect NONE, idempotency READ_ONLY or
 * IDEMPOTENT, target in_process, checked by the registry at registration (control-rules.ts).
 * Their side_effect describes the transition, which is NONE toward the world.
 */
const control = (declaration: Omit<ToolSpecInput, 'kind' | 'side_effect' | 'target_kind' | 'source' | 'version'>): ToolSpec =>
  ToolSpec.parse({
    ...declaration,
    version: '1',
    kind: 'control',
    side_effect: 'none',
    target_kind: 'in_process',
    source: 'builtin',
  });

export const ASK_USER_SPEC = control({
  name: 'conversation.ask_user',
  description: 'Ask the user a question and wait for the answer. The run pauses until the user answers; the answer is the result.',
  input_schema: {
    $schema: DIALECT,
    type: 'object',
    properties: { question: { type: 'string', minLength: 1, maxLength: QUESTION_MAXIMUM_CHARACTERS } },
    required: ['question'],
    additionalProperties: false,
  },
  output_schema: null,
  risk: 'low',
  idempotency: 'idempotent',
  required_scopes: [],
  timeout_seconds: 30,
  maximum_output_bytes: 65_536,
  allow_parallel: false,
  // The answer is the user's own text (§ Control tools; docs/adr/0034).
  output_trust: 'user',
});

export const DELEGATE_RUN_SPEC = control({
  name: 'delegate.run',
  description:
    'Delegate a sub-task to a child run with a subset of your tools and part of your budget. The result is what the child run answers.',
  input_schema: {
    $schema: DIALECT,
    type: 'object',
    properties: {
      brief: { type: 'string', minLength: 1, maxLength: BRIEF_MAXIMUM_CHARACTERS },
      tools: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 256 }, maxItems: 256, uniqueItems: true },
      maximum_tool_calls: { type: 'integer', minimum: 0, maximum: 100_000 },
      deadline_seconds: { type: 'integer', minimum: 1, maximum: 86_400 },
    },
    required: ['brief', 'tools'],
    additionalProperties: false,
  },
  output_schema: null,
  risk: 'medium',
  idempotency: 'idempotent',
  required_scopes: [],
  timeout_seconds: 30,
  maximum_output_bytes: 65_536,
  allow_parallel: false,
  // A child's result is a model's output (§ Control tools: "labelled EXTERNAL_UNTRUSTED").
  output_trust: 'external_untrusted',
});

export const UPDATE_WORKING_STATE_SPEC = control({
  name: 'context.update_working_state',
  description:
    'Replace the run working-state document (a JSON object you keep across steps). Give expected_version to refuse the write when it changed since you read it.',
  input_schema: {
    $schema: DIALECT,
    type: 'object',
    properties: {
      document: { type: 'object' },
      expected_version: { type: 'integer', minimum: 0 },
    },
    required: ['document'],
    additionalProperties: false,
  },
  output_schema: null,
  risk: 'low',
  idempotency: 'idempotent',
  required_scopes: [],
  timeout_seconds: 10,
  maximum_output_bytes: 4_096,
  allow_parallel: false,
  output_trust: 'platform',
});

export const SKILL_LOAD_SPEC = control({
  name: 'skill.load',
  description:
    'Load a skill (instructions for a kind of task) by name into this turn. Only its name and description are listed until loaded.',
  input_schema: {
    $schema: DIALECT,
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 128 },
      version: { type: 'string', minLength: 1, maxLength: 64 },
    },
    required: ['name'],
    additionalProperties: false,
  },
  output_schema: null,
  risk: 'low',
  idempotency: 'read_only',
  required_scopes: [],
  timeout_seconds: 10,
  maximum_output_bytes: 65_536,
  allow_parallel: true,
  // The highest a skill can be; agent-written and MCP-prompt skills come back EXTERNAL_UNTRUSTED
  // and step 11 clamps to the lower label (skills.md via the specification).
  output_trust: 'trusted_configuration',
});

export const TOOL_CALL_SPEC = control({
  name: 'tool.call',
  description: 'Call a tool from the deferred tool index by name, with its arguments.',
  input_schema: {
    $schema: DIALECT,
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 256 },
      arguments: { type: 'object' },
    },
    required: ['name', 'arguments'],
    additionalProperties: false,
  },
  output_schema: null,
  risk: 'low',
  idempotency: 'read_only',
  required_scopes: [],
  timeout_seconds: 10,
  maximum_output_bytes: 4_096,
  allow_parallel: true,
  output_trust: 'platform',
});

export const CONTROL_TOOL_SPECS: readonly ToolSpec[] = [
  ASK_USER_SPEC,
  DELEGATE_RUN_SPEC,
  UPDATE_WORKING_STATE_SPEC,
  SKILL_LOAD_SPEC,
  TOOL_CALL_SPEC,
];

/**
 * The five control tools as registry entries (§ Control tools: "registered in the same
 * registry"). Step 10 never calls their execute: it hands a CONTROL call to the runtime's
 * ControlToolHost (control-host.ts). Reaching execute means a pipeline without a runtime.
 */
export function controlTools(): Tool[] {
  return CONTROL_TOOL_SPECS.map((spec) => ({
    spec,
    execute: () => Promise.reject(new Error(`${spec.name} is executed by the runtime, never dispatched.`)),
  }));
}
