CREATE TABLE `slack_messages` (
	`id` text PRIMARY KEY NOT NULL,
	`batch_id` text NOT NULL,
	`queue_id` text NOT NULL,
	`channel_id` text NOT NULL,
	`ts` text,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`last_error` text,
	`wanted_seq` integer NOT NULL,
	`shown_seq` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`posted_at` integer,
	FOREIGN KEY (`batch_id`) REFERENCES `batches`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`queue_id`) REFERENCES `queues`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `slack_messages_once_idx` ON `slack_messages` (`batch_id`,`queue_id`,`channel_id`);--> statement-breakpoint
CREATE INDEX `slack_messages_due_idx` ON `slack_messages` (`next_attempt_at`) WHERE "slack_messages"."status" = 'pending' or ("slack_messages"."status" = 'posted' and "slack_messages"."wanted_seq" > "slack_messages"."shown_seq");--> statement-breakpoint
ALTER TABLE `queues` ADD `slack_channel_id` text;