import type { RoutingRule } from "@/db/schema";

export type RoutableBatch = {
  agentKeyId: string;
  calls: { toolName: string; costEstimate?: number | null }[];
};

/** Compiled patterns: a backtest matches one pattern against tens of thousands of calls. */
const compiled = new Map<string, RegExp>();

/** `*` stands for any run of characters; everything else matches itself. */
export function toolPatternMatches(pattern: string, toolName: string): boolean {
  let regExp = compiled.get(pattern);
  if (!regExp) {
    const source = pattern
      .split("*")
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*");
    regExp = new RegExp(`^${source}$`);
    // a bounded cache: patterns come from rules, few; never let it grow without end
    if (compiled.size >= 1000) compiled.clear();
    compiled.set(pattern, regExp);
  }
  return regExp.test(toolName);
}

/** Every condition a rule sets must hold; a condition left empty holds for any batch. */
export function ruleMatches(rule: RoutingRule, batch: RoutableBatch): boolean {
  if (!rule.enabled) return false;
  if (rule.agentKeyId !== null && rule.agentKeyId !== batch.agentKeyId) return false;
  if (
    rule.toolPattern !== null &&
    !batch.calls.some((call) => toolPatternMatches(rule.toolPattern!, call.toolName))
  ) {
    return false;
  }
  if (rule.minCost !== null) {
    const total = batch.calls.reduce((sum, call) => sum + (call.costEstimate ?? 0), 0);
    if (total < rule.minCost) return false;
  }
  return true;
}

/** The first matching rule by position (then age), or null: the agent key's default queue. */
export function chooseRule(rules: RoutingRule[], batch: RoutableBatch): RoutingRule | null {
  const ordered = [...rules].sort((a, b) => a.position - b.position || a.createdAt - b.createdAt);
  return ordered.find((rule) => ruleMatches(rule, batch)) ?? null;
}
