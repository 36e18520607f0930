ALTER TABLE `calls` ADD `gateway` text;--> statement-breakpoint
ALTER TABLE `calls` ADD `used_at` integer;--> statement-breakpoint
ALTER TABLE `calls` ADD `reported_at` integer;--> statement-breakpoint
CREATE INDEX `calls_gateway_unused_idx` ON `calls` (`gateway`,`action_hash`) WHERE "calls"."gateway" is not null and "calls"."used_at" is null;