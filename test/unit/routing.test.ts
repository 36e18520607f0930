import { describe, expect, it } from "vitest";
import type { RoutingRule } from "@/db/schema";
import { chooseRule, ruleMatches, toolPatternMatches } from "@/lib/routing/match-rule";

function rule(overrides: Partial<RoutingRule>): RoutingRule {
  return {
    id: overrides.name ?? "r",
    name: "r",
    position: 10,
    agentKeyId: null,
    toolPattern: null,
    minCost: null,
    queueId: "q",
    enabled: true,
    createdAt: 0,
    ...overrides,
  };
}

const batch = (calls: { toolName: string; costEstimate?: number | null }[], agentKeyId = "a1") => ({
  agentKeyId,
  calls,
});

describe("routing rules", () => {
  it.each([
    ["refund_*", "refund_order", true],
    ["refund_*", "issue_refund", false],
    ["*_files", "delete_files", true],
    ["github.*", "github.merge", true],
    ["github.*", "githubXmerge", false],
    ["exact", "exact", true],
    ["exact", "exactly", false],
    ["*", "anything", true],
  ])("pattern %s against %s → %s", (pattern, tool, expected) => {
    expect(toolPatternMatches(pattern, tool)).toBe(expected);
  });

  it("needs every condition it sets, and none it leaves empty", () => {
    const strict = rule({ agentKeyId: "a1", toolPattern: "refund_*", minCost: 100 });
    expect(ruleMatches(strict, batch([{ toolName: "refund_order", costEstimate: 150 }]))).toBe(
      true,
    );
    expect(ruleMatches(strict, batch([{ toolName: "refund_order", costEstimate: 50 }]))).toBe(
      false,
    );
    expect(ruleMatches(strict, batch([{ toolName: "send_email", costEstimate: 500 }]))).toBe(false);
    expect(
      ruleMatches(strict, batch([{ toolName: "refund_order", costEstimate: 150 }], "a2")),
    ).toBe(false);
    // cost is the batch's total; any call may match the pattern
    expect(
      ruleMatches(
        strict,
        batch([
          { toolName: "send_email", costEstimate: 60 },
          { toolName: "refund_order", costEstimate: 60 },
        ]),
      ),
    ).toBe(true);
    expect(ruleMatches(rule({}), batch([]))).toBe(true);
    expect(ruleMatches(rule({ enabled: false }), batch([]))).toBe(false);
  });

  it("tries rules by position, then age; no match is null (the key's default queue)", () => {
    const big = rule({ name: "big", minCost: 1000, position: 5, queueId: "big" });
    const refunds = rule({ name: "refunds", toolPattern: "refund_*", position: 10, queueId: "r" });
    const older = rule({ name: "older", toolPattern: "refund_*", position: 10, createdAt: -1 });
    const rules = [refunds, big, older];
    expect(chooseRule(rules, batch([{ toolName: "refund_order", costEstimate: 5000 }]))?.name).toBe(
      "big",
    );
    expect(chooseRule(rules, batch([{ toolName: "refund_order", costEstimate: 5 }]))?.name).toBe(
      "older",
    );
    expect(chooseRule(rules, batch([{ toolName: "send_email" }]))).toBeNull();
  });
});
