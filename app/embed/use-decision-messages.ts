"use client";

import { useEffect, useRef } from "react";
import type { Batch } from "@/components/review-card/types";
import { decisionMessage, messageTargets, settlementKey } from "./decision-message";

function sameOriginParent(): boolean {
  try {
    return window.parent.location.origin === window.location.origin;
  } catch {
    // A cross-origin parent's location is not readable.
    return false;
  }
}

/**
 * Posts a `countersign:decision` message to the framing page whenever the batch's settlement
 * changes after the frame loaded: the viewer's own decisions and everyone else's (the batch is
 * live), each told once.
 */
export function useDecisionMessages(batch: Batch, allowedOrigins: string[]): void {
  const told = useRef<string | null>(null);
  useEffect(() => {
    const key = settlementKey(batch);
    const previous = told.current;
    told.current = key;
    if (previous === null || previous === key || window.parent === window) return;
    const targets = messageTargets(allowedOrigins, {
      self: window.location.origin,
      sameOriginParent: sameOriginParent(),
      ancestorOrigin: window.location.ancestorOrigins?.[0] ?? null,
      referrer: document.referrer,
    });
    const message = decisionMessage(batch);
    for (const target of targets) window.parent.postMessage(message, target);
  }, [batch, allowedOrigins]);
}
