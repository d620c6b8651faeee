-- Rule 5 of § Deduplication on the way in: one approval per invocation; an existing one is
-- resumed, never duplicated. Called by veetbot_insert_intent (a row stored waiting for
-- approval) and veetbot_wait_for_approval, inside their statement.
-- Last changed by migrations/0016_one_language_per_transition.sql.
CREATE OR REPLACE FUNCTION public.veetbot_request_approval(p_tenant text, p_invocation uuid, p_run uuid, p_requested_at timestamp with time zone)
 RETURNS approvals
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_approval approvals;
BEGIN
  INSERT INTO approvals (tenant_id, invocation_id, run_id, status, requested_at)
  VALUES (p_tenant, p_invocation, p_run, 'pending', p_requested_at)
  ON CONFLICT (invocation_id) DO NOTHING
  RETURNING * INTO v_approval;
  IF NOT FOUND THEN
    SELECT * INTO v_approval FROM approvals WHERE invocation_id = p_invocation;
    IF NOT FOUND THEN
      RAISE EXCEPTION USING ERRCODE = 'VBN01', MESSAGE = 'The approval does not exist for this tenant.';
    END IF;
  END IF;
  RETURN v_approval;
END $function$;
