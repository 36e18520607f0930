CREATE TABLE `policy_suggestion_digests` (
	`queue_id` text PRIMARY KEY NOT NULL,
	`ran_at` integer NOT NULL,
	`announced` text NOT NULL,
	FOREIGN KEY (`queue_id`) REFERENCES `queues`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `policy_suggestion_dismissals` (
	`queue_id` text NOT NULL,
	`suggestion_id` text NOT NULL,
	`fingerprint` text NOT NULL,
	`dismissed_by` text,
	`dismissed_at` integer NOT NULL,
	PRIMARY KEY(`queue_id`, `suggestion_id`),
	FOREIGN KEY (`queue_id`) REFERENCES `queues`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`dismissed_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_notifications` (
	`id` text PRIMARY KEY NOT NULL,
	`event_key` text NOT NULL,
	`user_id` text NOT NULL,
	`channel` text NOT NULL,
	`kind` text NOT NULL,
	`batch_id` text,
	`queue_id` text NOT NULL,
	`digest` integer NOT NULL,
	`detail` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`last_error` text,
	`created_at` integer NOT NULL,
	`sent_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`batch_id`) REFERENCES `batches`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`queue_id`) REFERENCES `queues`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
INSERT INTO `__new_notifications`("id", "event_key", "user_id", "channel", "kind", "batch_id", "queue_id", "digest", "detail", "status", "attempts", "next_attempt_at", "last_error", "created_at", "sent_at") SELECT "id", "event_key", "user_id", "channel", "kind", "batch_id", "queue_id", "digest", "detail", "status", "attempts", "next_attempt_at", "last_error", "created_at", "sent_at" FROM `notifications`;--> statement-breakpoint
DROP TABLE `notifications`;--> statement-breakpoint
ALTER TABLE `__new_notifications` RENAME TO `notifications`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `notifications_once_idx` ON `notifications` (`event_key`,`user_id`,`channel`);--> statement-breakpoint
CREATE INDEX `notifications_due_idx` ON `notifications` (`next_attempt_at`) WHERE "notifications"."status" = 'pending';--> statement-breakpoint
ALTER TABLE `notification_preferences` ADD `suggestions` integer DEFAULT true NOT NULL;