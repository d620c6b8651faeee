-- docs/adr/0082. The table, its index and the suspended kind from the schema (drizzle-kit generate);
-- row-level security hand-written below, like 0031 (mcp_delegated_grants); veetbot_claim from
-- sql/functions (ADR 0027).
CREATE TABLE "mcp_pending_consents" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"principal_id" text NOT NULL,
	"run_id" uuid NOT NULL,
	"invocation_id" uuid NOT NULL,
	"server_id" text NOT NULL,
	"state_hash" "bytea" NOT NULL,
	"ciphertext" "bytea" NOT NULL,
	"key_id" text NOT NULL,
	"issuer" text NOT NULL,
	"authorization_url" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	CONSTRAINT "mcp_pending_consents_state_hash_unique" UNIQUE("state_hash"),
	CONSTRAINT "mcp_pending_consents_principal_check" CHECK (char_length("mcp_pending_consents"."principal_id") between 1 and 256),
	CONSTRAINT "mcp_pending_consents_server_id_check" CHECK ("mcp_pending_consents"."server_id" ~ '^[a-z][a-z0-9_]{0,31}$'),
	CONSTRAINT "mcp_pending_consents_state_hash_check" CHECK (octet_length("mcp_pending_consents"."state_hash") = 32),
	CONSTRAINT "mcp_pending_consents_issuer_check" CHECK (char_length("mcp_pending_consents"."issuer") between 1 and 2048),
	CONSTRAINT "mcp_pending_consents_authorization_url_check" CHECK (char_length("mcp_pending_consents"."authorization_url") between 1 and 8192 and "mcp_pending_consents"."authorization_url" ~ '^https?://'),
	CONSTRAINT "mcp_pending_consents_ciphertext_check" CHECK (octet_length("mcp_pending_consents"."ciphertext") between 28 and 65564),
	CONSTRAINT "mcp_pending_consents_expiry_check" CHECK ("mcp_pending_consents"."expires_at" > "mcp_pending_consents"."created_at")
);
--> statement-breakpoint
ALTER TABLE "tool_invocations" DROP CONSTRAINT "tool_invocations_suspended_kind_check";--> statement-breakpoint
ALTER TABLE "mcp_pending_consents" ADD CONSTRAINT "mcp_pending_consents_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mcp_pending_consents" ADD CONSTRAINT "mcp_pending_consents_invocation_fk" FOREIGN KEY ("tenant_id","invocation_id") REFERENCES "public"."tool_invocations"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "mcp_pending_consents_open_idx" ON "mcp_pending_consents" USING btree ("tenant_id","run_id") WHERE "mcp_pending_consents"."used_at" IS NULL;--> statement-breakpoint
ALTER TABLE "tool_invocations" ADD CONSTRAINT "tool_invocations_suspended_kind_check" CHECK ("tool_invocations"."suspended_kind" IN ('user_input', 'child_run', 'approval', 'authorization'));
--> statement-breakpoint
-- docs/adr/0082. Row-level security for mcp_pending_consents, like mcp_delegated_grants (0031):
-- the tenant_isolation policy for veetbot_app, ENABLE + FORCE. The api's callback carries no API
-- key, only the state: veetbot_maintenance reads id, tenant_id and state_hash (which tenant a
-- state's hash belongs to), never the sealed flow, the issuer, the link or the principal.
GRANT SELECT, INSERT, UPDATE, DELETE ON mcp_pending_consents TO veetbot_app;
--> statement-breakpoint
GRANT SELECT (id, tenant_id, state_hash) ON mcp_pending_consents TO veetbot_maintenance;
--> statement-breakpoint
ALTER TABLE mcp_pending_consents ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE mcp_pending_consents FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON mcp_pending_consents AS PERMISSIVE FOR ALL TO veetbot_app
  USING (tenant_id = current_setting('veetbot.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('veetbot.tenant_id', true));
--> statement-breakpoint
CREATE POLICY maintenance_read ON mcp_pending_consents AS PERMISSIVE FOR SELECT TO veetbot_maintenance USING (true);

--> statement-breakpoint
-- Step 9: authorized -> running (attempt 1), or a re-claim of a running, unsuspended row
-- (same key, next attempt), or the resumption of an orchestration suspended on its bridge
-- call's approval (docs/adr/0039), or of an MCP call suspended for a person's consent once the
-- grant is saved (docs/adr/0082): the marker is cleared, the attempt stays. Its commit is
-- deferred (ADR 0015).
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
