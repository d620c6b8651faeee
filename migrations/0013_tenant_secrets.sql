CREATE TABLE "tenant_secrets" (
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"ciphertext" "bytea" NOT NULL,
	"key_id" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"rotated_at" timestamp with time zone,
	CONSTRAINT "tenant_secrets_pkey" PRIMARY KEY("tenant_id","name"),
	CONSTRAINT "tenant_secrets_name_check" CHECK ("tenant_secrets"."name" ~ '^[A-Za-z][A-Za-z0-9_.-]{0,63}$'),
	CONSTRAINT "tenant_secrets_ciphertext_check" CHECK (octet_length("tenant_secrets"."ciphertext") between 28 and 16412)
);
--> statement-breakpoint
ALTER TABLE "tenant_secrets" ADD CONSTRAINT "tenant_secrets_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Row-level security for tenant_secrets, hand-written like 0001 and 0005: the same
-- tenant_isolation policy for veetbot_app, ENABLE + FORCE. A tenant replaces and deletes its
-- own secrets (PUT / DELETE /v1/secrets/{name}). veetbot_maintenance reads the identity columns
-- only (which rows a key rotation still has to re-encrypt), never the ciphertext.
GRANT SELECT, INSERT, UPDATE, DELETE ON tenant_secrets TO veetbot_app;
--> statement-breakpoint
GRANT SELECT (tenant_id, name, key_id) ON tenant_secrets TO veetbot_maintenance;
--> statement-breakpoint
ALTER TABLE tenant_secrets ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE tenant_secrets FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON tenant_secrets AS PERMISSIVE FOR ALL TO veetbot_app
  USING (tenant_id = current_setting('veetbot.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('veetbot.tenant_id', true));
--> statement-breakpoint
CREATE POLICY maintenance_read ON tenant_secrets AS PERMISSIVE FOR SELECT TO veetbot_maintenance USING (true);
--> statement-breakpoint
-- ADR 0017: a tenant row may reference only secret:NAME. Rows written before this migration
-- may hold env:/file: references or an inline value: the reference is dropped (an inline
-- value must not stay at rest in a tenant-readable row) and the server disabled until the
-- tenant PATCHes a secret: reference. Runs as the migrating role (the owner; superuser or
-- BYPASSRLS, as every migration here); the broker refuses such a row at dial time anyway.
UPDATE mcp_servers SET credential_ref = NULL, enabled = false
  WHERE credential_ref IS NOT NULL AND credential_ref !~ '^secret:[A-Za-z][A-Za-z0-9_.-]{0,63}$';
