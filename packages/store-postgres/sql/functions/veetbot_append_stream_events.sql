-- One stream's events (the hot path: a call's tool events are all on its run's stream). The
-- caller guarantees that every event of p_events is on p_stream ('' = the run-less stream) and
-- that their derivation keys are distinct; veetbot_append_events below splits any other batch.
-- The hot functions (veetbot_insert_intent, veetbot_claim, veetbot_complete) do its common case
-- inline in one statement and call it for a stream's first event (docs/adr/0074).
-- Last changed by migrations/0026_hot_path_lean_statements.sql.
CREATE OR REPLACE FUNCTION public.veetbot_append_stream_events(p_tenant text, p_stream text, p_events jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_count integer := jsonb_array_length(p_events);
  v_last bigint;
  v_inserted integer;
BEGIN
  IF v_count = 0 THEN
    RETURN;
  END IF;
  -- Reserves v_count numbers, locking the stream's counter until commit, so concurrent writers
  -- of one stream are ordered and a rolled-back writer gives its numbers back. An UPDATE first:
  -- INSERT … ON CONFLICT DO UPDATE writes a separate row-lock record every time.
  LOOP
    UPDATE event_streams SET last_sequence = last_sequence + v_count
    WHERE tenant_id = p_tenant AND stream_id = p_stream
    RETURNING last_sequence INTO v_last;
    EXIT WHEN FOUND;
    INSERT INTO event_streams (tenant_id, stream_id, last_sequence) VALUES (p_tenant, p_stream, v_count)
    ON CONFLICT (tenant_id, stream_id) DO NOTHING
    RETURNING last_sequence INTO v_last;
    EXIT WHEN FOUND;
    -- A concurrent first event created the counter: update that one.
  END LOOP;
  -- A key already stored is skipped (read after the counter lock: a concurrent writer of the
  -- same stream has committed by now).
  INSERT INTO events (tenant_id, run_id, sequence, type, payload, derivation_key, created_at)
  SELECT p_tenant, nullif(p_stream, '')::uuid, v_last - v_count + t.n, t.e ->> 'type', t.e -> 'payload',
         t.e ->> 'derivation_key', (t.e ->> 'created_at')::timestamptz
  FROM jsonb_array_elements(p_events) WITH ORDINALITY AS t(e, n)
  ON CONFLICT (tenant_id, derivation_key) DO NOTHING;
  GET DIAGNOSTICS v_inserted = ROW_COUNT;
  IF v_inserted < v_count THEN
    -- Known keys left holes in the reserved numbers (veetbot_close_event_gaps).
    PERFORM veetbot_close_event_gaps(p_tenant, p_stream, v_last - v_count);
  END IF;
END $function$;
