import { describe, expect, it } from "vitest";
import {
  conflictText,
  decisionText,
  describeDecision,
  editorOf,
  summarizeVotes,
  timeoutRuleText,
} from "@/components/review-card/decision-text";
import { formatCost, formatRemaining } from "@/components/review-card/format";
import { parseJsonText } from "@/components/review-card/json-parse";
import { diffLines, foldUnchanged } from "@/components/review-card/line-diff";
import {
  NOW,
  byPolicy,
  dana,
  decision,
  iso,
  makeCall,
  sam,
  scratchRule,
} from "./review-card-fixtures";

describe("decisionText", () => {
  it("leaves the time out where the row beside it already shows it (an unsent draft)", () => {
    expect(describeDecision(decision(), null).headline).toBe("Approved by Dana");
    expect(describeDecision(decision({ outcome: "rejected" }), null, dana.id).headline).toBe(
      "Rejected by you",
    );
  });

  it("names the reviewer and how long ago", () => {
    expect(decisionText(decision(), NOW)).toBe("Approved by Dana, 4 s ago");
    expect(decisionText(decision(), NOW, dana.id)).toBe("Approved by you, 4 s ago");
    expect(decisionText(decision({ by: null }), NOW)).toBe("Approved by a reviewer, 4 s ago");
  });

  it("quotes a rejection's reason", () => {
    const text = decisionText(
      decision({ outcome: "rejected", by: sam, reason: "Refund exceeds policy" }),
      NOW,
    );
    expect(text).toBe("Rejected by Sam, 4 s ago: Refund exceeds policy");
  });

  it("says when an approval was of edited args", () => {
    const text = decisionText(decision({ editedArgs: { amount: 10 } }), NOW);
    expect(text).toBe("Approved with edits by Dana, 4 s ago");
  });

  it("words policy, memory and timeout decisions", () => {
    expect(
      decisionText(decision({ source: "policy", by: null, reason: "refunds under $50" }), NOW),
    ).toBe("Allowed by policy, 4 s ago: refunds under $50");
    expect(decisionText(decision({ source: "policy", outcome: "rejected", by: null }), NOW)).toBe(
      "Blocked by policy, 4 s ago",
    );
    expect(decisionText(decision({ source: "memory", scope: "run" }), NOW)).toBe(
      "Approved automatically, 4 s ago",
    );
    expect(
      decisionText(
        decision({
          source: "timeout",
          outcome: "rejected",
          by: null,
          reason: "No decision before the deadline; rejected (onTimeout: reject).",
          at: new Date(NOW - 180_000).toISOString(),
        }),
        NOW,
      ),
    ).toBe("Rejected automatically at the deadline, 3 min ago");
    expect(decisionText(decision({ source: "timeout", by: null }), NOW)).toBe(
      "Approved automatically at the deadline, 4 s ago",
    );
  });

  it("names the policy rule or the agent's mode that settled a call", () => {
    expect(decisionText(byPolicy(), NOW)).toBe("Allowed by policy 'Scratch writes', 4 s ago");
    // Mode allow approves what a rule would have sent to a reviewer: the mode is the cause.
    const askRule = { ...scratchRule, name: "Refunds need a human" };
    expect(decisionText(byPolicy({ effect: "ask", rule: askRule, agentMode: "allow" }), NOW)).toBe(
      "Approved: the agent's mode is allow, 4 s ago",
    );
    expect(decisionText(byPolicy({ effect: "ask", rule: null, agentMode: "allow" }), NOW)).toBe(
      "Approved: the agent's mode is allow, 4 s ago",
    );
    // ...but where an allow rule matched too, the rule alone would have approved it.
    expect(decisionText(byPolicy({ agentMode: "allow" }), NOW)).toBe(
      "Allowed by policy 'Scratch writes', 4 s ago",
    );
    expect(decisionText(byPolicy({ rule: null, agentMode: "off" }), NOW)).toBe(
      "Approved: the agent's gate is off, 4 s ago",
    );
  });

  it("words a mode-deny rejection without repeating the server's reason", () => {
    const denied = byPolicy(
      { effect: "ask", rule: null, agentMode: "deny" },
      {
        outcome: "rejected",
        reason:
          "Not approved: this agent's mode is deny, so calls that need a reviewer are rejected.",
      },
    );
    expect(describeDecision(denied, NOW)).toEqual({
      headline: "Rejected: the agent's mode is deny, 4 s ago",
      reason: null,
      detail: "The agent's mode rejects its calls that would need a reviewer.",
    });
    expect(describeDecision(byPolicy({ rule: null, agentMode: "off" }), NOW).detail).toBe(
      "The agent's gate is off: its calls are approved without review.",
    );
  });

  it("quotes a blocking rule's reason (admin views; reviewers never see blocked calls)", () => {
    const blocked = byPolicy(
      { effect: "deny", blocked: true, rule: { ...scratchRule, name: "No prod writes" } },
      { outcome: "rejected", reason: "Blocked by policy rule 'No prod writes'. Do not retry." },
    );
    expect(decisionText(blocked, NOW)).toBe(
      "Blocked by policy 'No prod writes', 4 s ago: Blocked by policy rule 'No prod writes'. Do not retry.",
    );
  });

  it("keeps a memory decision's wording", () => {
    expect(describeDecision(decision({ source: "memory", scope: "run" }), NOW, sam.id)).toEqual({
      headline: "Approved automatically, 4 s ago",
      reason: null,
      detail: "Dana approved the same action earlier in this run.",
    });
  });

  it("describes the deadline rule before it applies", () => {
    expect(timeoutRuleText("reject")).toBe("Rejected automatically at the deadline");
    expect(timeoutRuleText("approve")).toBe("Approved automatically at the deadline");
    expect(timeoutRuleText("escalate")).toBe("Escalated at the deadline");
  });
});

describe("conflictText", () => {
  it("derives 'already decided' from the current call's decision", () => {
    const call = makeCall({ status: "approved", decision: decision() });
    expect(conflictText("already_decided", call, "server text", NOW)).toBe(
      "Already decided: Approved by Dana, 4 s ago.",
    );
  });

  it("points at the new revision when the call changed", () => {
    expect(conflictText("stale_revision", makeCall({ revision: 3 }), "x", NOW)).toBe(
      "This call changed since you loaded it — review the new version (revision 3).",
    );
  });

  it("says how a call was settled once it is, even after a stale_revision", () => {
    const call = makeCall({
      status: "rejected",
      decision: decision({ outcome: "rejected", by: sam }),
    });
    expect(conflictText("stale_revision", call, "x", NOW)).toBe(
      "Already decided: Rejected by Sam, 4 s ago.",
    );
  });

  it("falls back to the server's message when the call is still pending", () => {
    expect(
      conflictText("already_decided", makeCall(), "You already voted on revision 1.", NOW),
    ).toBe("You already voted on revision 1.");
  });
});

describe("summarizeVotes", () => {
  it("counts approvals of the current revision only", () => {
    const call = makeCall({
      requiredApprovals: 2,
      revision: 2,
      votes: [
        { reviewer: sam, outcome: "approved", revision: 1, at: new Date(NOW).toISOString() },
        { reviewer: dana, outcome: "approved", revision: 2, at: new Date(NOW).toISOString() },
      ],
    });
    const votes = summarizeVotes(call, dana.id);
    expect(votes.tally).toBe("1 of 2 approvals");
    expect(votes.approvers.map((v) => v.reviewer.name)).toEqual(["Dana"]);
    expect(votes.superseded.map((v) => v.reviewer.name)).toEqual(["Sam"]);
    expect(votes.viewerVoted).toBe(true);
    expect(summarizeVotes(call, sam.id).viewerVoted).toBe(false);
  });
});

describe("editorOf", () => {
  it("is the first approver of the last revision, not the reviewer who completed a quorum", () => {
    const call = makeCall({
      revision: 2,
      requiredApprovals: 2,
      votes: [
        { reviewer: dana, outcome: "approved", revision: 1, at: iso(-9_000) },
        { reviewer: sam, outcome: "approved", revision: 2, at: iso(-8_000) },
        { reviewer: dana, outcome: "approved", revision: 2, at: iso(-4_000) },
      ],
      decision: decision({ by: dana, editedArgs: { orderId: "A-1", amount: 5 } }),
    });
    expect(editorOf(call)).toEqual(sam);
    expect(editorOf(makeCall({ decision: decision() }))).toEqual(dana);
  });
});

describe("formatting", () => {
  it("formats costs as USD", () => {
    expect(formatCost(12.5)).toBe("$12.50");
    expect(formatCost(1250000)).toBe("$1,250,000.00");
    expect(formatCost(0.0035)).toBe("$0.0035");
    expect(formatCost(0)).toBe("$0.00");
  });

  it("formats the time left", () => {
    expect(formatRemaining(299_001)).toBe("5:00");
    expect(formatRemaining(59_000)).toBe("0:59");
    expect(formatRemaining(3_723_000)).toBe("1:02:03");
    expect(formatRemaining(2 * 86_400_000 + 3 * 3_600_000)).toBe("2 d 3 h");
  });
});

describe("parseJsonText", () => {
  it("parses valid JSON", () => {
    expect(parseJsonText('{"a": [1, true, null]}')).toEqual({
      ok: true,
      value: { a: [1, true, null] },
    });
  });

  it("reports where and why invalid JSON fails", () => {
    const result = parseJsonText('{\n  "a": 1,\n  "b": \n}');
    expect(result).toMatchObject({ ok: false, line: 4, column: 1 });
    if (!result.ok)
      expect(result.message).toBe('Unexpected "}": expected a value at line 4, column 1');
    expect(parseJsonText('{"a": 1,}')).toMatchObject({
      ok: false,
      message: "Trailing comma is not allowed at line 1, column 8",
    });
    expect(parseJsonText("{'a': 1}")).toMatchObject({ ok: false, column: 2 });
    expect(parseJsonText('{"a": "x')).toMatchObject({
      ok: false,
      message: "Unterminated string at line 1, column 7",
    });
    expect(parseJsonText('{"a": 1} x')).toMatchObject({ ok: false, column: 10 });
    expect(parseJsonText("")).toMatchObject({ ok: false, line: 1, column: 1 });
  });
});

describe("diffLines", () => {
  it("marks changed lines and keeps the rest", () => {
    const diff = diffLines("a\nb\nc\nd", "a\nB\nc\nd\ne");
    expect(diff).toEqual([
      { kind: "same", text: "a" },
      { kind: "removed", text: "b" },
      { kind: "added", text: "B" },
      { kind: "same", text: "c" },
      { kind: "same", text: "d" },
      { kind: "added", text: "e" },
    ]);
  });

  it("folds long unchanged runs", () => {
    const before = Array.from({ length: 50 }, (_, i) => `line ${i}`).join("\n");
    const after = before.replace("line 25", "LINE 25");
    const hunks = foldUnchanged(diffLines(before, after), 2);
    expect(hunks.map((h) => h.kind)).toEqual(["gap", "lines", "gap"]);
    expect(hunks[0]).toEqual({ kind: "gap", count: 23 });
  });

  it("stays fast on a huge replacement", () => {
    const before = Array.from({ length: 5000 }, (_, i) => `a${i}`).join("\n");
    const after = Array.from({ length: 5000 }, (_, i) => `b${i}`).join("\n");
    const started = performance.now();
    const diff = diffLines(before, after);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(diff.filter((l) => l.kind === "removed")).toHaveLength(5000);
  });
});
