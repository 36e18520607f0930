"use client";

import { useEffect, useRef, useState } from "react";
import { conflictText } from "./decision-text";
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

export type Notice = { kind: "conflict" | "error"; code: string; message: string };
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
  now: () => number;
  viewerId?: string;
}) {
  const { batch, onDecide, onDecideBatch, now, viewerId } = options;
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

  function applyResult(result: DecisionResult, callId: string | null): Settled {
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
    if (current) {
      setOverride((previous) => {
        const from = previous && previous.basedOn === base ? previous.batch : base;
        return { batch: mergeCurrent(from, current), basedOn: base };
      });
    }
    const kind = CONFLICT_CODES.has(result.code) ? "conflict" : "error";
    const notice: Notice = { kind, code: result.code, message: result.message };
    if (callId) setNotices((all) => ({ ...all, [callId]: notice }));
    else setBatchNotice(notice);
    if (kind === "conflict") {
      const currentCall =
        current && callId
          ? "calls" in current
            ? current.calls.find((c) => c.id === callId)
            : current
          : undefined;
      setAnnouncement(conflictText(result.code, currentCall, result.message, now(), viewerId));
    }
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
    return applyResult(result, request.callId);
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
    return applyResult(result, null);
  }

  return { shown, busy, batchBusy, notices, batchNotice, announcement, decide, decideBatch };
}
