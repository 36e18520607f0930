import { getDb } from "@/db/client";
import { runs, TERMINAL_RUN_STATUSES, type Run } from "@/db/schema";
import { changedRow, updateRow, type Statement } from "@/db/write-batch";
import { loadRunView } from "@/lib/read-models/batch-run-views";
import { ConflictError } from "@/lib/errors";
import { matchesHash, sha256Hex } from "@/lib/ids";

/**
 * The writes that apply `changes` to a run only while the caller holds it, with that condition in
 * the write (and checked first against the run as read, for a clear answer without a write):
 * - with a `claimToken`: the run is `resuming` under that token and its lease has not run out;
 * - without one: the run is `running`, never paused or claimed (its creator holds it).
 * Otherwise 409: `claim_lost` (another worker may own the run now, and this one must stop),
 * `already_claimed`, `not_ready` or `run_terminal`. A run that moved between the read and the
 * write aborts the batch (db/write-batch.ts), and the verb's retry answers from the new state.
 */
export async function whileHeld(
  run: Run,
  claimToken: string | undefined,
  changes: Partial<Run>,
  now: number,
): Promise<Statement[]> {
  if (!holds(run, claimToken, now)) throw await notHeld(run, claimToken);
  const set = { updatedAt: now, ...changes };
  return [
    claimToken === undefined
      ? updateRow(runs, set, "id = ? and status = 'running' and claim_token_hash is null", run.id)
      : updateRow(
          runs,
          set,
          "id = ? and status = 'resuming' and claim_token_hash = ? and lease_expires_at > ?",
          run.id,
          sha256Hex(claimToken),
          now,
        ),
    changedRow(),
  ];
}

function holds(run: Run, claimToken: string | undefined, now: number): boolean {
  if (claimToken === undefined) return run.status === "running" && run.claimTokenHash === null;
  return (
    run.status === "resuming" &&
    matchesHash(claimToken, run.claimTokenHash) &&
    (run.leaseExpiresAt ?? 0) > now
  );
}

async function notHeld(run: Run, claimToken: string | undefined): Promise<ConflictError> {
  const current = await loadRunView(getDb(), run.id, { withBatches: false });
  if (TERMINAL_RUN_STATUSES.includes(run.status)) {
    return new ConflictError("run_terminal", `The run is ${run.status}.`, current);
  }
  if (claimToken !== undefined) {
    return new ConflictError(
      "claim_lost",
      "This claim is no longer live (the lease ran out or another worker claimed the run). Stop, and claim again if the run is ready.",
      current,
    );
  }
  if (run.status === "resuming") {
    return new ConflictError(
      "already_claimed",
      `Worker '${run.claimWorkerId}' holds this run; pass its claimToken.`,
      current,
    );
  }
  return new ConflictError(
    "not_ready",
    `The run is ${run.status}; claim it, and pass the claimToken.`,
    current,
  );
}
