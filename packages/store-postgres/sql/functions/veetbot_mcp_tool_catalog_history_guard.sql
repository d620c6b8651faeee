-- § Schema additions: the catalog is a history, not a cache. The only update is stamping
-- withdrawn_at once.
-- Its trigger is schema, not function: mcp_tool_catalog_history_guard, BEFORE UPDATE, created in
-- migrations/0001_row_level_security.sql.
-- Last changed by migrations/0001_row_level_security.sql.
CREATE OR REPLACE FUNCTION public.veetbot_mcp_tool_catalog_history_guard()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF OLD.withdrawn_at IS NOT NULL
     OR (to_jsonb(NEW) - 'withdrawn_at') IS DISTINCT FROM (to_jsonb(OLD) - 'withdrawn_at') THEN
    RAISE EXCEPTION 'mcp_tool_catalog % is history: only withdrawn_at may be set, once', OLD.id
      USING ERRCODE = '55000';
  END IF;
  RETURN NEW;
END $function$;
