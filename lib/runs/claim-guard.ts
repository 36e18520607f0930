import { and, eq, gt, isNull, type SQL } from "drizzle-orm";
import type { Transaction } from "@/db/client";
import { runs, TERMINAL_RUN_STATUSES, type Run } from "@/db/schema";
import { loadRunView } from "@/lib/api/views";
import { ConflictError } from "@/lib/errors";
import { sha256Hex } from "@/lib/ids";

/**
 * Applies `changes` to a run only while the caller holds it, with that condition in the write:
 * - with a `claimToken`: the run is `resuming` under that token and its lease has not run out;
 * - without one: the run is `running`, never paused or claimed (its creator holds it).
 * Otherwise 409: `claim_lost` (another worker may own the run now, and this one must stop),
 * `already_claimed`, `not_ready` or `run_terminal`.
 */
export async function updateWhileHeld(
  tx: Transaction,
  run: Run,
  claimToken: string | undefined,
  changes: Partial<Run>,
): Promise<Run> {
  const now = Date.now();
  const held: SQL[] =
    claimToken === undefined
      ? [eq(runs.status, "running"), isNull(runs.claimTokenHash)]
      : [
          eq(runs.status, "resuming"),
          eq(runs.claimTokenHash, sha256Hex(claimToken)),
          gt(runs.leaseExpiresAt, now),
        ];
  const [updated] = await tx
    .update(runs)
    .set({ updatedAt: now, ...changes })
    .where(and(eq(runs.id, run.id), ...held))
    .returning();
  if (updated) return updated;

  const current = await loadRunView(tx, run.id, { withBatches: false });
  if (TERMINAL_RUN_STATUSES.includes(run.status)) {
    throw new ConflictError("run_terminal", `The run is ${run.status}.`, current);
  }
  if (claimToken !== undefined) {
    throw new ConflictError(
      "claim_lost",
      "This claim is no longer live (the lease ran out or another worker claimed the run). Stop, and claim again if the run is ready.",
      current,
    );
  }
  if (run.status === "resuming") {
    throw new ConflictError(
      "already_claimed",
      `Worker '${run.claimWorkerId}' holds this run; pass its claimToken.`,
      current,
    );
  }
  throw new ConflictError(
    "not_ready",
    `The run is ${run.status}; claim it, and pass the claimToken.`,
    current,
  );
}
