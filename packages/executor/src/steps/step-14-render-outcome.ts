import { renderOutcome, type RenderedContentPart, type ToolResultItem, type TrustLevel } from '@veetbot/domain';
import type { InvocationRow } from '@veetbot/ports';

/** What step 13 persists in tool_invocations.result: exactly what step 14 renders. */
export interface PersistedResult {
  readonly content: RenderedContentPart[];
  readonly structured: Record<string, unknown> | null;
  readonly trust: TrustLevel;
}

function isPersistedResult(value: unknown): value is PersistedResult {
  return (
    typeof value === 'object' &&
    value !== null &&
    Array.isArray((value as PersistedResult).content) &&
    typeof (value as PersistedResult).trust === 'string'
  );
}

/**
 * Step 14: the ToolResultItem the model reads, rendered from the terminal row alone. The same
 * function answers a duplicate submission (§ Deduplication, rule 2), so a replay and the first
 * run give the model byte-identical items.
 */
export function renderToolResultItem(row: InvocationRow): ToolResultItem {
  const persisted = isPersistedResult(row.result) ? row.result : { content: [], structured: null, trust: 'platform' as const };
  return {
    call_id: row.callId,
    tool_name: row.toolName,
    outcome: renderOutcome({ action: row.toolName, reasonCode: row.reasonCode ?? 'tool.internal' }),
    content: persisted.content,
    structured: persisted.structured,
    trust: persisted.trust,
    truncated: row.truncated,
    artifact_id: row.artifactId,
  };
}
