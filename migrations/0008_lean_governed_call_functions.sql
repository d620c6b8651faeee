-- The governed call's four hot functions of 0007, rewritten for fewer row operations per commit
-- (issue 3's performance targets; ADR 0013). Same results and error codes (three take the
-- events' stream as a new argument);
-- packages/store-postgres/test/contract checks them on both drivers. What changed, and why:
--
-- * The invocation row is no longer read and locked (SELECT … FOR UPDATE) before it is written:
--   the transition's precondition is the UPDATE's own WHERE clause. READ COMMITTED re-checks
--   that clause against the latest committed version of a concurrently updated row, so the
--   outcome is the one the lock-then-check gave, without the separate lock record. Only when
--   no row matched does veetbot_refuse_write read the row to say why.
-- * The fence stays a shared lock on the run row, taken with the token in the WHERE clause
--   (a lease taken over concurrently re-checks against the new token and is refused).
-- * veetbot_insert_intent names its columns (a plan cached per connection) instead of building
--   the INSERT with EXECUTE format(...) each call (parsed and planned each call). Columns the
--   caller leaves out take the column defaults through coalesce: id, tool_source,
--   attempt_number and truncated are the only defaults of tool_invocations; the contract suite
--   checks that this list names every column of the drizzle table.
-- * Events: a call's tool events are all on its run's stream, so the hot functions take that
--   stream and append with one UPDATE of its counter and one INSERT … SELECT (no grouping
--   query). A batch with known keys renumbers what it inserted, so a stream stays gapless.

CREATE OR REPLACE FUNCTION veetbot_assert_fence(p_run text, p_token bigint)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
BEGIN
  PERFORM 1 FROM runs WHERE id = p_run::uuid AND fencing_token = p_token AND lease_owner IS NOT NULL FOR SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'VBF01', MESSAGE = 'The run lease fencing token no longer matches.', DETAIL = p_run;
  END IF;
END $$;
--> statement-breakpoint

-- Why a guarded UPDATE matched no row: the row is missing for this tenant (VBN01), belongs to
-- another run (VBF01: a fence is for one run only), or its status refuses p_change (VBT01).
CREATE OR REPLACE FUNCTION veetbot_refuse_write(p_invocation uuid, p_run text, p_change text)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
DECLARE
  v_run uuid;
  v_status text;
  v_suspended text;
BEGIN
  SELECT run_id, status, suspended_kind INTO v_run, v_status, v_suspended FROM tool_invocations WHERE id = p_invocation;
  IF NOT FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'VBN01', MESSAGE = 'The invocation does not exist for this tenant.';
  END IF;
  IF v_run::text <> p_run THEN
    RAISE EXCEPTION USING ERRCODE = 'VBF01', MESSAGE = 'The run lease fencing token no longer matches.', DETAIL = p_run;
  END IF;
  RAISE EXCEPTION USING ERRCODE = 'VBT01',
    MESSAGE = CASE WHEN p_change = 'claim' AND v_status = 'running' AND v_suspended IS NOT NULL THEN 'claim a suspended invocation' ELSE p_change END,
    DETAIL = v_status;
END $$;
--> statement-breakpoint

-- One stream's events (the hot path: a call's tool events are all on its run's stream). The
-- caller guarantees that every event of p_events is on p_stream ('' = the run-less stream) and
-- that their derivation keys are distinct; veetbot_append_events below splits any other batch.
CREATE OR REPLACE FUNCTION veetbot_append_stream_events(p_tenant text, p_stream text, p_events jsonb)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
DECLARE
  v_count integer := jsonb_array_length(p_events);
  v_last bigint;
  v_inserted integer;
  v_event uuid;
  v_next bigint;
BEGIN
  IF v_count = 0 THEN
    RETURN;
  END IF;
  -- Reserves v_count numbers, locking the stream's counter until commit, so concurrent writers
  -- of one stream are ordered and a rolled-back writer gives its numbers back. An UPDATE first:
  -- INSERT … ON CONFLICT DO UPDATE writes a separate row-lock record every time.
  LOOP
    UPDATE event_streams SET last_sequence = last_sequence + v_count
    WHERE tenant_id = p_tenant AND stream_id = p_stream
    RETURNING last_sequence INTO v_last;
    EXIT WHEN FOUND;
    INSERT INTO event_streams (tenant_id, stream_id, last_sequence) VALUES (p_tenant, p_stream, v_count)
    ON CONFLICT (tenant_id, stream_id) DO NOTHING
    RETURNING last_sequence INTO v_last;
    EXIT WHEN FOUND;
    -- A concurrent first event created the counter: update that one.
  END LOOP;
  -- A key already stored is skipped (read after the counter lock: a concurrent writer of the
  -- same stream has committed by now).
  INSERT INTO events (tenant_id, run_id, sequence, type, payload, derivation_key, created_at)
  SELECT p_tenant, nullif(p_stream, '')::uuid, v_last - v_count + t.n, t.e ->> 'type', t.e -> 'payload',
         t.e ->> 'derivation_key', (t.e ->> 'created_at')::timestamptz
  FROM jsonb_array_elements(p_events) WITH ORDINALITY AS t(e, n)
  ON CONFLICT (tenant_id, derivation_key) DO NOTHING;
  GET DIAGNOSTICS v_inserted = ROW_COUNT;
  IF v_inserted < v_count THEN
    -- Known keys left holes in the reserved numbers: close them, lowest first (each target
    -- number is free by then), and give back the unused reservation.
    v_next := v_last - v_count;
    FOR v_event IN
      SELECT id FROM events
      WHERE tenant_id = p_tenant AND run_id IS NOT DISTINCT FROM nullif(p_stream, '')::uuid AND sequence > v_last - v_count
      ORDER BY sequence
    LOOP
      v_next := v_next + 1;
      UPDATE events SET sequence = v_next WHERE id = v_event;
    END LOOP;
    UPDATE event_streams SET last_sequence = v_next WHERE tenant_id = p_tenant AND stream_id = p_stream;
  END IF;
END $$;
--> statement-breakpoint

-- Any batch: per stream in sorted order (two writers lock their counters in one order, so they
-- cannot deadlock), a repeated key kept at its first position.
CREATE OR REPLACE FUNCTION veetbot_append_events(p_tenant text, p_events jsonb)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
DECLARE
  v_stream text;
  v_batch jsonb;
BEGIN
  IF p_events IS NULL OR jsonb_array_length(p_events) = 0 THEN
    RETURN;
  END IF;
  FOR v_stream, v_batch IN
    SELECT d.s, jsonb_agg(d.e ORDER BY d.n)
    FROM (
      SELECT DISTINCT ON (t.e ->> 'derivation_key') coalesce(t.e ->> 'run_id', '') AS s, t.e, t.n
      FROM jsonb_array_elements(p_events) WITH ORDINALITY AS t(e, n)
      ORDER BY t.e ->> 'derivation_key', t.n
    ) AS d
    GROUP BY d.s ORDER BY d.s
  LOOP
    PERFORM veetbot_append_stream_events(p_tenant, v_stream, v_batch);
  END LOOP;
END $$;
--> statement-breakpoint

-- A hot function's events: p_stream when the caller vouches for a one-stream batch with
-- distinct keys (hot-path.ts decides), else NULL and the general path.
CREATE OR REPLACE FUNCTION veetbot_append_call_events(p_tenant text, p_stream text, p_events jsonb)
RETURNS void
LANGUAGE plpgsql SECURITY INVOKER VOLATILE AS $$
BEGIN
  IF p_stream IS NULL THEN
    PERFORM veetbot_append_events(p_tenant, p_events);
  ELSE
    PERFORM veetbot_append_stream_events(p_tenant, p_stream, p_events);
  END IF;
END $$;
--> statement-breakpoint

-- The hot functions take the events' stream (see above): new signatures replace 0007's.
DROP FUNCTION IF EXISTS veetbot_insert_intent(text, jsonb, jsonb);
--> statement-breakpoint
DROP FUNCTION IF EXISTS veetbot_claim(text, uuid, text, bigint, timestamptz, jsonb);
--> statement-breakpoint
DROP FUNCTION IF EXISTS veetbot_complete(text, uuid, text, bigint, jsonb, jsonb);
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

-- Step 9: authorized -> running (attempt 1), or a re-claim of a running, unsuspended row
-- (same key, next attempt).
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
  PERFORM veetbot_append_call_events(p_tenant, p_stream, p_events);
  RETURN to_jsonb(v_row);
END $$;
--> statement-breakpoint

-- § The effect watermark: set once, while running; a second mark returns the first.
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
  END IF;
  RETURN jsonb_build_object('effect_sent_at', v_at);
END $$;
--> statement-breakpoint

-- Step 13: the terminal write. A terminal row is never rewritten (the guard trigger says so too).
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
  PERFORM veetbot_append_call_events(p_tenant, p_stream, p_events);
  RETURN to_jsonb(v_row);
END $$;
--> statement-breakpoint

DROP FUNCTION IF EXISTS veetbot_lock_for_fenced_write(uuid, text, bigint);
--> statement-breakpoint

-- The terminal guard of 0001 (a terminal row is never rewritten, by any writer) as an AFTER
-- trigger with a WHEN clause. A BEFORE row trigger makes every UPDATE lock the old row first
-- (one more row-lock record per write, on every claim, watermark and completion); an AFTER
-- trigger's WHEN is checked when the event is queued, so only an update of a terminal row runs
-- the function, and its error still rolls the statement back.
DROP TRIGGER IF EXISTS tool_invocations_terminal_guard ON tool_invocations;
--> statement-breakpoint
CREATE TRIGGER tool_invocations_terminal_guard AFTER UPDATE ON tool_invocations
  FOR EACH ROW WHEN (OLD.status IN ('succeeded', 'failed', 'denied', 'uncertain'))
  EXECUTE FUNCTION veetbot_tool_invocations_terminal_guard();
