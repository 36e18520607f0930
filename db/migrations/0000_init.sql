CREATE TABLE `account` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`provider_id` text NOT NULL,
	`user_id` text NOT NULL,
	`access_token` text,
	`refresh_token` text,
	`id_token` text,
	`access_token_expires_at` integer,
	`refresh_token_expires_at` integer,
	`scope` text,
	`password` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `account_user_idx` ON `account` (`user_id`);--> statement-breakpoint
CREATE TABLE `agent_key_queues` (
	`agent_key_id` text NOT NULL,
	`queue_id` text NOT NULL,
	PRIMARY KEY(`agent_key_id`, `queue_id`),
	FOREIGN KEY (`agent_key_id`) REFERENCES `agent_keys`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`queue_id`) REFERENCES `queues`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `agent_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`key_hash` text NOT NULL,
	`key_prefix` text NOT NULL,
	`default_queue_id` text NOT NULL,
	`owner_user_id` text,
	`webhook_secret` text NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`default_queue_id`) REFERENCES `queues`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`owner_user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `agent_keys_key_hash_unique` ON `agent_keys` (`key_hash`);--> statement-breakpoint
CREATE TABLE `batches` (
	`id` text PRIMARY KEY NOT NULL,
	`run_id` text NOT NULL,
	`queue_id` text NOT NULL,
	`kind` text NOT NULL,
	`status` text NOT NULL,
	`outcome` text,
	`plan` text,
	`on_timeout` text NOT NULL,
	`callback_url` text,
	`cancel_reason` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`decided_at` integer,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`queue_id`) REFERENCES `queues`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `batches_run_idx` ON `batches` (`run_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `batches_queue_idx` ON `batches` (`queue_id`,`status`,`id`);--> statement-breakpoint
CREATE INDEX `batches_pending_deadline_idx` ON `batches` (`expires_at`) WHERE "batches"."status" = 'pending';--> statement-breakpoint
CREATE TABLE `calls` (
	`id` text PRIMARY KEY NOT NULL,
	`batch_id` text NOT NULL,
	`run_id` text NOT NULL,
	`position` integer NOT NULL,
	`tool_call_id` text NOT NULL,
	`tool_name` text NOT NULL,
	`args` text NOT NULL,
	`input_schema` text,
	`summary` text,
	`risks` text NOT NULL,
	`cost_estimate` real,
	`metadata` text,
	`status` text NOT NULL,
	`revision` integer DEFAULT 1 NOT NULL,
	`action_hash` text NOT NULL,
	`required_approvals` integer NOT NULL,
	`edited_args` text,
	`decision_outcome` text,
	`decision_source` text,
	`decided_by` text,
	`decided_at` integer,
	`decision_reason` text,
	`decision_scope` text,
	FOREIGN KEY (`batch_id`) REFERENCES `batches`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`decided_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `calls_batch_position_idx` ON `calls` (`batch_id`,`position`);--> statement-breakpoint
CREATE TABLE `events` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`type` text NOT NULL,
	`at` integer NOT NULL,
	`run_id` text,
	`batch_id` text,
	`call_id` text,
	`queue_id` text,
	`actor_kind` text NOT NULL,
	`actor_id` text,
	`actor_name` text,
	`data` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `events_run_idx` ON `events` (`run_id`,`seq`);--> statement-breakpoint
CREATE INDEX `events_queue_idx` ON `events` (`queue_id`,`seq`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`agent_key_id` text NOT NULL,
	`scope` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`resource_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`agent_key_id`, `scope`, `key`),
	FOREIGN KEY (`agent_key_id`) REFERENCES `agent_keys`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `queue_members` (
	`queue_id` text NOT NULL,
	`user_id` text NOT NULL,
	`role` text DEFAULT 'reviewer' NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`queue_id`, `user_id`),
	FOREIGN KEY (`queue_id`) REFERENCES `queues`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `queue_members_user_idx` ON `queue_members` (`user_id`);--> statement-breakpoint
CREATE TABLE `queues` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`required_approvals` integer DEFAULT 1 NOT NULL,
	`separation_of_duties` integer DEFAULT false NOT NULL,
	`default_timeout_secs` integer DEFAULT 3600 NOT NULL,
	`created_at` integer NOT NULL,
	`archived_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `queues_name_unique` ON `queues` (`name`);--> statement-breakpoint
CREATE TABLE `remembered_approvals` (
	`id` text PRIMARY KEY NOT NULL,
	`scope` text NOT NULL,
	`scope_key` text NOT NULL,
	`agent_key_id` text NOT NULL,
	`queue_id` text NOT NULL,
	`action_hash` text NOT NULL,
	`call_id` text NOT NULL,
	`approved_by` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`agent_key_id`) REFERENCES `agent_keys`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`queue_id`) REFERENCES `queues`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`call_id`) REFERENCES `calls`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`approved_by`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `remembered_lookup_idx` ON `remembered_approvals` (`scope`,`scope_key`,`agent_key_id`,`action_hash`,`queue_id`);--> statement-breakpoint
CREATE TABLE `reviewer_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`token_prefix` text NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `reviewer_tokens_token_hash_unique` ON `reviewer_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `reviewer_tokens_user_idx` ON `reviewer_tokens` (`user_id`);--> statement-breakpoint
CREATE TABLE `runs` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_key_id` text NOT NULL,
	`queue_id` text NOT NULL,
	`external_id` text,
	`conversation_id` text,
	`status` text NOT NULL,
	`metadata` text,
	`checkpoint` text,
	`claim_token_hash` text,
	`claim_worker_id` text,
	`lease_expires_at` integer,
	`claimed_at` integer,
	`rollback_requested_at` integer,
	`rollback_reason` text,
	`result` text,
	`error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`agent_key_id`) REFERENCES `agent_keys`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`queue_id`) REFERENCES `queues`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `runs_agent_idx` ON `runs` (`agent_key_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `runs_lease_idx` ON `runs` (`lease_expires_at`) WHERE "runs"."status" = 'resuming';--> statement-breakpoint
CREATE TABLE `session` (
	`id` text PRIMARY KEY NOT NULL,
	`expires_at` integer NOT NULL,
	`token` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`ip_address` text,
	`user_agent` text,
	`user_id` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `session_token_unique` ON `session` (`token`);--> statement-breakpoint
CREATE INDEX `session_user_idx` ON `session` (`user_id`);--> statement-breakpoint
CREATE TABLE `user` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`email` text NOT NULL,
	`email_verified` integer DEFAULT false NOT NULL,
	`image` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `user_email_unique` ON `user` (`email`);--> statement-breakpoint
CREATE TABLE `verification` (
	`id` text PRIMARY KEY NOT NULL,
	`identifier` text NOT NULL,
	`value` text NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer,
	`updated_at` integer
);
--> statement-breakpoint
CREATE TABLE `votes` (
	`id` text PRIMARY KEY NOT NULL,
	`call_id` text NOT NULL,
	`reviewer_id` text NOT NULL,
	`outcome` text NOT NULL,
	`revision` integer NOT NULL,
	`action_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`call_id`) REFERENCES `calls`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`reviewer_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `votes_once_idx` ON `votes` (`call_id`,`revision`,`reviewer_id`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`agent_key_id` text NOT NULL,
	`batch_id` text NOT NULL,
	`url` text NOT NULL,
	`event_type` text NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`last_status_code` integer,
	`last_error` text,
	`created_at` integer NOT NULL,
	`delivered_at` integer,
	FOREIGN KEY (`agent_key_id`) REFERENCES `agent_keys`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`batch_id`) REFERENCES `batches`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_due_idx` ON `webhook_deliveries` (`next_attempt_at`) WHERE "webhook_deliveries"."status" = 'pending';