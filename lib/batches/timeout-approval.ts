import type { Queue } from "@/db/schema";
import { guard, type Statement } from "@/db/write-batch";
import { InvalidRequestError } from "@/lib/errors";
import type { CreateBatchInput } from "./batch-input";

// onTimeout "approve" lets a batch approve itself when nobody decided in time. Asked for by an
// agent with a one-second deadline, that is an agent approving its own call, so the queue the batch
// lands in (named, routed or the key's default) decides: approveOnTimeout off (the default) refuses
// it, and on, its deadline must be at least approveOnTimeoutMinSecs.

/** 400 `invalid_request` when `queue` does not let this batch approve itself at its deadline. */
export function checkTimeoutApproval(
  queue: Queue,
  input: Pick<CreateBatchInput, "onTimeout" | "timeoutSecs">,
): void {
  if (input.onTimeout !== "approve") return;
  if (!queue.approveOnTimeout) {
    const message = `queue '${queue.name}' does not let agents ask for "approve" on timeout (a lead can allow it in the queue's settings); use "reject" or "escalate"`;
    throw new InvalidRequestError(`Invalid request: onTimeout: ${message}`, [
      { path: "onTimeout", message },
    ]);
  }
  const timeoutSecs = input.timeoutSecs ?? queue.defaultTimeoutSecs;
  if (timeoutSecs < queue.approveOnTimeoutMinSecs) {
    const message = `queue '${queue.name}' approves on timeout only after at least ${queue.approveOnTimeoutMinSecs} s; this batch's deadline is ${timeoutSecs} s`;
    throw new InvalidRequestError(`Invalid request: timeoutSecs: ${message}`, [
      { path: "timeoutSecs", message },
    ]);
  }
}

/**
 * For the pause's write batch: the queue still allows it as read (a lead turning the setting off
 * meanwhile aborts the write, and the retry answers 400).
 */
export function timeoutApprovalGuard(
  queue: Queue,
  input: Pick<CreateBatchInput, "onTimeout" | "timeoutSecs">,
): Statement[] {
  if (input.onTimeout !== "approve") return [];
  return [
    guard(
      "exists (select 1 from queues where id = ? and approve_on_timeout = 1 and approve_on_timeout_min_secs <= ?)",
      queue.id,
      input.timeoutSecs ?? queue.defaultTimeoutSecs,
    ),
  ];
}
