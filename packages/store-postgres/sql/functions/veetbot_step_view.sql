-- A step's outcome as the api reads it (apps/api/src/step-outcome.ts): the run, the step's own
-- rows in listForRun's order, and the breaker tally through the step (ADR 0016).
-- Last changed by migrations/0012_breaker_tally_in_the_step_view.sql.
CREATE OR REPLACE FUNCTION public.veetbot_step_view(p_tenant text, p_run uuid, p_through integer)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  RETURN json_build_object(
    'run', (SELECT to_jsonb(r) FROM runs AS r WHERE r.id = p_run),
    'rows', coalesce(
      (SELECT jsonb_agg(to_jsonb(i) ORDER BY i.created_at, i.call_id)
       FROM tool_invocations AS i WHERE i.run_id = p_run AND i.step_number = p_through),
      '[]'::jsonb),
    'tally', veetbot_breaker_tally(p_tenant, p_run, NULL, p_through));
END $function$;
