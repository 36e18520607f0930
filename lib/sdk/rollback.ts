import type { Claim } from "./claim.js";
import type { RollbackAction } from "./types.js";

// Undoes a run's reported actions after `requestRollback`: the claim that follows carries them
// (those reported with `revert` data and not reverted yet, newest first). Each is handed to the
// reverter of its tool, in that order, and reported `action.reverted` as soon as it is undone,
// so a worker that dies half-way leaves the next claim only what is still to undo.

export type Reverter = (
  revert: unknown,
  result: unknown,
  action: RollbackAction & { toolName: string | null },
) => void | Promise<void>;

export type RollbackOptions = {
  /**
   * The tool an action belongs to. By default: the run's batches (the call with that toolCallId),
   * else a string `toolName` field of the revert data (for actions reported outside any batch).
   */
  toolNameOf?: (action: RollbackAction) => string | undefined;
};

/** A reverter threw (or none fits): what was undone before it is reported and returned here. */
export class RollbackFailedError extends Error {
  constructor(
    readonly action: RollbackAction & { toolName: string | null },
    readonly reverted: RollbackAction[],
    cause: unknown,
  ) {
    super(
      `Reverting ${action.toolName ?? "an action"} (${action.toolCallId}) failed: ${
        cause instanceof Error ? cause.message : String(cause)
      }`,
      { cause },
    );
    this.name = "RollbackFailedError";
  }
}

/**
 * Runs `reverters[toolName]` (or `reverters["*"]`) for each action of `claim.rollback`, newest
 * first, reporting each as reverted. Stops at the first failure (later actions may depend on the
 * earlier ones still being in place). Resolves with the reverted actions; the caller then
 * completes or fails the claim.
 */
export async function runRollback(
  claim: Claim,
  reverters: Record<string, Reverter>,
  options: RollbackOptions = {},
): Promise<RollbackAction[]> {
  const actions = newestOnce(claim.rollback ?? []);
  const reverted: RollbackAction[] = [];
  if (actions.length === 0) return reverted;
  const names = options.toolNameOf ? new Map<string, string>() : await toolNamesOf(claim);

  for (const action of actions) {
    if (claim.signal.aborted) throw claim.signal.reason;
    const toolName =
      options.toolNameOf?.(action) ?? names.get(action.toolCallId) ?? namedIn(action.revert);
    const named = { ...action, toolName: toolName ?? null };
    const reverter = (toolName !== undefined ? reverters[toolName] : undefined) ?? reverters["*"];
    if (!reverter) {
      throw new RollbackFailedError(
        named,
        reverted,
        new Error(`no reverter for tool '${toolName ?? "unknown"}'`),
      );
    }
    try {
      await reverter(action.revert, action.result, named);
    } catch (error) {
      throw new RollbackFailedError(named, reverted, error);
    }
    await claim.reportReverted(action.toolCallId);
    reverted.push(action);
  }
  return reverted;
}

/**
 * Each toolCallId once, at its newest report: a result reported twice (a retried report whose
 * first answer was lost) is still one action to undo, and the server forgets both once reverted.
 */
function newestOnce(actions: RollbackAction[]): RollbackAction[] {
  const seen = new Set<string>();
  return [...actions]
    .sort((a, b) => b.seq - a.seq)
    .filter((action) => !seen.has(action.toolCallId) && seen.add(action.toolCallId));
}

async function toolNamesOf(claim: Claim): Promise<Map<string, string>> {
  const run = await claim.client.getRun(claim.runId);
  const names = new Map<string, string>();
  for (const batch of run.batches ?? []) {
    for (const call of batch.calls) names.set(call.toolCallId, call.toolName);
  }
  return names;
}

function namedIn(revert: unknown): string | undefined {
  const name = (revert as { toolName?: unknown } | null)?.toolName;
  return typeof name === "string" ? name : undefined;
}
