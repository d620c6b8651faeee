-- Row-level security, hand-written (a drizzle-kit custom migration; never generated).
-- Model (packages/store-postgres/README.md):
--   * veetbot_app: NOLOGIN, NOBYPASSRLS. Every tenant transaction runs
--     `set_config('role', 'veetbot_app', true)` and `set_config('veetbot.tenant_id', $1, true)`
--     first, so these policies apply even when the connecting user is a superuser.
--   * veetbot_maintenance: NOLOGIN, NOBYPASSRLS, read-only across tenants on identity columns
--     only (the recovery sweep and API-key lookup); it cannot read arguments or results.
--   * A transaction that never set veetbot.tenant_id reads NULL (or '') and matches nothing.

DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'veetbot_app') THEN
    CREATE ROLE veetbot_app NOLOGIN NOBYPASSRLS;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'veetbot_maintenance') THEN
    CREATE ROLE veetbot_maintenance NOLOGIN NOBYPASSRLS;
  END IF;
  -- Roles are cluster-wide: refuse one that someone else created with more power.
  IF EXISTS (
    SELECT 1 FROM pg_roles
    WHERE rolname IN ('veetbot_app', 'veetbot_maintenance') AND (rolsuper OR rolbypassrls OR rolcanlogin)
  ) THEN
    RAISE EXCEPTION 'veetbot_app / veetbot_maintenance must be NOLOGIN, NOSUPERUSER, NOBYPASSRLS';
  END IF;
  -- The connecting user must be able to switch to them (a superuser always can).
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    EXECUTE format('GRANT veetbot_app, veetbot_maintenance TO %I', current_user);
  END IF;
END $$;
--> statement-breakpoint
GRANT USAGE ON SCHEMA public TO veetbot_app, veetbot_maintenance;
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE ON api_keys, sessions, runs, steps, tool_invocations, approvals, events, event_streams, artifacts, mcp_servers, mcp_tool_catalog TO veetbot_app;
--> statement-breakpoint
-- skill.manage deletes skills; nothing else is ever deleted by the application.
GRANT SELECT, INSERT, UPDATE, DELETE ON skills TO veetbot_app;
--> statement-breakpoint
-- A tenant reads its own tenants row; tenants are created by the platform (the owner).
GRANT SELECT ON tenants TO veetbot_app;
--> statement-breakpoint
GRANT SELECT (id, tenant_id, run_id, status, suspended_kind, started_at) ON tool_invocations TO veetbot_maintenance;
--> statement-breakpoint
GRANT SELECT (id, tenant_id, lease_owner, lease_expires_at) ON runs TO veetbot_maintenance;
--> statement-breakpoint
GRANT SELECT (id, tenant_id, key_hash, prefix, principal_id, scopes, created_at, revoked_at) ON api_keys TO veetbot_maintenance;
--> statement-breakpoint
DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY[
    'api_keys', 'sessions', 'runs', 'steps', 'tool_invocations', 'approvals', 'events',
    'event_streams', 'artifacts', 'mcp_servers', 'mcp_tool_catalog', 'skills'
  ] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    -- FORCE: the table owner is subject to the policies too (it has none, so it reads nothing
    -- unless it switches role); only a superuser bypasses.
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format(
      'CREATE POLICY tenant_isolation ON %I AS PERMISSIVE FOR ALL TO veetbot_app '
      'USING (tenant_id = current_setting(''veetbot.tenant_id'', true)) '
      'WITH CHECK (tenant_id = current_setting(''veetbot.tenant_id'', true))',
      t
    );
  END LOOP;
END $$;
--> statement-breakpoint
CREATE POLICY maintenance_read ON tool_invocations AS PERMISSIVE FOR SELECT TO veetbot_maintenance USING (true);
--> statement-breakpoint
CREATE POLICY maintenance_read ON runs AS PERMISSIVE FOR SELECT TO veetbot_maintenance USING (true);
--> statement-breakpoint
CREATE POLICY maintenance_read ON api_keys AS PERMISSIVE FOR SELECT TO veetbot_maintenance USING (true);
--> statement-breakpoint
-- tenants: ENABLE without FORCE. The owner (the platform's connecting role) administers the
-- table; veetbot_app sees its own row and nothing else; any other role sees nothing.
ALTER TABLE tenants ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_self ON tenants AS PERMISSIVE FOR SELECT TO veetbot_app USING (id = current_setting('veetbot.tenant_id', true));
--> statement-breakpoint
-- § Deduplication on the way in / step 13: a terminal row is never rewritten. The repositories
-- never try; this makes it true for any writer.
CREATE OR REPLACE FUNCTION veetbot_tool_invocations_terminal_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.status IN ('succeeded', 'failed', 'denied', 'uncertain') THEN
    RAISE EXCEPTION 'tool_invocations % is terminal (%) and is never rewritten', OLD.id, OLD.status
      USING ERRCODE = '55000';
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER tool_invocations_terminal_guard BEFORE UPDATE ON tool_invocations
  FOR EACH ROW EXECUTE FUNCTION veetbot_tool_invocations_terminal_guard();
--> statement-breakpoint
-- § Schema additions: the catalog is a history, not a cache. The only update is stamping
-- withdrawn_at once.
CREATE OR REPLACE FUNCTION veetbot_mcp_tool_catalog_history_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.withdrawn_at IS NOT NULL
     OR (to_jsonb(NEW) - 'withdrawn_at') IS DISTINCT FROM (to_jsonb(OLD) - 'withdrawn_at') THEN
    RAISE EXCEPTION 'mcp_tool_catalog % is history: only withdrawn_at may be set, once', OLD.id
      USING ERRCODE = '55000';
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER mcp_tool_catalog_history_guard BEFORE UPDATE ON mcp_tool_catalog
  FOR EACH ROW EXECUTE FUNCTION veetbot_mcp_tool_catalog_history_guard();
