-- GitHub deliveries moved into the platform-neutral webhook_deliveries (0004); keep what was recorded.
INSERT INTO "webhook_deliveries" ("platform", "delivery_id", "event", "status", "summary", "received_at", "updated_at")
SELECT 'github', "delivery_id", "event", "status", "summary", "received_at", "updated_at" FROM "github_deliveries"
ON CONFLICT DO NOTHING;
--> statement-breakpoint
DROP TABLE "github_deliveries" CASCADE;
