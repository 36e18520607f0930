CREATE INDEX `batches_queue_created_idx` ON `batches` (`queue_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `batches_insights_settled_idx` ON `batches` (`queue_id`,`decided_at`,`status`,`created_at`,`escalations`,`run_id`,`id`) WHERE "batches"."status" <> 'pending';--> statement-breakpoint
CREATE INDEX `calls_insights_idx` ON `calls` (`batch_id`,`decision_source`,`decision_outcome`,`tool_name`,`decided_by`,`id`);--> statement-breakpoint
CREATE INDEX `runs_insights_agent_idx` ON `runs` (`id`,`agent_key_id`);