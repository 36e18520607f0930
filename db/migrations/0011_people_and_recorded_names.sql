CREATE TABLE `person_links` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`kind` text NOT NULL,
	`token_hash` text NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `person_links_token_hash_unique` ON `person_links` (`token_hash`);--> statement-breakpoint
CREATE INDEX `person_links_user_idx` ON `person_links` (`user_id`);--> statement-breakpoint
ALTER TABLE `calls` ADD `decided_by_name` text;--> statement-breakpoint
ALTER TABLE `calls` ADD `decided_by_email` text;--> statement-breakpoint
ALTER TABLE `user` ADD `deactivated_at` integer;--> statement-breakpoint
ALTER TABLE `votes` ADD `reviewer_name` text;--> statement-breakpoint
ALTER TABLE `votes` ADD `reviewer_email` text;