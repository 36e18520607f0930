CREATE TABLE `card_link_uses` (
	`link_id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`batch_id` text NOT NULL,
	`used_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `notification_cursors` (
	`name` text PRIMARY KEY NOT NULL,
	`position` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `notification_preferences` (
	`user_id` text NOT NULL,
	`queue_id` text NOT NULL,
	`delivery` text NOT NULL,
	`digest_minutes` integer DEFAULT 60 NOT NULL,
	`new_cards` integer NOT NULL,
	`deadlines` integer NOT NULL,
	`escalations` integer NOT NULL,
	`decisions` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `queue_id`),
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`queue_id`) REFERENCES `queues`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `notification_preferences_queue_idx` ON `notification_preferences` (`queue_id`);--> statement-breakpoint
CREATE TABLE `notifications` (
	`id` text PRIMARY KEY NOT NULL,
	`event_key` text NOT NULL,
	`user_id` text NOT NULL,
	`channel` text NOT NULL,
	`kind` text NOT NULL,
	`batch_id` text NOT NULL,
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
CREATE UNIQUE INDEX `notifications_once_idx` ON `notifications` (`event_key`,`user_id`,`channel`);--> statement-breakpoint
CREATE INDEX `notifications_due_idx` ON `notifications` (`next_attempt_at`) WHERE "notifications"."status" = 'pending';