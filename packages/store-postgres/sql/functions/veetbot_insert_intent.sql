-- Step 8 (§ Deduplication on the way in): the unique key decides. ON CONFLICT DO NOTHING waits
-- for a concurrent insert of the same key, then the existing row is returned. Columns the
-- caller leaves out take the column defaults through coalesce (the contract suite checks the
-- column list against the drizzle table). A proposed or authorized row's commit is deferred
-- (ADR 0015); any other status is flushed. A row stored WAITING_FOR_APPROVAL also writes its
-- approval (veetbot_request_approval).
-- Last changed by migrations/0026_hot_path_lean_statements.sql.
CREATE OR REPLACE FUNCTION public.veetbot_insert_intent(p_tenant text, p_row jsonb, p_stream text, p_events jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_row tool_invocations;
  v_base bigint;
  v_appended bigint;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  INSERT INTO tool_invocations (
    id, tenant_id, run_id, session_id, step_number, call_id, tool_name, tool_version, status, idempotency_key,
    arguments_hash, arguments, result, error, created_at, started_at, finished_at, tool_source, server_id,
    idempotency_class, effect_sent_at, attempt_number, suspended_kind, suspended_ref, output_bytes, truncated,
    artifact_id, outcome_status, reason_code, origin_trust, parallel_group, policy_version, policy_rule_id)
  SELECT
    coalesce(r.id, gen_random_uuid()), r.tenant_id, r.run_id, r.session_id, r.step_number, r.call_id, r.tool_name, r.tool_version, r.status, r.idempotency_key,
    r.arguments_hash, r.arguments, r.result, r.error, r.created_at, r.started_at, r.finished_at, coalesce(r.tool_source, 'builtin'), r.server_id,
    r.idempotency_class, r.effect_sent_at, coalesce(r.attempt_number, 1), r.suspended_kind, r.suspended_ref, r.output_bytes, coalesce(r.truncated, false),
    r.artifact_id, r.outcome_status, r.reason_code, r.origin_trust, r.parallel_group, r.policy_version, r.policy_rule_id
  FROM jsonb_populate_record(NULL::tool_invocations, p_row) AS r
  ON CONFLICT (idempotency_key) DO NOTHING
  RETURNING * INTO v_row;
  IF FOUND THEN
    -- Step 8's commit is deferred (ADR 0015): the watermark or the result flushes it. Only
    -- the statuses a call starts in are deferred; a row stored in any other is flushed.
    IF v_row.status IN ('proposed', 'authorized') THEN
      PERFORM set_config('synchronous_commit', 'off', true);
    ELSIF current_setting('synchronous_commit') = 'off' THEN
      -- veetbot_require_flush's rule, inline.
      PERFORM set_config('synchronous_commit', 'local', true);
    END IF;
    -- A row stored waiting for approval opens its approval in the same commit (rule 5).
    IF v_row.status = 'waiting_for_approval' THEN
      PERFORM veetbot_request_approval(p_tenant, v_row, v_row.created_at);
    END IF;
    -- The call's events (docs/adr/0074): veetbot_append_stream_events's common case in one
    -- statement — the stream's counter bumped (and locked until commit) and the rows numbered
    -- from it; a known key skipped (ON CONFLICT checks the index itself, not this statement's
    -- snapshot). The run's first event (no counter yet) takes that function, a known key's hole
    -- veetbot_close_event_gaps, a batch of several streams (p_stream null) veetbot_append_events.
    IF p_stream IS NULL THEN
      PERFORM veetbot_append_events(p_tenant, p_events);
    ELSIF jsonb_array_length(p_events) > 0 THEN
      WITH c AS (
        UPDATE event_streams SET last_sequence = last_sequence + jsonb_array_length(p_events)
        WHERE tenant_id = p_tenant AND stream_id = p_stream
        RETURNING last_sequence - jsonb_array_length(p_events) AS base
      ), i AS (
        INSERT INTO events (tenant_id, run_id, sequence, type, payload, derivation_key, created_at)
        SELECT p_tenant, nullif(p_stream, '')::uuid, c.base + t.n, t.e ->> 'type', t.e -> 'payload',
               t.e ->> 'derivation_key', (t.e ->> 'created_at')::timestamptz
        FROM c, jsonb_array_elements(p_events) WITH ORDINALITY AS t(e, n)
        ON CONFLICT (tenant_id, derivation_key) DO NOTHING
        RETURNING 1
      )
      SELECT (SELECT base FROM c), (SELECT count(*) FROM i) INTO v_base, v_appended;
      IF v_base IS NULL THEN
        PERFORM veetbot_append_stream_events(p_tenant, p_stream, p_events);
      ELSIF v_appended < jsonb_array_length(p_events) THEN
        PERFORM veetbot_close_event_gaps(p_tenant, p_stream, v_base);
      END IF;
    END IF;
    RETURN jsonb_build_object('inserted', true, 'row', to_jsonb(v_row));
  END IF;
  SELECT * INTO v_row FROM tool_invocations WHERE idempotency_key = p_row ->> 'idempotency_key';
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'VBC01', MESSAGE = 'The idempotency key is not available.';
  END IF;
  RETURN jsonb_build_object('inserted', false, 'row', to_jsonb(v_row));
END $function$;
