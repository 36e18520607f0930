ALTER TABLE `calls` ADD `cost_currency` text DEFAULT 'USD' NOT NULL;--> statement-breakpoint
ALTER TABLE `user` ADD `time_zone` text;