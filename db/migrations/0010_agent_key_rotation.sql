ALTER TABLE `agent_keys` ADD `previous_key_hash` text;--> statement-breakpoint
ALTER TABLE `agent_keys` ADD `previous_key_expires_at` integer;--> statement-breakpoint
ALTER TABLE `agent_keys` ADD `last_used_at` integer;--> statement-breakpoint
CREATE INDEX `agent_keys_previous_hash_idx` ON `agent_keys` (`previous_key_hash`) WHERE "agent_keys"."previous_key_hash" is not null;--> statement-breakpoint
ALTER TABLE `reviewer_tokens` ADD `last_used_at` integer;