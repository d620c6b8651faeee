/**
 * A size-limited read can stop inside a multi-byte UTF-8 character. These helpers cut the
 * bytes back to the last whole character and decode strictly, so a truncated read of valid
 * text is valid text and a binary file is reported as such instead of as replacement marks.
 */

/** The length of the longest prefix of `bytes` that does not end inside a character. */
export function completeUtf8Length(bytes: Uint8Array): number {
  let i = bytes.length - 1;
  let continuation = 0;
  while (i >= 0 && continuation < 3 && ((bytes[i] as number) & 0xc0) === 0x80) {
    i -= 1;
    continuation += 1;
  }
  if (i < 0) return bytes.length;
  const lead = bytes[i] as number;
  const needed = lead < 0x80 ? 1 : (lead & 0xe0) === 0xc0 ? 2 : (lead & 0xf0) === 0xe0 ? 3 : (lead & 0xf8) === 0xf0 ? 4 : 1;
  return continuation + 1 < needed ? i : bytes.length;
}

export type Utf8Decoding = { readonly ok: true; readonly text: string; readonly bytes: number } | { readonly ok: false };

/**
 * Decode strictly. When `truncated`, an incomplete trailing character is dropped first
 * (and `bytes` reports what was kept). A leading byte-order mark is removed.
 */
export function decodeUtf8Prefix(bytes: Uint8Array, truncated: boolean): Utf8Decoding {
  const kept = truncated ? bytes.subarray(0, completeUtf8Length(bytes)) : bytes;
  try {
    return { ok: true, text: new TextDecoder('utf-8', { fatal: true }).decode(kept), bytes: kept.length };
  } catch {
    return { ok: false };
  }
}
