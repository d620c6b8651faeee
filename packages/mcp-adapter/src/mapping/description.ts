/** § Discovery's mapping table: description truncated to 1,024 bytes. */
export const DESCRIPTION_MAX_BYTES = 1024;

/** The longest prefix of `text` whose UTF-8 encoding fits `maxBytes`, cut at a character boundary. */
export function cutUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch, 'utf8');
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += ch.length;
  }
  return text.slice(0, end);
}
