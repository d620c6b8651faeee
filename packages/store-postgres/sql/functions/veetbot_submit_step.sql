-- Storing a submitted step (apps/api/src/routes/steps.ts): the run, whether its session is
-- open, and the step — inserted `pending` when the run is running in an open session, else the
-- step already held under that number (a resubmission is answered whatever became of the run).
-- The api decides the answer (404, 409, the resubmission's batch check) from what this returns:
-- {run, session_status, step, inserted}; run is null when this tenant has no such run.
-- A step it inserts wakes the workers in the same transaction (docs/adr/0076): pg_notify on
-- veetbot_steps with the step's identity (src/step-queue/wake-ups.ts, encodeStep), delivered
-- when the insert commits and never for one rolled back — no second statement from the api.
-- Last changed by migrations/0029_submit_step_notifies.sql.
CREATE OR REPLACE FUNCTION public.veetbot_submit_step(p_tenant text, p_run uuid, p_step integer, p_batch jsonb, p_created_at timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_run runs;
  v_session_status text;
  v_step steps;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  SELECT * INTO v_run FROM runs WHERE id = p_run;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('run', NULL);
  END IF;
  IF v_run.status = 'running' THEN
    SELECT status INTO v_session_status FROM sessions WHERE id = v_run.session_id;
    IF v_session_status = 'open' THEN
      INSERT INTO steps (tenant_id, run_id, step_number, batch, created_at)
      VALUES (p_tenant, p_run, p_step, p_batch, p_created_at)
      ON CONFLICT (run_id, step_number) DO NOTHING
      RETURNING * INTO v_step;
      IF FOUND THEN
        PERFORM pg_notify('veetbot_steps', json_build_object('tenant_id', p_tenant, 'run_id', p_run, 'step_number', p_step)::text);
        RETURN jsonb_build_object('run', to_jsonb(v_run), 'session_status', v_session_status, 'step', to_jsonb(v_step), 'inserted', true);
      END IF;
    END IF;
  END IF;
  SELECT * INTO v_step FROM steps WHERE run_id = p_run AND step_number = p_step;
  RETURN jsonb_build_object(
    'run', to_jsonb(v_run),
    'session_status', v_session_status,
    'step', CASE WHEN v_step.id IS NULL THEN NULL ELSE to_jsonb(v_step) END,
    'inserted', false);
END $function$;
