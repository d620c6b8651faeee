-- Why a guarded UPDATE matched no row: the row is missing for this tenant (VBN01), belongs to
-- another run (VBF01: a fence is for one run only), or its status refuses p_change (VBT01;
-- MESSAGE is the attempted change and DETAIL the current status: InvalidTransitionError).
-- Last changed by migrations/0016_one_language_per_transition.sql.
CREATE OR REPLACE FUNCTION public.veetbot_refuse_write(p_invocation uuid, p_run text, p_change text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_run uuid;
  v_status text;
  v_suspended text;
BEGIN
  SELECT run_id, status, suspended_kind INTO v_run, v_status, v_suspended FROM tool_invocations WHERE id = p_invocation;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'VBN01', MESSAGE = 'The invocation does not exist for this tenant.';
  END IF;
  IF v_run::text <> p_run THEN
    RAISE EXCEPTION USING ERRCODE = 'VBF01', MESSAGE = 'The run lease fencing token no longer matches.', DETAIL = p_run;
  END IF;
  RAISE EXCEPTION USING ERRCODE = 'VBT01',
    MESSAGE = CASE
      WHEN p_change = 'claim' AND v_status = 'running' AND v_suspended IS NOT NULL THEN 'claim a suspended invocation'
      WHEN p_change = 'authorize' AND v_status = 'waiting_for_approval' THEN 'authorize without an approved approval'
      ELSE p_change END,
    DETAIL = v_status;
END $function$;
