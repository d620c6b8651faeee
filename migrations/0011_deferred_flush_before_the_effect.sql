-- The governed call's commits, flushed only where a flush protects something (ADR 0015).
--
-- Steps 8 (intent, PROPOSED or AUTHORIZED) and 9 (claim) commit with synchronous_commit = off:
-- the commit is atomic and visible at once, and reaches the disk with the next flushed commit
-- (the write-ahead log is flushed in order, up to a position). The next commit of the call is
-- flushed: the effect watermark, before any effect (§ The effect watermark), or step 13's
-- result, before any outcome is reported. So nothing leaves the platform — no effect, no
-- outcome — while a deferred commit is unflushed, and a server crash that loses one loses a
-- call that did nothing outside. A worker crash loses nothing: the commit is in the server.
-- veetbot_mark_effect_sent and veetbot_complete are flushed even where the deployment's default
-- is synchronous_commit = off (raised to local for their transaction): the guarantee that no
-- effect is sent twice rests on those two flushes. Bodies otherwise as in migrations/0008.

-- A commit that must reach the disk before the caller goes on: a deployment default of
-- synchronous_commit = off is raised to local for this transaction (any stronger level —
-- on, remote_write, remote_apply — is kept as it is).
CREATE OR REPLACE FUNCTION veetbot_require_flush()
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
BEGIN
  IF current_setting('synchronous_commit') = 'off' THEN
    PERFORM set_config('synchronous_commit', 'local', true);
  END IF;
END $$;
--> statement-breakpoint

-- § The effect watermark: as in migrations/0008, and flushed before the effect may start.
CREATE OR REPLACE FUNCTION veetbot_mark_effect_sent(p_tenant text, p_invocation uuid, p_run text, p_token bigint, p_at timestamptz)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
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
END $$;
--> statement-breakpoint

CREATE OR REPLACE FUNCTION veetbot_insert_intent(p_tenant text, p_row jsonb, p_stream text, p_events jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
DECLARE
  v_row tool_invocations;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  INSERT INTO tool_invocations (
    id, tenant_id, run_id, session_id, step_number, call_id, tool_name, tool_version, status, idempotency_key,
    arguments_hash, arguments, result, error, created_at, started_at, finished_at, tool_source, server_id,
    idempotency_class, effect_sent_at, attempt_number, suspended_kind, suspended_ref, output_bytes, truncated,
    artifact_id, outcome_status, reason_code, origin_trust, parallel_group)
  SELECT
    coalesce(r.id, gen_random_uuid()), r.tenant_id, r.run_id, r.session_id, r.step_number, r.call_id, r.tool_name, r.tool_version, r.status, r.idempotency_key,
    r.arguments_hash, r.arguments, r.result, r.error, r.created_at, r.started_at, r.finished_at, coalesce(r.tool_source, 'builtin'), r.server_id,
    r.idempotency_class, r.effect_sent_at, coalesce(r.attempt_number, 1), r.suspended_kind, r.suspended_ref, r.output_bytes, coalesce(r.truncated, false),
    r.artifact_id, r.outcome_status, r.reason_code, r.origin_trust, r.parallel_group
  FROM jsonb_populate_record(NULL::tool_invocations, p_row) AS r
  ON CONFLICT (idempotency_key) DO NOTHING
  RETURNING * INTO v_row;
  IF FOUND THEN
    -- Step 8's commit is deferred (ADR 0015): the watermark or the result flushes it. Only
    -- the statuses a call starts in are deferred; a row stored in any other is flushed.
    IF v_row.status IN ('proposed', 'authorized') THEN
      PERFORM set_config('synchronous_commit', 'off', true);
    ELSE
      PERFORM veetbot_require_flush();
    END IF;
    PERFORM veetbot_append_call_events(p_tenant, p_stream, p_events);
    RETURN jsonb_build_object('inserted', true, 'row', to_jsonb(v_row));
  END IF;
  SELECT * INTO v_row FROM tool_invocations WHERE idempotency_key = p_row ->> 'idempotency_key';
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'VBC01', MESSAGE = 'The idempotency key is not available.';
  END IF;
  RETURN jsonb_build_object('inserted', false, 'row', to_jsonb(v_row));
END $$;
--> statement-breakpoint

CREATE OR REPLACE FUNCTION veetbot_claim(p_tenant text, p_invocation uuid, p_run text, p_token bigint, p_started_at timestamptz, p_stream text, p_events jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
DECLARE
  v_row tool_invocations;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  PERFORM veetbot_assert_fence(p_run, p_token);
  UPDATE tool_invocations
  SET status = 'running',
      attempt_number = CASE WHEN status = 'authorized' THEN attempt_number ELSE attempt_number + 1 END,
      started_at = p_started_at
  WHERE id = p_invocation AND run_id = p_run::uuid
    AND (status = 'authorized' OR (status = 'running' AND suspended_kind IS NULL))
  RETURNING * INTO v_row;
  IF NOT FOUND THEN
    PERFORM veetbot_refuse_write(p_invocation, p_run, 'claim');
  END IF;
  -- Step 9's commit is deferred (ADR 0015): the watermark or the result flushes it.
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM veetbot_append_call_events(p_tenant, p_stream, p_events);
  RETURN to_jsonb(v_row);
END $$;
--> statement-breakpoint

CREATE OR REPLACE FUNCTION veetbot_complete(p_tenant text, p_invocation uuid, p_run text, p_token bigint, p_terminal jsonb, p_stream text, p_events jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
DECLARE
  v_row tool_invocations;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  PERFORM veetbot_assert_fence(p_run, p_token);
  UPDATE tool_invocations SET
    status = p_terminal ->> 'status',
    outcome_status = p_terminal ->> 'outcome_status',
    reason_code = p_terminal ->> 'reason_code',
    result = nullif(p_terminal -> 'result', 'null'::jsonb),
    error = nullif(p_terminal -> 'error', 'null'::jsonb),
    output_bytes = (p_terminal ->> 'output_bytes')::bigint,
    truncated = (p_terminal ->> 'truncated')::boolean,
    artifact_id = (p_terminal ->> 'artifact_id')::uuid,
    finished_at = (p_terminal ->> 'finished_at')::timestamptz
  WHERE id = p_invocation AND run_id = p_run::uuid AND status IN ('proposed', 'authorized', 'waiting_for_approval', 'running')
  RETURNING * INTO v_row;
  IF NOT FOUND THEN
    PERFORM veetbot_refuse_write(p_invocation, p_run, 'complete');
  END IF;
  -- Flushed: the outcome is reported only after this commit is durable.
  PERFORM veetbot_require_flush();
  PERFORM veetbot_append_call_events(p_tenant, p_stream, p_events);
  RETURN to_jsonb(v_row);
END $$;
