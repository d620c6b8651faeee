-- Storing the MCP gateway's one-call step (apps/api/src/mcp/gateway-runtime.ts, docs/adr/0044,
-- 0062): an MCP client names a call, not a step, so the step is the one of this run whose batch
-- already holds the call id (returned as it is: one call id, one step), else a new `pending`
-- step numbered max + 1 when the run is running in an open session. The run's row lock (FOR NO
-- KEY UPDATE: the worker's foreign-key KEY SHARE locks do not wait on it) serialises submissions
-- to one run across api processes. One statement instead of a transaction of six (issue 24:
-- the gateway's per-call round trips). Returns {run, session_status, step, inserted}; run is
-- null when this tenant has no such run.
-- Last changed by migrations/0024_gateway_submit_call.sql.
CREATE OR REPLACE FUNCTION public.veetbot_submit_call(p_tenant text, p_run uuid, p_call_id text, p_batch jsonb, p_created_at timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_run runs;
  v_session_status text;
  v_step steps;
  v_next integer;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  SELECT * INTO v_run FROM runs WHERE id = p_run FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('run', NULL);
  END IF;
  SELECT status INTO v_session_status FROM sessions WHERE id = v_run.session_id;
  SELECT * INTO v_step FROM steps
  WHERE run_id = p_run AND batch -> 'calls' @> jsonb_build_array(jsonb_build_object('call_id', p_call_id))
  ORDER BY step_number
  LIMIT 1;
  IF FOUND THEN
    RETURN jsonb_build_object('run', to_jsonb(v_run), 'session_status', v_session_status, 'step', to_jsonb(v_step), 'inserted', false);
  END IF;
  IF v_run.status = 'running' AND v_session_status = 'open' THEN
    SELECT coalesce(max(step_number), 0) + 1 INTO v_next FROM steps WHERE run_id = p_run;
    INSERT INTO steps (tenant_id, run_id, step_number, batch, created_at)
    VALUES (p_tenant, p_run, v_next, p_batch, p_created_at)
    RETURNING * INTO v_step;
    RETURN jsonb_build_object('run', to_jsonb(v_run), 'session_status', v_session_status, 'step', to_jsonb(v_step), 'inserted', true);
  END IF;
  RETURN jsonb_build_object('run', to_jsonb(v_run), 'session_status', v_session_status, 'step', NULL, 'inserted', false);
END $function$;
