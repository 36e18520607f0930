"use client";

import { useCallback, useEffect, useRef, useState } from "react";
import type { ApprovalIntent, DecisionResult } from "@/components/review-card/index";
import type { Batch, DecisionSource } from "@/components/review-card/types";
import { createHoldTimer, HOLD_MS, type HoldTimer } from "./hold-timer";

// `a` in the queue approves through this: the approval waits HOLD_MS with an undo toast, then is
// sent through the same server action as the Approve button, which still compare-and-swaps on the
// revision the reviewer saw. What happens meanwhile:
// - z or Undo: dropped, nothing written.
// - the call is decided, cancelled or edited elsewhere (the live queue shows it): dropped, and
//   the toast says who did what. Sending would only be refused (409), and a changed call must be
//   reviewed again before anyone approves it.
// - `a` on another call: the first is sent at once (it was asked for), the second waits.
// - leaving the queue (a link, closing or reloading the tab): dropped, nothing written. A write
//   started while the page goes away may or may not arrive and its answer would be seen by no
//   one; failing closed leaves the card pending for the next look. Closing or reloading the tab
//   asks the browser's "leave the page?" first.

export type ToastState =
  | { phase: "held"; intent: ApprovalIntent; dueAt: number }
  | { phase: "sending"; intent: ApprovalIntent }
  | { phase: "done"; tone: "ok" | "warn"; text: string };

const DONE_SHOWN_MS = 6_000;

/** Why a held approval must not be sent any more, as the toast says it; null: still good. */
export function heldNoLongerValid(
  intent: ApprovalIntent,
  batch: Batch | undefined,
  viewerId?: string,
): string | null {
  const call = batch?.calls.find((c) => c.id === intent.callId);
  if (!call) return null; // not in view: the server's compare-and-swap decides
  if (call.status !== "pending") {
    const decision = call.decision;
    if (decision) {
      const who = !decision.by
        ? SOURCE[decision.source]
        : decision.by.id === viewerId
          ? "by you (elsewhere)"
          : `by ${decision.by.name}`;
      return `Not sent: ${intent.label} was ${decision.outcome} ${who} meanwhile.`;
    }
    return `Not sent: ${intent.label} is ${call.status} now.`;
  }
  if (call.revision !== intent.request.expectedRevision) {
    return `Not sent: ${intent.label} was edited meanwhile (now revision ${call.revision}). Review the new version.`;
  }
  return null;
}

const SOURCE: Record<DecisionSource, string> = {
  reviewer: "by a reviewer",
  policy: "by a policy",
  memory: "by a remembered approval",
  timeout: "at its deadline",
};

export function useHeldApproval(options: {
  send: (intent: ApprovalIntent) => Promise<DecisionResult>;
  /** the live view of a batch, to notice a decision made elsewhere during the window */
  batchOf: (batchId: string) => Batch | undefined;
  viewerId: string;
  delayMs?: number;
}) {
  const { batchOf, viewerId } = options;
  const delayMs = options.delayMs ?? HOLD_MS;
  const [toast, setToast] = useState<ToastState | null>(null);
  const sendRef = useRef(options.send);
  useEffect(() => {
    sendRef.current = options.send;
  });
  const timerRef = useRef<HoldTimer<ApprovalIntent> | null>(null);

  useEffect(() => {
    const timer = createHoldTimer<ApprovalIntent>({
      delayMs,
      same: (a, b) => a.callId === b.callId,
      send: (intent) => {
        setToast({ phase: "sending", intent });
        void sendRef.current(intent).then(
          (result) =>
            setToast(
              result.ok
                ? { phase: "done", tone: "ok", text: approvedText(intent, result.batch) }
                : { phase: "done", tone: "warn", text: `Not approved: ${result.message}` },
            ),
          (error: unknown) =>
            setToast({
              phase: "done",
              tone: "warn",
              text: `Not approved: ${error instanceof Error ? error.message : String(error)}`,
            }),
        );
      },
    });
    timerRef.current = timer;
    return () => {
      timer.cancel(); // leaving the page: nothing written (see above)
      timerRef.current = null;
    };
  }, [delayMs]);

  const hold = useCallback((intent: ApprovalIntent) => {
    const timer = timerRef.current;
    if (!timer) return;
    timer.hold(intent);
    const held = timer.current();
    if (held) setToast({ phase: "held", intent: held.item, dueAt: held.dueAt });
  }, []);

  const undo = useCallback((): ApprovalIntent | null => {
    const intent = timerRef.current?.cancel() ?? null;
    if (intent) {
      setToast({
        phase: "done",
        tone: "ok",
        text: `Undone: ${intent.label} was not approved; nothing was sent.`,
      });
    }
    return intent;
  }, []);

  // A decision or an edit made elsewhere during the window drops the held approval: the toast
  // says so at once (derived from the live batch), the effect stops the timer.
  const heldNow = toast?.phase === "held" ? toast.intent : null;
  const droppedWhy = heldNow
    ? heldNoLongerValid(heldNow, batchOf(heldNow.batchId), viewerId)
    : null;
  const held = droppedWhy ? null : heldNow;
  useEffect(() => {
    if (!droppedWhy) return;
    timerRef.current?.cancel();
    const hide = setTimeout(() => setToast(null), DONE_SHOWN_MS);
    return () => clearTimeout(hide);
  }, [droppedWhy, heldNow]);
  const shown: ToastState | null = droppedWhy
    ? { phase: "done", tone: "warn", text: droppedWhy }
    : toast;

  // Closing or reloading the tab with an approval waiting: the browser asks first.
  useEffect(() => {
    if (!held) return;
    const onBeforeUnload = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener("beforeunload", onBeforeUnload);
    return () => window.removeEventListener("beforeunload", onBeforeUnload);
  }, [held]);

  useEffect(() => {
    if (toast?.phase !== "done") return;
    const hide = setTimeout(() => setToast(null), DONE_SHOWN_MS);
    return () => clearTimeout(hide);
  }, [toast]);

  return { toast: shown, hold, undo, delayMs };
}

function approvedText(intent: ApprovalIntent, batch: Batch): string {
  const call = batch.calls.find((c) => c.id === intent.callId);
  if (call?.status === "pending") {
    return `Your approval of ${intent.label} was recorded; more approvals are needed.`;
  }
  return `Approved ${intent.label}.`;
}
