CREATE TABLE "invocation_reconciliations" (
	"tenant_id" text NOT NULL,
	"invocation_id" uuid NOT NULL,
	"reconciler" text NOT NULL,
	"attempts" integer NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"last_outcome" text NOT NULL,
	"last_evidence" text NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "invocation_reconciliations_pkey" PRIMARY KEY("tenant_id","invocation_id"),
	CONSTRAINT "invocation_reconciliations_last_outcome_check" CHECK ("invocation_reconciliations"."last_outcome" IN ('applied', 'not_applied', 'unknown', 'error')),
	CONSTRAINT "invocation_reconciliations_attempts_check" CHECK ("invocation_reconciliations"."attempts" >= 1)
);
--> statement-breakpoint
ALTER TABLE "invocation_reconciliations" ADD CONSTRAINT "invocation_reconciliations_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invocation_reconciliations" ADD CONSTRAINT "invocation_reconciliations_invocation_fk" FOREIGN KEY ("tenant_id","invocation_id") REFERENCES "public"."tool_invocations"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Row-level security for invocation_reconciliations (docs/adr/0063), hand-written like 0005: the
-- tenant_isolation policy for veetbot_app, ENABLE + FORCE. The sweep upserts the attempt state.
GRANT SELECT, INSERT, UPDATE ON invocation_reconciliations TO veetbot_app;
--> statement-breakpoint
ALTER TABLE invocation_reconciliations ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE invocation_reconciliations FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON invocation_reconciliations AS PERMISSIVE FOR ALL TO veetbot_app
  USING (tenant_id = current_setting('veetbot.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('veetbot.tenant_id', true));
--> statement-breakpoint
-- The sweep finds due UNCERTAIN rows across tenants as veetbot_maintenance (like 0001's expired
-- RUNNING rows): identity and classification columns only, never arguments or results.
GRANT SELECT (tool_name, effect_sent_at, finished_at) ON tool_invocations TO veetbot_maintenance;
--> statement-breakpoint
GRANT SELECT (tenant_id, invocation_id) ON invocation_reviews TO veetbot_maintenance;
--> statement-breakpoint
CREATE POLICY maintenance_read ON invocation_reviews AS PERMISSIVE FOR SELECT TO veetbot_maintenance USING (true);
--> statement-breakpoint
GRANT SELECT (tenant_id, invocation_id, next_attempt_at) ON invocation_reconciliations TO veetbot_maintenance;
--> statement-breakpoint
CREATE POLICY maintenance_read ON invocation_reconciliations AS PERMISSIVE FOR SELECT TO veetbot_maintenance USING (true);
