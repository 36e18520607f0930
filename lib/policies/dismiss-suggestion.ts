import { getDb } from "@/db/client";
import { policySuggestionDismissals } from "@/db/schema";
import { insertRows, untilWritten } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { managerOf, stillManages, type QueueCaller } from "@/lib/queues/queue-access";
import { managedHistoryQueue } from "./backtest-policy";
import { DismissSuggestionInput } from "./policy-input";

/**
 * `POST /policy-suggestions/dismiss`: a lead's "not this one". Stored with the suggestion's
 * fingerprint: the suggestion stays hidden until its evidence changes (suggest-policies.ts). One
 * write batch: the upsert, guarded by the caller still leading the queue, and its event.
 */
export async function dismissSuggestion(
  caller: QueueCaller,
  body: unknown,
): Promise<{ suggestionId: string; fingerprint: string; dismissedAt: string }> {
  const input = parseInput(DismissSuggestionInput, body);
  return untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    const queue = await managedHistoryQueue(db, caller, input.queue);
    const now = Date.now();
    await commit([
      ...stillManages(manager, queue.id),
      insertRows(
        policySuggestionDismissals,
        [
          {
            queueId: queue.id,
            suggestionId: input.suggestionId,
            fingerprint: input.fingerprint,
            dismissedBy: manager.reviewer?.id ?? null,
            dismissedAt: now,
          },
        ],
        " on conflict (queue_id, suggestion_id) do update set fingerprint = excluded.fingerprint, dismissed_by = excluded.dismissed_by, dismissed_at = excluded.dismissed_at",
      ),
      eventRows({
        type: "policy.suggestion_dismissed",
        queueId: queue.id,
        actor: manager.eventActor,
        data: { suggestionId: input.suggestionId, fingerprint: input.fingerprint },
        at: now,
      }),
    ]);
    return {
      suggestionId: input.suggestionId,
      fingerprint: input.fingerprint,
      dismissedAt: new Date(now).toISOString(),
    };
  });
}
