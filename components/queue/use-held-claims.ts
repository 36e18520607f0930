"use client";

import { useEffect, useRef } from "react";
import type { Batch } from "@/components/review-card/types";

/** Renewed well before the default five minutes run out, so an open card never loses its claim. */
const RENEW_EVERY_MS = 2 * 60_000;

function heldBy(batches: Batch[], viewerId: string): string[] {
  const now = Date.now();
  return batches
    .filter(
      (b) =>
        b.status === "pending" &&
        b.claim?.by.id === viewerId &&
        Date.parse(b.claim.expiresAt) > now,
    )
    .map((b) => b.id);
}

/** Ends a claim as the page goes away: a server action cannot outlive the page, a keepalive fetch can. */
function releaseOnLeave(batchId: string): void {
  void fetch(`/api/v1/batches/${encodeURIComponent(batchId)}/review-claim`, {
    method: "DELETE",
    keepalive: true,
  }).catch(() => {
    // The claim expires by itself within minutes.
  });
}

/**
 * The viewer's own review claims among `batches`: renewed every two minutes while the tab is
 * visible, released when the page is left (pagehide) or the screen unmounts.
 */
export function useHeldClaims(
  batches: Batch[],
  viewerId: string,
  renew: (batchId: string, claim: true) => Promise<unknown>,
): void {
  const held = useRef<string[]>([]);
  const renewRef = useRef(renew);
  useEffect(() => {
    held.current = heldBy(batches, viewerId);
    renewRef.current = renew;
  });

  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState !== "visible") return;
      for (const id of held.current) void renewRef.current(id, true);
    }, RENEW_EVERY_MS);
    const leave = () => held.current.forEach(releaseOnLeave);
    window.addEventListener("pagehide", leave);
    return () => {
      clearInterval(timer);
      window.removeEventListener("pagehide", leave);
      leave();
    };
  }, []);
}
