CREATE TABLE `review_claims` (
	`batch_id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`claimed_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`batch_id`) REFERENCES `batches`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `saved_views` (
	`id` text PRIMARY KEY NOT NULL,
	`queue_id` text NOT NULL,
	`name` text NOT NULL,
	`filters` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`queue_id`) REFERENCES `queues`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`created_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `saved_views_queue_name_idx` ON `saved_views` (`queue_id`,`name`);--> statement-breakpoint
ALTER TABLE `queues` ADD `claim_mode` text DEFAULT 'mark' NOT NULL;