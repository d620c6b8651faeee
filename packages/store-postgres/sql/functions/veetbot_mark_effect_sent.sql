-- § The effect watermark: as in migrations/0008, and flushed before the effect may start.
-- Last changed by migrations/0026_hot_path_lean_statements.sql.
CREATE OR REPLACE FUNCTION public.veetbot_mark_effect_sent(p_tenant text, p_invocation uuid, p_run text, p_token bigint, p_at timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_at timestamptz;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  -- The fence (veetbot_assert_fence's predicate and lock, docs/adr/0074) inside the guarded
  -- UPDATE: the run row is locked FOR SHARE until commit, so a new acquisition waits. When no
  -- row matched, a stale token is refused first (VBF01), then a second mark returns the first.
  UPDATE tool_invocations SET effect_sent_at = p_at
  WHERE id = p_invocation AND run_id = p_run::uuid AND status = 'running' AND effect_sent_at IS NULL
    AND EXISTS (SELECT 1 FROM runs WHERE id = p_run::uuid AND fencing_token = p_token AND lease_owner IS NOT NULL FOR SHARE)
  RETURNING effect_sent_at INTO v_at;
  IF NOT FOUND THEN
    PERFORM veetbot_assert_fence(p_run, p_token);
    SELECT effect_sent_at INTO v_at FROM tool_invocations WHERE id = p_invocation AND run_id = p_run::uuid;
    IF v_at IS NULL THEN
      PERFORM veetbot_refuse_write(p_invocation, p_run, 'mark the effect sent');
    END IF;
  ELSE
    -- Flushed, and with it every deferred commit before it (this call's intent and claim):
    -- veetbot_require_flush's rule, inline.
    IF current_setting('synchronous_commit') = 'off' THEN
      PERFORM set_config('synchronous_commit', 'local', true);
    END IF;
  END IF;
  RETURN jsonb_build_object('effect_sent_at', v_at);
END $function$;
