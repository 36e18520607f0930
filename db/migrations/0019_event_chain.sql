ALTER TABLE `events` ADD `hash` text;
--> statement-breakpoint
-- Chains the rows already in the log (see lib/events/event-chain.ts), oldest first, so that an
-- upgraded database verifies; the rows written from now on chain onto the last of them.
WITH RECURSIVE chain(seq, hash) AS (
  SELECT 0, '0000000000000000000000000000000000000000000000000000000000000000'
  UNION ALL
  SELECT e.seq, lower(hex(sha3(chain.hash || coalesce(length(cast(e.seq as blob)) || ':' || e.seq, '-') || coalesce(length(cast(e.type as blob)) || ':' || e.type, '-') || coalesce(length(cast(e.at as blob)) || ':' || e.at, '-') || coalesce(length(cast(e.run_id as blob)) || ':' || e.run_id, '-') || coalesce(length(cast(e.batch_id as blob)) || ':' || e.batch_id, '-') || coalesce(length(cast(e.call_id as blob)) || ':' || e.call_id, '-') || coalesce(length(cast(e.queue_id as blob)) || ':' || e.queue_id, '-') || coalesce(length(cast(e.actor_kind as blob)) || ':' || e.actor_kind, '-') || coalesce(length(cast(e.actor_id as blob)) || ':' || e.actor_id, '-') || coalesce(length(cast(e.actor_name as blob)) || ':' || e.actor_name, '-') || coalesce(length(cast(e.data as blob)) || ':' || e.data, '-'))))
  FROM chain JOIN events e ON e.seq = (SELECT min(seq) FROM events WHERE seq > chain.seq)
)
UPDATE events SET hash = chain.hash FROM chain WHERE chain.seq = events.seq;
