import { randomBytes } from 'node:crypto';
import { VeetbotError } from './errors';
import { isTrustBelow } from './trust';
import type { TrustLevel } from './trust';

/**
 * § What the model reads: external text is data, never narration; it reaches the model only as
 * an enveloped span. The envelope is platform-written framing around the span:
 *
 *   ⟦untrusted source="mcp.acme.create_ticket" trust="external_untrusted" nonce="9f2c4a1b0d3e5f67"⟧
 *   …the span, with every ⟦ replaced by ⟪…
 *   ⟦/untrusted nonce="9f2c4a1b0d3e5f67"⟧
 *
 * - The tags open with U+27E6 MATHEMATICAL LEFT WHITE SQUARE BRACKET and end with U+27E7.
 *   Inside an enveloped span every U+27E6 is replaced with U+27EA (⟪), so no byte sequence in
 *   the span can start a tag: a hostile server cannot close the envelope even if it guesses
 *   the nonce. Both characters are three UTF-8 bytes and neither is JSON-escaped, so
 *   neutralization never changes what a span costs against the output budget.
 * - source is the tool name the content came from (the attribution); trust is the resolved
 *   label; nonce is 16 lowercase hex digits from node:crypto, fresh per envelope.
 * - One newline separates the opening tag from the span and the span from the closing tag;
 *   both newlines are framing, not content.
 * - The envelope is platform text: it is never charged to a tool's output budget
 *   (§ Output: limits, truncation, and artifacts).
 */
export const ENVELOPE_OPEN_BRACKET = '\u27E6'; // ⟦
export const ENVELOPE_CLOSE_BRACKET = '\u27E7'; // ⟧
/** What an ⟦ inside enveloped text becomes: visibly different, same UTF-8 width (3 bytes). */
export const NEUTRALIZED_OPEN_BRACKET = '\u27EA'; // ⟪
export const ENVELOPE_TAG = 'untrusted';
export const NONCE_PATTERN = /^[0-9a-f]{16}$/;

/** Attribution is a tool name or another platform identifier: no quotes, brackets or controls. */
const SOURCE_PATTERN = /^[A-Za-z0-9_.:/-]{1,256}$/;

export class TrustEnvelopeError extends VeetbotError {
  constructor(code: `envelope.${string}`, message: string) {
    super(code, message);
  }
}

/**
 * Which labels are enveloped: every level below USER, i.e. INTERNAL_TOOL and
 * EXTERNAL_UNTRUSTED. The specification requires EXTERNAL_UNTRUSTED; INTERNAL_TOOL is enveloped
 * too because a tool's own output is not a principal's instruction: a workspace file an
 * internal tool reads back can hold text an earlier web fetch wrote there, and framing it costs
 * the model nothing while leaving it unframed would let that text pass as narration.
 */
export function needsEnvelope(trust: TrustLevel): boolean {
  return isTrustBelow(trust, 'user');
}

/** 16 lowercase hex digits (8 random bytes). */
export function newNonce(): string {
  return randomBytes(8).toString('hex');
}

function checkNonce(nonce: string): void {
  if (!NONCE_PATTERN.test(nonce)) {
    throw new TrustEnvelopeError('envelope.nonce_invalid', 'An envelope nonce is 16 lowercase hex digits.');
  }
}

function checkSource(source: string): void {
  if (!SOURCE_PATTERN.test(source)) {
    throw new TrustEnvelopeError('envelope.source_invalid', 'An envelope source is a tool name or platform identifier.');
  }
}

export function openEnvelope(source: string, trust: TrustLevel, nonce: string): string {
  checkSource(source);
  checkNonce(nonce);
  return `${ENVELOPE_OPEN_BRACKET}${ENVELOPE_TAG} source="${source}" trust="${trust}" nonce="${nonce}"${ENVELOPE_CLOSE_BRACKET}`;
}

export function closeEnvelope(nonce: string): string {
  checkNonce(nonce);
  return `${ENVELOPE_OPEN_BRACKET}/${ENVELOPE_TAG} nonce="${nonce}"${ENVELOPE_CLOSE_BRACKET}`;
}

/**
 * Defuse every tag opener in untrusted text. Every ⟦ is replaced, not only those followed by
 * the tag name, so variants with spaces, case changes or look-alike spellings are covered too.
 * Length in code units and in UTF-8 bytes is unchanged.
 */
export function neutralizeEnvelopeMarkers(text: string): string {
  return text.includes(ENVELOPE_OPEN_BRACKET) ? text.replaceAll(ENVELOPE_OPEN_BRACKET, NEUTRALIZED_OPEN_BRACKET) : text;
}

export interface EnvelopeOptions {
  readonly source: string;
  readonly trust: TrustLevel;
  /** Defaults to a fresh nonce. */
  readonly nonce?: string;
}

/** The span, neutralized and framed. */
export function envelope(text: string, options: EnvelopeOptions): string {
  const nonce = options.nonce ?? newNonce();
  return `${openEnvelope(options.source, options.trust, nonce)}\n${neutralizeEnvelopeMarkers(text)}\n${closeEnvelope(nonce)}`;
}
