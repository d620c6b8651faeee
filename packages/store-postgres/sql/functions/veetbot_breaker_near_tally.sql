-- The breaker tally that decides whether the next model turn is synthesis-only (§ Answer before
-- the limit): the groups, as veetbot_breaker_tally gives them, of only the keys near a threshold
-- — an identical count of at least p_near_calls (IDENTICAL_CALL_THRESHOLD − 1, passed in), or
-- any denial — through step p_through. synthesisOnly() reads only counts one below a threshold,
-- so these groups decide it exactly as the whole tally would, and the api's step view stops
-- sending the whole run's tally with every step (docs/adr/0049; the runtime's ledger,
-- packages/runtime/src/held-tallies.ts, keeps the same rule).
-- docs/adr/0075: almost every step has no key near a threshold, so one hash aggregation of the
-- run's rows by key says so and returns; only when a key is near are the groups built, by a
-- second aggregation over the first (no join back to the rows: planned without statistics, the
-- join was a nested loop over the run's rows, 3 ms at 200 rows). Hash aggregation throughout
-- (enable_sort off): the groups need no order, and with a fresh table's statistics the planner
-- would sort them first.
-- Last changed by migrations/0027_api_key_cache_and_step_view.sql.
CREATE OR REPLACE FUNCTION public.veetbot_breaker_near_tally(p_tenant text, p_run uuid, p_through integer, p_near_calls integer)
 RETURNS json
 LANGUAGE plpgsql
 SET enable_sort TO 'off'
AS $function$
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  IF NOT EXISTS (SELECT FROM tool_invocations AS i
                 WHERE i.run_id = p_run AND i.step_number <= p_through
                 GROUP BY i.tool_name COLLATE "C", i.arguments_hash COLLATE "C"
                 HAVING count(*) >= p_near_calls OR bool_or(i.outcome_status = 'denied')) THEN
    RETURN '[]'::json;
  END IF;
  RETURN coalesce(
    (SELECT json_agg(m.g)
     FROM (SELECT json_agg(json_build_array(g.tool_name, g.arguments_hash, g.status, g.outcome_status, g.reason_code, g.n)) AS groups
           FROM (SELECT i.tool_name COLLATE "C" AS tool_name, i.arguments_hash COLLATE "C" AS arguments_hash,
                        i.status COLLATE "C" AS status, i.outcome_status COLLATE "C" AS outcome_status,
                        i.reason_code COLLATE "C" AS reason_code, count(*) AS n
                 FROM tool_invocations AS i
                 WHERE i.run_id = p_run AND i.step_number <= p_through
                 GROUP BY 1, 2, 3, 4, 5) AS g
           GROUP BY g.tool_name, g.arguments_hash
           HAVING sum(g.n) >= p_near_calls OR bool_or(g.outcome_status = 'denied')) AS k
     CROSS JOIN LATERAL json_array_elements(k.groups) AS m(g)),
    '[]'::json);
END $function$;
