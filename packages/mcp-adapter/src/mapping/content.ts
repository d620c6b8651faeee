import type { ContentPart } from '@veetbot/domain';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Decoded size of a base64 string, without decoding it. */
function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const clean = data.replace(/\s/g, '');
  const padding = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}

const str = (value: unknown, fallback = 'unknown'): string => (typeof value === 'string' && value !== '' ? value : fallback);

/**
 * A tools/call result's content as ContentPart text: text stays text; everything else becomes a
 * one-line description of its type and size. A tool returns references, never inline bytes
 * (§ ToolResult): an image, audio clip or embedded resource is described, not carried.
 */
export function contentToParts(content: readonly unknown[]): ContentPart[] {
  const parts: ContentPart[] = [];
  for (const item of content) {
    if (!isObject(item)) continue;
    switch (item.type) {
      case 'text':
        if (typeof item.text === 'string') parts.push({ type: 'text', text: item.text });
        break;
      case 'image':
      case 'audio':
        parts.push({
          type: 'text',
          text: `[${item.type} content: ${str(item.mimeType)}, ${base64Bytes(item.data)} bytes, not shown]`,
        });
        break;
      case 'resource_link':
        parts.push({
          type: 'text',
          text: `[resource link: ${str(item.uri)}${typeof item.mimeType === 'string' ? `, ${item.mimeType}` : ''}]`,
        });
        break;
      case 'resource': {
        const resource = isObject(item.resource) ? item.resource : {};
        const size =
          typeof resource.text === 'string'
            ? `${Buffer.byteLength(resource.text, 'utf8')} bytes of text`
            : `${base64Bytes(resource.blob)} bytes`;
        parts.push({
          type: 'text',
          text: `[embedded resource: ${str(resource.uri)}, ${str(resource.mimeType)}, ${size}, not shown]`,
        });
        break;
      }
      default:
        parts.push({ type: 'text', text: `[content of type ${str(item.type).slice(0, 64)}, not shown]` });
    }
  }
  return parts;
}

/** The text of a failed call's content, for ToolFailure.external_text (data, never narration). */
export function contentText(content: readonly unknown[]): string {
  return contentToParts(content)
    .map((p) => (p.type === 'text' ? p.text : ''))
    .join('\n');
}
