import { and, eq, gt } from "drizzle-orm";
import type { Transaction } from "@/db/client";
import { runs, type Run } from "@/db/schema";
import { loadRunView } from "@/lib/api/views";
import { ConflictError } from "@/lib/errors";
import { sha256Hex } from "@/lib/ids";

/**
 * Applies `changes` to a run only while `claimToken` holds its live claim (status `resuming`,
 * same token, lease not run out) — the write itself carries that condition. Otherwise 409
 * `claim_lost`: another worker may own the run now, and this one must stop.
 */
export async function updateUnderClaim(
  tx: Transaction,
  run: Run,
  claimToken: string,
  changes: Partial<Run>,
): Promise<Run> {
  const now = Date.now();
  const [updated] = await tx
    .update(runs)
    .set({ updatedAt: now, ...changes })
    .where(
      and(
        eq(runs.id, run.id),
        eq(runs.status, "resuming"),
        eq(runs.claimTokenHash, sha256Hex(claimToken)),
        gt(runs.leaseExpiresAt, now),
      ),
    )
    .returning();
  if (updated) return updated;
  const current = await loadRunView(tx, run.id, { withBatches: false });
  const terminal = ["completed", "failed", "cancelled"].includes(run.status);
  throw new ConflictError(
    terminal ? "run_terminal" : "claim_lost",
    terminal
      ? `The run is ${run.status}.`
      : "This claim is no longer live (the lease ran out or another worker claimed the run). Stop, and claim again if the run is ready.",
    current,
  );
}
