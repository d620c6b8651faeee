CREATE TABLE "invocation_reviews" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"invocation_id" uuid NOT NULL,
	"run_id" uuid NOT NULL,
	"resolution" text NOT NULL,
	"note" text NOT NULL,
	"reviewed_by" text NOT NULL,
	"reviewed_at" timestamp with time zone NOT NULL,
	CONSTRAINT "invocation_reviews_invocation_id_unique" UNIQUE("invocation_id"),
	CONSTRAINT "invocation_reviews_resolution_check" CHECK ("invocation_reviews"."resolution" IN ('succeeded', 'failed'))
);
--> statement-breakpoint
ALTER TABLE "invocation_reviews" ADD CONSTRAINT "invocation_reviews_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invocation_reviews" ADD CONSTRAINT "invocation_reviews_invocation_fk" FOREIGN KEY ("tenant_id","invocation_id") REFERENCES "public"."tool_invocations"("tenant_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "tool_invocations_tenant_created_idx" ON "tool_invocations" USING btree ("tenant_id","created_at","id");