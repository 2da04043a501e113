CREATE TABLE "follow_ups" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"thread_id" uuid NOT NULL,
	"message_key" text NOT NULL,
	"message" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"platform" text NOT NULL,
	"delivery_id" text NOT NULL,
	"event" text NOT NULL,
	"status" text NOT NULL,
	"summary" jsonb,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "webhook_deliveries_platform_delivery_id_pk" PRIMARY KEY("platform","delivery_id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "follow_ups_thread_key_idx" ON "follow_ups" USING btree ("thread_id","message_key");--> statement-breakpoint
CREATE INDEX "follow_ups_thread_idx" ON "follow_ups" USING btree ("thread_id","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_received_idx" ON "webhook_deliveries" USING btree ("received_at");