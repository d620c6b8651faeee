-- Step 8's AUTHORIZED: from PROPOSED, or from WAITING_FOR_APPROVAL once its approval is
-- approved (approval re-enters the pipeline; only an approved record lets step 8 authorize).
-- veetbot_refuse_write names which of the two refused.
-- Last changed by migrations/0016_one_language_per_transition.sql.
CREATE OR REPLACE FUNCTION public.veetbot_authorize(p_tenant text, p_invocation uuid, p_run text, p_token bigint, p_stream text, p_events jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_row tool_invocations;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  PERFORM veetbot_assert_fence(p_run, p_token);
  UPDATE tool_invocations AS i SET status = 'authorized'
  WHERE i.id = p_invocation AND i.run_id = p_run::uuid
    AND (i.status = 'proposed'
      OR (i.status = 'waiting_for_approval'
        AND EXISTS (SELECT 1 FROM approvals AS a WHERE a.invocation_id = i.id AND a.status = 'approved')))
  RETURNING * INTO v_row;
  IF NOT FOUND THEN
    PERFORM veetbot_refuse_write(p_invocation, p_run, 'authorize');
  END IF;
  PERFORM veetbot_append_call_events(p_tenant, p_stream, p_events);
  RETURN to_jsonb(v_row);
END $function$;
