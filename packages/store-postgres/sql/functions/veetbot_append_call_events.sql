-- A hot function's events: p_stream when the caller vouches for a one-stream batch with
-- distinct keys (hot-path.ts decides), else NULL and the general path.
-- Last changed by migrations/0008_lean_governed_call_functions.sql.
CREATE OR REPLACE FUNCTION public.veetbot_append_call_events(p_tenant text, p_stream text, p_events jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF p_stream IS NULL THEN
    PERFORM veetbot_append_events(p_tenant, p_events);
  ELSE
    PERFORM veetbot_append_stream_events(p_tenant, p_stream, p_events);
  END IF;
END $function$;
