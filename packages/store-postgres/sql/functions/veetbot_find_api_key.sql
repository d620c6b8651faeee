-- Tenant authentication's lookup by key hash, before any tenant is known: as
-- veetbot_maintenance, which may read api_keys across tenants (0001).
-- Last changed by migrations/0010_api_step_functions.sql.
CREATE OR REPLACE FUNCTION public.veetbot_find_api_key(p_hash text)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM set_config('role', 'veetbot_maintenance', true);
  RETURN (SELECT to_jsonb(k) FROM api_keys AS k WHERE k.key_hash = p_hash);
END $function$;
