import { describe, expect, it } from "vitest";
import {
  addSnapshotPage,
  applyEvents,
  arrivalsFor,
  fromSnapshot,
  mergeBatches,
  pendingCountText,
  queueView,
  type WireEvent,
} from "@/components/queue/queue-cache";
import type { Batch } from "@/components/review-card/types";

function batch(id: string, overrides: Partial<Batch> = {}): Batch {
  return {
    id,
    runId: `run-${id}`,
    kind: "action",
    status: "pending",
    outcome: null,
    queue: { id: "q1", name: "support" },
    agent: { id: "a1", name: "Support bot" },
    plan: null,
    calls: [
      {
        id: `call-${id}`,
        batchId: id,
        toolCallId: "t",
        toolName: "refund_order",
        args: {},
        inputSchema: null,
        summary: null,
        risks: [],
        costEstimate: null,
        metadata: null,
        status: "pending",
        revision: 1,
        actionHash: "h",
        requiredApprovals: 1,
        pendingEdit: null,
        votes: [],
        decision: null,
      },
    ],
    createdAt: "2026-11-22T10:00:00.000Z",
    expiresAt: "2026-11-22T11:00:00.000Z",
    onTimeout: "reject",
    decidedAt: null,
    cancelReason: null,
    reviewUrl: "",
    ...overrides,
  };
}

function event(seq: number, type: string, batchId: string, data: object = {}): WireEvent {
  return {
    seq,
    type,
    at: "",
    runId: null,
    batchId,
    callId: null,
    actor: { kind: "system", id: null, name: null },
    queueId: "q1",
    data: data as Record<string, unknown>,
  };
}

describe("the queue cache", () => {
  const snapshot = () =>
    fromSnapshot({ batches: [batch("b1")], lastEventId: 10, pendingTotal: 1, nextCursor: null });
  const start = snapshot();

  it("adds arrivals from batch.created and follows the stream position", () => {
    const { cache, arrived, refetch } = applyEvents(snapshot(), [
      event(11, "batch.created", "b2", { batch: batch("b2") }),
    ]);
    expect([...cache.byId.keys()].sort()).toEqual(["b1", "b2"]);
    expect(arrived).toEqual(["b2"]);
    expect(refetch).toEqual([]);
    expect(cache.lastEventId).toBe(11);
  });

  it("asks to refetch a known batch an event changed without its view, unless a later event carries it", () => {
    const voted = applyEvents(start, [event(11, "call.voted", "b1")]);
    expect(voted.refetch).toEqual(["b1"]);
    const decided = batch("b1", { status: "decided", outcome: "approved" });
    const settled = applyEvents(snapshot(), [
      event(11, "call.decided", "b1"),
      event(12, "batch.decided", "b1", { batch: decided }),
    ]);
    expect(settled.refetch).toEqual([]);
    expect(settled.cache.byId.get("b1")!.status).toBe("decided");
    // Events about batches this tab never held are not fetched.
    expect(applyEvents(start, [event(11, "call.voted", "elsewhere")]).refetch).toEqual([]);
  });

  it("never lets an older view overwrite a newer one", () => {
    const decided = batch("b1", { status: "decided" });
    const newer = applyEvents(snapshot(), [
      event(20, "batch.decided", "b1", { batch: decided }),
    ]).cache;
    const stale = mergeBatches(newer, [{ batch: batch("b1"), asOf: 15 }]);
    expect(stale.byId.get("b1")!.status).toBe("decided");
    expect(stale).toBe(newer);
    const fresher = mergeBatches(newer, [{ batch: batch("b1", { outcome: "mixed" }), asOf: 20 }]);
    expect(fresher.byId.get("b1")!.outcome).toBe("mixed");
  });

  it("drops a batch escalated to another queue, and adds one escalated into a queue of the viewer", () => {
    const moved = batch("b1", { queue: { id: "q2", name: "seniors" } });
    const leaving = { ...event(11, "batch.escalated", "b1", { batch: moved }), queueId: "q1" };
    const left = applyEvents(snapshot(), [leaving]);
    expect(left.cache.byId.has("b1")).toBe(false);
    expect(left.arrived).toEqual([]);

    const arriving = {
      ...event(11, "batch.escalated", "b9", { batch: batch("b9") }),
      queueId: "q1",
    };
    expect(applyEvents(snapshot(), [arriving]).arrived).toEqual(["b9"]);
    // A member of both queues receives both copies: the card stays, now in the new queue.
    const both = applyEvents(snapshot(), [leaving, { ...leaving, seq: 12, queueId: "q2" }]);
    expect(both.cache.byId.get("b1")!.queue.id).toBe("q2");
  });

  it("reports a resync", () => {
    expect(applyEvents(start, [event(11, "resync", "")]).resync).toBe(true);
    expect(applyEvents(start, [event(11, "member.removed", "")]).resync).toBe(true);
  });

  it("shows soonest deadlines first, filters, and keeps cards decided since the page opened", () => {
    const loadedAt = Date.parse("2026-11-22T10:30:00.000Z");
    const cache = fromSnapshot({
      batches: [
        batch("late", { expiresAt: "2026-11-22T12:00:00.000Z" }),
        batch("soon", { expiresAt: "2026-11-22T10:45:00.000Z" }),
        batch("plan", { kind: "plan", expiresAt: "2026-11-22T11:30:00.000Z" }),
        batch("old", { status: "decided", decidedAt: "2026-11-22T10:00:00.000Z" }),
        batch("now", {
          status: "decided",
          decidedAt: "2026-11-22T10:31:00.000Z",
          expiresAt: "2026-11-22T10:50:00.000Z",
        }),
      ],
      lastEventId: 1,
      pendingTotal: 3,
      nextCursor: null,
    });
    const ids = (f: Parameters<typeof queueView>[1]) =>
      queueView(cache, f, loadedAt).cards.map((b) => b.id);
    expect(ids({ status: "pending" })).toEqual(["soon", "now", "plan", "late"]);
    expect(ids({ status: "pending", kind: "plan" })).toEqual(["plan"]);
    expect(ids({ status: "decided" })).toEqual(["now", "old"]);
    expect(ids({ status: "all", tool: "delete_files" })).toEqual([]);
    expect(ids({ status: "pending", agent: "Support bot", queue: "q1" })).toHaveLength(4);
    const view = queueView(cache, { status: "pending" }, loadedAt);
    expect(view.pendingCount).toBe(3);
    expect(view.matchingPendingCount).toBe(3);
    // Issue 26: the header's count follows the filters (one pending plan of three pending).
    const plans = queueView(cache, { status: "pending", kind: "plan" }, loadedAt);
    expect(plans.matchingPendingCount).toBe(1);
    expect(plans.pendingCount).toBe(3);
    expect(view.decidedHere).toBe(1);
    expect(view.tools).toEqual(["refund_order"]);
  });

  it('keeps withdrawn batches out of "decided": they have their own "cancelled" view', () => {
    const cache = fromSnapshot({
      batches: [
        batch("approved", { status: "decided", decidedAt: "2026-11-22T10:00:00.000Z" }),
        batch("expired", { status: "expired", decidedAt: "2026-11-22T10:05:00.000Z" }),
        batch("withdrawn", { status: "cancelled", decidedAt: "2026-11-22T10:10:00.000Z" }),
        batch("open"),
      ],
      lastEventId: 1,
      pendingTotal: 1,
      nextCursor: null,
    });
    const ids = (status: "decided" | "cancelled" | "all") =>
      queueView(cache, { status }, 0).cards.map((b) => b.id);
    expect(ids("decided")).toEqual(["expired", "approved"]);
    expect(ids("cancelled")).toEqual(["withdrawn"]);
    expect(ids("all").sort()).toEqual(["approved", "expired", "open", "withdrawn"]);
  });

  it("adds later snapshot pages as of the snapshot, so events applied meanwhile win", () => {
    const first = fromSnapshot({
      batches: [batch("b1")],
      lastEventId: 10,
      pendingTotal: 3,
      nextCursor: "page-2",
    });
    // b2 was decided by an event after the snapshot began; the page still shows it pending.
    const decided = batch("b2", { status: "decided" });
    const live = applyEvents(first, [event(12, "batch.decided", "b2", { batch: decided })]).cache;
    const done = addSnapshotPage(live, {
      batches: [batch("b2"), batch("b3")],
      lastEventId: 11,
      pendingTotal: 3,
      nextCursor: null,
    });
    expect(done.nextCursor).toBeNull();
    expect(done.byId.get("b2")!.status).toBe("decided");
    expect(done.byId.get("b3")!.status).toBe("pending");
    expect(done.version).toBeGreaterThan(live.version);
  });

  it("keeps a card the viewer set aside out of their list until it is back, and in others'", () => {
    const mark = (who: string, returnsAt: string) => ({
      by: { id: who, name: who },
      at: "2026-11-22T10:10:00.000Z",
      until: "2026-11-22T11:10:00.000Z",
      returnsAt,
    });
    const cache = fromSnapshot({
      batches: [
        batch("mine", { setAside: [mark("dana", "2026-11-22T10:48:00.000Z")] }),
        batch("sams", { setAside: [mark("sam", "2026-11-22T10:25:00.000Z")] }),
        batch("plain"),
      ],
      lastEventId: 1,
      pendingTotal: 3,
      nextCursor: null,
    });
    const at = (time: string) => ({ id: "dana", now: Date.parse(`2026-11-22T${time}:00.000Z`) });
    const before = queueView(cache, { status: "pending" }, 0, at("10:20"));
    expect(before.cards.map((b) => b.id).sort()).toEqual(["plain", "sams"]);
    expect(before.setAsideByViewer.map((b) => b.id)).toEqual(["mine"]);
    // still pending (nothing was decided), but not in Dana's list: the header says so apart
    expect(before.pendingCount).toBe(3);
    expect(before.setAsideCount).toBe(1);
    expect(pendingCountText(before, { filtered: false })).toBe("2 pending, 1 set aside by you");
    // back at its returnsAt
    const after = queueView(cache, { status: "pending" }, 0, at("10:48"));
    expect(after.cards.map((b) => b.id).sort()).toEqual(["mine", "plain", "sams"]);
    expect(after.setAsideByViewer).toEqual([]);
    expect(pendingCountText(after, { filtered: false })).toBe("3 pending");
    // Sam's own view: his card is away, Dana's is not his concern
    const sams = queueView(cache, { status: "pending" }, 0, { id: "sam", now: at("10:20").now });
    expect(sams.cards.map((b) => b.id).sort()).toEqual(["mine", "plain"]);
    // the stream's event carries the batch with Dana's mark: her other tabs drop the card
    const other = fromSnapshot({ batches: [batch("plain")], lastEventId: 1, pendingTotal: 1, nextCursor: null }); // prettier-ignore
    const marked = batch("plain", { setAside: [mark("dana", "2026-11-22T10:48:00.000Z")] });
    const applied = applyEvents(other, [event(2, "batch.set_aside", "plain", { batch: marked })]);
    expect(queueView(applied.cache, { status: "pending" }, 0, at("10:20")).cards).toEqual([]);
  });
});

describe("the queue header's count", () => {
  const away = (returnsAt: string) => ({
    by: { id: "dana", name: "Dana" },
    at: "2026-11-22T10:10:00.000Z",
    until: "2026-11-22T11:10:00.000Z",
    returnsAt,
  });
  const cache = fromSnapshot({
    batches: [
      batch("plan-away", { kind: "plan", setAside: [away("2026-11-22T10:48:00.000Z")] }),
      batch("action-away", { setAside: [away("2026-11-22T10:48:00.000Z")] }),
      batch("plan", { kind: "plan" }),
      batch("action-1"),
      batch("action-2"),
      batch("done", { status: "decided", decidedAt: "2026-11-22T10:00:00.000Z" }),
    ],
    lastEventId: 1,
    pendingTotal: 5,
    nextCursor: null,
  });
  const dana = { id: "dana", now: Date.parse("2026-11-22T10:20:00.000Z") };

  it("counts what waits in the reviewer's list, and the cards they set aside apart", () => {
    const view = queueView(cache, { status: "pending" }, dana.now, dana);
    expect(view.cards).toHaveLength(3);
    expect(pendingCountText(view, { filtered: false })).toBe("3 pending, 2 set aside by you");
  });

  it("follows the filters in both counts, as the lists under it do", () => {
    const plans = queueView(cache, { status: "pending", kind: "plan" }, dana.now, dana);
    expect(plans.cards.map((b) => b.id)).toEqual(["plan"]);
    expect(plans.setAsideByViewer.map((b) => b.id)).toEqual(["plan-away"]);
    expect(pendingCountText(plans, { filtered: true })).toBe(
      "1 of 3 pending match, 1 set aside by you",
    );
  });

  it("leaves a card the reviewer set aside out of the arrivals the tab title counts", () => {
    // an escalation brings a card Dana set aside into another queue of hers: no news to her
    expect(arrivalsFor(cache, ["action-away", "action-1", "unknown"], dana)).toEqual([
      "action-1",
      "unknown",
    ]);
    expect(arrivalsFor(cache, ["action-away"], { ...dana, id: "sam" })).toEqual(["action-away"]);
  });

  it("says nothing of set-asides when there are none, and counts every card while loading", () => {
    const someoneElse = queueView(cache, { status: "pending" }, dana.now, { ...dana, id: "sam" });
    expect(pendingCountText(someoneElse, { filtered: false })).toBe("5 pending");
    const view = queueView(cache, { status: "pending" }, dana.now, dana);
    expect(pendingCountText(view, { filtered: false, loading: { total: 9 } })).toBe(
      "5 of 9 pending loaded…",
    );
  });
});
