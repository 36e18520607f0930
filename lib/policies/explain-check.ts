import type { ArgPredicate, PolicyRule } from "@/db/schema";
import { pathSteps, predicateTest, type PathStep, type PolicyCall } from "./evaluate-policy";

// Why each condition of a rule held or not, on which value: for "Try a call" only (a person reads
// it), so the evaluation on the write path of every pause (evaluate-policy.ts) stays as cheap as
// it was. The lines come in the order checkRule lists the conditions: agent, tool, each argument
// predicate, cost.

const SHOWN_VALUES = 5;
const SHOWN_CHARACTERS = 80;

/** A value as a person reads it in one line: JSON, cut short. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? "undefined";
  return text.length > SHOWN_CHARACTERS ? `${text.slice(0, SHOWN_CHARACTERS - 1)}…` : text;
}

function shownList(values: unknown[]): string {
  const listed = values.slice(0, SHOWN_VALUES).map(shown).join(", ");
  return values.length > SHOWN_VALUES
    ? `${listed} and ${values.length - SHOWN_VALUES} more`
    : listed;
}

function keyAt(value: unknown, key: string): unknown {
  if (value === null || typeof value !== "object" || !Object.hasOwn(value, key)) return undefined;
  return (value as Record<string, unknown>)[key];
}

/** The path written up to (not including) step `index`, for messages. */
function pathUpTo(steps: PathStep[], index: number): string {
  return steps
    .slice(0, index)
    .map((step, i) =>
      typeof step !== "string"
        ? step.each === "any"
          ? "[*]"
          : "[all]"
        : /^\d+$/.test(step)
          ? `[${step}]`
          : i === 0
            ? step
            : `.${step}`,
    )
    .join("");
}

type Walk = { values: unknown[]; missing: string | null; notList: string | null };

/** Every value a (possibly quantified) path reaches, or where the walk stopped and why. */
function walk(args: unknown, steps: PathStep[]): Walk {
  let values: unknown[] = [args];
  for (const [index, step] of steps.entries()) {
    if (typeof step === "string") {
      values = values.map((value) => keyAt(value, step)).filter((value) => value !== undefined);
      if (values.length === 0)
        return { values, missing: pathUpTo(steps, index + 1), notList: null };
    } else {
      const lists = values.filter(Array.isArray);
      if (lists.length === 0)
        return {
          values,
          missing: null,
          notList: `${pathUpTo(steps, index)} is ${shown(values[0])}, not a list`,
        };
      values = lists.flat();
    }
  }
  return { values, missing: null, notList: null };
}

const VERBS = {
  equals: { one: "equals", many: "equal", not: "does not equal", notMany: "do not equal" },
  prefix: {
    one: "starts with",
    many: "start with",
    not: "does not start with",
    notMany: "do not start with",
  },
  glob: { one: "matches", many: "match", not: "does not match", notMany: "do not match" },
  atMost: { one: "is at most", many: "are at most", not: "is above", notMany: "are above" },
} as const;

export function explainPredicate(predicate: ArgPredicate, args: Record<string, unknown>): string {
  const steps = pathSteps(predicate.path);
  const quantifier = steps.find((step) => typeof step !== "string");
  const { values, missing, notList } = walk(args, steps);
  if (missing) return `the call's args have no ${missing}`;
  if (notList) return notList;
  const test = predicateTest(predicate);
  const verb = VERBS[predicate.op];
  const expected = shown(predicate.value);
  if (!quantifier) {
    const value = values[0];
    if (Array.isArray(value) && predicate.op !== "equals")
      return (
        `${predicate.path} is a list (${shownList(value)}): write ${predicate.path}[*] to match ` +
        `any element, or ${predicate.path}[all] to match every element`
      );
    if (predicate.op === "atMost" && typeof value !== "number")
      return `${predicate.path} is ${shown(value)}, not a number`;
    if (predicate.op !== "equals" && predicate.op !== "atMost" && typeof value !== "string")
      return `${predicate.path} is ${shown(value)}, not text`;
    return `${predicate.path} is ${shown(value)}, which ${test(value) ? verb.one : verb.not} ${expected}`;
  }
  if (values.length === 0) return `${pathUpTo(steps, steps.indexOf(quantifier))} is an empty list`;
  const passing = values.filter(test);
  const failing = values.filter((value) => !test(value));
  if (quantifier.each === "any")
    return passing.length > 0
      ? `${shownList(passing)} ${passing.length === 1 ? verb.one : verb.many} ${expected} (${passing.length} of ${values.length})`
      : `none of ${shownList(values)} ${verb.one} ${expected}`;
  return failing.length === 0
    ? `all ${values.length} (${shownList(values)}) ${verb.many} ${expected}`
    : `${shownList(failing)} ${failing.length === 1 ? verb.not : verb.notMany} ${expected}`;
}

/** One line per condition of `rule`, in checkRule's order, saying what the call had there (null: the condition says it). */
export function explainRule(
  rule: PolicyRule,
  call: PolicyCall,
  context: { agentKeyId: string; agentNames?: Map<string, string> },
): (string | null)[] {
  const lines: (string | null)[] = [];
  if (rule.agentKeyId)
    lines.push(
      context.agentKeyId === ""
        ? "no agent was given"
        : `the call's agent is ${context.agentNames?.get(context.agentKeyId) ?? context.agentKeyId}`,
    );
  // the tool's condition already names the call's tool: nothing to add
  if (rule.toolPattern) lines.push(null);
  for (const predicate of rule.argPredicates) lines.push(explainPredicate(predicate, call.args));
  if (rule.costAbove !== null)
    lines.push(
      call.costEstimate === undefined || call.costEstimate === null
        ? "the call has no cost estimate (counted as 0)"
        : `the cost estimate is ${call.costEstimate}`,
    );
  return lines;
}
