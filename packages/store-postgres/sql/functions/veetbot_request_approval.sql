-- Rule 5 of § Deduplication on the way in: one approval per invocation; an existing one is
-- resumed, never duplicated. Called by veetbot_insert_intent (a row stored waiting for
-- approval) and veetbot_wait_for_approval, inside their statement, with the invocation row as
-- it now stands. The approval is bound to the row's arguments hash and the policy version and
-- rule that asked (docs/adr/0047): an existing approval asked under another policy version —
-- pending or already decided — is re-opened pending under this one, because a decision binds to
-- the version it was made under.
-- Last changed by migrations/0020_console_decision_binding.sql.
CREATE OR REPLACE FUNCTION public.veetbot_request_approval(p_tenant text, p_row tool_invocations, p_requested_at timestamp with time zone)
 RETURNS approvals
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_approval approvals;
BEGIN
  INSERT INTO approvals (tenant_id, invocation_id, run_id, status, requested_at, arguments_hash, policy_version, policy_rule_id)
  VALUES (p_tenant, p_row.id, p_row.run_id, 'pending', p_requested_at, p_row.arguments_hash, p_row.policy_version, p_row.policy_rule_id)
  ON CONFLICT (invocation_id) DO NOTHING
  RETURNING * INTO v_approval;
  IF NOT FOUND THEN
    UPDATE approvals
    SET status = 'pending', decided_by = NULL, decided_at = NULL, requested_at = p_requested_at,
        arguments_hash = p_row.arguments_hash, policy_version = p_row.policy_version, policy_rule_id = p_row.policy_rule_id
    WHERE invocation_id = p_row.id AND p_row.policy_version IS NOT NULL
      AND policy_version IS DISTINCT FROM p_row.policy_version
    RETURNING * INTO v_approval;
    IF NOT FOUND THEN
      SELECT * INTO v_approval FROM approvals WHERE invocation_id = p_row.id;
      IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'VBN01', MESSAGE = 'The approval does not exist for this tenant.';
      END IF;
    END IF;
  END IF;
  RETURN v_approval;
END $function$;
