CREATE TABLE "schedule_preferences" (
	"owner_user_id" text PRIMARY KEY NOT NULL,
	"timezone" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
