-- § Control tools: a RUNNING, unsuspended invocation waits for the user's answer or a child
-- run (suspended_kind, suspended_ref); the status stays RUNNING, so the sweep leaves it alone.
-- A question moves its running run to WAITING_FOR_USER in the same commit (docs/adr/0034): no
-- reader ever sees a question asked while the run still takes new steps.
-- Last changed by migrations/0018_question_waits_in_one_commit.sql.
CREATE OR REPLACE FUNCTION public.veetbot_suspend(p_tenant text, p_invocation uuid, p_run text, p_token bigint, p_kind text, p_ref text, p_stream text, p_events jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_row tool_invocations;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  PERFORM veetbot_assert_fence(p_run, p_token);
  UPDATE tool_invocations SET suspended_kind = p_kind, suspended_ref = p_ref
  WHERE id = p_invocation AND run_id = p_run::uuid AND status = 'running' AND suspended_kind IS NULL
  RETURNING * INTO v_row;
  IF NOT FOUND THEN
    PERFORM veetbot_refuse_write(p_invocation, p_run, 'suspend');
  END IF;
  IF p_kind = 'user_input' THEN
    UPDATE runs SET status = 'waiting_for_user' WHERE id = p_run::uuid AND status = 'running';
  END IF;
  PERFORM veetbot_append_call_events(p_tenant, p_stream, p_events);
  RETURN to_jsonb(v_row);
END $function$;
