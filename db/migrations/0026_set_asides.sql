CREATE TABLE `set_asides` (
	`batch_id` text NOT NULL,
	`user_id` text NOT NULL,
	`set_at` integer NOT NULL,
	`until` integer NOT NULL,
	PRIMARY KEY(`batch_id`, `user_id`),
	FOREIGN KEY (`batch_id`) REFERENCES `batches`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE no action
);
