import { z } from 'zod';
import { Timestamp } from './common';

export const EventsQuery = z
  .object({
    /** The run's stream; absent: the tenant's run-less stream. */
    run_id: z.uuid().optional(),
    /** Replay after this sequence (the `Last-Event-ID` header wins when both are given). */
    last_event_id: z.coerce.number().int().nonnegative().optional(),
  })
  .strict();
export type EventsQuery = { readonly run_id?: string; readonly last_event_id?: number };

/** The `data:` of one SSE message; its `id:` is `sequence`, its `event:` is `type`. */
export const StreamEvent = z
  .object({
    id: z.uuid(),
    run_id: z.uuid().nullable(),
    sequence: z.number().int().positive(),
    type: z.string(),
    payload: z.record(z.string(), z.unknown()),
    created_at: Timestamp,
  })
  .strict();
export type StreamEvent = z.infer<typeof StreamEvent>;
