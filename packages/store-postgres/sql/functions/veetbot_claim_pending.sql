-- The step queue's claim (src/step-queue/claim-pending.ts; migrations/0003 for the role's
-- grants and policies) as one statement: the worker claims on every wake-up, once or twice per
-- step. As veetbot_maintenance, identity columns only; the FOR UPDATE … SKIP LOCKED lock ends
-- with the statement, as it ended with the short transaction before.
-- Fair across tenants (docs/adr/0070): the tenants with claimable or running steps are found by
-- a skip scan of steps_tenant_queue_idx; each tenant's steps in flight (running under a live
-- lease) are counted; a tenant's n-th claimable step takes turn `in flight + n`, and the claim
-- returns the lowest turns first (the tenant with the fewest steps in flight first, then round
-- robin), oldest first within a turn. A tenant's quota (p_quotas by tenant id, else p_quota;
-- null: none) caps its claimable steps at the room it has left.
-- Last changed by migrations/0028_tenant_fair_claims.sql.
CREATE OR REPLACE FUNCTION public.veetbot_claim_pending(p_limit integer, p_now timestamp with time zone, p_quota integer, p_quotas jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM set_config('role', 'veetbot_maintenance', true);
  RETURN coalesce((
    SELECT jsonb_agg(jsonb_build_object('tenant_id', c.tenant_id, 'run_id', c.run_id, 'step_number', c.step_number) ORDER BY c.turn, c.created_at, c.id)
    FROM (
      WITH RECURSIVE active AS (
        (SELECT s.tenant_id FROM steps AS s WHERE s.status IN ('pending', 'running') ORDER BY s.tenant_id LIMIT 1)
        UNION ALL
        SELECT (SELECT s.tenant_id FROM steps AS s
                WHERE s.status IN ('pending', 'running') AND s.tenant_id > a.tenant_id ORDER BY s.tenant_id LIMIT 1)
        FROM active AS a
        WHERE a.tenant_id IS NOT NULL
      ), tenant_load AS (
        SELECT a.tenant_id,
               (SELECT count(*) FROM steps AS s JOIN runs AS r ON r.id = s.run_id AND r.tenant_id = s.tenant_id
                WHERE s.tenant_id = a.tenant_id AND s.status = 'running'
                  AND r.lease_owner IS NOT NULL AND r.lease_expires_at > p_now)::integer AS in_flight,
               coalesce((p_quotas ->> a.tenant_id)::integer, p_quota) AS quota
        FROM active AS a
        WHERE a.tenant_id IS NOT NULL
      ), ranked AS (
        SELECT l.tenant_id, q.run_id, q.step_number, q.created_at, q.id, l.in_flight + q.nth AS turn
        FROM tenant_load AS l
        CROSS JOIN LATERAL (
          SELECT s.run_id, s.step_number, s.created_at, s.id, row_number() OVER (ORDER BY s.created_at, s.id) AS nth
          FROM steps AS s
          JOIN runs AS r ON r.id = s.run_id AND r.tenant_id = s.tenant_id
          WHERE s.tenant_id = l.tenant_id AND s.status IN ('pending', 'running') AND r.status = 'running'
            AND ((s.status = 'pending' AND (r.lease_owner IS NULL OR r.lease_expires_at IS NULL OR r.lease_expires_at <= p_now))
              -- A worker that died mid-batch leaves its lease set until it expires; its step's
              -- unstarted calls run when the step is resubmitted (every started one dedups).
              OR (s.status = 'running' AND r.lease_owner IS NOT NULL AND r.lease_expires_at <= p_now))
          ORDER BY s.created_at, s.id
          LIMIT CASE WHEN l.quota IS NULL THEN p_limit ELSE greatest(least(p_limit, l.quota - l.in_flight), 0) END
        ) AS q
      )
      SELECT k.tenant_id, k.run_id, k.step_number, k.created_at, k.id, k.turn
      FROM ranked AS k
      JOIN steps AS s ON s.id = k.id
      ORDER BY k.turn, k.created_at, k.id
      LIMIT p_limit
      FOR UPDATE OF s SKIP LOCKED
    ) AS c), '[]'::jsonb);
END $function$;
