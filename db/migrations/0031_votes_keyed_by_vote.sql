-- Votes keyed by what finds them (call, revision, reviewer), WITHOUT ROWID: one b-tree where there
-- were three (the rowid table, its text id's index, votes_once_idx), each written on every vote
-- (issue 28: fewer pages per decision). drizzle's schema cannot say WITHOUT ROWID: db/schema.ts
-- declares the same key, and test/db/votes-migration.test.ts checks the table is built this way.
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_votes` (
	`id` text NOT NULL,
	`call_id` text NOT NULL,
	`reviewer_id` text NOT NULL,
	`outcome` text NOT NULL,
	`revision` integer NOT NULL,
	`action_hash` text NOT NULL,
	`reviewer_name` text,
	`reviewer_email` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`call_id`, `revision`, `reviewer_id`),
	FOREIGN KEY (`call_id`) REFERENCES `calls`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`reviewer_id`) REFERENCES `user`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_votes`("id", "call_id", "reviewer_id", "outcome", "revision", "action_hash", "reviewer_name", "reviewer_email", "created_at") SELECT "id", "call_id", "reviewer_id", "outcome", "revision", "action_hash", "reviewer_name", "reviewer_email", "created_at" FROM `votes`;--> statement-breakpoint
DROP TABLE `votes`;--> statement-breakpoint
ALTER TABLE `__new_votes` RENAME TO `votes`;--> statement-breakpoint
PRAGMA foreign_keys=ON;