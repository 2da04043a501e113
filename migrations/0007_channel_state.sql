CREATE TABLE "channel_state" (
	"platform" text NOT NULL,
	"key" text NOT NULL,
	"value" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "channel_state_platform_key_pk" PRIMARY KEY("platform","key")
);
