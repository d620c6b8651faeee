import { CreateSkillRequest, Skill, SkillList, type SkillMetadata } from '@veetbot/client';
import { latestSkillPerName, skillTrust, StoreError } from '@veetbot/domain';
import type { SkillRow } from '@veetbot/ports';
import { ApiError, notFound } from '../api-error';
import type { ApiDeps } from '../deps';
import type { RouteTable } from '../routing';

/** docs/adr/0036: who may read a skill's content (the model reaches it only through skill.load). */
export const SKILLS_READ = 'skills.read';
/** docs/adr/0036: who may author operator skills and delete skills. */
export const SKILLS_WRITE = 'skills.write';
/** MCP prompts are stored as `mcp.{server}.{prompt}`; the prefix is theirs (§ Prompts are skills). */
const RESERVED_PREFIX = 'mcp.';

const metadataWire = (row: SkillRow): SkillMetadata => ({
  name: row.name,
  version: row.version,
  description: row.description,
  required_tools: [...row.requiredTools],
  source: row.source,
  trust: skillTrust(row),
  created_at: row.createdAt.toISOString(),
});

/** A name the store could hold: MCP prompt names (`mcp.{server}.{prompt}`) need not fit the authoring grammar. */
const lookupName = (name: string): boolean => name.length > 0 && name.length <= 256;

/**
 * The tenant's skills (§ Skills; docs/adr/0036). Operators author TRUSTED_CONFIGURATION skills
 * here; agents write theirs through skill.manage, MCP servers' prompts arrive by discovery. Only
 * metadata is listed — content is read one skill at a time, with skills.read.
 */
export function skillRoutes(routes: RouteTable, deps: ApiDeps): void {
  routes.add(
    {
      method: 'get',
      path: '/v1/skills',
      operationId: 'listSkills',
      summary:
        'The advertised block: the latest version of every skill (name, version, description, required_tools, source, trust). Never content.',
      tag: 'skills',
      responses: { 200: { description: 'The skills.', schema: SkillList } },
    },
    async (c, { principal }) =>
      c.json({ skills: latestSkillPerName(await deps.stores.skills.list(principal.tenant_id)).map(metadataWire) } satisfies SkillList, 200),
  );

  routes.add(
    {
      method: 'get',
      path: '/v1/skills/:name',
      operationId: 'getSkill',
      summary: 'The latest version of a skill, with its content.',
      tag: 'skills',
      scope: SKILLS_READ,
      responses: { 200: { description: 'The skill.', schema: Skill } },
    },
    async (c, { principal }) => {
      const name = c.req.param('name') ?? '';
      if (!lookupName(name)) throw notFound();
      const row = await deps.stores.skills.get(principal.tenant_id, name);
      if (row === null) throw notFound();
      return c.json({ ...metadataWire(row), content: row.content } satisfies Skill, 200);
    },
  );

  routes.add(
    {
      method: 'post',
      path: '/v1/skills',
      operationId: 'createSkill',
      summary:
        'Author an operator skill (source operator, loaded as trusted_configuration). 409 skill.exists when that name and version exist; 400 skill.name_reserved for the mcp. prefix.',
      tag: 'skills',
      scope: SKILLS_WRITE,
      body: CreateSkillRequest,
      responses: { 201: { description: 'Created.', schema: Skill } },
    },
    async (c, { body, principal }) => {
      if (body.name.startsWith(RESERVED_PREFIX)) {
        throw new ApiError(400, 'skill.name_reserved', 'Skill names starting with "mcp." are reserved for MCP server prompts.');
      }
      let row: SkillRow;
      try {
        row = await deps.stores.skills.create(principal.tenant_id, {
          name: body.name,
          version: body.version,
          description: body.description,
          requiredTools: body.required_tools,
          content: body.content,
          trust: 'trusted_configuration',
          source: 'operator',
          createdAt: deps.clock.now(),
        });
      } catch (error) {
        if (StoreError.isInstance(error) && error.code === 'store.unique_violation') {
          throw new ApiError(409, 'skill.exists', 'A skill with this name and version exists.');
        }
        throw error;
      }
      return c.json({ ...metadataWire(row), content: row.content } satisfies Skill, 201);
    },
  );

  routes.add(
    {
      method: 'delete',
      path: '/v1/skills/:name',
      operationId: 'deleteSkill',
      summary: 'Delete every version of a skill. An MCP prompt skill is the server’s and is refused (409 skill.read_only).',
      tag: 'skills',
      scope: SKILLS_WRITE,
      responses: { 204: { description: 'Deleted.' } },
    },
    async (c, { principal }) => {
      const name = c.req.param('name') ?? '';
      if (!lookupName(name)) throw notFound();
      const rows = (await deps.stores.skills.list(principal.tenant_id)).filter((row) => row.name === name);
      if (rows.length === 0) throw notFound();
      // A deleted prompt skill would come back at the next discovery: it is the server's to change.
      if (rows.some((row) => row.source === 'mcp'))
        throw new ApiError(409, 'skill.read_only', 'This skill is an MCP server prompt and is read-only.');
      await deps.stores.skills.delete(principal.tenant_id, name);
      return c.body(null, 204);
    },
  );
}
