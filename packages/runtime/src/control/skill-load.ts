import type { ToolResultInput, TrustLevel } from '@veetbot/domain';
import type { SkillRow, ToolExecutionContext } from '@veetbot/ports';
import type { RuntimeCore } from '../runtime-core';

/** Who may author a skill the platform believes (skills.md via § Skills): the rest are untrusted. */
const TRUSTED_SOURCES: ReadonlySet<string> = new Set(['platform', 'operator']);

/**
 * § Skills: "Skill content is untrusted unless it is ours." Platform and operator skills are
 * TRUSTED_CONFIGURATION; agent-written skills (skill.manage) and MCP prompts are
 * EXTERNAL_UNTRUSTED whatever label their row carries — labelling is a fact, not a claim.
 */
export function skillTrust(skill: Pick<SkillRow, 'source' | 'trust'>): TrustLevel {
  return TRUSTED_SOURCES.has(skill.source) && skill.trust === 'trusted_configuration' ? 'trusted_configuration' : 'external_untrusted';
}

/**
 * skill.load (§ Skills, "Metadata is advertised; content is not"): the content enters the turn
 * only here. required_tools is checked against this session's pin: a skill whose tools the
 * session does not offer still loads, with a `skill.tool.missing` note naming them.
 */
export async function loadSkill(core: RuntimeCore, args: Record<string, unknown>, context: ToolExecutionContext): Promise<ToolResultInput> {
  const { stores } = core.deps;
  const name = String(args.name);
  const version = typeof args.version === 'string' ? args.version : undefined;
  const skill = await stores.skills.get(context.tenantId, name, version);
  if (skill === null) {
    const detail = version === undefined ? `No skill named ${name}.` : `No skill named ${name} at version ${version}.`;
    return {
      ok: false,
      content: [],
      failure: { kind: 'not_found', reason_code: 'tool.not_found.skill', detail, retryable: false },
      output_trust: 'platform',
    };
  }
  const session = await stores.sessions.get(context.tenantId, context.sessionId);
  const offered = new Set(session?.toolNames ?? []);
  const missing = skill.requiredTools.filter((tool) => !offered.has(tool));
  const trust = skillTrust(skill);
  const content: { type: 'text'; text: string }[] = [{ type: 'text', text: skill.content }];
  if (missing.length > 0) content.push({ type: 'text', text: `skill.tool.missing: this session does not offer ${missing.join(', ')}.` });
  return {
    ok: true,
    content,
    structured: {
      name: skill.name,
      version: skill.version,
      required_tools: skill.requiredTools,
      missing_tools: missing,
      notes: missing.length > 0 ? [{ code: 'skill.tool.missing', tools: missing }] : [],
      trust,
    },
    output_trust: trust,
  };
}
