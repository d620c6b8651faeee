CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"key_hash" text NOT NULL,
	"prefix" text NOT NULL,
	"principal_id" text NOT NULL,
	"scopes" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "approvals" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"invocation_id" uuid NOT NULL,
	"run_id" uuid NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"requested_at" timestamp with time zone NOT NULL,
	"decided_by" text,
	"decided_at" timestamp with time zone,
	CONSTRAINT "approvals_invocation_id_unique" UNIQUE("invocation_id"),
	CONSTRAINT "approvals_status_check" CHECK ("approvals"."status" IN ('pending', 'approved', 'denied'))
);
--> statement-breakpoint
CREATE TABLE "artifacts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"run_id" uuid NOT NULL,
	"invocation_id" uuid,
	"media_type" text NOT NULL,
	"bytes" bigint NOT NULL,
	"sha256" text NOT NULL,
	"trust" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "event_streams" (
	"tenant_id" text NOT NULL,
	"stream_id" text NOT NULL,
	"last_sequence" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "event_streams_pk" PRIMARY KEY("tenant_id","stream_id")
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"run_id" uuid,
	"sequence" bigint NOT NULL,
	"type" text NOT NULL,
	"payload" jsonb NOT NULL,
	"derivation_key" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "events_tenant_id_derivation_key_unique" UNIQUE("tenant_id","derivation_key"),
	CONSTRAINT "events_stream_sequence_unique" UNIQUE NULLS NOT DISTINCT("tenant_id","run_id","sequence")
);
--> statement-breakpoint
CREATE TABLE "mcp_servers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"server_id" text NOT NULL,
	"transport" text NOT NULL,
	"endpoint" text NOT NULL,
	"auth_scheme" text NOT NULL,
	"auth_name" text,
	"credential_ref" text,
	"token_endpoint" text,
	"token_scopes" jsonb,
	"side_effect" text NOT NULL,
	"risk" text NOT NULL,
	"idempotency" text NOT NULL,
	"required_scopes" jsonb NOT NULL,
	"timeout_seconds" integer NOT NULL,
	"maximum_output_bytes" bigint NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "mcp_servers_tenant_id_server_id_unique" UNIQUE("tenant_id","server_id"),
	CONSTRAINT "mcp_servers_transport_check" CHECK ("mcp_servers"."transport" IN ('stdio', 'http')),
	CONSTRAINT "mcp_servers_auth_scheme_check" CHECK ("mcp_servers"."auth_scheme" IN ('none', 'bearer', 'header', 'oauth2_client', 'env')),
	CONSTRAINT "mcp_servers_side_effect_check" CHECK ("mcp_servers"."side_effect" IN ('none', 'workspace_read', 'workspace_write', 'external_read', 'network_read', 'external_write')),
	CONSTRAINT "mcp_servers_risk_check" CHECK ("mcp_servers"."risk" IN ('low', 'medium', 'high')),
	CONSTRAINT "mcp_servers_idempotency_check" CHECK ("mcp_servers"."idempotency" IN ('read_only', 'idempotent', 'conditionally_idempotent', 'non_idempotent'))
);
--> statement-breakpoint
CREATE TABLE "mcp_tool_catalog" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"server_id" text NOT NULL,
	"catalog_hash" text NOT NULL,
	"remote_name" text NOT NULL,
	"registry_name" text NOT NULL,
	"input_schema" jsonb NOT NULL,
	"discovered_at" timestamp with time zone NOT NULL,
	"withdrawn_at" timestamp with time zone,
	CONSTRAINT "mcp_tool_catalog_generation_unique" UNIQUE("tenant_id","server_id","catalog_hash","remote_name")
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"session_id" uuid NOT NULL,
	"parent_run_id" uuid,
	"status" text DEFAULT 'running' NOT NULL,
	"deadline_at" timestamp with time zone NOT NULL,
	"budgets" jsonb NOT NULL,
	"lease_owner" text,
	"lease_expires_at" timestamp with time zone,
	"fencing_token" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "runs_tenant_id_id_unique" UNIQUE("tenant_id","id"),
	CONSTRAINT "runs_status_check" CHECK ("runs"."status" IN ('running', 'waiting_for_user', 'succeeded', 'failed', 'cancelled'))
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"principal_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"tool_names" jsonb NOT NULL,
	"specs" jsonb NOT NULL,
	"tool_schema_sha256" text NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"closed_at" timestamp with time zone,
	CONSTRAINT "sessions_tenant_id_id_unique" UNIQUE("tenant_id","id"),
	CONSTRAINT "sessions_status_check" CHECK ("sessions"."status" IN ('open', 'closed'))
);
--> statement-breakpoint
CREATE TABLE "skills" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"version" text NOT NULL,
	"description" text NOT NULL,
	"required_tools" jsonb NOT NULL,
	"content" text NOT NULL,
	"trust" text NOT NULL,
	"source" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "skills_tenant_id_name_version_unique" UNIQUE("tenant_id","name","version")
);
--> statement-breakpoint
CREATE TABLE "steps" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"run_id" uuid NOT NULL,
	"step_number" integer NOT NULL,
	"batch" jsonb NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "steps_run_id_step_number_unique" UNIQUE("run_id","step_number"),
	CONSTRAINT "steps_status_check" CHECK ("steps"."status" IN ('pending', 'running', 'completed'))
);
--> statement-breakpoint
CREATE TABLE "tenants" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tool_invocations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"run_id" uuid NOT NULL,
	"session_id" uuid NOT NULL,
	"step_number" integer NOT NULL,
	"call_id" text NOT NULL,
	"tool_name" text NOT NULL,
	"tool_version" text NOT NULL,
	"status" text NOT NULL,
	"idempotency_key" text NOT NULL,
	"arguments_hash" text NOT NULL,
	"arguments" jsonb NOT NULL,
	"result" jsonb,
	"error" jsonb,
	"created_at" timestamp with time zone NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"tool_source" text DEFAULT 'builtin' NOT NULL,
	"server_id" text,
	"idempotency_class" text NOT NULL,
	"effect_sent_at" timestamp with time zone,
	"attempt_number" integer DEFAULT 1 NOT NULL,
	"suspended_kind" text,
	"suspended_ref" text,
	"output_bytes" bigint,
	"truncated" boolean DEFAULT false NOT NULL,
	"artifact_id" uuid,
	"outcome_status" text,
	"reason_code" text,
	"origin_trust" text NOT NULL,
	"parallel_group" uuid,
	CONSTRAINT "tool_invocations_idempotency_key_unique" UNIQUE("idempotency_key"),
	CONSTRAINT "tool_invocations_tenant_id_id_unique" UNIQUE("tenant_id","id"),
	CONSTRAINT "tool_invocations_status_check" CHECK ("tool_invocations"."status" IN ('proposed', 'authorized', 'waiting_for_approval', 'running', 'succeeded', 'failed', 'denied', 'uncertain')),
	CONSTRAINT "tool_invocations_tool_source_check" CHECK ("tool_invocations"."tool_source" IN ('builtin', 'mcp', 'device', 'sandbox')),
	CONSTRAINT "tool_invocations_idempotency_class_check" CHECK ("tool_invocations"."idempotency_class" IN ('read_only', 'idempotent', 'conditionally_idempotent', 'non_idempotent')),
	CONSTRAINT "tool_invocations_suspended_kind_check" CHECK ("tool_invocations"."suspended_kind" IN ('user_input', 'child_run')),
	CONSTRAINT "tool_invocations_outcome_status_check" CHECK ("tool_invocations"."outcome_status" IN ('succeeded', 'failed', 'denied', 'unavailable', 'uncertain')),
	CONSTRAINT "tool_invocations_origin_trust_check" CHECK ("tool_invocations"."origin_trust" IN ('platform', 'trusted_configuration', 'user', 'internal_tool', 'external_untrusted'))
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_invocation_fk" FOREIGN KEY ("tenant_id","invocation_id") REFERENCES "public"."tool_invocations"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "artifacts" ADD CONSTRAINT "artifacts_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "artifacts" ADD CONSTRAINT "artifacts_run_fk" FOREIGN KEY ("tenant_id","run_id") REFERENCES "public"."runs"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "event_streams" ADD CONSTRAINT "event_streams_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mcp_servers" ADD CONSTRAINT "mcp_servers_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mcp_tool_catalog" ADD CONSTRAINT "mcp_tool_catalog_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_session_fk" FOREIGN KEY ("tenant_id","session_id") REFERENCES "public"."sessions"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_parent_run_fk" FOREIGN KEY ("tenant_id","parent_run_id") REFERENCES "public"."runs"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "skills" ADD CONSTRAINT "skills_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "steps" ADD CONSTRAINT "steps_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "steps" ADD CONSTRAINT "steps_run_fk" FOREIGN KEY ("tenant_id","run_id") REFERENCES "public"."runs"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tool_invocations" ADD CONSTRAINT "tool_invocations_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tool_invocations" ADD CONSTRAINT "tool_invocations_run_fk" FOREIGN KEY ("tenant_id","run_id") REFERENCES "public"."runs"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tool_invocations" ADD CONSTRAINT "tool_invocations_session_fk" FOREIGN KEY ("tenant_id","session_id") REFERENCES "public"."sessions"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "approvals_pending_idx" ON "approvals" USING btree ("tenant_id","requested_at") WHERE "approvals"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "artifacts_run_idx" ON "artifacts" USING btree ("run_id");--> statement-breakpoint
CREATE INDEX "events_run_sequence_idx" ON "events" USING btree ("run_id","sequence");--> statement-breakpoint
CREATE INDEX "runs_lease_expires_at_idx" ON "runs" USING btree ("lease_expires_at");--> statement-breakpoint
CREATE INDEX "tool_invocations_run_step_idx" ON "tool_invocations" USING btree ("run_id","step_number");--> statement-breakpoint
CREATE INDEX "tool_invocations_sweep_idx" ON "tool_invocations" USING btree ("run_id") WHERE "tool_invocations"."status" = 'running' AND "tool_invocations"."suspended_kind" IS NULL;--> statement-breakpoint
CREATE INDEX "tool_invocations_uncertain_idx" ON "tool_invocations" USING btree ("run_id","tool_name","arguments_hash") WHERE "tool_invocations"."status" = 'uncertain';