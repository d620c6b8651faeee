import { z } from 'zod';
import { ToolFailureKind } from './enums';
import { BrowserDiagnostics } from './browser-diagnostics';
import { TrustLevel } from './trust';

/** § ToolResult: an artifact reference; a tool returns references, never inline bytes. */
export const ArtifactRef = z
  .object({
    artifact_id: z.uuid(),
    media_type: z.string().min(1),
    bytes: z.number().int().nonnegative(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    trust: TrustLevel,
  })
  .strict();
export type ArtifactRef = z.infer<typeof ArtifactRef>;

/** ADR-0002's union: text, or a reference to an artifact. */
export const ContentPart = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }).strict(),
  z.object({ type: z.literal('artifact'), artifact: ArtifactRef }).strict(),
]);
export type ContentPart = z.infer<typeof ContentPart>;

/** `tool.{kind}.{detail}` or a code from the checked-in table. */
export const ReasonCode = z.string().regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/);

/** § ToolResult: ToolFailure. detail is operator-facing; external_text is untrusted data. */
export const ToolFailure = z
  .object({
    kind: ToolFailureKind,
    reason_code: ReasonCode,
    detail: z.string(),
    retryable: z.boolean(),
    external_text: z.string().nullable().default(null),
  })
  .strict();
export type ToolFailure = z.infer<typeof ToolFailure>;

/**
 * § ToolResult: exactly two shapes — it succeeded, or the tool itself failed. It cannot
 * express denial, uncertainty or unavailability: those belong to the pipeline.
 */
export const ToolResult = z
  .object({
    ok: z.boolean(),
    content: z.array(ContentPart),
    structured: z.record(z.string(), z.unknown()).nullable().default(null),
    artifacts: z.array(ArtifactRef).default([]),
    failure: ToolFailure.nullable().default(null),
    output_trust: TrustLevel.nullable().default(null),
    metrics: z.record(z.string(), z.number().int()).default({}),
    /** § The circuit breakers: a platform-computed digest; never model-visible, never stored. */
    evidence_key: z.string().nullable().default(null),
    /**
     * ADR-0158: a builtin browser tool's trusted diagnostics, for its terminal event only (never
     * model-visible, never stored with the result). The executor keeps it only from a builtin
     * on the browser_provider target and drops it from every other tool (docs/adr/0079).
     */
    browser_diagnostics: BrowserDiagnostics.nullable().default(null),
  })
  .strict()
  .refine((r) => r.ok === (r.failure === null), { message: 'ok results carry no failure; failed results carry one' });
export type ToolResult = z.infer<typeof ToolResult>;
export type ToolResultInput = z.input<typeof ToolResult>;

/**
 * A tool's own failure with reason_code `tool.{kind}.{reasonDetail}` (§ ToolResult: "stable").
 * `detail` is operator-facing and never sent onward; no external_text: the platform quotes no
 * third party here.
 */
export function toolFailure(kind: ToolFailureKind, reasonDetail: string, detail: string, retryable = false): ToolResultInput {
  return { ok: false, content: [], failure: { kind, reason_code: `tool.${kind}.${reasonDetail}`, detail, retryable, external_text: null } };
}
