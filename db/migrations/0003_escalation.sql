ALTER TABLE `batches` ADD `escalations` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `queues` ADD `escalation_queue_id` text REFERENCES queues(id);