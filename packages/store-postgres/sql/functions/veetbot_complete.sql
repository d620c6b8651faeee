-- Step 13: the terminal write. A terminal row is never rewritten (the guard trigger says so
-- too). Flushed: the outcome is reported only after this commit is durable (ADR 0015).
-- Last changed by migrations/0011_deferred_flush_before_the_effect.sql.
CREATE OR REPLACE FUNCTION public.veetbot_complete(p_tenant text, p_invocation uuid, p_run text, p_token bigint, p_terminal jsonb, p_stream text, p_events jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_row tool_invocations;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  PERFORM veetbot_assert_fence(p_run, p_token);
  UPDATE tool_invocations SET
    status = p_terminal ->> 'status',
    outcome_status = p_terminal ->> 'outcome_status',
    reason_code = p_terminal ->> 'reason_code',
    result = nullif(p_terminal -> 'result', 'null'::jsonb),
    error = nullif(p_terminal -> 'error', 'null'::jsonb),
    output_bytes = (p_terminal ->> 'output_bytes')::bigint,
    truncated = (p_terminal ->> 'truncated')::boolean,
    artifact_id = (p_terminal ->> 'artifact_id')::uuid,
    finished_at = (p_terminal ->> 'finished_at')::timestamptz
  WHERE id = p_invocation AND run_id = p_run::uuid AND status IN ('proposed', 'authorized', 'waiting_for_approval', 'running')
  RETURNING * INTO v_row;
  IF NOT FOUND THEN
    PERFORM veetbot_refuse_write(p_invocation, p_run, 'complete');
  END IF;
  -- Flushed: the outcome is reported only after this commit is durable.
  PERFORM veetbot_require_flush();
  PERFORM veetbot_append_call_events(p_tenant, p_stream, p_events);
  RETURN to_jsonb(v_row);
END $function$;
