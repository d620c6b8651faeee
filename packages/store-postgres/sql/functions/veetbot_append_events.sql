-- Any batch: per stream in sorted order (two writers lock their counters in one order, so they
-- cannot deadlock), a repeated key kept at its first position.
-- Last changed by migrations/0008_lean_governed_call_functions.sql.
CREATE OR REPLACE FUNCTION public.veetbot_append_events(p_tenant text, p_events jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_stream text;
  v_batch jsonb;
BEGIN
  IF p_events IS NULL OR jsonb_array_length(p_events) = 0 THEN
    RETURN;
  END IF;
  FOR v_stream, v_batch IN
    SELECT d.s, jsonb_agg(d.e ORDER BY d.n)
    FROM (
      SELECT DISTINCT ON (t.e ->> 'derivation_key') coalesce(t.e ->> 'run_id', '') AS s, t.e, t.n
      FROM jsonb_array_elements(p_events) WITH ORDINALITY AS t(e, n)
      ORDER BY t.e ->> 'derivation_key', t.n
    ) AS d
    GROUP BY d.s ORDER BY d.s
  LOOP
    PERFORM veetbot_append_stream_events(p_tenant, v_stream, v_batch);
  END LOOP;
END $function$;
