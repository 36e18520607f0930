import { createHash } from "node:crypto";
import { posix } from "node:path";
import type { ArgPredicate, PolicyRule } from "@/db/schema";
import { backtestRuleAsync, type RuleTrial } from "./backtest-rule";
import type { HistoryCall, HistoryCard } from "./policy-history";

// Allow rules reviewers have been applying by hand, mined from a queue's history. Pure.
//
// For each agent and tool whose calls people judged, the broadest rule that their decisions
// support: the agent and tool alone when every call was approved as asked; otherwise, where the
// arguments show it, a bound on one top-level argument — a number at most the largest approved
// value below every refused one (`amount ≤ 20`), or a directory prefix of absolute paths no
// refused call's path falls under (`path starts with /scratch/`). "Refused" is anything but an
// approval as asked: a rejection, an edit, or a deadline nobody met.
//
// Every candidate is then backtested with the live gate's matcher over the whole history
// (backtest-rule.ts), and kept only when the calls it would match hold at least `minApprovals`
// approvals and not one rejection, edit, expiry or overturned decision: whatever the heuristics
// above propose, what is offered is exactly what the backtest vouches for.

export type MinedSuggestion = {
  /** stable across periods: the agent, the tool, and the argument the condition is on */
  id: string;
  /** the evidence: changes when the condition does or the approvals behind it double */
  fingerprint: string;
  rule: PolicyRule;
  trial: RuleTrial;
};

const HUMAN = new Set(["approved", "edited", "rejected", "expired"]);
/** tool names a tool pattern can name exactly (a `*` in a name would be a wildcard) */
const PLAIN_TOOL = /^[A-Za-z0-9_.:\-/]+$/;
/** an argument name a predicate path can name on its own */
const PLAIN_KEY = /^[A-Za-z0-9_-]+$/;

const hash = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 32);

function groupsOf(cards: HistoryCard[]): Map<string, HistoryCall[]> {
  const groups = new Map<string, HistoryCall[]>();
  for (const card of cards)
    for (const call of card.calls) {
      if (!HUMAN.has(call.verdict)) continue;
      const key = `${call.agentKeyId}\u0000${call.toolName}`;
      const group = groups.get(key);
      if (group) group.push(call);
      else groups.set(key, [call]);
    }
  return groups;
}

const isNumber = (value: unknown): value is number =>
  typeof value === "number" && Number.isFinite(value);

/** `amount ≤ b`: the largest approved value below every refused one, when enough are below. */
function numericBound(calls: HistoryCall[], key: string, minApprovals: number): number | null {
  let refusedMin = Infinity;
  for (const call of calls) {
    const value = call.args[key];
    if (call.verdict !== "approved" && isNumber(value)) refusedMin = Math.min(refusedMin, value);
  }
  let bound = -Infinity;
  let count = 0;
  for (const call of calls) {
    const value = call.args[key];
    if (call.verdict === "approved" && isNumber(value) && value < refusedMin) {
      count++;
      bound = Math.max(bound, value);
    }
  }
  return count >= minApprovals ? bound : null;
}

/** Directories (`/a/`, `/a/b/`) a normalized absolute path lies under, shortest first. */
function directoriesOf(path: string): string[] {
  const parts = path.split("/");
  const dirs: string[] = [];
  for (let i = 2; i < parts.length; i++) dirs.push(`${parts.slice(0, i).join("/")}/`);
  return dirs;
}

/** `path starts with /dir/`: the widest directories with enough approvals and no refusal. */
function pathPrefixes(calls: HistoryCall[], key: string, minApprovals: number): string[] {
  const absolute = (call: HistoryCall) => {
    const value = call.args[key];
    return typeof value === "string" && value.startsWith("/") ? posix.normalize(value) : null;
  };
  const refused: string[] = [];
  const approvals = new Map<string, number>();
  for (const call of calls) {
    const path = absolute(call);
    if (path === null) continue;
    if (call.verdict !== "approved") refused.push(path);
    else for (const dir of directoriesOf(path)) approvals.set(dir, (approvals.get(dir) ?? 0) + 1);
  }
  const clean = [...approvals]
    .filter(([dir, n]) => n >= minApprovals && !refused.some((p) => p.startsWith(dir)))
    .map(([dir]) => dir)
    .sort((a, b) => a.length - b.length);
  // the widest: no chosen directory above it
  const chosen: string[] = [];
  for (const dir of clean) if (!chosen.some((top) => dir.startsWith(top))) chosen.push(dir);
  return chosen;
}

function candidates(calls: HistoryCall[], minApprovals: number): ArgPredicate[][] {
  if (calls.every((c) => c.verdict === "approved")) return [[]];
  const keys = new Set<string>();
  for (const call of calls) for (const key of Object.keys(call.args)) keys.add(key);
  const found: ArgPredicate[][] = [];
  for (const key of [...keys].sort()) {
    if (!PLAIN_KEY.test(key)) continue;
    const bound = numericBound(calls, key, minApprovals);
    if (bound !== null) found.push([{ path: key, op: "atMost", value: bound }]);
    for (const dir of pathPrefixes(calls, key, minApprovals))
      found.push([{ path: key, op: "prefix", value: dir }]);
  }
  return found;
}

const sameRule = (a: PolicyRule, b: PolicyRule) =>
  a.effect === b.effect &&
  a.agentKeyId === b.agentKeyId &&
  a.toolPattern === b.toolPattern &&
  a.costAbove === b.costAbove &&
  JSON.stringify(a.argPredicates) === JSON.stringify(b.argPredicates);

export async function mineSuggestions(
  cards: HistoryCard[],
  others: PolicyRule[],
  options: { queueId: string; minApprovals: number; now?: number },
): Promise<MinedSuggestion[]> {
  const now = options.now ?? Date.now();
  const found: MinedSuggestion[] = [];
  for (const calls of groupsOf(cards).values()) {
    const { agentKeyId, toolName } = calls[0]!;
    if (!PLAIN_TOOL.test(toolName)) continue;
    if (calls.filter((c) => c.verdict === "approved").length < options.minApprovals) continue;
    for (const argPredicates of candidates(calls, options.minApprovals)) {
      const predicate = argPredicates[0];
      const id = hash(
        JSON.stringify([
          options.queueId,
          agentKeyId,
          toolName,
          // a bound that moves is the same suggestion grown; another directory is another one
          predicate
            ? [predicate.path, predicate.op, predicate.op === "atMost" ? null : predicate.value]
            : null,
        ]),
      );
      const rule: PolicyRule = {
        id: `suggestion-${id}`,
        name: "",
        queueId: options.queueId,
        position: Number.MAX_SAFE_INTEGER,
        enabled: true,
        effect: "allow",
        agentKeyId,
        toolPattern: toolName,
        argPredicates,
        costAbove: null,
        reason: null,
        createdAt: now,
        updatedAt: now,
      };
      // the rule exists already, on or off: a lead has made their choice
      if (others.some((other) => sameRule(other, rule))) continue;
      const trial = await backtestRuleAsync(
        rule,
        others.filter((other) => other.enabled),
        cards,
      );
      const refused = trial.rejected + trial.edited + trial.expired + trial.overturned;
      if (refused > 0 || trial.approved < options.minApprovals) continue;
      const fingerprint = hash(
        JSON.stringify([id, argPredicates, Math.floor(Math.log2(trial.approved))]),
      );
      found.push({ id, fingerprint, rule, trial });
    }
  }
  return found.sort((a, b) => b.trial.approved - a.trial.approved || a.id.localeCompare(b.id));
}
