-- Known derivation keys left holes in a stream's reserved numbers (everything after p_base was
-- numbered from one reservation, and ON CONFLICT skipped the keys already stored): the events
-- after p_base are renumbered p_base + 1, … in their order, lowest first (each target number is
-- free by then), and the counter gives back the unused reservation. The stream's counter is
-- locked by the caller's bump. Called by veetbot_append_stream_events and by the hot functions'
-- inline append (docs/adr/0074): the one copy of this rule.
-- Last changed by migrations/0026_hot_path_lean_statements.sql.
CREATE OR REPLACE FUNCTION public.veetbot_close_event_gaps(p_tenant text, p_stream text, p_base bigint)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_event uuid;
  v_next bigint := p_base;
BEGIN
  FOR v_event IN
    SELECT id FROM events
    WHERE tenant_id = p_tenant AND run_id IS NOT DISTINCT FROM nullif(p_stream, '')::uuid AND sequence > p_base
    ORDER BY sequence
  LOOP
    v_next := v_next + 1;
    UPDATE events SET sequence = v_next WHERE id = v_event;
  END LOOP;
  UPDATE event_streams SET last_sequence = v_next WHERE tenant_id = p_tenant AND stream_id = p_stream;
END $function$;
