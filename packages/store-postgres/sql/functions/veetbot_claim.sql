-- Step 9: authorized -> running (attempt 1), or a re-claim of a running, unsuspended row
-- (same key, next attempt), or the resumption of an orchestration suspended on its bridge
-- call's approval (docs/adr/0039), or of an MCP call suspended for a person's consent once the
-- grant is saved (docs/adr/0082): the marker is cleared, the attempt stays. Its commit is
-- deferred (ADR 0015).
-- Last changed by migrations/0032_mcp_pending_consents.sql.
CREATE OR REPLACE FUNCTION public.veetbot_claim(p_tenant text, p_invocation uuid, p_run text, p_token bigint, p_started_at timestamp with time zone, p_stream text, p_events jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_row tool_invocations;
  v_base bigint;
  v_appended bigint;
BEGIN
  -- Step 9's commit is deferred (ADR 0015): the watermark or the result flushes it.
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true),
          set_config('synchronous_commit', 'off', true);
  -- The fence (veetbot_assert_fence's predicate and lock, docs/adr/0074) inside the guarded
  -- UPDATE: the run row is locked FOR SHARE until commit, so a new acquisition waits. When no
  -- row matched, a stale token is refused first (VBF01), then the transition.
  UPDATE tool_invocations
  SET status = 'running',
      attempt_number = CASE WHEN status = 'authorized' OR suspended_kind IN ('approval', 'authorization') THEN attempt_number ELSE attempt_number + 1 END,
      started_at = p_started_at,
      suspended_kind = NULL,
      suspended_ref = NULL
  WHERE id = p_invocation AND run_id = p_run::uuid
    AND (status = 'authorized' OR (status = 'running' AND (suspended_kind IS NULL OR suspended_kind IN ('approval', 'authorization'))))
    AND EXISTS (SELECT 1 FROM runs WHERE id = p_run::uuid AND fencing_token = p_token AND lease_owner IS NOT NULL FOR SHARE)
  RETURNING * INTO v_row;
  IF NOT FOUND THEN
    PERFORM veetbot_assert_fence(p_run, p_token);
    PERFORM veetbot_refuse_write(p_invocation, p_run, 'claim');
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
  RETURN to_jsonb(v_row);
END $function$;
