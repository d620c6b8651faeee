-- What a worker reads before it runs a step it claimed (the step queue's claim sees identity
-- columns only): the step, its run and the run's session, under the tenant's RLS, in one
-- statement. {step, run, session}; step is null when this tenant has no such step.
-- Last changed by migrations/0010_api_step_functions.sql.
CREATE OR REPLACE FUNCTION public.veetbot_step_context(p_tenant text, p_run uuid, p_step integer)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_step steps;
  v_run runs;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  SELECT * INTO v_step FROM steps WHERE run_id = p_run AND step_number = p_step;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('step', NULL);
  END IF;
  SELECT * INTO v_run FROM runs WHERE id = p_run;
  RETURN jsonb_build_object(
    'step', to_jsonb(v_step),
    'run', CASE WHEN v_run.id IS NULL THEN NULL ELSE to_jsonb(v_run) END,
    'session', (SELECT to_jsonb(s) FROM sessions AS s WHERE s.id = v_run.session_id));
END $function$;
