CREATE TABLE `routing_rules` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`position` integer NOT NULL,
	`agent_key_id` text,
	`tool_pattern` text,
	`min_cost` real,
	`queue_id` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`agent_key_id`) REFERENCES `agent_keys`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`queue_id`) REFERENCES `queues`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `routing_rules_name_unique` ON `routing_rules` (`name`);--> statement-breakpoint
CREATE INDEX `routing_rules_position_idx` ON `routing_rules` (`position`);--> statement-breakpoint
ALTER TABLE `batches` ADD `routing_rule_id` text;