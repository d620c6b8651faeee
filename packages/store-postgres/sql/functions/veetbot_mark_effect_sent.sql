-- § The effect watermark: as in migrations/0008, and flushed before the effect may start.
-- Last changed by migrations/0011_deferred_flush_before_the_effect.sql.
CREATE OR REPLACE FUNCTION public.veetbot_mark_effect_sent(p_tenant text, p_invocation uuid, p_run text, p_token bigint, p_at timestamp with time zone)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_at timestamptz;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  PERFORM veetbot_assert_fence(p_run, p_token);
  UPDATE tool_invocations SET effect_sent_at = p_at
  WHERE id = p_invocation AND run_id = p_run::uuid AND status = 'running' AND effect_sent_at IS NULL
  RETURNING effect_sent_at INTO v_at;
  IF NOT FOUND THEN
    SELECT effect_sent_at INTO v_at FROM tool_invocations WHERE id = p_invocation AND run_id = p_run::uuid;
    IF v_at IS NULL THEN
      PERFORM veetbot_refuse_write(p_invocation, p_run, 'mark the effect sent');
    END IF;
  ELSE
    -- Flushed, and with it every deferred commit before it (this call's intent and claim).
    PERFORM veetbot_require_flush();
  END IF;
  RETURN jsonb_build_object('effect_sent_at', v_at);
END $function$;
