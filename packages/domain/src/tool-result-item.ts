import { z } from 'zod';
import { ArtifactRef } from './tool-result';
import { renderOutcome, ToolOutcome } from './outcome';
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

/**
 * A call the platform answered itself (no tool ran): the table's outcome for `reasonCode`,
 * PLATFORM trust (the platform is speaking), `notes` as platform-written text (a schema path,
 * never a value). The one builder of such items: the pipeline's refusals (executor) and the
 * bridge's own (sandbox-adapter, runtime) use it, so their shapes cannot drift.
 */
export function platformRefusalItem(callId: string, toolName: string, reasonCode: string, notes: readonly string[] = []): ToolResultItem {
  return {
    call_id: callId,
    tool_name: toolName,
    outcome: renderOutcome({ action: toolName, reasonCode }),
    content: notes.map((text) => ({ type: 'text' as const, text, trust: 'platform' as const })),
    structured: null,
    trust: 'platform',
    truncated: false,
    artifact_id: null,
  };
}
