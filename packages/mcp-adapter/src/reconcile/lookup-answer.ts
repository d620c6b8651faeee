import { z } from 'zod';
import type { LooseCallToolResult } from '../connection/result-schemas';

/**
 * The one answer shape a lookup tool may give (docs/adr/0066): its structuredContent is exactly
 * `{ "idempotency_key": <the key it was asked about>, "status": "applied" | "not_applied" }`.
 * Nothing else fits — no extra field, no other status, no text-only answer, no isError — and
 * an answer that does not fit is `unknown`, never a guess. Server text never becomes evidence.
 */
export const LookupAnswer = z
  .object({
    idempotency_key: z.string(),
    status: z.enum(['applied', 'not_applied']),
  })
  .strict();
export type LookupAnswer = z.infer<typeof LookupAnswer>;

export type LookupReading =
  | { readonly fits: true; readonly status: LookupAnswer['status'] }
  | { readonly fits: false; readonly why: string };

/** One lookup result read against the key it was asked about. `why` is our own fixed words. */
export function readLookupAnswer(result: LooseCallToolResult, key: string): LookupReading {
  if (result.isError === true) return { fits: false, why: 'it answered with an error result' };
  if (result.structuredContent === undefined) return { fits: false, why: 'it answered without structured content' };
  const parsed = LookupAnswer.safeParse(result.structuredContent);
  if (!parsed.success) return { fits: false, why: 'its answer does not have the lookup shape' };
  // An answer about another key is an answer about another call.
  if (parsed.data.idempotency_key !== key) return { fits: false, why: 'its answer names another key' };
  return { fits: true, status: parsed.data.status };
}
