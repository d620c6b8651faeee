-- InvocationStore.listForRun: the run's rows within the step range, in step, creation and call
-- order — one statement where a tenant transaction took four round trips (docs/adr/0049: every
-- step reads its own rows back once its calls are done).
-- Last changed by migrations/0021_step_opening_and_finish.sql.
CREATE OR REPLACE FUNCTION public.veetbot_list_invocations(p_tenant text, p_run uuid, p_from integer, p_to integer)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  RETURN coalesce(
    (SELECT json_agg(to_jsonb(i) ORDER BY i.step_number, i.created_at, i.call_id)
     FROM tool_invocations AS i
     WHERE i.run_id = p_run AND i.step_number BETWEEN coalesce(p_from, -2147483648) AND coalesce(p_to, 2147483647)),
    '[]'::json);
END $function$;
