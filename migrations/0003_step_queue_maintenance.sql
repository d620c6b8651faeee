-- The step queue's claim (ports/step-queue.ts), hand-written (a drizzle-kit custom migration).
-- A worker finds pending steps across tenants as veetbot_maintenance, like the recovery sweep:
-- identity columns only (never `batch`), then reads the batch under the tenant's own RLS.
--
-- The claim is `SELECT ... FOR UPDATE OF steps SKIP LOCKED`. A row-locking clause needs the
-- UPDATE privilege on at least one column and passes the UPDATE policy's USING expression, so
-- the role gets both; the policy's WITH CHECK (false) refuses every row an UPDATE would write,
-- so the role still cannot change anything (the contract suite proves it).
GRANT SELECT (id, tenant_id, run_id, step_number, status, created_at) ON steps TO veetbot_maintenance;
--> statement-breakpoint
GRANT UPDATE (status) ON steps TO veetbot_maintenance;
--> statement-breakpoint
CREATE POLICY maintenance_read ON steps AS PERMISSIVE FOR SELECT TO veetbot_maintenance USING (true);
--> statement-breakpoint
CREATE POLICY maintenance_lock ON steps AS PERMISSIVE FOR UPDATE TO veetbot_maintenance USING (true) WITH CHECK (false);
--> statement-breakpoint
-- Only running runs are claimable: a pending step of a cancelled run is never retried.
GRANT SELECT (status) ON runs TO veetbot_maintenance;
