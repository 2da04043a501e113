CREATE TYPE "public"."run_status" AS ENUM('pending', 'running', 'success', 'error', 'timeout', 'interrupted');--> statement-breakpoint
CREATE TABLE "runs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"thread_id" uuid NOT NULL,
	"assistant_id" text NOT NULL,
	"status" "run_status" DEFAULT 'pending' NOT NULL,
	"multitask_strategy" text DEFAULT 'reject' NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"kwargs" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"error" text,
	"usage" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"lease_expires_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "threads" (
	"id" uuid PRIMARY KEY NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "inbound_dedupe" (
	"channel" text NOT NULL,
	"workspace_id" text NOT NULL,
	"chat_id" text NOT NULL,
	"message_id" text NOT NULL,
	"first_seen" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "inbound_dedupe_channel_workspace_id_chat_id_message_id_pk" PRIMARY KEY("channel","workspace_id","chat_id","message_id")
);
--> statement-breakpoint
CREATE TABLE "thread_mappings" (
	"channel" text NOT NULL,
	"chat_id" text NOT NULL,
	"topic_id" text DEFAULT '' NOT NULL,
	"thread_id" uuid NOT NULL,
	"user_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "thread_mappings_channel_chat_id_topic_id_pk" PRIMARY KEY("channel","chat_id","topic_id")
);
--> statement-breakpoint
CREATE TABLE "checkpoint_blobs" (
	"thread_id" text NOT NULL,
	"checkpoint_ns" text DEFAULT '' NOT NULL,
	"channel" text NOT NULL,
	"version" text NOT NULL,
	"type" text NOT NULL,
	"blob" "bytea",
	CONSTRAINT "checkpoint_blobs_thread_id_checkpoint_ns_channel_version_pk" PRIMARY KEY("thread_id","checkpoint_ns","channel","version")
);
--> statement-breakpoint
CREATE TABLE "checkpoint_writes" (
	"thread_id" text NOT NULL,
	"checkpoint_ns" text DEFAULT '' NOT NULL,
	"checkpoint_id" text NOT NULL,
	"task_id" text NOT NULL,
	"idx" integer NOT NULL,
	"task_path" text DEFAULT '' NOT NULL,
	"channel" text NOT NULL,
	"type" text NOT NULL,
	"value" "bytea" NOT NULL,
	CONSTRAINT "checkpoint_writes_thread_id_checkpoint_ns_checkpoint_id_task_id_idx_pk" PRIMARY KEY("thread_id","checkpoint_ns","checkpoint_id","task_id","idx")
);
--> statement-breakpoint
CREATE TABLE "checkpoints" (
	"thread_id" text NOT NULL,
	"checkpoint_ns" text DEFAULT '' NOT NULL,
	"checkpoint_id" text NOT NULL,
	"parent_checkpoint_id" text,
	"type" text NOT NULL,
	"checkpoint" "bytea" NOT NULL,
	"blob_versions" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	CONSTRAINT "checkpoints_thread_id_checkpoint_ns_checkpoint_id_pk" PRIMARY KEY("thread_id","checkpoint_ns","checkpoint_id")
);
--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_thread_id_threads_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "runs_one_active_per_thread" ON "runs" USING btree ("thread_id") WHERE "runs"."status" in ('pending', 'running');--> statement-breakpoint
CREATE INDEX "runs_thread_created_idx" ON "runs" USING btree ("thread_id","created_at");--> statement-breakpoint
CREATE INDEX "inbound_dedupe_first_seen_idx" ON "inbound_dedupe" USING btree ("first_seen");