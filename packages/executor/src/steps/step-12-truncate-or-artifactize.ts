import {
  assertExcerptBudget,
  contentBytes,
  excerpt,
  ExcerptBudgetError,
  hardCaptureCeiling,
  inlineCeiling,
  renderInline,
  type ContentPart,
  type RenderedContentPart,
} from '@veetbot/domain';
import type { ArtifactWriter } from '@veetbot/ports';
import type { ValidatedResult } from './step-11-validate-result';

export interface OutputDecision {
  readonly parts: RenderedContentPart[];
  readonly outputBytes: number;
  readonly truncated: boolean;
  readonly artifactId: string | null;
  /** Set when the output broke the hard ceiling: the call becomes FAILED tool.output_too_large. */
  readonly overflow: 'hard_ceiling' | 'budget_too_small' | null;
}

/** The whole content as one text: what the artifact holds and the excerpt is cut from. */
function contentText(parts: readonly ContentPart[]): string {
  return parts.map((p) => (p.type === 'text' ? p.text : `[artifact:${p.artifact.artifact_id}]`)).join('\n');
}

/** The longest prefix of `text` whose UTF-8 encoding fits in `bytes`, cut at a character boundary. */
function utf8Prefix(text: string, bytes: number): Uint8Array {
  const encoded = Buffer.from(text, 'utf8');
  if (encoded.length <= bytes) return encoded;
  let end = bytes;
  while (end > 0 && (encoded[end]! & 0xc0) === 0x80) end--; // back off a continuation byte
  return encoded.subarray(0, end);
}

/**
 * Step 12: truncate or artifactize (§ Output). Measured on the UTF-8 serialization of the
 * content before any envelope. Above min(maximum_output_bytes, inline limit) the whole result —
 * up to the hard capture ceiling of 4 × maximum_output_bytes — is written to an artifact
 * BEFORE the result is persisted, and the model gets a head/tail excerpt that never splits a
 * trust envelope. Excerpted, never summarized.
 */
export async function truncateOrArtifactize(
  result: ValidatedResult,
  source: string,
  maximumOutputBytes: number,
  inlineMaximumBytes: number,
  writer: ArtifactWriter,
): Promise<OutputDecision> {
  const bytes = contentBytes(result.content);
  const ceiling = inlineCeiling(maximumOutputBytes, inlineMaximumBytes);
  if (bytes <= ceiling) {
    return {
      parts: renderInline(result.content, { source, trust: result.trust }),
      outputBytes: bytes,
      truncated: false,
      artifactId: null,
      overflow: null,
    };
  }
  const captured = utf8Prefix(contentText(result.content), hardCaptureCeiling(maximumOutputBytes));
  const overflow = bytes > hardCaptureCeiling(maximumOutputBytes) ? 'hard_ceiling' : null;
  try {
    // Limits too small to hold the reference fail before an artifact exists.
    assertExcerptBudget(ceiling, globalThis.crypto.randomUUID(), bytes);
  } catch (error) {
    if (error instanceof ExcerptBudgetError)
      return { parts: [], outputBytes: bytes, truncated: true, artifactId: null, overflow: 'budget_too_small' };
    throw error;
  }
  const ref = await writer.write({ bytes: captured, mediaType: 'text/plain; charset=utf-8', trust: result.trust });
  const text = Buffer.from(captured).toString('utf8');
  const cut = excerpt({ text, budgetBytes: ceiling, artifactId: ref.artifact_id, source, trust: result.trust });
  return { parts: cut.parts, outputBytes: bytes, truncated: true, artifactId: ref.artifact_id, overflow };
}
