import { z } from 'zod';

/**
 * The API's wire contract (apps/api validates every request body and query with these very
 * schemas, and generates /v1/openapi.json from them; this client types its calls with them).
 * JSON fields keep the specification's snake_case spelling; times are ISO 8601 strings.
 */

/** Every error the API returns: a stable code and a fixed-shape message (never a stack). */
export const ErrorBody = z
  .object({
    error: z
      .object({
        code: z.string(),
        message: z.string(),
      })
      .strict(),
  })
  .strict();
export type ErrorBody = z.infer<typeof ErrorBody>;

export const Timestamp = z.iso.datetime({ offset: true });
export const NullableTimestamp = Timestamp.nullable();

/** A request with no body (POST .../close, .../cancel, .../approve): nothing, or `{}`. */
export const EmptyBody = z.object({}).strict();

/** Page size of every list route. */
export const Limit = z.coerce.number().int().min(1).max(200).default(50);

/** An opaque keyset cursor: pass `next_cursor` back as `cursor`. */
export const Cursor = z.string().min(1).max(512);
