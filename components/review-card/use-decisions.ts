"use client";

import { useEffect, useRef, useState } from "react";
import type { Batch, BatchDecisionRequest, Call, DecisionRequest, DecisionResult } from "./types";

// The card's side of a decision: in flight → the host's answer. Success shows the batch the host
// returned; an expected race (someone else decided, the call changed) shows the current state
// with a notice in place; anything else is an error next to the controls, keeping what was typed.

/** Codes that mean "someone else moved first": shown as a notice, never as an error. */
const CONFLICT_CODES = new Set([
  "already_decided",
  "not_pending",
  "stale_revision",
  "claimed_by_other",
]);

export type Notice = {
  kind: "conflict" | "error";
  code: string;
  message: string;
  /** what the reviewer sent: a lost race says what became of it, and keeps its text */
  request?: DecisionRequest | BatchDecisionRequest;
};
export type Settled = "ok" | "conflict" | "error";
export type BatchBusy = BatchDecisionRequest["outcome"] | null;

type Override = { batch: Batch; basedOn: Batch };

function mergeCurrent(base: Batch, current: Batch | Call): Batch {
  if ("calls" in current) return current;
  if (current.batchId !== base.id) return base;
  return { ...base, calls: base.calls.map((call) => (call.id === current.id ? current : call)) };
}

function failure(error: unknown): DecisionResult {
  const detail = error instanceof Error ? error.message : String(error);
  return { ok: false, code: "network_error", message: `The decision was not sent: ${detail}` };
}

function without<T>(record: Record<string, T>, key: string): Record<string, T> {
  if (!(key in record)) return record;
  const copy = { ...record };
  delete copy[key];
  return copy;
}

export function useDecisions(options: {
  batch: Batch;
  onDecide?: (request: DecisionRequest) => Promise<DecisionResult>;
  onDecideBatch?: (request: BatchDecisionRequest) => Promise<DecisionResult>;
  /** the sentence announced when a race is lost (the same one the notice shows) */
  raceSentence: (notice: Notice, batch: Batch, callId: string | null) => string;
}) {
  const { batch, onDecide, onDecideBatch, raceSentence } = options;
  // The host's latest batch, read when an answer arrives (after the await, not at the click).
  const latest = useRef(batch);
  useEffect(() => {
    latest.current = batch;
  }, [batch]);

  const [override, setOverride] = useState<Override | null>(null);
  const [busy, setBusy] = useState<Record<string, DecisionRequest["outcome"]>>({});
  const [batchBusy, setBatchBusy] = useState<BatchBusy>(null);
  const [notices, setNotices] = useState<Record<string, Notice>>({});
  const [batchNotice, setBatchNotice] = useState<Notice | null>(null);
  const [announcement, setAnnouncement] = useState("");

  // A batch the host answered with wins until the host passes a newer prop: the prop is the truth.
  const shown = override && override.basedOn === batch ? override.batch : batch;

  function applyResult(
    result: DecisionResult,
    callId: string | null,
    request: DecisionRequest | BatchDecisionRequest,
  ): Settled {
    const base = latest.current;
    if (result.ok) {
      setOverride({ batch: result.batch, basedOn: base });
      const call = callId ? result.batch.calls.find((c) => c.id === callId) : undefined;
      setAnnouncement(
        !call
          ? `Batch ${result.batch.outcome ?? result.batch.status}.`
          : call.status === "pending"
            ? `Your vote on ${call.toolName} was recorded; more approvals are needed.`
            : `${call.toolName}: ${call.status}.`,
      );
      return "ok";
    }
    const current = result.current;
    const merged = current ? mergeCurrent(base, current) : base;
    if (current) {
      setOverride((previous) => {
        const from = previous && previous.basedOn === base ? previous.batch : base;
        return { batch: mergeCurrent(from, current), basedOn: base };
      });
    }
    const kind = CONFLICT_CODES.has(result.code) ? "conflict" : "error";
    const notice: Notice = { kind, code: result.code, message: result.message, request };
    if (callId) setNotices((all) => ({ ...all, [callId]: notice }));
    else setBatchNotice(notice);
    if (kind === "conflict") setAnnouncement(raceSentence(notice, merged, callId));
    return kind;
  }

  async function decide(request: DecisionRequest): Promise<Settled> {
    if (!onDecide) return "error";
    setBusy((all) => ({ ...all, [request.callId]: request.outcome }));
    setNotices((all) => without(all, request.callId));
    let result: DecisionResult;
    try {
      result = await onDecide(request);
    } catch (error) {
      result = failure(error);
    }
    setBusy((all) => without(all, request.callId));
    return applyResult(result, request.callId, request);
  }

  async function decideBatch(request: BatchDecisionRequest): Promise<Settled> {
    if (!onDecideBatch) return "error";
    setBatchBusy(request.outcome);
    setBatchNotice(null);
    let result: DecisionResult;
    try {
      result = await onDecideBatch(request);
    } catch (error) {
      result = failure(error);
    }
    setBatchBusy(null);
    if (result.ok) setNotices({});
    return applyResult(result, null, request);
  }

  /**
   * After a batch decision lost to the viewer's own earlier decision of some calls (a held
   * keyboard approval, another tab), decides the calls still open one by one, each with its own
   * compare-and-swap; the first refusal stops there and is shown on its row.
   */
  async function decideRest(
    outcome: BatchDecisionRequest["outcome"],
    calls: Call[],
    reason?: string,
  ): Promise<Settled> {
    if (!onDecide) return "error";
    setBatchBusy(outcome);
    let settled: Settled = "ok";
    for (const call of calls) {
      const request: DecisionRequest =
        outcome === "reject"
          ? { callId: call.id, outcome, expectedRevision: call.revision, reason: reason ?? "" }
          : { callId: call.id, outcome, expectedRevision: call.revision, scope: "once" };
      let result: DecisionResult;
      try {
        result = await onDecide(request);
      } catch (error) {
        result = failure(error);
      }
      settled = applyResult(result, call.id, request);
      if (settled !== "ok") break;
    }
    setBatchBusy(null);
    if (settled === "ok") setBatchNotice(null);
    return settled;
  }

  /**
   * The batch controls went while a "Reject all" reason was being typed (a call was settled
   * meanwhile, e.g. by the viewer's own held keyboard approval): the reason is kept as a lost
   * race, unsent, under what happened instead.
   */
  function keepBatchDraft(request: BatchDecisionRequest) {
    const notice: Notice = { kind: "conflict", code: "already_decided", message: "", request };
    setBatchNotice((current) => current ?? notice);
  }

  /** The reviewer has read a race notice (and copied what they kept): it goes. */
  function dismiss(callId: string | null) {
    if (callId) setNotices((all) => without(all, callId));
    else setBatchNotice(null);
  }

  return {
    shown,
    busy,
    batchBusy,
    notices,
    batchNotice,
    announcement,
    decide,
    decideBatch,
    decideRest,
    keepBatchDraft,
    dismiss,
  };
}
