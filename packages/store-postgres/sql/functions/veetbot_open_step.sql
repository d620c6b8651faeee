-- The opening of a step (packages/runtime/src/submit-step.ts, docs/adr/0049), in one statement
-- where it took five tenant transactions: the run read under its row lock, its session, the
-- run's lease taken (the fencing token bumped), the step stored RUNNING — or, for p_batch null
-- (a worker's claimed step), the stored step read and a PENDING one marked RUNNING — and the
-- breaker tallies (ADR 0016): the earlier steps' — unless the caller's copy is still true: it
-- was taken through step p_step - 1 under the lease whose fencing token the run still carries
-- (p_tally_token, p_tally_through), and every write of an invocation row takes the lease — and
-- the later steps' and what its delegated children charge (veetbot_delegated_calls, docs/adr/0050)
-- when the run has a tool budget. Not flushed (docs/adr/0043). Nothing is
-- written unless the kind is opened:
-- {kind: run_not_found | run_not_active | session_not_found | session_closed | busy |
-- waiting_for_user | step_not_found | over_quota | opened, run, session, step, inserted, earlier, evidence, later,
-- delegated}; evidence: the run_breaker_evidence row's document, read with the earlier tally (docs/adr/0078).
-- Last changed by migrations/0030_breaker_evidence.sql.
CREATE OR REPLACE FUNCTION public.veetbot_open_step(p_tenant text, p_run uuid, p_step integer, p_batch jsonb, p_created_at timestamp with time zone, p_owner text, p_expires_at timestamp with time zone, p_now timestamp with time zone, p_tally_token bigint, p_tally_through integer, p_quota integer DEFAULT NULL::integer)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_run runs;
  v_session sessions;
  v_step steps;
  v_inserted boolean := false;
  v_tally_held boolean;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true),
          set_config('synchronous_commit', 'off', true);
  SELECT * INTO v_run FROM runs WHERE id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    RETURN json_build_object('kind', 'run_not_found');
  END IF;
  IF v_run.status NOT IN ('running', 'waiting_for_user') THEN
    RETURN json_build_object('kind', 'run_not_active', 'run', to_jsonb(v_run));
  END IF;
  SELECT * INTO v_session FROM sessions WHERE id = v_run.session_id;
  IF NOT FOUND THEN
    RETURN json_build_object('kind', 'session_not_found', 'run', to_jsonb(v_run));
  END IF;
  IF v_session.status <> 'open' THEN
    RETURN json_build_object('kind', 'session_closed', 'run', to_jsonb(v_run), 'session', to_jsonb(v_session));
  END IF;
  IF v_run.lease_owner IS NOT NULL AND v_run.lease_expires_at IS NOT NULL AND v_run.lease_owner <> p_owner
     AND v_run.lease_expires_at > p_now THEN
    RETURN json_build_object('kind', 'busy');
  END IF;
  SELECT * INTO v_step FROM steps WHERE run_id = p_run AND step_number = p_step;
  IF NOT FOUND THEN
    IF p_batch IS NULL THEN
      RETURN json_build_object('kind', 'step_not_found');
    END IF;
    -- § Control tools: while the run waits for its user, only a resubmitted step is accepted.
    IF v_run.status = 'waiting_for_user' THEN
      RETURN json_build_object('kind', 'waiting_for_user');
    END IF;
  END IF;
  -- docs/adr/0070: a worker's claimed step (p_batch null) of a tenant with a quota opens only
  -- while the tenant has fewer steps in flight (running under a live lease) than its quota.
  -- The claim already leaves such a tenant out; this is the check that holds when claims race:
  -- the tenant's openings take turns on a transaction lock, and each counts after the one
  -- before it committed.
  IF p_batch IS NULL AND p_quota IS NOT NULL AND v_step.status IS DISTINCT FROM 'completed' THEN
    PERFORM pg_advisory_xact_lock(hashtextextended('veetbot.step_quota:' || p_tenant, 0));
    IF (SELECT count(*) FROM steps AS s JOIN runs AS r ON r.id = s.run_id AND r.tenant_id = s.tenant_id
        WHERE s.tenant_id = p_tenant AND s.status = 'running' AND s.run_id <> p_run
          AND r.lease_owner IS NOT NULL AND r.lease_expires_at > p_now) >= p_quota THEN
      RETURN json_build_object('kind', 'over_quota');
    END IF;
  END IF;
  v_tally_held := v_run.fencing_token = p_tally_token AND p_tally_through = p_step - 1;
  UPDATE runs SET lease_owner = p_owner, lease_expires_at = p_expires_at, fencing_token = fencing_token + 1
  WHERE id = p_run RETURNING * INTO v_run;
  IF v_step.id IS NULL THEN
    -- The run's row lock does not keep out the api's insert of a PENDING step under this number.
    INSERT INTO steps (tenant_id, run_id, step_number, batch, status, created_at)
    VALUES (p_tenant, p_run, p_step, p_batch, 'running', p_created_at)
    ON CONFLICT (run_id, step_number) DO NOTHING
    RETURNING * INTO v_step;
    IF FOUND THEN
      v_inserted := true;
    ELSE
      SELECT * INTO v_step FROM steps WHERE run_id = p_run AND step_number = p_step;
    END IF;
  END IF;
  -- Only the worker's own claimed step is marked here: a resubmitted batch is checked first.
  IF p_batch IS NULL AND v_step.status = 'pending' THEN
    UPDATE steps SET status = 'running' WHERE id = v_step.id RETURNING * INTO v_step;
  END IF;
  RETURN json_build_object(
    'kind', 'opened',
    'run', to_jsonb(v_run),
    'session', to_jsonb(v_session),
    'step', to_jsonb(v_step),
    'inserted', v_inserted,
    'earlier', CASE WHEN v_tally_held THEN NULL ELSE veetbot_breaker_tally(p_tenant, p_run, NULL, p_step - 1) END,
    'evidence', CASE WHEN v_tally_held THEN NULL ELSE (SELECT e.evidence FROM run_breaker_evidence AS e WHERE e.tenant_id = p_tenant AND e.run_id = p_run) END,
    'later', CASE WHEN v_run.budgets ? 'maximum_tool_calls' THEN veetbot_breaker_tally(p_tenant, p_run, p_step + 1, NULL) END,
    'delegated', CASE WHEN v_run.budgets ? 'maximum_tool_calls' THEN veetbot_delegated_calls(p_tenant, p_run) END);
END $function$;
