-- A step's outcome as the api reads it (apps/api/src/step-outcome.ts): the run, the step's own
-- rows in listForRun's order, and the breaker tally through the step of the keys near a
-- threshold (ADR 0016; veetbot_breaker_near_tally, docs/adr/0049), with the run's breaker
-- evidence (docs/adr/0078), which takes the evidence restarts off those counts.
-- Last changed by migrations/0030_breaker_evidence.sql.
CREATE OR REPLACE FUNCTION public.veetbot_step_view(p_tenant text, p_run uuid, p_through integer, p_near_calls integer)
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
    'tally', veetbot_breaker_near_tally(p_tenant, p_run, p_through, p_near_calls),
    'evidence', (SELECT e.evidence FROM run_breaker_evidence AS e WHERE e.tenant_id = p_tenant AND e.run_id = p_run));
END $function$;
