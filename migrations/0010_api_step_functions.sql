-- The api's statements for every submitted step, one each (ADR 0014): the
-- api's own round trips are what its throughput loses against the in-process pipeline
-- (issue 5). All are SECURITY INVOKER and set their role (and tenant) for the statement
-- only, as the hot-path functions of 0007/0008 do, so row-level security decides what they see.

-- A step's outcome as the api reads it (apps/api/src/step-outcome.ts): the run, and the run's
-- invocations up to and including the step (the breaker replays the earlier ones), in
-- listForRun's order.
CREATE OR REPLACE FUNCTION veetbot_step_view(p_tenant text, p_run uuid, p_through integer)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  RETURN jsonb_build_object(
    'run', (SELECT to_jsonb(r) FROM runs AS r WHERE r.id = p_run),
    'rows', coalesce(
      (SELECT jsonb_agg(to_jsonb(i) ORDER BY i.step_number, i.created_at, i.call_id)
       FROM tool_invocations AS i WHERE i.run_id = p_run AND i.step_number <= p_through),
      '[]'::jsonb));
END $$;
--> statement-breakpoint

-- Tenant authentication's lookup by key hash, before any tenant is known: as
-- veetbot_maintenance, which may read api_keys across tenants (0001).
CREATE OR REPLACE FUNCTION veetbot_find_api_key(p_hash text)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
BEGIN
  PERFORM set_config('role', 'veetbot_maintenance', true);
  RETURN (SELECT to_jsonb(k) FROM api_keys AS k WHERE k.key_hash = p_hash);
END $$;
--> statement-breakpoint

-- Storing a submitted step (apps/api/src/routes/steps.ts): the run, whether its session is
-- open, and the step — inserted `pending` when the run is running in an open session, else the
-- step already held under that number (a resubmission is answered whatever became of the run).
-- The api decides the answer (404, 409, the resubmission's batch check) from what this returns:
-- {run, session_status, step, inserted}; run is null when this tenant has no such run.
CREATE OR REPLACE FUNCTION veetbot_submit_step(p_tenant text, p_run uuid, p_step integer, p_batch jsonb, p_created_at timestamptz)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
DECLARE
  v_run runs;
  v_session_status text;
  v_step steps;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  SELECT * INTO v_run FROM runs WHERE id = p_run;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('run', NULL);
  END IF;
  IF v_run.status = 'running' THEN
    SELECT status INTO v_session_status FROM sessions WHERE id = v_run.session_id;
    IF v_session_status = 'open' THEN
      INSERT INTO steps (tenant_id, run_id, step_number, batch, created_at)
      VALUES (p_tenant, p_run, p_step, p_batch, p_created_at)
      ON CONFLICT (run_id, step_number) DO NOTHING
      RETURNING * INTO v_step;
      IF FOUND THEN
        RETURN jsonb_build_object('run', to_jsonb(v_run), 'session_status', v_session_status, 'step', to_jsonb(v_step), 'inserted', true);
      END IF;
    END IF;
  END IF;
  SELECT * INTO v_step FROM steps WHERE run_id = p_run AND step_number = p_step;
  RETURN jsonb_build_object(
    'run', to_jsonb(v_run),
    'session_status', v_session_status,
    'step', CASE WHEN v_step.id IS NULL THEN NULL ELSE to_jsonb(v_step) END,
    'inserted', false);
END $$;
--> statement-breakpoint

-- The step queue's claim (src/step-queue/claim-pending.ts; migrations/0003 for the role's
-- grants and policies) as one statement: the worker claims on every wake-up, once or twice per
-- step. As veetbot_maintenance, identity columns only; the FOR UPDATE … SKIP LOCKED lock ends
-- with the statement, as it ended with the short transaction before.
CREATE OR REPLACE FUNCTION veetbot_claim_pending(p_limit integer, p_now timestamptz)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
BEGIN
  PERFORM set_config('role', 'veetbot_maintenance', true);
  RETURN coalesce((
    SELECT jsonb_agg(jsonb_build_object('tenant_id', c.tenant_id, 'run_id', c.run_id, 'step_number', c.step_number) ORDER BY c.created_at, c.id)
    FROM (
      SELECT s.tenant_id, s.run_id, s.step_number, s.created_at, s.id
      FROM steps AS s
      JOIN runs AS r ON r.id = s.run_id AND r.tenant_id = s.tenant_id
      WHERE r.status = 'running'
        AND ((s.status = 'pending' AND (r.lease_owner IS NULL OR r.lease_expires_at IS NULL OR r.lease_expires_at <= p_now))
          -- A worker that died mid-batch leaves its lease set until it expires; its step's
          -- unstarted calls run when the step is resubmitted (every started one dedups).
          OR (s.status = 'running' AND r.lease_owner IS NOT NULL AND r.lease_expires_at <= p_now))
      ORDER BY s.created_at, s.id
      LIMIT p_limit
      FOR UPDATE OF s SKIP LOCKED
    ) AS c), '[]'::jsonb);
END $$;
--> statement-breakpoint

-- What a worker reads before it runs a step it claimed (the step queue's claim sees identity
-- columns only): the step, its run and the run's session, under the tenant's RLS, in one
-- statement. {step, run, session}; step is null when this tenant has no such step.
CREATE OR REPLACE FUNCTION veetbot_step_context(p_tenant text, p_run uuid, p_step integer)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
DECLARE
  v_step steps;
  v_run runs;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  SELECT * INTO v_step FROM steps WHERE run_id = p_run AND step_number = p_step;
  IF NOT FOUND THEN
    RETURN jsonb_build_object('step', NULL);
  END IF;
  SELECT * INTO v_run FROM runs WHERE id = p_run;
  RETURN jsonb_build_object(
    'step', to_jsonb(v_step),
    'run', CASE WHEN v_run.id IS NULL THEN NULL ELSE to_jsonb(v_run) END,
    'session', (SELECT to_jsonb(s) FROM sessions AS s WHERE s.id = v_run.session_id));
END $$;
