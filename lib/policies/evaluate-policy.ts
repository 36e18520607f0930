import { posix } from "node:path";
import type {
  AgentMode,
  ArgPredicate,
  PolicyDecision,
  PolicyEffect,
  PolicyRule,
} from "@/db/schema";
import { toolPatternMatches } from "@/lib/routing/match-rule";

// Which calls need a human at all. Pure: the same rules and call always give the same answer,
// so the "try a call" box, batch creation and the tests share this one function.
//
// Precedence, when several enabled rules match a call:
//   1. the strongest effect wins: deny over ask over allow (nothing can un-block a call);
//   2. among rules of that effect, the most specific is the one recorded: the most conditions
//      set (agent, tool pattern, each argument predicate, cost threshold);
//   3. then a queue's own rule before a rule that applies everywhere;
//   4. then the order the rules are listed in (position).
// No rule matching means `ask`: a reviewer decides.

export type PolicyCall = {
  toolName: string;
  args: Record<string, unknown>;
  costEstimate?: number | null;
  /** `metadata.mcp.server` names the MCP server a gateway call goes to (see mcpToolName) */
  metadata?: Record<string, unknown> | null;
};

/**
 * `server.tool` for a call the MCP gateway (lib/mcp-gateway) put through: its tool name is the
 * upstream's own (`write_file`), and a tool pattern may name the server too (`filesystem.write_*`).
 */
export function mcpToolName(call: PolicyCall): string | null {
  const mcp = call.metadata?.mcp;
  const server = mcp && typeof mcp === "object" ? (mcp as { server?: unknown }).server : undefined;
  return typeof server === "string" && server !== "" ? `${server}.${call.toolName}` : null;
}

export type EvaluationContext = {
  agentKeyId: string;
  agentMode: AgentMode;
  /** names to explain agent conditions with (the try box); ids are shown otherwise */
  agentNames?: Map<string, string>;
};

export type RuleCheck = {
  rule: PolicyRule;
  matched: boolean;
  /** one line per condition: what was checked and whether it held */
  reasons: { condition: string; held: boolean }[];
};

export type PolicyVerdict = {
  /** what happens to the call: approved or blocked/rejected at once, or sent to a reviewer */
  outcome: "approved" | "blocked" | "rejected" | "review";
  effect: PolicyEffect;
  /** the deciding rule; null when none matched (the default `ask`) or the mode decided */
  rule: PolicyRule | null;
  agentMode: AgentMode;
  /** every rule considered, in precedence order, with why it did or did not match */
  checks: RuleCheck[];
  explanation: string;
};

const SEVERITY: Record<PolicyEffect, number> = { deny: 3, ask: 2, allow: 1 };

export function specificity(rule: PolicyRule): number {
  return (
    (rule.agentKeyId ? 1 : 0) +
    (rule.toolPattern ? 1 : 0) +
    rule.argPredicates.length +
    (rule.costAbove !== null ? 1 : 0)
  );
}

/** Rules in precedence order: the first matching one decides. */
export function byPrecedence(rules: PolicyRule[]): PolicyRule[] {
  return [...rules].sort(
    (a, b) =>
      SEVERITY[b.effect] - SEVERITY[a.effect] ||
      specificity(b) - specificity(a) ||
      Number(b.queueId !== null) - Number(a.queueId !== null) ||
      a.position - b.position ||
      a.createdAt - b.createdAt,
  );
}

/** A step of an argument path: a key, a list index, or a list quantifier (`[*]` any, `[all]` every). */
export type PathStep = string | { each: "any" | "all" };

/** `a.b`, `files[0].path`, `paths[*]`, `files[all].path`, an optional leading `$.`: its steps. */
export function pathSteps(path: string): PathStep[] {
  return path
    .replace(/^\$\.?/, "")
    .split(/\.|\[(\d+|\*|all)\]/)
    .filter((step) => step !== undefined && step !== "")
    .map((step) => (step === "*" ? { each: "any" } : step === "all" ? { each: "all" } : step));
}

/** Whether `path` holds a list quantifier (`[*]` or `[all]`): then it names several values. */
export function isListPath(path: string): boolean {
  return pathSteps(path).some((step) => typeof step !== "string");
}

function stepInto(value: unknown, step: string): unknown {
  if (value === null || typeof value !== "object") return undefined;
  if (!Object.hasOwn(value, step)) return undefined;
  return (value as Record<string, unknown>)[step];
}

/** The value at `path` in `args` (`a.b`, `files[0].path`, an optional leading `$.`), or undefined. */
export function valueAt(args: unknown, path: string): unknown {
  let value: unknown = args;
  for (const step of pathSteps(path)) {
    if (typeof step !== "string") return undefined; // a quantified path names no single value
    value = stepInto(value, step);
  }
  return value;
}

/**
 * Whether `test` holds at `path`: through `[*]` for at least one element of the list there,
 * through `[all]` for every element of a non-empty list (an empty one matches neither: a rule
 * about a call's files says nothing about a call with none). Not a list where a quantifier
 * stands: no match. Each element is visited once, so the cost stays linear in the args.
 */
function holdsAt(value: unknown, steps: PathStep[], test: (value: unknown) => boolean): boolean {
  const [step, ...rest] = steps;
  if (step === undefined) return test(value);
  if (typeof step === "string") {
    const next = stepInto(value, step);
    return next !== undefined && holdsAt(next, rest, test);
  }
  if (!Array.isArray(value) || value.length === 0) return false;
  return step.each === "any"
    ? value.some((element) => holdsAt(element, rest, test))
    : value.every((element) => holdsAt(element, rest, test));
}

/**
 * An absolute path is normalized before it is compared, so `/scratch/../output/x` is judged
 * as `/output/x`, and cannot slip under an allow rule for `/scratch/`.
 */
function comparable(value: string): string {
  return value.startsWith("/") ? posix.normalize(value) : value;
}

function globRegExp(pattern: string): RegExp {
  const source = [...pattern]
    .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${source}$`, "s");
}

/** `*` any run of characters, `?` one character; the rest matches itself. */
export function globMatches(pattern: string, text: string): boolean {
  return globRegExp(pattern).test(text);
}

/** The test a predicate makes of one value (the glob compiled once, however many list elements). */
export function predicateTest(predicate: ArgPredicate): (actual: unknown) => boolean {
  if (predicate.op === "equals") return (actual) => canonicalEquals(actual, predicate.value);
  if (predicate.op === "atMost") {
    const bound = predicate.value;
    if (typeof bound !== "number") return () => false;
    return (actual) => typeof actual === "number" && Number.isFinite(actual) && actual <= bound;
  }
  const expected = predicate.value;
  if (typeof expected !== "string") return () => false;
  const glob = predicate.op === "glob" ? globRegExp(expected) : null;
  return (actual) => {
    if (typeof actual !== "string") return false;
    const text = comparable(actual);
    return glob ? glob.test(text) : text.startsWith(expected);
  };
}

export function predicateHolds(predicate: ArgPredicate, args: Record<string, unknown>): boolean {
  return holdsAt(args, pathSteps(predicate.path), predicateTest(predicate));
}

function canonicalEquals(a: unknown, b: unknown): boolean {
  if (a === undefined) return false;
  if (typeof a === "string" && typeof b === "string") return comparable(a) === comparable(b);
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}

export function describePredicate(predicate: ArgPredicate): string {
  const verb = { equals: "is", prefix: "starts with", glob: "matches", atMost: "is at most" }[
    predicate.op
  ];
  const steps = pathSteps(predicate.path);
  const each = steps.find((step) => typeof step !== "string");
  const which = !each ? "" : each.each === "any" ? " (any element)" : " (every element)";
  return `${predicate.path}${which} ${verb} ${JSON.stringify(predicate.value)}`;
}

export function checkRule(
  rule: PolicyRule,
  call: PolicyCall,
  context: Pick<EvaluationContext, "agentKeyId" | "agentNames">,
): RuleCheck {
  const reasons: RuleCheck["reasons"] = [];
  if (rule.agentKeyId)
    reasons.push({
      condition: `agent is ${context.agentNames?.get(rule.agentKeyId) ?? rule.agentKeyId}`,
      held: rule.agentKeyId === context.agentKeyId,
    });
  if (rule.toolPattern) {
    const qualified = mcpToolName(call);
    reasons.push({
      condition: `tool ${qualified ?? call.toolName} matches ${rule.toolPattern}`,
      held:
        toolPatternMatches(rule.toolPattern, call.toolName) ||
        (qualified !== null && toolPatternMatches(rule.toolPattern, qualified)),
    });
  }
  for (const predicate of rule.argPredicates)
    reasons.push({
      condition: describePredicate(predicate),
      held: predicateHolds(predicate, call.args),
    });
  if (rule.costAbove !== null)
    reasons.push({
      condition: `cost estimate above ${rule.costAbove}`,
      held: (call.costEstimate ?? 0) > rule.costAbove,
    });
  return { rule, matched: rule.enabled && reasons.every((r) => r.held), reasons };
}

/**
 * What happens to one call under the given rules (the queue's and the global ones) and the
 * agent's mode. Modes: `off` approves everything without looking; `allow` approves all that no
 * rule blocks; `deny` rejects all that would reach a reviewer; `ask` follows the rules.
 */
export function evaluateCall(
  rules: PolicyRule[],
  call: PolicyCall,
  context: EvaluationContext,
): PolicyVerdict {
  const mode = context.agentMode;
  const checks = byPrecedence(rules).map((rule) => checkRule(rule, call, context));
  if (mode === "off") {
    return verdict("approved", "allow", null, mode, checks, "The agent's gate is off.");
  }
  const winner = checks.find((check) => check.matched)?.rule ?? null;
  const effect = winner?.effect ?? "ask";
  const named = winner ? `rule '${winner.name}'` : "no rule (the default is ask)";
  if (effect === "deny")
    return verdict("blocked", "deny", winner, mode, checks, `Blocked by ${named}.`);
  if (mode === "allow")
    return verdict("approved", effect, winner, mode, checks, "The agent's mode is allow.");
  if (effect === "allow")
    return verdict("approved", "allow", winner, mode, checks, `Allowed by ${named}.`);
  if (mode === "deny")
    return verdict(
      "rejected",
      "ask",
      winner,
      mode,
      checks,
      `It would need a reviewer (${named}), and the agent's mode is deny.`,
    );
  return verdict("review", "ask", winner, mode, checks, `A reviewer decides: ${named}.`);
}

function verdict(
  outcome: PolicyVerdict["outcome"],
  effect: PolicyEffect,
  rule: PolicyRule | null,
  agentMode: AgentMode,
  checks: RuleCheck[],
  explanation: string,
): PolicyVerdict {
  return { outcome, effect, rule, agentMode, checks, explanation };
}

/** What is stored on a call a policy settled (a copy: the rule may later change or go). */
export function policyDecision(v: PolicyVerdict): PolicyDecision {
  return {
    effect: v.effect,
    rule: v.rule ? { id: v.rule.id, name: v.rule.name, queueId: v.rule.queueId } : null,
    agentMode: v.agentMode,
    blocked: v.outcome === "blocked",
  };
}
