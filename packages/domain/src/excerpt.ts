import { ConfigurationError, VeetbotError } from './errors';
import type { ContentPart } from './tool-result';
import type { RenderedContentPart } from './tool-result-item';
import { clampTrust } from './trust';
import type { TrustLevel } from './trust';
import { envelope, needsEnvelope, newNonce } from './trust-envelope';

/**
 * § Output: limits, truncation, and artifacts. Large output is excerpted, never summarized:
 * a summarizer over untrusted output would produce trusted-looking prose.
 */

/** The shipped output.inline_maximum_bytes. */
export const INLINE_MAXIMUM_BYTES_DEFAULT = 4096;
/** The operator may not configure an inline limit below this. */
export const INLINE_MAXIMUM_BYTES_MINIMUM = 1024;
/** The bounded reader stops at maximum_output_bytes times this (the hard capture ceiling). */
export const HARD_CAPTURE_MULTIPLIER = 4;
/** The model receives at most the first 60% and the last 20% of the inline budget. */
export const EXCERPT_HEAD_FRACTION = 0.6;
export const EXCERPT_TAIL_FRACTION = 0.2;

export class OutputExcerptError extends VeetbotError {
  constructor(code: `output.${string}`, message: string) {
    super(code, message);
  }
}

/**
 * The inline budget cannot hold the elision marker and the artifact reference. The executor
 * checks this (minimumExcerptBudget / assertExcerptBudget) BEFORE it creates the artifact, so a
 * too-small limit never leaves an orphaned capture behind.
 */
export class ExcerptBudgetError extends OutputExcerptError {
  readonly budgetBytes: number;
  readonly minimumBytes: number;
  constructor(budgetBytes: number, minimumBytes: number) {
    super(
      'output.budget_too_small',
      `The inline budget (${budgetBytes} bytes) cannot hold the elision marker and reference (${minimumBytes} bytes).`,
    );
    this.budgetBytes = budgetBytes;
    this.minimumBytes = minimumBytes;
  }
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * § Output rules: size is the UTF-8 serialization of ToolResult.content (the JSON of the
 * content array) before any trust envelope; the envelope is platform text and is not charged.
 */
export function contentBytes(parts: readonly ContentPart[] | readonly RenderedContentPart[]): number {
  return utf8Bytes(JSON.stringify(parts));
}

function checkPositiveInteger(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigurationError('config.output_limit_invalid', `${what} must be a positive integer.`);
  }
}

/**
 * The model-visible admission ceiling: min(maximum_output_bytes, output.inline_maximum_bytes).
 * An operator inline limit below 1,024 is a configuration error, never a silent clamp.
 */
export function inlineCeiling(maximumOutputBytes: number, inlineMaximumBytes: number = INLINE_MAXIMUM_BYTES_DEFAULT): number {
  checkPositiveInteger(maximumOutputBytes, 'maximum_output_bytes');
  checkPositiveInteger(inlineMaximumBytes, 'output.inline_maximum_bytes');
  if (inlineMaximumBytes < INLINE_MAXIMUM_BYTES_MINIMUM) {
    throw new ConfigurationError(
      'config.inline_maximum_bytes_too_small',
      `output.inline_maximum_bytes must be at least ${INLINE_MAXIMUM_BYTES_MINIMUM}.`,
    );
  }
  return Math.min(maximumOutputBytes, inlineMaximumBytes);
}

/** The bounded reader's limit: maximum_output_bytes * 4; past it the tool is cancelled. */
export function hardCaptureCeiling(maximumOutputBytes: number): number {
  checkPositiveInteger(maximumOutputBytes, 'maximum_output_bytes');
  return maximumOutputBytes * HARD_CAPTURE_MULTIPLIER;
}

/** True when the content must be artifactized and excerpted rather than inlined. */
export function exceedsInlineCeiling(parts: readonly ContentPart[], ceiling: number): boolean {
  return contentBytes(parts) > ceiling;
}

// A lone surrogate has no UTF-8 encoding; UTF-8 serialization writes U+FFFD for it.
const LONE_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Lone surrogates become U+FFFD, exactly what UTF-8 serialization does to them. */
export function toWellFormed(text: string): string {
  return text.replace(LONE_SURROGATES, '\uFFFD');
}

function utf8Width(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/** What one code point costs inside a JSON string literal, in UTF-8 bytes. */
function escapedCost(cp: number): number {
  if (cp === 0x22 || cp === 0x5c) return 2; // \" \\
  if (cp < 0x20) return cp === 0x08 || cp === 0x09 || cp === 0x0a || cp === 0x0c || cp === 0x0d ? 2 : 6; // \n or \u00XX
  return utf8Width(cp); // a well-formed string has no lone surrogates left to escape
}

/**
 * What text costs inside a JSON document: UTF-8 bytes of JSON.stringify(text) without the two
 * quotes. The excerpt is charged this, not the raw byte count, so an output full of newlines or
 * control characters cannot overrun the budget once serialized.
 */
export function jsonEscapedBytes(text: string): number {
  let total = 0;
  for (const ch of toWellFormed(text)) total += escapedCost(ch.codePointAt(0)!);
  return total;
}

/** 41882 → "41,882": fixed separators, independent of the host's locale data. */
export function formatByteCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

const ARTIFACT_ID_PATTERN = /^[A-Za-z0-9._:/-]{1,128}$/;

/** § Output rules: `[... 41,882 bytes elided; full output: artifact:<artifact_id> ...]` */
export function elisionMarker(elidedBytes: number, artifactId: string): string {
  if (!Number.isSafeInteger(elidedBytes) || elidedBytes < 0) {
    throw new OutputExcerptError('output.elided_bytes_invalid', 'The elided byte count must be a non-negative integer.');
  }
  if (!ARTIFACT_ID_PATTERN.test(artifactId)) {
    throw new OutputExcerptError('output.artifact_id_invalid', 'An artifact id has no spaces, brackets or quotes.');
  }
  return `[... ${formatByteCount(elidedBytes)} bytes elided; full output: artifact:${artifactId} ...]`;
}

/**
 * The smallest inline budget an excerpt can fit in: the marker and reference alone, with the
 * largest count it could show (`totalBytes`, the whole capture). Every UUID gives the same
 * answer, so the executor can pass the id it is about to use, or any UUID, before the artifact
 * exists.
 */
export function minimumExcerptBudget(artifactId: string, totalBytes: number): number {
  return jsonEscapedBytes(elisionMarker(totalBytes, artifactId));
}

/** Throws ExcerptBudgetError when `budgetBytes` cannot hold the marker and reference. */
export function assertExcerptBudget(budgetBytes: number, artifactId: string, totalBytes: number): void {
  const minimum = minimumExcerptBudget(artifactId, totalBytes);
  if (budgetBytes < minimum) throw new ExcerptBudgetError(budgetBytes, minimum);
}

export interface ExcerptInput {
  /** The output to excerpt: the text the full result would have shown. */
  readonly text: string;
  /** The inline budget: inlineCeiling(...) for this tool. */
  readonly budgetBytes: number;
  readonly artifactId: string;
  /**
   * The count the marker shows. Defaults to the UTF-8 bytes of `text` that neither the head nor
   * the tail shows; pass it when the artifact holds more than `text` (a capture past the text
   * the caller decoded).
   */
  readonly elidedBytes?: number;
  /** Attribution for the envelope: the tool name. */
  readonly source: string;
  /** The resolved trust of the result. */
  readonly trust: TrustLevel;
  /** The head envelope's nonce; the tail always gets a fresh one. */
  readonly nonce?: string;
}

export interface Excerpt {
  /**
   * [head, marker, tail], each omitted when empty; the marker is always present.
   *   head:   { type: 'text', text: envelope(head) or head, trust }
   *   marker: { type: 'text', text: '[... N bytes elided; full output: artifact:ID ...]', trust: 'platform' }
   *   tail:   { type: 'text', text: envelope(tail) or tail, trust }
   * When the trust needs an envelope, head and tail are each closed inside their own part with
   * the same source and different nonces, and the marker sits between them outside any
   * envelope: the excerpt never leaves a labelled span unterminated.
   */
  readonly parts: RenderedContentPart[];
  /** The head and tail as taken from the text (before neutralization and framing). */
  readonly head: string;
  readonly tail: string;
  readonly marker: string;
  /** JSON-escaped UTF-8 bytes charged for each piece; the envelope framing is not charged. */
  readonly headBytes: number;
  readonly tailBytes: number;
  readonly markerBytes: number;
  /** headBytes + markerBytes + tailBytes, never above budgetBytes. */
  readonly chargedBytes: number;
  /** The count shown in the marker. */
  readonly elidedBytes: number;
}

interface Cut {
  readonly end: number; // code-unit index
  readonly cost: number;
  readonly raw: number;
}

/** The longest prefix, in whole code points, costing at most `cap`. */
function takeHead(text: string, cap: number): Cut {
  let i = 0;
  let cost = 0;
  let raw = 0;
  while (i < text.length) {
    const cp = text.codePointAt(i)!;
    const c = escapedCost(cp);
    if (cost + c > cap) break;
    cost += c;
    raw += utf8Width(cp);
    i += cp > 0xffff ? 2 : 1;
  }
  return { end: i, cost, raw };
}

/** The longest suffix starting at or after `floor`, in whole code points, costing at most `cap`. */
function takeTail(text: string, cap: number, floor: number): Cut {
  let start = text.length;
  let cost = 0;
  let raw = 0;
  while (start > floor) {
    let from = start - 1;
    const unit = text.charCodeAt(from);
    if (unit >= 0xdc00 && unit <= 0xdfff && from - 1 >= floor) {
      const prev = text.charCodeAt(from - 1);
      if (prev >= 0xd800 && prev <= 0xdbff) from -= 1;
    }
    const cp = text.codePointAt(from)!;
    const c = escapedCost(cp);
    if (cost + c > cap) break;
    cost += c;
    raw += utf8Width(cp);
    start = from;
  }
  return { end: start, cost, raw };
}

function textPart(text: string, trust: TrustLevel): RenderedContentPart {
  return { type: 'text', text, trust };
}

/**
 * § Output rules: a head and tail excerpt of at most 60% and 20% of the inline budget, split at
 * code-point boundaries, with the elision marker between them; head + marker + tail, measured
 * as JSON-escaped UTF-8, fit the same budget (the head and tail shrink to make room).
 * Throws ExcerptBudgetError when the budget cannot hold the marker with the largest count it
 * could show.
 */
export function excerpt(input: ExcerptInput): Excerpt {
  const { budgetBytes, artifactId, source, trust } = input;
  if (!Number.isSafeInteger(budgetBytes) || budgetBytes < 0) {
    throw new OutputExcerptError('output.budget_invalid', 'The inline budget must be a non-negative integer.');
  }
  const text = toWellFormed(input.text);
  const textBytes = utf8Bytes(text);

  // Reserve the marker at its widest: the count it finally shows is never larger than this.
  const reserved = minimumExcerptBudget(artifactId, input.elidedBytes ?? textBytes);
  if (budgetBytes < reserved) throw new ExcerptBudgetError(budgetBytes, reserved);

  let headCap = Math.floor(budgetBytes * EXCERPT_HEAD_FRACTION);
  let tailCap = Math.floor(budgetBytes * EXCERPT_TAIL_FRACTION);
  const available = budgetBytes - reserved;
  if (headCap + tailCap > available) {
    // Shrink both, keeping the 3:1 proportion and each under its own fraction.
    tailCap = Math.min(tailCap, Math.floor(available / 4));
    headCap = Math.min(headCap, available - tailCap);
  }

  const head = takeHead(text, headCap);
  const tail = takeTail(text, tailCap, head.end);
  const elidedBytes = input.elidedBytes ?? textBytes - head.raw - tail.raw;
  const marker = elisionMarker(elidedBytes, artifactId);
  const markerBytes = jsonEscapedBytes(marker);

  const headText = text.slice(0, head.end);
  const tailText = text.slice(tail.end);
  const parts: RenderedContentPart[] = [];
  const enveloped = needsEnvelope(trust);
  const headNonce = input.nonce ?? newNonce();
  if (headText !== '') {
    parts.push(textPart(enveloped ? envelope(headText, { source, trust, nonce: headNonce }) : headText, trust));
  }
  parts.push(textPart(marker, 'platform'));
  if (tailText !== '') {
    let tailNonce = newNonce();
    while (tailNonce === headNonce) tailNonce = newNonce();
    parts.push(textPart(enveloped ? envelope(tailText, { source, trust, nonce: tailNonce }) : tailText, trust));
  }

  return {
    parts,
    head: headText,
    tail: tailText,
    marker,
    headBytes: head.cost,
    tailBytes: tail.cost,
    markerBytes,
    chargedBytes: head.cost + markerBytes + tail.cost,
    elidedBytes,
  };
}

export interface RenderInlineOptions {
  readonly source: string;
  readonly trust: TrustLevel;
}

/**
 * A result under the inline ceiling, as the model reads it: each text part labelled with the
 * resolved trust and, below USER, enveloped on its own with a fresh nonce (markers inside it
 * neutralized). An artifact reference keeps its own label, clamped to the result's: a reference
 * inside an untrusted result is never more trusted than the result.
 */
export function renderInline(parts: readonly ContentPart[], options: RenderInlineOptions): RenderedContentPart[] {
  const { source, trust } = options;
  return parts.map((part): RenderedContentPart => {
    if (part.type === 'artifact') {
      return { type: 'artifact', artifact: { ...part.artifact, trust: clampTrust(trust, part.artifact.trust) } };
    }
    return textPart(needsEnvelope(trust) ? envelope(part.text, { source, trust }) : part.text, trust);
  });
}
