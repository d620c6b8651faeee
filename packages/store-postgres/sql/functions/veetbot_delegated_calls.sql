-- What a run's delegated children charge to its tool-call budget (docs/adr/0050): the whole
-- delegation tree shares the budget by carving it. A child still running (or waiting for its
-- user), or ended while a step of it still holds its lease (calls in flight may yet write their
-- rows), is charged its whole allowance — runs.budgets.maximum_tool_calls, taken from the
-- parent's remainder when delegate.run created it — so nothing it may still spend is left for
-- another run of the tree; an ended child is charged what its subtree spent: its rows (an
-- orchestration's own row refunded, as the runtime's chargedRows does: docs/adr/0039) and its
-- own children's charge, never more than its allowance. Recursive down the tree, whose depth
-- the runtime bounds (maximumDelegationDepth); read by veetbot_open_step for a budgeted run.
-- Last changed by migrations/0023_delegation_tree_budget.sql.
CREATE OR REPLACE FUNCTION public.veetbot_delegated_calls(p_tenant text, p_run uuid)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  RETURN coalesce(
    (SELECT sum(CASE
              WHEN (c.status IN ('running', 'waiting_for_user') OR c.lease_owner IS NOT NULL)
                   AND c.budgets ? 'maximum_tool_calls'
                THEN (c.budgets ->> 'maximum_tool_calls')::bigint
              ELSE least(
                coalesce((c.budgets ->> 'maximum_tool_calls')::bigint, 9223372036854775807),
                (SELECT count(*) FROM tool_invocations AS i
                 WHERE i.run_id = c.id AND i.tool_name <> 'sandbox.run_orchestration')
                  + veetbot_delegated_calls(p_tenant, c.id))
            END)
     FROM runs AS c
     WHERE c.tenant_id = p_tenant AND c.parent_run_id = p_run),
    0)::bigint;
END $function$;
