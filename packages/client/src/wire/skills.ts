import { z } from 'zod';
import {
  SKILL_CONTENT_MAX_BYTES,
  SKILL_DESCRIPTION_MAX_BYTES,
  SKILL_NAME_PATTERN,
  SKILL_REQUIRED_TOOLS_MAX,
  SKILL_VERSION_PATTERN,
  TOOL_NAME_PATTERN,
} from '@veetbot/domain';
import { Timestamp } from './common';

const utf8Bytes = (text: string): number => new TextEncoder().encode(text).length;

/** A skill's name (docs/adr/0036): a lowercase letter, then up to 63 of `a-z 0-9 _ . -`. */
export const SkillName = z.string().regex(SKILL_NAME_PATTERN, 'a skill name is a lowercase letter, then up to 63 of a-z 0-9 _ . -');
export const SkillVersion = z
  .string()
  .regex(SKILL_VERSION_PATTERN, 'a skill version is a letter or digit, then up to 63 of A-Z a-z 0-9 _ . -');

/**
 * POST /v1/skills: an operator-authored skill (source `operator`, TRUSTED_CONFIGURATION).
 * The bounds are skill.manage's: content at most 64 KiB of UTF-8, description 1 KiB, no NUL.
 */
export const CreateSkillRequest = z
  .object({
    name: SkillName,
    version: SkillVersion.default('1'),
    description: z
      .string()
      .min(1)
      .refine((v) => utf8Bytes(v) <= SKILL_DESCRIPTION_MAX_BYTES, `at most ${SKILL_DESCRIPTION_MAX_BYTES} bytes of UTF-8`)
      .refine((v) => !v.includes('\u0000'), 'no NUL character'),
    required_tools: z
      .array(z.string().regex(TOOL_NAME_PATTERN, 'a registry tool name'))
      .max(SKILL_REQUIRED_TOOLS_MAX)
      .refine((v) => new Set(v).size === v.length, 'no duplicates')
      .default([]),
    content: z
      .string()
      .min(1)
      .refine((v) => utf8Bytes(v) <= SKILL_CONTENT_MAX_BYTES, `at most ${SKILL_CONTENT_MAX_BYTES} bytes of UTF-8`)
      .refine((v) => !v.includes('\u0000'), 'no NUL character'),
  })
  .strict();
export type CreateSkillRequest = z.input<typeof CreateSkillRequest>;

/**
 * The advertised metadata block (§ Skills: name, version, description, required_tools) and who
 * wrote it, with the label skill.load gives its content. Never the content.
 */
export const SkillMetadata = z.object({
  name: z.string(),
  version: z.string(),
  description: z.string(),
  required_tools: z.array(z.string()),
  /** platform | operator | agent | mcp */
  source: z.string(),
  trust: z.string(),
  created_at: Timestamp,
});
export type SkillMetadata = z.infer<typeof SkillMetadata>;

/** GET /v1/skills: the latest version of every skill, metadata only. */
export const SkillList = z.object({ skills: z.array(SkillMetadata) });
export type SkillList = z.infer<typeof SkillList>;

/** GET /v1/skills/{name} and POST /v1/skills: one version, with its content. */
export const Skill = SkillMetadata.extend({ content: z.string() });
export type Skill = z.infer<typeof Skill>;
