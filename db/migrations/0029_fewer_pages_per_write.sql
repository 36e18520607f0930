DROP INDEX `batches_settled_idx`;--> statement-breakpoint
DROP INDEX `batches_insights_settled_idx`;--> statement-breakpoint
CREATE INDEX `batches_insights_settled_idx` ON `batches` (`queue_id`,`decided_at`,`id`,`status`,`created_at`,`escalations`,`run_id`) WHERE "batches"."status" <> 'pending';--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_events` (
	`seq` integer PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`at` integer NOT NULL,
	`run_id` text,
	`batch_id` text,
	`call_id` text,
	`queue_id` text,
	`actor_kind` text NOT NULL,
	`actor_id` text,
	`actor_name` text,
	`data` text NOT NULL,
	`hash` text
);
--> statement-breakpoint
INSERT INTO `__new_events`("seq", "type", "at", "run_id", "batch_id", "call_id", "queue_id", "actor_kind", "actor_id", "actor_name", "data", "hash") SELECT "seq", "type", "at", "run_id", "batch_id", "call_id", "queue_id", "actor_kind", "actor_id", "actor_name", "data", "hash" FROM `events`;--> statement-breakpoint
DROP TABLE `events`;--> statement-breakpoint
ALTER TABLE `__new_events` RENAME TO `events`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `events_run_idx` ON `events` (`run_id`,`seq`);--> statement-breakpoint
CREATE INDEX `events_queue_idx` ON `events` (`queue_id`,`seq`);--> statement-breakpoint
CREATE INDEX `events_escalations_idx` ON `events` (`at`,`batch_id`,`queue_id`) WHERE "events"."type" = 'batch.escalated';