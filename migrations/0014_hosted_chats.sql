CREATE TABLE "hosted_conversations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"platform" text NOT NULL,
	"owner_user_id" uuid,
	"title" text DEFAULT '' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hosted_files" (
	"id" uuid PRIMARY KEY NOT NULL,
	"conversation_id" uuid NOT NULL,
	"name" text NOT NULL,
	"mime_type" text NOT NULL,
	"size" integer NOT NULL,
	"bytes" "bytea" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "hosted_messages" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"conversation_id" uuid NOT NULL,
	"author" text NOT NULL,
	"text" text NOT NULL,
	"files" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"is_final" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "hosted_conversations" ADD CONSTRAINT "hosted_conversations_owner_user_id_users_id_fk" FOREIGN KEY ("owner_user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hosted_files" ADD CONSTRAINT "hosted_files_conversation_id_hosted_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."hosted_conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "hosted_messages" ADD CONSTRAINT "hosted_messages_conversation_id_hosted_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."hosted_conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "hosted_conversations_owner_idx" ON "hosted_conversations" USING btree ("platform","owner_user_id","updated_at");--> statement-breakpoint
CREATE INDEX "hosted_messages_conversation_idx" ON "hosted_messages" USING btree ("conversation_id","id");