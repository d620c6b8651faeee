-- Approval (step 7): PROPOSED or AUTHORIZED -> WAITING_FOR_APPROVAL, and RUNNING (unsuspended) too: step
-- 10's pre-effect re-check can ask for a person before the effect (docs/adr/0023); its
-- watermark, if a replayed attempt has one, stays. The approval row and the events commit with
-- the change. The row records the policy version and rule that asked (docs/adr/0047); a row
-- already WAITING_FOR_APPROVAL is accepted for a re-ask under a new policy version, which
-- re-opens its approval (veetbot_request_approval). The commit is flushed as the session's default has it (no deferral: a person is
-- about to be asked).
-- Last changed by migrations/0020_console_decision_binding.sql.
CREATE OR REPLACE FUNCTION public.veetbot_wait_for_approval(p_tenant text, p_invocation uuid, p_run text, p_token bigint, p_requested_at timestamp with time zone, p_policy_version text, p_policy_rule_id text, p_stream text, p_events jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_row tool_invocations;
  v_approval approvals;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  PERFORM veetbot_assert_fence(p_run, p_token);
  UPDATE tool_invocations SET status = 'waiting_for_approval', policy_version = p_policy_version, policy_rule_id = p_policy_rule_id
  WHERE id = p_invocation AND run_id = p_run::uuid
    AND (status IN ('proposed', 'authorized', 'waiting_for_approval') OR (status = 'running' AND suspended_kind IS NULL))
  RETURNING * INTO v_row;
  IF NOT FOUND THEN
    PERFORM veetbot_refuse_write(p_invocation, p_run, 'wait for approval');
  END IF;
  v_approval := veetbot_request_approval(p_tenant, v_row, p_requested_at);
  PERFORM veetbot_append_call_events(p_tenant, p_stream, p_events);
  RETURN jsonb_build_object('row', to_jsonb(v_row), 'approval', to_jsonb(v_approval));
END $function$;
