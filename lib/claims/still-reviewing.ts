import type { Batch } from "@/db/schema";
import { guard, type Statement } from "@/db/write-batch";
import type { ReviewerActor } from "@/lib/auth/actor";

/**
 * The guard of a review-claim write (db/write-batch.ts): the batch is still in the queue it was
 * read in, the reviewer still a member of it and — unless `now` is null — still pending before
 * its deadline, as the verb checked on its read.
 */
export function stillReviewing(
  batch: Pick<Batch, "id" | "queueId">,
  reviewer: ReviewerActor,
  now: number | null,
): Statement {
  return guard(
    `exists (select 1 from batches as b join queue_members as m on m.queue_id = b.queue_id and m.user_id = ? where b.id = ? and b.queue_id = ?${now === null ? "" : " and b.status = 'pending' and b.expires_at > ?"})`,
    reviewer.id,
    batch.id,
    batch.queueId,
    ...(now === null ? [] : [now]),
  );
}
