import { describe, expect, it } from "vitest";
import type { AgentMode, ArgPredicate, PolicyRule } from "@/db/schema";
import {
  byPrecedence,
  evaluateCall,
  globMatches,
  predicateHolds,
  valueAt,
  type PolicyCall,
} from "@/lib/policies/evaluate-policy";

let created = 0;
function rule(name: string, overrides: Partial<PolicyRule>): PolicyRule {
  return {
    id: name,
    name,
    queueId: "q1",
    position: 10,
    enabled: true,
    effect: "ask",
    agentKeyId: null,
    toolPattern: null,
    argPredicates: [],
    costAbove: null,
    reason: null,
    createdAt: created++,
    updatedAt: 0,
    ...overrides,
  };
}

const prefix = (path: string, value: string): ArgPredicate => ({ path, op: "prefix", value });

// The team's example: writes under /scratch/ are fine, writes under /output/ need a review,
// deletes under /output/ are blocked.
const team = [
  rule("scratch writes", {
    effect: "allow",
    toolPattern: "write_file",
    argPredicates: [prefix("path", "/scratch/")],
  }),
  rule("output writes", {
    effect: "ask",
    toolPattern: "write_file",
    argPredicates: [prefix("path", "/output/")],
  }),
  rule("output deletes", {
    effect: "deny",
    toolPattern: "delete_*",
    argPredicates: [prefix("path", "/output/")],
    reason: "Output is append-only.",
  }),
];

const judge = (
  rules: PolicyRule[],
  call: PolicyCall,
  mode: AgentMode = "ask",
  agentKeyId = "agent-1",
) => evaluateCall(rules, call, { agentKeyId, agentMode: mode });

describe("policy evaluation", () => {
  it.each([
    ["write_file", { path: "/scratch/a.txt" }, "approved", "scratch writes"],
    ["write_file", { path: "/output/report.md" }, "review", "output writes"],
    ["delete_file", { path: "/output/report.md" }, "blocked", "output deletes"],
    ["delete_dir", { path: "/output/" }, "blocked", "output deletes"],
    ["delete_file", { path: "/scratch/a.txt" }, "review", null],
    ["read_file", { path: "/output/report.md" }, "review", null],
    // a path that climbs out of /scratch/ is judged where it lands
    ["write_file", { path: "/scratch/../output/x" }, "review", "output writes"],
    ["delete_file", { path: "/scratch/../output/x" }, "blocked", "output deletes"],
    // a missing or non-string argument never satisfies prefix or glob
    ["write_file", { target: "/scratch/a" }, "review", null],
    ["write_file", { path: 42 }, "review", null],
  ])("%s %j → %s by %s", (toolName, args, outcome, ruleName) => {
    const verdict = judge(team, { toolName, args });
    expect(verdict.outcome).toBe(outcome);
    expect(verdict.rule?.name ?? null).toBe(ruleName);
  });

  it("deny wins over ask, and ask over allow, whatever the order or specificity", () => {
    const rules = [
      rule("allow everything specific", {
        effect: "allow",
        toolPattern: "pay",
        argPredicates: [{ path: "currency", op: "equals", value: "EUR" }],
        costAbove: 1,
        position: 1,
      }),
      rule("ask for payments", { effect: "ask", toolPattern: "pay", position: 2 }),
    ];
    const call = { toolName: "pay", args: { currency: "EUR" }, costEstimate: 5 };
    expect(judge(rules, call).outcome).toBe("review");
    const withDeny = [...rules, rule("no payments", { effect: "deny", position: 99 })];
    expect(judge(withDeny, call)).toMatchObject({
      outcome: "blocked",
      rule: { name: "no payments" },
    });
  });

  it("among rules of one effect the most specific decides, then the queue's own, then position", () => {
    const general = rule("any refund", { effect: "allow", toolPattern: "refund_*", queueId: null });
    const specific = rule("small refunds", {
      effect: "allow",
      toolPattern: "refund_*",
      argPredicates: [{ path: "currency", op: "equals", value: "USD" }],
      queueId: null,
    });
    const call = { toolName: "refund_order", args: { currency: "USD" } };
    expect(judge([general, specific], call).rule?.name).toBe("small refunds");

    const globalTwin = rule("global twin", {
      effect: "allow",
      toolPattern: "refund_*",
      queueId: null,
      position: 1,
    });
    const queueTwin = rule("queue twin", {
      effect: "allow",
      toolPattern: "refund_*",
      queueId: "q1",
      position: 50,
    });
    expect(judge([globalTwin, queueTwin], call).rule?.name).toBe("queue twin");

    const first = rule("listed first", { effect: "allow", toolPattern: "refund_*", position: 10 });
    const second = rule("listed second", {
      effect: "allow",
      toolPattern: "refund_*",
      position: 20,
    });
    expect(judge([second, first], call).rule?.name).toBe("listed first");
    expect(byPrecedence([second, first]).map((r) => r.name)).toEqual([
      "listed first",
      "listed second",
    ]);
  });

  it("skips disabled rules, but still explains them", () => {
    const off = rule("off", { effect: "deny", toolPattern: "delete_*", enabled: false });
    const verdict = judge([off], { toolName: "delete_file", args: {} });
    expect(verdict.outcome).toBe("review");
    expect(verdict.checks).toEqual([
      expect.objectContaining({
        matched: false,
        reasons: [expect.objectContaining({ held: true })],
      }),
    ]);
  });

  it.each([
    [5, false],
    [100, false],
    [100.01, true],
    [undefined, false],
  ])("cost above 100 with an estimate of %s → %s", (costEstimate, matches) => {
    const expensive = rule("expensive", { effect: "deny", costAbove: 100 });
    const verdict = judge([expensive], { toolName: "x", args: {}, costEstimate });
    expect(verdict.outcome).toBe(matches ? "blocked" : "review");
  });

  it("matches an agent only for that agent's calls", () => {
    const bot = rule("bot only", { effect: "allow", agentKeyId: "agent-bot" });
    expect(judge([bot], { toolName: "x", args: {} }, "ask", "agent-bot").outcome).toBe("approved");
    expect(judge([bot], { toolName: "x", args: {} }, "ask", "agent-1").outcome).toBe("review");
  });

  it.each([
    // mode, tool, expected outcome
    ["off", "delete_file", "approved"],
    ["off", "write_file", "approved"],
    ["allow", "delete_file", "blocked"],
    ["allow", "read_file", "approved"],
    ["deny", "read_file", "rejected"],
    ["deny", "write_file", "approved"],
    ["deny", "delete_file", "blocked"],
    ["ask", "read_file", "review"],
  ] as const)("agent mode %s: %s → %s", (mode, toolName, outcome) => {
    const path = toolName === "write_file" ? "/scratch/a" : "/output/a";
    expect(judge(team, { toolName, args: { path } }, mode).outcome).toBe(outcome);
  });
});

describe("argument predicates", () => {
  const args = {
    path: "/output/a.csv",
    options: { mode: "append", depth: 2 },
    files: [{ path: "/tmp/x" }],
  };

  it.each([
    ["path", "/output/a.csv"],
    ["$.path", "/output/a.csv"],
    ["options.mode", "append"],
    ["files[0].path", "/tmp/x"],
    ["files[1].path", undefined],
    ["options.missing.deeper", undefined],
    ["constructor", undefined],
  ])("valueAt %s", (path, expected) => {
    expect(valueAt(args, path)).toEqual(expected);
  });

  it.each([
    [{ path: "options.depth", op: "equals", value: 2 }, true],
    [{ path: "options.depth", op: "equals", value: "2" }, false],
    [{ path: "options", op: "equals", value: { depth: 2, mode: "append" } }, true],
    [{ path: "path", op: "glob", value: "/output/*.csv" }, true],
    [{ path: "path", op: "glob", value: "/output/?.csv" }, true],
    [{ path: "path", op: "glob", value: "/output/*.json" }, false],
    [{ path: "path", op: "prefix", value: "/out" }, true],
    [{ path: "options.depth", op: "prefix", value: "2" }, false],
    [{ path: "nope", op: "equals", value: null }, false],
  ] as const)("%j → %s", (predicate, holds) => {
    expect(predicateHolds(predicate as ArgPredicate, args)).toBe(holds);
  });

  it("globs treat regex characters literally", () => {
    expect(globMatches("a.b(1)", "a.b(1)")).toBe(true);
    expect(globMatches("a.b", "axb")).toBe(false);
  });
});

describe("MCP gateway calls (issue 25): a tool pattern may name the server", () => {
  const mcp = (server: string) => ({ mcp: { server, tool: `${server}.move_file` } });
  const rules = [
    rule("no moves on filesystem", {
      effect: "deny",
      toolPattern: "filesystem.move_*",
      reason: "Files stay where they are.",
    }),
    rule("reads anywhere", { effect: "allow", toolPattern: "read_*" }),
  ];

  it("matches server.tool when the call says which MCP server it goes to", () => {
    const verdict = judge(rules, { toolName: "move_file", args: {}, metadata: mcp("filesystem") });
    expect(verdict.outcome).toBe("blocked");
    expect(verdict.rule?.name).toBe("no moves on filesystem");
    expect(verdict.checks[0]!.reasons[0]!.condition).toBe(
      "tool filesystem.move_file matches filesystem.move_*",
    );
  });

  it("does not match another server's tool, nor a call without the server", () => {
    expect(judge(rules, { toolName: "move_file", args: {}, metadata: mcp("github") }).outcome).toBe(
      "review",
    );
    expect(judge(rules, { toolName: "move_file", args: {} }).outcome).toBe("review");
    expect(judge(rules, { toolName: "filesystem.move_file", args: {} }).outcome).toBe("blocked");
  });

  it("still matches the bare tool name of a gateway call", () => {
    const verdict = judge(rules, { toolName: "read_file", args: {}, metadata: mcp("filesystem") });
    expect(verdict.outcome).toBe("approved");
  });
});

describe("atMost: a numeric bound (the suggestions' `amount ≤ 20`)", () => {
  const atMost = (path: string, value: number): ArgPredicate => ({ path, op: "atMost", value });

  it("holds for a number no greater than the bound, and only for a number", () => {
    expect(predicateHolds(atMost("amount", 20), { amount: 20 })).toBe(true);
    expect(predicateHolds(atMost("amount", 20), { amount: -3.5 })).toBe(true);
    expect(predicateHolds(atMost("amount", 20), { amount: 20.01 })).toBe(false);
    expect(predicateHolds(atMost("amount", 20), { amount: "5" })).toBe(false);
    expect(predicateHolds(atMost("amount", 20), {})).toBe(false);
    expect(
      predicateHolds(atMost("items[*].price", 10), { items: [{ price: 50 }, { price: 3 }] }),
    ).toBe(true);
    expect(
      predicateHolds(atMost("items[all].price", 10), { items: [{ price: 50 }, { price: 3 }] }),
    ).toBe(false);
  });

  it("is refused without a number to compare with", async () => {
    const { ArgPredicateInput } = await import("@/lib/policies/policy-input");
    expect(ArgPredicateInput.safeParse({ path: "amount", op: "atMost", value: 20 }).success).toBe(
      true,
    );
    expect(ArgPredicateInput.safeParse({ path: "amount", op: "atMost", value: "20" }).success).toBe(
      false,
    );
  });
});
