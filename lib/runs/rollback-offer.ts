import { eq } from "drizzle-orm";
import type { Executor } from "@/db/client";
import { agentKeys, type Run } from "@/db/schema";
import { revertableActions } from "./claim-run";

// A rollback request is only a flag on the run: a worker performs it when it next claims the run
// (claim-run.ts hands it the reported actions to revert). Offering "Request rollback" where no
// worker will ever claim the run promised an undo that nothing would perform; so did offering it
// again once a finished run's every reported action was reverted (issue 24).

/** The run's reported actions that carry `revert` data, and how many are not reverted yet. */
export type RevertCounts = { reported: number; left: number };

export type RollbackOffer =
  | { available: true }
  /** nothingLeft: a finished run whose every reported action was reverted (refused to agents too) */
  | { available: false; reason: string; nothingLeft?: true };

/**
 * Whether a worker can act on a rollback of `run`, from what the database knows: how the run was
 * started, whether its agent key still works, and whether any worker ever claimed it.
 */
export function rollbackOffer(
  run: Pick<Run, "status" | "origin" | "claimedAt">,
  agent: { name: string; revokedAt: number | null },
  actions: RevertCounts,
): RollbackOffer {
  if (run.status === "cancelled") {
    return { available: false, reason: "A cancelled run cannot be rolled back." };
  }
  if (run.origin === "mcp") {
    return {
      available: false,
      reason:
        "No worker can roll this back: it ran through MCP, where the agent ran each approved call itself and no worker claims the run afterwards. Undo its actions by hand.",
    };
  }
  if (agent.revokedAt !== null) {
    return {
      available: false,
      reason: `No worker can roll this back: the agent key “${agent.name}” was revoked, so no worker can claim the run. Undo its actions by hand.`,
    };
  }
  const finished = run.status === "completed" || run.status === "failed";
  // A run under way may still report actions; a finished one reports none until it is claimed.
  if (finished && actions.reported > 0 && actions.left === 0) {
    return {
      available: false,
      reason: `Nothing left to roll back: ${actions.reported === 1 ? "the one action" : `all ${actions.reported} actions`} this run reported with revert data ${actions.reported === 1 ? "was" : "were"} already reverted.`,
      nothingLeft: true,
    };
  }
  if (finished && run.claimedAt === null) {
    return {
      available: false,
      reason:
        "No worker can roll this back: no worker ever claimed this run, so none will claim it to undo what it did. Undo its actions by hand.",
    };
  }
  return { available: true };
}

/** rollbackOffer for a run as stored, reading its agent key and its reported actions. */
export async function readRollbackOffer(db: Executor, run: Run): Promise<RollbackOffer> {
  const [[agent], actions] = await Promise.all([
    db
      .select({ name: agentKeys.name, revokedAt: agentKeys.revokedAt })
      .from(agentKeys)
      .where(eq(agentKeys.id, run.agentKeyId)),
    revertableActions(db, run.id),
  ]);
  return rollbackOffer(run, agent ?? { name: "unknown", revokedAt: Date.now() }, {
    reported: actions.reported,
    left: actions.left.length,
  });
}
