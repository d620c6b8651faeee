import {
  derivedUuid,
  isAgentEditableSkill,
  isValidSkillName,
  latestSkillPerName,
  minTrust,
  SKILL_CONTENT_MAX_BYTES,
  SKILL_DESCRIPTION_MAX_BYTES,
  skillTrust,
  type ToolResultInput,
  type TrustLevel,
} from '@veetbot/domain';
import type { Clock, SkillRow, SkillStore, Tool, ToolExecutionContext } from '@veetbot/ports';
import { toolFailure } from '../tool-result-helpers';
import { skillManageSpec } from './skill-manage-spec';

/** Agent-written skills: always this source and this label (§ Skills; docs/adr/0036). */
const AGENT_SOURCE = 'agent';
const AGENT_TRUST: TrustLevel = 'external_untrusted';
/** Reserved for MCP server prompts, which mcp-adapter stores as `mcp.{server}.{prompt}`. */
const RESERVED_PREFIX = 'mcp.';
const INTEGER = /^(0|[1-9][0-9]{0,14})$/;

export interface SkillManageOptions {
  readonly skills: SkillStore;
  readonly clock: Clock;
}

const utf8Bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/**
 * The row a create or update writes takes its id from the call's idempotency key, so a replay
 * with the same key (§ The effect watermark: CONDITIONALLY_IDEMPOTENT, watermark set → replay)
 * finds the row it already wrote instead of writing a second version.
 */
export function skillRowId(tenantId: string, idempotencyKey: string): string {
  return derivedUuid('veetbot.skill.v1', tenantId, idempotencyKey);
}

const written = (row: SkillRow) => ({ name: row.name, version: row.version, source: row.source, trust: skillTrust(row) });

const success = (text: string, structured: Record<string, unknown>, trust: TrustLevel = 'platform'): ToolResultInput => ({
  ok: true,
  content: [{ type: 'text', text }],
  structured,
  output_trust: trust,
});

const readOnly = (row: SkillRow): ToolResultInput =>
  toolFailure(
    'permission',
    'skill_read_only',
    `${row.name} has a version written by ${row.source}; skill.manage edits only skills the agent wrote.`,
  );

const notFound = (name: string): ToolResultInput => toolFailure('not_found', 'skill', `No skill named ${name}.`);

function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'store.unique_violation';
}

/** The bounds JSON Schema cannot state: UTF-8 bytes, and the reserved name prefix. */
function checkBounds(args: Record<string, unknown>): ToolResultInput | null {
  const name = args.name;
  if (name !== undefined && !isValidSkillName(name)) return toolFailure('invalid_arguments', 'name', 'name must match the skill grammar.');
  // Only a create can claim a name; an update or delete of an MCP prompt is refused as read-only below.
  if (args.operation === 'create' && typeof name === 'string' && name.startsWith(RESERVED_PREFIX)) {
    return toolFailure('invalid_arguments', 'skill_name_reserved', `${name}: the mcp. prefix is reserved for MCP prompts.`);
  }
  if (typeof args.content === 'string' && utf8Bytes(args.content) > SKILL_CONTENT_MAX_BYTES) {
    return toolFailure('invalid_arguments', 'skill_too_large', `content exceeds ${SKILL_CONTENT_MAX_BYTES} bytes of UTF-8.`);
  }
  if (typeof args.description === 'string' && utf8Bytes(args.description) > SKILL_DESCRIPTION_MAX_BYTES) {
    return toolFailure('invalid_arguments', 'skill_too_large', `description exceeds ${SKILL_DESCRIPTION_MAX_BYTES} bytes of UTF-8.`);
  }
  return null;
}

const stringList = (value: unknown): string[] | undefined =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;

/**
 * skill.manage (§ Skills, "the line between a skill and a tool"): the agent's way to write
 * skills — text, never a tool. Everything it writes is source `agent`, EXTERNAL_UNTRUSTED; it
 * edits and deletes only what the agent wrote (operator, platform and MCP-prompt skills are
 * read-only to it); list returns metadata, never content. Policy, not this code, denies it
 * below USER origin (packages/policy/src/default-profile.ts).
 */
export function createSkillManageTool(options: SkillManageOptions): Tool {
  const { skills, clock } = options;

  async function versionsOf(tenantId: string, name: string): Promise<SkillRow[]> {
    return (await skills.list(tenantId)).filter((row) => row.name === name);
  }

  /** Write one agent version, after the watermark; a racing writer of the same version is `skill_exists`. */
  async function write(ctx: ToolExecutionContext, fields: Omit<SkillRow, 'id' | 'tenantId' | 'trust' | 'source' | 'createdAt'>) {
    await ctx.markEffectSent();
    try {
      return await skills.create(ctx.tenantId, {
        ...fields,
        id: skillRowId(ctx.tenantId, ctx.idempotencyKey),
        source: AGENT_SOURCE,
        trust: AGENT_TRUST,
        createdAt: clock.now(),
      });
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
  }

  const exists = (name: string, version?: string): ToolResultInput =>
    toolFailure('invalid_arguments', 'skill_exists', version === undefined ? `${name} exists.` : `${name} ${version} exists.`);

  async function create(args: Record<string, unknown>, ctx: ToolExecutionContext): Promise<ToolResultInput> {
    const name = String(args.name);
    const rows = await versionsOf(ctx.tenantId, name);
    const replay = rows.find((row) => row.id === skillRowId(ctx.tenantId, ctx.idempotencyKey));
    if (replay !== undefined)
      return success(`Created skill ${name} version ${replay.version}.`, { operation: 'create', skill: written(replay), replayed: true });
    // create makes a new name: a name any author already holds is taken, so an agent skill can
    // never shadow an operator's or an MCP server's by being its newest version.
    if (rows.length > 0) return exists(name);
    if (ctx.cancellation.aborted) return toolFailure('internal', 'cancelled', 'Cancelled before the write; nothing was written.');
    const version = typeof args.version === 'string' ? args.version : '1';
    const row = await write(ctx, {
      name,
      version,
      description: String(args.description),
      requiredTools: stringList(args.required_tools) ?? [],
      content: String(args.content),
    });
    if (row === null) return exists(name, version);
    return success(`Created skill ${name} version ${row.version}.`, { operation: 'create', skill: written(row), replayed: false });
  }

  async function update(args: Record<string, unknown>, ctx: ToolExecutionContext): Promise<ToolResultInput> {
    const name = String(args.name);
    const rows = await versionsOf(ctx.tenantId, name);
    const replay = rows.find((row) => row.id === skillRowId(ctx.tenantId, ctx.idempotencyKey));
    if (replay !== undefined)
      return success(`Updated skill ${name} to version ${replay.version}.`, {
        operation: 'update',
        skill: written(replay),
        replayed: true,
      });
    if (rows.length === 0) return notFound(name);
    const foreign = rows.find((row) => !isAgentEditableSkill(row.source));
    if (foreign !== undefined) return readOnly(foreign);
    const latest = await skills.get(ctx.tenantId, name);
    if (latest === null) return notFound(name);
    let version: string;
    if (typeof args.version === 'string') {
      version = args.version;
      if (rows.some((row) => row.version === version)) {
        return toolFailure('invalid_arguments', 'skill_version', `${name} ${version} exists; give a new version.`);
      }
    } else {
      // The next integer after the largest integer version; a skill whose versions the agent
      // named otherwise must be given one.
      const integers = rows.filter((row) => INTEGER.test(row.version)).map((row) => Number(row.version));
      if (integers.length === 0) {
        return toolFailure('invalid_arguments', 'skill_version', `${name}'s versions are not integers; give a version.`);
      }
      version = String(Math.max(...integers) + 1);
    }
    if (ctx.cancellation.aborted) return toolFailure('internal', 'cancelled', 'Cancelled before the write; nothing was written.');
    const row = await write(ctx, {
      name,
      version,
      description: typeof args.description === 'string' ? args.description : latest.description,
      requiredTools: stringList(args.required_tools) ?? latest.requiredTools,
      content: String(args.content),
    });
    if (row === null) return toolFailure('invalid_arguments', 'skill_version', `${name} ${version} was written meanwhile; retry.`);
    return success(`Updated skill ${name} to version ${row.version}.`, { operation: 'update', skill: written(row), replayed: false });
  }

  async function remove(args: Record<string, unknown>, ctx: ToolExecutionContext): Promise<ToolResultInput> {
    const name = String(args.name);
    const rows = await versionsOf(ctx.tenantId, name);
    // Nothing to delete is a success that deleted nothing: the state asked for holds, and a
    // replay after the watermark lands here (docs/adr/0036).
    if (rows.length === 0)
      return success(`No skill named ${name} exists; nothing was deleted.`, { operation: 'delete', deleted_versions: 0 });
    const foreign = rows.find((row) => !isAgentEditableSkill(row.source));
    if (foreign !== undefined) return readOnly(foreign);
    if (ctx.cancellation.aborted) return toolFailure('internal', 'cancelled', 'Cancelled before the delete; nothing was deleted.');
    await ctx.markEffectSent();
    const deleted = await skills.delete(ctx.tenantId, name);
    return success(`Deleted skill ${name} (${deleted} version${deleted === 1 ? '' : 's'}).`, {
      operation: 'delete',
      deleted_versions: deleted,
    });
  }

  async function list(ctx: ToolExecutionContext): Promise<ToolResultInput> {
    const rows = latestSkillPerName(await skills.list(ctx.tenantId));
    const metadata = rows.map((row) => ({
      name: row.name,
      version: row.version,
      description: row.description,
      required_tools: [...row.requiredTools],
      source: row.source,
      trust: skillTrust(row),
    }));
    // Descriptions are their authors' text: the list is as trusted as its least trusted author.
    const trust = metadata.reduce<TrustLevel>((lowest, m) => minTrust(lowest, m.trust), 'platform');
    return success(JSON.stringify({ skills: metadata }), { operation: 'list', skills: metadata }, trust);
  }

  return {
    spec: skillManageSpec,
    async execute(args, ctx): Promise<ToolResultInput> {
      const refused = checkBounds(args);
      if (refused !== null) return refused;
      switch (args.operation) {
        case 'create':
          return create(args, ctx);
        case 'update':
          return update(args, ctx);
        case 'delete':
          return remove(args, ctx);
        case 'list':
          return list(ctx);
        default:
          return toolFailure('invalid_arguments', 'operation', 'operation must be create, update, delete or list.');
      }
    },
  };
}
