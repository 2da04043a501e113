CREATE TABLE "channel_connect_codes" (
	"code_hash" text PRIMARY KEY NOT NULL,
	"owner_user_id" uuid NOT NULL,
	"provider" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"consumed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "channel_connection_events" (
	"id" uuid PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"provider" text NOT NULL,
	"external_account_id" text NOT NULL,
	"workspace_id" text DEFAULT '' NOT NULL,
	"user_id" uuid,
	"connection_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "channel_connections" (
	"id" uuid PRIMARY KEY NOT NULL,
	"owner_user_id" uuid NOT NULL,
	"provider" text NOT NULL,
	"status" text DEFAULT 'connected' NOT NULL,
	"external_account_id" text NOT NULL,
	"external_account_name" text,
	"workspace_id" text DEFAULT '' NOT NULL,
	"workspace_name" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "channel_conversations" (
	"connection_id" uuid NOT NULL,
	"chat_id" text NOT NULL,
	"topic_id" text DEFAULT '' NOT NULL,
	"thread_id" uuid NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "channel_conversations_connection_id_chat_id_topic_id_pk" PRIMARY KEY("connection_id","chat_id","topic_id")
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"api_key_hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "users_name_unique" UNIQUE("name"),
	CONSTRAINT "users_api_key_hash_unique" UNIQUE("api_key_hash")
);
--> statement-breakpoint
ALTER TABLE "channel_connect_codes" ADD CONSTRAINT "channel_connect_codes_owner_user_id_users_id_fk" FOREIGN KEY ("owner_user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "channel_connections" ADD CONSTRAINT "channel_connections_owner_user_id_users_id_fk" FOREIGN KEY ("owner_user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "channel_conversations" ADD CONSTRAINT "channel_conversations_connection_id_channel_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."channel_connections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "channel_connect_codes_owner_provider_idx" ON "channel_connect_codes" USING btree ("owner_user_id","provider");--> statement-breakpoint
CREATE INDEX "channel_connection_events_sender_idx" ON "channel_connection_events" USING btree ("provider","external_account_id","kind","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "uq_channel_connection_owner_provider_identity" ON "channel_connections" USING btree ("owner_user_id","provider","external_account_id","workspace_id");--> statement-breakpoint
CREATE UNIQUE INDEX "uq_channel_connection_active_identity" ON "channel_connections" USING btree ("provider","external_account_id","workspace_id") WHERE "channel_connections"."status" <> 'revoked';--> statement-breakpoint
CREATE INDEX "channel_connections_owner_idx" ON "channel_connections" USING btree ("owner_user_id");