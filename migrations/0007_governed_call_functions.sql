-- The governed call's four hot writes as functions, hand-written (a drizzle-kit custom migration;
-- never generated). Each is called as ONE autocommitted statement (`SELECT veetbot_claim(...)`),
-- so a commit costs one round trip instead of BEGIN, set_config, fence, lock, write, the event
-- statements and COMMIT (issue 3's performance targets). Semantics are those of
-- packages/store-postgres/src/repositories/invocation-store.ts, which the contract suite checks.
--
-- Row-level security still applies to every statement these functions run: they are SECURITY
-- INVOKER and begin with the same two settings a tenant transaction starts with,
-- `set_config('veetbot.tenant_id', p_tenant, true)` and `set_config('role', 'veetbot_app', true)`
-- (SET LOCAL ROLE; allowed in an invoker function, refused only in SECURITY DEFINER ones). Both end
-- with the statement's transaction, so a pooled connection never carries them on.
--
-- Errors, classified by src/classify-error.ts (never row data in the text):
--   VBF01  the fence is stale (store.fenced); DETAIL is the run id the caller gave
--   VBT01  the status does not allow the change (store.invalid_transition);
--          MESSAGE is the attempted change, DETAIL the current status
--   VBN01  the row does not exist for this tenant (store.not_found)
--   VBC01  the idempotency key is held by a row this tenant cannot see (store.conflict)

-- Fence first (locks the run row FOR SHARE until commit, so a new lease acquisition waits for
-- this write), then lock the invocation row. A fence is for one run only.
CREATE OR REPLACE FUNCTION veetbot_lock_for_fenced_write(p_invocation uuid, p_run text, p_token bigint)
RETURNS tool_invocations
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
DECLARE
  v_token bigint;
  v_owner text;
  v_row tool_invocations;
BEGIN
  SELECT fencing_token, lease_owner INTO v_token, v_owner FROM runs WHERE id = p_run::uuid FOR SHARE;
  IF NOT FOUND OR v_owner IS NULL OR v_token <> p_token THEN
    RAISE EXCEPTION USING ERRCODE = 'VBF01', MESSAGE = 'The run lease fencing token no longer matches.', DETAIL = p_run;
  END IF;
  SELECT * INTO v_row FROM tool_invocations WHERE id = p_invocation FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'VBN01', MESSAGE = 'The invocation does not exist for this tenant.';
  END IF;
  IF v_row.run_id::text <> p_run THEN
    RAISE EXCEPTION USING ERRCODE = 'VBF01', MESSAGE = 'The run lease fencing token no longer matches.', DETAIL = p_run;
  END IF;
  RETURN v_row;
END $$;
--> statement-breakpoint

-- Append events in the caller's transaction (src/repositories/event-writer.ts): per stream, in
-- sorted order, create and lock the counter row; an event whose derivation key is already
-- stored (or earlier in this batch) is skipped; the rest are numbered consecutively.
-- p_events: [{run_id, type, payload, derivation_key, created_at}], payloads already checked.
CREATE OR REPLACE FUNCTION veetbot_append_events(p_tenant text, p_events jsonb)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
DECLARE
  v_stream text;
  v_event jsonb;
  v_sequence bigint;
BEGIN
  IF p_events IS NULL OR jsonb_array_length(p_events) = 0 THEN
    RETURN;
  END IF;
  FOR v_stream IN
    SELECT DISTINCT coalesce(e ->> 'run_id', '') AS s FROM jsonb_array_elements(p_events) AS e ORDER BY s
  LOOP
    INSERT INTO event_streams (tenant_id, stream_id, last_sequence) VALUES (p_tenant, v_stream, 0) ON CONFLICT DO NOTHING;
    PERFORM 1 FROM event_streams WHERE tenant_id = p_tenant AND stream_id = v_stream FOR UPDATE;
  END LOOP;
  FOR v_event IN SELECT e FROM jsonb_array_elements(p_events) WITH ORDINALITY AS t(e, n) ORDER BY n
  LOOP
    v_stream := coalesce(v_event ->> 'run_id', '');
    INSERT INTO events (tenant_id, run_id, sequence, type, payload, derivation_key, created_at)
    SELECT p_tenant, (v_event ->> 'run_id')::uuid, s.last_sequence + 1, v_event ->> 'type', v_event -> 'payload',
           v_event ->> 'derivation_key', (v_event ->> 'created_at')::timestamptz
    FROM event_streams AS s
    WHERE s.tenant_id = p_tenant AND s.stream_id = v_stream
    ON CONFLICT (tenant_id, derivation_key) DO NOTHING
    RETURNING sequence INTO v_sequence;
    IF FOUND THEN
      UPDATE event_streams SET last_sequence = v_sequence WHERE tenant_id = p_tenant AND stream_id = v_stream;
    END IF;
  END LOOP;
END $$;
--> statement-breakpoint

-- § Deduplication on the way in. p_row: the new row's columns by column name, only those the
-- caller gave (the others take their column defaults, as drizzle's insert does). Returns
-- {"inserted": true, "row": ...} or {"inserted": false, "row": <the holder>}; a holder's
-- events are not written.
CREATE OR REPLACE FUNCTION veetbot_insert_intent(p_tenant text, p_row jsonb, p_events jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
DECLARE
  v_columns text;
  v_row tool_invocations;
  v_count bigint;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  SELECT string_agg(quote_ident(k), ', ') INTO v_columns FROM jsonb_object_keys(p_row) AS k;
  EXECUTE format(
    'INSERT INTO tool_invocations (%1$s) SELECT %1$s FROM jsonb_populate_record(NULL::tool_invocations, $1) '
    'ON CONFLICT (idempotency_key) DO NOTHING RETURNING *', v_columns)
  INTO v_row USING p_row;
  GET DIAGNOSTICS v_count = ROW_COUNT;
  IF v_count = 1 THEN
    PERFORM veetbot_append_events(p_tenant, p_events);
    RETURN jsonb_build_object('inserted', true, 'row', to_jsonb(v_row));
  END IF;
  SELECT * INTO v_row FROM tool_invocations WHERE idempotency_key = p_row ->> 'idempotency_key';
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'VBC01', MESSAGE = 'The idempotency key is not available.';
  END IF;
  RETURN jsonb_build_object('inserted', false, 'row', to_jsonb(v_row));
END $$;
--> statement-breakpoint

-- Step 10: authorized -> running (attempt 1), or a re-claim of a running, unsuspended row
-- (same key, next attempt).
CREATE OR REPLACE FUNCTION veetbot_claim(p_tenant text, p_invocation uuid, p_run text, p_token bigint, p_started_at timestamptz, p_events jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
DECLARE
  v_current tool_invocations;
  v_attempt integer;
  v_row tool_invocations;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  v_current := veetbot_lock_for_fenced_write(p_invocation, p_run, p_token);
  IF v_current.status = 'authorized' THEN
    v_attempt := v_current.attempt_number;
  ELSIF v_current.status = 'running' AND v_current.suspended_kind IS NULL THEN
    v_attempt := v_current.attempt_number + 1;
  ELSE
    RAISE EXCEPTION USING ERRCODE = 'VBT01',
      MESSAGE = CASE WHEN v_current.status = 'running' THEN 'claim a suspended invocation' ELSE 'claim' END,
      DETAIL = v_current.status;
  END IF;
  UPDATE tool_invocations SET status = 'running', attempt_number = v_attempt, started_at = p_started_at
  WHERE id = p_invocation RETURNING * INTO v_row;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'VBN01', MESSAGE = 'The invocation does not exist for this tenant.';
  END IF;
  PERFORM veetbot_append_events(p_tenant, p_events);
  RETURN to_jsonb(v_row);
END $$;
--> statement-breakpoint

-- § The effect watermark: set once, while running; a second mark returns the first.
-- Returns {"effect_sent_at": ...}.
CREATE OR REPLACE FUNCTION veetbot_mark_effect_sent(p_tenant text, p_invocation uuid, p_run text, p_token bigint, p_at timestamptz)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
DECLARE
  v_current tool_invocations;
  v_at timestamptz;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  v_current := veetbot_lock_for_fenced_write(p_invocation, p_run, p_token);
  IF v_current.effect_sent_at IS NOT NULL THEN
    RETURN jsonb_build_object('effect_sent_at', v_current.effect_sent_at);
  END IF;
  IF v_current.status <> 'running' THEN
    RAISE EXCEPTION USING ERRCODE = 'VBT01', MESSAGE = 'mark the effect sent', DETAIL = v_current.status;
  END IF;
  UPDATE tool_invocations SET effect_sent_at = p_at WHERE id = p_invocation RETURNING effect_sent_at INTO v_at;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'VBN01', MESSAGE = 'The invocation does not exist for this tenant.';
  END IF;
  RETURN jsonb_build_object('effect_sent_at', coalesce(v_at, p_at));
END $$;
--> statement-breakpoint

-- Step 13: the terminal write. A terminal row is never rewritten (the guard trigger says so
-- too). p_terminal: {status, outcome_status, reason_code, result, error, output_bytes,
-- truncated, artifact_id, finished_at}; a JSON null result or error is stored as SQL NULL.
CREATE OR REPLACE FUNCTION veetbot_complete(p_tenant text, p_invocation uuid, p_run text, p_token bigint, p_terminal jsonb, p_events jsonb)
RETURNS jsonb
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
DECLARE
  v_current tool_invocations;
  v_row tool_invocations;
BEGIN
  PERFORM set_config('veetbot.tenant_id', p_tenant, true), set_config('role', 'veetbot_app', true);
  v_current := veetbot_lock_for_fenced_write(p_invocation, p_run, p_token);
  IF v_current.status NOT IN ('proposed', 'authorized', 'waiting_for_approval', 'running') THEN
    RAISE EXCEPTION USING ERRCODE = 'VBT01', MESSAGE = 'complete', DETAIL = v_current.status;
  END IF;
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
  WHERE id = p_invocation RETURNING * INTO v_row;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'VBN01', MESSAGE = 'The invocation does not exist for this tenant.';
  END IF;
  PERFORM veetbot_append_events(p_tenant, p_events);
  RETURN to_jsonb(v_row);
END $$;
