import { skillTrust, type ToolResultInput } from '@veetbot/domain';
import type { ToolExecutionContext } from '@veetbot/ports';
import type { RuntimeCore } from '../runtime-core';

/**
 * skill.load (§ Skills, "Metadata is advertised; content is not"): the content enters the turn
 * only here. required_tools is checked against this session's pin: a skill whose tools the
 * session does not offer still loads, with a `skill.tool.missing` note naming them. The label is
 * the author's (domain skillTrust): operator and platform skills TRUSTED_CONFIGURATION, agent and
 * MCP-prompt skills EXTERNAL_UNTRUSTED, which step 11 clamps to and step 12 envelopes.
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
  // The pin: deferred tools are a subset of toolNames and tool.call reaches them, so they count.
  const offered = new Set(session?.toolNames ?? []);
  const missing = skill.requiredTools.filter((tool) => !offered.has(tool));
  const trust = skillTrust(skill);
  const content: { type: 'text'; text: string }[] = [];
  // The note goes first: an excerpt of a long skill keeps its head (step 12), and the model must
  // see which tools it cannot use. Of an untrusted skill, structured never reaches the model
  // (step 11), so the content is where the note is visible.
  if (missing.length > 0) content.push({ type: 'text', text: `skill.tool.missing: this session does not offer ${missing.join(', ')}.` });
  content.push({ type: 'text', text: skill.content });
  return {
    ok: true,
    content,
    structured: {
      name: skill.name,
      version: skill.version,
      source: skill.source,
      required_tools: skill.requiredTools,
      missing_tools: missing,
      notes: missing.length > 0 ? [{ code: 'skill.tool.missing', tools: missing }] : [],
      trust,
    },
    output_trust: trust,
  };
}
