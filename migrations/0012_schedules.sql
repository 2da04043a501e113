CREATE TABLE "schedules" (
	"id" text PRIMARY KEY NOT NULL,
	"owner_user_id" text NOT NULL,
	"channel" text NOT NULL,
	"chat_id" text NOT NULL,
	"topic_id" text DEFAULT '' NOT NULL,
	"origin" jsonb NOT NULL,
	"thread_id" uuid NOT NULL,
	"task" text NOT NULL,
	"spec" jsonb NOT NULL,
	"missed" text DEFAULT 'run_once' NOT NULL,
	"state" text DEFAULT 'active' NOT NULL,
	"next_run_at" timestamp with time zone,
	"last_run_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "schedules_due_idx" ON "schedules" USING btree ("next_run_at") WHERE "schedules"."state" = 'active';--> statement-breakpoint
CREATE INDEX "schedules_owner_idx" ON "schedules" USING btree ("owner_user_id","created_at");