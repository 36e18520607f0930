-- Guards for one-batch writes (db/write-batch.ts): a row inserted here aborts the whole batch,
-- so a write whose compare-and-swap found the state moved changes nothing. No row ever stays.
CREATE TABLE `write_guards` (`reason` text NOT NULL);
--> statement-breakpoint
CREATE TRIGGER `write_guards_abort` BEFORE INSERT ON `write_guards`
BEGIN
  SELECT RAISE(ABORT, 'countersign_write_guard');
END;
