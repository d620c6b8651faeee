-- docs/adr/0075: every api process caches the keys it has checked, and forgets one when the
-- database says its row changed. The notification is sent here, by the row's own trigger, in the
-- transaction that revokes, rewrites or deletes the key (delivered when it commits), so no path
-- that changes a key — the store, the CLI, an operator's psql — can forget to send it. The
-- payload is the key's id, never its hash or anything a tenant wrote; a TRUNCATE says `{}`:
-- every key.
-- Its triggers are schema, not function: api_keys_changed (AFTER UPDATE OR DELETE, each row)
-- and api_keys_truncated (AFTER TRUNCATE), created in migrations/0027_api_key_cache_and_step_view.sql.
-- Last changed by migrations/0027_api_key_cache_and_step_view.sql.
CREATE OR REPLACE FUNCTION public.veetbot_api_key_changed()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('veetbot_api_keys', '{}');
  ELSE
    PERFORM pg_notify('veetbot_api_keys', json_build_object('key_id', OLD.id)::text);
  END IF;
  RETURN NULL;
END $function$;
