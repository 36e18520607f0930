import { describe, expect, it } from "vitest";
import type { ArgPredicate, PolicyRule } from "@/db/schema";
import { ArgPredicateInput } from "@/lib/policies/policy-input";
import {
  describePredicate,
  evaluateCall,
  predicateHolds,
  valueAt,
} from "@/lib/policies/evaluate-policy";
import { explainPredicate, explainRule } from "@/lib/policies/explain-check";

// Policies inside lists: `paths[*]` (any element), `paths[all]` (every element), and why each
// condition held or not, on which value, for "Try a call".

const demoDelete = {
  toolName: "delete_files",
  args: {
    paths: ["src/checkout/legacy/", "scripts/backfill-2023.ts", ".env.staging"],
    files: [{ path: "/tmp/a" }, { path: "/output/b" }],
  },
};

const p = (path: string, op: ArgPredicate["op"], value: unknown) =>
  ({ path, op, value }) as ArgPredicate;

function rule(overrides: Partial<PolicyRule>): PolicyRule {
  return {
    id: "r1",
    name: "No env files",
    queueId: "q1",
    position: 0,
    enabled: true,
    effect: "deny",
    agentKeyId: null,
    toolPattern: "delete_*",
    argPredicates: [],
    costAbove: null,
    reason: null,
    createdAt: 0,
    updatedAt: 0,
    ...overrides,
  };
}

describe("list paths", () => {
  it("are accepted by the rule's input schema, and nothing else new is", () => {
    for (const path of ["paths[*]", "paths[all]", "files[*].path", "$.files[all].path", "a[0]"])
      expect(ArgPredicateInput.safeParse({ path, op: "glob", value: "*" }).success).toBe(true);
    for (const path of ["paths[]", "paths[any]", "paths[*", "paths.*", "paths[-1]"])
      expect(ArgPredicateInput.safeParse({ path, op: "glob", value: "*" }).success).toBe(false);
  });

  it.each([
    [p("paths[*]", "glob", "*.env*"), true],
    [p("paths[*]", "glob", "*.secret"), false],
    [p("paths[all]", "glob", "*.env*"), false],
    [p("paths[all]", "glob", "*"), true],
    [p("paths[*]", "prefix", "scripts/"), true],
    [p("paths[*]", "equals", ".env.staging"), true],
    [p("files[*].path", "prefix", "/output/"), true],
    [p("files[all].path", "prefix", "/output/"), false],
    [p("files[all].path", "prefix", "/"), true],
    // a bare path compares the whole list: only equals can match it
    [p("paths", "glob", "*.env*"), false],
    [p("paths", "equals", demoDelete.args.paths), true],
    // a quantifier where there is no list, or an empty one: no match
    [p("files[*]", "equals", "x"), false],
    [p("files[0].path[*]", "glob", "*"), false],
  ])("%j → %s", (predicate, holds) => {
    expect(predicateHolds(predicate, demoDelete.args)).toBe(holds);
  });

  it("an empty list matches neither any nor every", () => {
    const args = { paths: [] };
    expect(predicateHolds(p("paths[*]", "glob", "*"), args)).toBe(false);
    expect(predicateHolds(p("paths[all]", "glob", "*"), args)).toBe(false);
  });

  it("valueAt names no single value through a quantifier", () => {
    expect(valueAt(demoDelete.args, "paths[*]")).toBeUndefined();
    expect(valueAt(demoDelete.args, "paths[2]")).toBe(".env.staging");
  });

  it("the demo's delete_files is blocked by deny delete_* where paths[*] matches *.env*", () => {
    const deny = rule({ argPredicates: [p("paths[*]", "glob", "*.env*")] });
    const verdict = evaluateCall([deny], demoDelete, { agentKeyId: "a1", agentMode: "ask" });
    expect(verdict.outcome).toBe("blocked");
    expect(describePredicate(deny.argPredicates[0]!)).toBe(
      'paths[*] (any element) matches "*.env*"',
    );
  });

  it("an allow rule over every element does not let one outside path through", () => {
    const allow = rule({
      effect: "allow",
      argPredicates: [p("files[all].path", "prefix", "/tmp/")],
    });
    const verdict = evaluateCall([allow], demoDelete, { agentKeyId: "a1", agentMode: "ask" });
    expect(verdict.outcome).toBe("review");
  });
});

describe("why a condition held or not", () => {
  it.each([
    [
      p("paths", "glob", "*.env*"),
      'paths is a list ("src/checkout/legacy/", "scripts/backfill-2023.ts", ".env.staging"): write paths[*] to match any element, or paths[all] to match every element',
    ],
    [p("paths[*]", "glob", "*.env*"), '".env.staging" matches "*.env*" (1 of 3)'],
    [
      p("paths[*]", "glob", "*.secret"),
      'none of "src/checkout/legacy/", "scripts/backfill-2023.ts", ".env.staging" matches "*.secret"',
    ],
    [
      p("paths[all]", "prefix", "src/"),
      '"scripts/backfill-2023.ts", ".env.staging" do not start with "src/"',
    ],
    [p("files[all].path", "prefix", "/"), 'all 2 ("/tmp/a", "/output/b") start with "/"'],
    [p("missing.deep", "equals", 1), "the call's args have no missing"],
    [p("files[0].path[*]", "glob", "*"), 'files[0].path is "/tmp/a", not a list'],
    [
      p("files[0].path", "glob", "/output/*"),
      'files[0].path is "/tmp/a", which does not match "/output/*"',
    ],
  ])("%j: %s", (predicate, why) => {
    expect(explainPredicate(predicate, demoDelete.args)).toBe(why);
  });

  it("one line per condition, in the order the rule's conditions are checked", () => {
    const full = rule({
      agentKeyId: "a2",
      argPredicates: [p("paths[*]", "glob", "*.env*")],
      costAbove: 10,
    });
    expect(
      explainRule(full, demoDelete, { agentKeyId: "a1", agentNames: new Map([["a1", "Ops bot"]]) }),
    ).toEqual([
      "the call's agent is Ops bot",
      null,
      '".env.staging" matches "*.env*" (1 of 3)',
      "the call has no cost estimate (counted as 0)",
    ]);
  });
});
