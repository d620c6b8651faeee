-- Row-level security for invocation_reviews (the UNCERTAIN review queue's resolutions; apps/api),
-- hand-written like 0001: the same tenant_isolation policy for veetbot_app, ENABLE + FORCE.
-- A resolution is written once and never changed: veetbot_app may SELECT and INSERT only.
GRANT SELECT, INSERT ON invocation_reviews TO veetbot_app;
--> statement-breakpoint
ALTER TABLE invocation_reviews ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE invocation_reviews FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON invocation_reviews AS PERMISSIVE FOR ALL TO veetbot_app
  USING (tenant_id = current_setting('veetbot.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('veetbot.tenant_id', true));
