import { describe, expect, it } from 'vitest';
import { isAgentEditableSkill, isValidSkillName, skillTrust } from '../src/skill';

describe('skillTrust (§ Skills: "Skill content is untrusted unless it is ours")', () => {
  it.each([
    ['operator', 'trusted_configuration', 'trusted_configuration'],
    ['platform', 'trusted_configuration', 'trusted_configuration'],
    // A platform row labelled platform is still configuration text, never the platform's voice.
    ['platform', 'platform', 'trusted_configuration'],
    // The row's label can only lower the author's ceiling.
    ['operator', 'user', 'user'],
    ['operator', 'external_untrusted', 'external_untrusted'],
    // Agent and MCP skills are untrusted whatever their rows claim.
    ['agent', 'external_untrusted', 'external_untrusted'],
    ['agent', 'trusted_configuration', 'external_untrusted'],
    ['mcp', 'platform', 'external_untrusted'],
    ['user', 'user', 'external_untrusted'],
    // A label this version cannot read is the lowest, never ranked above platform.
    ['operator', 'root', 'external_untrusted'],
  ])('%s / %s → %s', (source, trust, expected) => {
    expect(skillTrust({ source, trust })).toBe(expected);
  });
});

describe('skill names and editability', () => {
  it('accepts the grammar and nothing else', () => {
    for (const ok of ['a', 'code.review', 'a-b_c.9', 'x'.repeat(64)]) expect(isValidSkillName(ok), ok).toBe(true);
    for (const bad of ['', 'A', '9a', '.a', 'a b', 'x'.repeat(65), 'é', 5]) expect(isValidSkillName(bad), String(bad)).toBe(false);
  });

  it('lets the agent edit only what the agent wrote', () => {
    expect(isAgentEditableSkill('agent')).toBe(true);
    for (const source of ['operator', 'platform', 'mcp', 'user']) expect(isAgentEditableSkill(source)).toBe(false);
  });
});
