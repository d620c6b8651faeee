-- A commit that must reach the disk before the caller goes on: a deployment default of
-- synchronous_commit = off is raised to local for this transaction (any stronger level —
-- on, remote_write, remote_apply — is kept as it is).
-- Last changed by migrations/0011_deferred_flush_before_the_effect.sql.
CREATE OR REPLACE FUNCTION public.veetbot_require_flush()
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF current_setting('synchronous_commit') = 'off' THEN
    PERFORM set_config('synchronous_commit', 'local', true);
  END IF;
END $function$;
