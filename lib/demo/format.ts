import type { Call, Decision } from "./api-client";

// How the demo talks: one prefixed line per step, so concurrent scenarios stay readable.

const colorful = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
const COLORS = [36, 35, 33, 32, 34];
const paint = (code: number, text: string) => (colorful ? `\u001b[${code}m${text}\u001b[0m` : text);
export const dim = (text: string) => paint(2, text);

export type Logger = {
  info: (line: string) => void;
  error: (line: string) => void;
};

/** A logger whose lines start with `[name]`, padded to `width` so columns line up. */
export function prefixedLogger(name: string, width: number, colorIndex: number): Logger {
  const prefix = paint(COLORS[colorIndex % COLORS.length]!, `[${name}]`.padEnd(width + 2));
  return {
    info: (line) => console.log(`${prefix} ${line}`),
    error: (line) => console.error(`${prefix} ${line}`),
  };
}

function show(value: unknown): string {
  const text =
    typeof value === "number" || typeof value === "boolean" ? String(value) : JSON.stringify(value);
  return text === undefined ? "undefined" : text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** "amount 42 → 30, reason "…" → "…"": what a reviewer changed. */
export function describeEdit(
  args: Record<string, unknown>,
  edited: Record<string, unknown>,
): string {
  const keys = [...new Set([...Object.keys(args), ...Object.keys(edited)])];
  const changes = keys.flatMap((key) => {
    if (!(key in edited)) return [`${key} removed`];
    if (!(key in args)) return [`${key} ${show(edited[key])} added`];
    return JSON.stringify(args[key]) === JSON.stringify(edited[key])
      ? []
      : [`${key} ${show(args[key])} → ${show(edited[key])}`];
  });
  return changes.length ? changes.join(", ") : "no visible change";
}

function decider(decision: Decision): string {
  switch (decision.source) {
    case "reviewer":
      return decision.by ? `by ${decision.by.name}` : "by a reviewer";
    case "memory":
      return `by a remembered approval${decision.by ? ` (${decision.by.name})` : ""}`;
    case "policy":
      return "by policy";
    case "timeout":
      return "at the deadline";
  }
}

/** "approved by Dana (edited: amount 42 → 30)" or "rejected by Dana: "reason"". */
export function describeDecision(call: Call): string {
  const decision = call.decision;
  if (!decision) return `${call.status} (no decision)`;
  if (decision.outcome === "approved") {
    const edit = decision.editedArgs
      ? ` (edited: ${describeEdit(call.args, decision.editedArgs)})`
      : "";
    return `approved ${decider(decision)}${edit}`;
  }
  if (decision.source === "timeout")
    return "rejected: nobody decided before the deadline (onTimeout: reject, fail closed)";
  return `rejected ${decider(decision)}${decision.reason ? `: “${decision.reason}”` : " (no reason given)"}`;
}

/**
 * A plan's decision: "approved by Dana (edited summary: “…”)". The plan is one call whose args
 * are the plan; a reviewer may change only its summary.
 */
export function describePlanDecision(call: Call): string {
  const decision = call.decision;
  const edited = decision?.editedArgs?.summary;
  if (decision?.outcome === "approved" && typeof edited === "string") {
    const plain = describeDecision({ ...call, decision: { ...decision, editedArgs: null } });
    return `${plain} (edited summary: “${edited}”)`;
  }
  return describeDecision(call);
}

/** "14:32 (in 30 min)" */
export function describeDeadline(iso: string): string {
  const at = new Date(iso);
  const seconds = Math.round((at.getTime() - Date.now()) / 1000);
  if (seconds < 60) {
    const clock = at.toLocaleTimeString(undefined, {
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    return `${clock} (in ${Math.max(seconds, 0)} s)`;
  }
  const clock = at.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  return `${clock} (in ${Math.round(seconds / 60)} min)`;
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
