-- The step queue's claim (src/step-queue/claim-pending.ts; migrations/0003 for the role's
-- grants and policies) as one statement: the worker claims on every wake-up, once or twice per
-- step. As veetbot_maintenance, identity columns only; the FOR UPDATE … SKIP LOCKED lock ends
-- with the statement, as it ended with the short transaction before.
-- Last changed by migrations/0010_api_step_functions.sql.
CREATE OR REPLACE FUNCTION public.veetbot_claim_pending(p_limit integer, p_now timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
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
END $function$;
