import { domainPartition, isValidToolName, ToolResult, toolDomain } from '@veetbot/domain';
import type { SkillStore } from '@veetbot/ports';
import { describe, expect, it } from 'vitest';
import { BUILTIN_SCOPES, BUILTIN_TOOL_NAMES, createBuiltinTools, STORE_BACKED_TOOL_NAMES } from '../src/builtin-tools';
import { skillRowId } from '../src/skill/skill-manage';
import { skillManageSpec } from '../src/skill/skill-manage-spec';
import { createFakeContext } from './fake-context';

/*
 * skill.manage's declaration and the refusals it makes before touching its store (§ Skills;
 * docs/adr/0036). Its behaviour on the real store — writes, replay, read-only skills, the
 * watermark — is tested in apps/integration-tests (test/skill-manage.test.ts and
 * test/runtime/skills.test.ts), because this package's tests may not import a store.
 */

/** A store no test here may reach: every refusal below happens before the first store call. */
const untouchable: SkillStore = {
  create: () => Promise.reject(new Error('skill.manage touched its store')),
  get: () => Promise.reject(new Error('skill.manage touched its store')),
  list: () => Promise.reject(new Error('skill.manage touched its store')),
  delete: () => Promise.reject(new Error('skill.manage touched its store')),
};

describe('skill.manage declaration', () => {
  it('is built only with a skill store, after the other builtins', () => {
    expect(createBuiltinTools().map((t) => t.spec.name)).toEqual([...BUILTIN_TOOL_NAMES]);
    expect(createBuiltinTools({ skills: untouchable }).map((t) => t.spec.name)).toEqual([
      ...BUILTIN_TOOL_NAMES,
      ...STORE_BACKED_TOOL_NAMES,
    ]);
    expect(BUILTIN_SCOPES).toContain('skill.write');
  });

  it('is the capability § Skills classifies: high, conditionally idempotent, skill.write, external_write', () => {
    expect(isValidToolName(skillManageSpec.name)).toBe(true);
    expect(domainPartition(toolDomain(skillManageSpec.name))?.kinds).toContain('capability');
    expect(skillManageSpec).toMatchObject({
      name: 'skill.manage',
      kind: 'capability',
      source: 'builtin',
      target_kind: 'in_process',
      side_effect: 'external_write',
      risk: 'high',
      idempotency: 'conditionally_idempotent',
      required_scopes: ['skill.write'],
      allow_parallel: false,
      output_trust: 'platform',
    });
  });

  it('bounds every string and array of its input', () => {
    const properties = skillManageSpec.input_schema.properties as Record<string, Record<string, unknown>>;
    expect(skillManageSpec.input_schema.additionalProperties).toBe(false);
    expect(properties.name).toMatchObject({ maxLength: 64, pattern: '^[a-z][a-z0-9_.-]{0,63}$' });
    expect(properties.description).toMatchObject({ maxLength: 1024 });
    expect(properties.content).toMatchObject({ maxLength: 65_536 });
    expect(properties.required_tools).toMatchObject({ maxItems: 64, uniqueItems: true, items: { maxLength: 256 } });
  });
});

describe('skill.manage refusals before the store', () => {
  const tool = createBuiltinTools({ skills: untouchable }).find((t) => t.spec.name === 'skill.manage')!;
  const refused = async (args: Record<string, unknown>) => {
    const fake = createFakeContext();
    const result = ToolResult.parse(await tool.execute(args, fake.context));
    expect(fake.markEffectSentCalls()).toBe(0);
    return result.failure?.reason_code;
  };

  it.each([
    [
      'content over 64 KiB of UTF-8',
      { operation: 'create', name: 'a', description: 'd', content: '€'.repeat(22_000) },
      'tool.invalid_arguments.skill_too_large',
    ],
    [
      'description over 1 KiB of UTF-8',
      { operation: 'update', name: 'a', description: 'é'.repeat(513), content: 'c' },
      'tool.invalid_arguments.skill_too_large',
    ],
    [
      'a create in the mcp. prefix',
      { operation: 'create', name: 'mcp.docs.x', description: 'd', content: 'c' },
      'tool.invalid_arguments.skill_name_reserved',
    ],
    ['a name outside the grammar', { operation: 'delete', name: 'Bad' }, 'tool.invalid_arguments.name'],
    ['an unknown operation', { operation: 'rename', name: 'a' }, 'tool.invalid_arguments.operation'],
  ])('%s', async (_label, args, code) => {
    expect(await refused(args)).toBe(code);
  });
});

describe('skillRowId', () => {
  it('is a UUID fixed by tenant and idempotency key', () => {
    const id = skillRowId('t1', 'a'.repeat(64));
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(skillRowId('t1', 'a'.repeat(64))).toBe(id);
    expect(skillRowId('t2', 'a'.repeat(64))).not.toBe(id);
    expect(skillRowId('t1', 'b'.repeat(64))).not.toBe(id);
  });
});
