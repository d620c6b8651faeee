-- The circuit breakers' input counted in the database (ADR 0016). Before a step, the runtime
-- replays its run's earlier invocations through the breaker counter (ADR 0010), and the api
-- replays them to answer a step; both read every earlier row, arguments and results included,
-- so a long run's steps slowed with each step (3.4x at 2,000 earlier calls). Now:
--
-- * veetbot_breaker_tally: the run's rows within the step bounds, counted by breaker key and
--   outcome — groups of rows with the same tool name, arguments hash, status, outcome status
--   and reason code. One statement; the text keys are compared byte-wise (COLLATE "C": the
--   database's collation compares text for people, at several times the cost).
-- * veetbot_step_view returns the step's own rows and the tally through the step, not every
--   row through the step. Same arguments; p_through is the step.

-- json, not jsonb: the tally is built to be sent, and building jsonb costs several times more
-- (it was most of the statement's time at 2,000 groups). Hash aggregation: the groups need no
-- order, and with a fresh table's statistics the planner would sort them first.
CREATE FUNCTION veetbot_breaker_tally(p_tenant text, p_run uuid, p_from integer, p_to integer)
RETURNS json
LANGUAGE plpgsql SECURITY INVOKER VOLATILE
SET enable_sort = off
AS $$
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
END $$;
--> statement-breakpoint

-- Now json as well (it embeds the tally); a new return type needs a new function.
DROP FUNCTION IF EXISTS veetbot_step_view(text, uuid, integer);
--> statement-breakpoint
CREATE FUNCTION veetbot_step_view(p_tenant text, p_run uuid, p_through integer)
RETURNS json
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  RETURN json_build_object(
    'run', (SELECT to_jsonb(r) FROM runs AS r WHERE r.id = p_run),
    'rows', coalesce(
      (SELECT jsonb_agg(to_jsonb(i) ORDER BY i.created_at, i.call_id)
       FROM tool_invocations AS i WHERE i.run_id = p_run AND i.step_number = p_through),
      '[]'::jsonb),
    'tally', veetbot_breaker_tally(p_tenant, p_run, NULL, p_through));
END $$;
