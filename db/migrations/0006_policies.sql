CREATE TABLE `policy_rules` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`queue_id` text,
	`position` integer NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`effect` text NOT NULL,
	`agent_key_id` text,
	`tool_pattern` text,
	`arg_predicates` text NOT NULL,
	`cost_above` real,
	`reason` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`queue_id`) REFERENCES `queues`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`agent_key_id`) REFERENCES `agent_keys`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `policy_rules_queue_idx` ON `policy_rules` (`queue_id`,`position`);--> statement-breakpoint
ALTER TABLE `agent_keys` ADD `mode` text DEFAULT 'ask' NOT NULL;--> statement-breakpoint
ALTER TABLE `batches` ADD `hidden_from_reviewers` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `calls` ADD `decision_policy` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `require_plan_approval` integer DEFAULT false NOT NULL;