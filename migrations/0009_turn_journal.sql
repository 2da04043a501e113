ALTER TABLE "inbound_dedupe" ADD COLUMN "message" jsonb;--> statement-breakpoint
ALTER TABLE "inbound_dedupe" ADD COLUMN "finished_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "inbound_dedupe" ADD COLUMN "resumes" smallint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "inbound_dedupe_unfinished_idx" ON "inbound_dedupe" USING btree ("first_seen") WHERE "inbound_dedupe"."finished_at" is null and "inbound_dedupe"."message" is not null;