-- docs/adr/0024: the MCP idle sweep of every api and worker process reads, in one statement,
-- what became of the sessions it holds transports for (§ MCP: "The same sweep observes durable
-- session closure or deletion by another process"). It reads across tenants as
-- veetbot_maintenance, like the recovery sweep and the step queue: identity and status columns
-- only (never a pin, a principal or an argument), and nothing it may write.
CREATE INDEX "runs_tenant_id_session_id_idx" ON "runs" USING btree ("tenant_id","session_id");
--> statement-breakpoint
GRANT SELECT (id, tenant_id, status) ON sessions TO veetbot_maintenance;
--> statement-breakpoint
CREATE POLICY maintenance_read ON sessions AS PERMISSIVE FOR SELECT TO veetbot_maintenance USING (true);
--> statement-breakpoint
GRANT SELECT (session_id) ON runs TO veetbot_maintenance;
