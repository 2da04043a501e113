CREATE TABLE "goal_evaluations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"thread_id" uuid NOT NULL,
	"run_id" uuid,
	"objective" text NOT NULL,
	"verdict" text NOT NULL,
	"reason" text NOT NULL,
	"evidence" text NOT NULL,
	"action" text NOT NULL,
	"stand_down_reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "thread_goals" (
	"thread_id" uuid PRIMARY KEY NOT NULL,
	"objective" text NOT NULL,
	"max_continuations" integer DEFAULT 8 NOT NULL,
	"last_evaluation" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "memory_facts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"content" text NOT NULL,
	"category" text NOT NULL,
	"confidence" real NOT NULL,
	"source" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "memory_profiles" (
	"user_id" text PRIMARY KEY NOT NULL,
	"summaries" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "skill_states" (
	"name" text PRIMARY KEY NOT NULL,
	"enabled" boolean NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "goal_evaluations" ADD CONSTRAINT "goal_evaluations_thread_id_threads_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "thread_goals" ADD CONSTRAINT "thread_goals_thread_id_threads_id_fk" FOREIGN KEY ("thread_id") REFERENCES "public"."threads"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "goal_evaluations_thread_idx" ON "goal_evaluations" USING btree ("thread_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "memory_facts_user_content_idx" ON "memory_facts" USING btree ("user_id","content");--> statement-breakpoint
CREATE INDEX "memory_facts_user_idx" ON "memory_facts" USING btree ("user_id");