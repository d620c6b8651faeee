import { minTrust, TrustLevel } from './trust';

/**
 * § Skills (RULINGS.md "Skills"): a skill is name, version, description, required_tools and
 * content, with a trust label. The bounds below are the ones every writer checks — skill.manage
 * (the agent) and POST /v1/skills (an operator) — so neither can store what the other could not
 * (docs/adr/0036).
 */
/** A lowercase letter, then up to 63 of `a-z 0-9 _ . -`. */
export const SKILL_NAME_PATTERN = /^[a-z][a-z0-9_.-]{0,63}$/;
/** A letter or digit, then up to 63 of `A-Z a-z 0-9 _ . -`. */
export const SKILL_VERSION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** Content: at most 64 KiB of UTF-8. */
export const SKILL_CONTENT_MAX_BYTES = 64 * 1024;
/** Description: at most 1 KiB of UTF-8 (it is advertised in every turn). */
export const SKILL_DESCRIPTION_MAX_BYTES = 1024;
/** required_tools: at most this many registry names. */
export const SKILL_REQUIRED_TOOLS_MAX = 64;

/** Who wrote a skill (`skills.source`). */
export type SkillSource = 'platform' | 'operator' | 'agent' | 'mcp';

/** The sources whose skills the platform believes (§ Skills: "untrusted unless it is ours"). */
export const TRUSTED_SKILL_SOURCES: ReadonlySet<string> = new Set(['platform', 'operator']);

export function isValidSkillName(value: unknown): value is string {
  return typeof value === 'string' && SKILL_NAME_PATTERN.test(value);
}

/**
 * § Skills: "Skill content is untrusted unless it is ours." Platform and operator skills are
 * TRUSTED_CONFIGURATION; everything else — agent-written (skill.manage), MCP prompts, a source
 * this version does not know — is EXTERNAL_UNTRUSTED. The author decides the ceiling and the
 * row's own label can only lower it: a row cannot raise itself by claiming more, and a platform
 * row labelled `platform` still loads as TRUSTED_CONFIGURATION (skill text is configuration,
 * never the platform's own voice).
 */
export function skillTrust(skill: { readonly source: string; readonly trust: string }): TrustLevel {
  const label = TrustLevel.safeParse(skill.trust);
  // A label this version cannot read is no label: the lowest.
  if (!label.success) return 'external_untrusted';
  return minTrust(TRUSTED_SKILL_SOURCES.has(skill.source) ? 'trusted_configuration' : 'external_untrusted', label.data);
}

/** Only an agent-written skill may be updated or deleted by the agent (docs/adr/0036). */
export function isAgentEditableSkill(source: string): boolean {
  return source === 'agent';
}

/**
 * The version skill.load loads when none is named, per skill name: the most recently created,
 * then the greater version string (the store's order). skill.manage's `list` and GET /v1/skills
 * both advertise exactly these.
 */
export function latestSkillPerName<T extends { readonly name: string; readonly version: string; readonly createdAt: Date }>(
  rows: readonly T[],
): T[] {
  const latest = new Map<string, T>();
  for (const row of rows) {
    const held = latest.get(row.name);
    const newer =
      held === undefined ||
      row.createdAt > held.createdAt ||
      (row.createdAt.getTime() === held.createdAt.getTime() && row.version > held.version);
    if (newer) latest.set(row.name, row);
  }
  return [...latest.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
