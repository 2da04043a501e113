ALTER TABLE "channel_conversations" ADD COLUMN "agent_name" text;--> statement-breakpoint
ALTER TABLE "channel_conversations" ADD COLUMN "is_bootstrapping" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "thread_mappings" ADD COLUMN "agent_name" text;--> statement-breakpoint
ALTER TABLE "thread_mappings" ADD COLUMN "is_bootstrapping" boolean DEFAULT false NOT NULL;