import { describe, expect, it } from "vitest";
import { createHoldTimer, HOLD_MS } from "@/components/queue/hold-timer";
import { heldNoLongerValid } from "@/components/queue/use-held-approval";
import type { Call } from "@/components/review-card/types";
import { dana, decision, makeBatch, makeCall, sam } from "../components/review-card-fixtures";

/** A hand-driven clock and timer queue: time only moves when the test says so. */
function fakeTime() {
  let now = 1_000_000;
  let timers: { at: number; run: () => void; id: number }[] = [];
  let nextId = 1;
  return {
    now: () => now,
    setTimer: (run: () => void, ms: number) => {
      const id = nextId++;
      timers.push({ at: now + ms, run, id });
      return id;
    },
    clearTimer: (id: unknown) => {
      timers = timers.filter((t) => t.id !== id);
    },
    advance(ms: number) {
      now += ms;
      const due = timers.filter((t) => t.at <= now);
      timers = timers.filter((t) => t.at > now);
      due.forEach((t) => t.run());
    },
    pending: () => timers.length,
  };
}

function setup() {
  const time = fakeTime();
  const sent: string[] = [];
  const timer = createHoldTimer<string>({
    send: (item) => sent.push(item),
    same: (a, b) => a === b,
    now: time.now,
    setTimer: time.setTimer,
    clearTimer: time.clearTimer,
  });
  return { time, sent, timer };
}

describe("createHoldTimer", () => {
  it("sends after the window, not a millisecond before", () => {
    const { time, sent, timer } = setup();
    timer.hold("call-1");
    expect(timer.secondsLeft()).toBe(5);
    time.advance(HOLD_MS - 1);
    expect(sent).toEqual([]);
    expect(timer.secondsLeft()).toBe(1);
    time.advance(1);
    expect(sent).toEqual(["call-1"]);
    expect(timer.current()).toBeNull();
    expect(timer.secondsLeft()).toBe(0);
  });

  it("undo inside the window sends nothing, ever", () => {
    const { time, sent, timer } = setup();
    timer.hold("call-1");
    time.advance(4_999);
    expect(timer.cancel()).toBe("call-1");
    time.advance(60_000);
    expect(sent).toEqual([]);
    expect(time.pending()).toBe(0);
    expect(timer.cancel()).toBeNull();
  });

  it("holding the same call again neither sends it twice nor restarts the window", () => {
    const { time, sent, timer } = setup();
    timer.hold("call-1");
    time.advance(3_000);
    timer.hold("call-1");
    time.advance(2_000);
    expect(sent).toEqual(["call-1"]);
    time.advance(10_000);
    expect(sent).toEqual(["call-1"]);
  });

  it("holding another call sends the first at once and holds the second a full window", () => {
    const { time, sent, timer } = setup();
    timer.hold("call-1");
    time.advance(1_000);
    timer.hold("call-2");
    expect(sent).toEqual(["call-1"]);
    time.advance(4_999);
    expect(sent).toEqual(["call-1"]);
    time.advance(1);
    expect(sent).toEqual(["call-1", "call-2"]);
  });

  it("flush sends once; the timer does not send again later", () => {
    const { time, sent, timer } = setup();
    timer.hold("call-1");
    expect(timer.flush()).toBe("call-1");
    time.advance(HOLD_MS * 2);
    expect(sent).toEqual(["call-1"]);
    expect(timer.flush()).toBeNull();
  });
});

describe("heldNoLongerValid", () => {
  const intent = {
    batchId: "batch-1",
    callId: "call-1",
    label: "refund_order",
    request: {
      callId: "call-1",
      outcome: "approve" as const,
      expectedRevision: 1,
      scope: "once" as const,
    },
  };
  const batchWith = (call: Partial<Call>) => makeBatch({ calls: [makeCall(call)] });

  it("keeps a held approval while the call is pending at the revision seen", () => {
    expect(heldNoLongerValid(intent, batchWith({}), dana.id)).toBeNull();
    expect(heldNoLongerValid(intent, undefined, dana.id)).toBeNull();
  });

  it("drops it, naming who, when the call was decided elsewhere", () => {
    const rejected = batchWith({
      status: "rejected",
      decision: decision({ outcome: "rejected", by: sam, reason: "No" }),
    });
    expect(heldNoLongerValid(intent, rejected, dana.id)).toBe(
      "Not sent: refund_order was rejected by Sam meanwhile.",
    );
    const timedOut = batchWith({
      status: "rejected",
      decision: decision({ outcome: "rejected", by: null, source: "timeout" }),
    });
    expect(heldNoLongerValid(intent, timedOut, dana.id)).toBe(
      "Not sent: refund_order was rejected at its deadline meanwhile.",
    );
    expect(heldNoLongerValid(intent, batchWith({ status: "cancelled" }), dana.id)).toBe(
      "Not sent: refund_order is cancelled now.",
    );
  });

  it("drops it when the call was edited: the new version needs a look first", () => {
    expect(heldNoLongerValid(intent, batchWith({ revision: 2 }), dana.id)).toMatch(
      /edited meanwhile \(now revision 2\)/,
    );
  });
});
