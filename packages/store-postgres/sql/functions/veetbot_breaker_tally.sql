-- json, not jsonb: the tally is built to be sent, and building jsonb costs several times more
-- (it was most of the statement's time at 2,000 groups). Hash aggregation: the groups need no
-- order, and with a fresh table's statistics the planner would sort them first.
-- Last changed by migrations/0012_breaker_tally_in_the_step_view.sql.
CREATE OR REPLACE FUNCTION public.veetbot_breaker_tally(p_tenant text, p_run uuid, p_from integer, p_to integer)
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
           WHERE i.run_id = p_run AND i.step_number BETWEEN coalesce(p_from, -2147483648) AND coalesce(p_to, 2147483647)
           GROUP BY 1, 2, 3, 4, 5) AS g),
    '[]'::json);
END $function$;
