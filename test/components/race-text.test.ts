import { describe, expect, it } from "vitest";
import {
  batchRaceText,
  changesText,
  originalText,
  raceText,
  restToDecide,
  type Attempt,
  type BatchAttempt,
} from "@/components/review-card/race-text";
import type { Batch, Call, Decision } from "@/components/review-card/index";
import {
  NOW,
  dana,
  decided,
  decision,
  iso,
  makeBatch,
  makeCall,
  makePlanBatch,
  migrationPlan,
  sam,
} from "./review-card-fixtures";

// Every race pair (issue 26, item 3): what the loser tried × how the winner settled the call.
// The loser is Dana (the viewer); Sam won, 4 s ago. The call asks to refund 25 on order A-1.

const args = { orderId: "A-1", amount: 25 };
const myEdit: Attempt = { kind: "edit", editedArgs: { orderId: "A-1", amount: 30 } };

/** How Sam settled the call: the same Decision whether he clicked the row or "… all". */
const winners: Record<string, Decision> = {
  approve: decision({ by: sam }),
  "approve-all": decision({ by: sam }),
  edit: decision({ by: sam, editedArgs: { orderId: "A-1", amount: 20 } }),
  reject: decision({ by: sam, outcome: "rejected", reason: "Coupon already used." }),
  "reject-all": decision({ by: sam, outcome: "rejected", reason: "Coupon already used." }),
};

const losers: Record<string, Attempt> = {
  approve: { kind: "approve" },
  edit: myEdit,
  reject: { kind: "reject", reason: "Wrong order." },
};

const expected: Record<string, Record<string, string>> = {
  approve: {
    approve: "Your approval was not recorded: Sam approved it 4 s ago.",
    "approve-all": "Your approval was not recorded: Sam approved it 4 s ago.",
    edit: "Your approval was not recorded: Sam approved an edited version (amount 20) 4 s ago.",
    reject: "Your approval was not recorded: Sam rejected it 4 s ago.",
    "reject-all": "Your approval was not recorded: Sam rejected it 4 s ago.",
  },
  edit: {
    approve:
      "Your edit (amount 30) was not applied: Sam approved the original (amount 25) 4 s ago.",
    "approve-all":
      "Your edit (amount 30) was not applied: Sam approved the original (amount 25) 4 s ago.",
    edit: "Your edit (amount 30) was not applied: Sam approved a different edit (amount 20) 4 s ago.",
    reject: "Your edit (amount 30) was not applied: Sam rejected it 4 s ago.",
    "reject-all": "Your edit (amount 30) was not applied: Sam rejected it 4 s ago.",
  },
  reject: {
    approve: "Your rejection was not recorded: Sam approved it 4 s ago.",
    "approve-all": "Your rejection was not recorded: Sam approved it 4 s ago.",
    edit: "Your rejection was not recorded: Sam approved an edited version (amount 20) 4 s ago.",
    reject: "Your rejection was not recorded: Sam rejected it 4 s ago.",
    "reject-all": "Your rejection was not recorded: Sam rejected it 4 s ago.",
  },
};

function settled(d: Decision): Call {
  return makeCall({ args, status: d.outcome, decision: d });
}

/** One plain sentence: one final period, no doubled punctuation, nothing left unfilled. */
function expectPlain(text: string) {
  expect(text).toMatch(/^[A-Z].*[^.]\.$/);
  expect(text).not.toMatch(/\.\.|,,|: :|\s[.,:;]|undefined|null|NaN|\[object/);
  expect(text.split(": ").length).toBeLessThanOrEqual(2);
}

describe("raceText: a decision on one call lost to another reviewer", () => {
  for (const [loser, attempt] of Object.entries(losers)) {
    for (const [winner, d] of Object.entries(winners)) {
      it(`${loser} lost to ${winner}`, () => {
        const text = raceText({
          attempt,
          call: settled(d),
          code: "already_decided",
          serverMessage: "Approved by Sam 4 s ago.",
          nowMs: NOW,
          viewerId: dana.id,
          expectedRevision: 1,
        });
        expect(text).toBe(expected[loser]![winner]);
        expectPlain(text);
      });
    }
  }

  it("an edit the winner made the same way says so", () => {
    const call = settled(decision({ by: sam, editedArgs: { orderId: "A-1", amount: 30 } }));
    expect(
      raceText({ attempt: myEdit, call, code: "already_decided", serverMessage: "", nowMs: NOW }),
    ).toBe("Your edit (amount 30) was not applied: Sam approved the same edit 4 s ago.");
  });

  it("a race lost to the viewer's own other tab says 'you had already'", () => {
    const call = settled(decision({ by: dana }));
    const text = raceText({
      attempt: { kind: "reject", reason: "x" },
      call,
      code: "already_decided",
      serverMessage: "",
      nowMs: NOW,
      viewerId: dana.id,
    });
    expect(text).toBe("Your rejection was not recorded: you had already approved it 4 s ago.");
  });

  it("an edit that opened a new revision (quorum) names its editor and what changed", () => {
    const call = makeCall({
      args,
      revision: 2,
      requiredApprovals: 2,
      pendingEdit: { orderId: "A-1", amount: 20 },
      votes: [{ reviewer: sam, outcome: "approved", revision: 2, at: iso(-3_000) }],
    });
    for (const [loser, attempt] of Object.entries(losers)) {
      const text = raceText({
        attempt,
        call,
        code: "stale_revision",
        serverMessage: "This call is at revision 2; you reviewed revision 1.",
        nowMs: NOW,
        viewerId: dana.id,
        expectedRevision: 1,
      });
      expectPlain(text.replace(/; /, " "));
      expect(text, loser).toMatch(
        /: Sam edited it \(amount 20\) 3 s ago; review the edit before deciding\.$/,
      );
    }
  });

  it("says how a deadline, a policy or the agent settled the call", () => {
    const base = { attempt: { kind: "approve" } as Attempt, code: "not_pending", nowMs: NOW };
    const timeout = settled(
      decision({ source: "timeout", by: null, outcome: "rejected", reason: "Timed out." }),
    );
    expect(raceText({ ...base, call: timeout, serverMessage: "" })).toBe(
      "Your approval was not recorded: it was rejected automatically at the deadline 4 s ago.",
    );
    const cancelled = makeCall({ status: "cancelled" });
    expect(raceText({ ...base, call: cancelled, serverMessage: "" })).toBe(
      "Your approval was not recorded: the agent cancelled this request.",
    );
    const expired = makeCall({ status: "expired" });
    expect(raceText({ ...base, call: expired, serverMessage: "" })).toBe(
      "Your approval was not recorded: it expired at its deadline.",
    );
  });

  it("falls back to the server's message with one final period", () => {
    const text = raceText({
      attempt: { kind: "approve" },
      call: makeCall(),
      code: "claimed_by_other",
      serverMessage: "Sam is reviewing this card; this queue lets only them decide it meanwhile.",
      nowMs: NOW,
    });
    expect(text).toBe(
      "Your approval was not recorded: Sam is reviewing this card; this queue lets only them decide it meanwhile.",
    );
  });
});

describe("raceText: a plan's summary", () => {
  const planCall = (d: Decision) =>
    makePlanBatch(migrationPlan, { status: d.outcome, decision: d }).calls[0]!;
  const summary: Attempt = { kind: "summary", summary: "Migrate on Sunday night" };
  const cases: [string, Attempt, Decision, string][] = [
    [
      "summary lost to approve",
      summary,
      decision({ by: sam }),
      "Your summary was not applied: Sam approved the plan as proposed 4 s ago.",
    ],
    [
      "summary lost to summary",
      summary,
      decision({ by: sam, editedArgs: { ...migrationPlan, summary: "Migrate at noon" } }),
      "Your summary was not applied: Sam approved the plan with a different summary 4 s ago.",
    ],
    [
      "summary lost to reject",
      summary,
      decision({ by: sam, outcome: "rejected", reason: "Not this week." }),
      "Your summary was not applied: Sam rejected the plan 4 s ago.",
    ],
    [
      "approve lost to summary",
      { kind: "approve" },
      decision({ by: sam, editedArgs: { ...migrationPlan, summary: "Migrate at noon" } }),
      "Your approval was not recorded: Sam approved the plan with an edited summary 4 s ago.",
    ],
    [
      "reject lost to summary",
      { kind: "reject", reason: "No." },
      decision({ by: sam, editedArgs: { ...migrationPlan, summary: "Migrate at noon" } }),
      "Your rejection was not recorded: Sam approved the plan with an edited summary 4 s ago.",
    ],
    [
      "approve lost to approve",
      { kind: "approve" },
      decision({ by: sam }),
      "Your approval was not recorded: Sam approved the plan 4 s ago.",
    ],
  ];
  for (const [name, attempt, d, text] of cases) {
    it(name, () => {
      const sentence = raceText({
        attempt,
        call: planCall(d),
        code: "already_decided",
        serverMessage: "",
        nowMs: NOW,
        isPlanCall: true,
      });
      expect(sentence).toBe(text);
      expectPlain(sentence);
    });
  }
});

describe("batchRaceText: Approve all / Reject all lost", () => {
  const twoCalls = () =>
    makeBatch({
      calls: [
        makeCall({ args }),
        makeCall({ id: "call-2", toolCallId: "tc-2", toolName: "send_email", args: { to: "a" } }),
      ],
    });
  const labels = ["refund_order", "send_email"];
  const approveAll: BatchAttempt = { kind: "approve-all", count: 2 };
  const rejectAll: BatchAttempt = { kind: "reject-all", count: 2, reason: "Fraud ring." };
  const both = (d: Decision) => decided(decided(twoCalls(), d, "call-1"), d, "call-2");
  const text = (attempt: BatchAttempt, batch: Batch, code = "already_decided") =>
    batchRaceText({
      attempt,
      batch,
      code,
      serverMessage: "Nothing was decided: Approved by Sam 0 s ago.",
      nowMs: NOW,
      viewerId: dana.id,
      labels,
      expectedRevisions: { "call-1": 1, "call-2": 1 },
    });

  const cases: [string, BatchAttempt, Batch, string][] = [
    [
      "approve-all lost to approve-all",
      approveAll,
      both(decision({ by: sam })),
      "Your approval of both calls was not recorded: Sam approved both 4 s ago.",
    ],
    [
      "approve-all lost to reject-all",
      approveAll,
      both(decision({ by: sam, outcome: "rejected", reason: "coupon." })),
      "Your approval of both calls was not recorded: Sam rejected both 4 s ago.",
    ],
    [
      "reject-all lost to approve-all",
      rejectAll,
      both(decision({ by: sam })),
      "Your rejection of both calls was not recorded: Sam approved both 4 s ago.",
    ],
    [
      "reject-all lost to reject-all",
      rejectAll,
      both(decision({ by: sam, outcome: "rejected", reason: "x" })),
      "Your rejection of both calls was not recorded: Sam rejected both 4 s ago.",
    ],
    [
      "approve-all lost to one approve",
      approveAll,
      decided(twoCalls(), decision({ by: sam })),
      "Your approval of both calls was not recorded: Sam approved refund_order 4 s ago, so nothing else was decided and 1 call is still open.",
    ],
    [
      "reject-all lost to one reject",
      rejectAll,
      decided(twoCalls(), decision({ by: sam, outcome: "rejected", reason: "x" }), "call-2"),
      "Your rejection of both calls was not recorded: Sam rejected send_email 4 s ago, so nothing else was decided and 1 call is still open.",
    ],
    [
      "reject-all lost to one edit",
      rejectAll,
      decided(twoCalls(), decision({ by: sam, editedArgs: { orderId: "A-1", amount: 20 } })),
      "Your rejection of both calls was not recorded: Sam approved an edited version of refund_order (amount 20) 4 s ago, so nothing else was decided and 1 call is still open.",
    ],
    [
      "reject-all lost to the viewer's own approval",
      rejectAll,
      decided(twoCalls(), decision({ by: dana, at: iso(0) })),
      "Your rejection of both calls was not recorded: you had already approved refund_order 0 s ago, so nothing else was decided and 1 call is still open.",
    ],
  ];
  for (const [name, attempt, batch, sentence] of cases) {
    it(name, () => {
      const written = text(attempt, batch);
      expect(written).toBe(sentence);
      expectPlain(written);
    });
  }

  it("names each reviewer who settled part of it", () => {
    const three = makeBatch({
      calls: [
        makeCall({ args }),
        makeCall({ id: "call-2", toolCallId: "tc-2", toolName: "send_email", args: { to: "a" } }),
        makeCall({ id: "call-3", toolCallId: "tc-3", toolName: "close_ticket", args: {} }),
      ],
    });
    const batch = decided(
      decided(three, decision({ by: sam }), "call-1"),
      decision({ by: { id: "u-kim", name: "Kim" }, outcome: "rejected", at: iso(-2_000) }),
      "call-2",
    );
    const written = batchRaceText({
      attempt: { kind: "approve-all", count: 3 },
      batch,
      code: "already_decided",
      serverMessage: "",
      nowMs: NOW,
      labels: ["refund_order", "send_email", "close_ticket"],
    });
    expect(written).toBe(
      "Your approval of all 3 calls was not recorded: Sam approved refund_order 4 s ago and Kim rejected send_email 2 s ago, so nothing else was decided and 1 call is still open.",
    );
    expectPlain(written);
  });

  it("an edit under a quorum stops the whole batch", () => {
    const batch = twoCalls();
    batch.calls[0] = makeCall({
      args,
      revision: 2,
      requiredApprovals: 2,
      pendingEdit: { orderId: "A-1", amount: 20 },
      votes: [{ reviewer: sam, outcome: "approved", revision: 2, at: iso(-1_000) }],
    });
    expect(text(approveAll, batch, "stale_revision")).toBe(
      "Your approval of both calls was not recorded: Sam edited refund_order (amount 20) 1 s ago, so nothing was decided; review the edit before deciding.",
    );
  });

  it("a plan sent with its steps says 'the plan'", () => {
    const plan = { ...both(decision({ by: sam })), kind: "plan" as const };
    expect(text(approveAll, plan)).toBe(
      "Your approval of the plan was not recorded: Sam approved both 4 s ago.",
    );
  });

  it("drops the server's 'Nothing was decided:' and keeps one period", () => {
    const written = batchRaceText({
      attempt: rejectAll,
      batch: twoCalls(),
      code: "claimed_by_other",
      serverMessage: "Nothing was decided: Sam is reviewing this card.",
      nowMs: NOW,
      labels,
    });
    expect(written).toBe(
      "Your rejection of both calls was not recorded: Sam is reviewing this card.",
    );
  });
});

describe("restToDecide", () => {
  const two = () =>
    makeBatch({
      calls: [makeCall(), makeCall({ id: "call-2", toolCallId: "tc-2", toolName: "send_email" })],
    });
  it("offers the open calls when the viewer settled the others", () => {
    const batch = decided(two(), decision({ by: dana }));
    expect(restToDecide(batch, dana.id).map((c) => c.id)).toEqual(["call-2"]);
  });
  it("offers nothing when someone else settled a call", () => {
    expect(restToDecide(decided(two(), decision({ by: sam })), dana.id)).toEqual([]);
  });
  it("offers nothing when nothing is settled", () => {
    expect(restToDecide(two(), dana.id)).toEqual([]);
  });
});

describe("changesText / originalText", () => {
  it("lists changed keys, at most three, and removed ones", () => {
    const before = { a: 1, b: "x", c: true, d: [1], e: 5 };
    const after = { a: 2, b: "y", c: false, d: [2] };
    expect(changesText(before, after)).toBe('a 2, b "y", c false and 2 more changes');
    expect(originalText({ a: 1 }, { a: 1, note: "hi" })).toBe("no note");
    expect(changesText({ a: 1, note: "hi" }, { a: 1 })).toBe("without note");
    expect(changesText({ a: "x".repeat(50) }, { a: "y".repeat(50) })).toBe(`a "${"y".repeat(30)}…`);
  });
});
