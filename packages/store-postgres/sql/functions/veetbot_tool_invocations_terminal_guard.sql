-- § Deduplication on the way in / step 13: a terminal row is never rewritten. The repositories
-- never try; this makes it true for any writer.
-- Its trigger is schema, not function: tool_invocations_terminal_guard, AFTER UPDATE ... WHEN
-- (OLD.status is terminal), created in migrations/0008_lean_governed_call_functions.sql.
-- Last changed by migrations/0001_row_level_security.sql.
CREATE OR REPLACE FUNCTION public.veetbot_tool_invocations_terminal_guard()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF OLD.status IN ('succeeded', 'failed', 'denied', 'uncertain') THEN
    RAISE EXCEPTION 'tool_invocations % is terminal (%) and is never rewritten', OLD.id, OLD.status
      USING ERRCODE = '55000';
  END IF;
  RETURN NEW;
END $function$;
