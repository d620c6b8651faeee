import { canonicalJson, normalizeRemoteToolName, sha256Hex } from '@veetbot/domain';
import type { SkillStore } from '@veetbot/ports';
import type { McpServerConfig } from '../config/server-config';
import type { McpConnection } from '../connection/mcp-connection';
import { cutUtf8, DESCRIPTION_MAX_BYTES } from '../mapping/description';

const PROMPT_CONTENT_MAX_BYTES = 64 * 1024;

/** § Prompts are skills, and read-only ones: source mcp, EXTERNAL_UNTRUSTED, never edited here. */
export async function recordPromptSkills(
  skills: SkillStore,
  now: () => Date,
  tenantId: string,
  config: McpServerConfig,
  connection: McpConnection,
  prompts: readonly unknown[],
): Promise<void> {
  for (const prompt of prompts) {
    if (typeof prompt !== 'object' || prompt === null || typeof (prompt as { name?: unknown }).name !== 'string') continue;
    const declaration = prompt as { name: string; description?: unknown; arguments?: unknown };
    try {
      const args = Array.isArray(declaration.arguments)
        ? declaration.arguments.filter(
            (a): a is { name: string; description?: unknown; required?: unknown } =>
              typeof a === 'object' && a !== null && typeof (a as { name?: unknown }).name === 'string',
          )
        : [];
      const description = typeof declaration.description === 'string' ? cutUtf8(declaration.description, DESCRIPTION_MAX_BYTES) : '';
      let body = `MCP prompt "${declaration.name}" from server ${config.serverId}.\n${description}`;
      if (args.length > 0) {
        body += `\nArguments:\n${args.map((a) => `- ${a.name}${a.required === true ? ' (required)' : ''}${typeof a.description === 'string' ? `: ${a.description}` : ''}`).join('\n')}`;
      } else {
        const rendered = await connection.getPrompt(declaration.name).catch(() => null);
        const texts = (rendered?.messages ?? []).flatMap((m) => {
          const content = (m as { content?: { type?: unknown; text?: unknown } }).content;
          return content?.type === 'text' && typeof content.text === 'string' ? [content.text] : [];
        });
        if (texts.length > 0) body += `\n\n${texts.join('\n\n')}`;
      }
      const content = connection.scrubber.redact(cutUtf8(body, PROMPT_CONTENT_MAX_BYTES));
      const name = `mcp.${config.serverId}.${normalizeRemoteToolName(declaration.name)}`;
      const version = sha256Hex(canonicalJson({ description, content })).slice(0, 16);
      if ((await skills.get(tenantId, name, version)) !== null) continue;
      await skills.create(tenantId, {
        name,
        version,
        description,
        requiredTools: [],
        content,
        trust: 'external_untrusted',
        source: 'mcp',
        createdAt: now(),
      });
    } catch {
      // A prompt that cannot be recorded (a concurrent writer, a malformed declaration) costs
      // that prompt only; tools are unaffected.
    }
  }
}
