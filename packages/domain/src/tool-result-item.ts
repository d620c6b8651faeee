import { z } from 'zod';
import { ArtifactRef } from './tool-result';
import { ToolOutcome } from './outcome';
import { TrustLevel } from './trust';

/** A content part as the model reads it: every text span carries its resolved trust label. */
export const RenderedContentPart = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string(), trust: TrustLevel }).strict(),
  z.object({ type: z.literal('artifact'), artifact: ArtifactRef }).strict(),
]);
export type RenderedContentPart = z.infer<typeof RenderedContentPart>;

/**
 * § What the model reads (RULINGS.md "Context engine"): the call id, the tool name, the
 * six-field outcome, content parts with trust, and the resolved trust. The pipeline always
 * sets `trust` explicitly; ADR-0002's type default never survives into a conversation.
 */
export const ToolResultItem = z
  .object({
    call_id: z.string(),
    tool_name: z.string(),
    outcome: ToolOutcome,
    content: z.array(RenderedContentPart),
    structured: z.record(z.string(), z.unknown()).nullable(),
    trust: TrustLevel,
    truncated: z.boolean(),
    artifact_id: z.uuid().nullable(),
  })
  .strict();
export type ToolResultItem = z.infer<typeof ToolResultItem>;
