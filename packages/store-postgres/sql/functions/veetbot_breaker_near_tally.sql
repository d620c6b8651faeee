-- The breaker tally that decides whether the next model turn is synthesis-only (§ Answer before
-- the limit): the groups, as veetbot_breaker_tally gives them, of only the keys near a threshold
-- — an identical count of at least p_near_calls (IDENTICAL_CALL_THRESHOLD − 1, passed in), or
-- any denial — through step p_through. synthesisOnly() reads only counts one below a threshold,
-- so these groups decide it exactly as the whole tally would, and the api's step view stops
-- sending the whole run's tally with every step (docs/adr/0049; the runtime's ledger,
-- packages/runtime/src/held-tallies.ts, keeps the same rule).
-- Last changed by migrations/0021_step_opening_and_finish.sql.
CREATE OR REPLACE FUNCTION public.veetbot_breaker_near_tally(p_tenant text, p_run uuid, p_through integer, p_near_calls integer)
 RETURNS json
 LANGUAGE plpgsql
 SET enable_sort TO 'off'
AS $function$
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  RETURN coalesce(
    (SELECT json_agg(json_build_array(g.tool_name, g.arguments_hash, g.status, g.outcome_status, g.reason_code, g.n))
     FROM (SELECT i.tool_name COLLATE "C" AS tool_name, i.arguments_hash COLLATE "C" AS arguments_hash,
                  i.status COLLATE "C" AS status, i.outcome_status COLLATE "C" AS outcome_status,
                  i.reason_code COLLATE "C" AS reason_code, count(*) AS n
           FROM tool_invocations AS i
           JOIN (SELECT k.tool_name, k.arguments_hash
                 FROM tool_invocations AS k
                 WHERE k.run_id = p_run AND k.step_number <= p_through
                 GROUP BY 1, 2
                 HAVING count(*) >= p_near_calls OR bool_or(k.outcome_status = 'denied')) AS near
             ON near.tool_name = i.tool_name AND near.arguments_hash = i.arguments_hash
           WHERE i.run_id = p_run AND i.step_number <= p_through
           GROUP BY 1, 2, 3, 4, 5) AS g),
    '[]'::json);
END $function$;
