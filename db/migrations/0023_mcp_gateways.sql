CREATE TABLE `mcp_gateway_agents` (
	`gateway_id` text NOT NULL,
	`agent_key_id` text NOT NULL,
	PRIMARY KEY(`gateway_id`, `agent_key_id`),
	FOREIGN KEY (`gateway_id`) REFERENCES `mcp_gateways`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`agent_key_id`) REFERENCES `agent_keys`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `mcp_gateways` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`url` text NOT NULL,
	`headers` text NOT NULL,
	`header_names` text NOT NULL,
	`status` text DEFAULT 'enabled' NOT NULL,
	`revision` integer DEFAULT 1 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mcp_gateways_name_unique` ON `mcp_gateways` (`name`);