-- The end of a step (packages/runtime/src/submit-step.ts, docs/adr/0049), in one statement where
-- it took up to five tenant transactions, under the run's lease until its last write: the step's
-- rows read (listForRun's order), the step marked COMPLETED when every call of p_call_ids has a
-- row whose status is in p_terminal (the domain's list, passed in), the run failed when the
-- breakers or the deadline stopped it (p_fail_reason; only a running run), then the lease
-- released if p_fencing_token still holds it, and — for a step a worker took from the queue —
-- the api's wait told (p_notify_channel, p_notify_payload: the step queue's done notification,
-- delivered when this commits). Not flushed unless the run fails (docs/adr/0043). With
-- p_evidence (docs/adr/0078: the run's breaker evidence after this step, when the step changed
-- it), the run's run_breaker_evidence row is written — only when this finish released the lease
-- its token still held, so a fenced-out process never writes it.
-- {rows, complete, failed: the run row when this failed it, else null; released}.
-- Last changed by migrations/0030_breaker_evidence.sql.
CREATE OR REPLACE FUNCTION public.veetbot_finish_step(p_tenant text, p_run uuid, p_step integer, p_fencing_token bigint, p_call_ids text[], p_terminal text[], p_fail_reason text, p_at timestamp with time zone, p_notify_channel text, p_notify_payload text, p_evidence jsonb DEFAULT NULL::jsonb)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_rows json;
  v_complete boolean;
  v_failed runs;
  v_released boolean;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true),
          CASE WHEN p_fail_reason IS NULL THEN set_config('synchronous_commit', 'off', true) END;
  -- The rows and whether the step is complete in one statement (docs/adr/0074).
  SELECT coalesce(json_agg(to_jsonb(i) ORDER BY i.created_at, i.call_id), '[]'::json),
         NOT EXISTS (
           SELECT 1 FROM unnest(p_call_ids) AS c(call_id)
           WHERE NOT EXISTS (
             SELECT 1 FROM tool_invocations AS t
             WHERE t.run_id = p_run AND t.step_number = p_step AND t.call_id = c.call_id AND t.status = ANY (p_terminal)))
  INTO v_rows, v_complete
  FROM tool_invocations AS i WHERE i.run_id = p_run AND i.step_number = p_step;
  IF v_complete THEN
    UPDATE steps SET status = 'completed' WHERE run_id = p_run AND step_number = p_step AND status <> 'completed';
  END IF;
  IF p_fail_reason IS NOT NULL THEN
    UPDATE runs SET status = 'failed', finished_at = p_at, failure_reason = p_fail_reason
    WHERE id = p_run AND status = 'running'
    RETURNING * INTO v_failed;
  END IF;
  UPDATE runs SET lease_owner = NULL, lease_expires_at = NULL
  WHERE id = p_run AND fencing_token = p_fencing_token AND lease_owner IS NOT NULL;
  v_released := FOUND;
  IF v_released AND p_evidence IS NOT NULL THEN
    INSERT INTO run_breaker_evidence (tenant_id, run_id, evidence, updated_at)
    VALUES (p_tenant, p_run, p_evidence, p_at)
    ON CONFLICT (tenant_id, run_id) DO UPDATE SET evidence = EXCLUDED.evidence, updated_at = EXCLUDED.updated_at;
  END IF;
  IF p_notify_channel IS NOT NULL THEN
    PERFORM pg_notify(p_notify_channel, p_notify_payload);
  END IF;
  RETURN json_build_object(
    'rows', v_rows,
    'complete', v_complete,
    'failed', CASE WHEN v_failed.id IS NULL THEN NULL ELSE to_jsonb(v_failed) END,
    'released', v_released);
END $function$;
