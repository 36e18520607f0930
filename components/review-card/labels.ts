import type { Batch, Call } from "./types";

/** The synthetic call of a plan batch (its args are the plan; an edit changes its summary). */
export function isPlanCall(batch: Batch, call: Call): boolean {
  return batch.kind === "plan" && call.toolName === "plan" && call.toolCallId === "plan";
}

/**
 * Tool names, numbered when a batch repeats one, so every button has a distinct name. A plan
 * sent with its steps as calls names them as steps ("step 2: merge_pull_request"), so a step's
 * buttons never read as the plan's own.
 */
export function callLabels(batch: Batch): string[] {
  const calls = batch.calls;
  if (batch.kind === "plan")
    return calls.map((call, index) =>
      isPlanCall(batch, call) ? "plan" : `step ${index + 1}: ${call.toolName}`,
    );
  const counts = new Map<string, number>();
  for (const call of calls) counts.set(call.toolName, (counts.get(call.toolName) ?? 0) + 1);
  const seen = new Map<string, number>();
  return calls.map((call) => {
    if (counts.get(call.toolName) === 1) return call.toolName;
    const n = (seen.get(call.toolName) ?? 0) + 1;
    seen.set(call.toolName, n);
    return `${call.toolName} #${n}`;
  });
}
