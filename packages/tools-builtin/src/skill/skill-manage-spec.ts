import {
  SKILL_CONTENT_MAX_BYTES,
  SKILL_DESCRIPTION_MAX_BYTES,
  SKILL_NAME_PATTERN,
  SKILL_REQUIRED_TOOLS_MAX,
  SKILL_VERSION_PATTERN,
} from '@veetbot/domain';
import { defineBuiltinSpec, JSON_SCHEMA_DIALECT } from '../builtin-spec';

export const SKILL_MANAGE_OPERATIONS = ['create', 'update', 'delete', 'list'] as const;
export type SkillManageOperation = (typeof SKILL_MANAGE_OPERATIONS)[number];

/** JSON Schema has no byte counts: maxLength bounds code points, the tool then checks bytes. */
const NAME = { type: 'string', pattern: SKILL_NAME_PATTERN.source, minLength: 1, maxLength: 64 };
const VERSION = { type: 'string', pattern: SKILL_VERSION_PATTERN.source, minLength: 1, maxLength: 64 };
/** A written skill as the result names it: only grammar-bounded and platform-chosen fields. */
const WRITTEN = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    version: { type: 'string' },
    source: { type: 'string' },
    trust: { type: 'string' },
  },
  required: ['name', 'version', 'source', 'trust'],
  additionalProperties: false,
};
/** list: the advertised metadata block (§ Skills) plus who wrote it; never content. */
const METADATA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    version: { type: 'string' },
    description: { type: 'string' },
    required_tools: { type: 'array', items: { type: 'string' } },
    source: { type: 'string' },
    trust: { type: 'string' },
  },
  required: ['name', 'version', 'description', 'required_tools', 'source', 'trust'],
  additionalProperties: false,
};

/**
 * § Skills: "It is a capability tool, classified risk: HIGH, idempotency:
 * CONDITIONALLY_IDEMPOTENT, requiring the skill.write scope". side_effect EXTERNAL_WRITE: it
 * writes durable tenant state that outlives the run and changes what later runs are told, which
 * is an effect outside this run, not a scratch file in its workspace (docs/adr/0036). The default
 * profile denies it below USER origin before the EXTERNAL_WRITE approval rule is reached.
 */
export const skillManageSpec = defineBuiltinSpec({
  name: 'skill.manage',
  version: '1.0.0',
  description:
    'Create, update, delete or list the skills you wrote (reusable instructions for a kind of task). ' +
    'update stores a new version; delete removes every version; list returns metadata, never content. ' +
    'Skills written here are loaded later as untrusted text. Operator and MCP skills are read-only.',
  input_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      operation: { type: 'string', enum: [...SKILL_MANAGE_OPERATIONS] },
      name: NAME,
      version: { ...VERSION, description: 'create: default "1". update: default the latest integer plus one.' },
      description: { type: 'string', minLength: 1, maxLength: SKILL_DESCRIPTION_MAX_BYTES },
      required_tools: {
        type: 'array',
        items: { type: 'string', minLength: 1, maxLength: 256 },
        maxItems: SKILL_REQUIRED_TOOLS_MAX,
        uniqueItems: true,
      },
      content: { type: 'string', minLength: 1, maxLength: SKILL_CONTENT_MAX_BYTES },
    },
    required: ['operation'],
    additionalProperties: false,
    // What each operation needs: create names the whole skill; update its name and new content
    // (the description and required_tools default to the latest version's); delete a name; list
    // nothing. One branch per operation (oneOf: the const makes them exclusive).
    oneOf: [
      { properties: { operation: { const: 'create' } }, required: ['name', 'description', 'content'] },
      { properties: { operation: { const: 'update' } }, required: ['name', 'content'] },
      { properties: { operation: { const: 'delete' } }, required: ['name'] },
      { properties: { operation: { const: 'list' } } },
    ],
  },
  output_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      operation: { type: 'string', enum: [...SKILL_MANAGE_OPERATIONS] },
      skill: WRITTEN,
      deleted_versions: { type: 'integer', minimum: 0 },
      skills: { type: 'array', items: METADATA },
      replayed: { type: 'boolean' },
    },
    required: ['operation'],
    additionalProperties: false,
  },
  side_effect: 'external_write',
  risk: 'high',
  // Replaying a create or update with the same idempotency key finds the row that key wrote
  // (its id is derived from the key) and returns it; a replayed delete finds nothing left.
  idempotency: 'conditionally_idempotent',
  required_scopes: ['skill.write'],
  timeout_seconds: 10,
  maximum_output_bytes: 65_536,
  allow_parallel: false,
  // What the platform writes about a skill. A list carries descriptions other authors wrote, so
  // it comes back labelled with the lowest author's trust (the tool may only lower this).
  output_trust: 'platform',
});
