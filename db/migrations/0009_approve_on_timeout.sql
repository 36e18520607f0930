ALTER TABLE `queues` ADD `approve_on_timeout` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `queues` ADD `approve_on_timeout_min_secs` integer DEFAULT 300 NOT NULL;