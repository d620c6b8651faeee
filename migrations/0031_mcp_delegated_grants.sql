-- docs/adr/0080. The table from the schema (drizzle-kit generate); row-level security hand-written
-- below, like 0013 (tenant_secrets).
CREATE TABLE "mcp_delegated_grants" (
	"tenant_id" text NOT NULL,
	"principal_id" text NOT NULL,
	"server_id" text NOT NULL,
	"ciphertext" "bytea" NOT NULL,
	"key_id" text NOT NULL,
	"issuer" text NOT NULL,
	"expires_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "mcp_delegated_grants_pkey" PRIMARY KEY("tenant_id","principal_id","server_id"),
	CONSTRAINT "mcp_delegated_grants_principal_check" CHECK (char_length("mcp_delegated_grants"."principal_id") between 1 and 256),
	CONSTRAINT "mcp_delegated_grants_server_id_check" CHECK ("mcp_delegated_grants"."server_id" ~ '^[a-z][a-z0-9_]{0,31}$'),
	CONSTRAINT "mcp_delegated_grants_issuer_check" CHECK (char_length("mcp_delegated_grants"."issuer") between 1 and 2048),
	CONSTRAINT "mcp_delegated_grants_ciphertext_check" CHECK (octet_length("mcp_delegated_grants"."ciphertext") between 28 and 65564)
);
--> statement-breakpoint
ALTER TABLE "mcp_delegated_grants" ADD CONSTRAINT "mcp_delegated_grants_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Row-level security for mcp_delegated_grants, like tenant_secrets (0013): the tenant_isolation
-- policy for veetbot_app, ENABLE + FORCE; the store names the principal in every query, so one
-- person's grant is never another's. veetbot_maintenance reads the identity columns only (which
-- rows a key rotation still has to re-encrypt), never the ciphertext.
GRANT SELECT, INSERT, UPDATE, DELETE ON mcp_delegated_grants TO veetbot_app;
--> statement-breakpoint
GRANT SELECT (tenant_id, principal_id, server_id, key_id) ON mcp_delegated_grants TO veetbot_maintenance;
--> statement-breakpoint
ALTER TABLE mcp_delegated_grants ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE mcp_delegated_grants FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON mcp_delegated_grants AS PERMISSIVE FOR ALL TO veetbot_app
  USING (tenant_id = current_setting('veetbot.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('veetbot.tenant_id', true));
--> statement-breakpoint
CREATE POLICY maintenance_read ON mcp_delegated_grants AS PERMISSIVE FOR SELECT TO veetbot_maintenance USING (true);
