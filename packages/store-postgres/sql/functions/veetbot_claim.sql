-- Step 9: authorized -> running (attempt 1), or a re-claim of a running, unsuspended row
-- (same key, next attempt), or the resumption of an orchestration suspended on its bridge
-- call's approval (docs/adr/0039): the marker is cleared, the attempt stays. Its commit is
-- deferred (ADR 0015).
-- Last changed by migrations/0019_orchestration_approval.sql.
CREATE OR REPLACE FUNCTION public.veetbot_claim(p_tenant text, p_invocation uuid, p_run text, p_token bigint, p_started_at timestamp with time zone, p_stream text, p_events jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_row tool_invocations;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  PERFORM veetbot_assert_fence(p_run, p_token);
  UPDATE tool_invocations
  SET status = 'running',
      attempt_number = CASE WHEN status = 'authorized' OR suspended_kind = 'approval' THEN attempt_number ELSE attempt_number + 1 END,
      started_at = p_started_at,
      suspended_kind = NULL,
      suspended_ref = NULL
  WHERE id = p_invocation AND run_id = p_run::uuid
    AND (status = 'authorized' OR (status = 'running' AND (suspended_kind IS NULL OR suspended_kind = 'approval')))
  RETURNING * INTO v_row;
  IF NOT FOUND THEN
    PERFORM veetbot_refuse_write(p_invocation, p_run, 'claim');
  END IF;
  -- Step 9's commit is deferred (ADR 0015): the watermark or the result flushes it.
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM veetbot_append_call_events(p_tenant, p_stream, p_events);
  RETURN to_jsonb(v_row);
END $function$;
